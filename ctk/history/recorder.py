"""A Jepsen-style operation history: every attempt is an ``invoke`` followed by ``ok``, ``fail`` or ``info``.

* ok   - the catalog acknowledged the mutation (2xx)
* fail - the catalog definitely did not apply it (4xx, refused connection)
* info - outcome unknown (timeout, reset, 5xx, 409 request_in_progress while the original is in flight)

Attempts of one logical operation share an ``op_id`` (and, with keys, the same key); `History.operations()`
folds them into `Operation`s whose ``outcome`` is what the client finally reported, and whose ``ambiguous``
flag says an earlier attempt of it ended in ``info`` (the case in which a blind retry can read its own
write as a conflict). Thread-safe.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ctk.client.transport import classify_outcome as classify, is_request_in_progress  # noqa: F401 (re-exported)
from ctk.core.exchange import Exchange

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"


@dataclass
class Event:
    index: int
    type: str                      # invoke | ok | fail | info
    process: Any                   # worker / thread id
    op: str                        # operation name, e.g. "append", "createNamespace"
    op_id: int                     # logical operation this attempt belongs to
    attempt: int = 1
    key: str | None = None         # Idempotency-Key sent, if any
    value: Any = None              # e.g. the snapshot id the append adds
    time: float = 0.0              # time.monotonic()
    wall: float = 0.0              # time.time()
    exchange: Exchange | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "type": self.type, "process": self.process, "op": self.op,
                "op_id": self.op_id, "attempt": self.attempt, "key": self.key, "value": self.value,
                "time": self.time, "wall": self.wall, "error": self.error,
                "status": self.exchange.status if self.exchange else None,
                "exchange": self.exchange.to_dict() if self.exchange else None}


@dataclass
class Operation:
    """One logical operation folded from its attempts."""

    op_id: int
    process: Any
    op: str
    key: str | None
    value: Any
    outcome: str | None            # ok / fail / info of the last attempt (info while it is still pending)
    attempts: list[tuple[Event, Event | None]] = field(default_factory=list)

    @property
    def ambiguous(self) -> bool:
        """An attempt before the final one ended with an unknown outcome."""
        return any(c is not None and c.type == INFO for _, c in self.attempts[:-1])

    @property
    def keys(self) -> set[str]:
        return {i.key for i, _ in self.attempts if i.key}

    @property
    def exchanges(self) -> list[Exchange]:
        return [c.exchange for _, c in self.attempts if c is not None and c.exchange is not None]

    def describe(self) -> str:
        steps = ", ".join(
            f"#{i.attempt} {c.type if c else 'pending'}"
            + (f" ({c.exchange.status if c.exchange and c.exchange.status is not None else c.error})" if c else "")
            for i, c in self.attempts)
        return f"op {self.op_id} {self.op} value={self.value!r} process={self.process} -> {self.outcome}: {steps}"


class History:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[Event] = []
        self._op_ids = itertools.count(1)

    def __len__(self) -> int:
        return len(self.events)

    def new_op_id(self) -> int:
        with self._lock:
            return next(self._op_ids)

    def invoke(self, process: Any, op: str, value: Any = None, key: str | None = None,
               op_id: int | None = None, attempt: int = 1) -> Event:
        """Record the start of an attempt; pass ``op_id`` of an earlier attempt to continue its operation."""
        with self._lock:
            if op_id is None:
                op_id = next(self._op_ids)
            ev = Event(len(self.events), INVOKE, process, op, op_id, attempt, key, value,
                       time.monotonic(), time.time())
            self.events.append(ev)
            return ev

    def complete(self, invoke: Event, type: str, value: Any = None, exchange: Exchange | None = None,
                 error: str | None = None) -> Event:
        if type not in (OK, FAIL, INFO):
            raise ValueError(f"completion type must be ok, fail or info, not {type!r}")
        with self._lock:
            ev = Event(len(self.events), type, invoke.process, invoke.op, invoke.op_id, invoke.attempt,
                       invoke.key, invoke.value if value is None else value, time.monotonic(), time.time(),
                       exchange, error if error is not None else (exchange.error if exchange else None))
            self.events.append(ev)
            return ev

    def ok(self, invoke: Event, **kw: Any) -> Event:
        return self.complete(invoke, OK, **kw)

    def fail(self, invoke: Event, **kw: Any) -> Event:
        return self.complete(invoke, FAIL, **kw)

    def info(self, invoke: Event, **kw: Any) -> Event:
        return self.complete(invoke, INFO, **kw)

    def crashed(self, process: Any, op: str, exc: BaseException, invoke: Event | None = None,
                value: Any = None) -> Event:
        """A worker died on ``exc``: its pending attempt (``invoke``, or a new one) ends ``info`` with the
        exception as error, so the history and the finding show it (the outcome of that attempt is unknown)."""
        if invoke is None:
            invoke = self.invoke(process, op, value=value)
        return self.complete(invoke, INFO, error=f"worker crashed: {type(exc).__name__}: {exc}")

    def errors(self) -> list[str]:
        """The error texts of ``info`` events that carry one (crashed workers, transport errors)."""
        with self._lock:
            return [f"process {e.process} {e.op} op {e.op_id}#{e.attempt}: {e.error}"
                    for e in self.events if e.type == INFO and e.error]

    def record_exchange(self, invoke: Event, exchange: Exchange) -> Event:
        """Complete ``invoke`` with the classification of ``exchange`` (see `classify`)."""
        return self.complete(invoke, classify(exchange), exchange=exchange)

    def operations(self) -> list[Operation]:
        with self._lock:
            events = list(self.events)
        ops: dict[int, Operation] = {}
        pending: dict[tuple[int, int], int] = {}
        for ev in events:
            if ev.type == INVOKE:
                o = ops.get(ev.op_id)
                if o is None:
                    o = ops[ev.op_id] = Operation(ev.op_id, ev.process, ev.op, ev.key, ev.value, None)
                o.attempts.append((ev, None))
                pending[(ev.op_id, ev.attempt)] = len(o.attempts) - 1
            else:
                o = ops[ev.op_id]
                pos = pending.pop((ev.op_id, ev.attempt), None)
                if pos is None:
                    continue
                o.attempts[pos] = (o.attempts[pos][0], ev)
                o.outcome = ev.type
                if ev.value is not None:
                    o.value = ev.value
        for o in ops.values():  # an attempt still pending at the end leaves the outcome unknown
            if o.attempts and o.attempts[-1][1] is None:
                o.outcome = INFO
        return sorted(ops.values(), key=lambda o: o.op_id)

    def to_list(self) -> list[dict[str, Any]]:
        with self._lock:
            return [e.to_dict() for e in self.events]

    def dump(self, path: str) -> None:
        """Write the history as JSON lines (exchanges redacted)."""
        with open(path, "w", encoding="utf-8") as fh:
            for item in self.to_list():
                fh.write(json.dumps(item, default=str) + "\n")

    def render(self, limit: int = 200) -> str:
        lines = []
        for e in self.events[:limit]:
            st = f" status={e.exchange.status}" if e.exchange and e.exchange.status is not None else ""
            err = f" error={e.error}" if e.error else ""
            lines.append(f"{e.index:4d} {e.process!s:>6} {e.type:6} {e.op} op={e.op_id}#{e.attempt} "
                         f"value={e.value!r}{st}{err}")
        if len(self.events) > limit:
            lines.append(f"... {len(self.events) - limit} more events")
        return "\n".join(lines)
