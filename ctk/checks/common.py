"""Shared plumbing of the checks: exchange recording, verdict building, gating, error helpers."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

from ctk.checks.faults import FaultUnsupported, unread_probe
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Verdict
from ctk.catalog import Endpoint, PrerequisiteError
from ctk.client.errors import EffectMissing
from ctk.core.exchange import Exchange, render_exchanges
from ctk.checks.context import CheckContext


class Run:
    """One check run: remembers where its exchanges start and builds verdicts that carry them."""

    def __init__(self, ctx: CheckContext, requirement: str, endpoint: Endpoint | None, behaviour: Behaviour | str):
        self.ctx, self.requirement, self.endpoint = ctx, requirement, endpoint
        self.behaviour = Behaviour.parse(behaviour, f"check of {requirement}")
        self.mark = len(ctx.client.exchanges)
        self.extra: list[Exchange] = []      # exchanges from before the mark that belong to the verdict

    def exchanges(self) -> list[Exchange]:
        return list(self.extra) + list(self.ctx.client.exchanges[self.mark:])

    def _kw(self, classification: str | None, details: dict | None) -> dict:
        return dict(endpoint=self.endpoint.operation if self.endpoint else None, behaviour=self.behaviour,
                    classification=classification, exchanges=[e.to_dict() for e in self.exchanges()],
                    details=details or {})

    def ok(self, message: str, classification: str | None = None, details: dict | None = None) -> Verdict:
        return Verdict.ok(self.requirement, message, **self._kw(classification, details))

    def broken(self, expected: str, happened: str, classification: str | None = None,
               details: dict | None = None) -> Verdict:
        kw = self._kw(classification, details)
        text = (f"expected: {expected}\nhappened: {happened}\n\nexchanges:\n"
                + render_exchanges(kw["exchanges"], limit=1500))
        return Verdict.broken(self.requirement, text, **kw)

    def unsupported(self, reason: str, details: dict | None = None, needs: str | None = None) -> Verdict:
        return self._probe_failed(reason, needs, None, details) or Verdict.unsupported(
            self.requirement, reason, needs=needs, **self._kw(None, details))

    def _probe_failed(self, reason: str, needs: str | None, classification: str | None,
                      details: dict | None) -> Verdict | None:
        """A verdict that would say "needs the control API" while the probe that tells whether the target has
        it (GET /_ctk) could not be read: undecided "probe failed: <what was seen>", with the probe's exchanges,
        never "absent"."""
        probe = unread_probe(self.ctx.faults) if needs and "/_ctk" in needs else None
        if probe is None:
            return None
        self.extra = list(probe.exchanges) + [e for e in self.extra if e not in probe.exchanges]
        kw = self._kw(classification or "probe failed", {**(details or {}), "probe_failed": probe.failed})
        text = (f"probe failed: {probe.failed}; so whether the target has what this check needs ({needs}) is not "
                f"known, and the check is not decided (it would have said: {reason})")
        text += "\n\nexchanges:\n" + render_exchanges(kw["exchanges"][-12:], limit=800)
        return Verdict.inconclusive(self.requirement, text, **kw)

    def crashed(self, exc: BaseException) -> Verdict:
        """The check raised ``exc``: an error verdict with the exception and the last exchange of the run."""
        kw = self._kw("crashed", None)
        last = kw["exchanges"][-1] if kw["exchanges"] else None
        return Verdict.crashed(self.requirement, exc, last, where=self.behaviour or "",
                               endpoint=kw["endpoint"], behaviour=kw["behaviour"], classification="crashed",
                               exchanges=kw["exchanges"][-12:])

    def inconclusive(self, reason: str, classification: str | None = None, details: dict | None = None,
                     needs: str | None = None) -> Verdict:
        failed = self._probe_failed(reason, needs, classification, details)
        if failed is not None:
            return failed
        kw = self._kw(classification, details)
        ex = kw["exchanges"]
        text = reason + ("\n\nexchanges:\n" + render_exchanges(ex[-12:], limit=800) if ex else "")
        return Verdict.inconclusive(self.requirement, text, needs=needs, **kw)


# Hooks asked before an endpoint's check runs: ``gate(ctx, operation)`` -> (requirement, why) when the plain
# operation is broken (ctk.checks.semantics.baseline installs one; this module names no semantics).
BASELINE_GATES: list[Callable[[CheckContext, str], "tuple[str, str] | None"]] = []
PLAIN_BROKEN = "plain operation broken"     # the classification of a verdict a broken plain operation blocked


def baseline_blocked(ctx: CheckContext, operations: "tuple[str, ...] | list[str]") -> tuple[str, str] | None:
    """(requirement, why) of the first of ``operations`` whose plain operation (its baseline) is broken, asked
    of every hook in BASELINE_GATES; None when every one held (or no hook is installed)."""
    for op in dict.fromkeys(operations):
        for gate in BASELINE_GATES:
            blocked = gate(ctx, op)
            if blocked is not None:
                return blocked
    return None


def blocked_verdict(run: "Run", blocked: tuple[str, str]) -> Verdict:
    """The inconclusive verdict of a check whose retries would rest on a broken plain operation: it names the
    semantic finding (``details.blocked_by``), which the root causes list first."""
    rid, why = blocked
    return run.inconclusive(why, classification=PLAIN_BROKEN, details={"blocked_by": rid})


def effect_missing(run: "Run", exc: EffectMissing) -> Verdict:
    """Inconclusive: a setup or interference step of the check was acknowledged without its effect (a broken
    plain operation, ``exc.requirement``); the verdict would rest on it."""
    if exc.exchange is not None and all(e is not exc.exchange for e in run.exchanges()):
        run.extra.append(exc.exchange)
    return run.inconclusive(f"a setup step showed a broken plain operation ({exc.requirement}): {exc}; this check "
                            "rests on it", classification="setup broken",
                            details={"blocked_by": exc.requirement, "finding": str(exc)})


def guarded(requirement: str | None = None, behaviour: Behaviour | None = None, needs_support: bool = True,
            needs_endpoint: bool = True, also: tuple[tuple[str, Behaviour], ...] = (),
            gate_on: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., list[Verdict]]]:
    """Decorator for a check ``fn(run, ctx, endpoint, ...) -> Verdict | list[Verdict]``.

    Applies the common gates (endpoint advertised, idempotency advertised) and turns a failing
    prerequisite into inconclusive and a missing fault capability into unsupported. The wrapped function
    is called as ``check(ctx, endpoint, ...)`` and always returns a list of verdicts. ``also`` names further
    (requirement, behaviour) pairs the check reports on; the gates give them the same verdict.

    Below ``@check(requirement=..., behaviour=...)`` (ctk.core.behaviours) it takes the requirement, behaviour
    and ``also`` from that registration; a check built at run time (a network scenario) names them here.

    Semantics first: where the plain operation of the endpoint, or of an operation in ``gate_on`` (a check
    without an endpoint of its own: the concurrency checks rest on updateTable), is broken (BASELINE_GATES),
    every verdict is inconclusive naming that finding; a setup step acknowledged without its effect
    (`EffectMissing`) is too.
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., list[Verdict]]:
        @functools.wraps(fn)
        def check(ctx: CheckContext, endpoint: Endpoint | None = None, *args: Any, **kw: Any) -> list[Verdict]:
            reg = getattr(check, "ctk_check", None)
            req = requirement or (reg.requirement if reg else None)
            if req is None:
                raise TypeError(f"{fn.__qualname__}: guarded() needs a requirement, or @check(...) above it")
            pairs = also or (reg.also if reg else ())
            beh = Behaviour.parse(kw.pop("behaviour", None) or behaviour or (reg.behaviour if reg else None),
                                  f"{fn.__qualname__}")
            run = Run(ctx, req, endpoint, beh)
            runs = [run] + [Run(ctx, r, endpoint, b) for r, b in pairs]
            if needs_endpoint and endpoint is not None:
                ok, why = endpoint.supported(ctx.discovery)
                if not ok:
                    return [r.unsupported(f"{endpoint.operation} not offered by the target: {why}") for r in runs]
            if needs_support and not ctx.idempotency_supported:
                why = getattr(ctx.discovery, "lifetime_error", None) or "no discovery"
                return [r.unsupported("the target does not advertise Idempotency-Key support "
                                      f"(idempotency-key-lifetime: {why})") for r in runs]
            gated = ((endpoint.operation,) if endpoint is not None else ()) + tuple(gate_on)
            blocked = baseline_blocked(ctx, gated)   # semantics first: no retry verdict on a broken plain operation
            if blocked is not None:
                return [blocked_verdict(r, blocked) for r in runs]
            try:
                out = fn(run, ctx, endpoint, *args, **kw)
            except EffectMissing as exc:
                return [effect_missing(r, exc) for r in runs]
            except PrerequisiteError as exc:
                ex = getattr(exc, "exchange", None)
                step = unserved_step(ctx.discovery, ex, control_sender(ctx.client)) if ex is not None else None
                if step is not None:
                    return [unserved_verdict(r, step, str(exc)) for r in runs]
                return [r.inconclusive(setup_failed(exc)) for r in runs]
            except FaultUnsupported as exc:
                return [r.unsupported(str(exc), needs=exc.needs) for r in runs]
            except Exception as exc:  # noqa: BLE001 - the check crashed: an error verdict, never a lost one
                from ctk.history.writer import StageError

                if isinstance(exc, StageError):
                    return [r.inconclusive(f"a setup step failed: staging an append: {exc}") for r in runs]
                return [r.crashed(exc) for r in runs]
            finally:
                try:
                    ctx.faults.clear()
                except Exception:  # pragma: no cover - best effort
                    pass
            out = out if isinstance(out, list) else [out]
            if endpoint is not None and any(v.status.value != "unsupported" for v in out):
                # every request to the operation answered like a router that does not know it: nothing about
                # the operation was exercised, whatever the verdict said (a "replayed" router 404 is no pass)
                found = unserved(ctx.discovery, runs[0].exchanges(), endpoint.method, endpoint.template,
                                 endpoint.operation, control_sender(ctx.client), ctx.client.exchanges)
                if found is not None:
                    return [unserved_verdict(r, found) for r in runs]
            return out

        check.requirement = requirement  # type: ignore[attr-defined]
        check.behaviour = behaviour  # type: ignore[attr-defined]
        return check

    return wrap


