"""Shared plumbing of the checks: exchange recording, verdict building, gating, error helpers."""

from __future__ import annotations

import functools
from typing import Any, Callable

from ctk.checks.faults import FaultUnsupported
from ctk.core.verdicts import Verdict
from ctk.http.endpoints import Endpoint, PrerequisiteError
from ctk.http.exchange import Exchange, render_exchanges


class Run:
    """One check run: remembers where its exchanges start and builds verdicts that carry them."""

    def __init__(self, ctx: Any, requirement: str, endpoint: Endpoint | None, behaviour: str):
        self.ctx, self.requirement, self.endpoint, self.behaviour = ctx, requirement, endpoint, behaviour
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

    def unsupported(self, reason: str, details: dict | None = None) -> Verdict:
        return Verdict.unsupported(self.requirement, reason, **self._kw(None, details))

    def inconclusive(self, reason: str, classification: str | None = None, details: dict | None = None) -> Verdict:
        kw = self._kw(classification, details)
        ex = kw["exchanges"]
        text = reason + ("\n\nexchanges:\n" + render_exchanges(ex[-12:], limit=800) if ex else "")
        return Verdict.inconclusive(self.requirement, text, **kw)


def guarded(requirement: str, behaviour: str, needs_support: bool = True, needs_endpoint: bool = True,
            also: tuple[tuple[str, str], ...] = ()):
    """Decorator for a check ``fn(run, ctx, endpoint, ...) -> Verdict | list[Verdict]``.

    Applies the common gates (endpoint advertised, idempotency advertised) and turns a failing
    prerequisite into inconclusive and a missing fault capability into unsupported. The wrapped function
    is called as ``check(ctx, endpoint, ...)`` and always returns a list of verdicts. ``also`` names further
    (requirement, behaviour) pairs the check reports on; the gates give them the same verdict.
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., list[Verdict]]:
        @functools.wraps(fn)
        def check(ctx: Any, endpoint: Endpoint | None = None, *args: Any, **kw: Any) -> list[Verdict]:
            beh = kw.pop("behaviour", None) or behaviour
            run = Run(ctx, requirement, endpoint, beh)
            runs = [run] + [Run(ctx, r, endpoint, b) for r, b in also]
            if needs_endpoint and endpoint is not None:
                ok, why = endpoint.supported(ctx.discovery)
                if not ok:
                    return [r.unsupported(f"{endpoint.operation} not offered by the target: {why}") for r in runs]
            if needs_support and not ctx.idempotency_supported:
                why = getattr(ctx.discovery, "lifetime_error", None) or "no discovery"
                return [r.unsupported("the target does not advertise Idempotency-Key support "
                                      f"(idempotency-key-lifetime: {why})") for r in runs]
            try:
                out = fn(run, ctx, endpoint, *args, **kw)
            except PrerequisiteError as exc:
                return [r.inconclusive(f"a prerequisite step failed: {exc}") for r in runs]
            except FaultUnsupported as exc:
                return [r.unsupported(str(exc)) for r in runs]
            finally:
                try:
                    ctx.faults.clear()
                except Exception:  # pragma: no cover - best effort
                    pass
            return out if isinstance(out, list) else [out]

        check.requirement = requirement  # type: ignore[attr-defined]
        check.behaviour = behaviour  # type: ignore[attr-defined]
        return check

    return wrap


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


def op_count(counters: dict | None, operation: str) -> int | None:
    if not counters:
        return None
    return int((counters.get("by_operation") or {}).get(operation, 0))


def counter_delta(c0: dict | None, c1: dict | None, operation: str) -> int | None:
    a, b = op_count(c0, operation), op_count(c1, operation)
    return None if a is None or b is None else b - a


def single_execution_problems(endpoint: Any, answer: Exchange, extra: int, counted: int | None,
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
