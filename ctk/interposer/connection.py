"""One client connection of the interposer, and the HTTP connection it becomes.

A connection is sniffed: if the client speaks first and its first bytes are an HTTP/1.x request line, the
connection runs in HTTP mode; otherwise (server speaks first, or another protocol such as PostgreSQL's) it
is a plain TCP relay. TCP toxics act in both modes on the bytes of each direction (link.py). In HTTP mode
each direction has one parser (h1.py) for its lifetime, driven by the fast path (fastpath.py) while no
toxic touches that direction, and by a coroutine pump (request pump, response pump) otherwise; the HTTP
toxics act on the pumps' messages, per request, keep-alive included.

Everything here runs on one event loop; `runtime.Runtime` owns that loop's thread.
"""

from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass
from typing import Any

from ctk.interposer import duplicates
from ctk.interposer import fastpath as fp
from ctk.interposer import h1
from ctk.interposer import http_toxics as ht
from ctk.interposer.h1_reader import MessageReader
from ctk.interposer.link import (READ_SIZE, Link, Side, _give_buffer, _rst, _take_buffer, _unread,
                                 _unsent_bytes)
from ctk.interposer.parts import ProxyView, SocketTransport
from ctk.interposer.toxics import INERT_TOXICS, Toxic

from ctk.interposer.duplicates import CONNECT_TIMEOUT

ReqMeta = fp.ReqMeta
TO_FAST = object()  # a pump handed its direction to the fast path


