"""SCHEMA-01 over the whole run's traffic, also under xdist.

Each pytest process (an xdist worker, or the only process) validates every response its session's client
recorded against the OpenAPI document when its session ends, and keeps a small summary (responses checked,
every problem counted by operation and kind, an example exchange of each kind). A worker hands its summary to the controller through xdist's
``workeroutput``; the controller (or the only process) turns all summaries into one SCHEMA-01 verdict,
behaviour ``all-traffic``, that the run report carries next to the per-test ones. Without it each worker's
``test_schema_recorded`` sees only its own worker's traffic.
"""

from __future__ import annotations

from typing import Any

from ctk.checks.common import unrouted_answers
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Status, Verdict

import re

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
    judged = responses_to_judge(spec, exchanges, getattr(session, "discovery", None))
    for key in ("unrouted", "unmatched"):
        if judged[key]:
            out[key] = judged[key]
    for ex in judged["exchanges"]:
        out["checked"] += 1
        try:
            problems = spec.validate(ex)
        except Exception as exc:  # noqa: BLE001
            problems = [f"{ex.method} {ex.url}: not validated ({type(exc).__name__}: {exc})"]
        for p in problems:
            out["problem_count"] += 1
            key = group_key(p)
            groups = out.setdefault("groups", {})
            first = key not in groups
            groups[key] = groups.get(key, 0) + 1
            if first and len(out["problems"]) < MAX_PROBLEMS:     # one example exchange per kind of problem
                out["problems"].append([p, ex.to_dict()])
    return out


def responses_to_judge(spec: Any, exchanges: list[Any], discovery: Any = None) -> dict[str, Any]:
    """The recorded responses SCHEMA-01 holds to ``spec`` ({"exchanges": [...]}), and how many it leaves out as
    ``unrouted`` (an operation the target does not serve is unsupported, not a schema deviation) or
    ``unmatched`` (no operation of the document: nothing to hold it to, and no evidence). Never judged: no
    answer, fault rules, answers to a key the kit reuses on another operation on purpose (the spec forbids the
    reuse, and a server keyed by the key alone replays the other operation's answer), the control API."""
    unrouted = unrouted_answers(list(exchanges), route_of(spec), advertised_by(discovery))
    out: dict[str, Any] = {"exchanges": [], "unrouted": 0, "unmatched": 0}
    for ex in exchanges:
        if ex.status is None or (ex.label or "").startswith(("fault:", "reused key:")) or "/_ctk" in ex.url:
            continue
        if id(ex) in unrouted:
            out["unrouted"] += 1
        elif spec.operation(ex.method, ex.url) is None:
            out["unmatched"] += 1
        else:
            out["exchanges"].append(ex)
    return out


def route_of(spec: Any) -> Any:
    """``exchange -> (method, template)`` of the document's operation for it (None: no operation matches)."""
    def route(ex: Any) -> tuple[str, str] | None:
        op = spec.operation(ex.method, ex.url)
        return (op.method, op.template) if op is not None else None
    return route


def advertised_by(discovery: Any) -> Any:
    """``(method, template) -> bool``: whether /v1/config advertised the endpoint; None when no list was
    advertised (then only the traffic itself shows a route served)."""
    if discovery is None or getattr(discovery, "endpoints", None) is None:
        return None
    return lambda method, template: bool(discovery.supports(method, template))


_WHERE = re.compile(r"^(?P<method>[A-Z]+) (?P<path>\S+) -> (?P<status>\d{3}) \((?P<op>[^)]*)\): (?P<problem>.*)$", re.S)
# names the kit makes unique per run or per case, and numbers in bodies: folded so that one problem is one group
_UNIQUE = re.compile(r"\b\w*?_[0-9a-f]{6,}(?:_\w+)?\b|\b[0-9a-f]{8}-[0-9a-f-]{27}\b|\b\d{4,}\b")


# a list index in a JSON path of the body ("metadata/schemas/3/fields/0/type", "0/name"): one problem at many
# indexes is one kind of problem
_INDEX = re.compile(r"(?:(?<=/)|^)\d+(?=/|:)")


def _fold(text: str) -> str:
    """A problem's text with its JSON path's list indexes as [n] and run-unique names as <name>."""
    path, sep, rest = text.partition(": ")
    if sep and " " not in path:                          # "a/0/b: ..." (ctk.openapi.Spec.validate)
        text = _INDEX.sub("[n]", path) + sep + rest
    text = re.sub(r"(?<=: )((?:[\w.-]+/)*\d+(?:/[\w.-]+)*)(?=: )", lambda m: _INDEX.sub("[n]", m.group(1)),
                  text)                                  # a path after a discriminator's "as type 'x' (T): "
    return _UNIQUE.sub("<name>", text)


def group_key(problem: str) -> str:
    """"operation\tproblem" for a validation problem ("POST /v1/namespaces -> 201 (createNamespace): status 201
    is not declared ..."): the operation, and the problem with the status, its JSON path's list indexes folded
    ("metadata/schemas/[n]/fields/[n]/type: ...") and without run-unique names."""
    m = _WHERE.match(problem.strip())
    if not m:
        return "(unknown operation)\t" + _fold(problem.strip().splitlines()[0])[:300]
    text = m.group("problem").strip().splitlines()[0] if m.group("problem").strip() else ""
    return f"{m.group('op')}\t-> {m.group('status')}: " + _fold(text)[:300]


def grouped(summaries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """operation -> problem -> count over every process's summary (every problem, not only the examples kept)."""
    out: dict[str, dict[str, int]] = {}
    for s in summaries:
        groups = s.get("groups")
        if groups is None:     # a summary without groups (an older worker): its examples
            groups = {}
            for p, _ in s.get("problems") or []:
                groups[group_key(p)] = groups.get(group_key(p), 0) + 1
        for key, n in groups.items():
            op, _, problem = key.partition("\t")
            per = out.setdefault(op, {})
            per[problem] = per.get(problem, 0) + int(n)
    return dict(sorted(out.items(), key=lambda kv: -sum(kv[1].values())))


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
    unmatched = sum(int(s.get("unmatched") or 0) for s in summaries)
    if unmatched:
        details["unmatched"] = unmatched
    if checked == 0:             # zero evidence is no pass: say what was seen
        why = (f"none of {unmatched} responses matched an operation of {source} (a base path the document's "
               "paths do not begin with?)" if unmatched else "no responses to validate")
        return Verdict.inconclusive(REQ, f"{why} ({what})"
                                    + (f"; {'; '.join(errors)}" if errors else ""), behaviour=Behaviour.ALL_TRAFFIC,
                                    details=details)
    if count:
        groups = grouped(summaries)
        details["by_operation"] = groups
        lines = []
        for op, per in groups.items():
            lines.append(f"{op}: {sum(per.values())}")
            for problem, n in sorted(per.items(), key=lambda kv: -kv[1]):
                lines.append(f"  {n}x {problem}")
        shown = problems[:MAX_PROBLEMS]
        v = Verdict.broken(REQ, f"{count} problem(s) in {checked} responses do not conform to {source} ({what}); "
                           f"every one, by operation and problem ({sum(len(p) for p in groups.values())} kinds, "
                           "an example exchange of each):\n" + "\n".join(lines), behaviour=Behaviour.ALL_TRAFFIC,
                           classification=f"{count} problems", exchanges=[ex for _, ex in shown], details=details)
        return v
    return Verdict(REQ, Status.PASS, f"{checked} responses conform to {source} ({what})",
                   behaviour=Behaviour.ALL_TRAFFIC, details=details)
