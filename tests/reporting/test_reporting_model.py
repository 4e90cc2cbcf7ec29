import json
from datetime import timedelta
from types import SimpleNamespace

import pytest

from reporting_sample import SECRET_TOKEN, URL_PASSWORD
from ctk.core.requirements import REQUIREMENTS
from ctk.core.verdicts import Status, Verdict
from ctk.reporting.model import STATUS_ORDER, RunReport, discovery_summary, redact_url, worst


def test_status_order_worst_first():
    assert STATUS_ORDER == ("error", "fail", "deviation", "inconclusive", "pass", "unsupported")
    assert worst(["pass", "unsupported"]) == "pass"
    assert worst(["pass", "inconclusive"]) == "inconclusive"
    assert worst(["inconclusive", "deviation", "pass"]) == "deviation"
    assert worst(["unsupported", "fail", "deviation"]) == "fail"
    assert worst(["unsupported"]) == "unsupported"
    assert worst([]) is None


def _rep(*verdicts):
    rep = RunReport.begin("http://127.0.0.1:1")
    for i, v in enumerate(verdicts):
        rep.add(v, f"t::{i}", 0.1)
    return rep


def test_summary_per_requirement_takes_worst_and_counts():
    rep = _rep(Verdict.ok("REPLAY-01"), Verdict.broken("REPLAY-01", "twice"), Verdict.ok("REPLAY-01"),
               Verdict.ok("SCOPE-01"), Verdict.unsupported("SCOPE-01", "n/a"),
               Verdict.ok("KEY-01"), Verdict.inconclusive("KEY-01", "timing"),
               Verdict.unsupported("RECON-01", "no control api"),
               Verdict.broken("KEY-02", "accepted"))
    s = rep.summary()
    assert list(s)[: len(REQUIREMENTS)] == list(REQUIREMENTS)
    assert s["REPLAY-01"].status == "fail"
    assert s["REPLAY-01"].counts == {"error": 0, "fail": 1, "deviation": 0, "inconclusive": 0, "pass": 2, "unsupported": 0}
    assert s["SCOPE-01"].status == "pass"
    assert s["KEY-01"].status == "inconclusive"
    assert s["RECON-01"].status == "unsupported"
    assert s["KEY-02"].status == "deviation"  # SHOULD broken
    assert s["OCC-01"].status is None and s["OCC-01"].counts["pass"] == 0
    assert rep.counts() == {"error": 0, "fail": 1, "deviation": 1, "inconclusive": 1, "pass": 4, "unsupported": 2}
    rc = rep.requirement_counts()
    assert rc["fail"] == 1 and rc["pass"] == 1 and rc["not-run"] == len(REQUIREMENTS) - 5
    assert rep.overall() == "fail"
    assert _rep().overall() is None
    assert _rep(Verdict.ok("KEY-01"), Verdict.unsupported("KEY-02", "x")).overall() == "pass"


def test_default_outcomes_and_bad_status():
    rep = _rep(Verdict.ok("KEY-01"), Verdict.broken("REPLAY-01", "x"), Verdict.broken("KEY-01", "x"),
               Verdict.unsupported("KEY-01", "x"), Verdict.inconclusive("KEY-01", "x"))
    assert [r.outcome for r in rep.results] == ["passed", "failed", "passed", "skipped", "skipped"]
    assert rep.add(Verdict.ok("KEY-01"), "n", 1.0, outcome="failed").outcome == "failed"
    bad = Verdict.ok("KEY-01").to_dict()
    bad["status"] = "maybe"
    with pytest.raises(ValueError, match="unknown verdict status"):
        rep.add(bad, "n")


def test_json_round_trip(sample):
    text = sample.to_json()
    data = json.loads(text)
    assert data["format"] == "ctk-conformance/1"
    assert data["overall"] == "fail"
    assert data["requirements"]["REPLAY-04"]["status"] == "fail"
    assert data["requirements"]["INFLIGHT-02"]["status"] == "deviation"
    assert data["matrix"]["createTable"]["lost-answer-503"]["classifications"] == ["re-executed"]
    back = RunReport.from_json(text)
    assert back.to_json() == text
    assert [r.to_dict() for r in back.results] == [r.to_dict() for r in sample.results]
    assert back.summary()["REPLAY-04"].status == "fail"
    assert back.discovery["lifetime"] == 1800.0
    assert back.discovery["endpoints"] == sorted(back.discovery["endpoints"])


