"""Progress of a run, by phase, on the terminal of the process that reports (the xdist controller, or the one
process): a line when a phase starts (what runs, how many tests) and when it ends (how many of the run's tests
are done). It counts tests (pytest items), as pytest's own summary does; the verdict block and the pages count
checks (verdicts), and say from how many tests: "checks (593, from 416 tests)". A phase is the lifetime batch (it waits out the advertised key lifetime, a minute and more, before any
of its checks reports), the Spark workloads, or the checks of one suite file (idempotency, network, semantics...)
or of the scenario files."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from ctk.plugin.scheduling import _LIFETIME_ID, _SPARK_ID

LONG_RUN = 40     # checks: a shorter run (a -k subset) reports no phases

WHAT = {
    "lifetime batch": "every endpoint's key-lifetime check at once, waiting out the advertised lifetime",
    "Spark workloads": "Iceberg's Java client writing through the catalog",
    "generated": "generated OpenAPI cases and the model-based sequences",
}


def phase_of(nodeid: str) -> str:
    """The phase an item belongs to, from its node id."""
    if _LIFETIME_ID.search(nodeid):
        return "lifetime batch"
    if _SPARK_ID.search(nodeid):
        return "Spark workloads"
    path = nodeid.split("::", 1)[0]
    name = path.rsplit("/", 1)[-1]
    if name.endswith((".yaml", ".yml")):
        return "scenarios"
    stem = name.rsplit(".", 1)[0]
    return stem[5:] if stem.startswith("test_") else stem


class Progress:
    """Registered on the reporting process of an active run (pytest_plugin.pytest_configure)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.total: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.started: dict[str, float] = {}
        self.finished: set[str] = set()
        self.counted: set[str] = set()
        self.t0 = time.monotonic()

    def _line(self, text: str) -> None:
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None and not self.config.option.collectonly:
            if getattr(getattr(tr, "_tw", None), "width_of_current_line", 0):
                tr.write("\n")      # after the progress dots of the line begun
            tr.write_line(f"ctk: {text}")

    def _totals(self, nodeids: list[str]) -> None:
        if not self.total and len(nodeids) >= LONG_RUN:
            self.total.update(phase_of(n) for n in nodeids)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._totals([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._totals(list(ids))

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        phase = phase_of(nodeid)
        if phase in self.started or not self.total:
            return
        self.started[phase] = time.monotonic()
        what = WHAT.get(phase, "")
        self._line(f"{phase}: {self.total[phase]} test(s) start{' (' + what + ')' if what else ''}; "
                   f"{sum(self.done.values())} of {sum(self.total.values())} tests done so far")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.counted or not self.total:
            return
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.counted.add(report.nodeid)
            phase = phase_of(report.nodeid)
            self.done[phase] += 1
            if self.done[phase] >= self.total[phase] and phase not in self.finished and self.total[phase] > 1:
                self.finished.add(phase)
                took = time.monotonic() - self.started.get(phase, self.t0)
                self._line(f"{phase}: {self.done[phase]} of {self.total[phase]} test(s) done in {took:.0f} s; "
                           f"{sum(self.done.values())} of {sum(self.total.values())} tests done in all")
