"""Control API compatible with Toxiproxy's HTTP API, served on the interposer's own event loop.

Routes (JSON shapes as Toxiproxy's):

    GET    /version                         -> {"version": "..."}
    GET    /proxies                         -> {name: proxy}
    POST   /proxies                         {name, listen, upstream, enabled} -> 201 proxy (409 if it exists)
    POST   /populate                        [proxy, ...] -> 201 {"proxies": [...]}
    GET    /proxies/{name}                  -> proxy (with "toxics")
    POST   /proxies/{name}                  {enabled?, listen?, upstream?} -> proxy
    DELETE /proxies/{name}                  -> 204
    GET    /proxies/{name}/toxics           -> [toxic]
    POST   /proxies/{name}/toxics           {name?, type, stream?, toxicity?, attributes} -> toxic
    GET    /proxies/{name}/toxics/{toxic}   -> toxic
    POST   /proxies/{name}/toxics/{toxic}   {toxicity?, attributes?} -> toxic
    DELETE /proxies/{name}/toxics/{toxic}   -> 204
    POST   /reset                           -> 204 (every proxy enabled, every toxic removed)

Extensions (not in Toxiproxy): GET /proxies/{name}/counters, DELETE /proxies/{name}/counters,
GET /proxies/{name}/events, GET /counters. Errors are `{"error": message, "status": code}`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import unquote

from ctk.interposer import http_toxics as ht
from ctk.interposer.proxy import Proxy, check_loopback, parse_hostport
from ctk.interposer.toxics import ToxicError

VERSION = "2.12.0-ctk"  # the Toxiproxy API version this one follows, marked as ours
MAX_BODY = 1 << 20


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Registry:
    """The proxies of one runtime (all access on its loop)."""

    def __init__(self) -> None:
        self.proxies: dict[str, Proxy] = {}

    def get(self, name: str) -> Proxy:
        p = self.proxies.get(name)
        if p is None:
            raise ApiError(404, f"proxy not found: {name}")
        return p

    async def create(self, data: Any) -> Proxy:
        if not isinstance(data, dict):
            raise ApiError(400, "proxy must be a JSON object")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise ApiError(400, "missing required field: name")
        if name in self.proxies:
            raise ApiError(409, f"proxy already exists: {name}")
        upstream = data.get("upstream")
        if not isinstance(upstream, str) or not upstream:
            raise ApiError(400, "missing required field: upstream")
        listen = data.get("listen") or "127.0.0.1:0"
        if not isinstance(listen, str):
            raise ApiError(400, "listen must be a HOST:PORT string")
        enabled = data.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ApiError(400, "enabled must be true or false")
        try:
            lhost, lport = parse_hostport(listen)
            check_loopback(lhost)
            uhost, uport = parse_hostport(upstream)
            proxy = Proxy(name, (lhost, lport), (uhost, uport), enabled=enabled, protocol=data.get("protocol", "auto"))
            await proxy.start()
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        except OSError as exc:
            raise ApiError(409, f"cannot listen on {listen}: {exc.strerror or exc}") from None
        self.proxies[name] = proxy
        return proxy

    async def update(self, proxy: Proxy, data: Any) -> Proxy:
        if not isinstance(data, dict):
            raise ApiError(400, "proxy update must be a JSON object")
        try:
            if "upstream" in data:
                proxy.upstream = parse_hostport(str(data["upstream"]))
            if "listen" in data and data["listen"]:
                new = parse_hostport(str(data["listen"]))
                if new != proxy.listen:
                    await proxy.set_listen(new)
            if "enabled" in data:
                if not isinstance(data["enabled"], bool):
                    raise ApiError(400, "enabled must be true or false")
                await proxy.set_enabled(data["enabled"])
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        except OSError as exc:
            raise ApiError(409, f"cannot listen: {exc.strerror or exc}") from None
        return proxy

    async def delete(self, name: str) -> None:
        proxy = self.get(name)
        del self.proxies[name]
        await proxy.stop()

    async def reset(self) -> None:
        for p in self.proxies.values():
            p.clear_toxics()
            await p.set_enabled(True)

    async def close(self) -> None:
        for p in list(self.proxies.values()):
            await p.stop()


class ApiServer:
    def __init__(self, registry: Registry, listen: tuple[str, int]):
        check_loopback(listen[0])
        self.registry = registry
        self.listen = listen
        self._server: asyncio.base_events.Server | None = None
        self._conns: set[asyncio.StreamWriter] = set()

    async def start(self) -> tuple[str, int]:
        self._server = await asyncio.start_server(
            self._on_client, self.listen[0], self.listen[1], reuse_address=True, limit=ht.MAX_HEAD
        )
        self.listen = (self.listen[0], self._server.sockets[0].getsockname()[1])
        return self.listen

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for w in list(self._conns):
            w.transport.abort()

    @property
    def url(self) -> str:
        return f"http://{self.listen[0]}:{self.listen[1]}"

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._conns.add(writer)
        try:
            while True:
                try:
                    head = await asyncio.wait_for(ht.read_head(reader), 60.0)
                except (ht.HttpProtocolError, asyncio.TimeoutError):
                    break
                if head is None:
                    break
                kind, length = head.framing()
                body = b""
                if kind == "length":
                    if length > MAX_BODY:
                        writer.write(_response(413, {"error": "request body too large", "status": 413}, False))
                        break
                    body = await reader.readexactly(length)
                elif kind != "none":
                    parts: list[bytes] = []

                    async def sink(b: bytes) -> None:
                        parts.append(b)

                    await ht.read_body(reader, kind, 0, sink)
                    body = _dechunk(b"".join(parts))
                keep = head.keep_alive(head.request_version)
                status, payload = await self.dispatch(head.method, head.target, body)
                writer.write(_response(status, payload, keep))
                await writer.drain()
                if not keep:
                    break
        except (ConnectionError, OSError, asyncio.IncompleteReadError, ht.HttpProtocolError):
            pass
        finally:
            self._conns.discard(writer)
            writer.close()

    async def dispatch(self, method: str, target: str, body: bytes) -> tuple[int, Any]:
        try:
            return await self._route(method, target.split("?", 1)[0], body)
        except ApiError as exc:
            return exc.status, {"error": exc.message, "status": exc.status}
        except ToxicError as exc:
            return exc.status, {"error": str(exc), "status": exc.status}
        except Exception as exc:  # never let a bad request kill the API
            return 500, {"error": f"internal error: {exc!r}", "status": 500}

    async def _route(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
        reg = self.registry

        def data() -> Any:
            if not body.strip():
                return {}
            try:
                return json.loads(body)
            except (ValueError, UnicodeDecodeError) as exc:
                raise ApiError(400, f"bad request body: invalid JSON ({exc})") from None

        if parts == ["version"] and method == "GET":
            return 200, {"version": VERSION}
        if parts == ["reset"] and method == "POST":
            await reg.reset()
            return 204, None
        if parts == ["counters"] and method == "GET":
            return 200, {n: p.snapshot() for n, p in reg.proxies.items()}
        if parts == ["populate"] and method == "POST":
            items = data()
            if not isinstance(items, list):
                raise ApiError(400, "populate expects a JSON list of proxies")
            out = []
            for item in items:
                if isinstance(item, dict) and item.get("name") in reg.proxies:
                    existing = reg.proxies[item["name"]]
                    await reg.delete(existing.name)
                out.append((await reg.create(item)).to_json())
            return 201, {"proxies": out}
        if parts and parts[0] == "proxies":
            if len(parts) == 1:
                if method == "GET":
                    return 200, {n: p.to_json() for n, p in reg.proxies.items()}
                if method == "POST":
                    return 201, (await reg.create(data())).to_json()
                raise ApiError(405, f"method {method} not allowed on /proxies")
            proxy = reg.get(parts[1])
            if len(parts) == 2:
                if method == "GET":
                    return 200, proxy.to_json()
                if method in ("POST", "PATCH"):
                    return 200, (await reg.update(proxy, data())).to_json()
                if method == "DELETE":
                    await reg.delete(proxy.name)
                    return 204, None
                raise ApiError(405, f"method {method} not allowed on /proxies/{{name}}")
            if parts[2] == "toxics":
                if len(parts) == 3:
                    if method == "GET":
                        return 200, [t.to_json() for t in proxy.toxics]
                    if method == "POST":
                        return 200, proxy.add_toxic(data()).to_json()
                    raise ApiError(405, f"method {method} not allowed on toxics")
                if len(parts) == 4:
                    name = parts[3]
                    if method == "GET":
                        return 200, proxy.get_toxic(name).to_json()
                    if method in ("POST", "PATCH"):
                        return 200, proxy.update_toxic(name, data()).to_json()
                    if method == "DELETE":
                        proxy.remove_toxic(name)
                        return 204, None
                    raise ApiError(405, f"method {method} not allowed on a toxic")
            if parts[2] == "counters" and len(parts) == 3:
                if method == "GET":
                    return 200, proxy.snapshot()
                if method == "DELETE":
                    proxy.counters.reset()
                    for t in proxy.toxics:
                        t.matched = t.applied = 0
                    return 204, None
            if parts[2] == "events" and len(parts) == 3 and method == "GET":
                return 200, list(proxy.events)
        raise ApiError(404, f"no route for {method} {path}")


def _dechunk(raw: bytes) -> bytes:
    out = []
    i = 0
    while True:
        j = raw.index(b"\r\n", i)
        size = int(raw[i:j].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(raw[j + 2 : j + 2 + size])
        i = j + 2 + size + 2


REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large", 500: "Internal Server Error"}


def _response(status: int, payload: Any, keep: bool) -> bytes:
    body = b"" if payload is None or status == 204 else json.dumps(payload).encode()
    head = f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\n"
    if status != 204:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    head += f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n"
    return head.encode() + body
