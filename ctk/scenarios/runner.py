"""Run a loaded Scenario against the target and return one Verdict.

Setup steps that do not go as expected give an inconclusive verdict (the scenario could not get the state it
needs); check steps that do not go as expected break the scenario's requirement (fail for MUST, deviation
for SHOULD/MAY). A missing capability (no advertised lifetime, no fault injection) gives unsupported.
"""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from urllib.parse import quote
from dataclasses import dataclass, field
from typing import Any

from ctk.checks.common import PLAIN_BROKEN, baseline_blocked
from ctk.core import needs
from ctk.core.verdicts import Verdict
from ctk.core.exchange import Exchange
from ctk.client.keys import new_key
from ctk.scenarios.loader import Scenario, Step


class _Mismatch(Exception):
    def __init__(self, step: Step, message: str):
        super().__init__(message)
        self.step, self.message = step, message


class _Blocked(Exception):
    """A plain setup step (no key) was acknowledged without its effect: the finding of ``requirement`` (a broken
    plain operation); the scenario's verdict would rest on it."""

    def __init__(self, requirement: str, message: str):
        super().__init__(message)
        self.requirement, self.message = requirement, message


class _Unsupported(Exception):
    """The scenario cannot run on this setup; ``needs`` what would let it (``Verdict.needs``), None: not applicable."""

    def __init__(self, message: str, needs: str | None = None):
        super().__init__(message)
        self.needs = needs


# --- faults ------------------------------------------------------------------------------------------

def fault_port(session: Any) -> Any:
    """The CheckContext's fault injector (control API or interposer), else one detected for the client."""
    ctx = getattr(session, "context", None)
    faults = getattr(ctx, "faults", None)
    if faults is not None:
        return faults
    from ctk.checks.faults import detect_injector

    return detect_injector(session.client)


# --- running -----------------------------------------------------------------------------------------

@dataclass
class _Run:
    scenario: Scenario
    session: Any
    names: dict[str, str]
    saved: dict[str, Any] = field(default_factory=dict)
    last_key: str | None = None
    last_status: int | None = None
    faults: Any = None
    used_faults: bool = False
    pending: list[tuple[Step, dict[str, Any]]] = field(default_factory=list)   # faults for the next request

    @property
    def client(self) -> Any:
        return self.session.client


NS_LEVELS = "\x00ns-levels"        # the run namespace's levels (not a placeholder)
CHILD_LEVELS = "\x00child-levels"  # where `{ns}.{child}` goes on a target without nested namespaces


def _enc(levels: list[str]) -> str:
    return "%1F".join(quote(p, safe="") for p in levels)


def placeholders(namespace: str | tuple[str, ...] | list[str], placement: Any = None) -> dict[str, Any]:
    """The values of the placeholders. ``{ns}`` is the run namespace: in a path its levels percent-encoded and
    joined by %1F, as a list element (``["{ns}", "{child}"]``) its levels spliced in, alone as a string its
    levels joined by "." (a run namespace inside --ctk-parent-namespace has several levels). On a target
    without nested namespaces (``placement.nested`` False) ``{ns}.{child}`` is a run-unique sibling of the run
    namespace, registered with the placement for cleanup."""
    levels = [namespace] if isinstance(namespace, str) else list(namespace)
    uid = uuid.uuid4().hex[:10]
    names: dict[str, Any] = {"ns": _enc(levels), "uid": uid, "table": f"t_{uid}", "view": f"v_{uid}",
                             "child": f"c_{uid}", NS_LEVELS: levels}
    if placement is not None and placement.nested is False and tuple(placement.run) == tuple(levels):
        names[CHILD_LEVELS] = list(placement.child(names["child"]))
    return names


