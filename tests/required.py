"""Components the kit's tests need and CI installs (PostgreSQL, Chromium, the wheel, the Spark toolchain, the
interop catalogs, uvloop): where one cannot be had, a developer's machine skips the tests that need it, saying
why; under CI (`CI=true`, which .ci/run's hosts set) that is a failure, because there it means the job lost
what it exists to prove.

    from required import require
    require("PostgreSQL", f"PostgreSQL cannot be started here: {exc}")
"""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require(component: str, reason: str) -> None:
    """Skip with `reason`, or under CI fail saying that `component` is required there. Never returns."""
    if in_ci():
        pytest.fail(f"{component} is required under CI (CI=true), but: {reason}", pytrace=False)
    pytest.skip(reason)
