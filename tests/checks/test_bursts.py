"""Judging a burst of duplicates (ctk.checks.bursts) from its answers and the interposer's timings."""

from __future__ import annotations

import json

from ctk.checks.bursts import BurstRound, decisive, judge_group, judge_round, overlapping, timings
from ctk.catalog import ENDPOINTS, body_identity
from ctk.core.exchange import Exchange


class FakeCase:
    def __init__(self, op: str, blind: str | None = None):
        self.endpoint = ENDPOINTS[op]
        self.blind = blind
        self.identity = body_identity


def ex(status: int | None, body: dict | None = None) -> Exchange:
    return Exchange("POST", "http://127.0.0.1/v1/x", status=status,
                    response_body=None if body is None else json.dumps(body))


def busy(subtype: str | None = "request_in_progress") -> Exchange:
    err = {"message": "in progress", "type": "RequestInProgressException", "code": 409}
    if subtype:
        err["subtype"] = subtype
    return ex(409, {"error": err})


PLAN_A = {"status": "completed", "plan-id": "a"}
PLAN_B = {"status": "completed", "plan-id": "b"}


def test_classes():
    plan = FakeCase("planTableScan")
    assert judge_group(plan, [ex(200, PLAN_A), busy(), busy()], 1)[0] == "409 request_in_progress"
    assert judge_group(plan, [ex(200, PLAN_A), busy(None)], 1)[0] == "plain 409"
    assert judge_group(plan, [ex(200, PLAN_A), ex(200, PLAN_A)], 1)[0] == "wait-and-replay"
    # a new plan-id is a second execution, even when state could not show it
    cls, why = judge_group(plan, [ex(200, PLAN_A), ex(200, PLAN_B)], 1)
    assert cls == "second execution" and "executed again" in why
    assert judge_group(plan, [ex(200, PLAN_A), busy()], 2)[0] == "second execution"
    table = FakeCase("createTable")
    exists = ex(409, {"error": {"message": "x", "type": "AlreadyExistsException", "code": 409}})
    assert judge_group(table, [ex(200, {"metadata": {"table-uuid": "u"}}), exists], 1)[0] == "second execution"
    assert judge_group(table, [ex(500, {"error": {"type": "ServerError", "code": 500}}), busy()], 0)[0] == \
        "no success"
    assert judge_group(table, [ex(200, {"metadata": {"table-uuid": "u"}}), ex(503)], 1)[0] == "other: 503"


def test_blind_case_needs_every_duplicate_rejected():
    cancel = FakeCase("cancelPlanning", blind="cancelling a cancelled plan leaves no trace")
    assert not decisive(cancel, "wait-and-replay", None, [ex(204), ex(204)])
    assert not decisive(cancel, "409 request_in_progress", None, [ex(204), ex(204), busy()])
    assert decisive(cancel, "409 request_in_progress", None, [ex(204), busy()])
    assert decisive(cancel, "wait-and-replay", 1, [ex(204), ex(204)])           # counters tell
    assert decisive(cancel, "second execution", None, [ex(204), ex(404)])
    assert decisive(FakeCase("createTable"), "wait-and-replay", None, [ex(200), ex(200)])
    assert decisive(cancel, "other: 503", None, [ex(204), ex(503)])
    assert not decisive(cancel, "other: 503", None, [ex(204), ex(204), ex(503)])


def test_timings_text():
    ev = {"overlapped": True, "pair": [0, 1], "lead_ms": 4.2, "requests": [
        {"role": "original", "sent_ms": 0.0, "answer_ms": 5.0, "status": 200},
        {"role": "copy", "sent_ms": 0.8, "answer_ms": 6.0, "status": 409}]}
    text = timings(ev)
    assert "original: forwarded 0.0 ms, answer began 5.0 ms (200)" in text
    assert "copy 1: forwarded 0.8 ms" in text and "overlap: request 1 reached the server 4.2 ms before" in text
    assert "no overlap" in timings({**ev, "overlapped": False, "pair": None})
    assert "no timings" in timings(None)