def fill(value: Any, names: dict[str, Any]) -> Any:
    levels = names.get(NS_LEVELS) or []
    sibling = names.get(CHILD_LEVELS)
    if isinstance(value, str):
        if value == "{ns}" and levels:
            return ".".join(levels)
        out = value.replace("{ns}%1F{child}", _enc(sibling)) if sibling else value
        for k, v in names.items():
            if k not in (NS_LEVELS, CHILD_LEVELS):
                out = out.replace("{" + k + "}", v)
        return out
    if isinstance(value, list):
        out_list: list[Any] = []
        i = 0
        while i < len(value):
            v = value[i]
            if v == "{ns}" and sibling and i + 1 < len(value) and value[i + 1] == "{child}":
                out_list.extend(sibling)
                i += 2
                continue
            if v == "{ns}" and levels:
                out_list.extend(levels)
            else:
                out_list.append(fill(v, names))
            i += 1
        return out_list
    if isinstance(value, dict):
        return {fill(k, names): fill(v, names) for k, v in value.items()}
    return value


def run_scenario(scenario: Scenario, session: Any) -> Verdict:
    req = scenario.requirement
    kw = dict(endpoint=scenario.endpoint, behaviour=scenario.behaviour)
    client = session.client
    mark = len(client.exchanges)
    run = _Run(scenario, session, placeholders(getattr(session, "namespace_parts", None) or session.namespace,
                                               getattr(session, "placement", None)))
    run.faults = fault_port(session)

    def exchanges() -> list[dict[str, Any]]:
        return [e.to_dict() for e in client.exchanges_since(mark)]

    try:
        _check_requires(run)
        blocked = _baseline(session, scenario)
        if blocked is not None:
            rid, why = blocked
            return Verdict.inconclusive(req, why, exchanges=exchanges(), classification=PLAIN_BROKEN,
                                        details={"blocked_by": rid, "from_scenario": scenario.name}, **kw)
        for step in scenario.setup:
            try:
                _do(run, step)
            except _Mismatch as m:
                return Verdict.inconclusive(req, f"setup {m.step.where} did not go as needed: {m.message}",
                                            exchanges=exchanges(), **kw)
            except _Blocked as b:
                return Verdict.inconclusive(
                    req, f"setup {step.where} showed a broken plain operation ({b.requirement}): {b.message}; the "
                         "scenario rests on it", exchanges=exchanges(), classification="setup broken",
                    details={"blocked_by": b.requirement, "finding": b.message, "from_scenario": scenario.name},
                    **kw)
        for step in scenario.steps:
            _do(run, step)
    except _Unsupported as exc:
        from ctk.checks.faults import unread_probe

        probe = unread_probe(run.faults) if "/_ctk" in f"{exc} {exc.needs or ''}" else None
        if probe is not None:   # the control API's probe could not be read: not known to be absent
            return Verdict.inconclusive(req, f"probe failed: {probe.failed}; the scenario needs what it would have "
                                        f"told ({exc})", exchanges=[e.to_dict() for e in probe.exchanges]
                                        + exchanges(), classification="probe failed", **kw)
        return Verdict.unsupported(req, str(exc), needs=exc.needs, exchanges=exchanges(), **kw)
    except _Mismatch as m:
        what = f"{m.step.where}" + (f" ({m.step.label})" if m.step.label else "")
        return Verdict.broken(req, f"scenario {scenario.name!r}, {what}: {m.message}", exchanges=exchanges(),
                              classification=_classification(run), details={"from_scenario": scenario.name}, **kw)
    finally:
        if run.used_faults:
            try:
                run.faults.clear()
            except Exception:  # noqa: BLE001 - best effort
                pass
    return Verdict.ok(req, f"scenario {scenario.name!r}: every expectation met", exchanges=exchanges(),
                      classification=_classification(run), **kw)


def _baseline(session: Any, scenario: Scenario) -> tuple[str, str] | None:
    """Semantics first: (requirement, why) when the plain operation of the scenario's endpoint is broken
    (its baseline, ctk.checks.semantics.baseline; asked of the session's check context)."""
    ctx = getattr(session, "context", None)
    if ctx is None or not scenario.endpoint:
        return None
    return baseline_blocked(ctx, (scenario.endpoint,))


def _classification(run: _Run) -> str | None:
    return None if run.last_status is None else f"status {run.last_status}"


