"""Issue 35 items 1 and 2, without a catalog: the known-gaps file (reading it, the line of what is wrong, each
finding against it: known, new, stale), the exit code it makes, the certification record, and where they show
(conformance.json with its schema, junit.xml properties, conformance.html's section, `ctk known-gaps`).

The same against catalogs: tests/checks/test_known_gaps_run.py (the reference behind an odd server, `ctk run`)
and the interop lane (lakana, tests/interop)."""

from __future__ import annotations

import json

import pytest

from ctk.core.verdicts import Status, Verdict
from ctk.plugin import exits
from ctk.reporting import known_gaps as kg
from ctk.reporting.certification import certification
from ctk.reporting.gaps_html import section
from ctk.reporting.junit import gap_and_certification_pairs
from ctk.reporting.model import RunReport
from ctk.reporting.report_schema import problems

DROP = "ctk/suites/test_semantics.py::test_semantics[TBL-08-drop-table]"
CREATE = "ctk/suites/test_semantics.py::test_semantics[NS-01-create-namespace]"
LOST = "ctk/suites/test_network.py::test_network[createTable-lost-drop]"


def _file(tmp_path, text: str):
    path = tmp_path / "known-gaps.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _report(*results: tuple[str, str, str, str | None]) -> RunReport:
    rep = RunReport.begin("http://127.0.0.1:1")
    for nodeid, requirement, status, endpoint in results:
        rep.add(Verdict(requirement, Status(status), f"{status} on {endpoint}", endpoint=endpoint), nodeid)
    rep.finish()
    return rep


GAPS = """\
capabilities:
  views: no
gaps:
  - check: test_semantics.py::test_semantics[TBL-08-drop-table]
    reason: drops are soft deletes
    link: https://example.invalid/issues/1
  - requirement: REPLAY-04
    endpoint: createTable
    reason: no idempotency store yet
"""


def test_a_listed_finding_is_known_an_unlisted_one_new_and_a_passing_gap_stale(tmp_path):
    gaps = kg.load(_file(tmp_path, GAPS + "  - check: test_semantics.py::test_semantics[NS-01-create-namespace]\n"
                                          "    reason: fixed since\n"))
    assert [e.line for e in gaps.entries] == [4, 7, 10]
    assert {c.value: v for c, v in gaps.capabilities.items()} == {"views": False}
    rep = _report((DROP, "TBL-08", "fail", "dropTable"), (CREATE, "NS-01", "pass", "createNamespace"),
                  (LOST, "REPLAY-04", "deviation", "createTable"), (LOST, "REPLAY-01", "inconclusive", "createTable"))
    judged = kg.judge(gaps, rep.results)
    assert judged.states == ["known", "known", "stale"]
    assert judged.covered == {0: 0, 2: 1}
    assert judged.new == [3]
    record, new = judged.record(rep.results)
    assert record["sha256"] and len(record["sha256"]) == 64
    assert [e["state"] for e in record["entries"]] == ["known", "known", "stale"]
    assert new == [{"check": LOST, "requirement": "REPLAY-01", "endpoint": "createTable", "status": "inconclusive"}]


def _decided(rep: RunReport, gaps, fail_on: str = "", current: int = 0, certify: bool = False):
    rep.gaps_judged = kg.judge(gaps, rep.results)
    rep.known_gaps, rep.new_findings = rep.gaps_judged.record(rep.results)
    rep.certification = certification(rep, certify, len(gaps.entries), {}, None)
    chosen = frozenset(s for s in fail_on.split(",") if s)
    for alias, statuses in exits.FAIL_ON_ALIASES.items():
        if alias in chosen:
            chosen = (chosen - {alias}) | set(statuses)
    return exits.decide(current, rep, chosen)