def setup_failed(exc: PrerequisiteError) -> str:
    """The reason of an inconclusive verdict whose setup step failed, naming that step's exchange."""
    ex = getattr(exc, "exchange", None)
    if ex is not None and ex.method == "GET" and (ex.status is None or ex.status >= 500) \
            and (ex.label or "").startswith(("observe", "state", "read")):
        what = f"{ex.status}" if ex.status is not None else f"no answer: {ex.error}"
        return (f"state unreadable ({what}): reading catalog state failed, so nothing can be judged: {exc} "
                f"(exchange: {ex.method} {ex.url} -> {describe(ex)})")
    text = f"a setup step failed, so the requirement could not be exercised: {exc}"
    if ex is not None:
        text += f" (setup exchange: {ex.method} {ex.url} -> {describe(ex)})"
    return text


def error_of(ex: Exchange) -> dict:
    body = ex.json()
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return {}


def describe(ex: Exchange) -> str:
    if ex.status is None:
        return f"no answer ({ex.error})"
    e = error_of(ex)
    if e:
        sub = f", subtype {e.get('subtype')}" if e.get("subtype") else ""
        return f"{ex.status} {e.get('type')}{sub}"
    return str(ex.status)


def commit_answer(ex: Exchange) -> tuple[str, str]:
    """What an answer to a table commit (or a transaction) says, judged by its STATUS, as (kind, text).

    ``applied``       2xx without an error body
    ``conflict``      409, whatever its error ``type``: Java and pyiceberg map a commit 409 by status (a missing
                      or different ``type`` is a SCHEMA-01 matter, named in the text, never an OCC failure)
    ``error-200``     2xx carrying an error body: "an error answered with status 200"
    ``conflict-400``  400: a conflict answered 400, which clients do not refresh and retry
    ``unknown``       5xx or no answer: commit state unknown to a client (CommitStateUnknown), neither success
                      nor refusal
    ``other``         anything else (named by status and error type)
    """
    if ex.status is None:
        return "unknown", f"no answer ({ex.error}): commit state unknown to a client"
    err = error_of(ex)
    if 200 <= ex.status < 300:
        if err:
            return "error-200", (f"an error answered with status {ex.status} (error type {err.get('type')!r}: "
                                 f"{str(err.get('message', ''))[:120]})")
        return "applied", f"{ex.status} (accepted)"
    if ex.status == 409:
        t = err.get("type") if err else None
        if t == "CommitFailedException":
            return "conflict", "409 CommitFailedException"
        why = (f"error type {t!r}" if t else "an error body without `type`" if err else "no error body")
        return "conflict", f"409 with {why} (clients map a commit 409 by its status; the body is SCHEMA-01's matter)"
    if ex.status == 400:
        return "conflict-400", (f"a conflict answered 400 ({describe(ex)}) instead of 409: clients read a 400 as a "
                                "bad request and do not refresh and retry")
    if ex.status >= 500:
        return "unknown", f"{describe(ex)}: commit state unknown to a client (CommitStateUnknown), not a conflict"
    return "other", describe(ex)


