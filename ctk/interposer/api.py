"""Control API compatible with Toxiproxy's HTTP API, served on the interposer's own event loop.

Routes, JSON shapes, status codes and error texts are Toxiproxy 2.x's:

    GET    /version                         -> {"version": "..."}
    GET    /proxies                         -> {name: proxy}
    POST   /proxies                         {name, listen, upstream, enabled} -> 201 proxy
    POST   /populate                        [proxy, ...] -> 201 {"proxies": [...]}
    GET    /proxies/{name}                  -> proxy (with "toxics")
    POST   /proxies/{name}  (or PATCH)      {enabled?, listen?, upstream?} -> 200 proxy
    DELETE /proxies/{name}                  -> 204
    GET    /proxies/{name}/toxics           -> [toxic]
    POST   /proxies/{name}/toxics           {name?, type, stream?, toxicity?, attributes} -> 200 toxic
    GET    /proxies/{name}/toxics/{toxic}   -> toxic
    POST   /proxies/{name}/toxics/{toxic}   (or PATCH) {toxicity?, attributes?} -> 200 toxic
    DELETE /proxies/{name}/toxics/{toxic}   -> 204
    POST   /reset                           -> 204 (every proxy enabled, every toxic removed)

Errors are `{"error": text, "status": code}` with Toxiproxy's texts ("proxy not found", "proxy already exists",
"toxic not found", "toxic already exists", "invalid toxic type", "missing required field: name",
"bad request body: ...", "listen tcp HOST:PORT: bind: ..." with 500); where ours knows more it adds "detail".
A request whose User-Agent starts with "Mozilla/" gets 403, as in Toxiproxy (a browser must not drive it).
Toxic defaults: stream "downstream", toxicity 1.0, name "<type>_<stream>". /populate validates every entry
before changing anything and leaves a proxy whose listen and upstream are unchanged as it is (its toxics too).

Where ours differs on purpose: proxies listen on loopback addresses only (400 otherwise; default listen
"127.0.0.1:0"); unknown toxic attributes, negative numbers and a toxicity outside 0..1 are refused (400)
instead of ignored; the extra toxic types of `http_toxics` exist. Extensions (not in Toxiproxy):
GET /proxies/{name}/counters, DELETE /proxies/{name}/counters, GET /proxies/{name}/events, GET /counters.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import unquote

from ctk.interposer import h1
from ctk.interposer import http_toxics as ht
from ctk.interposer.h1_reader import MessageReader
from ctk.interposer.listener import Proxy, check_loopback, parse_hostport
from ctk.interposer.toxics import ToxicError

VERSION = "2.12.0-ctk"  # the Toxiproxy API version this one follows, marked as ours
MAX_BODY = 1 << 20

ERR_PROXY_NOT_FOUND = "proxy not found"
ERR_PROXY_EXISTS = "proxy already exists"
ERR_MISSING = "missing required field"
ERR_BAD_BODY = "bad request body"


class ApiError(Exception):
    def __init__(self, status: int, message: str, detail: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail


def _bad_body(detail: str) -> ApiError:
    return ApiError(400, f"{ERR_BAD_BODY}: {detail}")


def _listen_error(listen: tuple[str, int], exc: OSError) -> ApiError:
    """Toxiproxy answers a failed listen with 500 and Go's error text."""
    reason = (os.strerror(exc.errno) if exc.errno else str(exc)).lower()
    return ApiError(500, f"listen tcp {listen[0]}:{listen[1]}: bind: {reason}")


def _same_address(current: tuple[str, int], wanted: tuple[str, int]) -> bool:
    """Whether a requested listen address is the one a proxy has (port 0 asks for any port)."""
    def host(h: str) -> str:
        return "127.0.0.1" if h == "localhost" else h

    return host(current[0]) == host(wanted[0]) and (wanted[1] == 0 or current[1] == wanted[1])


