"""Errors of the client layer that carry the exchange that caused them."""

from __future__ import annotations

from ctk.core.exchange import Exchange


class PrerequisiteError(RuntimeError):
    """A setup step (a request the kit needs to succeed before it can judge anything) failed; carries the
    exchange that failed, so that the verdict it leads to (inconclusive) can show it."""

    def __init__(self, message: str, exchange: Exchange | None = None):
        super().__init__(message)
        self.exchange = exchange
