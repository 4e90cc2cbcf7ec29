"""The asyncio proxy: one `Proxy` per listen address, its connections, links and toxics.

A connection is sniffed: if the client speaks first and its first bytes are an HTTP/1.x request line, the
connection runs in HTTP mode (a request pump and a response pump that parse HTTP/1.1 framing, so HTTP
toxics can act per request, keep-alive included); otherwise (server speaks first, or another protocol such
as PostgreSQL's) it is a plain TCP relay. TCP toxics act in both modes on the bytes of each direction.

Everything here runs on one event loop; `Runtime` (in `__init__`-level `Interposer`) owns that loop's thread.
"""

from __future__ import annotations

import asyncio
import collections
import ipaddress
import re
import socket
import struct
import time
from typing import Any, Callable

from ctk.interposer import fastpath as fp
from ctk.interposer import h1
from ctk.interposer.h1_reader import MessageReader
from ctk.interposer import http_toxics as ht
from ctk.interposer.toxics import (
    ERR_TOXIC_NOT_FOUND,
    INERT_TOXICS,
    TCP_TOXICS,
    Toxic,
    ToxicError,
    bandwidth_pieces,
    build_toxic,
    latency_delay,
    slicer_pieces,
    update_toxic,
)

READ_SIZE = 1 << 16
HIGH_WATER = 1 << 18
CONNECT_TIMEOUT = 10.0
DUPLICATE_TIMEOUT = 30.0
LAST_BYTE_WAIT = 0.01  # a parallel burst: seconds between all-but-the-last bytes and the last bytes
HOLD_LIMIT = 16 << 20  # bytes a timeout(0) toxic holds per link; beyond that, data is dropped
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


def _rst(writer: asyncio.StreamWriter | None) -> None:
    """Close with a TCP RST (SO_LINGER on, 0 seconds) without flushing anything."""
    if writer is None:
        return
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


def _unsent_bytes(writer: asyncio.StreamWriter) -> int:
    sock = writer.get_extra_info("socket")
    n = writer.transport.get_write_buffer_size()
    if sock is None:
        return n
    try:
        import fcntl
        import termios

        buf = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        n += struct.unpack("i", buf)[0]
    except (OSError, ImportError, ValueError):
        pass
    return n


def _unread(reader: asyncio.StreamReader, data: bytes) -> None:
    """Put bytes back at the front of a StreamReader's buffer (used after sniffing)."""
    reader._buffer[0:0] = data  # type: ignore[attr-defined]


class Counters:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.connections = 0
        self.active_connections = 0
        self.http_connections = 0
        self.requests = 0
        self.responses = 0
        self.passed = 0
        self.bytes_upstream = 0
        self.bytes_downstream = 0
        self.refused = 0
        self.upstream_errors = 0
        self.injected: collections.Counter[str] = collections.Counter()
        self.duplicate_statuses: collections.Counter[str] = collections.Counter()

    def snapshot(self, toxics: list[Toxic]) -> dict[str, Any]:
        return {
            "connections": self.connections,
            "active_connections": self.active_connections,
            "http_connections": self.http_connections,
            "requests": self.requests,
            "responses": self.responses,
            "passed": self.passed,
            "bytes_upstream": self.bytes_upstream,
            "bytes_downstream": self.bytes_downstream,
            "refused": self.refused,
            "upstream_errors": self.upstream_errors,
            "injected": dict(self.injected),
            "injected_total": sum(self.injected.values()),
            "duplicate_statuses": dict(self.duplicate_statuses),
            "toxics": {t.name: {"type": t.type, "matched": t.matched, "applied": t.applied} for t in toxics},
        }


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