class Connection(fp.FastHttpMixin):
    def __init__(self, proxy: ProxyView, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.proxy = proxy
        self.c_reader = reader
        self.c_writer = writer
        transport = writer.transport
        if not isinstance(transport, SocketTransport):   # a stream server's transports read and write
            raise TypeError(f"the client's transport {type(transport).__name__} cannot pause reading")
        self.c_transport: SocketTransport = transport
        proto = transport.get_protocol()
        self.c_proto: Side | None = proto if isinstance(proto, Side) else None
        self.u_reader: asyncio.StreamReader | None = None
        self.u_writer: asyncio.StreamWriter | None = None
        self.u_transport: SocketTransport | None = None
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
        assert self.u_reader is not None  # run() sniffs once the upstream is connected
        c_task = asyncio.ensure_future(self.c_reader.read(READ_SIZE))
        u_task = asyncio.ensure_future(self.u_reader.read(READ_SIZE))
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
        assert self.up is not None and self.down is not None  # run() made them, with the upstream connection
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
        assert self.u_proto is not None  # HTTP mode begins once the upstream is connected
        self.u_proto.on_pause = self._upstream_write_paused
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
        reader: asyncio.StreamReader | None
        transport: SocketTransport | None
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
        assert reader is not None and transport is not None and proto is not None
        data, eof = _take_buffer(reader, transport)
        if prefix:
            data = prefix + data
        proto.route_fast(*on)
        # _paused: asyncio's FlowControlMixin's write-side pause flag, which typeshed does not declare
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
        reader: asyncio.StreamReader | None
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
            cm = t._compiled
            if cm is None or t._compiled_gen != t.generation:
                cm = ht.CompiledMatch(t.attributes)
                t._compiled = cm
                t._compiled_gen = t.generation
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

    async def _idle_head(self, stream: str, msgs: MessageReader) -> Any:
        """A pump at a message boundary: the direction goes to the fast path when no toxic touches it (returns
        TO_FAST); else the next head (None: the peer closed before one), the pump marked idle meanwhile so
        that `_maybe_fast` may take the direction to the fast path while it waits."""
        if self._fast_ok(stream):
            self._to_fast(stream)
            return TO_FAST
        upstream = stream == "upstream"
        if upstream:
            self.req_idle = True
        else:
            self.resp_idle = True
        try:
            return await msgs.head(None if upstream else self._next_method)
        finally:
            if upstream:
                self.req_idle = False
            else:
                self.resp_idle = False

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
                try:
                    head = await self._idle_head("upstream", msgs)
                except ht.HttpProtocolError as exc:
                    if msgs.parser.head is not None:  # a head whose framing is unusable still counts
                        proxy.counters.requests += 1
                    proxy.event("client_protocol_error", error=str(exc), peer=self.peer)
                    break
                if head is TO_FAST:
                    return
                if head is None:
                    break
                proxy.counters.requests += 1
                toxics = self._match(head) if proxy.http_toxics else []
                meta = ReqMeta(head.method, head.target, head.request_version, toxics)
                kind, length = msgs.parser.kind, msgs.parser.length
                dup = None
                for t in toxics:
                    if t.type == "delay_request" and t.attributes["delay_ms"] and not _gathered(t):
                        proxy.counters.injected["delay_request"] += 1
                        proxy.event("delay_request", toxic=t.name, method=head.method, target=head.target)
                        await _hold_request(t)
                    elif t.type == "duplicate_request" and dup is None:
                        dup = t
                        meta.primary_done = asyncio.Event()
                self.queue.append(meta)
                if proxy.taps:
                    meta.began = time.monotonic()
                expect = "100-continue" in head.tokens("expect")
                if dup is not None and dup.attributes.get("parallel") and not expect:
                    try:
                        assert self.up is not None
                        await duplicates.burst_out(self.proxy, self.up, dup, meta, head, msgs)
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
                for t in toxics:   # delay_request rules (count_matching too) note when the catalog got it whole
                    if t.type == "delay_request":
                        proxy.event("request_forwarded", toxic=t.name, method=head.method, target=head.target)
                if dup is not None:
                    task = asyncio.ensure_future(duplicates.send_copies(self.proxy, dup, meta, raw))
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
                try:
                    head = await self._idle_head("downstream", msgs)
                except ht.HttpProtocolError as exc:
                    proxy.counters.upstream_errors += 1
                    proxy.event("upstream_protocol_error", error=str(exc), peer=self.peer)
                    self.close("upstream protocol error")
                    return
                if head is TO_FAST:
                    return
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

    def _injected(self, t: Toxic, meta: ReqMeta, status: int, body: str | None, **extra: Any) -> None:
        """A toxic took or changed an answer: counted, and an event (named after the toxic's type) that keeps
        what the client did not get."""
        self.proxy.counters.injected[t.type] += 1
        self.proxy.event(t.type, toxic=t.name, method=meta.method, target=meta.target, status=status, **extra,
                         body=body)

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
                self._injected(t, meta, status, body)
                await asyncio.sleep(t.attributes["delay_ms"] / 1000.0)
        for t in toxics:
            if t.type == "drop_response":
                self._injected(t, meta, status, body)
                await down.flush()
                self.close("drop_response")
                return True
            if t.type == "replace_status":
                new = t.attributes["status"]
                self._injected(t, meta, status, body, sent=new)
                await down.send(ht.error_response(new, keep))
                return False
            if t.type == "reset_after_bytes":
                n = t.attributes["bytes"]
                self._injected(t, meta, status, body, bytes=n)
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
        link = self.up if stream == "upstream" else self.down
        assert link is not None  # a tunnel follows a 101 from the connected upstream
        if stream == "upstream":
            await self._pump(self.c_reader, link, self.q_parser.take_pending(), None)
        else:
            await self._pump(self.u_reader, link, self.r_parser.take_pending(), None)
        self._tunnel_eof(stream)


@dataclass
class _Gather:
    """A `delay_request` toxic with ``gather``: requests held so far; set once they go."""
    released: asyncio.Event
    held: int = 0


def _gathered(t: Toxic) -> bool:
    """A gathering `delay_request` whose held requests already went: later ones pass at once."""
    g = t._gathered
    return bool(t.attributes.get("gather")) and g is not None and g.released.is_set()


async def _hold_request(t: Toxic) -> None:
    """Hold a request for a `delay_request` toxic: ``delay_ms``; with ``gather`` n, until n requests are held
    (all then go together), ``delay_ms`` at the longest (then the held ones go and the gathering ends)."""
    seconds = t.attributes["delay_ms"] / 1000.0
    n = int(t.attributes.get("gather") or 0)
    if n <= 0:
        await asyncio.sleep(seconds)
        return
    if t._gathered is None:
        t._gathered = _Gather(asyncio.Event())
    g: _Gather = t._gathered
    g.held += 1
    if g.held >= n:
        g.released.set()
        return
    try:
        await asyncio.wait_for(g.released.wait(), seconds)
    except asyncio.TimeoutError:
        g.released.set()
