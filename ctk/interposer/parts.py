"""What the parts of one proxy share and see of each other, so that their modules import one way: `listener.Proxy` makes
`connection.Connection`s, a connection makes its `link.Link`s and sends `duplicates`' copies; none imports the
one that made it. `ReqMeta`: a request on its way; `Counters`: the proxy's counters; `ProxyView`: what a connection, its links and its copies use
of their proxy; `ConnectionView`: what a link uses of its connection; `SocketTransport`: what all of them use of a socket's transport."""

from __future__ import annotations

import asyncio
import collections
from typing import Any, Callable, Protocol, runtime_checkable

from ctk.interposer.toxics import Toxic


@runtime_checkable
class SocketTransport(Protocol):
    """What the interposer uses of a connected socket's transport, both directions: asyncio's (an
    `asyncio.Transport`, though asyncio's stubs type a StreamWriter's as write-only) and uvloop's (which subclasses
    none of asyncio's transport classes)."""

    def is_closing(self) -> bool: ...
    def write(self, data: bytes) -> None: ...
    def can_write_eof(self) -> bool: ...
    def write_eof(self) -> None: ...
    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...


class ReqMeta:
    """A request on its way: what its answer needs (method for framing, toxics matched at its head)."""

    __slots__ = ("method", "target", "toxics", "head", "body", "version", "primary_done", "sent_at", "answer_at",
                 "answer_status", "began")

    def __init__(self, method: str, target: str, version: str, toxics: list[Any]):
        self.method = method
        self.target = target
        self.version = version
        self.toxics = toxics
        self.primary_done: asyncio.Event | None = None
        self.sent_at = 0.0
        self.answer_at: float | None = None      # set for duplicated requests only (the coroutine path)
        self.answer_status: int | None = None
        self.began = 0.0  # time.monotonic() at its head, when the proxy has taps


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


class ProxyView(Protocol):
    """What a connection, its links and its copies use of their `listener.Proxy`."""

    upstream: tuple[str, int]
    protocol: str
    fast_path: bool
    toxics: list[Toxic]
    tcp_toxics: dict[str, list[Toxic]]
    http_toxics: list[Toxic]
    counters: Counters
    side_tasks: set[asyncio.Task]
    taps: list[Callable[[ReqMeta, int | None, str | None], None]]
    released: dict[int, asyncio.Event]

    def event(self, kind: str, **data: Any) -> None: ...

    def go_down(self, why: str) -> None: ...


class CuttableLink(Protocol):
    """A link whose answer can be cut (the downstream `link.Link` of a connection)."""

    def _cut(self, data: bytes) -> None: ...


class ConnectionView(Protocol):
    """What a `link.Link` uses of its `connection.Connection`."""

    peer: str
    cut_armed: tuple[Toxic, str] | None

    @property
    def proxy(self) -> ProxyView: ...

    @property
    def down(self) -> CuttableLink | None: ...

    def applies(self, t: Toxic) -> bool: ...

    def reset(self) -> None: ...

    def close(self, reason: str = "") -> None: ...