NOT_ROUTED_TYPES = ("nosuchoperation", "notimplemented", "unsupportedoperation", "operationnotsupported",
                    "notsupported")


def not_routed(ex: Exchange) -> str | None:
    """Why ``ex`` says the target does not serve the operation at all (None when it does): 404/405 without an
    error model (a router's answer), any 405 (the method is not allowed on the path: no operation of the document
    answers it), 501, or an error type such as NoSuchOperation / NotImplemented."""
    if ex.status is None:
        return None
    err = error_of(ex)
    t = str(err.get("type") or "").lower().replace("_", "").replace("-", "")
    if any(n in t for n in NOT_ROUTED_TYPES):
        return f"{ex.method} answered {describe(ex)}"
    if ex.status == 501:
        return f"{ex.method} answered 501 (not implemented)"
    if ex.status in (404, 405) and not err:
        return f"{ex.method} answered {ex.status} without an error model (not routed)"
    if ex.status == 405:
        return f"{ex.method} answered {describe(ex)} (method not allowed)"
    return None


def unrouted_answers(exchanges: list[Exchange], route_of: Callable[[Exchange], tuple[str, str] | None],
                     advertised: Callable[[str, str], bool] | None = None) -> dict[int, str]:
    """``id(exchange) -> why`` for the answers that show their route is not served, decided from the route and
    the advertised endpoints, not from the body's shape: `not_routed`'s explicit signs (501, a
    NoSuchOperation-like type) always; a 404/405 without an error model only when its route (``route_of``:
    (method, template), None for a path the document does not know) is not advertised (``advertised`` False) or
    was answered nothing else in ``exchanges``. A 404 with a flat error body on a route the catalog serves is
    that route's answer (SCHEMA-01 validates it)."""
    def bare(ex: Exchange) -> bool:
        return ex.status in (404, 405) and not error_of(ex)

    served: set[tuple[str, str]] = set()
    for ex in exchanges:
        route = route_of(ex) if ex.status is not None else None
        if route is not None and not bare(ex) and not_routed(ex) is None:
            served.add(route)
    out: dict[int, str] = {}
    for ex in exchanges:
        why = not_routed(ex)
        if why is None:
            continue
        if not bare(ex):
            out[id(ex)] = why
            continue
        route = route_of(ex)
        if route is None:
            out[id(ex)] = f"{why}; the path matches no operation of the document"
        elif advertised is not None and not advertised(*route):
            out[id(ex)] = f"{why}; {route[0]} {route[1]} is not advertised"
        elif route not in served:
            out[id(ex)] = f"{why}; {route[0]} {route[1]} answered nothing else"
    return out