def _check_requires(run: _Run) -> None:
    for cap in run.scenario.requires:
        if cap == "idempotency":
            d = run.session.discovery
            if d is None or not getattr(d, "idempotency_supported", False):
                why = getattr(d, "lifetime_error", None) or "no discovery"
                raise _Unsupported(f"the target does not advertise idempotency-key-lifetime ({why})")
        elif cap in ("faults", "control-api"):
            if not _faults_available(run):
                raise _Unsupported("no fault injection: the target has no control API (/_ctk) and the check "
                                   "context offers no injector")


def _faults_available(run: _Run) -> bool:
    supports = getattr(run.faults, "supports", None)
    return bool(callable(supports) and supports("lose_answer"))


def _do(run: _Run, step: Step) -> None:
    handler = {"request": _request, "fault": _fault, "wait": _wait, "observe": _observe,
               "clear_faults": _clear}[step.kind]
    handler(run, step)


def _request(run: _Run, step: Step) -> None:
    spec = step.spec
    key_mode = spec.get("key", "none")
    key: str | None
    if key_mode == "new":
        run.last_key = new_key()
        key = run.last_key
    elif key_mode == "same":
        key = run.last_key
    elif key_mode == "none":
        key = None
    else:
        key = fill(key_mode, run.names)
        run.last_key = key
    method, path = spec["method"].upper(), fill(spec["path"], run.names)
    pending, run.pending = run.pending, []
    for fstep, fspec in pending:
        _arm(run, fstep, fspec, method, path, key)
    ex: Exchange = run.client.request(
        method, path, json=fill(spec.get("body"), run.names),
        headers=fill(spec.get("headers"), run.names) or None, idempotency_key=key,
        header_name=spec.get("header", "Idempotency-Key"), label=step.label or spec.get("label") or step.where)
    run.last_status = ex.status
    if step.save:
        run.saved[step.save] = ex
    _expect_response(run, step, ex)
    if step.phase == "setup" and key is None and not pending and ex.status is not None and 200 <= ex.status < 300:
        _read_back(run, method, path, fill(spec.get("body"), run.names), ex)


_NS = r"namespaces/(?P<ns>[^/]+)"


def _read_back(run: _Run, method: str, path: str, body: Any, ex: Exchange) -> None:
    """A plain setup step (no key, no fault) acknowledged 2xx must show its effect before the scenario rests on
    it: a drop leaves the object gone, a create makes it load, a properties update is loaded back, a table
    commit's metadata-location is the next load's. Otherwise `_Blocked`, naming the plain operation broken."""
    c = run.client
    path = path.split("?", 1)[0].strip("/")

    def status(p: str) -> int | None:
        return c.request("GET", p, label="setup: read back").status

    if method == "DELETE":
        for pattern, rid, what in ((_NS + r"/tables/[^/]+", "TBL-08", "table"),
                                   (_NS + r"/views/[^/]+", "VIEW-05", "view"), (_NS, "NS-06", "namespace")):
            if re.fullmatch(pattern, path):
                got = status(path)
                if got is not None and got < 500 and got != 404:
                    raise _Blocked(rid, f"dropping the {what} ({method} {path}) answered {ex.status}, but loading it "
                                        f"answered {got}")
                return
        return
    if method != "POST" or not isinstance(body, dict):
        return
    if path == "namespaces" and isinstance(body.get("namespace"), list):
        target = f"namespaces/{_enc([str(x) for x in body['namespace']])}"
        got = status(target)
        if got == 404:
            raise _Blocked("NS-01", f"creating the namespace answered {ex.status}, but loading it answered 404")
        return
    m = re.fullmatch(_NS + r"/(?P<kind>tables|views)", path)
    if m and isinstance(body.get("name"), str) and not body.get("stage-create"):
        got = status(f"{path}/{quote(body['name'], safe='')}")
        if got == 404:
            rid = "TBL-01" if m.group("kind") == "tables" else "VIEW-01"
            raise _Blocked(rid, f"creating {body['name']} ({method} {path}) answered {ex.status}, but loading it "
                                "answered 404")
        return
    if re.fullmatch(_NS + r"/properties", path) and isinstance(body.get("updates"), dict):
        got_ex = c.request("GET", path.rsplit("/", 1)[0], label="setup: read back")
        props = ((got_ex.json() or {}).get("properties") if got_ex.status == 200 else None)
        if isinstance(props, dict):
            wrong = {k: props.get(k) for k, v in body["updates"].items() if props.get(k) != v}
            wrong.update({k: props[k] for k in body.get("removals") or [] if k in props})
            if wrong:
                raise _Blocked("NS-04", f"updateProperties answered {ex.status}, but the namespace then shows {wrong}")
        return
    if re.fullmatch(_NS + r"/tables/[^/]+", path):
        answered = (ex.json() or {}).get("metadata-location") if isinstance(ex.json(), dict) else None
        got_ex = c.request("GET", path, label="setup: read back")
        shown = (got_ex.json() or {}).get("metadata-location") if got_ex.status == 200 and \
            isinstance(got_ex.json(), dict) else None
        if answered and shown and shown != answered:
            raise _Blocked("EVO-01", f"a commit answered {ex.status} with metadata-location {answered}, but the next "
                                     f"load shows {shown}")


