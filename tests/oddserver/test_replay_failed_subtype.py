"""RECON-03 can fail: a catalog whose 5xx for a finalized answer it cannot produce lacks the subtype
idempotency_replay_failed. The spec names no such subtype (CLASSIFIED: the verdict passes, carrying what it
saw and that the design document's rule is broken); under the design profile it is a deviation (a SHOULD)."""

from __future__ import annotations

from odd import Answer, Req, Rule

from ctk.checks import run_endpoint_checks
from ctk.core import requirements as rq
from ctk.core.verdicts import Status


class replay_failed_without_subtype(Rule):
    """A 5xx answer with the subtype idempotency_replay_failed is answered without the subtype."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        err = body.get("error") if isinstance(body, dict) else None
        if answer.status >= 500 and isinstance(err, dict) and err.get("subtype") == "idempotency_replay_failed":
            self.hit()
            return Answer.of(answer.status, {"error": {k: v for k, v in err.items() if k != "subtype"}})
        return None


def _recon(ctx) -> dict:
    out = run_endpoint_checks(ctx, "createNamespace", ["replay-failed"])
    return {v.requirement: v for v in out}


def test_a_replay_failure_without_its_subtype_breaks_recon03(make_odd):
    rule = replay_failed_without_subtype()
    ctx, _ = make_odd([rule], control_api=True)
    spec = _recon(ctx)
    assert rule.hits >= 1
    assert spec["RECON-01"].status is Status.PASS, spec["RECON-01"].message
    v = spec["RECON-03"]
    assert v.status is Status.PASS and v.details.get("rule_broken"), (v.status, v.classification, v.details)
    previous = rq.set_profile("design")
    try:
        v = _recon(ctx)["RECON-03"]
    finally:
        rq.set_profile(previous)
    assert v.status is Status.DEVIATION and "without subtype" in (v.classification or ""), v.message