def _round(case, attempts, copies, requests, retries_after_burst):
    event = {"overlapped": True, "pair": [0, 1], "requests": requests}
    r = BurstRound(case, "k", attempts, copies, event, 1, None, "", "", attempts[-1], retries_after_burst)
    r.cls, r.why = judge_group(case, r.answers, r.runs)
    return r


CANCEL_BURST = [{"role": "original", "status": 409, "sent_ms": 0.0, "answer_ms": 2.1},
                {"role": "copy", "status": 204, "sent_ms": 0.02, "answer_ms": 4.5}]


def test_retries_after_the_burst_are_replays_not_in_flight_duplicates():
    """cancelPlanning on a plain catalog: the copy won, the original got 409 in flight, the client's retry went
    out after the burst was answered and got the finalized 204: the in-flight rule was observed."""
    cancel = FakeCase("cancelPlanning", blind="cancelling a cancelled plan leaves no trace")
    r = _round(cancel, [busy(), ex(204)], [ex(204)], CANCEL_BURST, retries_after_burst=True)
    assert r.cls == "409 request_in_progress"
    assert [a.status for a in r.in_flight] == [409, 204]
    assert decisive(cancel, r.cls, None, r.answers, r.in_flight)
    # the same answers, but the retry may have met the burst still in flight: two successes, undecidable
    r = _round(cancel, [busy(), ex(204)], [ex(204)], CANCEL_BURST, retries_after_burst=None)
    assert [a.status for a in r.in_flight] == [409, 204, 204]
    assert not decisive(cancel, r.cls, None, r.answers, r.in_flight)


def test_an_overlapping_duplicate_that_succeeded_stays_undecidable_on_a_blind_case():
    cancel = FakeCase("cancelPlanning", blind="cancelling a cancelled plan leaves no trace")
    reqs = [{"role": "original", "status": 204, "sent_ms": 0.0, "answer_ms": 3.0},
            {"role": "copy", "status": 204, "sent_ms": 0.01, "answer_ms": 3.5}]
    r = _round(cancel, [ex(204)], [ex(204)], reqs, retries_after_burst=True)
    assert r.cls == "wait-and-replay" and not decisive(cancel, r.cls, None, r.answers, r.in_flight)
    # a copy the server took up only after the first answer began is no in-flight duplicate
    reqs = [{"role": "original", "status": 204, "sent_ms": 0.0, "answer_ms": 3.0},
            {"role": "copy", "status": 409, "sent_ms": 0.01, "answer_ms": 2.0},
            {"role": "copy", "status": 204, "sent_ms": 3.2, "answer_ms": 4.0}]
    assert overlapping(reqs) == [0, 1]
    r = _round(cancel, [ex(204)], [busy(), ex(204)], reqs, retries_after_burst=True)
    assert [a.status for a in r.in_flight] == [204, 409]
    assert decisive(cancel, r.cls, None, r.answers, r.in_flight)


def test_a_second_execution_in_state_is_decisive_whatever_overlapped():
    cancel = FakeCase("cancelPlanning", blind="cancelling a cancelled plan leaves no trace")
    r = _round(cancel, [ex(204)], [ex(204)], CANCEL_BURST, retries_after_burst=True)
    r.executions_state = 2
    r.cls, r.why = judge_group(cancel, r.answers, r.runs)
    assert r.cls == "second execution" and decisive(cancel, r.cls, None, r.answers, r.in_flight)


DROP_BURST = [{"role": "original", "status": 409, "sent_ms": 0.0, "answer_ms": 2.1},
              {"role": "copy", "status": 204, "sent_ms": 0.02, "answer_ms": 4.5},
              {"role": "copy", "status": 409, "sent_ms": 0.03, "answer_ms": 2.0}]