def _status_text(ex: Exchange) -> str:
    return f"no answer ({ex.error})" if ex.status is None else str(ex.status)


def _expect_response(run: _Run, step: Step, ex: Exchange) -> None:
    e = step.expect
    if "status" in e:
        wanted = e["status"] if isinstance(e["status"], list) else [e["status"]]
        got = "none" if ex.status is None else ex.status
        if got not in wanted:
            raise _Mismatch(step, f"expected status {' or '.join(map(str, wanted))}, got {_status_text(ex)}")
    body = ex.json()
    if "body" in e:
        for path, want in fill(e["body"], run.names).items():
            have, found = _dig(body, path)
            if not found or have != want:
                shown = "absent" if not found else json.dumps(have)
                raise _Mismatch(step, f"expected body field {path} = {json.dumps(want)}, got {shown}")
    if "same_status_as" in e:
        other: Exchange = run.saved[e["same_status_as"]]
        if other.status != ex.status:
            raise _Mismatch(step, f"expected the status of {e['same_status_as']!r} ({_status_text(other)}), "
                                  f"got {_status_text(ex)}")
    if "same_body_as" in e:
        other = run.saved[e["same_body_as"]]
        if other.json() != body:
            raise _Mismatch(step, f"expected a body equivalent to {e['same_body_as']!r}'s; "
                                  f"got {(ex.response_body or '')[:300]!r}")
    if "subtype" in e:
        err = body.get("error") if isinstance(body, dict) else None
        sub = err.get("subtype") if isinstance(err, dict) else None
        typ = err.get("type") if isinstance(err, dict) else None
        if e["subtype"] not in (sub, typ):
            raise _Mismatch(step, f"expected error subtype {e['subtype']!r}, got subtype={sub!r} type={typ!r}")


def _dig(value: Any, path: str) -> tuple[Any, bool]:
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None, False
    return value, True


def _fault(run: _Run, step: Step) -> None:
    """Arm a fault for the scenario's next request (the injector needs its method, path and key)."""
    if not _faults_available(run):
        raise _Unsupported("the scenario injects a fault but the target offers no fault injection "
                           "(no control API, no interposer)")
    run.pending.append((step, fill(step.spec, run.names)))


def _arm(run: _Run, step: Step, spec: dict[str, Any], method: str, path: str, key: str | None) -> None:
    from ctk.checks.faults import FaultMatch, FaultUnsupported

    match = FaultMatch(spec.get("operation") or run.scenario.endpoint, spec.get("method", method).upper(),
                       spec.get("path", path), key)
    action = spec["action"]
    f = run.faults
    try:
        if action == "lose_answer":
            f.lose_answer(match, mode=str(spec.get("mode", "drop")))
        elif action == "fail_after_commit":
            f.lose_answer(match, mode=str(spec.get("status", 503)))
        elif action == "fail_before":
            f.fail_before(match, status=int(spec.get("status", 503)))
        elif action == "delay":
            f.delay(match, float(spec.get("seconds", 1.0)))
        elif action == "crash_before_finalize":
            f.crash_before_finalize(match)
        elif action == "corrupt_stored_response":
            f.corrupt_stored_response(match)
        else:  # pragma: no cover - the loader validates actions
            raise _Unsupported(f"unknown fault action {action!r}")
    except FaultUnsupported as exc:
        raise _Unsupported(f"{step.where}: fault {action}: {exc}", needs=exc.needs) from None
    run.used_faults = True


