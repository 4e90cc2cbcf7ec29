"""Odd-server tests: the model-based run on a target that advertises no Idempotency-Key support runs in its plain
mode (no keys, retries, key reuse or faults) and still decides SEM-01/02, blaming catalog semantics where they
show; an operation the target answers as not routed (as lakana answers its view endpoints: 404 without an error
model) is dropped from the machine as "not offered", never blamed on SEM-01."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from odd import Answer, Req, Rule
from test_model_semantics import OPTS, by_req, create_table_in_missing_namespace

from ctk.core.verdicts import Status
from ctk.fuzzing import StatefulOptions, run_stateful_check

NO_KEYS = dict(idempotency_lifetime=None)


class views_not_routed(Rule):
    """Every view endpoint answers 404 with an empty body (a router that has no such route)."""

    def before(self, req: Req) -> Answer | None:
        if "/views" in req.path:
            self.hit()
            return Answer(404, [], b"")
        return None


def test_create_table_in_missing_namespace_is_a_sem01_deviation_without_key_support(make_odd, tmp_path):
    rules = []
    ctx, _ = make_odd(lambda up: rules.append(create_table_in_missing_namespace(up)) or rules, **NO_KEYS)
    assert not ctx.idempotency_supported
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS, report_dir=str(tmp_path))))
    assert rules[0].hits >= 1
    sem1, gen = vs["SEM-01"], vs["GEN-02"]
    assert sem1.status is Status.DEVIATION, sem1.message
    assert sem1.classification == "unexpected-status" and "createTable" in sem1.message, sem1.message
    assert "the model expects 404" in sem1.message and "plain mode" in sem1.message, sem1.message
    assert "requirement: SEM-01" in sem1.details["scenario"] and "idempotency" not in sem1.details["scenario"]
    assert gen.status is Status.UNSUPPORTED, gen.message
    assert vs["SEM-02"].status is Status.PASS, vs["SEM-02"].message
    assert not any(k.lower() == "idempotency-key" for e in ctx.client.exchanges for k in e.request_headers)


@pytest.mark.parametrize("listed", [True, False], ids=["views-listed", "no-endpoints-list"])
def test_an_operation_answered_not_routed_is_dropped_not_blamed(make_odd, listed):
    """Dropped from the machine either way; named as what it is: listed in /v1/config's endpoints (the reference's
    list names the view endpoints), "advertised but not served (DISC-05)"; with no list the spec's default set,
    which has no view endpoint, applies, so the views are not offered (as lakana's)."""
    from odd import unlisted

    rule = views_not_routed()
    ctx, _ = make_odd([rule] if listed else [rule, unlisted()], **NO_KEYS)
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    assert rule.hits >= 1
    sem1, sem2 = vs["SEM-01"], vs["SEM-02"]
    assert (sem1.status, sem2.status) == (Status.PASS, Status.PASS), (sem1.message, sem2.message)
    dropped = sem1.details["not_offered"]
    assert dropped and set(dropped) <= {"createView", "dropView", "renameView", "replaceView"}, dropped
    assert all("not routed" in why for why in dropped.values()), dropped
    claimed = "the catalog claims it in its /v1/config endpoints list (DISC-05)"
    assert all((claimed in why) is listed for why in dropped.values()), dropped
    assert set(sem1.details["advertised_unserved"]) == (set(dropped) if listed else set()), sem1.details
    heading = ("advertised but not served (DISC-05), dropped from the model" if listed
               else "not offered, dropped from the model")
    assert heading in sem1.message and "createView" in sem1.message, sem1.message
    assert ("not offered" in sem1.message) is not listed, sem1.message
    assert sem1.details["evidence"] > 0 and sem2.details["evidence"] > 0
    assert vs["GEN-02"].status is Status.UNSUPPORTED


def test_not_routed_is_dropped_on_a_keyed_target_too(make_odd):
    """With key support the same rule is dropped as well: GEN-02 and SEM-01 pass on the operations offered."""
    rule = views_not_routed()
    ctx, _ = make_odd([rule])
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    assert rule.hits >= 1
    assert {r: v.status for r, v in vs.items()} == {"GEN-02": Status.PASS, "SEM-01": Status.PASS,
                                                   "SEM-02": Status.PASS}, [v.message for v in vs.values()]
    assert "createView" in vs["SEM-01"].details["not_offered"]


class create_existing_view_answers_it(Rule):
    """createView of a view that exists answers 200 with the existing view (as SeaweedFS 4.48 does in the interop
    lane), where the merged spec documents 409 AlreadyExists."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", r"/namespaces/[^/]+/views$"):
            name = (req.json() or {}).get("name")
            got = httpx.get(f"{self.upstream}{req.path}/{quote(str(name))}", timeout=10)
            if got.status_code == 200:
                self.hit()
                return Answer(200, body=got.content)
        return None


def test_create_existing_view_answered_200_is_a_sem02_fail_as_view_02_grades_it(make_odd):
    """The SeaweedFS finding reproduced: a create of an existing view answered 200 with the old view. The model
    graded it SEM-01 (a status, SHOULD) while VIEW-02 grades it a MUST (the client was told its create happened;
    grading.Kind.NOT_DONE): one kind, one grade - the model's verdict is SEM-02 now, with a minimal sequence that
    creates the view twice."""
    rules = []
    ctx, _ = make_odd(lambda up: rules.append(create_existing_view_answers_it(up)) or rules, **NO_KEYS)
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(examples=20, steps=10, shrinks=30, seed=1)))
    assert rules[0].hits >= 1
    sem2 = vs["SEM-02"]
    assert sem2.status is Status.FAIL, (sem2.status, sem2.message[:500])
    assert "create view" in sem2.message and "the model says the identifier exists (409)" in sem2.message, \
        sem2.message[:500]
    assert vs["SEM-01"].status is Status.PASS, vs["SEM-01"].message[:500]
    assert vs["GEN-02"].status is Status.UNSUPPORTED