def _template_regex(template: str) -> re.Pattern:
    parts = re.split(r"\{[^}]+\}", template)
    return re.compile("/" + "[^/]+".join(re.escape(p) for p in parts) + r"(\?|$)")


UNROUTED_SEGMENT = "ctk-no-such-route"
CONTROL_LABEL = "probe: a path no catalog serves, to compare its answer with the operation's"
DISC_UNSERVED = "DISC-05"                       # an operation the catalog claims is not served
ADVERTISED_UNSERVED = "advertised but not served"


def unserved_sign(ex: Exchange) -> str | None:
    """What in the answer alone shows its route is not served (`not_routed`), None when nothing does. A HEAD's
    404 is never one: a HEAD answer has no body, so its 404 is the operation's own "does not exist"."""
    if ex.method == "HEAD" and ex.status == 404:
        return None
    return not_routed(ex)


def claimed_by(discovery: Any, method: str, template: str) -> str | None:
    """Where the catalog claims ``method template`` (relative to /v1/{prefix}/): "its endpoints list", or the
    spec's default set when /v1/config sends no list ("If a server does not send the `endpoints` field, a
    default set of endpoints is assumed"); None when it does not claim it (or nothing was discovered)."""
    if discovery is None or not hasattr(discovery, "supports") or not discovery.supports(method, template):
        return None
    if getattr(discovery, "endpoints", None) is not None:
        return "its /v1/config endpoints list"
    return "the spec's default endpoint set (its /v1/config sends no endpoints list)"


