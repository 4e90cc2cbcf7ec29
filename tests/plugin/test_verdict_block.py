"""The verdict block (the run's last lines, and the same facts in conformance.html/json) says what the exit code
says (issue 30, item 5): each test first builds the run that was seen, then checks the block reads it right."""

from __future__ import annotations

import json
from typing import Any

from ctk.core import needs
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Status, Verdict
from ctk.plugin import exits
from ctk.plugin.options import CtkOptions
from ctk.plugin.reports import VerdictCollector
from ctk.reporting.model import RunReport
from ctk.reporting.rootcause import root_causes

SETUP = "a setup step failed, so the requirement could not be exercised: "


def _collector(*verdicts: Verdict) -> VerdictCollector:
    c = VerdictCollector(CtkOptions())
    c.results = [(v.to_dict(), f"t::{i}", 0.1, "passed") for i, v in enumerate(verdicts)]
    return c


def _block(c: VerdictCollector) -> tuple[int, list[str]]:
    rep = c.build()
    code, hits, undecided = exits.decide(exits.EXIT_OK, rep, frozenset())
    c.undecided_musts = undecided
    return code, [text for text, _ in c.final_lines(code)]


def test_exit_7_headline_names_exit_7_not_deviations():
    """(a) A SHOULD deviation and a MUST left undecided by a failed setup: exit 7, and the headline said
    "DEVIATIONS: no MUST failed"."""
    c = _collector(
        Verdict(("KEY-02"), Status.DEVIATION, "accepted a repeated header", endpoint="createNamespace"),
        Verdict.inconclusive("REPLAY-03", SETUP + "createTable answered 500", endpoint="createTable"),
        Verdict.ok("REPLAY-01", "replayed", endpoint="createTable"))
    code, lines = _block(c)
    assert code == exits.EXIT_MUST_UNDECIDED
    head = lines[0]
    assert not head.startswith("ctk: DEVIATIONS"), head
    assert head.startswith("ctk: MUST UNDECIDED: no MUST broken, but a MUST was left undecided"), head
    assert "REPLAY-03" in head and "deviation" in head.lower(), head
    from ctk.reporting.html import render_conformance

    assert "MUST UNDECIDED" in render_conformance(c.report)
    # without the undecided MUST: the deviations headline, exit 0
    c = _collector(Verdict(("KEY-02"), Status.DEVIATION, "accepted a repeated header", endpoint="createNamespace"))
    code, lines = _block(c)
    assert code == exits.EXIT_OK and lines[0].startswith("ctk: DEVIATIONS"), lines[0]


def test_a_pass_that_names_an_allowed_behaviour_counts_as_classified():
    """(b) SEM-02's "namespace properties not stored at create" is a pass classifying what the spec leaves open:
    "1 classified (pass)", not 0."""
    from types import SimpleNamespace

    from ctk.catalog import ENDPOINTS
    from ctk.checks.discovery import _properties_not_stored

    ctx = SimpleNamespace(client=SimpleNamespace(exchanges=[]))
    case = SimpleNamespace(request=SimpleNamespace(json={"namespace": ["ns"], "properties": {"p": "v"}}),
                           resource="namespace ns")
    ex = Exchange(method="POST", url="http://127.0.0.1:1/v1/namespaces", status=200)
    sem2 = _properties_not_stored(ctx, ENDPOINTS["createNamespace"], case, ex, {"ns": {"properties": {}}}, ["ns"],
                                  0)
    c = _collector(sem2, Verdict.ok("REPLAY-01", "replayed"))
    _, lines = _block(c)
    assert "checks (2): 1 pass, 1 classified (pass)," in lines[1], lines[1]


def test_undecided_ordered_by_the_must_checks_one_option_would_decide():
    """(c) REPLAY-03 on 17 endpoints needs --ctk-db-link: it was reason 11, behind "... and 11 more", after
    lines of plan-endpoint noise (one MUST check each)."""
    vs = [Verdict.inconclusive("REPLAY-01", SETUP + f"planTableScan step {i} answered 400", endpoint="planTableScan")
          for i in range(6)]
    vs += [Verdict.inconclusive("REPLAY-03", "the 5xx cannot be made here", needs=needs.DB_LINK_OR_CONTROL_API,
                                endpoint=f"op{i}") for i in range(17)]
    vs += [Verdict.inconclusive("LIFE-03", "grace not observed", needs=needs.max_wait(1620))]
    c = _collector(*vs)
    _, lines = _block(c)
    at = lines.index("undecided, and what would decide it:")
    first = lines[at + 1]
    assert first.startswith("  17x REPLAY-03 (a MUST): needs --ctk-db-link"), lines[at:]
    assert "17 MUST checks" in first, first
    data = c.report.to_dict()["undecided"]
    assert data[0]["requirements"] == {"REPLAY-03": 17} and data[0]["must_checks"] == 17
    assert data[0]["option"] == "--ctk-db-link"


def test_a_setup_that_timed_out_suggests_ctk_timeout():
    """(d) A setup step that got no answer in --ctk-timeout (10 s) names the option."""
    ex = Exchange(method="POST", url="http://127.0.0.1:1/v1/ns/tables", status=None,
                  error="timeout: ReadTimeout: timed out", label="setup: create table")
    c = _collector(Verdict.inconclusive("OCC-01", SETUP + "createTable -> no answer (timeout: ReadTimeout: timed out)",
                                        exchanges=[ex.to_dict()]))
    _, lines = _block(c)
    [line] = [ln for ln in lines if ln.startswith("  1x OCC-01")]
    assert "--ctk-timeout" in line and "10 s" in line, line


