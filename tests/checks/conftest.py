"""Fixtures for the check tests: an embedded reference catalog (control API on, lifetime PT4S) and a
CheckContext on it, optionally with a deviation profile."""

from __future__ import annotations

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


MATRIX_MODULES = ("test_sensitivity", "test_sensitivity_workers")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A sensitivity test's last report carries its module's matrix rows (`MATRIX`, `VARIANT_TABLE`), which
    tests/conftest.py gathers and prints at the end of the session, from xdist workers too."""
    outcome = yield
    module = getattr(item, "module", None)
    if call.when == "teardown" and module is not None and module.__name__ in MATRIX_MODULES:
        tables = {t: dict(getattr(module, t)) for t in ("MATRIX", "VARIANT_TABLE") if getattr(module, t, None)}
        if tables:
            outcome.get_result().user_properties.append(("sensitivity-rows", (module.__name__, tables)))