@dataclass(frozen=True)
class Unserved:
    """An operation every request to which was answered as by a router that does not know its path (or refused
    with 405/501, or a NoSuchOperation-like type): not served. ``claimed`` says where the catalog claims it (then
    a DISC-05 finding), None where it does not (the operation is not offered: unsupported)."""

    operation: str
    method: str
    template: str
    claimed: str | None
    seen: str                       # what was seen, with the request count
    exchange: Exchange              # the first request answered so
    control: Exchange | None = None  # the answer to a path no catalog serves it was compared with

    def to_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "endpoint": f"{self.method} /v1/{{prefix}}/{self.template}",
                "claimed_by": self.claimed, "seen": self.seen, "exchange": self.exchange.to_dict(),
                "control": self.control.to_dict() if self.control is not None else None}


def served_answer(ex: Exchange) -> bool:
    """An answer only a handler of the route gives: answered below 500, not a 404, and no sign of `unserved`."""
    return ex.status is not None and ex.status < 500 and ex.status != 404 and unserved_sign(ex) is None


def requests_to(exchanges: list[Exchange], method: str, template: str) -> list[Exchange]:
    """The requests in ``exchanges`` to ``method template`` (relative to /v1/{prefix}/) whose answer is the
    catalog's: not a fault the kit armed, not a key reused on another operation on purpose, not the control API
    or a control request of `control_sender`."""
    rx, method = _template_regex(template), method.upper()
    return [e for e in exchanges if e.method == method and rx.search(e.url.split("://", 1)[-1])
            and not (e.label or "").startswith(("fault:", "reused key:", CONTROL_LABEL)) and "/_ctk" not in e.url]


def unserved(discovery: Any, exchanges: list[Exchange], method: str, template: str, operation: str | None = None,
             control: Callable[[Exchange], Exchange | None] | None = None,
             history: list[Exchange] | None = None) -> Unserved | None:
    """The one judgement of "not served", used by every check and by the run's DISC-05 verdict: every request
    in ``exchanges`` to ``method template`` (relative to /v1/{prefix}/) was answered as unserved - a sign in
    the answer itself (`unserved_sign`: 404/405 without an error model, 405, 501, a NoSuchOperation-like type), or
    a 404 with an error model identical to what a path no catalog serves is answered (``control(first)``: a
    router with an error model of its own, as SeaweedFS; an ordinary 404 about a missing resource differs from
    it). None when the operation answered anything else, was never reached, or an answer to it in ``history``
    (the process's traffic) shows a handler (`served_answer`). ``claimed`` of the result (`claimed_by`) tells a
    DISC-05 finding from an operation the catalog does not offer."""
    method = method.upper()
    hits = requests_to(exchanges, method, template)
    if not hits or any(served_answer(e) for e in requests_to(history or [], method, template)):
        return None
    signs = [unserved_sign(e) for e in hits]
    rest = [e for e, sign in zip(hits, signs) if sign is None]
    answer, ctl = hits[0], None
    if not rest:
        seen = f"{method} {template}: {signs[0]} ({len(hits)} request(s))"
    else:
        if control is None or not all(e.status == 404 and error_of(e) and e.method != "HEAD" for e in rest):
            return None
        ctl = control(rest[0])
        if ctl is None or not all(same_answer(e, ctl) for e in rest):
            return None
        answer = rest[0]
        seen = (f"{method} {template}: answered {describe(answer)}, as a path no catalog serves is answered "
                f"({ctl.method} {ctl.url} -> {describe(ctl)}; {len(hits)} request(s))")
    return Unserved(operation or f"{method} {template}", method, template, claimed_by(discovery, method, template),
                    seen, answer, ctl)


