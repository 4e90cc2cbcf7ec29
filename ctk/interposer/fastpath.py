"""The fast path of the interposer's HTTP mode: each direction of a connection that no toxic touches is parsed
and relayed synchronously, inside the transport's ``data_received`` callback, with no StreamReader, task or
await per request.

It does what the coroutine pumps of `connection.Connection` do when no toxic applies, byte for byte: every message
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
its pump waits for the next head. Both paths drive the same `h1.Parser` per direction (its state a value:
phase, bytes left); `connection.Connection` owns them, this mixin is the synchronous driver.
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import TYPE_CHECKING, Any, Coroutine

from ctk.interposer import h1
from ctk.interposer import http_toxics as ht
from ctk.interposer.link import Link
from ctk.interposer.parts import ProxyView, ReqMeta, SocketTransport
from ctk.interposer.h1 import CLOSE, DONE, END_DUE, EV_END, EV_ERROR, EV_HEAD, EV_SKIP, HEAD, HOLD, IN_BODY, NEED_DATA, TUNNEL

Head = ht.Head
HttpProtocolError = ht.HttpProtocolError
NO_TOXICS: list[Any] = []


class FastHttpMixin:
    """The fast path's driver of the parsers; mixed into `connection.Connection` (which defines the
    attributes used here)."""

    # what the connection defines (connection.Connection.__init__), as the fast path uses it
    proxy: ProxyView
    dead: bool
    peer: str
    queue: collections.deque[ReqMeta]
    q_parser: h1.Parser
    q_eof: bool
    q_hold_meta: ReqMeta | None
    r_parser: h1.Parser
    r_eof: bool
    r_ctx: tuple[ht.Head, ReqMeta | None, str, int] | None
    c_transport: SocketTransport
    u_transport: SocketTransport | None       # None until the upstream connection exists (so are up and down)
    up: Link | None
    down: Link | None
    req_fast: bool
    resp_fast: bool
    req_task: asyncio.Task | None
    resp_task: asyncio.Task | None
    c_rpaused: bool
    u_rpaused: bool
    tunnel_ended: set[str]

    if TYPE_CHECKING:   # the connection's methods the fast path calls
        def close(self, reason: str = "") -> None: ...
        def abort(self) -> None: ...
        def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task: ...
        def _go_slow(self, stream: str) -> None: ...
        def _passed_untouched(self, meta: ReqMeta, status: int) -> None: ...
        async def _tunnel_pump(self, stream: str) -> None: ...

    # ------------------------------------------------------------------ requests (client -> upstream)
    def _fq_data(self, data: bytes) -> None:
        """`data_received` of the client socket while requests take the fast path: the request parser's
        events, every span it passes forwarded in one write."""
        if self.dead:
            return
        try:
            p = self.q_parser
            p.add(data)
            data = p.data
            start = p.pos  # first byte not yet forwarded
            st = p.state
            proxy = self.proxy
            error = None
            out: list[bytes] | None = None  # spans before skipped bytes (blank lines between requests)
            n = len(data)
            while True:
                if p.pos >= n and st.phase != END_DUE:
                    break  # nothing left to parse (spares a call that would say so)
                if st.phase == HEAD and proxy.http_toxics:
                    # an HTTP toxic exists: the coroutine path takes over at this head
                    self._fq_write(out, data[start:p.pos])
                    self._go_slow("upstream")
                    return
                kind = p.next()
                if kind == NEED_DATA:
                    break
                if kind == EV_HEAD:
                    proxy.counters.requests += 1
                    head = p.head
                    assert head is not None  # EV_HEAD: the parser holds the head it parsed
                    first = head.first
                    meta = ReqMeta(first[0], first[1], first[2] if len(first) > 2 else "HTTP/1.0", NO_TOXICS)
                    self.queue.append(meta)
                    if proxy.taps:
                        meta.began = time.monotonic()
                    if st.upgrade:
                        self.q_hold_meta = meta
                elif kind == EV_SKIP:
                    if p.start > start:
                        out = out or []
                        out.append(data[start:p.start])
                    start = p.stop
                elif kind == EV_ERROR:
                    if p.head is not None:
                        proxy.counters.requests += 1
                    error = p.error
                    break
            pos = p.pos
            if out or start < pos:
                self._fq_write(out, data[start:pos])
            if error is not None and not self.dead:
                proxy.event("client_protocol_error", error=error, peer=self.peer)
                if p.in_body:
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
            up, tr = self.up, self.u_transport
            assert up is not None and tr is not None  # the fast path runs once the upstream is connected
            up.passed += n
            if not tr.is_closing():
                tr.write(last)

    def _fq_finished(self) -> None:
        """No more requests from this client: answer what is due, then close."""
        self.q_parser.finish()
        self.client_done = True
        if not self.queue:
            self.close("client closed")

    def _fq_eof(self) -> None:
        if self.dead or self.q_eof:
            return
        self.q_eof = True
        p = self.q_parser
        phase = p.state.phase
        if phase == HEAD:
            if p.at_eof() is not None:
                self.proxy.event("client_protocol_error", error=p.at_eof(), peer=self.peer)
            self._fq_finished()
        elif phase in IN_BODY:
            self.proxy.event("client_protocol_error", error=p.at_eof(), peer=self.peer)
            self.close("client closed in the middle of a request")
        elif phase == TUNNEL:
            self._tunnel_eof("upstream")
        elif phase == DONE:
            self.client_done = True
        # HOLD: the answer to the Upgrade request decides (see _fq_release and _tunnel_start)

    def _fq_lost(self, exc: BaseException | None) -> None:
        self._fq_eof()

    def _fq_release(self) -> None:
        """The answer to an Upgrade request was not 101: read the held bytes as HTTP again."""
        p = self.q_parser
        if self.dead or not self.req_fast or p.state.phase != HOLD:
            return
        p.release()
        eof, self.q_eof = self.q_eof, False
        if p.pending():
            self._fq_data(b"")
        if eof:
            self._fq_eof()

    # ------------------------------------------------------------------ responses (upstream -> client)
    def _fr_data(self, data: bytes) -> None:
        """`data_received` of the upstream socket while answers take the fast path."""
        if self.dead:
            return
        try:
            p = self.r_parser
            p.add(data)
            data = p.data
            start = p.pos
            st = p.state
            n = len(data)
            while True:
                if p.pos >= n and st.phase != END_DUE:
                    break
                if st.phase == HEAD:
                    queue = self.queue
                    meta = queue[0] if queue else None
                    if meta is not None and meta.toxics:
                        # a toxic acts on this answer: the coroutine path takes over at this head
                        self._fr_write(data[start:p.pos])
                        self._go_slow("downstream")
                        return
                    kind = p.next(meta.method if meta is not None else None)
                    if kind == EV_HEAD:
                        head = p.head
                        assert head is not None  # EV_HEAD: the parser holds the head it parsed
                        self.r_ctx = (head, meta, p.kind, p.status)
                        continue
                else:
                    kind = p.next()
                if kind == NEED_DATA:
                    break
                if kind == EV_END:
                    self._fr_write(data[start:p.stop])
                    start = p.stop
                    self._fr_done()
                    if self.dead:
                        return
                elif kind == EV_SKIP:
                    self._fr_write(data[start:p.start])
                    start = p.stop
                elif kind == EV_ERROR:
                    if start < p.pos:
                        self._fr_write(data[start:p.pos])
                    if not self.dead:
                        self._fr_protocol_error(p.error, p.in_body)
                    return
            if start < p.pos:
                self._fr_write(data[start:p.pos])
        except Exception as exc:
            self.proxy.event("internal_error", error=repr(exc), peer=self.peer)
            self.abort()

    def _fr_write(self, chunk: bytes) -> None:
        if chunk:
            n = len(chunk)
            self.proxy.counters.bytes_downstream += n
            down = self.down
            assert down is not None  # the fast path runs once the upstream is connected
            down.passed += n
            tr = self.c_transport
            if not tr.is_closing():
                tr.write(chunk)

    def _fr_protocol_error(self, error: str | None, in_body: bool) -> None:
        proxy = self.proxy
        proxy.counters.upstream_errors += 1
        ctx = self.r_ctx
        meta = ctx[1] if ctx is not None and in_body else None
        proxy.event("upstream_protocol_error", error=error, target=meta.target if meta is not None else None)
        self.close("upstream protocol error")

    def _fr_done(self) -> None:
        """A whole answer went to the client: the bookkeeping of the coroutine path; the connection closes,
        becomes a tunnel or waits for the next answer."""
        ctx = self.r_ctx
        assert ctx is not None  # set at the answer's head (a direction comes to the fast path at a head)
        head, meta, kind, status = ctx
        self.r_ctx = None
        if 100 <= status < 200 and status != 101:
            return
        if meta is not None:
            self._passed_untouched(meta, status)
        if status == 101:
            self._tunnel_start_fast()
            return
        conn = head.headers.get("connection")
        if kind == "close" or (head.first[0] != "HTTP/1.1" if conn is None else not head.keep_alive(head.first[0])):
            self.r_parser.finish()
            self.close("response without keep-alive")
            return
        if self.client_done and not self.queue:
            self.r_parser.finish()
            self.close("client closed")

    def _fr_eof(self) -> None:
        if self.dead or self.r_eof:
            return
        self.r_eof = True
        p = self.r_parser
        phase = p.state.phase
        proxy = self.proxy
        if phase == HEAD:
            cut = p.at_eof()
            if cut is not None:
                self._fr_protocol_error(cut, False)
                return
            if self.queue:
                proxy.counters.upstream_errors += 1
                proxy.event("upstream_closed_before_answer", target=self.queue[0].target)
            self.close("upstream closed")
        elif phase == CLOSE:
            p.close_body_end()
            self._fr_done()
            self.close("response delimited by close")
        elif phase in IN_BODY:
            self._fr_protocol_error("upstream closed in the middle of a body", True)
        elif phase == TUNNEL:
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
        self.r_parser.tunnel()
        self._tunnel_request_side()

    def _tunnel_request_side(self) -> None:
        if self.req_fast:
            self.q_parser.tunnel()
            held = self.q_parser.take_pending()
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
        assert tr is not None  # a tunnel follows a 101 from the connected upstream
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
        assert tr is not None  # flow control of HTTP mode, which begins once the upstream is connected
        flag = "c_rpaused" if side == "c" else "u_rpaused"
        if paused == getattr(self, flag) or tr.is_closing():
            return
        setattr(self, flag, paused)
        if paused:
            tr.pause_reading()
        else:
            tr.resume_reading()

