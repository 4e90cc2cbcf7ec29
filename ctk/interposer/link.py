"""TCP links and their toxics: one `Link` per direction of a connection writes what its pump hands it, through
the TCP toxics of its stream; `Side` is the transport protocol both paths read from (it routes bytes to the
fast path or to a StreamReader)."""

from __future__ import annotations

import asyncio
import re
import socket
import struct
from typing import Any

from ctk.interposer.parts import ConnectionView, SocketTransport
from ctk.interposer.pgwire import FrontendReader
from ctk.interposer.toxics import Toxic, bandwidth_pieces, latency_delay, slicer_pieces


READ_SIZE = 1 << 16
HIGH_WATER = 1 << 18
HOLD_LIMIT = 16 << 20  # bytes a timeout(0) toxic holds per link; beyond that, data is dropped


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


def _statement_match(pattern: str, data: bytes, ran: list[str] | None) -> str | None:
    """cut_after: what of a chunk matches `pattern` (shown in the toxic's event), or None. On a PostgreSQL stream
    (`ran`: the SQL its complete Query / Execute messages run, pgwire.py) the SQL of each statement is searched,
    whether its text travels with it or was prepared under a name earlier; on any other stream, the bytes."""
    if ran is not None:
        for sql in ran:
            found = re.search(pattern, sql)
            if found:
                shown = sql[max(0, found.start() - 16):found.end() + 48]
                return "".join(c if c.isprintable() else "." for c in shown)
        return None
    hit = re.search(pattern.encode("latin-1"), data)
    if hit is None:
        return None
    raw = data[max(0, hit.start() - 16):hit.end() + 16].decode("latin-1")
    return "".join(c if c.isprintable() else "." for c in raw)


def _unread(reader: asyncio.StreamReader, data: bytes) -> None:
    """Put bytes back at the front of a StreamReader's buffer (used after sniffing)."""
    reader._buffer[0:0] = data  # type: ignore[attr-defined]


class Link:
    """One direction of one connection: applies the TCP toxics of its stream, then writes."""

    def __init__(self, conn: ConnectionView, stream: str, writer: asyncio.StreamWriter):
        self.conn = conn
        self.stream = stream
        self.writer = writer
        self.transport = writer.transport
        self.passed = 0  # bytes written (for limit_data)
        self.held: list[bytes] = []
        self.held_bytes = 0
        self.closed = False
        self.upstream_side = stream == "upstream"
        # what the client asks a PostgreSQL server to run (cut_after matches it); None once the stream is not that
        self.pg: FrontendReader | None = FrontendReader() if self.upstream_side else None

    async def send(self, data: bytes, arrived: float | None = None) -> None:
        if self.closed or not data:
            return
        proxy = self.conn.proxy
        if self.conn.cut_armed is not None and not self.upstream_side:
            self._cut(data)
            return
        ran: list[str] | None = None
        if self.upstream_side:
            proxy.counters.bytes_upstream += len(data)
            if self.pg is not None:   # followed from the first byte: a statement is prepared long before a fault
                ran = self.pg.feed(data)
                if ran is None:
                    self.pg = None
        else:
            proxy.counters.bytes_downstream += len(data)
        toxics = proxy.tcp_toxics[self.stream]
        if toxics:
            active = [t for t in toxics if self.conn.applies(t)]
            if active:
                await self._send_toxic(data, arrived, active, ran)
                return
        if self.held:
            await self._release_held()
        self._write(data)
        if self.transport.get_write_buffer_size() > HIGH_WATER:
            await self.writer.drain()

    def _cut(self, data: bytes) -> None:
        """cut_after: the server answered what the client sent after the pattern: drop it, reset both sides."""
        assert self.conn.cut_armed is not None   # _cut is called only while a cut is armed
        t, sent = self.conn.cut_armed
        self.conn.cut_armed = None
        proxy = self.conn.proxy
        proxy.counters.injected["cut_after"] += 1
        proxy.event("cut_after", toxic=t.name, peer=self.conn.peer, sent=sent, dropped=len(data))
        self.conn.reset()
        if t.attributes.get("then_down"):   # the link stays down (until enabled again), not just this connection
            proxy.go_down(f"cut_after {t.name}")

    def _write(self, data: bytes) -> None:
        if self.closed or self.transport.is_closing():
            return
        self.passed += len(data)
        self.transport.write(data)

    async def _send_toxic(self, data: bytes, arrived: float | None, toxics: list[Toxic],
                          ran: list[str] | None = None) -> None:
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
                    shown = _statement_match(a["pattern"], data, ran if self.pg is not None else None)
                    if shown is not None:
                        if t.remaining is not None:
                            t.remaining -= 1
                        self.conn.cut_armed = (t, shown)
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


def _take_buffer(reader: asyncio.StreamReader, transport: SocketTransport) -> tuple[bytes, bool]:
    """Empty a StreamReader (when its direction goes to the fast path): (its bytes, whether it saw the end)."""
    buf = reader._buffer  # type: ignore[attr-defined]
    data = bytes(buf)
    buf.clear()
    if reader._paused:  # type: ignore[attr-defined]
        reader._paused = False  # type: ignore[attr-defined]
        if not transport.is_closing():
            transport.resume_reading()
    return data, reader._eof or reader._exception is not None  # type: ignore[attr-defined]


def _give_buffer(reader: asyncio.StreamReader, data: bytes, eof: bool) -> None:
    """Hand bytes (and the end) the fast path still held back to the StreamReader of the coroutine path."""
    if data:
        reader._buffer.extend(data)  # type: ignore[attr-defined]
    if eof and not reader._eof:  # type: ignore[attr-defined]
        reader.feed_eof()

