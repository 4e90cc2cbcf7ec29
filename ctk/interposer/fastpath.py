"""The fast path of the interposer's HTTP mode: each direction of a connection that no toxic touches is parsed
and relayed synchronously, inside the transport's ``data_received`` callback, with no StreamReader, task or
await per request.

It does what the coroutine pumps of `proxy.Connection` do when no toxic applies, byte for byte: every message
head is parsed (requests and responses are counted, each request's method frames its answer), bodies are
streamed as they arrive (Content-Length, chunked with trailers, read-until-close), pipelined requests queue
up, 1xx answers pass through, a 101 turns the connection into a raw tunnel, and flow control pauses the
reading side while the other side's write buffer is full. Heads and chunk-size lines are held until complete
(as the coroutine path does); body bytes are forwarded at once, and all the bytes of one ``data_received``
that can be forwarded go out in one write.

A direction leaves the fast path the moment a toxic that concerns it is added (any HTTP toxic: both
directions; a TCP toxic: the direction of its stream), at any point of a message: what the parser still
holds goes back into the StreamReader and the coroutine pump resumes where the parser was (in a head, in a
body with N bytes left, inside chunked framing, in a tunnel). It comes back when the toxics are gone and
its pump waits for the next head. `proxy.Connection` owns the state; this mixin only holds the parsers.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ctk.interposer import http_toxics as ht

# parser states (shared by both directions)
HEAD = 0  # waiting for a message head (a partial head is held)
LEN = 1  # in a Content-Length body, `left` bytes to go
CSIZE = 2  # at a chunk-size line (a partial line is held)
CDATA = 3  # in a chunk, `left` bytes to go (the chunk's CRLF included)
TRAILER = 4  # in the trailer lines after the last chunk
HOLD = 5  # requests only: an Upgrade request went out; the next bytes wait for its answer
CLOSE = 6  # responses only: a body delimited by the end of the connection
TUNNEL = 7  # after 101: raw bytes
DONE = 8  # this direction is finished (the client closed, or a protocol error)

IN_BODY = (LEN, CSIZE, CDATA, TRAILER)
Head = ht.Head
HttpProtocolError = ht.HttpProtocolError
SEP = b"\r\n\r\n"
MAX_LINE = ht.MAX_HEAD
NO_TOXICS: list[Any] = []


class ReqMeta:
    """A request on its way: what its answer needs (method for framing, toxics matched at its head)."""

    __slots__ = ("method", "target", "toxics", "head", "body", "version", "primary_done", "sent_at", "answer_at",
                 "answer_status")

    def __init__(self, method: str, target: str, version: str, toxics: list[Any]):
        self.method = method
        self.target = target
        self.version = version
        self.toxics = toxics
        self.primary_done: asyncio.Event | None = None
        self.sent_at = 0.0
        self.answer_at: float | None = None      # set for duplicated requests only (the coroutine path)
        self.answer_status: int | None = None


class FastHttpMixin:
    """Parsers of the fast path; mixed into `proxy.Connection` (which defines the attributes used here)."""

    # ------------------------------------------------------------------ requests (client -> upstream)
    def _fq_data(self, data: bytes) -> None:
        """`data_received` of the client socket while requests take the fast path."""
        if self.dead:
            return
        try:
            if self.q_buf:
                data = self.q_buf + data
                self.q_buf = b""
            n = len(data)
            pos = 0
            start = 0  # first byte not yet forwarded
            state = self.q_state
            proxy = self.proxy
            error = None
            mid_body = False
            out: list[bytes] | None = None  # spans before skipped bytes (blank lines between requests)
            while pos < n:
                if state == HEAD:
                    if proxy.http_toxics:
                        # an HTTP toxic exists: the coroutine path takes over at this head
                        self.q_state = state
                        self.q_buf = data[pos:]
                        self._fq_write(out, data[start:pos])
                        self._go_slow("upstream")
                        return
                    i = data.find(SEP, pos)
                    if i < 0:
                        if n - pos > MAX_LINE:
                            error = "message head too large"
                        break
                    if i - pos > MAX_LINE:
                        error = "message head too large"
                        break
                    if data[pos] == 13 and data.startswith(b"\r\n", pos):  # blank lines before a request: dropped
                        raw = data[pos : i + 4]
                        skip = len(raw) - len(raw.lstrip(b"\r\n"))
                        if pos > start:
                            out = out or []
                            out.append(data[start:pos])
                        pos += skip
                        start = pos
                        continue
                    try:
                        head = Head(data[pos : i + 4])
                        proxy.counters.requests += 1
                        kind, length = head.framing()
                    except HttpProtocolError as exc:
                        error = str(exc)
                        break
                    if kind == "close":
                        error = "request without usable framing"
                        break
                    first = head.first
                    meta = ReqMeta(first[0], first[1], first[2] if len(first) > 2 else "HTTP/1.0", NO_TOXICS)
                    self.queue.append(meta)
                    pos = i + 4
                    conn = head.headers.get("connection")
                    if conn is not None and "upgrade" in conn.lower():
                        self.q_upgrade = True
                        self.q_hold_meta = meta
                        upgrade = True
                    else:
                        upgrade = self.q_upgrade = False
                    if kind == "length":
                        if length:
                            state = LEN
                            self.q_left = length
                        elif upgrade:
                            state = HOLD
                    elif kind == "chunked":
                        state = CSIZE
                    elif upgrade:
                        state = HOLD
                    continue
                if state == LEN or state == CDATA:
                    left = self.q_left
                    if n - pos < left:
                        self.q_left = left - (n - pos)
                        pos = n
                        break
                    pos += left
                    self.q_left = 0
                    if state == CDATA:
                        state = CSIZE
                    else:
                        state = HOLD if self.q_upgrade else HEAD
                    continue
                if state == CSIZE or state == TRAILER:
                    i = data.find(b"\r\n", pos)
                    if i < 0:
                        if n - pos > MAX_LINE:
                            error, mid_body = "chunk framing line too long", True
                        break
                    if state == TRAILER:
                        if i == pos:
                            state = HOLD if self.q_upgrade else HEAD
                        pos = i + 2
                        continue
                    try:
                        size = ht.chunk_size(data[pos:i])
                    except HttpProtocolError as exc:
                        error, mid_body = str(exc), True
                        break
                    pos = i + 2
                    if size:
                        state = CDATA
                        self.q_left = size + 2
                    else:
                        state = TRAILER
                    continue
                if state == TUNNEL:
                    pos = n
                    break
                if state == HOLD:
                    break
                # DONE: the client's further bytes are not read as requests
                start = pos = n
                break
            self.q_state = state
            if pos < n and error is None and state != DONE:
                self.q_buf = data[pos:]
            if out or start < pos:
                self._fq_write(out, data[start:pos])
            if error is not None and not self.dead:
                proxy.event("client_protocol_error", error=error, peer=self.peer)
                if mid_body:
                    self.close("client protocol error in a body")
                else:
                    self._fq_finished()
        except Exception as exc:  # a bug here must not take the proxy down
            self.proxy.event("internal_error", error=repr(exc), peer=self.peer)
            self.abort()

    def _fq_write(self, out: list[bytes] | None, last: bytes) -> None:
        if out:
            out.append(last)
            last = b"".join(out)
        if last:
            n = len(last)
            self.proxy.counters.bytes_upstream += n
            up = self.up
            up.passed += n
            tr = self.u_transport
            if not tr.is_closing():
                tr.write(last)

    def _fq_finished(self) -> None:
        """No more requests from this client: answer what is due, then close."""
        self.q_state = DONE
        self.q_buf = b""
        self.client_done = True
        if not self.queue:
            self.close("client closed")

    def _fq_eof(self) -> None:
        if self.dead or self.q_eof:
            return
        self.q_eof = True
        state = self.q_state
        if state == HEAD:
            if self.q_buf.strip(b"\r\n"):
                self.proxy.event(
                    "client_protocol_error", error="connection closed in the middle of a message head", peer=self.peer
                )
            self._fq_finished()
        elif state in IN_BODY:
            self.proxy.event("client_protocol_error", error="connection closed in the middle of a body", peer=self.peer)
            self.close("client closed in the middle of a request")
        elif state == TUNNEL:
            self._tunnel_eof("upstream")
        elif state == DONE:
            self.client_done = True
        # HOLD: the answer to the Upgrade request decides (see _fq_release and _tunnel_start)

    def _fq_lost(self, exc: BaseException | None) -> None:
        self._fq_eof()

    def _fq_release(self) -> None:
        """The answer to an Upgrade request was not 101: read the held bytes as HTTP again."""
        if self.dead or not self.req_fast or self.q_state != HOLD:
            return
        self.q_state = HEAD
        self.q_upgrade = False
        data, self.q_buf = self.q_buf, b""
        eof, self.q_eof = self.q_eof, False
        if data:
            self._fq_data(data)
        if eof:
            self._fq_eof()

    # ------------------------------------------------------------------ responses (upstream -> client)
    def _fr_data(self, data: bytes) -> None:
        """`data_received` of the upstream socket while answers take the fast path."""
        if self.dead:
            return
        try:
            if self.r_buf:
                data = self.r_buf + data
                self.r_buf = b""
            n = len(data)
            pos = 0
            start = 0
            state = self.r_state
            error = None
            while pos < n:
                if state == HEAD:
                    i = data.find(SEP, pos)
                    if i < 0:
                        if n - pos > MAX_LINE:
                            error = "message head too large"
                        break
                    if i - pos > MAX_LINE:
                        error = "message head too large"
                        break
                    if data[pos] == 13 and data.startswith(b"\r\n", pos):
                        raw = data[pos : i + 4]
                        skip = len(raw) - len(raw.lstrip(b"\r\n"))
                        self._fr_write(data[start:pos])
                        pos += skip
                        start = pos
                        continue
                    queue = self.queue
                    meta = queue[0] if queue else None
                    if meta is not None and meta.toxics:
                        # a toxic acts on this answer: the coroutine path takes over at this head
                        self.r_state = state
                        self.r_buf = data[pos:]
                        self._fr_write(data[start:pos])
                        self._go_slow("downstream")
                        return
                    try:
                        head = Head(data[pos : i + 4])
                        status = head.status
                        if (meta is not None and meta.method == "HEAD") or 100 <= status < 200 or status in (204, 304):
                            kind, length = "none", 0
                        else:
                            kind, length = head.framing()
                            if kind == "none":
                                kind = "close"
                    except HttpProtocolError as exc:
                        error = str(exc)
                        break
                    self.r_ctx = (head, meta, kind, status)
                    pos = i + 4
                    if kind == "length" and length:
                        state = LEN
                        self.r_left = length
                    elif kind == "none" or kind == "length":
                        self._fr_write(data[start:pos])
                        start = pos
                        state = self._fr_done()
                        if self.dead:
                            return
                    elif kind == "chunked":
                        state = CSIZE
                    else:
                        state = CLOSE
                    continue
                if state == LEN or state == CDATA:
                    left = self.r_left
                    if n - pos < left:
                        self.r_left = left - (n - pos)
                        pos = n
                        break
                    pos += left
                    self.r_left = 0
                    if state == CDATA:
                        state = CSIZE
                        continue
                    self._fr_write(data[start:pos])
                    start = pos
                    state = self._fr_done()
                    if self.dead:
                        return
                    continue
                if state == CSIZE or state == TRAILER:
                    i = data.find(b"\r\n", pos)
                    if i < 0:
                        if n - pos > MAX_LINE:
                            error = "chunk framing line too long"
                        break
                    if state == TRAILER:
                        empty = i == pos
                        pos = i + 2
                        if empty:  # the end of the trailers: the answer is complete
                            self._fr_write(data[start:pos])
                            start = pos
                            state = self._fr_done()
                            if self.dead:
                                return
                        continue
                    try:
                        size = ht.chunk_size(data[pos:i])
                    except HttpProtocolError as exc:
                        error = str(exc)
                        break
                    pos = i + 2
                    if size:
                        state = CDATA
                        self.r_left = size + 2
                    else:
                        state = TRAILER
                    continue
                if state == CLOSE or state == TUNNEL:
                    pos = n
                    break
                start = pos = n  # DONE
                break
            self.r_state = state
            if pos < n and error is None and state != DONE:
                self.r_buf = data[pos:]
            if start < pos:
                self._fr_write(data[start:pos])
            if error is not None and not self.dead:
                self._fr_protocol_error(error, state)
        except Exception as exc:
            self.proxy.event("internal_error", error=repr(exc), peer=self.peer)
            self.abort()

    def _fr_write(self, chunk: bytes) -> None:
        if chunk:
            n = len(chunk)
            self.proxy.counters.bytes_downstream += n
            self.down.passed += n
            tr = self.c_transport
            if not tr.is_closing():
                tr.write(chunk)

    def _fr_protocol_error(self, error: str, state: int) -> None:
        proxy = self.proxy
        proxy.counters.upstream_errors += 1
        ctx = self.r_ctx
        meta = ctx[1] if ctx is not None and state in IN_BODY else None
        proxy.event("upstream_protocol_error", error=error, target=meta.target if meta is not None else None)
        self.close("upstream protocol error")

    def _fr_done(self) -> int:
        """A whole answer went to the client: the bookkeeping of the coroutine path, then the next state."""
        head, meta, kind, status = self.r_ctx
        self.r_ctx = None
        if 100 <= status < 200 and status != 101:
            return HEAD
        if meta is not None:
            self._passed_untouched(meta)
        if status == 101:
            self._tunnel_start_fast()
            return TUNNEL
        conn = head.headers.get("connection")
        if kind == "close" or (head.first[0] != "HTTP/1.1" if conn is None else not head.keep_alive(head.first[0])):
            self.close("response without keep-alive")
            return DONE
        if self.client_done and not self.queue:
            self.close("client closed")
            return DONE
        return HEAD

    def _fr_eof(self) -> None:
        if self.dead or self.r_eof:
            return
        self.r_eof = True
        state = self.r_state
        proxy = self.proxy
        if state == HEAD:
            if self.r_buf.strip(b"\r\n"):
                self._fr_protocol_error("connection closed in the middle of a message head", state)
                return
            if self.queue:
                proxy.counters.upstream_errors += 1
                proxy.event("upstream_closed_before_answer", target=self.queue[0].target)
            self.close("upstream closed")
        elif state == CLOSE:
            self._fr_done()
            self.close("response delimited by close")
        elif state in IN_BODY:
            self._fr_protocol_error("upstream closed in the middle of a body", state)
        elif state == TUNNEL:
            self._tunnel_eof("downstream")

    def _fr_lost(self, exc: BaseException | None) -> None:
        if self.dead:
            return
        if exc is not None:
            self.abort()
        else:
            self._fr_eof()

    # ------------------------------------------------------------------ tunnel (after 101)
    def _tunnel_start_fast(self) -> None:
        """Called by the fast response parser at a 101: both directions become raw relays."""
        self.r_state = TUNNEL
        self._tunnel_request_side()

    def _tunnel_request_side(self) -> None:
        if self.req_fast:
            self.q_state = TUNNEL
            held, self.q_buf = self.q_buf, b""
            if held:
                self._fq_write(None, held)
            if self.q_eof:
                self._tunnel_eof("upstream")
        else:
            task = self.req_task
            if task is not None and not task.done() and task is not asyncio.current_task():
                task.cancel()
            self.req_task = self._spawn(self._tunnel_pump("upstream"))

    def _tunnel_eof(self, stream: str) -> None:
        """One direction of the tunnel ended: pass the end on; when both did, the connection is over."""
        if stream in self.tunnel_ended:
            return
        self.tunnel_ended.add(stream)
        tr = self.u_transport if stream == "upstream" else self.c_transport
        try:
            if not tr.is_closing() and tr.can_write_eof():
                tr.write_eof()
        except (OSError, RuntimeError):
            pass
        if len(self.tunnel_ended) == 2:
            self.close("tunnel ended")

    # ------------------------------------------------------------------ flow control
    def _upstream_write_paused(self, paused: bool) -> None:
        """The upstream socket's write buffer passed its high (or low) water mark."""
        if self.req_fast:
            self._pause_reading("c", paused)

    def _client_write_paused(self, paused: bool) -> None:
        if self.resp_fast:
            self._pause_reading("u", paused)

    def _pause_reading(self, side: str, paused: bool) -> None:
        tr = self.c_transport if side == "c" else self.u_transport
        flag = "c_rpaused" if side == "c" else "u_rpaused"
        if paused == getattr(self, flag) or tr.is_closing():
            return
        setattr(self, flag, paused)
        if paused:
            tr.pause_reading()
        else:
            tr.resume_reading()

