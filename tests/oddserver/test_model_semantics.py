"""Odd-server tests: the model-based run (GEN-02) blames replay only for what a retry, a replay or a fault took
part in. Catalog semantics seen with no retry in the minimal sequence land on SEM-01 (a status) or SEM-02 (a
state); what the merged spec allows (namespace properties not stored at create; any answer to a rename to the
same name) is tolerated by the model, never a failure; the model runs again steering around a semantics
mismatch, so GEN-02 is still decided on such a catalog (and still catches a real replay fault)."""

from __future__ import annotations

from urllib.parse import quote, unquote

import httpx
import pytest
from odd import Answer, Req, Rule, drop_namespace_properties

from ctk.core.requirements import get as requirement
from ctk.core.verdicts import Status
from ctk.fuzzing import StatefulOptions, run_stateful_check
from ctk.fuzzing.backstop import Progress
from ctk.fuzzing.stateful import NS_PROPS_NOTE, _Found, _Shared, build_machine

CREATE_TABLE = r"/namespaces/[^/]+/tables$"
RENAME = r"/(tables|views)/rename$"


def _split(req: Req) -> tuple[str, list[str]]:
    """(the path up to /namespaces, the namespace's levels) of a request under /namespaces/{ns}/..."""
    base, rest = req.path.split("/namespaces/", 1)
    return base, unquote(rest.split("/", 1)[0]).split("\x1f")


class create_table_in_missing_namespace(Rule):
    """createTable in a namespace that does not exist is accepted: the catalog creates the namespace on the fly
    (the merged spec documents 404 NoSuchNamespace)."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", CREATE_TABLE):
            base, levels = _split(req)
            ns = req.path.rsplit("/tables", 1)[0]
            if httpx.get(self.upstream + ns, timeout=10).status_code == 404:
                httpx.post(self.upstream + base + "/namespaces", json={"namespace": levels}, timeout=10)
                self.hit()
        return None


class rename_to_same_name_204(Rule):
    """A rename of an existing table or view to its own name answers 204 and does nothing (the reference answers
    409; the spec does not speak to it)."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", RENAME):
            body = req.json() or {}
            src = body.get("source")
            if src and src == body.get("destination"):
                base, kind = req.path.rsplit("/", 2)[0], req.path.rsplit("/", 2)[1]
                ns = "%1F".join(quote(x, safe="") for x in src["namespace"])
                if httpx.get(f"{self.upstream}{base}/namespaces/{ns}/{kind}/{quote(src['name'])}",
                             timeout=10).status_code == 200:
                    self.hit()
                    return Answer(204, [])
        return None


OPTS = dict(examples=12, steps=10, shrinks=30, seed=2)   # a seed: the derandomized sequences change with the model's source


def by_req(verdicts):
    return {v.requirement: v for v in verdicts}


def test_create_table_in_missing_namespace_is_sem01_not_gen02(make_odd, tmp_path):
    rules = []
    ctx, _ = make_odd(lambda up: rules.append(create_table_in_missing_namespace(up)) or rules)
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS, report_dir=str(tmp_path))))
    assert rules[0].hits >= 1
    sem1, gen = vs["SEM-01"], vs["GEN-02"]
    assert sem1.status is Status.DEVIATION, sem1.message          # SHOULD: a documented status, no RFC 2119 word
    assert sem1.classification == "unexpected-status" and "createTable" in sem1.message, sem1.message
    assert "the model expects 404" in sem1.message and "retry" not in "\n".join(sem1.details["sequence"])
    assert "requirement: SEM-01" in sem1.details["scenario"] and sem1.details["scenario_file"].endswith(".yaml")
    # replay is still decided: the model ran again without creating tables in missing namespaces
    assert gen.status is Status.PASS, gen.message
    assert gen.details["rounds"] == 2 and gen.details["steered_around"] == ["createTable where the spec documents 404"]
    assert "steered around" in gen.message and "SEM-01" in gen.message
    assert vs["SEM-02"].status is Status.PASS, vs["SEM-02"].message


def test_semantics_mismatch_and_a_real_replay_fault_are_each_blamed_where_they_belong(make_odd):
    """The same catalog with the reference's `no-replay` deviation: SEM-01 for the create, GEN-02 fails for the
    re-executed duplicate (found on the rerun, in a sequence with a retry)."""
    rules = []
    ctx, _ = make_odd(lambda up: rules.append(create_table_in_missing_namespace(up)) or rules, deviation="no-replay")
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    assert rules[0].hits >= 1
    assert vs["SEM-01"].status is Status.DEVIATION, vs["SEM-01"].message
    gen = vs["GEN-02"]
    assert gen.status is Status.FAIL, gen.message
    assert gen.classification in ("replay-status", "state", "re-executed", "key-reuse", "unexpected-status")
    assert any("retry" in line or "reuse" in line for line in gen.details["sequence"]), gen.details["sequence"]
    assert "requirement: GEN-02" in gen.details["scenario"]