def test_known_gaps_do_not_fail_the_run_new_findings_and_stale_gaps_do(tmp_path):
    gaps = kg.load(_file(tmp_path, GAPS))
    known_only = _report((DROP, "TBL-08", "inconclusive", "dropTable"), (LOST, "REPLAY-04", "deviation", "createTable"))
    assert _decided(known_only, gaps, "ci")[0] == exits.EXIT_OK         # no 7 for a known inconclusive MUST either
    new = _report((DROP, "TBL-08", "fail", "dropTable"), (LOST, "REPLAY-04", "deviation", "renameTable"))
    code, hits, _ = _decided(new, gaps)
    assert (code, hits) == (exits.EXIT_MUST_BROKEN, {"new": 1})           # a new deviation fails, also without ci
    fixed = _report((DROP, "TBL-08", "pass", "dropTable"), (LOST, "REPLAY-04", "deviation", "createTable"))
    assert _decided(fixed, gaps)[0] == exits.EXIT_OK                       # stale: reported, fails under stale only
    code, hits, _ = _decided(fixed, gaps, "ci")
    assert (code, hits) == (exits.EXIT_MUST_BROKEN, {"stale": 1})


def test_a_run_that_does_not_qualify_for_certification_exits_8_saying_why(tmp_path):
    gaps = kg.load(_file(tmp_path, GAPS))
    rep = _report((DROP, "TBL-08", "fail", "dropTable"))
    rep.selection = {"keyword": "TBL-08"}
    code, _, _ = _decided(rep, gaps, certify=True)
    assert code == exits.EXIT_NOT_CERTIFIED
    why = " / ".join(rep.certification["why_not"])
    assert "subset run (keyword=TBL-08)" in why and "lists 2 gap(s)" in why and "1 fail" in why, why
    assert "not certified" in dict(gap_and_certification_pairs(rep))["ctk.certification"]
    clean = _report((CREATE, "NS-01", "pass", "createNamespace"))
    cert = certification(clean, True, 0, {}, None)
    assert cert["certified"] and cert["why_not"] == [] and cert["spec_version"] and len(cert["spec_sha256"]) == 64
    declared = certification(clean, True, 0, {"views": False}, None)
    assert not declared["certified"] and "views=no" in declared["why_not"][0]
    assert not certification(clean, False, 0, {}, None)["certified"]       # certified only when asked for


@pytest.mark.parametrize("text, line, words", [
    ("gaps:\n  - requirement: NOPE-01\n    reason: x\n", 2, "'NOPE-01' is not a requirement"),
    ("gaps:\n  - check: a\n    reason: x\n    extra: 1\n", 4, "'extra' was unexpected"),
    ("gaps:\n  - check: a\n", 2, "'reason' is a required property"),
    ("gaps:\n  - endpoint: createTable\n    reason: x\n", 2, "is not valid under any of the given schemas"),
    ("gaps:\n  - requirement: TBL-08\n    endpoint: makeTable\n    reason: x\n", 2, "'makeTable' is not an operationId"),
    ("capabilities:\n  views: yes\n  teleport: no\n", 3, "unknown capability 'teleport'"),
    ("ignore:\n  - x\n", 1, "'ignore' was unexpected"),
    ("gaps: [\n", 2, "not YAML"),
])
def test_a_wrong_file_is_a_usage_error_naming_its_line(tmp_path, text, line, words):
    path = _file(tmp_path, text)
    with pytest.raises(kg.KnownGapsError) as err:
        kg.load(path)
    assert f"{path}:{line}:" in str(err.value) and words in str(err.value), str(err.value)


def test_a_check_the_kit_does_not_have_is_named_with_its_line(tmp_path):
    gaps = kg.load(_file(tmp_path, GAPS.replace("TBL-08-drop-table", "TBL-08-drop-tabel")))
    assert kg.unknown_checks(gaps, [kg.check_id(DROP)]) == [
        f"--ctk-known-gaps {gaps.path}:4: check 'test_semantics.py::test_semantics[TBL-08-drop-tabel]' is not a check "
        "of this kit (`ctk list` shows their ids)"]


def test_an_item_failing_only_on_known_gaps_is_an_expected_failure(tmp_path):
    gaps = kg.load(_file(tmp_path, GAPS))
    lost = kg.check_id(LOST)
    assert kg.item_covered(gaps, lost, [{"requirement": "REPLAY-04", "endpoint": "createTable", "status": "fail"},
                                        {"requirement": "REPLAY-01", "status": "pass"}]) == "no idempotency store yet"
    assert kg.item_covered(gaps, lost, [{"requirement": "REPLAY-04", "endpoint": "createTable", "status": "fail"},
                                        {"requirement": "REPLAY-01", "status": "fail"}]) is None


