"""Odd-server tests: where a re-execution leaves no trace, the kit says so (inconclusive), never passes."""

from __future__ import annotations

from odd import Answer, Req, Rule

from ctk.checks.idempotency import check_finalized_duplicate
from ctk.core.verdicts import Status
from ctk.http.endpoints import ENDPOINTS

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
