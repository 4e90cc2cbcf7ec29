"""A run says how it was judged (issue 29 item 2): the judging profile, --ctk-fail-on, --ctk-strict, the workers
and Spark with its master are in the verdict block's first line, conformance.json's options, conformance.html
and JUnit's suite properties; a NOT RUN requirement says why."""

from __future__ import annotations

import json
from types import SimpleNamespace

from ctk.core import requirements as rq
from ctk.core.verdicts import Verdict
from ctk.plugin.options import CtkOptions
from ctk.plugin.reports import VerdictCollector, run_judging
from ctk.reporting.html import render_conformance
from ctk.reporting.junit import statistics
from ctk.reporting.model import RunReport


def _collector(options: CtkOptions, judging: dict | None = None) -> VerdictCollector:
    c = VerdictCollector(options)
    c.results = [(Verdict.ok("KEY-02", "rejected", endpoint="createNamespace").to_dict(), "t::0", 0.1, "passed")]
    if judging is not None:
        c.judging = judging
    c.build()
    return c


def test_a_design_ci_run_does_not_read_like_a_default_one():
    c = _collector(CtkOptions(strict=True, spark=True, spark_master="local[3]"),
                   {"profile": "design", "fail_on": ["deviation", "inconclusive"], "workers": 3})
    head = c.final_lines(0)[0][0]
    for said in ("--ctk-profile design", "--ctk-fail-on deviation,inconclusive", "--ctk-strict", "3 workers",
                 "Spark on local[3]"):
        assert said in head, head
    saved = json.loads(c.report.to_json())["options"]
    assert {k: saved[k] for k in ("profile", "fail_on", "strict", "workers", "spark", "spark_master")} == {
        "profile": "design", "fail_on": ["deviation", "inconclusive"], "strict": True, "workers": 3, "spark": True,
        "spark_master": "local[3]"}
    html = render_conformance(RunReport.from_dict(json.loads(c.report.to_json())))
    judged = html.split('id="judged">', 1)[1].split("</div>", 1)[0]
    assert "--ctk-profile design" in judged and "--ctk-fail-on deviation,inconclusive" in judged, judged
    props = dict(statistics(c.report))
    assert (props["ctk.option.profile"], props["ctk.option.fail_on"], props["ctk.option.strict"],
            props["ctk.option.workers"], props["ctk.option.spark"], props["ctk.option.spark_master"]) == (
        "design", "deviation,inconclusive", "true", "3", "true", "local[3]")


def test_a_default_run_says_it_is_one():
    head = _collector(CtkOptions()).final_lines(0)[0][0]
    assert head.endswith("[judged: --ctk-profile spec, --ctk-fail-on none, not strict, one process, "
                         "no Spark checks]"), head


def test_judging_read_from_pytest_configuration():
    config = SimpleNamespace(option=SimpleNamespace(numprocesses=3),
                             getoption=lambda name, default=None: "ci" if name == "ctk_fail_on" else default)
    previous = rq.set_profile("design")
    try:
        assert run_judging(config) == {"profile": "design", "fail_on": ["deviation", "inconclusive", "stale"],
                                       "workers": 3}
    finally:
        rq.set_profile(previous)


def test_not_run_requirements_say_why():
    c = _collector(CtkOptions())
    data = json.loads(c.report.to_json())
    assert data["requirements"]["SPARK-01"]["not_run"] == "the Spark pipeline checks run only with --ctk-spark"
    assert "not_run" not in data["requirements"]["KEY-02"]
    row = render_conformance(c.report).split('id="req-SPARK-01"', 1)[1].split("</tr>", 1)[0]
    assert "NOT RUN" in row and "only with --ctk-spark" in row, row
    c.selection = {"-k": "KEY"}
    c.build()
    assert c.report.to_dict()["requirements"]["REPLAY-01"]["not_run"] == "not in this subset run's selection"
