"""Verdict -> pytest outcome.

pass -> passed; fail -> failed (VerdictError naming the requirement, the message and the exchanges);
error (the check crashed) -> failed, like fail: the requirement went unjudged, so the run did not pass;
deviation -> passed with a CtkDeviationWarning, failed under --ctk-strict; unsupported -> skipped
"unsupported: <reason>"; inconclusive -> skipped "inconclusive: <reason>".

Each verdict is also recorded on the test item as JUnit properties (requirement id, level, source, verdict,
classification); the plugin attaches the serialized verdicts to the test report, so they travel to the xdist
controller, where the run report collects them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import warnings
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import pytest

from ctk.core import needs
from ctk.core.verdicts import UNKNOWN_REQUIREMENT, Status, Verdict, VerdictError
from ctk.core.exchange import render_exchanges

if TYPE_CHECKING:  # pragma: no cover
    from ctk.plugin.session import CtkSession

# Worst first: the outcome of a test with several verdicts is decided by the worst one.
_SEVERITY = {Status.ERROR: 0, Status.FAIL: 0, Status.DEVIATION: 1, Status.INCONCLUSIVE: 2, Status.UNSUPPORTED: 3,
             Status.PASS: 4}


class CtkDeviationWarning(UserWarning):
    """A SHOULD/MAY requirement is not met (a failure under --ctk-strict)."""


def describe(verdict: Verdict, exchange_limit: int = 2000) -> str:
    """The failure text: requirement (id, level, statement, source), message, rendered exchanges."""
    d = verdict.to_dict()
    where = ", ".join(x for x in (verdict.endpoint, verdict.behaviour) if x)
    lines = [
        f"{d['requirement']} ({d['level']}) {Status(verdict.status).value.upper()}" + (f" [{where}]" if where else ""),
        f"requirement: {d['statement']}",
        f"source: {d['source']}",
        f"message: {verdict.message}",
    ]
    if verdict.classification:
        lines.append(f"classification: {verdict.classification}")
    if verdict.details:
        try:
            lines.append("details: " + json.dumps(verdict.details, default=str, sort_keys=True)[:2000])
        except (TypeError, ValueError):
            pass
    if verdict.exchanges:
        lines.append("")
        lines.append("exchanges:")
        lines.append(render_exchanges(verdict.exchanges, exchange_limit))
    return "\n".join(lines)


def brief(verdict: Verdict, width: int = 240) -> str:
    """A verdict in a few lines: its heading (requirement, level, status, endpoint, behaviour), then what was
    expected and what happened (or its message's first line)."""
    d = verdict.to_dict()
    where = ", ".join(x for x in (verdict.endpoint, verdict.behaviour) if x)
    lines = [f"{d['requirement']} ({d['level']}) {Status(verdict.status).value.upper()}" + (f" [{where}]" if where else "")]
    text = (verdict.message or "").split("\n\nexchanges:")[0]
    picked = [ln for ln in text.splitlines() if ln.startswith(("expected:", "happened:"))][:2] \
        or [ln for ln in text.splitlines() if ln.strip()][:1]
    lines += ["  " + (ln if len(ln) <= width else ln[:width] + " ...") for ln in picked]
    return "\n".join(lines)


def as_verdicts(result: Any) -> list[Verdict] | None:
    """A test's return value as a list of verdicts, or None when it returned something else."""
    if isinstance(result, Verdict):
        return [result]
    if isinstance(result, (list, tuple)) and result and all(isinstance(v, Verdict) for v in result):
        return list(result)
    return None


def crashed(item: pytest.Item, exc: BaseException, last_exchange: dict[str, Any] | None) -> Verdict:
    """The error verdict of a ctk test whose check raised ``exc``, named after the requirement it checks.

    The requirement comes from the check function the test was parametrized with (``check.requirement``, set
    by ``ctk.checks.common.guarded``; a parameter naming a function of a module the test module imported
    counts too), else from a ``REQ``/``REQUIREMENT`` constant of the test module, else
    from the requirement id in the test's name; ``UNKNOWN_REQUIREMENT`` when none says (the report lists it
    as a requirement of its own rather than charge the crash to a requirement it may not concern).
    """
    return Verdict.crashed(_requirement_of(item), exc, last_exchange, where=item.nodeid.split("::")[-1],
                           behaviour="crash")


def timeout_limit(item: pytest.Item) -> str:
    """Where the pytest-timeout limit of ``item`` came from: its mark, else --timeout / the ini option."""
    mark = item.get_closest_marker("timeout")
    if mark is not None and (mark.args or mark.kwargs.get("timeout") is not None):
        value = mark.args[0] if mark.args else mark.kwargs["timeout"]
        return f"the timeout mark of the test ({value:g} s)" if isinstance(value, (int, float)) else "a timeout mark"
    value = item.config.getoption("timeout", None) if item.config.pluginmanager.hasplugin("timeout") else None
    return f"pytest-timeout's --timeout ({value} s)" if value else "pytest-timeout's --timeout"


def stopped_by_timeout(item: pytest.Item, exc: BaseException, last: dict[str, Any] | None) -> Verdict:
    """The verdict of a check that a wall-clock limit of pytest-timeout stopped: not decided (a slow runner is
    no finding and no crash of the kit), the limit named so the user can raise it or drop it (0: none)."""
    limit = timeout_limit(item)
    text = (f"not decided: the check was stopped by {limit} before it could decide; the kit's own budgets count "
            f"requests and answers, not seconds, so give the check more time or none (--timeout 0) "
            f"({str(exc).splitlines()[0][:200]})")
    if last is not None:
        text += "\n\nlast exchange:\n" + render_exchanges([last], 800)
    return Verdict.inconclusive(_requirement_of(item), text, classification="stopped by a timeout",
                                needs=needs.wall_clock(limit), exchanges=[last] if last is not None else [])


class CheckCall:
    """One ctk check as pytest calls it: while pytest's own ``pytest_pyfunc_call`` runs, the item's function
    is the check wrapped so that its return value is kept (pytest wants None) and a crash (an exception that is
    not pytest's skip/fail) becomes an error verdict naming the requirement and the last exchange; a check that
    pytest-timeout stopped is inconclusive, naming the limit (`stopped_by_timeout`)."""

    def __init__(self, item: pytest.Function, session: CtkSession | None) -> None:
        self.item, self.session = item, session
        self.result: Any = None

    @contextlib.contextmanager
    def around_the_check(self) -> Iterator[None]:
        check = self.item.obj
        mark = exchange_mark(self.session)

        @functools.wraps(check)
        def keeping_the_result(*args: Any, **kwargs: Any) -> None:
            try:
                self.result = check(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - a crashed check is a verdict `error`, not a vanished test
                self.result = crashed(self.item, exc, last_exchange(self.session, mark))
            except pytest.fail.Exception as exc:
                # pytest-timeout's backstop raises pytest's Failed inside the check: an error verdict too, so the
                # report does not claim a pass while pytest fails the run
                if not str(exc).startswith("Timeout"):
                    raise
                self.result = stopped_by_timeout(self.item, exc, last_exchange(self.session, mark))

        self.item.obj = keeping_the_result
        try:
            yield
        finally:
            self.item.obj = check


def exchange_mark(session: CtkSession | None) -> int:
    """How many exchanges the session's client has recorded so far (0 without one)."""
    client = getattr(session, "client", None)
    return len(getattr(client, "exchanges", None) or [])


def last_exchange(session: CtkSession | None, mark: int = 0) -> dict[str, Any] | None:
    """The last exchange the session's client recorded after ``mark`` (redacted dict), or None."""
    client = getattr(session, "client", None)
    exchanges = list(getattr(client, "exchanges", None) or [])[mark:]
    try:
        return exchanges[-1].to_dict() if exchanges else None
    except Exception:  # noqa: BLE001 - best effort for a report of a crash
        return None


def _requirement_of(item: pytest.Item) -> str:
    from ctk.core.requirements import REQUIREMENTS

    import types

    rid = getattr(getattr(item, "obj", None), "requirement", None)     # e.g. a scenario's test function
    if isinstance(rid, str) and rid in REQUIREMENTS:
        return rid
    params = getattr(getattr(item, "callspec", None), "params", {}) or {}
    module = getattr(item, "module", None)
    modules = [m for m in vars(module).values() if isinstance(m, types.ModuleType)] if module else []
    for value in params.values():
        candidates = [value]
        if isinstance(value, str):    # a check named by a string, e.g. ("race", "check_race"): look it up
            candidates += [getattr(m, value, None) for m in modules]
        for c in candidates:
            rid = getattr(c, "requirement", None)
            if isinstance(rid, str) and rid in REQUIREMENTS:
                return rid
    for name in ("REQ", "REQUIREMENT"):
        rid = getattr(module, name, None)
        if isinstance(rid, str) and rid in REQUIREMENTS:
            return rid
    text = item.nodeid.upper().replace("_", "-")
    for rid in REQUIREMENTS:
        if rid in text:
            return rid
    return UNKNOWN_REQUIREMENT


def record(item: pytest.Item, verdict: Verdict) -> None:
    """JUnit properties of the verdict (ctk.requirement, ctk.level, ctk.verdict, ctk.needs, ...)."""
    from ctk.reporting.junit import attach_verdict

    attach_verdict(item, verdict)


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    return min(verdicts, key=lambda v: _SEVERITY[Status(v.status)])


def apply(verdicts: list[Verdict], strict: bool, item: pytest.Item | None = None) -> None:
    """Record the verdicts and turn the worst one into the test's outcome (raises for fail/skip)."""
    if not verdicts:
        raise AssertionError("the check returned no verdict")
    for v in verdicts:
        v.status = Status(v.status)
        if item is not None:
            record(item, v)
    failing = [v for v in verdicts if v.status in (Status.FAIL, Status.ERROR)
               or (strict and v.status is Status.DEVIATION)]
    if failing:
        text = "\n\n".join(describe(v) for v in failing)
        if any(v.status is Status.DEVIATION for v in failing):
            text += "\n\n(deviation counted as a failure: --ctk-strict)"
        raise VerdictError(failing[0], text)
    for v in verdicts:
        if v.status is Status.DEVIATION:     # in brief: the evidence is in the failure text / the reports
            warnings.warn(CtkDeviationWarning(brief(v)), stacklevel=2)
    statuses = {v.status for v in verdicts}
    if Status.PASS in statuses or Status.DEVIATION in statuses:
        return
    w = worst(verdicts)
    prefix = "inconclusive" if w.status is Status.INCONCLUSIVE else "unsupported"
    pytest.skip(f"{prefix}: {w.requirement}: {w.message}")
