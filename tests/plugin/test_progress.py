"""Issue 29 item 3(g): a long run says what runs, by phase, instead of nothing for the first minute (the lifetime
batch): a line when a phase starts (its checks, how many are done so far) and when it ends."""

from __future__ import annotations

from types import SimpleNamespace

from ctk.plugin.progress import LONG_RUN, Progress, phase_of

LIFE = "test_idempotency.py::test_idempotency[createTable-lifetime]"


class _Terminal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        pass

    def write_line(self, text: str) -> None:
        self.lines.append(text)


def _progress():
    tr = _Terminal()
    config = SimpleNamespace(option=SimpleNamespace(collectonly=False),
                             pluginmanager=SimpleNamespace(get_plugin=lambda name: tr))
    return Progress(config), tr     # type: ignore[arg-type]


def _report(nodeid: str, when: str = "call", outcome: str = "passed"):
    return SimpleNamespace(nodeid=nodeid, when=when, outcome=outcome)


def test_phases():
    assert phase_of(LIFE) == "lifetime batch"
    assert phase_of("test_idempotency.py::test_idempotency[createTable-finalized-duplicate]") == "idempotency"
    assert phase_of("test_semantics.py::test_semantics[NS-06-drop-empty-namespace]") == "semantics"
    assert phase_of("create_table.yaml::createTable_finalized_duplicate") == "scenarios"


def test_a_line_per_phase_start_and_end_on_a_long_run():
    p, tr = _progress()
    others = [f"test_keys.py::test_keys[k{i}]" for i in range(LONG_RUN)]
    p.pytest_xdist_node_collection_finished(None, [LIFE, "test_idempotency.py::test_idempotency[x-lifetime]", *others])
    p.pytest_runtest_logstart(LIFE, None)
    assert tr.lines and tr.lines[0].startswith("ctk: lifetime batch: 2 test(s) start (")
    assert "0 of 42 tests done so far" in tr.lines[0]
    p.pytest_runtest_logstart(others[0], None)
    for n in others:
        p.pytest_runtest_logreport(_report(n, "setup"))
        p.pytest_runtest_logreport(_report(n))
    assert tr.lines[-1] == f"ctk: keys: {LONG_RUN} of {LONG_RUN} test(s) done in 0 s; {LONG_RUN} of 42 tests done in all"
    p.pytest_runtest_logreport(_report(LIFE, "setup", "skipped"))
    p.pytest_runtest_logreport(_report("test_idempotency.py::test_idempotency[x-lifetime]"))
    assert tr.lines[-1].startswith("ctk: lifetime batch: 2 of 2 test(s) done in ") and tr.lines[-1].endswith(
        "42 of 42 tests done in all")


def test_a_short_run_says_nothing():
    p, tr = _progress()
    p.pytest_xdist_node_collection_finished(None, [LIFE])
    p.pytest_runtest_logstart(LIFE, None)
    p.pytest_runtest_logreport(_report(LIFE))
    assert tr.lines == []


def test_report_html_shows_a_skip_reason_not_its_tuple():
    """Issue 35 item 5: pytest-html lists a skipped row's log as the reason text alone."""
    from types import SimpleNamespace

    from ctk.pytest_plugin import pytest_html_results_table_html

    report = SimpleNamespace(skipped=True, longrepr=("/venv/ctk/plugin/outcomes.py", 212,
                                                     "Skipped: unsupported: RECON-02: no <control> API"))
    data = ["('/venv/ctk/plugin/outcomes.py', 212, 'Skipped: unsupported: ...')\n", "captured log"]
    pytest_html_results_table_html(report, data)
    assert data == ["unsupported: RECON-02: no &lt;control&gt; API\n", "captured log"]
