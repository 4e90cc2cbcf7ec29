"""Discovery checks: DISC-01..04, from ``ctx.discovery`` (`ctk.client.discovery.Discovery`); and what the target
showed about nested namespaces (SEM-02: one it acknowledged creating loads back). DISC-05 (what the catalog claims
is served) is judged over the whole run's traffic (`ctk.plugin.served`), with the judgement every check uses
(`ctk.checks.common.unserved`)."""

from __future__ import annotations

import functools
from typing import Any, Callable

from ctk.checks.common import describe, guarded
from ctk.checks.judging import broken
from ctk.core.behaviours import Behaviour, check, registered
from ctk.catalog import ENDPOINTS, Case, Endpoint
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.catalog.facade import probe_nesting
from ctk.client.keys import new_key
from ctk.checks.context import CheckContext
from ctk.checks.common import Run

KEY = "idempotency-key-lifetime"


def config_check(requirement: str,
                 behaviour: Behaviour) -> Callable[[Callable[..., Verdict]], Callable[..., list[Verdict]]]:
    """A check judged from /v1/config alone, written as ``fn(run, discovery)``: registered and guarded like every
    check (it runs whether or not the target advertises support or the endpoint), with the /v1/config exchange
    as its evidence."""

    def wrap(fn: Callable[..., Verdict]) -> Callable[..., list[Verdict]]:
        @check(requirement=requirement, behaviour=behaviour)
        @guarded(needs_support=False, needs_endpoint=False)
        @functools.wraps(fn)
        def judged(run: Run, ctx: CheckContext, endpoint: Endpoint | None = None) -> Verdict:
            ex = getattr(ctx.discovery, "exchange", None)
            if ex is not None:
                run.extra.append(ex)
            return fn(run, ctx.discovery)
        return judged
    return wrap


@config_check("DISC-01", Behaviour.DISCOVERY)
def check_discovery_advertised(run, d):
    details = {"lifetime_raw": d.lifetime_raw, "misplaced_in": d.misplaced_in, "lifetime_error": d.lifetime_error}
    if d.lifetime is not None:
        return run.ok(f"top-level {KEY} = {d.lifetime_raw!r} ({d.lifetime})", "advertised", details)
    if KEY in d.config:   # present at top level, but not a valid duration
        return broken(run, f"a top-level, valid ISO-8601 {KEY}",
                          f"{KEY} = {d.lifetime_raw!r} is invalid ({d.lifetime_error}); clients must treat the "
                          "target as not supporting Idempotency-Key", "invalid", details)
    return run.unsupported(f"the target does not advertise Idempotency-Key support: {d.lifetime_error}", details)


@config_check("DISC-02", Behaviour.LIFETIME_PLACEMENT)
def check_discovery_placement(run, d):
    details = {"misplaced_in": d.misplaced_in, "lifetime_raw": d.lifetime_raw}
    if d.misplaced_in:
        return broken(run, f"{KEY} is a top-level field of the /v1/config response",
                          f"it sits inside {d.misplaced_in!r} ({d.lifetime_raw!r}), where clients do not look",
                          f"in {d.misplaced_in}", details)
    if KEY in d.config:
        return run.ok(f"{KEY} is top level", "top-level", details)
    return run.unsupported(f"no {KEY} anywhere in /v1/config", details)


@config_check("DISC-03", Behaviour.JAVA_PARSEABLE)
def check_discovery_java(run, d):
    details = {"lifetime_raw": d.lifetime_raw, "java_parseable": d.java_parseable}
    if d.lifetime_raw is None:
        return run.unsupported(f"no {KEY} advertised", details)
    if d.java_parseable:
        return run.ok(f"{d.lifetime_raw!r} is accepted by java.time.Duration.parse", "parseable", details)
    return broken(run, "a lifetime Java's Duration.parse accepts (days, hours, minutes, seconds)",
                      f"{d.lifetime_raw!r} is rejected by Duration.parse", "not parseable", details)


@check(requirement="DISC-04", behaviour=Behaviour.KEY_IGNORED_WHEN_UNSUPPORTED,
       also=(("SEM-02", Behaviour.KEY_IGNORED_WHEN_UNSUPPORTED),))
