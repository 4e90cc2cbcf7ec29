"""Fixtures for the odd-server tests: the reference catalog behind `odd.OddServer` (and optionally the
interposer in front of that), with a CheckContext on it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from odd import OddServer  # noqa: E402

from ctk.checks.context import CheckOptions  # noqa: E402


@pytest.fixture
def make_odd(start_catalog):
    """make_odd(rules, interposer=False, **settings) -> (CheckContext, OddServer).

    ``rules`` is a list of `odd.Rule`s or a callable ``upstream_url -> list``. The reference catalog runs
    without its control API unless ``control_api=True`` is given: a third-party catalog has none.
    """

    def make(rules, interposer: bool = False, **settings):
        settings.setdefault("control_api", False)
        settings.setdefault("idempotency_lifetime", "PT8S")
        ctx = start_catalog(front=lambda up: OddServer(up, rules(up) if callable(rules) else rules),
                            interposer=interposer, options=CheckOptions(max_wait=8.0, inflight_hold=0.5), **settings)
        return ctx, ctx.test_front

    return make
