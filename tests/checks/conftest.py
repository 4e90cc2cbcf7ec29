"""Fixtures for the check tests: an embedded reference catalog (control API on, lifetime PT4S) and a
CheckContext on it, optionally with a deviation profile."""

from __future__ import annotations

import sys

import pytest

from ctk.checks.context import CheckContext, CheckOptions

LIFETIME = "PT4S"


@pytest.fixture
def make_ctx(start_catalog):
    """make_ctx(deviation=None, interposer=False, **settings) -> CheckContext on a fresh reference catalog."""

    def make(deviation: str | None = None, interposer: bool = False, control_api: bool = True,
             options: CheckOptions | None = None, **settings) -> CheckContext:
        settings.setdefault("idempotency_lifetime", LIFETIME)
        opts = options or CheckOptions(max_wait=8.0, inflight_hold=1.0, lose_modes=("503", "reset"))
        return start_catalog(interposer=interposer, options=opts, control_api=control_api, deviation=deviation,
                             **settings)

    return make


@pytest.fixture
def ctx(make_ctx):
    return make_ctx()


def pytest_terminal_summary(terminalreporter):
    """The sensitivity matrices the session filled (each module's `summary()`), after the test results."""
    for name in ("test_sensitivity", "test_sensitivity_workers"):
        module = sys.modules.get(name)
        text = module.summary() if module is not None and hasattr(module, "summary") else ""
        if text:
            terminalreporter.section(name, sep="-")
            terminalreporter.line(text)