@guarded(needs_support=False, needs_endpoint=False)
def check_key_ignored_when_unsupported(run: Run, ctx: CheckContext,
                                       endpoint: Endpoint | None = None) -> Verdict | list[Verdict]:
    endpoint = endpoint or ENDPOINTS["createNamespace"]
    run.endpoint = endpoint
    if ctx.discovery is not None and ctx.discovery.idempotency_supported:
        return run.unsupported("not applicable: the target advertises Idempotency-Key support "
                               f"({KEY} = {ctx.discovery.lifetime_raw!r})")
    case = endpoint.prepare(ctx)
    before = case.observe()
    key = new_key()
    ex = case.send(ctx.client, key=key, label="mutation with a key to a target that does not advertise support")
    after = case.observe()
    n = case.executions(before, after)
    details: dict[str, Any] = {"status": ex.status, "executions": n}
    made = _appeared(before, after) if ex.status in endpoint.success and n <= 1 else []
    dropped = _without_sent_properties(case, after, made)
    if ex.status in endpoint.success and n == 1 and not dropped:
        honoured = _honoured_anyway(ctx, case, key, ex, details)
        if honoured:
            return run.ok(f"processed normally ({describe(ex)}); executed once. The target honours the key without "
                          f"advertising support: {honoured}. Clients cannot rely on it (they send keys only to a "
                          f"target that advertises {KEY})", "honoured without advertising", details)
        return run.ok(f"processed normally ({describe(ex)}); executed once", "ignored", details)
    if made and (n == 0 or dropped):
        # the resource exists, only the properties it was created with are not there (a catalog that does not
        # store namespace properties; the case then counts by existence): decided from existence; what was
        # dropped is a finding of its own
        details["exists"] = made
        v = run.ok(f"processed normally ({describe(ex)}); {case.resource} exists (its properties were not stored: "
                   "see SEM-02)", "ignored", details)
        return [v, _properties_not_stored(ctx, endpoint, case, ex, after, made, run.mark)]
    if ex.status in endpoint.success and n == 0:
        # success, but no effect visible: a control without a key tells a key problem from a state the kit
        # cannot observe on this target (e.g. a nested namespace that is created but cannot be loaded)
        control = endpoint.prepare(ctx)
        c_before = control.observe()
        cex = control.send(ctx.client, label="control: the same mutation without a key")
        cn = control.executions(c_before, control.observe())
        details.update(control_status=cex.status, control_executions=cn)
        if cex.status in endpoint.success and cn == 0:
            return run.inconclusive(
                f"{endpoint.operation} answered {describe(ex)} with a key and {describe(cex)} without one, but neither "
                f"effect is visible in state (reading {case.resource} back shows nothing): the kit cannot observe this "
                "operation on the target, so key handling cannot be judged",
                "effect not visible", details)
    return broken(run, "a target that does not advertise support processes a mutation that carries an "
                      "Idempotency-Key as an ordinary request",
                      f"{endpoint.operation} with a key got {describe(ex)}; executions visible in state: {n}",
                      "rejected" if (ex.status or 0) >= 400 else describe(ex), details)


def _honoured_anyway(ctx: CheckContext, case: Case, key: str, first: Exchange, details: dict) -> str | None:
    """Whether a target that advertises no support honours the key all the same: the same request with the same
    key, after an interfering change that makes a re-execution visible, answered as the first and executed
    nothing (a replay). What was seen, or None (executed again, answered otherwise, or not observable)."""
    if case.blind:
        return None
    case.interfere()
    base = case.observe()
    again = case.send(ctx.client, key=key, label="the same key again: does the target honour keys it does not "
                                                 "advertise?")
    extra = case.executions(base, case.observe())
    details.update(duplicate_status=again.status, duplicate_executions=extra)
    if again.status == first.status and case.identity(again) == case.identity(first) and extra == 0:
        return (f"a duplicate with the same key, after {case.resource} was changed behind its back, was answered "
                f"{describe(again)} and executed nothing (a replay)")
    return None


