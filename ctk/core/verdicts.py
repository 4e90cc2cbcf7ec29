"""Verdicts of conformance checks: pass, fail, deviation, unsupported, inconclusive.

A check returns a Verdict; the pytest plugin turns it into an outcome (fail -> failed test,
deviation -> passed with a warning unless --ctk-strict, unsupported -> skipped with the reason,
inconclusive -> skipped, marked inconclusive) and the reports group verdicts by requirement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ctk.core.requirements import Level, get


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    DEVIATION = "deviation"
    UNSUPPORTED = "unsupported"
    INCONCLUSIVE = "inconclusive"


@dataclass
class Verdict:
    requirement: str
    status: Status
    message: str
    endpoint: str | None = None          # operationId the check exercised, e.g. "updateTable"
    behaviour: str | None = None         # matrix column, e.g. "finalized-duplicate"
    classification: str | None = None    # e.g. "422", "wait-and-replay", "409 request_in_progress"
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # redacted Exchange.to_dict() items
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def ok(cls, requirement: str, message: str = "", **kw: Any) -> "Verdict":
        return cls(requirement, Status.PASS, message, **kw)

    @classmethod
    def broken(cls, requirement: str, message: str, **kw: Any) -> "Verdict":
        """The rule is broken: fail for a MUST, deviation for a SHOULD or MAY."""
        status = Status.FAIL if get(requirement).level is Level.MUST else Status.DEVIATION
        return cls(requirement, status, message, **kw)

    @classmethod
    def unsupported(cls, requirement: str, reason: str, **kw: Any) -> "Verdict":
        return cls(requirement, Status.UNSUPPORTED, reason, **kw)

    @classmethod
    def inconclusive(cls, requirement: str, reason: str, **kw: Any) -> "Verdict":
        return cls(requirement, Status.INCONCLUSIVE, reason, **kw)

    def to_dict(self) -> dict[str, Any]:
        r = get(self.requirement)
        return {
            "requirement": self.requirement,
            "level": r.level.value,
            "source": r.source,
            "statement": r.statement,
            "status": self.status.value,
            "message": self.message,
            "endpoint": self.endpoint,
            "behaviour": self.behaviour,
            "classification": self.classification,
            "exchanges": self.exchanges,
            "details": self.details,
        }


class VerdictError(AssertionError):
    """Raised by the plugin for a failing verdict; carries it for the reports."""

    def __init__(self, verdict: Verdict, text: str):
        super().__init__(text)
        self.verdict = verdict
