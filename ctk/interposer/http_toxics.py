"""HTTP-aware toxics, and the pieces of HTTP/1.1 the parser (h1.py) and the toxics share (heads, chunk sizes).

HTTP toxic types (extra types in the Toxiproxy API; ``stream`` is ignored for them):

- ``drop_response``      forward the request, read the whole upstream answer, then close the client
                         connection without sending a byte (the server committed, the client never hears).
- ``replace_status``     forward the request, read the whole answer, answer ``status`` (default 503; 500,
                         502, 504 ...) with an Iceberg ErrorModel JSON body instead.
- ``delay_request``      hold the request ``delay_ms`` before forwarding it. With ``gather`` n > 0: hold the
                         matched requests until n of them are held, then forward them together; the ones
                         after pass at once (``delay_ms`` is the longest hold, which also ends the gathering).
- ``delay_response``     read the whole answer, hold it ``delay_ms``, then send it.
- ``reset_after_bytes``  send the first ``bytes`` bytes of the answer, then reset the client connection
                         (SO_LINGER 0: a TCP RST).
- ``duplicate_request``  send the request twice upstream (the copy on a separate connection, after the
                         first answer arrived, or at the same time with ``parallel``: true); the client gets
                         the first answer, the copy's answer is not delivered (its status is counted).
                         ``copies`` (1-8, default 1): how many copies. With ``parallel`` the request is read
                         whole and the copies' connections are opened first, then the original and every
                         copy are written upstream but their last byte, and every last byte in the same
                         turn of the event loop (a burst released together). Each burst ends with one ``duplicate_burst`` event: for the original and
                         every copy when it was forwarded and when its answer began (first bytes of the head,
                         ms from the first forward), its status and (copies) its body, and ``overlapped``:
                         whether a later request reached the server before an earlier one's answer began.
                         ``hold_copy`` (not parallel): the copies wait, after the first answer, until the toxic
                         is removed (at most 30 s), so a client can change state before the network's copy
                         arrives.
- ``record_response``    change nothing; record the matched answer (status and body, bounded) as an event, so
                         that an answer the client never got (a slow link past its timeout) is still known.

Toxics that take the answer away from the client (``drop_response``, ``replace_status``, ``reset_after_bytes``,
``delay_response``) record what they took in their event the same way (``status``, ``body``).

Attributes common to all: ``method`` (exact, case-insensitive), ``path`` (regular expression searched in
the request target, query included), ``header`` (name that must be present), ``header_value`` (exact value
of that header), ``times`` (apply to the first N matching requests; 0 = every one) and the toxic's
``toxicity`` (probability per matching request).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ctk.interposer.toxic_errors import ToxicError

HTTP_TOXICS: dict[str, dict[str, Any]] = {
    "drop_response": {},
    "replace_status": {"status": 503},
    "delay_request": {"delay_ms": 0, "gather": 0},
    "delay_response": {"delay_ms": 0},
    "reset_after_bytes": {"bytes": 0},
    "duplicate_request": {"parallel": False, "copies": 1, "hold_copy": False},
    "record_response": {},
}
MAX_COPIES = 8
#: bytes of an answer body kept in an event
BODY_KEEP = 64 << 10
MATCH_ATTRIBUTES = {"method": None, "path": None, "header": None, "header_value": None, "times": 0}

#: toxics acting on the answer (the response pump buffers the answer for these)
RESPONSE_SIDE = frozenset({"drop_response", "replace_status", "delay_response", "reset_after_bytes",
                           "record_response"})

STATUS_TEXT = {
    500: ("Internal Server Error", "ServerErrorException"),
    502: ("Bad Gateway", "BadGatewayException"),
    503: ("Service Unavailable", "ServiceUnavailableException"),
    504: ("Gateway Timeout", "GatewayTimeoutException"),
}


@dataclass(frozen=True)
class HttpMatch:
    """Which requests an HTTP toxic applies to. Empty fields match everything."""

    method: str | None = None
    path: str | None = None
    header: str | None = None
    header_value: str | None = None

    def to_attributes(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class CompiledMatch:
    __slots__ = ("method", "path", "header", "header_value")

    def __init__(self, attrs: dict[str, Any]):
        m = attrs.get("method")
        self.method = m.upper() if m else None
        p = attrs.get("path")
        self.path = re.compile(p) if p else None
        h = attrs.get("header")
        self.header = h.lower() if h else None
        self.header_value = attrs.get("header_value")

    def matches(self, method: str, target: str, headers: dict[str, str]) -> bool:
        if self.method is not None and method != self.method:
            return False
        if self.path is not None and not self.path.search(target):
            return False
        if self.header is not None:
            value = headers.get(self.header)
            if value is None:
                return False
            if self.header_value is not None and value != self.header_value:
                return False
        return True


def validate_http_attributes(typ: str, attrs: dict[str, Any]) -> dict[str, Any]:
    own = HTTP_TOXICS[typ]
    out: dict[str, Any] = {**MATCH_ATTRIBUTES, **own}
    for key, value in attrs.items():
        if key not in own and key not in MATCH_ATTRIBUTES:
            known = ", ".join(list(own) + list(MATCH_ATTRIBUTES))
            raise ToxicError(f"unknown attribute {key!r} for toxic type {typ!r} (known: {known})")
        out[key] = value
    for key in ("method", "path", "header", "header_value"):
        if out[key] is not None and not isinstance(out[key], str):
            raise ToxicError(f"attribute {key!r} must be a string or null")
        if out[key] == "":
            out[key] = None
    if out["path"] is not None:
        try:
            re.compile(out["path"])
        except re.error as exc:
            raise ToxicError(f"attribute 'path' is not a valid regular expression: {exc}") from None
    if out["header_value"] is not None and out["header"] is None:
        raise ToxicError("attribute 'header_value' needs 'header'")
    for key in ("times", "delay_ms", "bytes", "status", "copies", "gather"):
        if key in out:
            v = out[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise ToxicError(f"attribute {key!r} must be a non-negative number, got {v!r}")
            out[key] = int(v)
    if "status" in out and not (100 <= out["status"] <= 599):
        raise ToxicError(f"attribute 'status' must be an HTTP status code, got {out['status']!r}")
    if "copies" in out and not (1 <= out["copies"] <= MAX_COPIES):
        raise ToxicError(f"attribute 'copies' must be between 1 and {MAX_COPIES}, got {out['copies']!r}")
    if "parallel" in out and not isinstance(out["parallel"], bool):
        raise ToxicError("attribute 'parallel' must be true or false")
    if "hold_copy" in out and not isinstance(out["hold_copy"], bool):
        raise ToxicError("attribute 'hold_copy' must be true or false")
    return out


def body_text(data: bytes, chunked: bool = False) -> str:
    """An answer body as text for an event: de-chunked when ``chunked``, at most BODY_KEEP bytes."""
    if chunked:
        data = dechunk(data)
    return data[:BODY_KEEP].decode("utf-8", "replace")


def dechunk(data: bytes) -> bytes:
    """The payload of a complete chunked body (raw framing bytes); what can be parsed when it is cut short."""
    out, pos = [], 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            break
        try:
            size = chunk_size(data[pos:end])
        except HttpProtocolError:
            break
        if size == 0:
            break
        out.append(data[end + 2:end + 2 + size])
        pos = end + 2 + size + 2
    return b"".join(out)


def overlap(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether requests with the same key overlapped at the server, from the interposer's clock: a request
    reached the server (``sent``) before an earlier one's answer began (``answered``; None: it never began).
    Returns ``{"overlapped": bool, "pair": [earlier, later] (indexes into `requests`) or None, "lead_ms": how
    long before the earlier answer began the later one was forwarded}``."""
    order = sorted((i for i, r in enumerate(requests) if r.get("sent") is not None), key=lambda i: requests[i]["sent"])
    for pos, j in enumerate(order):
        for i in order[:pos]:
            answered = requests[i].get("answered")
            if answered is None or requests[j]["sent"] < answered:
                lead = None if answered is None else round((answered - requests[j]["sent"]) * 1000, 3)
                return {"overlapped": True, "pair": [i, j], "lead_ms": lead}
    return {"overlapped": False, "pair": None, "lead_ms": None}


