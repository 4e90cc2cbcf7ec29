"""A realistic sample run shared by the reporting tests (several statuses, a failure with exchanges)."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

from ctk.core.verdicts import Status, Verdict
from ctk.core.exchange import Exchange
from ctk.reporting.model import RunReport

SECRET_TOKEN = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.sekrit-sig-42"
URL_PASSWORD = "hunter2pw"
HOSTILE = '<script>alert("pwned")</script> & <img src=x onerror=alert(1)>'


def _exchange(method, path, status, body=None, resp=None, label=None, key="019b1a2c-0000-7000-8000-000000000001",
              error=None):
    return Exchange(
        method=method,
        url=f"http://127.0.0.1:8181/v1/ns/{path}",
        request_headers={"Authorization": f"Bearer {SECRET_TOKEN}", "Idempotency-Key": key,
                         "Content-Type": "application/json"},
        request_body=body,
        status=status,
        response_headers={"Content-Type": "application/json"},
        response_body=resp,
        error=error,
        elapsed_ms=12.5,
        label=label,
    )


def build_sample() -> RunReport:
    rep = RunReport.begin(f"http://admin:{URL_PASSWORD}@127.0.0.1:8181/catalog?token={SECRET_TOKEN}&x=1",
                          name="reference (deviation: no-inflight)",
                          options={"ctk_target": "http://127.0.0.1:8181", "ctk_token": SECRET_TOKEN,
                                   "ctk_strict": False, "ctk_workers": 4})
    rep.set_server_info({"control": True, "deviation": "no-inflight"})
    rep.set_discovery(SimpleNamespace(
        idempotency_supported=True, lifetime=timedelta(minutes=30), lifetime_raw="PT30M", lifetime_error=None,
        misplaced_in=None, java_parseable=True, endpoints={"POST /v1/{prefix}/namespaces",
                                                             "POST /v1/{prefix}/namespaces/{namespace}/tables"},
        prefix="ns"))
    add = rep.add
    add(Verdict.ok("DISC-01", "PT30M at top level"), "tests/suites/test_discovery.py::test_lifetime", 0.05)
    add(Verdict.ok("DISC-03", "parseable"), "tests/suites/test_discovery.py::test_java", 0.01)
    for ep in ("createNamespace", "createTable", "updateTable"):
        add(Verdict.ok("REPLAY-01", "replayed", endpoint=ep, behaviour="finalized-duplicate",
                       classification="replayed 200"), f"suites/test_replay.py::test_duplicate[{ep}]", 0.2)
        add(Verdict.ok("REPLAY-02", "stored 4xx replayed", endpoint=ep, behaviour="terminal-4xx-replayed",
                       classification="409 replayed"), f"suites/test_replay.py::test_terminal[{ep}]", 0.3)
        add(Verdict.ok("PAYLOAD-01", "422", endpoint=ep, behaviour="payload-mismatch", classification="422"),
            f"suites/test_payload.py::test_conflict[{ep}]", 0.1)
    # A MUST failure with its exchanges, one of which carries a raw (unredacted) Authorization header.
    ex1 = _exchange("POST", "tables", None, body='{"name":"t1"}', label="first attempt",
                    error="connection dropped after commit")
    ex2 = _exchange("POST", "tables", 200, body='{"name":"t1"}', resp='{"metadata-location":"s3://b/t1/00002.json"}',
                    label="retry, same key")
    raw = ex2.to_dict()
    raw["request_headers"] = dict(ex2.request_headers)  # simulate a check that forgot to redact
    add(Verdict.broken("REPLAY-04", "the retry re-executed: 2 executions, expected 1; " + HOSTILE
                       + f" (client sent Bearer {SECRET_TOKEN})",
                       endpoint="createTable", behaviour="lost-answer-503", classification="re-executed",
                       exchanges=[ex1.to_dict(), raw]),
        "suites/test_replay.py::test_lost_answer[createTable]", 1.7)
    add(Verdict.ok("REPLAY-04", "one execution", endpoint="updateTable", behaviour="lost-answer-503",
                   classification="replayed 200"), "suites/test_replay.py::test_lost_answer[updateTable]", 1.1)
    # In flight: the deviation profile answers with a plain 409 without the subtype.
    add(Verdict.ok("INFLIGHT-01", "no second execution", endpoint="updateTable", behaviour="in-flight-duplicate",
                   classification="409"), "suites/test_inflight.py::test_dup[updateTable]", 2.0)
    # (a deviation as the design profile judges it; the spec profile classifies it)
    add(Verdict("INFLIGHT-02", Status.DEVIATION, "409 without request_in_progress subtype", endpoint="updateTable",
                       behaviour="in-flight-duplicate", classification="409 (no subtype)",
                       exchanges=[_exchange("POST", "tables/t1", 409, body="{}",
                                            resp='{"error":{"code":409,"type":"CommitFailedException"}}',
                                            label="duplicate while in flight").to_dict()]),
        "suites/test_inflight.py::test_subtype[updateTable]", 2.1)
    add(Verdict.ok("INFLIGHT-01", "waited", endpoint="createTable", behaviour="in-flight-duplicate",
                   classification="wait-and-replay"), "suites/test_inflight.py::test_dup[createTable]", 2.5)
    add(Verdict.inconclusive("LIFE-01", "lifetime PT30M longer than --ctk-max-wait 60s"),
        "suites/test_lifetime.py::test_honoured", 0.0)
    add(Verdict.unsupported("RECON-02", "target has no control API"), "suites/test_recovery.py::test_crash", 0.0)
    add(Verdict.ok("SCOPE-01", "not replayed across operations", endpoint="createTable", behaviour="key-scope",
                   classification="executed independently"), "suites/test_scope.py::test_scope", 0.4)
    rep.finish()
    return rep