def _finding(req: str, status: str, ep: str | None, message: str, cls: str | None = None,
             exchanges: list[dict] | None = None) -> dict[str, Any]:
    return {"requirement": req, "status": status, "endpoint": ep, "behaviour": None, "classification": cls,
            "message": message, "exchanges": exchanges or []}


REEXEC = "expected: ...\nhappened: the state shows the mutation executed again on the retry"


def test_one_catalog_ignoring_keys_is_one_root_cause():
    """(e) Keys ignored on createTable and dropTable: the replays that answer another status there (a re-execution
    answers 409 or 404) are that cause, not a second one."""
    findings = []
    for ep in ("createTable", "dropTable"):
        findings += [_finding("REPLAY-01", "fail", ep, REEXEC, "re-executed"),
                     _finding("INFLIGHT-01", "fail", ep, "happened: second execution", "second execution"),
                     _finding("REPLAY-04", "fail", ep, "happened: the retry answered 409", "retry 409"),
                     _finding("SCHEMA-01", "deviation", ep,
                              "responses do not conform:\n(replay) POST /v1/ns/tables -> 409: status 409 is "
                              "not declared", "nonconforming")]
    causes = root_causes(findings)
    assert [c.rule.id for c in causes] == ["key-ignored"], [(c.rule.id, c.requirements) for c in causes]


def test_a_deviation_is_never_printed_as_a_must():
    """(e) A rule stated by a MUST that explains only SHOULD deviations (SCHEMA-01's replays): the line says the
    level its status comes from."""
    [rc] = root_causes([_finding("SCHEMA-01", "deviation", "updateTable",
                                 "responses do not conform:\n(replay) POST /v1/ns/tables/t -> 409: status 409 is "
                                 "not declared", "nonconforming")])
    assert rc.rule.id == "replay-differs"
    line = rc.line()
    assert line.startswith("DEVIATION SCHEMA-01 (SHOULD) on updateTable: responses do not conform: (replay) POST"), line
    assert "(MUST)" not in line and rc.to_dict()["level"] == "SHOULD"


def test_the_variant_of_an_operation_is_named():
    """(e) Only the staged create (stage-create: true) is concerned: the cause says so, not plain createTable."""
    staged = Exchange(method="POST", url="http://127.0.0.1:1/v1/ns/tables", status=200,
                      request_headers={"Idempotency-Key": "k"},
                      request_body=json.dumps({"name": "t", "schema": {"type": "struct", "fields": []},
                                               "stage-create": True, "pad": "x" * 2000})).to_dict()
    setup = {**staged, "request_body": json.dumps({"name": "s", "stage-create": False}), "label": "setup: table"}
    rep = RunReport.begin("http://127.0.0.1:1")
    for i in range(3):
        rep.add(Verdict(("REPLAY-01"), Status.FAIL, REEXEC, endpoint="createTable", classification="re-executed",
                        exchanges=[setup, staged, {**staged, "label": "retry"}]), f"t::{i}")
    plain = {**staged, "request_body": json.dumps({"name": "t", "stage-create": False})}
    rep.add(Verdict(("REPLAY-01"), Status.FAIL, REEXEC, endpoint="updateTable", classification="re-executed",
                    exchanges=[plain]), "t::u")
    [rc] = rep.root_causes()
    assert rc.endpoints == ["createTable (stage-create)", "updateTable"], rc.endpoints
    assert "on createTable (stage-create), updateTable" in rc.line()


def test_schema_problems_at_list_indexes_are_one_kind():
    """(f) One problem at ten list indexes was "10 kinds": grouped by JSON path with the indexes folded."""
    from ctk.plugin import traffic

    problems = [f"GET /v1/ns/tables/t -> 200 (loadTable): metadata/schemas/{i}/fields/{i % 3}/type: "
                "'decimal(9,2)' is not valid under any of the given schemas" for i in range(10)]
    summary = {"worker": "main", "checked": 10, "problems": [[p, {}] for p in problems[:1]],
               "problem_count": 10, "groups": {}}
    for p in problems:
        key = traffic.group_key(p)
        summary["groups"][key] = summary["groups"].get(key, 0) + 1
    v = traffic.verdict([summary])
    assert v is not None and "(1 kinds" in v.message, v.message
    assert "10x -> 200: metadata/schemas/[n]/fields/[n]/type:" in v.message, v.message
    other = traffic.group_key("GET /v1/ns/tables/t -> 200 (loadTable): metadata/snapshots/2/summary: 'operation' "
                              "is a required property")
    assert other.split("\t")[1].startswith("-> 200: metadata/snapshots/[n]/summary")


def test_the_html_page_names_the_cause_as_the_terminal_does(tmp_path):
    """The same root cause line in conformance.html: the requirement and level its status comes from."""
    from ctk.reporting.html import render_conformance

    rep = RunReport.begin("http://127.0.0.1:1")
    rep.add(Verdict(("SCHEMA-01"), Status.DEVIATION, "responses do not conform:\n(replay) POST /v1/ns/tables/t -> "
                    "409: status 409 is not declared", endpoint="updateTable", classification="nonconforming"), "t")
    page = render_conformance(rep)
    cause = page[page.index('id="cause-1"'):]
    assert "<b>SCHEMA-01</b> (SHOULD)" in cause[:400], cause[:400]
