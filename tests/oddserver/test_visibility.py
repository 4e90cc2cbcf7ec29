"""Odd-server tests: where a re-execution leaves no trace, the kit says so (inconclusive), never passes."""

from __future__ import annotations

from odd import Answer, Req, Rule

from ctk.checks.idempotency import check_finalized_duplicate
from ctk.core.verdicts import Status
from ctk.catalog import ENDPOINTS

PLAN_ONE = r"/namespaces/[^/]+/tables/[^/]+/plan/[^/]+$"


class cancel_anything_204(Rule):
    """Cancelling a plan the catalog cannot find (its table dropped) answers 204, like a real cancel: a
    re-executed cancel then looks exactly like a replayed one, in state and in the answer."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("DELETE", PLAN_ONE) and answer.status == 404:
            self.hit()
            return Answer(204)
        return None


def test_cancel_whose_reexecution_answers_like_a_replay_is_inconclusive(make_odd):
    rule = cancel_anything_204()
    ctx, _ = make_odd([rule])
    v01, v05 = check_finalized_duplicate(ctx, ENDPOINTS["cancelPlanning"])
    assert rule.hits >= 1                      # the keyless control was answered 204
    assert v01.status is Status.INCONCLUSIVE, v01.message
    assert "answers 204 like the original" in v01.message and "counters" in v01.message
    assert v05.status is Status.INCONCLUSIVE


class in_flight_503(Rule):
    """An in-flight duplicate answered 503 instead of 409 (no second execution)."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        err = (answer.json() or {}).get("error") if answer.status == 409 else None
        if isinstance(err, dict) and err.get("subtype") == "request_in_progress":
            self.hit()
            return Answer.of(503, {"error": {"message": "busy", "type": "ServiceUnavailableException",
                                             "code": 503}})
        return None


def test_in_flight_other_answer_executed_once_is_inflight02s_matter(make_odd):
    from ctk.checks.idempotency import check_in_flight

    rule = in_flight_503()
    ctx, _ = make_odd([rule], interposer=True)
    for _ in range(3):   # bursts are timing-bound: a 409 (here: 503) shows in most runs, retried to be sure
        v1, v2 = check_in_flight(ctx, ENDPOINTS["createTable"])
        if v1.classification and v1.classification.startswith("other"):
            break
    assert rule.hits >= 1
    assert v1.status is Status.PASS and v1.classification == "other: 503 ServiceUnavailableException", v1.message
    assert v2.details.get("rule_broken") and "neither" in v2.message