def _wait(run: _Run, step: Step) -> None:
    seconds = step.spec
    max_wait = run.session.options.max_wait
    if seconds == "lifetime":
        d = run.session.discovery
        lifetime = getattr(d, "lifetime", None)
        if lifetime is None:
            raise _Unsupported("the scenario waits for the idempotency-key-lifetime, which is not advertised")
        seconds = lifetime.total_seconds()
    if seconds > max_wait:
        raise _Unsupported(f"the scenario would wait {seconds:g} s, longer than --ctk-max-wait {max_wait:g} s",
                           needs=needs.max_wait(math.ceil(seconds)))
    time.sleep(float(seconds))


def _clear(run: _Run, step: Step) -> None:
    if step.spec:
        run.faults.clear()
        run.used_faults = False


def _observe(run: _Run, step: Step) -> None:
    args = fill(step.args, run.names)
    value = query(run, step.spec, args)
    if step.save:
        run.saved[step.save] = value
    e = step.expect
    if not e:
        return
    shown = json.dumps(value, default=str)
    base = value
    if "delta_from" in e:
        before = run.saved[e["delta_from"]]
        if not isinstance(value, (int, float)) or not isinstance(before, (int, float)):
            raise _Mismatch(step, f"{step.spec}: cannot take a difference of {shown} and {before!r}")
        base = value - before
        shown = f"{base} (from {before} to {value})"
    if "value" in e and base != fill(e["value"], run.names):
        raise _Mismatch(step, f"{step.spec}{_argtext(args)}: expected {json.dumps(e['value'])}, observed {shown}")
    if "value_in" in e and base not in fill(e["value_in"], run.names):
        raise _Mismatch(step, f"{step.spec}{_argtext(args)}: expected one of {e['value_in']}, observed {shown}")
    if "at_least" in e and not (isinstance(base, (int, float)) and base >= e["at_least"]):
        raise _Mismatch(step, f"{step.spec}{_argtext(args)}: expected at least {e['at_least']}, observed {shown}")
    if "at_most" in e and not (isinstance(base, (int, float)) and base <= e["at_most"]):
        raise _Mismatch(step, f"{step.spec}{_argtext(args)}: expected at most {e['at_most']}, observed {shown}")


def _argtext(args: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"


def _ns(value: Any) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, list) else tuple(str(value).split("."))


def query(run: _Run, name: str, args: dict[str, Any]) -> Any:
    """A state query (see ctk/scenarios/schema.py). Raises _Mismatch when the state cannot be read."""
    c = run.client
    if name == "namespace_exists":
        return c.load_namespace(_ns(args["namespace"])) is not None
    if name == "table_exists":
        return c.load_table(_ns(args["namespace"]), args["table"]) is not None
    if name == "view_exists":
        return c.load_view(_ns(args["namespace"]), args["view"]) is not None
    if name == "property":
        if args["kind"] == "namespace":
            doc = c.load_namespace(_ns(args["namespace"]))
            props = (doc or {}).get("properties") or {}
        else:
            doc = c.load_table(_ns(args["namespace"]), args["table"])
            props = ((doc or {}).get("metadata") or {}).get("properties") or {}
        return props.get(args["key"])
    if name in ("metadata_log_length", "snapshot_count"):
        doc = c.load_table(_ns(args["namespace"]), args["table"])
        if doc is None:
            return None
        meta = doc.get("metadata") or {}
        return len(meta.get("metadata-log") or []) if name == "metadata_log_length" else len(meta.get("snapshots") or [])
    if name == "executions":
        get = getattr(run.faults, "executions", None)
        counters = get() if callable(get) else None
        if counters is None:
            raise _Unsupported("execution counters need the control API (/_ctk/executions)")
        op = args.get("operation")
        return counters.get("total", 0) if not op else (counters.get("by_operation") or {}).get(op, 0)
    raise _Unsupported(f"unknown state query {name!r}")