def test_a_late_retry_that_re_executes_is_no_in_flight_second_execution():
    """no-replay on dropTable: in flight, one copy won and the others got 409; the client's retry, sent after
    the burst was answered, met the finalized key and ran again (404): state shows 2 executions. That is a
    replay failure (REPLAY-01), not an in-flight duplicate executed."""
    drop = FakeCase("dropTable")
    gone = ex(404, {"error": {"message": "x", "type": "NoSuchTableException", "code": 404}})
    r = _round(drop, [busy(), gone], [ex(204), busy()], DROP_BURST, retries_after_burst=True)
    r.executions_state = 2
    assert judge_group(drop, r.answers, r.runs)[0] == "second execution"   # what every answer says
    assert r.retry_executions == 1
    cls, why = judge_round(r)
    assert cls == "409 request_in_progress", why
    assert "finalized key executed again" in why and "404" in why
    # a retry that was replayed (the in-flight success again) explains none of the executions: two stay two
    r = _round(drop, [busy(), ex(204)], [ex(204), busy()], DROP_BURST, retries_after_burst=True)
    r.executions_state = 2
    assert r.retry_executions == 0 and judge_round(r)[0] == "second execution"
    # a retry that may have met the burst in flight is judged with it
    r = _round(drop, [busy(), gone], [ex(204), busy()], DROP_BURST, retries_after_burst=None)
    r.executions_state = 2
    assert judge_round(r)[0] == "second execution"


def _verdict(case, attempts, copies, requests, retries_after_burst, state=1):
    from types import SimpleNamespace

    from ctk.checks.bursts import inflight_verdicts
    from ctk.checks.common import Run

    r = _round(case, attempts, copies, requests, retries_after_burst)
    r.executions_state = state
    r.cls, r.why = judge_round(r)
    ctx = SimpleNamespace(client=SimpleNamespace(exchanges=[]))
    run = Run(ctx, "INFLIGHT-01", case.endpoint, "network-duplicate-inflight")
    return inflight_verdicts(run, None, [r], client_final=True)[0]


def test_a_late_retry_replayed_with_another_answer_is_not_the_in_flight_final():
    """replay-different-body on createTable: in flight the copy won and the original got 409; the client's
    retry after the burst got the replay with another status (201): the in-flight rule held, the final answer
    is the replay checks' finding."""
    table = FakeCase("createTable")
    ok = ex(200, {"metadata": {"table-uuid": "u"}})
    v = _verdict(table, [busy(), ex(201, {"replayed": True})], [ok, busy()], DROP_BURST, retries_after_burst=True)
    assert v.status.value == "pass", v.message
    assert "201" in v.message and "replay checks" in v.message
    # the same final to a retry that may have met the burst in flight stays the in-flight rule's failure
    v = _verdict(table, [busy(), ex(201, {"replayed": True})], [ok, busy()], DROP_BURST, retries_after_burst=None)
    assert v.status.value != "pass" and v.classification == "final 201", v.message
    # a late retry answered 409 in progress (the key never finalized) is still the in-flight rule's failure
    v = _verdict(table, [busy(), busy()], [ok, busy()], DROP_BURST, retries_after_burst=True)
    assert v.status.value != "pass", v.message


def test_state_seen_when_the_burst_was_answered_decides_what_ran_in_flight():
    """no-replay on replaceView: the late retry re-executes with the same view-uuid, so its answer cannot tell;
    the state read when the burst was answered whole (before the retry) shows one execution."""
    view = FakeCase("replaceView")
    ok = ex(200, {"metadata": {"view-uuid": "v"}})
    r = _round(view, [busy(), ex(200, {"metadata": {"view-uuid": "v"}})], [ok, busy()], DROP_BURST,
               retries_after_burst=True)
    r.executions_state = 2
    assert r.retry_executions == 0 and judge_round(r)[0] == "second execution"   # the answers cannot tell
    r.settled_runs = 1
    cls, why = judge_round(r)
    assert cls == "409 request_in_progress" and "1 when the burst was answered" in why, why
    r.settled_runs = 2                                  # two executions before any late retry: in flight
    assert judge_round(r)[0] == "second execution"
