"""Toxic definitions: the TCP toxics with Toxiproxy's names and attributes, and validation.

TCP toxic types (attribute units as in Toxiproxy):

- ``latency``     ``latency`` ms, ``jitter`` ms: every chunk is delivered ``latency +/- jitter`` after it arrived.
- ``bandwidth``   ``rate`` KB/s (1 KB = 1000 bytes): the stream is throttled to that rate.
- ``slow_close``  ``delay`` ms: when the source closes, the close is passed on ``delay`` later.
- ``timeout``     ``timeout`` ms: data is stopped; the connection is closed after ``timeout``.
                  ``timeout`` 0: the connection is never closed and data is held until the toxic is
                  removed (then it is delivered).
- ``reset_peer``  ``timeout`` ms: data is stopped; after ``timeout`` both sides get a TCP RST.
- ``slicer``      ``average_size`` bytes, ``size_variation`` bytes, ``delay`` microseconds: chunks are cut
                  into pieces of ``average_size +/- size_variation`` with ``delay`` between them.
- ``limit_data``  ``bytes``: the connection is closed once that many bytes passed on the stream.
- ``noop``        no attributes: does nothing (Toxiproxy has it too).
- ``cut_after``   ``pattern`` (a regular expression, default ``COMMIT``), ``times`` (default 1; 0 = every
                  time), ``deliver`` (default 1), on the ``upstream`` stream: a chunk the client sends that
                  matches ``pattern`` is delivered, then the server's next answer on that connection is dropped
                  and both sides get a TCP RST. In front of a catalog's database: the database commits, the
                  catalog never hears the outcome. With ``deliver`` 0 the matching chunk is dropped and the
                  connection reset at once: that write never reaches the database. With ``then_down`` 1 the
                  proxy goes down the moment it cuts (as if disabled: every connection aborted, new ones
                  refused) and stays down until it is enabled again: a pool that retries the write on a fresh
                  connection meets the same broken link. On a PostgreSQL connection the pattern is searched
                  in the SQL each statement of the chunk runs (a Query's text, or an Execute's, through the
                  statement names its Parse and Bind gave: drivers that keep statements prepared on the server
                  send only the name; pgwire.py), elsewhere in the chunk's bytes. (ctk only.)

``stream`` is ``upstream`` (client -> server) or ``downstream`` (server -> client). ``toxicity`` is the
probability that the toxic applies to a connection (decided once per connection, as Toxiproxy does; for the
HTTP toxics of ``http_toxics.py`` it is decided per matching request).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

from ctk.interposer.http_toxics import HTTP_TOXICS, CompiledMatch, validate_http_attributes
from ctk.interposer.toxic_errors import ERR_INVALID_STREAM, ERR_INVALID_TYPE, ERR_TOXIC_EXISTS, ToxicError

STREAMS = ("upstream", "downstream")

TCP_TOXICS: dict[str, dict[str, int]] = {
    "latency": {"latency": 0, "jitter": 0},
    "bandwidth": {"rate": 0},
    "slow_close": {"delay": 0},
    "timeout": {"timeout": 0},
    "reset_peer": {"timeout": 0},
    "slicer": {"average_size": 0, "size_variation": 0, "delay": 0},
    "limit_data": {"bytes": 0},
    "noop": {},
    "cut_after": {"times": 1, "deliver": 1, "then_down": 0},
}
#: text attributes of TCP toxics (with their defaults)
TEXT_ATTRIBUTES: dict[str, dict[str, str]] = {"cut_after": {"pattern": "COMMIT"}}
#: toxics that never change the bytes (a connection they apply to keeps the fast path)
INERT_TOXICS = frozenset({"noop"})

@dataclass
class Toxic:
    name: str
    type: str
    stream: str = "downstream"
    toxicity: float = 1.0
    attributes: dict[str, Any] = field(default_factory=dict)
    # runtime
    matched: int = 0
    applied: int = 0
    remaining: int | None = None  # HTTP toxics: how many more applications (None = unlimited)
    generation: int = 0  # bumped on update so connections roll toxicity again
    # HTTP toxics: the connections' compiled form of the match attributes, and the generation it was compiled at
    _compiled: CompiledMatch | None = field(default=None, init=False, repr=False, compare=False)
    _compiled_gen: int = field(default=-1, init=False, repr=False, compare=False)
    # delay_request with `gather`: the requests held so far and the event that releases them (connection.py)
    _gathered: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def is_http(self) -> bool:
        return self.type in HTTP_TOXICS

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "stream": self.stream,
            "toxicity": self.toxicity,
            "attributes": dict(self.attributes),
        }

    def roll(self) -> bool:
        if self.toxicity >= 1.0:
            return True
        if self.toxicity <= 0.0:
            return False
        return random.random() < self.toxicity


def _as_number(name: str, value: Any, *, integer: bool = True) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToxicError(f"attribute {name!r} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ToxicError(f"attribute {name!r} must be finite")
    if value < 0:
        raise ToxicError(f"attribute {name!r} must not be negative, got {value!r}")
    return int(value) if integer else value


def validate_toxicity(value: Any) -> float:
    if value is None:
        return 1.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 <= float(value) <= 1.0):
        raise ToxicError(f"toxicity must be a number between 0 and 1, got {value!r}")
    return float(value)


def validate_stream(value: Any) -> str:
    """Toxiproxy's rule: "upstream" or "downstream", any case; absent means downstream (so does "" here)."""
    if value is None or value == "":
        return "downstream"
    if not isinstance(value, str) or value.lower() not in STREAMS:
        raise ToxicError(f"stream must be 'upstream' or 'downstream', got {value!r}", api_error=ERR_INVALID_STREAM)
    return value.lower()


