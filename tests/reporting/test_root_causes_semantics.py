"""Issue 28 item 3 (b): semantics first in the root causes. A broken plain operation (a catalog-semantics
requirement: areas namespaces, tables, listing, evolution, transactions, views, types) is listed before any
retry, replay or concurrency finding of its status, whatever their count, and the verdicts that rest on it
(inconclusive, ``details.blocked_by``) are shown under it and in the undecided list as "decided once ... is
fixed"."""

from __future__ import annotations

from ctk.reporting.model import Result, RunReport
from ctk.reporting.rootcause import root_causes


def _r(req: str, status: str, endpoint: str | None = None, message: str = "", **details) -> dict:
    return {"requirement": req, "status": status, "endpoint": endpoint, "message": message,
            "classification": None, "details": details}


REPLAYS = [_r("REPLAY-01", "fail", "createTable", "expected: x\nhappened: the retry was executed again")] * 4


def test_a_broken_plain_operation_is_the_first_root_cause_and_holds_what_rests_on_it():
    results = [*REPLAYS,
               _r("OCC-02", "fail", "updateTable", "expected: x\nhappened: 2 commits landed"),
               _r("TBL-08", "fail", "dropTable", "expected: gone\nhappened: still loads"),
               _r("REPLAY-04", "inconclusive", "dropTable", "the plain dropTable is broken", blocked_by="TBL-08"),
               _r("LIFE-01", "inconclusive", "dropTable", "the plain dropTable is broken", blocked_by="TBL-08"),
               _r("REPLAY-02", "inconclusive", "createTable", "something else")]
    causes = root_causes(results)
    first = causes[0]
    # a fail of the semantic family goes before fails of the retry rules with more findings
    assert first.rule.requirement == "TBL-08", [rc.line() for rc in causes]
    assert first.blocked == [6, 7] and first.to_dict()["blocked_requirements"] == {"REPLAY-04": 1, "LIFE-01": 1}
    assert "2 verdict(s) undecided until it is fixed (REPLAY-04, LIFE-01)" in first.line()
    assert all(not rc.blocked for rc in causes[1:])


def test_without_a_semantic_finding_the_order_is_by_status_and_count():
    causes = root_causes([*REPLAYS, _r("OCC-02", "fail", "updateTable", "expected: x\nhappened: lost")])
    assert [rc.rule.requirement for rc in causes] == ["REPLAY-01", "OCC-02"]


def test_the_undecided_list_says_what_decides_the_blocked_verdicts():
    rows = [_r("TBL-08", "fail", "dropTable", "expected: gone\nhappened: still loads"),
            _r("REPLAY-01", "inconclusive", "dropTable", "the plain dropTable is broken: TBL-08 fail", blocked_by="TBL-08"),
            _r("REPLAY-04", "inconclusive", "dropTable", "a setup step showed a broken plain operation (TBL-08): ...",
               blocked_by="TBL-08")]
    report = RunReport(results=[Result.from_dict({**r, "message": r["message"]}) for r in rows])
    groups = [g for g in report.undecided() if "TBL-08" in g["what"]]
    assert len(groups) == 1, report.undecided()
    assert groups[0]["what"].startswith("decided once TBL-08 is fixed") and groups[0]["count"] == 2