class Link:
    """One direction of one connection: applies the TCP toxics of its stream, then writes."""

    def __init__(self, conn: Connection, stream: str, writer: asyncio.StreamWriter):
        self.conn = conn
        self.stream = stream
        self.writer = writer
        self.transport = writer.transport
        self.passed = 0  # bytes written (for limit_data)
        self.held: list[bytes] = []
        self.held_bytes = 0
        self.closed = False
        self.upstream_side = stream == "upstream"

    async def send(self, data: bytes, arrived: float | None = None) -> None:
        if self.closed or not data:
            return
        proxy = self.conn.proxy
        if self.conn.cut_armed is not None and not self.upstream_side:
            self._cut(data)
            return
        if self.upstream_side:
            proxy.counters.bytes_upstream += len(data)
        else:
            proxy.counters.bytes_downstream += len(data)
        toxics = proxy.tcp_toxics[self.stream]
        if toxics:
            active = [t for t in toxics if self.conn.applies(t)]
            if active:
                await self._send_toxic(data, arrived, active)
                return
        if self.held:
            await self._release_held()
        self._write(data)
        if self.transport.get_write_buffer_size() > HIGH_WATER:
            await self.writer.drain()

    def _cut(self, data: bytes) -> None:
        """cut_after: the server answered what the client sent after the pattern: drop it, reset both sides."""
        t, sent = self.conn.cut_armed
        self.conn.cut_armed = None
        proxy = self.conn.proxy
        proxy.counters.injected["cut_after"] += 1
        proxy.event("cut_after", toxic=t.name, peer=self.conn.peer, sent=sent, dropped=len(data))
        self.conn.reset()

    def _write(self, data: bytes) -> None:
        if self.closed or self.transport.is_closing():
            return
        self.passed += len(data)
        self.transport.write(data)

    async def _send_toxic(self, data: bytes, arrived: float | None, toxics: list[Toxic]) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        if arrived is None:
            arrived = now
        pieces: list[tuple[float, bytes]] = [(0.0, data)]
        close_after = False
        for t in toxics:
            t.applied += 1
            typ = t.type
            a = t.attributes
            if typ == "latency":
                wait = max(0.0, arrived + latency_delay(a) - now)
                pieces = [(pieces[0][0] + wait, pieces[0][1])] + pieces[1:] if pieces else pieces
            elif typ == "bandwidth":
                pieces = bandwidth_pieces(pieces, a["rate"])
            elif typ == "slicer":
                pieces = slicer_pieces(pieces, a)
            elif typ == "timeout":
                if a["timeout"] == 0:
                    self._hold(b"".join(p for _, p in pieces))
                return  # dropped (or held)
            elif typ == "reset_peer":
                return  # data is stopped until the reset
            elif typ == "cut_after":
                if self.upstream_side and self.conn.cut_armed is None and (t.remaining is None or t.remaining > 0):
                    found = re.search(a["pattern"].encode("latin-1"), data)
                    if found:
                        if t.remaining is not None:
                            t.remaining -= 1
                        shown = data[max(0, found.start() - 16):found.end() + 16].decode("latin-1")
                        self.conn.cut_armed = (t, "".join(c if c.isprintable() else "." for c in shown))
                        if not a.get("deliver", 1):   # the write never reaches the server
                            self.conn.down._cut(b"") if self.conn.down is not None else self.conn.reset()
                            return
            elif typ == "limit_data":
                limit = a["bytes"]
                budget = limit - self.passed
                out = []
                for d, p in pieces:
                    if budget <= 0:
                        break
                    out.append((d, p[:budget]))
                    budget -= len(p[:budget])
                pieces = out
                if budget <= 0:
                    close_after = True
                    self.conn.proxy.counters.injected["limit_data"] += 1
            # slow_close acts on close only
        if self.held:
            await self._release_held()
        for delay, piece in pieces:
            if delay > 0:
                await asyncio.sleep(delay)
            self._write(piece)
            if self.transport.get_write_buffer_size() > HIGH_WATER:
                await self.writer.drain()
        if close_after:
            await self.flush()
            self.conn.close(f"limit_data reached on {self.stream}")

    def _hold(self, data: bytes) -> None:
        if self.held_bytes + len(data) <= HOLD_LIMIT:
            self.held.append(data)
            self.held_bytes += len(data)

    async def _release_held(self) -> None:
        held, self.held, self.held_bytes = self.held, [], 0
        for piece in held:
            self._write(piece)
        await self.flush()

    def release_held_soon(self) -> None:
        if self.held and not any(
            t.type in ("timeout", "reset_peer") and self.conn.applies(t) for t in self.conn.proxy.tcp_toxics[self.stream]
        ):
            held, self.held, self.held_bytes = self.held, [], 0
            for piece in held:
                self._write(piece)

    async def flush(self, timeout: float = 10.0) -> None:
        if self.closed or self.transport.is_closing():
            return
        try:
            await asyncio.wait_for(self.writer.drain(), timeout)
        except (ConnectionError, asyncio.TimeoutError, OSError):
            pass

    async def close_write(self) -> None:
        """The source of this link ended: pass the end on (after slow_close)."""
        for t in self.conn.proxy.tcp_toxics[self.stream]:
            if t.type == "slow_close" and self.conn.applies(t) and t.attributes["delay"] > 0:
                t.applied += 1
                self.conn.proxy.counters.injected["slow_close"] += 1
                await asyncio.sleep(t.attributes["delay"] / 1000.0)
        if self.closed or self.transport.is_closing():
            return
        await self.flush()
        try:
            if self.writer.can_write_eof():
                self.writer.write_eof()
        except (OSError, RuntimeError):
            pass


ReqMeta = fp.ReqMeta


class Side(asyncio.StreamReaderProtocol):
    """The protocol of one socket of a connection. It feeds the socket's StreamReader (the coroutine path), or,
    while its direction runs on the fast path (`fastpath`), hands each chunk to the parser: `route_fast` sets
    `on_data` and also shadows `data_received` with it (asyncio's transports look the method up on every read,
    so the parser is called with no frame in between; uvloop's keep the method they saw first, which then
    dispatches through `on_data`). `route_slow` takes both back."""

    def __init__(self, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop, client_connected_cb=None):
        super().__init__(reader, client_connected_cb, loop=loop)
        self.reader = reader
        self.on_data: Any = None  # fast path: callable(bytes)
        self.on_eof: Any = None  # fast path: callable()
        self.on_lost: Any = None  # fast path: callable(exc | None)
        self.on_pause: Any = None  # callable(bool): the write buffer passed its high / low water mark

    def route_fast(self, on_data, on_eof, on_lost) -> None:
        self.on_data = on_data
        self.data_received = on_data  # type: ignore[method-assign]
        self.on_eof = on_eof
        self.on_lost = on_lost

    def route_slow(self) -> None:
        self.__dict__.pop("data_received", None)
        self.on_data = self.on_eof = self.on_lost = None

    def data_received(self, data: bytes) -> None:
        cb = self.on_data
        if cb is None:
            self.reader.feed_data(data)
        else:
            cb(data)

    def eof_received(self) -> bool:
        cb = self.on_eof
        if cb is None:
            return bool(super().eof_received())
        cb()
        return True  # keep the socket open for writing (the answers still due)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.on_pause is not None:
            self.on_pause(True)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.on_pause is not None:
            self.on_pause(False)

    def connection_lost(self, exc: Exception | None) -> None:
        cb = self.on_lost
        super().connection_lost(exc)
        if cb is not None:
            cb(exc)