def build_toxic(data: Any, *, existing_names: set[str] | None = None) -> Toxic:
    """Build and validate a toxic from its JSON form (Toxiproxy shape)."""
    if not isinstance(data, dict):
        raise ToxicError("toxic must be a JSON object")
    typ = data.get("type")
    if not isinstance(typ, str) or not typ:
        raise ToxicError("missing required field: type", api_error=ERR_INVALID_TYPE)
    stream = validate_stream(data.get("stream"))
    toxicity = validate_toxicity(data.get("toxicity"))
    attrs_in = data.get("attributes") or {}
    if not isinstance(attrs_in, dict):
        raise ToxicError("attributes must be a JSON object")
    if typ in TCP_TOXICS:
        attrs = validate_tcp_attributes(typ, attrs_in)
    elif typ in HTTP_TOXICS:
        attrs = validate_http_attributes(typ, attrs_in)
    else:
        known = ", ".join(sorted(TCP_TOXICS) + sorted(HTTP_TOXICS))
        raise ToxicError(f"invalid toxic type: {typ!r} (known: {known})", api_error=ERR_INVALID_TYPE)
    name = data.get("name") or f"{typ}_{stream}"
    if not isinstance(name, str):
        raise ToxicError("toxic name must be a string")
    if existing_names is not None and name in existing_names:
        raise ToxicError(f"toxic already exists: {name}", status=409, api_error=ERR_TOXIC_EXISTS)
    toxic = Toxic(name=name, type=typ, stream=stream, toxicity=toxicity, attributes=attrs)
    if typ in HTTP_TOXICS or typ in TEXT_ATTRIBUTES:
        times = attrs.get("times", 0)
        toxic.remaining = times if times else None
    return toxic


def validate_tcp_attributes(typ: str, attrs: dict[str, Any]) -> dict[str, Any]:
    defaults = TCP_TOXICS[typ]
    texts = TEXT_ATTRIBUTES.get(typ, {})
    out: dict[str, Any] = {**defaults, **texts}
    for key, value in attrs.items():
        if key in texts:
            if not isinstance(value, str) or not value:
                raise ToxicError(f"attribute {key!r} must be a non-empty string, got {value!r}")
            try:
                re.compile(value.encode("latin-1"))
            except (re.error, UnicodeEncodeError) as exc:
                raise ToxicError(f"attribute {key!r} is not a usable regular expression: {exc}") from None
            out[key] = value
            continue
        if key not in defaults:
            known = ", ".join([*defaults, *texts])
            raise ToxicError(f"unknown attribute {key!r} for toxic type {typ!r} (known: {known})")
        out[key] = _as_number(key, value)
    return out


def update_toxic(toxic: Toxic, data: Any) -> None:
    """Apply a Toxiproxy-style update (toxicity and/or attributes) in place. As in Toxiproxy, the given attributes
    are merged into the current ones, an absent toxicity keeps the current one, and the name, type and stream
    of a toxic cannot change (fields for them are ignored: clients send the whole toxic back)."""
    if not isinstance(data, dict):
        raise ToxicError("toxic update must be a JSON object")
    toxicity = validate_toxicity(data["toxicity"]) if "toxicity" in data else toxic.toxicity
    attrs_in = data.get("attributes") or {}
    if not isinstance(attrs_in, dict):
        raise ToxicError("attributes must be a JSON object")
    merged = {**toxic.attributes, **attrs_in}
    if toxic.type in HTTP_TOXICS:
        attrs = validate_http_attributes(toxic.type, merged)
        if "times" in attrs_in:
            toxic.remaining = attrs["times"] if attrs["times"] else None
    else:
        attrs = validate_tcp_attributes(toxic.type, merged)
        if toxic.type in TEXT_ATTRIBUTES and "times" in attrs_in:
            toxic.remaining = attrs["times"] if attrs["times"] else None
    toxic.toxicity = toxicity
    toxic.attributes = attrs
    toxic.generation += 1


# ---------------------------------------------------------------- chunk transformations


def latency_delay(attrs: dict[str, Any]) -> float:
    """Seconds of delay for one chunk."""
    lat = attrs.get("latency", 0)
    jit = attrs.get("jitter", 0)
    if jit:
        lat = lat + random.uniform(-jit, jit)
    return max(0.0, lat / 1000.0)


def bandwidth_pieces(pieces: list[tuple[float, bytes]], rate_kbs: int) -> list[tuple[float, bytes]]:
    """Cut pieces into 100 ms worth of bytes, each preceded by the time it takes at `rate` KB/s."""
    if rate_kbs <= 0:
        return pieces
    bps = rate_kbs * 1000.0
    step = max(1, int(bps / 10))
    out: list[tuple[float, bytes]] = []
    for delay, data in pieces:
        first = True
        for i in range(0, len(data), step):
            part = data[i : i + step]
            out.append(((delay if first else 0.0) + len(part) / bps, part))
            first = False
        if not data:
            out.append((delay, data))
    return out


def slicer_pieces(pieces: list[tuple[float, bytes]], attrs: dict[str, Any]) -> list[tuple[float, bytes]]:
    avg = attrs.get("average_size", 0)
    var = attrs.get("size_variation", 0)
    gap = attrs.get("delay", 0) / 1_000_000.0
    if avg <= 0:
        return pieces
    out: list[tuple[float, bytes]] = []
    for delay, data in pieces:
        i = 0
        first = True
        while i < len(data):
            size = avg + (random.randint(-var, var) if var else 0)
            size = max(1, size)
            out.append(((delay if first else gap), data[i : i + size]))
            first = False
            i += size
    return out
