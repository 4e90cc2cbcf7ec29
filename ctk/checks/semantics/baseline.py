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

from ctk.core.verdicts import Status, Verdict
from ctk.checks.common import BASELINE_GATES
from ctk.checks.context import CheckContext
from ctk.checks.semantics.harness import run_semantic
from ctk.checks.semantics.registry import baselines

GATING = (Status.FAIL, Status.ERROR)     # a broken MUST (an effect missing) or a crash gates; a wrong status does not

_lock = threading.Lock()
_results: dict[tuple[int, str], list[Verdict]] = {}


def baseline(ctx: CheckContext, operation: str) -> list[Verdict]:
    """The baseline verdicts of ``operation`` for this context (run once, then remembered)."""
    key = (id(ctx), operation)
    with _lock:
        if key in _results:
            return _results[key]
    out: list[Verdict] = []
    for check in baselines(operation):
        out += run_semantic(ctx, check)
    with _lock:
        return _results.setdefault(key, out)


def blocking(ctx: CheckContext, operation: str) -> Verdict | None:
    """The first baseline verdict of ``operation`` that breaks its plain semantics (None: the baseline held,
    or the operation has none)."""
    return next((v for v in baseline(ctx, operation) if v.status in GATING), None)


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
