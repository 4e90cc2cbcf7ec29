"""The listener: one `Proxy` per listen address, its toxics, counters and events; each accepted client
becomes a `connection.Connection`."""

from __future__ import annotations

import asyncio
import collections
import ipaddress
import time
from typing import Any, Callable

from ctk.interposer import http_toxics as ht
from ctk.interposer.connection import Connection
from ctk.interposer.link import Side
from ctk.interposer.parts import Counters, ReqMeta
from ctk.interposer.toxic_errors import ERR_TOXIC_NOT_FOUND, ToxicError
from ctk.interposer.toxics import TCP_TOXICS, Toxic, build_toxic, update_toxic

EVENTS_MAX = 10000


def parse_hostport(value: str, *, default_host: str = "127.0.0.1") -> tuple[str, int]:
    value = value.strip()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest.lstrip(":")
    else:
        host, sep, port = value.rpartition(":")
        if not sep:
            raise ValueError(f"expected HOST:PORT, got {value!r}")
    host = host or default_host
    try:
        p = int(port)
    except ValueError:
        raise ValueError(f"bad port in {value!r}") from None
    if not 0 <= p <= 65535:
        raise ValueError(f"bad port in {value!r}")
    return host, p


def check_loopback(host: str) -> None:
    """Refuse to listen anywhere but on a loopback address."""
    if host == "localhost":
        return
    try:
        ok = ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"refusing to listen on non-loopback address {host!r} (use 127.0.0.1)")


class Proxy:
    """One listening proxy. All methods run on the event loop."""

    def __init__(
        self,
        name: str,
        listen: tuple[str, int],
        upstream: tuple[str, int],
        *,
        enabled: bool = True,
        protocol: str = "auto",
        fast_path: bool = True,
    ):
        check_loopback(listen[0])
        if protocol not in ("auto", "tcp", "http"):
            raise ValueError("protocol must be auto, tcp or http")
        self.name = name
        self.listen = listen
        self.upstream = upstream
        self.enabled = enabled
        self.protocol = protocol
        #: relay HTTP directions that no toxic touches without the coroutine pumps (see fastpath.py)
        self.fast_path = fast_path
        self.toxics: list[Toxic] = []
        self.tcp_toxics: dict[str, list[Toxic]] = {"upstream": [], "downstream": []}
        self.http_toxics: list[Toxic] = []
        self.counters = Counters()
        self.events: collections.deque[dict[str, Any]] = collections.deque(maxlen=EVENTS_MAX)
        self.connections: set[Connection] = set()
        self.side_tasks: set[asyncio.Task] = set()  # duplicate_request copies still running
        #: taps: called on the loop as tap(request, upstream status or None, error or None) once per request when
        #: its answer went out (or the connection ended before it); they observe and change nothing
        self.taps: list[Callable[[ReqMeta, int | None, str | None], None]] = []
        self.released: dict[int, asyncio.Event] = {}  # hold_copy: set when the toxic (by id) is removed
        self._server: asyncio.base_events.Server | None = None

    # ----------------------------------------------------------- lifecycle
    async def start(self) -> None:
        if self._server is not None or not self.enabled:
            return
        host, port = self.listen
        loop = asyncio.get_running_loop()

        def factory() -> Side:
            return Side(asyncio.StreamReader(limit=ht.MAX_HEAD, loop=loop), loop, self._on_client)

        self._server = await loop.create_server(factory, host, port, reuse_address=True)
        sock = self._server.sockets[0]
        self.listen = (host, sock.getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for conn in list(self.connections):
            conn.abort()
        for task in list(self.side_tasks):
            task.cancel()
        for conn in list(self.connections):
            await conn.wait_done(2.0)

    async def set_enabled(self, enabled: bool) -> None:
        if enabled == self.enabled:
            return
        self.enabled = enabled
        if enabled:
            await self.start()
        else:
            await self.stop()
            self.counters.injected["proxy_disabled"] += 1

    def go_down(self, why: str) -> None:
        """Disable the proxy now, from inside the loop (a toxic's decision): the listener closes (new connections
        are refused), every connection is aborted; `set_enabled(True)` brings it back on the same port."""
        if not self.enabled:
            return
        self.enabled = False
        if self._server is not None:
            self._server.close()
            self._server = None
        for conn in list(self.connections):
            conn.abort()
        self.counters.injected["proxy_disabled"] += 1
        self.event("proxy_down", why=why)

    async def set_listen(self, listen: tuple[str, int]) -> None:
        check_loopback(listen[0])
        running = self._server is not None
        if running:
            await self.stop()
        self.listen = listen
        if running or self.enabled:
            await self.start()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "listen": f"{self.listen[0]}:{self.listen[1]}",
            "upstream": f"{self.upstream[0]}:{self.upstream[1]}",
            "enabled": self.enabled,
            "toxics": [t.to_json() for t in self.toxics],
        }

    # ----------------------------------------------------------- toxics
    def add_toxic(self, data: dict[str, Any]) -> Toxic:
        toxic = build_toxic(data, existing_names={t.name for t in self.toxics})
        self.toxics.append(toxic)
        self._reindex()
        for conn in list(self.connections):
            conn.toxic_added(toxic)
        return toxic

    def get_toxic(self, name: str) -> Toxic:
        for t in self.toxics:
            if t.name == name:
                return t
        raise ToxicError(f"toxic not found: {name}", status=404, api_error=ERR_TOXIC_NOT_FOUND)

    def update_toxic(self, name: str, data: dict[str, Any]) -> Toxic:
        toxic = self.get_toxic(name)
        for conn in list(self.connections):
            conn.toxic_removed(toxic)
        update_toxic(toxic, data)
        for conn in list(self.connections):
            conn.toxic_added(toxic)
        return toxic

    def remove_toxic(self, name: str) -> None:
        toxic = self.get_toxic(name)
        self.toxics.remove(toxic)
        released = self.released.pop(id(toxic), None)
        if released is not None:
            released.set()
        self._reindex()
        for conn in list(self.connections):
            conn.toxic_removed(toxic)

    def clear_toxics(self) -> None:
        for t in list(self.toxics):
            self.remove_toxic(t.name)

    def _reindex(self) -> None:
        self.tcp_toxics = {
            s: [t for t in self.toxics if t.type in TCP_TOXICS and t.stream == s] for s in ("upstream", "downstream")
        }
        self.http_toxics = [t for t in self.toxics if t.type in ht.HTTP_TOXICS]

    def snapshot(self) -> dict[str, Any]:
        return self.counters.snapshot(self.toxics)

    def event(self, kind: str, **data: Any) -> None:
        data["kind"] = kind
        data["time"] = time.time()
        self.events.append(data)

    # ----------------------------------------------------------- connections
    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Connection(self, reader, writer)
        self.connections.add(conn)
        self.counters.connections += 1
        self.counters.active_connections += 1
        try:
            await conn.run()
        except Exception as exc:  # the proxy must survive anything a connection does
            self.event("connection_error", error=repr(exc))
            conn.abort()
        finally:
            self.connections.discard(conn)
            self.counters.active_connections -= 1
            conn.finished.set()

