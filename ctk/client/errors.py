"""Errors of the client layer that carry the exchange that caused them."""

from __future__ import annotations

from ctk.core.exchange import Exchange


class PrerequisiteError(RuntimeError):
    """A setup step (a request the kit needs to succeed before it can judge anything) failed; carries the
    exchange that failed, so that the verdict it leads to (inconclusive) can show it."""

    def __init__(self, message: str, exchange: Exchange | None = None):
        super().__init__(message)
        self.exchange = exchange


class EffectMissing(PrerequisiteError):
    """A setup or interference step was acknowledged (its answer said success) but its effect is not what the
    catalog then shows: a broken plain operation, the finding of ``requirement`` (e.g. TBL-08 for a drop that
    leaves the table). A verdict that rests on the step is inconclusive naming that finding, never a replay or
    concurrency failure."""

    def __init__(self, requirement: str, message: str, exchange: Exchange | None = None):
        super().__init__(message, exchange)
        self.requirement = requirement