def _take_buffer(reader: asyncio.StreamReader, transport: asyncio.BaseTransport) -> tuple[bytes, bool]:
    """Empty a StreamReader (when its direction goes to the fast path): (its bytes, whether it saw the end)."""
    buf = reader._buffer  # type: ignore[attr-defined]
    data = bytes(buf)
    buf.clear()
    if reader._paused:  # type: ignore[attr-defined]
        reader._paused = False  # type: ignore[attr-defined]
        if not transport.is_closing():
            transport.resume_reading()  # type: ignore[attr-defined]
    return data, reader._eof or reader._exception is not None  # type: ignore[attr-defined]


def _give_buffer(reader: asyncio.StreamReader, data: bytes, eof: bool) -> None:
    """Hand bytes (and the end) the fast path still held back to the StreamReader of the coroutine path."""
    if data:
        reader._buffer.extend(data)  # type: ignore[attr-defined]
    if eof and not reader._eof:  # type: ignore[attr-defined]
        reader.feed_eof()


class Connection(fp.FastHttpMixin):
    def __init__(self, proxy: Proxy, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.proxy = proxy
        self.c_reader = reader
        self.c_writer = writer
        self.c_transport = writer.transport
        self.c_proto: Side | None = writer.transport.get_protocol() if isinstance(
            writer.transport.get_protocol(), Side) else None
        self.u_reader: asyncio.StreamReader | None = None
        self.u_writer: asyncio.StreamWriter | None = None
        self.u_transport: Any = None
        self.u_proto: Side | None = None
        self.up: Link | None = None
        self.down: Link | None = None
        self.rolls: dict[str, tuple[int, bool]] = {}
        self.timers: dict[str, asyncio.Task] = {}
        self.cut_armed: tuple[Toxic, str] | None = None  # cut_after: the server's next answer is cut
        self.tasks: list[asyncio.Task] = []
        self.finished = asyncio.Event()
        self.ended = asyncio.get_running_loop().create_future()
        self.dead = False
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        # HTTP mode
        self.http = False
        self.queue: collections.deque[ReqMeta] = collections.deque()
        self.client_done = False
        self.req_task: asyncio.Task | None = None
        self.resp_task: asyncio.Task | None = None
        self.req_fast = self.resp_fast = False
        self.req_idle = self.resp_idle = False  # the coroutine pump waits for the next head (nothing read)
        self.c_rpaused = self.u_rpaused = False  # reading paused by the fast path's flow control
        self.tunnel_ended: set[str] = set()
        # fast path parser state (see fastpath.py)
        self.q_parser = h1.Parser(h1.REQUEST)
        self.q_eof = False
        self.q_hold_meta: ReqMeta | None = None
        self.r_parser = h1.Parser(h1.RESPONSE)
        self.r_eof = False
        self.r_ctx: tuple[ht.Head, ReqMeta | None, str, int] | None = None

    # ----------------------------------------------------------- toxicity per connection
    def applies(self, t: Toxic) -> bool:
        r = self.rolls.get(t.name)
        if r is None or r[0] != t.generation:
            r = (t.generation, t.roll())
            self.rolls[t.name] = r
        return r[1]

    def toxic_added(self, t: Toxic) -> None:
        if self.http and not self.dead:
            if t.type in ht.HTTP_TOXICS:
                self._go_slow("upstream")
                self._go_slow("downstream")
            elif t.type not in INERT_TOXICS and self.applies(t):
                self._go_slow(t.stream)
        if t.type not in ("timeout", "reset_peer") or self.up is None:
            return
        if not self.applies(t):
            return
        ms = t.attributes["timeout"]
        if t.type == "timeout" and ms == 0:
            return  # hold until removed
        self.timers[t.name] = asyncio.get_running_loop().create_task(self._fire(t, ms / 1000.0))

    def toxic_removed(self, t: Toxic) -> None:
        self.rolls.pop(t.name, None)
        timer = self.timers.pop(t.name, None)
        if timer is not None:
            timer.cancel()
        for link in (self.up, self.down):
            if link is not None:
                link.release_held_soon()
        if self.http:
            self._maybe_fast()

    async def _fire(self, t: Toxic, seconds: float) -> None:
        await asyncio.sleep(seconds)
        t.applied += 1
        self.proxy.counters.injected[t.type] += 1
        self.proxy.event(t.type, toxic=t.name, peer=self.peer)
        if t.type == "reset_peer":
            self.reset()
        else:
            self.close(f"timeout toxic {t.name}")

    # ----------------------------------------------------------- teardown
    def close(self, reason: str = "") -> None:
        """Close both sides with a FIN (pending data is flushed by the transports)."""
        if self.dead:
            return
        self.dead = True
        for w in (self.c_writer, self.u_writer):
            if w is not None:
                w.close()
        self._cancel_tasks()

    def reset(self) -> None:
        if self.dead:
            return
        self.dead = True
        _rst(self.c_writer)
        _rst(self.u_writer)
        self._cancel_tasks()

    def abort(self) -> None:
        if self.dead:
            return
        self.dead = True
        self.c_writer.transport.abort()
        if self.u_writer is not None:
            self.u_writer.transport.abort()
        self._cancel_tasks()

    def _cancel_tasks(self) -> None:
        taps = self.proxy.taps
        if taps:
            for meta in self.queue:  # requests the connection ended before answering
                for tap in taps:
                    tap(meta, None, "connection closed before the answer")
        # side tasks (the copies of duplicate_request, on their own upstream connections, bounded by
        # DUPLICATE_TIMEOUT) outlive the client connection, so their answers are still counted;
        # Proxy.stop() cancels them
        me = asyncio.current_task()
        for t in [*self.tasks, *self.timers.values()]:
            if t is not me and not t.done():
                t.cancel()
        if self.up is not None:
            self.up.closed = True
        if self.down is not None:
            self.down.closed = True
        for proto in (self.c_proto, self.u_proto):
            if proto is not None:
                proto.route_slow()
                proto.on_pause = None
        if not self.ended.done():
            self.ended.set_result(None)

    async def wait_done(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.finished.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        if len(self.tasks) > 16:
            self.tasks = [t for t in self.tasks if not t.done()]
        self.tasks.append(task)
        return task

    # ----------------------------------------------------------- main
    async def run(self) -> None:
        proxy = self.proxy
        loop = asyncio.get_running_loop()
        u_reader = asyncio.StreamReader(limit=ht.MAX_HEAD, loop=loop)
        u_proto = Side(u_reader, loop)
        try:
            transport, _ = await asyncio.wait_for(
                loop.create_connection(lambda: u_proto, proxy.upstream[0], proxy.upstream[1]), CONNECT_TIMEOUT
            )
        except (OSError, asyncio.TimeoutError) as exc:
            proxy.counters.upstream_errors += 1
            proxy.event("upstream_unreachable", error=repr(exc), peer=self.peer)
            self.close("upstream unreachable")
            return
        self.u_reader = u_reader
        self.u_proto = u_proto
        self.u_transport = transport
        self.u_writer = asyncio.StreamWriter(transport, u_proto, u_reader, loop)
        if self.dead:
            transport.abort()
            return
        self.up = Link(self, "upstream", self.u_writer)
        self.down = Link(self, "downstream", self.c_writer)
        for t in proxy.toxics:
            self.toxic_added(t)

        mode = proxy.protocol
        first_client: bytes = b""
        first_server: bytes = b""
        if mode == "auto":
            mode, first_client, first_server = await self._sniff()
        if self.dead:
            return
        if mode == "http":
            proxy.counters.http_connections += 1
            await self._run_http(first_client)
        else:
            await self._run_tcp(first_client, first_server)

    async def _sniff(self) -> tuple[str, bytes, bytes]:
        c_task = asyncio.ensure_future(self.c_reader.read(READ_SIZE))
        u_task = asyncio.ensure_future(self.u_reader.read(READ_SIZE))  # type: ignore[union-attr]
        self.tasks += [c_task, u_task]
        done, _ = await asyncio.wait({c_task, u_task}, return_when=asyncio.FIRST_COMPLETED)
        first_client = b""
        first_server = b""
        if c_task in done:
            first_client = c_task.result()
        if u_task in done:
            first_server = u_task.result()
        if u_task in done or not first_client:
            # the server spoke first, or the client closed: plain TCP
            if c_task not in done:
                self._pending_client = c_task
            if u_task not in done:
                self._pending_server = u_task
            return "tcp", first_client, first_server
        # the client spoke first
        if not u_task.done():
            u_task.cancel()
            try:
                await u_task
            except asyncio.CancelledError:
                pass
            except Exception:
                pass
            if u_task.done() and not u_task.cancelled() and u_task.exception() is None:
                first_server = u_task.result()
        if first_server:
            return "tcp", first_client, first_server
        if ht.looks_like_http_request(first_client):
            return "http", first_client, b""
        return "tcp", first_client, b""

    # ----------------------------------------------------------- plain TCP
    async def _run_tcp(self, first_client: bytes, first_server: bytes) -> None:
        pending_client = getattr(self, "_pending_client", None)
        pending_server = getattr(self, "_pending_server", None)
        up_task = asyncio.ensure_future(self._pump(self.c_reader, self.up, first_client, pending_client))
        down_task = asyncio.ensure_future(self._pump(self.u_reader, self.down, first_server, pending_server))
        self.tasks += [up_task, down_task]
        await asyncio.gather(up_task, down_task, return_exceptions=True)
        self.close("both directions ended")

    async def _pump(self, reader, link: Link, first: bytes, pending: asyncio.Future | None) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue(maxsize=64)

        async def read_side() -> None:
            try:
                if first:
                    await queue.put((loop.time(), first))
                if pending is not None:
                    data = await pending
                    if not data:
                        return
                    await queue.put((loop.time(), data))
                while True:
                    data = await reader.read(READ_SIZE)
                    if not data:
                        return
                    await queue.put((loop.time(), data))
            except (ConnectionError, OSError):
                return
            finally:
                await queue.put(None)

        reader_task = asyncio.ensure_future(read_side())
        self.tasks.append(reader_task)
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                await link.send(item[1], item[0])
            await link.close_write()
        except (ConnectionError, OSError):
            self.abort()

    # ----------------------------------------------------------- HTTP: modes
    async def _run_http(self, first_client: bytes) -> None:
        self.http = True
        if self.c_proto is not None:
            self.c_proto.on_pause = self._client_write_paused
        self.u_proto.on_pause = self._upstream_write_paused  # type: ignore[union-attr]
        if self._fast_ok("upstream"):
            self._to_fast("upstream", first_client)
        else:
            if first_client:
                _unread(self.c_reader, first_client)
            self.req_task = self._spawn(self._request_pump())
        if not self.dead:
            if self._fast_ok("downstream"):
                self._to_fast("downstream")
            else:
                self.resp_task = self._spawn(self._response_pump())
        await self.ended
        self.close("http connection ended")

    def _fast_ok(self, stream: str) -> bool:
        """Whether a direction may run on the fast path: no toxic can touch it."""
        proxy = self.proxy
        if not proxy.fast_path or self.dead or proxy.http_toxics:
            return False
        if stream == "upstream" and self.c_proto is None:
            return False
        for t in proxy.tcp_toxics[stream]:
            if t.type not in INERT_TOXICS and self.applies(t):
                return False
        link = self.up if stream == "upstream" else self.down
        if link is None or link.held:
            return False
        if stream == "downstream":
            for m in self.queue:
                if m.toxics:
                    return False
        return True

    def _to_fast(self, stream: str, prefix: bytes = b"") -> None:
        """A direction no toxic touches goes to the fast path (its coroutine pump, if any, waits at a head):
        what its StreamReader and its parser hold is parsed at once."""
        upstream = stream == "upstream"
        if upstream:
            reader, transport, proto, other, side = self.c_reader, self.c_transport, self.c_proto, self.u_proto, "c"
            parser, on = self.q_parser, (self._fq_data, self._fq_eof, self._fq_lost)
            self.req_fast = True
            parser.release()  # the coroutine path reads on after an Upgrade request: so does the fast path
            self.q_eof = False
        else:
            reader, transport, proto, other, side = self.u_reader, self.u_transport, self.u_proto, self.c_proto, "u"
            parser, on = self.r_parser, (self._fr_data, self._fr_eof, self._fr_lost)
            self.resp_fast = True
            self.r_eof = False
            self.r_ctx = None
        assert reader is not None and proto is not None
        data, eof = _take_buffer(reader, transport)
        if prefix:
            data = prefix + data
        proto.route_fast(*on)
        if other is not None and other._paused:  # type: ignore[attr-defined]
            self._pause_reading(side, True)
        if data or parser.pending():
            on[0](data)
        if eof:
            on[1]()

    def _go_slow(self, stream: str) -> None:
        """A toxic concerns this direction: hand it from the fast path to its coroutine pump, mid-message too.
        The direction keeps its parser: the pump goes on from the parser's state (in a head, in a body, in a
        tunnel); the bytes the parser holds go back to the StreamReader."""
        upstream = stream == "upstream"
        if not (self.req_fast if upstream else self.resp_fast):
            return
        if upstream:
            self.req_fast = False
            proto, reader, parser, eof, paused = self.c_proto, self.c_reader, self.q_parser, self.q_eof, "c"
        else:
            self.resp_fast = False
            proto, reader, parser, eof, paused = self.u_proto, self.u_reader, self.r_parser, self.r_eof, "u"
        assert proto is not None and reader is not None
        proto.route_slow()
        if getattr(self, f"{paused}_rpaused"):
            self._pause_reading(paused, False)
        _give_buffer(reader, parser.take_pending(), eof)
        phase = parser.state.phase
        if phase == h1.DONE:
            return
        if phase == h1.TUNNEL:
            task = self._spawn(self._tunnel_pump(stream)) if stream not in self.tunnel_ended else None
        elif upstream:
            task = self._spawn(self._request_pump(phase in h1.IN_BODY))
        else:
            mid = phase in h1.IN_BODY or phase == h1.CLOSE
            task = self._spawn(self._response_pump(self.r_ctx if mid else None))
        if task is not None:
            if upstream:
                self.req_task = task
            else:
                self.resp_task = task

    def _maybe_fast(self) -> None:
        """Toxics went away: a direction whose pump waits for the next head goes back to the fast path."""
        if self.dead:
            return
        if not self.req_fast and self.req_idle and self._fast_ok("upstream"):
            task = self.req_task
            if task is not None:
                task.cancel()  # it waits in readuntil: nothing was consumed
            self.req_idle = False
            self._to_fast("upstream")
        if not self.dead and not self.resp_fast and self.resp_idle and self._fast_ok("downstream"):
            task = self.resp_task
            if task is not None:
                task.cancel()
            self.resp_idle = False
            self._to_fast("downstream")

    def _passed_untouched(self, meta: ReqMeta, status: int) -> None:
        """The answer to the oldest request went out as the upstream sent it (coroutine or fast path)."""
        self._answered(meta, status)
        self.proxy.counters.passed += 1

    def _answered(self, meta: ReqMeta, status: int) -> None:
        """The answer to the oldest request went out (or was dropped by a toxic)."""
        self.queue.popleft()
        for tap in self.proxy.taps:
            tap(meta, status, None)
        if meta.primary_done is not None:
            meta.primary_done.set()
        self.proxy.counters.responses += 1
        if meta is self.q_hold_meta:
            self.q_hold_meta = None
            if self.req_fast and self.q_parser.state.phase == h1.HOLD:
                asyncio.get_running_loop().call_soon(self._fq_release)

    # ----------------------------------------------------------- HTTP: coroutine path
    def _match(self, head: ht.Head) -> list[Toxic]:
        out: list[Toxic] = []
        method = head.method
        target = head.target
        for t in self.proxy.http_toxics:
            cm = getattr(t, "_compiled", None)
            if cm is None or getattr(t, "_compiled_gen", -1) != t.generation:
                cm = ht.CompiledMatch(t.attributes)
                t._compiled = cm  # type: ignore[attr-defined]
                t._compiled_gen = t.generation  # type: ignore[attr-defined]
            if not cm.matches(method, target, head.headers):
                continue
            t.matched += 1
            if t.remaining is not None and t.remaining <= 0:
                continue
            if not t.roll():
                continue
            if t.remaining is not None:
                t.remaining -= 1
            t.applied += 1
            out.append(t)
        return out

    async def _request_pump(self, mid_body: bool = False) -> None:
        proxy = self.proxy
        up = self.up
        assert up is not None
        msgs = MessageReader(self.c_reader, self.q_parser)
        try:
            if mid_body:  # the fast path began this request's body
                try:
                    await msgs.body(up.send)
                except ht.HttpProtocolError as exc:
                    proxy.event("client_protocol_error", error=str(exc), peer=self.peer)
                    self.close("client protocol error in a body")
                    return
            while not self.dead:
                if self._fast_ok("upstream"):
                    self._to_fast("upstream")
                    return
                self.req_idle = True
                try:
                    head = await msgs.head()
                except ht.HttpProtocolError as exc:
                    if msgs.parser.head is not None:  # a head whose framing is unusable still counts
                        proxy.counters.requests += 1
                    proxy.event("client_protocol_error", error=str(exc), peer=self.peer)
                    break
                finally:
                    self.req_idle = False
                if head is None:
                    break
                proxy.counters.requests += 1
                toxics = self._match(head) if proxy.http_toxics else []
                meta = ReqMeta(head.method, head.target, head.request_version, toxics)
                kind, length = msgs.parser.kind, msgs.parser.length
                dup = None
                for t in toxics:
                    if t.type == "delay_request" and t.attributes["delay_ms"]:
                        proxy.counters.injected["delay_request"] += 1
                        proxy.event("delay_request", toxic=t.name, method=head.method, target=head.target)
                        await asyncio.sleep(t.attributes["delay_ms"] / 1000.0)
                    elif t.type == "duplicate_request" and dup is None:
                        dup = t
                        meta.primary_done = asyncio.Event()
                self.queue.append(meta)
                if proxy.taps:
                    meta.began = time.monotonic()
                expect = "100-continue" in head.tokens("expect")
                if dup is not None and dup.attributes.get("parallel") and not expect:
                    try:
                        await self._burst_out(dup, meta, head, msgs)
                    except ht.HttpProtocolError as exc:
                        proxy.event("client_protocol_error", error=str(exc), peer=self.peer)
                        self.close("client protocol error in a body")
                        return
                    continue
                try:
                    if kind == "none" or (kind == "length" and length <= ht.CHUNK and not expect):
                        raw = head.raw + await msgs.whole_body()
                        await up.send(raw)
                    else:
                        parts = [head.raw]
                        await up.send(head.raw)

                        async def sink(b: bytes) -> None:
                            if dup is not None:
                                parts.append(b)
                            await up.send(b)

                        await msgs.body(sink)
                        raw = b"".join(parts)
                except ht.HttpProtocolError as exc:
                    # the head went out, the body is broken: the upstream cannot make sense of the rest
                    proxy.event("client_protocol_error", error=str(exc), peer=self.peer)
                    self.close("client protocol error in a body")
                    return
                meta.sent_at = asyncio.get_running_loop().time()
                if dup is not None:
                    task = asyncio.ensure_future(self._duplicate(dup, meta, raw))
                    proxy.side_tasks.add(task)
                    task.add_done_callback(proxy.side_tasks.discard)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        except Exception as exc:
            proxy.event("internal_error", error=repr(exc), peer=self.peer)
            self.abort()
            return
        self.client_done = True
        if not self.queue:
            self.close("client closed")
        # else: the answers still due are delivered, then the response side closes the connection

    async def _duplicate(self, t: Toxic, meta: ReqMeta, raw: bytes) -> None:
        """Copies sent after the original went out (after its answer unless ``parallel``), one after another."""
        proxy = self.proxy
        if not t.attributes.get("parallel") and meta.primary_done is not None:
            try:
                await asyncio.wait_for(meta.primary_done.wait(), DUPLICATE_TIMEOUT)
            except asyncio.TimeoutError:
                pass
        if t.attributes.get("hold_copy") and not t.attributes.get("parallel") and any(x is t for x in proxy.toxics):
            released = proxy.released.setdefault(id(t), asyncio.Event())
            try:
                await asyncio.wait_for(released.wait(), DUPLICATE_TIMEOUT)
            except asyncio.TimeoutError:
                pass
        copies = []
        for _ in range(int(t.attributes.get("copies") or 1)):
            proxy.counters.injected["duplicate_request"] += 1
            try:
                conn = await asyncio.wait_for(self._open_copy(), CONNECT_TIMEOUT)
            except (OSError, asyncio.TimeoutError) as exc:
                conn = exc
            else:
                conn[1].write(raw)
                conn = (*conn, asyncio.get_running_loop().time())
            copies.append(await self._copy_answer(t, meta, conn))
        await self._burst_event(t, meta, copies)

    async def _open_copy(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        host, port = self.proxy.upstream
        return await asyncio.open_connection(host, port, limit=ht.MAX_HEAD)

    async def _burst_out(self, t: Toxic, meta: ReqMeta, head: ht.Head, msgs: MessageReader) -> None:
        """``duplicate_request`` with ``parallel``: read the whole request, open the copies' connections, then
        write the original and every copy upstream in one turn of the loop; a side task reads the answers."""
        up = self.up
        assert up is not None
        loop = asyncio.get_running_loop()
        raw = head.raw + await msgs.whole_body()
        n = int(t.attributes.get("copies") or 1)
        opened = await asyncio.gather(*(asyncio.wait_for(self._open_copy(), CONNECT_TIMEOUT) for _ in range(n)),
                                      return_exceptions=True)
        self.proxy.counters.injected["duplicate_request"] += n
        # all but the last byte first: the server reads the requests but can start none of them; then every
        # last byte in one turn of the loop, so that the requests become complete at the server together
        live = [c for c in opened if not isinstance(c, BaseException)]
        if live and len(raw) > 1:
            await up.send(raw[:-1])
            for c in live:
                c[1].write(raw[:-1])
            await asyncio.sleep(LAST_BYTE_WAIT)
            rest = raw[-1:]
        else:
            rest = raw
        await up.send(rest)
        meta.sent_at = loop.time()
        conns: list[Any] = []
        for c in opened:
            if isinstance(c, BaseException):
                conns.append(c)
                continue
            c[1].write(rest)
            conns.append((*c, loop.time()))
        task = asyncio.ensure_future(self._burst_answers(t, meta, conns))
        self.proxy.side_tasks.add(task)
        task.add_done_callback(self.proxy.side_tasks.discard)

    async def _burst_answers(self, t: Toxic, meta: ReqMeta, conns: list[Any]) -> None:
        copies = await asyncio.gather(*(self._copy_answer(t, meta, c) for c in conns))
        await self._burst_event(t, meta, list(copies))

    async def _copy_answer(self, t: Toxic, meta: ReqMeta, conn: Any) -> dict[str, Any]:
        """Read one copy's answer (its connection from `_open_copy` with the time it was written, or the error
        that kept it from being opened); counts its status and returns what the burst event says of it."""
        proxy = self.proxy
        if isinstance(conn, BaseException):
            proxy.counters.duplicate_statuses["error"] += 1
            proxy.event("duplicate_request", toxic=t.name, method=meta.method, target=meta.target, error=repr(conn))
            return {"role": "copy", "sent": None, "answered": None, "status": None, "error": repr(conn)}
        reader, writer, sent = conn
        try:
            status, answered, body = await asyncio.wait_for(self._read_answer(reader, meta.method), DUPLICATE_TIMEOUT)
        except (OSError, asyncio.TimeoutError, ht.HttpProtocolError, asyncio.IncompleteReadError) as exc:
            proxy.counters.duplicate_statuses["error"] += 1
            proxy.event("duplicate_request", toxic=t.name, method=meta.method, target=meta.target, error=repr(exc))
            return {"role": "copy", "sent": sent, "answered": None, "status": None, "error": repr(exc)}
        finally:
            writer.close()
        proxy.counters.duplicate_statuses[str(status)] += 1
        proxy.event("duplicate_request", toxic=t.name, method=meta.method, target=meta.target, status=status)
        return {"role": "copy", "sent": sent, "answered": answered, "status": status, "body": body}

    @staticmethod
    async def _read_answer(reader: asyncio.StreamReader, method: str) -> tuple[int, float, str]:
        """(status, when its head arrived, body text) of the final answer on a copy's connection."""
        msgs = MessageReader(reader, h1.Parser(h1.RESPONSE))
        while True:
            head = await msgs.head(lambda: method)
            if head is None:
                raise ht.HttpProtocolError("upstream closed without answering the duplicate")
            answered = asyncio.get_running_loop().time()
            chunked = msgs.parser.kind == "chunked"
            parts: list[bytes] = []
            kept = [0]

            async def sink(b: bytes) -> None:
                if kept[0] < ht.BODY_KEEP * 2:
                    parts.append(b)
                    kept[0] += len(b)

            await msgs.body(sink)
            if 100 <= head.status < 200 and head.status != 101:
                continue
            return head.status, answered, ht.body_text(b"".join(parts), chunked)

    async def _burst_event(self, t: Toxic, meta: ReqMeta, copies: list[dict[str, Any]]) -> None:
        """One ``duplicate_burst`` event: the original and its copies, when each was forwarded and answered."""
        if meta.answer_at is None and meta.primary_done is not None:
            try:
                await asyncio.wait_for(meta.primary_done.wait(), DUPLICATE_TIMEOUT)
            except asyncio.TimeoutError:
                pass
        reqs = [{"role": "original", "sent": meta.sent_at or None, "answered": meta.answer_at,
                 "status": meta.answer_status}] + copies
        found = ht.overlap(reqs)
        starts = [r["sent"] for r in reqs if r.get("sent") is not None]
        t0 = min(starts) if starts else 0.0

        def ms(v: float | None) -> float | None:
            return None if v is None else round((v - t0) * 1000, 3)

        shown = [{**{k: v for k, v in r.items() if k not in ("sent", "answered")}, "sent_ms": ms(r.get("sent")),
                  "answer_ms": ms(r.get("answered"))} for r in reqs]
        self.proxy.event("duplicate_burst", toxic=t.name, method=meta.method, target=meta.target,
                         parallel=bool(t.attributes.get("parallel")), requests=shown, **found)

    def _next_method(self) -> str | None:
        """The method of the request the next answer is for (its framing depends on it)."""
        return self.queue[0].method if self.queue else None

    async def _response_pump(self, resume: tuple[ht.Head, ReqMeta | None, str, int] | None = None) -> None:
        """`resume`: the answer the fast path began (head, request, framing, status), its body still running."""
        proxy = self.proxy
        down = self.down
        assert down is not None and self.u_reader is not None
        msgs = MessageReader(self.u_reader, self.r_parser)
        try:
            if resume is not None:
                head, meta, kind, status = resume
                if not await self._pass_answer(msgs, head, meta, kind, 0, status, resumed=True):
                    return
            while not self.dead:
                if self._fast_ok("downstream"):
                    self._to_fast("downstream")
                    return
                self.resp_idle = True
                try:
                    head = await msgs.head(self._next_method)
                except ht.HttpProtocolError as exc:
                    proxy.counters.upstream_errors += 1
                    proxy.event("upstream_protocol_error", error=str(exc), peer=self.peer)
                    self.close("upstream protocol error")
                    return
                finally:
                    self.resp_idle = False
                if head is None:
                    if self.queue:
                        proxy.counters.upstream_errors += 1
                        proxy.event("upstream_closed_before_answer", target=self.queue[0].target)
                    self.close("upstream closed")
                    return
                meta = self.queue[0] if self.queue else None
                status = head.status
                kind, length = msgs.parser.kind, msgs.parser.length
                informational = 100 <= status < 200 and status != 101
                if meta is not None and meta.primary_done is not None and not informational:
                    meta.answer_at = asyncio.get_running_loop().time()  # only for duplicated requests
                    meta.answer_status = status
                response_toxics = [t for t in meta.toxics if t.type in ht.RESPONSE_SIDE] if meta and not informational else []
                if not response_toxics:
                    if not await self._pass_answer(msgs, head, meta, kind, length, status):
                        return
                    continue
                # a toxic acts on this answer: read all of it first
                parts = [head.raw]

                async def sink(b: bytes) -> None:
                    parts.append(b)

                try:
                    await msgs.body(sink)
                except ht.HttpProtocolError as exc:
                    proxy.event("upstream_protocol_error", error=str(exc))
                    self.close("upstream protocol error")
                    return
                assert meta is not None
                self._answered(meta, status)
                raw = b"".join(parts)
                keep = kind != "close" and head.keep_alive(head.first[0])
                body = ht.body_text(b"".join(parts[1:]), kind == "chunked")
                if await self._apply_response_toxics(meta, status, raw, keep, response_toxics, body):
                    return
                if not keep or (self.client_done and not self.queue):
                    await down.flush()
                    self.close("response without keep-alive")
                    return
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            self.abort()
        except Exception as exc:
            proxy.event("internal_error", error=repr(exc), peer=self.peer)
            self.abort()

    async def _pass_answer(self, msgs: MessageReader, head: ht.Head, meta: ReqMeta | None, kind: str, length: int,
                           status: int, resumed: bool = False) -> bool:
        """Forward an answer untouched (`resumed`: the fast path sent its head and began its body); then
        whether the connection goes on (True)."""
        down = self.down
        assert down is not None
        try:
            if resumed:
                await msgs.body(down.send)
            else:
                await self._forward_response(msgs, head, kind, length)
        except ht.HttpProtocolError as exc:
            self.proxy.counters.upstream_errors += 1
            self.proxy.event("upstream_protocol_error", error=str(exc), target=meta.target if meta else None)
            await down.flush()
            self.close("upstream died mid-response")
            return False
        return await self._after_forward(head, meta, kind, status)

    async def _after_forward(self, head: ht.Head, meta: ReqMeta | None, kind: str, status: int) -> bool:
        """An answer went through untouched: count it, then whether the connection goes on (True)."""
        down = self.down
        assert down is not None
        if 100 <= status < 200 and status != 101:
            return True
        if meta is not None:
            self._passed_untouched(meta, status)
        if status == 101:
            await self._tunnel()
            return False
        if kind == "close" or not head.keep_alive(head.first[0]):
            await down.flush()
            self.close("response without keep-alive")
            return False
        if self.client_done and not self.queue:
            await down.flush()
            self.close("client closed")
            return False
        return True

    async def _apply_response_toxics(
        self, meta: ReqMeta, status: int, raw: bytes, keep: bool, toxics: list[Toxic], body: str | None = None
    ) -> bool:
        """Returns True when the connection is gone. The events of toxics that keep the answer from the client
        (or record it) carry its ``body``."""
        proxy = self.proxy
        down = self.down
        assert down is not None
        for t in toxics:
            if t.type == "record_response":
                proxy.event("record_response", toxic=t.name, method=meta.method, target=meta.target, status=status,
                            body=body)
        for t in toxics:
            if t.type == "delay_response" and t.attributes["delay_ms"]:
                proxy.counters.injected["delay_response"] += 1
                proxy.event("delay_response", toxic=t.name, method=meta.method, target=meta.target, status=status,
                            body=body)
                await asyncio.sleep(t.attributes["delay_ms"] / 1000.0)
        for t in toxics:
            if t.type == "drop_response":
                proxy.counters.injected["drop_response"] += 1
                proxy.event("drop_response", toxic=t.name, method=meta.method, target=meta.target, status=status,
                            body=body)
                await down.flush()
                self.close("drop_response")
                return True
            if t.type == "replace_status":
                new = t.attributes["status"]
                proxy.counters.injected["replace_status"] += 1
                proxy.event(
                    "replace_status", toxic=t.name, method=meta.method, target=meta.target, status=status, sent=new,
                    body=body,
                )
                await down.send(ht.error_response(new, keep))
                return False
            if t.type == "reset_after_bytes":
                n = t.attributes["bytes"]
                proxy.counters.injected["reset_after_bytes"] += 1
                proxy.event(
                    "reset_after_bytes", toxic=t.name, method=meta.method, target=meta.target, status=status, bytes=n,
                    body=body,
                )
                if n:
                    await down.send(raw[:n])
                    await down.flush()
                    deadline = asyncio.get_running_loop().time() + 2.0
                    while _unsent_bytes(self.c_writer) > 0 and asyncio.get_running_loop().time() < deadline:
                        await asyncio.sleep(0.002)
                    await asyncio.sleep(0.01)
                self.reset()
                return True
        proxy.counters.passed += 1
        await down.send(raw)
        return False

    async def _forward_response(self, msgs: MessageReader, head: ht.Head, kind: str, length: int) -> None:
        down = self.down
        assert down is not None
        if kind == "none" or (kind == "length" and length <= ht.CHUNK):
            parts = [head.raw]

            async def keep(b: bytes) -> None:
                parts.append(b)

            try:
                await msgs.body(keep)
            except ht.HttpProtocolError:
                await down.send(b"".join(parts))
                raise
            await down.send(b"".join(parts) if len(parts) > 1 else head.raw)
        else:
            await down.send(head.raw)
            await msgs.body(down.send)

    async def _tunnel(self) -> None:
        """After 101 Switching Protocols (seen by the response pump): plain relay both ways."""
        self._tunnel_request_side()
        await self._tunnel_pump("downstream")

    async def _tunnel_pump(self, stream: str) -> None:
        # the bytes a parser read ahead go first
        if stream == "upstream":
            await self._pump(self.c_reader, self.up, self.q_parser.take_pending(), None)
        else:
            await self._pump(self.u_reader, self.down, self.r_parser.take_pending(), None)
        self._tunnel_eof(stream)