def unserved_step(discovery: Any, ex: Exchange, control: Callable[[Exchange], Exchange | None] | None = None
                  ) -> Unserved | None:
    """`unserved` for one setup step's answer, its operation found by the document's paths (None: the answer
    shows a handler, or the path is no operation of the document and the answer says nothing by itself)."""
    from ctk.openapi import load_spec

    op = load_spec().operation(ex.method, ex.url)
    if op is None:
        sign = unserved_sign(ex)
        path = urlsplit(ex.url).path
        return Unserved(f"{ex.method} {path}", ex.method, path, None, f"{ex.method} {path}: {sign}", ex) \
            if sign else None
    template = op.template.split("/v1/{prefix}/", 1)[-1]
    return unserved(discovery, [ex], ex.method, template, op.operation_id, control)


def control_sender(client: Any) -> Callable[[Exchange], Exchange | None]:
    """``first -> answer``: one request with ``first``'s method to a path below ``first``'s that no operation of
    the document matches (and so no catalog serves), whose answer `unserved` compares with the operation's."""
    def send(first: Exchange) -> Exchange | None:
        from ctk.openapi import load_spec

        url = first.url.split("?", 1)[0].rstrip("/") + "/" + UNROUTED_SEGMENT
        if load_spec().operation(first.method, url) is not None:     # e.g. POST .../tables/<x> is a commit
            url += "/" + UNROUTED_SEGMENT
        return client.request(first.method, url, json={} if first.method in ("POST", "PUT") else None,
                              label=CONTROL_LABEL)
    return send


def unserved_verdict(run: "Run", found: Unserved, step: str | None = None) -> Verdict:
    """The verdict of a check whose operation (or, with ``step``, the operation of a setup step it needs) is not
    served: claimed by the catalog, inconclusive "advertised but not served (DISC-05)", naming it as the finding
    it rests on (``details.blocked_by``; never a semantic verdict, never "not applicable"); not claimed,
    unsupported (the catalog does not offer it)."""
    what = (f"an operation the check needs is not served by the target: {step} ({found.exchange.method} "
            f"{found.exchange.url}: {found.seen})") if step else f"{found.operation} is not served by the target: " \
                                                                  f"{found.seen}"
    if found.claimed is None:
        return run.unsupported(what)
    return run.inconclusive(f"{ADVERTISED_UNSERVED} ({DISC_UNSERVED}): {what}; the catalog claims "
                            f"{found.operation} in {found.claimed}, so "
                            + ("what this check needs" if step else "what this check judges")
                            + " could not be exercised", classification=ADVERTISED_UNSERVED,
                            details={"blocked_by": DISC_UNSERVED, "advertised_unserved": found.to_dict()})


def same_answer(a: Exchange, b: Exchange) -> bool:
    """The same status, error type and message (each request's own path in it set aside, as in the reference's
    "No route for POST /v1/..."): a router's fixed answer, not a handler's about a resource."""
    ea, eb = error_of(a), error_of(b)
    return a.status == b.status and bool(ea) and ea.get("type") == eb.get("type") \
        and _without_path(a, ea.get("message")) == _without_path(b, eb.get("message"))


def _without_path(ex: Exchange, message: Any) -> str:
    text = str(message or "")
    path = urlsplit(ex.url).path
    for form in (path, unquote(path)):
        text = text.replace(form, "<path>")
    return text


def op_count(counters: dict | None, operation: str) -> int | None:
    if not counters:
        return None
    return int((counters.get("by_operation") or {}).get(operation, 0))


def counter_delta(c0: dict | None, c1: dict | None, operation: str) -> int | None:
    a, b = op_count(c0, operation), op_count(c1, operation)
    return None if a is None or b is None else b - a


def single_execution_problems(endpoint: Endpoint, answer: Exchange, extra: int, counted: int | None,
                              answer_text: str = "the retry got") -> list[str]:
    """What breaks "the retry succeeded and the mutation ran exactly once": an answer that is not a success,
    executions visible in state beyond the first, a rise of the target's execution counter."""
    problems = []
    if answer.status not in endpoint.success:
        problems.append(f"{answer_text} {describe(answer)}, not success {list(endpoint.success)}")
    if extra:
        problems.append(f"the state shows {extra} more execution(s) on the retry (after the interfering change)")
    if counted:
        problems.append(f"the target's execution counter rose by {counted} during the retry")
    return problems