def _appeared(before: dict, after: dict) -> list[str]:
    """The observed resources that did not exist before and exist after (whatever their properties)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    return [k for k, v in after.items() if v is not None and before.get(k) is None]


def _without_sent_properties(case: Case, after: dict, made: list[str]) -> list[str]:
    """Of the resources that appeared, those that lack a property the request created them with."""
    body = case.request.json if isinstance(case.request.json, dict) else {}
    sent = body.get("properties") or {}
    if not sent or not isinstance(after, dict):
        return []
    return [k for k in made if any(((after.get(k) or {}).get("properties") or {}).get(p) != v
                                   for p, v in sent.items())]


def _properties_not_stored(ctx: CheckContext, endpoint: Endpoint, case: Case, ex: Exchange, after: dict, made: list[str],
                          mark: int) -> Verdict:
    """SEM-02's finding: the created resource exists without the properties it was created with. The merged spec
    stores namespace properties "if supported by the server": classified (a pass that names it), never failed."""
    from ctk.checks.common import Run

    run = Run(ctx, "SEM-02", endpoint, Behaviour.KEY_IGNORED_WHEN_UNSUPPORTED)
    run.mark = mark
    sent = (case.request.json or {}).get("properties") if isinstance(case.request.json, dict) else None
    stored = {k: (after.get(k) or {}).get("properties") for k in made}
    details = {"sent_properties": sent, "stored_properties": stored, "status": ex.status,
               "classified": True}     # a behaviour the spec leaves open: a classified pass in the reports
    return run.ok(f"{endpoint.operation} answered {describe(ex)} and {case.resource} exists, but the properties it "
                  f"was created with ({sent}) were not stored (read back: {stored}); the merged spec allows it "
                  "(\u201cProperties stored on the namespace, if supported by the server\u201d)",
                  "namespace properties not stored at create", details)


@check(requirement="SEM-02", behaviour=Behaviour.NESTED_NAMESPACE)
@guarded(needs_support=False, needs_endpoint=False)
def check_nested_namespace_loadable(run: Run, ctx: CheckContext, endpoint: Endpoint | None = None) -> Verdict:
    """A nested namespace the catalog acknowledged creating (2xx) loads back under its levels. A catalog that
    refuses to create one does not support nesting (unsupported, not a failure); one that answers 200 and then
    404 (e.g. it joined the levels with '.' into one name) lost what it acknowledged. Judged from the session's
    nesting probe (``client.placement.probe``), or from a probe of its own below the run namespace."""
    placement = getattr(ctx.client, "placement", None)
    probe = getattr(placement, "probe", None)
    if probe is None:
        probe = probe_nesting(ctx.client, tuple(ctx.namespace), ctx.unique("nesting_probe"))
    run.extra += list(probe.exchanges)
    shown = ".".join(probe.namespace)
    details = {"namespace": list(probe.namespace), "create_status": probe.created, "load_status": probe.loaded,
               "listed_as": [list(n) for n in probe.listed_as], "leftovers": list(probe.leftovers)}
    created = probe.created in (200, 201, 204)
    if not created and probe.created != 409:
        return run.unsupported(f"the target does not create nested namespaces: creating {shown} answered "
                               f"{probe.created}", details)
    if probe.nested:
        return run.ok(f"{shown} created ({probe.created}) and loaded back", "loads back", details)
    if probe.loaded == 404:
        seen = (" The catalog lists it as " + ", ".join(repr(n[0]) if len(n) == 1 else repr(list(n))
                                                         for n in probe.listed_as) + ".") if probe.listed_as else ""
        return broken(run, "a namespace the catalog acknowledged creating loads back under its levels",
                      f"createNamespace {probe.namespace} answered {probe.created}, loading it answered 404.{seen}",
                      "created, not loadable", details)
    return run.inconclusive(f"createNamespace {shown} answered {probe.created}, but loading it back answered "
                            f"{probe.loaded}: whether it exists could not be read", "unreadable", details)


DISCOVERY_CHECKS = [(c.behaviour, c.fn) for c in registered("discovery")]   # (behaviour, function), column order