def test_no_replay_alone_stays_gen02(make_odd):
    """The real replay fault without odd semantics: GEN-02 fails, SEM-01/02 pass (nothing blamed on them)."""
    ctx, _ = make_odd([], deviation="no-replay")
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    assert vs["GEN-02"].status is Status.FAIL, vs["GEN-02"].message
    assert vs["GEN-02"].details["rounds"] == 2        # the second, without retries, decides SEM-01/02 alone
    assert vs["SEM-01"].status is Status.PASS and vs["SEM-02"].status is Status.PASS


def test_namespace_properties_dropped_at_create_is_classified_not_failed(make_odd):
    rule = drop_namespace_properties()
    ctx, _ = make_odd([rule])
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    assert rule.hits >= 1
    assert vs["GEN-02"].status is Status.PASS, vs["GEN-02"].message
    assert vs["SEM-01"].status is Status.PASS, vs["SEM-01"].message
    sem2 = vs["SEM-02"]
    assert sem2.status is Status.PASS and sem2.classification == "namespace-properties-not-stored-at-create", \
        sem2.message
    assert NS_PROPS_NOTE in sem2.message and sem2.details["ns_props_dropped"] >= 1


def _machine(ctx):
    shared = _Shared(ctx, StatefulOptions(), progress=Progress(ctx.client, float("inf")), lifetime=None, can_lose=False,
                     can_fail_before=False)
    return shared, build_machine(shared)()


def test_rename_to_the_same_name_answered_204_is_tolerated(make_odd):
    """Driven rule by rule: the model accepts a 204 for a rename to the same name and checks the table stayed."""
    rules = []
    ctx, _ = make_odd(lambda up: rules.append(rename_to_same_name_204(up)) or rules)
    rule = rules[0]
    shared, m = _machine(ctx)
    try:
        m.create_namespace("a", {})
        m.touched_match_model()
        m.create_object("table", "a", 0, {"k1": "x"})
        m.touched_match_model()
        m.rename_object("table", "a", 0, "a", 0)
        m.touched_match_model()
        m.rename_object("view", "a", 0, "a", 0)     # no such view: 404 from the catalog, as the model expects
        m.touched_match_model()
    finally:
        m.teardown()
    assert rule.hits == 1
    assert shared.failure is None and not m.failed
    assert "3. rename table a.t1 to a.t1 -> expect 409/204/200/400, got 204" in m.lines
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    assert {r: v.status for r, v in vs.items()} == {"GEN-02": Status.PASS, "SEM-01": Status.PASS,
                                                   "SEM-02": Status.PASS}, [v.message for v in vs.values()]


def test_a_state_mismatch_with_no_retry_is_sem02(make_odd):
    """A drop answered 204 that leaves the table in place: an acknowledged mutation without its effect (MUST)."""

    class drop_table_does_nothing(Rule):
        def __init__(self, upstream: str) -> None:
            super().__init__()
            self.upstream = upstream

        def before(self, req: Req) -> Answer | None:
            if (req.is_("DELETE", r"/namespaces/[^/]+/tables/[^/]+$") and "purgeRequested=false" in req.query
                    and httpx.get(self.upstream + req.path, timeout=10).status_code == 200):
                self.hit()
                return Answer(204, [])
            return None

    rules = []
    ctx, _ = make_odd(lambda up: rules.append(drop_table_does_nothing(up)) or rules)
    shared, m = _machine(ctx)
    with pytest.raises(_Found):
        m.create_namespace("a", {})
        m.touched_match_model()
        m.create_object("table", "a", 0, {})
        m.touched_match_model()
        m.drop_object("table", "a", 0)
        m.touched_match_model()
    m._cleanup()
    f = shared.failure
    assert rules[0].hits == 1
    assert (f.kind, f.replayed, f.requirement) == ("state", False, "SEM-02"), f.text
    assert "table a.t1 exists; the model says absent" in f.text and "requirement: SEM-02" in f.scenario
    assert requirement("SEM-02").level.value == "MUST" and requirement("SEM-01").level.value == "SHOULD"
