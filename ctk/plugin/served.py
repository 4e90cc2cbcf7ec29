"""DISC-05 over the whole run's traffic, also under xdist: an operation the catalog claims is served.

Each pytest process (an xdist worker, or the only process) reads every request its session's client recorded
when its session ends, and keeps a small summary per operation the catalog claims (listed in /v1/config
`endpoints`, or in the spec's default set when it sends none): served (an answer only a handler gives), or not
served as `ctk.checks.common.unserved` judges it - the same judgement the checks make, so a check left
"advertised but not served (DISC-05)" and this verdict say the same thing; the control answers it compares a
router's error model with are the ones the checks recorded. A worker hands its summary to the controller through
xdist's ``workeroutput``; the controller (or the only process) turns them into one DISC-05 verdict: an operation
not served in any process is a deviation naming it and its exchange; none reached is inconclusive, never a pass.
"""

from __future__ import annotations

from typing import Any

from ctk.catalog.cases import spec_operations
from ctk.checks.common import (CONTROL_LABEL, DISC_UNSERVED, claimed_by, requests_to, served_answer, unserved)
from ctk.core.behaviours import Behaviour
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Status, Verdict

REQ = DISC_UNSERVED
KEY = "ctk_claimed_served"
NODEID = "ctk::DISC-05[all traffic]"


def summarize(session: Any) -> dict[str, Any]:
    """{"worker", "claimed", "served": {operation: requests}, "unserved": {operation: `Unserved.to_dict()`},
    "undecided": {operation: requests}, "error"} for one process's traffic."""
    worker = getattr(session, "worker", None) or "main"
    client = getattr(session, "client", None)
    discovery = getattr(session, "discovery", None)
    exchanges: list[Exchange] = list(getattr(client, "exchanges", None) or [])
    out: dict[str, Any] = {"worker": worker, "claimed": 0, "served": {}, "unserved": {}, "undecided": {},
                           "error": None}
    if discovery is None:
        out["error"] = "what the catalog claims is not known (no usable /v1/config)"
        return out
    controls: dict[str, Exchange] = {}
    for e in exchanges:     # the checks' control requests to a path no catalog serves, one per method
        if (e.label or "").startswith(CONTROL_LABEL) and e.status is not None:
            controls.setdefault(e.method, e)
    for operation, op in spec_operations().items():
        if claimed_by(discovery, op.method, op.template) is None:
            continue
        out["claimed"] += 1
        hits = requests_to(exchanges, op.method, op.template)
        if not hits:
            continue
        found = unserved(discovery, hits, op.method, op.template, operation,
                         control=lambda first: controls.get(first.method))
        if found is not None:
            out["unserved"][operation] = {**found.to_dict(), "requests": len(hits)}
        elif any(served_answer(e) for e in hits):
            out["served"][operation] = len(hits)
        else:       # answered only 404s with an error model no control was compared with, or 5xx: not known
            out["undecided"][operation] = len(hits)
    return out


def verdict(summaries: list[dict[str, Any]]) -> Verdict | None:
    """One DISC-05 verdict over every process's summary (None when no process summarized anything)."""
    summaries = [s for s in summaries if s]
    if not summaries:
        return None
    workers = sorted({str(s.get("worker")) for s in summaries})
    what = f"all traffic of the run: {len(workers)} process(es) ({', '.join(workers)})"
    served: dict[str, int] = {}
    for s in summaries:
        for op, n in (s.get("served") or {}).items():
            served[op] = served.get(op, 0) + int(n)
    unserved_ops: dict[str, dict[str, Any]] = {}
    for s in summaries:     # not served in one process and answered by a handler in none
        for op, found in (s.get("unserved") or {}).items():
            if op not in served:
                unserved_ops.setdefault(op, found)
    undecided = sorted({op for s in summaries for op in (s.get("undecided") or {})} - set(served) - set(unserved_ops))
    details: dict[str, Any] = {"workers": workers, "served": served, "unserved": sorted(unserved_ops),
                               "undecided": undecided}
    if unserved_ops:
        lines = [f"{op} ({f['endpoint']}), claimed in {f['claimed_by']}: {f['seen']}"
                 for op, f in sorted(unserved_ops.items())]
        shown = [x for f in unserved_ops.values() for x in (f.get("exchange"), f.get("control")) if x]
        return Verdict.broken(REQ, f"{len(unserved_ops)} operation(s) the catalog claims are not served ({what}):\n"
                              + "\n".join(lines), behaviour=Behaviour.CLAIMED_SERVED,
                              classification=f"{len(unserved_ops)} advertised but not served", exchanges=shown,
                              details=details)
    if served:
        return Verdict(REQ, Status.PASS, f"{len(served)} claimed operation(s) reached and served: "
                       + ", ".join(sorted(served)) + (f"; answered nothing a handler alone gives: "
                                                      f"{', '.join(undecided)}" if undecided else "") + f" ({what})",
                       behaviour=Behaviour.CLAIMED_SERVED, details=details)
    errors = sorted({str(s["error"]) for s in summaries if s.get("error")})
    why = "; ".join(errors) if errors else "no operation the catalog claims was reached" + (
        f" with an answer a handler alone gives ({', '.join(undecided)} answered 404s or 5xx only)" if undecided else "")
    return Verdict.inconclusive(REQ, f"{why} ({what})", behaviour=Behaviour.CLAIMED_SERVED, details=details)
