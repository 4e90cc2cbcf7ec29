"""Semantics gate retries: before a mutation endpoint's idempotency and fault checks judge it, its baseline (the
plain operation, no key, no fault: its answer and its effect read back; the semantic checks registered with
``baseline=True`` for that operation) runs once per process. Where the baseline is broken, every check of that
endpoint is inconclusive naming the semantic finding: a catalog whose drop does nothing, or whose load misses the
last commit, is told that, not that its replay or its optimistic concurrency is wrong.

`install()` hooks the gate into ``ctk.checks.common.guarded`` (the lower module names no semantics: it calls the
hooks registered in ``BASELINE_GATES``).
"""

from __future__ import annotations

import threading
import weakref

from ctk.core.verdicts import Status, Verdict
from ctk.checks.common import BASELINE_GATES
from ctk.checks.context import CheckContext
from ctk.checks.semantics.harness import run_semantic
from ctk.checks.semantics.registry import baselines

GATING = (Status.FAIL, Status.ERROR)     # a broken MUST (an effect missing) or a crash gates; a wrong status does not

_lock = threading.Lock()
_results: dict[tuple[int, str], list[Verdict]] = {}


def _forget(ident: int) -> None:
    with _lock:
        for key in [k for k in _results if k[0] == ident]:
            del _results[key]


def baseline(ctx: CheckContext, operation: str) -> list[Verdict]:
    """The baseline verdicts of ``operation`` for this context (run once, then remembered while the context
    lives: a later context that gets the same id() - another catalog - runs its own)."""
    key = (id(ctx), operation)
    with _lock:
        if key in _results:
            return _results[key]
        if not any(k[0] == key[0] for k in _results):
            weakref.finalize(ctx, _forget, key[0])
    out: list[Verdict] = []
    for check in baselines(operation):
        out += run_semantic(ctx, check)
    with _lock:
        return _results.setdefault(key, out)


def _unreadable(v: Verdict) -> bool:
    """A read of the verdict's (GET / HEAD) answered 5xx or not at all: what it saw is state it could not read,
    not a plain operation shown broken (the team's attribution rule: state unreadable is inconclusive)."""
    return any(x.get("method") in ("GET", "HEAD") and (x.get("status") is None or x.get("status", 0) >= 500)
               for x in v.exchanges if isinstance(x, dict))


def blocking(ctx: CheckContext, operation: str) -> Verdict | None:
    """The first baseline verdict of ``operation`` that breaks its plain semantics (None: the baseline held,
    or the operation has none, or what it saw came through unreadable reads, or its finding is about the answer
    while the effect held - ``details.effect_held``, a required field missing: what rests on the effect works)."""
    return next((v for v in baseline(ctx, operation) if v.status in GATING and not _unreadable(v)
                 and not (v.details or {}).get("effect_held")), None)


def gate(ctx: CheckContext, operation: str) -> tuple[str, str] | None:
    """(requirement, why) when the checks of ``operation`` must not judge retries on top of a broken plain
    operation; None otherwise."""
    v = blocking(ctx, operation)
    if v is None:
        return None
    first = (v.message or "").strip().splitlines()[0:2]
    return v.requirement, (f"the plain {operation} (no key, no fault) is broken: {v.requirement} "
                           f"{v.status.value} ({' '.join(first)}); retries are judged only on top of a plain "
                           f"operation that works")


def install() -> None:
    if gate not in BASELINE_GATES:
        BASELINE_GATES.append(gate)
