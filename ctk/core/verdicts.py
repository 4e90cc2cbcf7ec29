"""Verdicts of conformance checks: pass, fail, deviation, unsupported, inconclusive, error.

A check returns a Verdict; the pytest plugin turns it into an outcome (fail -> failed test,
deviation -> passed with a warning unless --ctk-strict, unsupported -> skipped with the reason,
inconclusive -> skipped, marked inconclusive) and the reports group verdicts by requirement.

``error`` is not a judgement of the target: the check itself crashed (an exception inside the check).
It names the requirement the check was about, the exception and the last exchange; it fails the test and
the run, since the requirement went unjudged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ctk.core.behaviours import Behaviour
from ctk.core.requirements import active_profile, get, status_if_broken


# The requirement of an error verdict whose check names none (a crash the plugin caught outside any check).
UNKNOWN_REQUIREMENT = "(unknown)"


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    DEVIATION = "deviation"
    UNSUPPORTED = "unsupported"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"              # the check crashed: no judgement of the target, a failure of the run


@dataclass
class Verdict:
    requirement: str
    status: Status
    message: str
    endpoint: str | None = None          # operationId the check exercised, e.g. "updateTable"
    behaviour: Behaviour | None = None   # matrix column, e.g. Behaviour.FINALIZED_DUPLICATE (a registered name)
    classification: str | None = None    # e.g. "422", "wait-and-replay", "409 request_in_progress"
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # redacted Exchange.to_dict() items
    details: dict[str, Any] = field(default_factory=dict)
    # not decided because this setup cannot observe it: what would decide it (an option, a capability), e.g.
    # "--ctk-db-link" or "--ctk-max-wait 1620"; None for everything else (an unsupported verdict without it does
    # not apply to the target at all). See docs/verdicts.md.
    needs: str | None = None

    def __post_init__(self) -> None:
        if self.behaviour is not None:   # one vocabulary: an unregistered name is an error of the kit
            self.behaviour = Behaviour.parse(self.behaviour, f"verdict of {self.requirement}")

    @classmethod
    def ok(cls, requirement: str, message: str = "", **kw: Any) -> "Verdict":
        return cls(requirement, Status.PASS, message, **kw)

    @classmethod
    def broken(cls, requirement: str, message: str, **kw: Any) -> "Verdict":
        """The rule is broken: fail for a MUST, deviation for a SHOULD or MAY, by the level under the active
        profile (--ctk-profile); where no source of the profile states the rule (CLASSIFIED) a pass that says
        so (ctk.checks.judging adds what each profile makes of it)."""
        status = Status(status_if_broken(requirement))
        if status is Status.PASS:   # details.rule_broken marks it for the reports (as ctk.checks.judging does)
            message = f"classified, not judged under the {active_profile()} profile: {message}"
            kw["details"] = {**(kw.get("details") or {}), "rule_broken": True}
        return cls(requirement, status, message, **kw)

    @classmethod
    def unsupported(cls, requirement: str, reason: str, needs: str | None = None, **kw: Any) -> "Verdict":
        """Not judged: the check does not apply to the target (``needs`` None: "not applicable"), or this setup
        cannot decide it and ``needs`` names what would (a phrase of ctk.core.needs, given by the check)."""
        return cls(requirement, Status.UNSUPPORTED, reason, needs=needs, **kw)

    @classmethod
    def inconclusive(cls, requirement: str, reason: str, needs: str | None = None, **kw: Any) -> "Verdict":
        """Exercised but not decided. With ``needs`` (a phrase of ctk.core.needs, given by the check): this setup
        cannot observe the outcome, and ``needs`` names what would; without: a setup step failed or the outcome
        was unclear (a MUST left so makes the run's exit code 7, ctk.plugin.exits)."""
        return cls(requirement, Status.INCONCLUSIVE, reason, needs=needs, **kw)

    @classmethod
    def crashed(cls, requirement: str, exc: BaseException, last_exchange: dict[str, Any] | None = None,
                where: str = "", **kw: Any) -> "Verdict":
        """The check of ``requirement`` raised ``exc``: status error, with the exception and the last exchange."""
        import traceback

        text = f"the check crashed{f' ({where})' if where else ''}: {type(exc).__name__}: {exc}"
        details = dict(kw.pop("details", None) or {})
        details["exception"] = f"{type(exc).__name__}: {exc}"
        details["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
        exchanges = list(kw.pop("exchanges", None) or [])
        if last_exchange is not None and last_exchange not in exchanges:
            exchanges.append(last_exchange)
        if exchanges:
            details["last_exchange"] = _exchange_line(exchanges[-1])
            text += f"\nlast exchange: {details['last_exchange']}"
        return cls(requirement, Status.ERROR, text, exchanges=exchanges, details=details, **kw)

    def to_dict(self) -> dict[str, Any]:
        if self.requirement == UNKNOWN_REQUIREMENT and self.status is Status.ERROR:
            level, source, statement = "MUST", "-", "(the crashed check names no requirement)"
        else:
            r = get(self.requirement)
            level, source, statement = r.level.value, r.source, r.statement
        return {
            "requirement": self.requirement,
            "level": level,
            "source": source,
            "statement": statement,
            "status": self.status.value,
            "message": self.message,
            "endpoint": self.endpoint,
            "behaviour": None if self.behaviour is None else str(self.behaviour),
            "classification": self.classification,
            "exchanges": self.exchanges,
            "details": self.details,
            "needs": self.needs,
        }


def _exchange_line(ex: dict[str, Any]) -> str:
    status = ex.get("status")
    return (f"{ex.get('method', '?')} {ex.get('url', '?')} -> "
            + (str(status) if status is not None else f"no answer ({ex.get('error')})")
            + (f" [{ex.get('label')}]" if ex.get("label") else ""))


class VerdictError(AssertionError):
    """Raised by the plugin for a failing verdict; carries it for the reports."""

    def __init__(self, verdict: Verdict, text: str):
        super().__init__(text)
        self.verdict = verdict