def test_each_result_names_the_worker_that_decided_it():
    """Under xdist a verdict carries its worker (gw0, ...), to rerun it on its own; in one process none is written."""
    rep = RunReport.begin("http://127.0.0.1:1")
    rep.add({**Verdict.ok("REPLAY-01").to_dict(), "worker": "gw1"}, "t::a")
    rep.add(Verdict.ok("REPLAY-01"), "t::b")
    results = json.loads(rep.to_json())["results"]
    assert results[0]["worker"] == "gw1" and "worker" not in results[1]
    assert [r.worker for r in RunReport.from_json(rep.to_json()).results] == ["gw1", None]


def test_from_json_rejects_other_documents():
    with pytest.raises(ValueError, match="not a ctk conformance report"):
        RunReport.from_json('{"tests": []}')
    with pytest.raises(ValueError, match="invalid JSON"):
        RunReport.from_json("<html>")
    with pytest.raises(ValueError, match="not a ctk conformance report"):
        RunReport.from_json("[1, 2]")


def test_report_json_carries_no_secret(sample):
    text = sample.to_json()
    assert SECRET_TOKEN not in text
    assert URL_PASSWORD not in text
    data = json.loads(text)
    assert data["target"]["url"].startswith("http://<redacted>@127.0.0.1:8181/catalog?")
    assert data["options"]["ctk_token"] == "<redacted>"
    assert data["options"]["ctk_workers"] == 4 and data["options"]["ctk_strict"] is False
    failing = [r for r in data["results"] if r["status"] == "fail"][0]
    assert all(x["request_headers"]["Authorization"] == "<redacted>" for x in failing["exchanges"])
    assert "Bearer <redacted>" in failing["message"]


def test_redact_url():
    assert redact_url("https://u:p@h:1/x?a=1&access_token=zz") == "https://<redacted>@h:1/x?a=1&access_token=<redacted>"
    assert redact_url("http://127.0.0.1:8181") == "http://127.0.0.1:8181"
    assert redact_url(None) is None


def test_discovery_summary_and_view():
    d = discovery_summary(SimpleNamespace(idempotency_supported=False, lifetime=None, lifetime_raw="P1Y",
                                          lifetime_error="years", misplaced_in="overrides", java_parseable=False,
                                          endpoints=None, prefix=None, config={"token": "x"}))
    assert d["misplaced_in"] == "overrides" and d["java_parseable"] is False and "config" not in d
    rep = _rep(Verdict.ok("INFLIGHT-01", endpoint="createTable", behaviour="in-flight-duplicate", classification="wait-and-replay"),
               Verdict.ok("PAYLOAD-01", endpoint="createTable", behaviour="payload-mismatch", classification="422"),
               Verdict.ok("PAYLOAD-01", endpoint="updateTable", behaviour="payload-mismatch", classification="422"))
    rep.set_discovery({"lifetime": timedelta(hours=1), "lifetime_raw": "PT1H"})
    view = rep.discovery_view()
    assert view["in_flight"] == "wait-and-replay"
    assert view["payload_conflict"] == "422"
    assert view["lifetime"] == 3600.0
    assert rep.matrix()["createTable"]["in-flight-duplicate"]["status"] == "pass"


def test_status_enum_accepted_in_dict():
    rep = RunReport.begin(None)
    d = Verdict.ok("KEY-01").to_dict()
    d["status"] = Status.PASS
    assert rep.add(d, "n").status == "pass"


def test_in_flight_summary_lists_an_endpoint_once():
    from ctk.reporting.model import RunReport

    rep = RunReport.begin("http://127.0.0.1:1")
    rep.add(Verdict.inconclusive("INFLIGHT-01", "no overlap", endpoint="createTable", classification="no overlap observed"),
            "t::a")
    rep.add(Verdict.ok("INFLIGHT-01", "409", endpoint="createTable", classification="rejected in flight"), "t::b")
    rep.add(Verdict.inconclusive("INFLIGHT-01", "no overlap", endpoint="updateTable",
                                 classification="no overlap observed"), "t::c")
    assert rep.discovery_view()["in_flight"] == "rejected in flight (createTable); no overlap observed (updateTable)"


