"""A pytest plugin (tests/conftest.py loads it): every skip's reason is collected; under CI (`CI=true`) a skip
whose reason matches none of tests/contracts/test_skips.py's ALLOWED_SKIPS fails the session, listing each one,
so a component that silently stopped working cannot turn a test run green by skipping what it proves.
Outside CI the list is printed and the exit status is left alone."""

from __future__ import annotations

import re

import pytest
from required import in_ci


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def unexpected(skips: list[tuple[str, str]], allowed: list[str] | None = None) -> list[tuple[str, str]]:
    """The (nodeid, reason) pairs whose reason matches no pattern of `allowed` (default: ALLOWED_SKIPS)."""
    if allowed is None:
        from contracts.test_skips import ALLOWED_SKIPS as allowed
    return [(node, why) for node, why in skips if not any(re.search(p, why) for p in allowed)]


class SkipGuard:
    """One per pytest session (an inner pytester session gets its own)."""

    def __init__(self) -> None:
        self.skips: list[tuple[str, str]] = []

    def pytest_runtest_logreport(self, report):
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips.append((report.nodeid, _reason(report)))

    def pytest_collectreport(self, report):
        if report.skipped:
            self.skips.append((report.nodeid, _reason(report)))

    def pytest_sessionfinish(self, session, exitstatus):
        if in_ci() and unexpected(self.skips) and session.exitstatus in (pytest.ExitCode.OK,
                                                                        pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        bad = unexpected(self.skips)
        if not bad:
            return
        terminalreporter.section("skips not in tests/contracts/test_skips.py ALLOWED_SKIPS", sep="=", red=in_ci())
        for node, why in bad:
            terminalreporter.line(f"{node}: {why}")
        terminalreporter.line("under CI (CI=true) these fail the run: the component they need must be there"
                              if in_ci() else "(under CI=true these would fail the run)")


def pytest_configure(config):
    config.pluginmanager.register(SkipGuard(), "ctk-skip-guard")
