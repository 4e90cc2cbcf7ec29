"""SCHEMA-01 over the whole run's traffic, also under xdist.

Each pytest process (an xdist worker, or the only process) validates every response its session's client
recorded against the OpenAPI document when its session ends, and keeps a small summary (responses checked,
the first problems with their exchanges). A worker hands its summary to the controller through xdist's
``workeroutput``; the controller (or the only process) turns all summaries into one SCHEMA-01 verdict,
behaviour ``all-traffic``, that the run report carries next to the per-test ones. Without it each worker's
``test_schema_recorded`` sees only its own worker's traffic.
"""

from __future__ import annotations

from typing import Any

from ctk.checks.common import not_routed
from ctk.core.verdicts import Status, Verdict

REQ = "SCHEMA-01"
KEY = "ctk_schema_traffic"
NODEID = "ctk::SCHEMA-01[all traffic]"
MAX_PROBLEMS = 20


def summarize(session: Any, spec_path: str | None) -> dict[str, Any]:
    """{"worker", "checked", "problems": [[text, exchange dict], ...], "error"} for one process's traffic."""
    worker = getattr(session, "worker", None) or "main"
    client = getattr(session, "client", None)
    exchanges = list(getattr(client, "exchanges", None) or [])
    out: dict[str, Any] = {"worker": worker, "checked": 0, "problems": [], "problem_count": 0, "error": None}
    if not exchanges:
        return out
    try:
        from ctk.openapi import load_spec

        spec = load_spec(spec_path)
    except Exception as exc:  # noqa: BLE001 - the summary says so; the run goes on
        out["error"] = f"OpenAPI document unusable: {type(exc).__name__}: {exc}"
        return out
    out["source"] = str(getattr(spec, "source", spec_path or "the kit's OpenAPI document"))
    for ex in exchanges:
        # not judged: fault rules, and answers to a key reused on another operation on purpose (SCOPE-01's probe)
        if ex.status is None or (ex.label or "").startswith(("fault:", "reused key:")) or "/_ctk" in ex.url:
            continue
        if not_routed(ex):   # an operation the target does not serve is unsupported, not a schema deviation
            out["unrouted"] = out.get("unrouted", 0) + 1
            continue
        out["checked"] += 1
        try:
            problems = spec.validate(ex)
        except Exception as exc:  # noqa: BLE001
            problems = [f"{ex.method} {ex.url}: not validated ({type(exc).__name__}: {exc})"]
        for p in problems:
            out["problem_count"] += 1
            if len(out["problems"]) < MAX_PROBLEMS:
                out["problems"].append([p, ex.to_dict()])
    return out


def verdict(summaries: list[dict[str, Any]]) -> Verdict | None:
    """One SCHEMA-01 verdict over every process's summary (None when no process recorded anything)."""
    summaries = [s for s in summaries if s]
    if not summaries:
        return None
    checked = sum(int(s.get("checked") or 0) for s in summaries)
    workers = sorted({str(s.get("worker")) for s in summaries})
    errors = [s["error"] for s in summaries if s.get("error")]
    problems = [p for s in summaries for p in s.get("problems") or []]
    count = sum(int(s.get("problem_count") or 0) for s in summaries)
    source = next((s["source"] for s in summaries if s.get("source")), "the OpenAPI document")
    what = f"all traffic of the run: {len(workers)} process(es) ({', '.join(workers)})"
    details = {"checked": checked, "workers": workers, "problems": count}
    if checked == 0:
        return Verdict.inconclusive(REQ, f"no responses to validate ({what})"
                                    + (f"; {'; '.join(errors)}" if errors else ""), behaviour="all-traffic",
                                    details=details)
    if count:
        shown = problems[:8]
        v = Verdict.broken(REQ, f"{count} response(s) of {checked} do not conform to {source} ({what}):\n"
                           + "\n".join(p for p, _ in shown), behaviour="all-traffic",
                           classification=f"{count} problems", exchanges=[ex for _, ex in shown], details=details)
        return v
    return Verdict(REQ, Status.PASS, f"{checked} responses conform to {source} ({what})", behaviour="all-traffic",
                   details=details)