def test_exchanges_capped_with_a_note():
    from ctk.reporting.model import FINDING_BODY, FINDING_EXCHANGES, OTHER_EXCHANGES, RunReport

    def ex(i, status=200, body="b"):
        return {"method": "GET", "url": f"http://127.0.0.1:1/v1/x{i}", "request_headers": {}, "request_body": None,
                "status": status, "response_headers": {}, "response_body": body, "error": None,
                "started_at": 0.0, "elapsed_ms": 1.0, "label": None}

    exs = [ex(i) for i in range(30)]
    exs[10] = ex(10, 409, "c" * (FINDING_BODY * 2))
    rep = RunReport.begin("http://127.0.0.1:1")
    f = rep.add(Verdict.broken("REPLAY-01", "expected: x\nhappened: y\n\nexchanges:\n--> GET ...", exchanges=exs), "t::f")
    assert len(f.exchanges) == FINDING_EXCHANGES and f.exchanges_cut == 30 - FINDING_EXCHANGES
    assert [e["url"][-3:] for e in f.exchanges][:2] == ["/x0", "x10"] and f.exchanges[-1]["url"].endswith("/x29")
    assert "characters not kept in the report" in f.exchanges[1]["response_body"]
    assert f.message == "expected: x\nhappened: y"          # the rendered copy goes; the exchanges stay
    p = rep.add(Verdict.ok("REPLAY-01", "fine", exchanges=exs + exs), "t::p")
    assert len(p.exchanges) == OTHER_EXCHANGES and p.exchanges[0]["status"] == 409


def test_details_capped_with_a_note():
    from ctk.reporting.model import OTHER_DETAILS, RunReport

    history = [{"attempt": i, "outcome": "ok", "snapshot": 1000 + i} for i in range(200)]
    rep = RunReport.begin("http://127.0.0.1:1")
    r = rep.add(Verdict.ok("REPLAY-04", "one execution", details={"key": "k1", "history": history}), "t::a")
    assert r.details["key"] == "k1"
    # the history stays a list (its first items), and the note says how much was not kept (issue 30 item 1)
    assert r.details["history"] == history[:len(r.details["history"])] and 0 < len(r.details["history"]) < 200
    assert r.details["details_cut"]["history"].startswith("200 items, ")
    assert len(json.dumps(r.details)) <= OTHER_DETAILS
    small = rep.add(Verdict.ok("REPLAY-04", "x", details={"history": history[:3]}), "t::b")
    assert small.details["history"] == history[:3]


def test_same_finding_on_many_endpoints_keeps_full_evidence_the_first_times():
    from ctk.reporting.model import FINDING_EXCHANGES, FULL_EVIDENCE_PER_KIND, REPEAT_EXCHANGES, RunReport

    exs = [{"method": "POST", "url": f"http://127.0.0.1:1/v1/x{i}", "request_headers": {}, "request_body": None,
            "status": 200, "response_headers": {}, "response_body": "b", "error": None, "started_at": 0.0,
            "elapsed_ms": 1.0, "label": None} for i in range(20)]
    rep = RunReport.begin("http://127.0.0.1:1")
    kept = [len(rep.add(Verdict.broken("REPLAY-01", "re-executed", endpoint=f"op{i}", behaviour="finalized-duplicate",
                                       classification="re-executed", exchanges=exs), f"t::{i}").exchanges)
            for i in range(5)]
    assert kept == [FINDING_EXCHANGES] * FULL_EVIDENCE_PER_KIND + [REPEAT_EXCHANGES] * (5 - FULL_EVIDENCE_PER_KIND)
    other_kind = rep.add(Verdict.broken("REPLAY-04", "lost", endpoint="op0", behaviour="lost-answer-503",
                                        exchanges=exs), "t::x")
    assert len(other_kind.exchanges) == FINDING_EXCHANGES