def test_ctk_known_gaps_writes_a_file_that_reads_back_and_covers_the_run(tmp_path, capsys):
    from ctk.cli import main

    rep = _report((DROP, "TBL-08", "fail", "dropTable"), (LOST, "REPLAY-04", "deviation", "createTable"),
                  (LOST, "REPLAY-04", "deviation", "createTable"), (CREATE, "NS-01", "pass", "createNamespace"),
                  (CREATE, "NS-02", "error", "createNamespace"))
    run = tmp_path / "conformance.json"
    run.write_text(rep.to_json(), encoding="utf-8")
    out = tmp_path / "gaps.yaml"
    assert main(["known-gaps", str(run), "-o", str(out)]) == 0
    gaps = kg.load(out)
    assert [(e.check, e.requirement, e.reason) for e in gaps.entries] == [
        (kg.check_id(DROP), "TBL-08", "TODO"), (kg.check_id(LOST), "REPLAY-04", "TODO")]   # an error is no gap
    judged = kg.judge(gaps, rep.results)
    assert judged.states == ["known", "known"] and [rep.results[i].requirement for i in judged.new] == ["NS-02"]


def test_the_records_are_in_conformance_json_valid_and_rendered(tmp_path):
    gaps = kg.load(_file(tmp_path, GAPS))
    rep = _report((DROP, "TBL-08", "fail", "dropTable"), (LOST, "REPLAY-04", "fail", "renameTable"))
    _decided(rep, gaps, certify=True)
    data = json.loads(rep.to_json())
    assert problems(data) == []
    assert set(data) >= {"known_gaps", "new_findings", "certification"}
    assert data["new_findings"] == [{"check": LOST, "requirement": "REPLAY-04", "endpoint": "renameTable",
                                     "status": "fail"}]
    assert data["known_gaps"]["entries"][0]["state"] == "known" and data["certification"]["requested"] is True
    again = RunReport.from_dict(data)
    assert again.known_gaps == data["known_gaps"] and again.certification == data["certification"]
    pairs = dict(gap_and_certification_pairs(rep))
    assert pairs["ctk.known_gap.1"].startswith("known: test_semantics.py::test_semantics[TBL-08-drop-table]")
    assert pairs["ctk.new_finding.1"] == f"fail REPLAY-04 {LOST}"
    html = section(data["known_gaps"], data["new_findings"], data["certification"], lambda x: str(x))
    assert "Not a certified run" in html and "drops are soft deletes" in html and "New findings: 1" in html


def test_the_headline_says_whether_the_gate_holds_before_the_catalogs_verdict(tmp_path):
    """Issue 35: a run whose findings are all known gaps exits 0, so its headline may not lead with FAIL."""
    from ctk.reporting.html import overall_text

    gaps = kg.load(_file(tmp_path, GAPS))
    known = _report((DROP, "TBL-08", "fail", "dropTable"), (CREATE, "NS-01", "pass", "createNamespace"))
    assert _decided(known, gaps, "ci")[0] == exits.EXIT_OK
    line = overall_text(json.loads(known.to_json()))
    assert line.startswith("KNOWN GAPS ONLY: every finding is a known gap of known-gaps.yaml"), line
    assert line.endswith("FAIL: at least one MUST requirement is broken"), line
    new = _report((DROP, "TBL-08", "fail", "dropTable"), (LOST, "REPLAY-04", "fail", "renameTable"),  # 2 new
                  (CREATE, "NS-01", "fail", "createNamespace"))
    assert _decided(new, gaps, "ci")[0] == exits.EXIT_MUST_BROKEN
    assert overall_text(json.loads(new.to_json())).startswith("NEW FINDINGS: 2 not in known-gaps.yaml; FAIL"), \
        overall_text(json.loads(new.to_json()))
    plain = _report((CREATE, "NS-01", "fail", "createNamespace"))       # no file: the verdict alone
    assert overall_text(json.loads(plain.to_json())) == "FAIL: at least one MUST requirement is broken"
