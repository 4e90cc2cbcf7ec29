"""Fixtures for the generated checks: a reference catalog (control API on) per test, with a deviation profile."""

from __future__ import annotations

import time

import pytest

from ctk.checks.context import CheckContext, CheckOptions


@pytest.fixture
def gen_ctx(start_catalog):
    """gen_ctx(deviation=None, control_api=True) -> CheckContext on a fresh reference catalog."""

    def make(deviation: str | None = None, control_api: bool = True) -> CheckContext:
        return start_catalog(options=CheckOptions(max_wait=5.0), control_api=control_api, deviation=deviation)

    return make


@pytest.fixture
def timed():
    t0 = time.monotonic()
    yield
    print(f"\n[{time.monotonic() - t0:.1f} s]")