class Registry:
    """The proxies of one runtime (all access on its loop)."""

    def __init__(self) -> None:
        self.proxies: dict[str, Proxy] = {}

    def get(self, name: str) -> Proxy:
        p = self.proxies.get(name)
        if p is None:
            raise ApiError(404, ERR_PROXY_NOT_FOUND, detail=name)
        return p

    @staticmethod
    def _parse(data: Any, where: str = "") -> tuple[str, tuple[str, int], tuple[str, int], bool, str]:
        """Validate one proxy definition: (name, listen, upstream, enabled, protocol). Raises ApiError."""
        if not isinstance(data, dict):
            raise _bad_body("a proxy must be a JSON object")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise ApiError(400, f"{ERR_MISSING}: name{where}")
        upstream = data.get("upstream")
        if not isinstance(upstream, str) or not upstream:
            raise ApiError(400, f"{ERR_MISSING}: upstream{where}")
        listen = data.get("listen") or "127.0.0.1:0"
        if not isinstance(listen, str):
            raise _bad_body("listen must be a HOST:PORT string")
        enabled = data.get("enabled", True)
        if enabled is None:
            enabled = True
        if not isinstance(enabled, bool):
            raise _bad_body("enabled must be true or false")
        protocol = data.get("protocol", "auto")
        if protocol not in ("auto", "tcp", "http"):
            raise _bad_body("protocol must be auto, tcp or http")
        try:
            lhost, lport = parse_hostport(listen)
            check_loopback(lhost)
            uhost, uport = parse_hostport(upstream)
        except ValueError as exc:
            raise _bad_body(str(exc)) from None
        return name, (lhost, lport), (uhost, uport), enabled, protocol

    async def _start(self, proxy: Proxy) -> None:
        try:
            await proxy.start()
        except OSError as exc:
            raise _listen_error(proxy.listen, exc) from None

    async def create(self, data: Any) -> Proxy:
        name, listen, upstream, enabled, protocol = self._parse(data)
        if name in self.proxies:
            raise ApiError(409, ERR_PROXY_EXISTS, detail=name)
        proxy = Proxy(name, listen, upstream, enabled=enabled, protocol=protocol)
        await self._start(proxy)
        self.proxies[name] = proxy
        return proxy

    async def populate(self, items: Any) -> list[Proxy]:
        """Toxiproxy's /populate: validate every entry first, then create each proxy, replacing one of the same
        name only when its listen or upstream address differs."""
        if not isinstance(items, list):
            raise _bad_body("populate expects a JSON list of proxies")
        parsed = []
        seen: set[str] = set()
        for i, item in enumerate(items):
            entry = self._parse(item, where=f" at proxy {i + 1}")
            if entry[0] in seen:
                raise ApiError(500, f'duplicate proxy name "{entry[0]}"')
            seen.add(entry[0])
            parsed.append(entry)
        out = []
        for name, listen, upstream, enabled, protocol in parsed:
            existing = self.proxies.get(name)
            if existing is not None:
                if existing.upstream == upstream and _same_address(existing.listen, listen):
                    out.append(existing)
                    continue
                del self.proxies[name]
                await existing.stop()
            proxy = Proxy(name, listen, upstream, enabled=enabled, protocol=protocol)
            await self._start(proxy)
            self.proxies[name] = proxy
            out.append(proxy)
        return out

    async def update(self, proxy: Proxy, data: Any) -> Proxy:
        """Toxiproxy's proxy update: fields not given keep their values; others (name, toxics) are ignored."""
        if not isinstance(data, dict):
            raise _bad_body("a proxy update must be a JSON object")
        if "enabled" in data and not isinstance(data["enabled"], bool):
            raise _bad_body("enabled must be true or false")
        try:
            if data.get("upstream"):
                proxy.upstream = parse_hostport(str(data["upstream"]))
            new_listen = parse_hostport(str(data["listen"])) if data.get("listen") else None
            if new_listen is not None:
                check_loopback(new_listen[0])
        except ValueError as exc:
            raise _bad_body(str(exc)) from None
        try:
            if new_listen is not None and not _same_address(proxy.listen, new_listen):
                await proxy.set_listen(new_listen)
            if "enabled" in data:
                await proxy.set_enabled(data["enabled"])
        except OSError as exc:
            raise _listen_error(proxy.listen, exc) from None
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
        msgs = MessageReader(reader, h1.Parser(h1.REQUEST))
        try:
            while True:
                try:
                    head = await asyncio.wait_for(msgs.head(), 60.0)
                except (ht.HttpProtocolError, asyncio.TimeoutError):
                    break
                if head is None:
                    break
                if msgs.parser.kind == "length" and msgs.parser.length > MAX_BODY:
                    writer.write(_response(413, {"error": "request body too large", "status": 413}, False))
                    break
                body = await msgs.whole_body()
                if msgs.parser.kind == "chunked":
                    body = ht.dechunk(body)
                keep = head.keep_alive(head.request_version)
                if head.headers.get("user-agent", "").startswith("Mozilla/"):
                    # as Toxiproxy: a page in a browser must not be able to drive the proxies
                    writer.write(_text_response(403, "User agent not allowed\n", keep))
                else:
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
            out: dict[str, Any] = {"error": exc.message, "status": exc.status}
            if exc.detail:
                out["detail"] = exc.detail
            return exc.status, out
        except ToxicError as exc:
            if exc.api_error:
                return exc.status, {"error": exc.api_error, "status": exc.status, "detail": str(exc)}
            return exc.status, {"error": f"{ERR_BAD_BODY}: {exc}", "status": exc.status}
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
                raise _bad_body(f"invalid JSON ({exc})") from None

        if parts == ["version"] and method == "GET":
            return 200, {"version": VERSION}
        if parts == ["reset"] and method == "POST":
            await reg.reset()
            return 204, None
        if parts == ["counters"] and method == "GET":
            return 200, {n: p.snapshot() for n, p in reg.proxies.items()}
        if parts == ["populate"] and method == "POST":
            try:
                proxies = await reg.populate(data())
            except ApiError as exc:  # Toxiproxy's shape: the error, and "proxies" (none)
                return exc.status, {"error": exc.message, "status": exc.status, "proxies": None}
            return 201, {"proxies": [p.to_json() for p in proxies]}
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


REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large", 500: "Internal Server Error"}


def _text_response(status: int, text: str, keep: bool) -> bytes:
    body = text.encode()
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: {'keep-alive' if keep else 'close'}\r\n\r\n")
    return head.encode() + body


def _response(status: int, payload: Any, keep: bool) -> bytes:
    body = b"" if payload is None or status == 204 else json.dumps(payload).encode()
    head = f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\n"
    if status != 204:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    head += f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n"
    return head.encode() + body