def error_response(status: int, keep_alive: bool, message: str | None = None) -> bytes:
    reason, err_type = STATUS_TEXT.get(status, ("Error", "ServerErrorException"))
    body = json.dumps(
        {
            "error": {
                "message": message or f"injected by the ctk interposer: {status} {reason}",
                "type": err_type,
                "code": status,
            }
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n"
        "X-Ctk-Interposer: injected\r\n\r\n"
    ).encode()
    return head + body


# ---------------------------------------------------------------- HTTP/1.1 framing

MAX_HEAD = 1 << 16
CHUNK = 1 << 16


class HttpProtocolError(Exception):
    pass


class Head:
    """A parsed request or response head. `raw` is forwarded unchanged."""

    __slots__ = ("raw", "first", "headers", "version")

    def __init__(self, raw: bytes):
        self.raw = raw
        lines = raw[:-4].decode("latin-1").split("\r\n")
        self.first = lines[0].split(" ", 2)
        if len(self.first) < 2:
            raise HttpProtocolError(f"bad start line: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise HttpProtocolError(f"bad header line: {line[:80]!r}")
            key = name.strip().lower()
            value = value.strip()
            if key in headers:
                headers[key] = headers[key] + ", " + value
            else:
                headers[key] = value
        self.headers = headers

    # request view
    @property
    def method(self) -> str:
        return self.first[0]

    @property
    def target(self) -> str:
        return self.first[1]

    @property
    def request_version(self) -> str:
        return self.first[2] if len(self.first) > 2 else "HTTP/1.0"

    # response view
    @property
    def status(self) -> int:
        try:
            return int(self.first[1])
        except ValueError:
            raise HttpProtocolError(f"bad status line: {self.first!r}") from None

    def tokens(self, name: str) -> set[str]:
        v = self.headers.get(name)
        if not v:
            return set()
        return {t.strip().lower() for t in v.split(",")}

    def keep_alive(self, version: str) -> bool:
        conn = self.tokens("connection")
        if version == "HTTP/1.1":
            return "close" not in conn
        return "keep-alive" in conn

    def framing(self) -> tuple[str, int]:
        """('chunked', 0) | ('length', n) | ('none', 0) for requests; responses use response_framing."""
        te = self.headers.get("transfer-encoding")
        if te is not None:
            if te.lower().rsplit(",", 1)[-1].strip() == "chunked":
                return ("chunked", 0)
            return ("close", 0)
        cl = self.headers.get("content-length")
        if cl is not None:
            try:
                n = int(cl.split(",")[0].strip())
            except ValueError:
                raise HttpProtocolError(f"bad Content-Length: {cl!r}") from None
            if n < 0:
                raise HttpProtocolError(f"bad Content-Length: {cl!r}")
            return ("length", n)
        return ("none", 0)


def looks_like_http_request(data: bytes) -> bool:
    return re.match(rb"(GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH|TRACE|CONNECT) ", data) is not None


def chunk_size(line: bytes) -> int:
    """The size on a chunk-size line (extensions ignored); HttpProtocolError when it is not one."""
    try:
        size = int(line.split(b";", 1)[0].strip(), 16)
    except ValueError:
        raise HttpProtocolError(f"bad chunk size line: {line[:40]!r}") from None
    if size < 0:
        raise HttpProtocolError(f"bad chunk size line: {line[:40]!r}")
    return size
