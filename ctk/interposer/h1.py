"""One sans-IO HTTP/1.1 message parser for the interposer: bytes in, events out, no socket and no await.

One `Parser` per direction of a connection (`REQUEST`: client to upstream; `RESPONSE`: upstream to client).
Bytes go in with `feed(data)`; `next()` hands out one event at a time, and its position in the fed bytes:

- ``HEAD``    a message head is complete: ``parser.head`` (an `http_toxics.Head`), its framing in
              ``parser.kind`` / ``parser.length``; its bytes are ``[start, stop)``.
- ``BODY``    body bytes (raw framing included: chunk-size lines, chunk CRLFs) ``[start, stop)``.
- ``END``     the message is complete; ``[start, stop)`` are its last framing bytes (may be empty).
- ``SKIP``    blank lines between messages ``[start, stop)``: not forwarded.
- ``TUNNEL``  raw bytes after an upgrade (``[start, stop)``), or of a response delimited by the close.
- ``ERROR``   a protocol error: ``parser.error`` says which, ``parser.in_body`` whether it struck in a body;
              ``parser.head`` is the head when it parsed but its framing is unusable, else None. The
              direction is then DONE: further bytes come out as SKIP.
- ``NEED_DATA`` nothing more can be said until more bytes arrive (or, in ``HOLD``, until the answer to an
              Upgrade request decides: `release()` or `tunnel()`).

Positions refer to ``parser.data`` (the bytes not yet consumed plus those fed last): a driver can forward
every span between two events with one slice, and with no copy when a single ``feed`` holds whole messages
(the fast path), or collect the spans per event (the coroutine path, a recorder tap). The parser's whole
state is a small value (`State`: phase, bytes left, upgrade pending); a direction handed from one driver to
the other keeps its parser, so a message may begin on one path and end on the other.

A response's framing depends on the request it answers: `next(method)` takes that request's method when the
parser stands at a head (HEAD requests, 1xx, 204 and 304 have no body; no framing header: read until close).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctk.interposer.http_toxics import MAX_HEAD, Head, HttpProtocolError, chunk_size

# phases
HEAD = 0  # waiting for a message head (a partial head is held)
LEN = 1  # in a Content-Length body, `left` bytes to go
CSIZE = 2  # at a chunk-size line (a partial line is held)
CDATA = 3  # in a chunk, `left` bytes to go (the chunk's CRLF included)
TRAILER = 4  # in the trailer lines after the last chunk
HOLD = 5  # requests only: an Upgrade request went out; the next bytes wait for its answer
CLOSE = 6  # responses only: a body delimited by the end of the connection
TUNNEL = 7  # after 101: raw bytes
DONE = 8  # this direction is finished (the peer closed, or a protocol error)
END_DUE = 9  # a message without a body: its head was handed out, its END comes next
IN_BODY = (LEN, CSIZE, CDATA, TRAILER)
PHASE_NAMES = ("head", "length-body", "chunk-size", "chunk-data", "trailer", "hold", "close-body", "tunnel", "done", "end-due")

# events
NEED_DATA = 0
EV_HEAD = 1
EV_BODY = 2
EV_END = 3
EV_SKIP = 4
EV_TUNNEL = 5
EV_ERROR = 6
EVENT_NAMES = ("need-data", "head", "body", "end", "skip", "tunnel", "error")

REQUEST = "request"
RESPONSE = "response"
SEP = b"\r\n\r\n"
MAX_LINE = MAX_HEAD


@dataclass(slots=True)
class State:
    """Where a parser stands: all a driver needs to carry a direction from one path to the other."""

    phase: int = HEAD
    left: int = 0  # LEN / CDATA: bytes still to come
    upgrade: bool = False  # requests: the message in flight asked for an upgrade (HOLD after it)


@dataclass(frozen=True, slots=True)
class Event:
    """An event as a value (what `Parser.feed` returns; `Parser.next` is the allocation-free form)."""

    kind: int
    raw: bytes = b""
    head: Head | None = None
    error: str | None = None

    @property
    def name(self) -> str:
        return EVENT_NAMES[self.kind]


class Parser:
    __slots__ = ("role", "state", "data", "pos", "head", "status", "kind", "length", "start", "stop", "error",
                 "in_body")

    def __init__(self, role: str, state: State | None = None):
        if role not in (REQUEST, RESPONSE):
            raise ValueError(f"role must be {REQUEST!r} or {RESPONSE!r}, got {role!r}")
        self.role = role
        self.state = state if state is not None else State()
        self.data = b""
        self.pos = 0
        self.head: Head | None = None
        self.status = 0  # responses: the status of `head`
        self.kind = "none"
        self.length = 0
        self.start = self.stop = 0
        self.error: str | None = None
        self.in_body = False

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes) -> list[Event]:
        """Add bytes and return every event they complete (the convenient form, for taps and tests)."""
        self.add(data)
        return self.events()

    def add(self, data: bytes) -> None:
        """Add bytes without parsing; `next()` then walks through them."""
        pos = self.pos
        if pos < len(self.data):
            self.data = (self.data[pos:] + data) if data else self.data[pos:]
        else:
            self.data = data
        self.pos = 0

    def events(self, method: str | None = None) -> list[Event]:
        out: list[Event] = []
        while True:
            kind = self.next(method)
            if kind == NEED_DATA:
                return out
            if kind == EV_ERROR:
                out.append(Event(kind, error=self.error))
                return out
            out.append(Event(kind, self.data[self.start:self.stop], self.head if kind == EV_HEAD else None))

    def pending(self) -> bytes:
        """The bytes fed but not consumed (a partial head or line, or bytes held while in HOLD)."""
        return self.data[self.pos:]

    def take_pending(self) -> bytes:
        data = self.data[self.pos:]
        self.data = b""
        self.pos = 0
        return data

    # ------------------------------------------------------------------ decisions from outside
    def release(self) -> None:
        """The answer to the Upgrade request was not 101: read the held bytes as HTTP again."""
        if self.state.phase == HOLD:
            self.state.phase = HEAD
        self.state.upgrade = False

    def tunnel(self) -> None:
        """101 Switching Protocols: from now on, raw bytes."""
        self.state.phase = TUNNEL

    def finish(self) -> None:
        self.state.phase = DONE
        self.data = b""
        self.pos = 0

    def at_eof(self) -> str | None:
        """The peer closed: None when that ends this direction cleanly, else what was cut short."""
        phase = self.state.phase
        if phase == HEAD:
            return "connection closed in the middle of a message head" if self.pending().strip(b"\r\n") else None
        if phase in IN_BODY:
            return "connection closed in the middle of a body"
        return None

    # ------------------------------------------------------------------ parsing
    def next(self, method: str | None = None) -> int:
        """The next event's kind (see the module doc); positions in ``start`` / ``stop``. `method`: for a
        response parser at a head, the method of the request it answers."""
        st = self.state
        phase = st.phase
        data = self.data
        pos = self.pos
        n = len(data)
        if phase == HEAD:
            if pos >= n:
                return NEED_DATA
            i = data.find(SEP, pos)
            if i < 0:
                if n - pos > MAX_LINE:
                    return self._fail("message head too large", False)
                return NEED_DATA
            if i - pos > MAX_LINE:
                return self._fail("message head too large", False)
            if data[pos] == 13 and data.startswith(b"\r\n", pos):  # blank lines before a message: skipped
                raw = data[pos:i + 4]
                self.start = pos
                self.pos = self.stop = pos + len(raw) - len(raw.lstrip(b"\r\n"))
                return EV_SKIP
            head = None
            try:
                head = Head(data[pos:i + 4])
                if self.role == REQUEST:
                    kind, length = head.framing()
                    if kind == "close":
                        raise HttpProtocolError("request without usable framing")
                    conn = head.headers.get("connection")
                    st.upgrade = conn is not None and "upgrade" in conn.lower()
                else:
                    self.status = status = head.status
                    if method == "HEAD" or 100 <= status < 200 or status in (204, 304):
                        kind, length = "none", 0
                    else:
                        kind, length = head.framing()
                        if kind == "none":
                            kind = "close"
            except HttpProtocolError as exc:
                return self._fail(str(exc), False, head)
            self.head = head
            self.kind = kind
            self.length = length
            self.start = pos
            self.pos = self.stop = i + 4
            if kind == "length":
                if length:
                    st.phase = LEN
                    st.left = length
                else:
                    st.phase = END_DUE
            elif kind == "chunked":
                st.phase = CSIZE
            elif kind == "close":
                st.phase = CLOSE
            else:
                st.phase = END_DUE
            return EV_HEAD
        if phase == END_DUE:  # a message without a body: its end, with no bytes
            self.start = self.stop = pos
            return self._end()
        if phase == LEN or phase == CDATA:
            if pos >= n:
                return NEED_DATA
            left = st.left
            self.start = pos
            if n - pos < left:
                st.left = left - (n - pos)
                self.pos = self.stop = n
                return EV_BODY
            self.pos = self.stop = pos + left
            st.left = 0
            if phase == CDATA:
                st.phase = CSIZE
                return EV_BODY
            return self._end()
        if phase == CSIZE or phase == TRAILER:
            i = data.find(b"\r\n", pos)
            if i < 0:
                if n - pos > MAX_LINE:
                    return self._fail("chunk framing line too long", True)
                return NEED_DATA
            self.start = pos
            self.pos = self.stop = i + 2
            if phase == TRAILER:
                if i == pos:
                    return self._end()
                return EV_BODY
            try:
                size = chunk_size(data[pos:i])
            except HttpProtocolError as exc:
                self.pos = pos
                return self._fail(str(exc), True)
            if size:
                st.phase = CDATA
                st.left = size + 2
            else:
                st.phase = TRAILER
            return EV_BODY
        if phase == CLOSE or phase == TUNNEL:
            if pos >= n:
                return NEED_DATA
            self.start = pos
            self.pos = self.stop = n
            return EV_TUNNEL if phase == TUNNEL else EV_BODY
        if phase == DONE:  # further bytes are not read as messages: dropped
            if pos >= n:
                return NEED_DATA
            self.start = pos
            self.pos = self.stop = n
            return EV_SKIP
        return NEED_DATA  # HOLD: bytes wait for the answer to the Upgrade request

    def _end(self) -> int:
        st = self.state
        st.phase = HOLD if st.upgrade else HEAD
        return EV_END

    def _fail(self, error: str, in_body: bool, head: Head | None = None) -> int:
        self.error = error
        self.head = head
        self.in_body = in_body
        self.state.phase = DONE
        return EV_ERROR

    def close_body_end(self) -> bool:
        """The peer closed during a body delimited by the close: that body is complete (True)."""
        if self.state.phase == CLOSE:
            self.state.phase = DONE
            return True
        return False
