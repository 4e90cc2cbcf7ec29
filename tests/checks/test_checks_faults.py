"""Fault injection through the interposer (any target), without any injector, and in-flight classification."""

from __future__ import annotations

import re

import pytest

from ctk.checks import run_endpoint_checks
from ctk.checks.faults import ControlFaults, FaultMatch, FaultUnsupported, InterposerFaults, NoFaults
from ctk.core.verdicts import Status


def test_fault_match_regex_anchors_the_path():
    m = FaultMatch("createTable", "POST", "namespaces/a%1Fb/tables", "k")
    rx = re.compile(m.path_regex())
    assert rx.search("/v1/namespaces/a%1Fb/tables")
    assert rx.search("/v1/pre/namespaces/a%1Fb/tables?x=1")
    assert not rx.search("/v1/namespaces/a%1Fb/tables/t")


def test_no_faults_says_why():
    with pytest.raises(FaultUnsupported, match="control API"):
        NoFaults().fail_before(FaultMatch("createTable", "POST", "x"))


def test_control_api_detected(ctx):
    assert isinstance(ctx.faults, ControlFaults)
    assert ctx.faults.executions()["total"] >= 1


def test_lost_answer_via_interposer(make_ctx):
    ctx = make_ctx(control_api=False, interposer=True)
    assert isinstance(ctx.faults, InterposerFaults)
    out = run_endpoint_checks(ctx, "createTable", ["lost-answer", "5xx-not-stored", "crash-reconciled"])
    got = {(v.requirement, v.behaviour): v for v in out}
    for mode in ("503", "reset"):
        v = got[("REPLAY-04", f"lost-answer-{mode}")]
        assert v.status is Status.PASS, v.message
    assert got[("REPLAY-03", "5xx-not-stored")].status is Status.UNSUPPORTED
    assert "control API" in got[("REPLAY-03", "5xx-not-stored")].message
    assert got[("RECON-02", "crash-reconciled")].status is Status.UNSUPPORTED


def test_lost_answer_via_interposer_catches_no_replay(make_ctx):
    ctx = make_ctx(deviation="no-replay", control_api=False, interposer=True)
    out = run_endpoint_checks(ctx, "updateTable", ["lost-answer"])
    assert out and all(v.status is Status.FAIL for v in out), [v.message for v in out]


def test_in_flight_without_any_injector_is_unsupported(make_ctx):
    ctx = make_ctx(control_api=False)
    assert isinstance(ctx.faults, NoFaults)
    v1, v2 = run_endpoint_checks(ctx, "createNamespace", ["in-flight-duplicate"])
    assert v1.status is v2.status is Status.UNSUPPORTED


def test_in_flight_wait_and_replay_is_classified(make_ctx):
    ctx = make_ctx(in_flight="wait")
    v1, v2 = run_endpoint_checks(ctx, "createTable", ["in-flight-duplicate"])
    assert (v1.status, v1.classification) == (Status.PASS, "wait-and-replay"), v1.message
    assert v2.status is Status.UNSUPPORTED and v2.requirement == "INFLIGHT-02"


def test_payload_mismatch_not_applicable_without_body(ctx):
    [v] = run_endpoint_checks(ctx, "dropTable", ["payload-mismatch"])
    assert v.status is Status.UNSUPPORTED and "no request body" in v.message


def test_lifetime_longer_than_max_wait_is_unsupported(make_ctx):
    ctx = make_ctx(idempotency_lifetime="PT30M")
    out = run_endpoint_checks(ctx, "createNamespace", ["lifetime"])
    assert [v.requirement for v in out] == ["LIFE-01", "LIFE-03"]
    for v in out:
        assert v.status is Status.UNSUPPORTED and "max_wait" in v.message


def test_unadvertised_endpoint_is_unsupported(ctx):
    ctx.discovery.endpoints = {"POST /v1/{prefix}/namespaces"}
    [v] = [x for x in run_endpoint_checks(ctx, "createTable", ["finalized-duplicate"]) if x.requirement == "REPLAY-01"]
    assert v.status is Status.UNSUPPORTED and "not offered" in v.message


def test_in_flight_gate_reports_both_requirements(make_ctx):
    ctx = make_ctx(idempotency_lifetime=None)
    out = run_endpoint_checks(ctx, "createTable", ["in-flight-duplicate"])
    assert [(v.requirement, v.status) for v in out] == [("INFLIGHT-01", Status.UNSUPPORTED),
                                                        ("INFLIGHT-02", Status.UNSUPPORTED)]
    assert "does not advertise" in out[1].message


def test_in_flight_duplicate_waits_for_the_first_to_be_held(make_ctx):
    """The first attempt is slowed in transit (0.7 s, longer than the old fixed 0.33 s stagger): the duplicate
    must not overtake it, or the duplicate would take the server's delay and the roles would swap."""
    from ctk.interposer import HttpMatch

    ctx = make_ctx(interposer=True)
    ctx.test_interposer.add_http_toxic("delay_request", HttpMatch(method="POST", path=r"/v1/namespaces$",
                                                            header="Idempotency-Key"), delay_ms=700, times=1)
    v1, v2 = run_endpoint_checks(ctx, "createNamespace", ["in-flight-duplicate"])
    assert (v1.status, v1.classification) == (Status.PASS, "409 request_in_progress"), v1.message
    assert v2.status is Status.PASS, v2.message


def test_a_late_duplicate_is_not_taken_for_a_wait_and_replay(make_ctx):
    """A busy runner: the first attempt and the duplicate each take 1.5 s in transit (longer than the 1 s hold
    the check used to give). On a catalog that answers a plain 409 in flight, the duplicate used to arrive after
    the hold had ended, got the finished first's replay, and INFLIGHT-02 read "wait-and-replay" (issue 36); the
    hold now lasts until the duplicate meets the first, so the catalog's own answer decides."""
    from ctk.interposer import HttpMatch

    ctx = make_ctx(interposer=True, deviation="in-flight-plain-409")
    ctx.test_interposer.add_http_toxic("delay_request", HttpMatch(method="POST", path=r"/v1/namespaces$",
                                                            header="Idempotency-Key"), delay_ms=1500, times=2)
    v1, v2 = run_endpoint_checks(ctx, "createNamespace", ["in-flight-duplicate"])
    assert (v1.status, v1.classification) == (Status.PASS, "plain 409"), v1.message
    assert v2.classification == "plain 409", v2.message   # judged per profile (spec: classified only)


def test_control_faults_wait_applied(ctx):
    faults = ctx.faults
    assert isinstance(faults, ControlFaults)
    rule = faults.delay(FaultMatch("createNamespace", "POST", "namespaces"), 0.01)
    assert faults.wait_applied(rule, timeout=0.1) is False
    ctx.client.request("POST", "/v1/namespaces", json={"namespace": [ctx.namespace[0], "wa"], "properties": {}})
    assert faults.wait_applied(rule, timeout=2.0) is True


def test_two_kit_contexts_on_one_catalog_see_only_their_own_faults_and_executions(make_ctx):
    """What `ctk run` with workers does: one catalog, one run namespace (scope) per worker."""
    from ctk.checks.context import CheckContext
    from ctk.checks.faults import ControlFaults, FaultMatch
    from ctk.client.transport import CatalogClient
    from ctk.catalog import Catalog

    ctx_a = make_ctx()
    client_b = CatalogClient(ctx_a.client.target.__class__(ctx_a.client.target.url, timeout=20.0))
    try:
        ctx_b = CheckContext.create(client_b, namespace=("scope_b",), options=ctx_a.options)
        assert isinstance(ctx_a.faults, ControlFaults) and isinstance(ctx_b.faults, ControlFaults)
        assert ctx_a.faults.scope != ctx_b.faults.scope
        a0, b0 = ctx_a.faults.executions()["total"], ctx_b.faults.executions()["total"]
        ctx_a.faults.fail_before(FaultMatch("createNamespace", "POST", "namespaces"), status=502)
        made_b = Catalog(client_b).create_namespace(("scope_b", "child"))       # b's request: not a's fault
        assert made_b.status == 200, made_b.render()
        assert ctx_b.faults.executions()["total"] == b0 + 1
        assert ctx_a.faults.executions()["total"] == a0                          # b's execution is not a's
        failed = ctx_a.client.request("POST", "namespaces", json={"namespace": [*ctx_a.namespace, "c"]})
        assert failed.status == 502                                              # a's own request takes it
    finally:
        client_b.close()


def test_a_client_bound_to_one_context_is_not_rebound_by_another(make_ctx):
    """A second context on the same client would re-scope its requests, and the first context's execution
    counters would then read zero (a check passing on no evidence): refused with the way out. A sibling client
    keeps its own binding, and the target's shared headers stay untouched."""
    from ctk.checks.context import CheckContext

    ctx_a = make_ctx()
    assert ctx_a.client.bound_headers and not set(ctx_a.client.bound_headers) & set(ctx_a.client.target.headers)
    with pytest.raises(ValueError, match=r"bound to another check context .*client\.sibling\(\)"):
        CheckContext.create(ctx_a.client, namespace=("scope_other",), options=ctx_a.options)
    sibling = ctx_a.client.sibling()
    try:
        ctx_b = CheckContext.create(sibling, namespace=("scope_other",), options=ctx_a.options)
        assert ctx_b.faults.scope != ctx_a.faults.scope
        assert sibling.bound_headers != ctx_a.client.bound_headers
        a0 = ctx_a.faults.executions()["total"]
        made = ctx_a.client.request("POST", "namespaces", json={"namespace": [*ctx_a.namespace, "mine"]})
        assert made.status == 200, made.render()
        assert ctx_a.faults.executions()["total"] == a0 + 1                     # a still counts its own
    finally:
        sibling.close()



def test_the_database_link_is_reached_only_through_a_db_link_injector():
    """Checks reach the catalog's database link as ``ctx.db_link_faults``: the `DbLinkFaults` of the run, None
    when there is none, also for an injector that claims the ``db_link`` capability without having a link (it
    used to be read as ``ctx.faults.link``: an AttributeError inside the check)."""
    from ctk.checks.context import CheckContext
    from ctk.checks.faults import DbLinkFaults, FaultInjector
    from ctk.interposer.client import ProxyLink

    class Claims(FaultInjector):
        capabilities = frozenset({"db_link"})

    link = ProxyLink("http://127.0.0.1:8474/proxies/catalog-db")   # nothing is contacted to build it
    with_link = CheckContext(None, None, ("ns",), faults=DbLinkFaults(NoFaults(), link, hold_ms=7))
    assert with_link.db_link_faults is with_link.faults
    assert with_link.db_link_faults.link is link and with_link.db_link_faults.hold_ms == 7
    assert CheckContext(None, None, ("ns",), faults=NoFaults()).db_link_faults is None
    claims = CheckContext(None, None, ("ns",), faults=Claims())
    assert claims.faults.supports("db_link") and claims.db_link_faults is None
    claims.faults.remove("any rule")      # every injector can be asked to remove a rule; this one has none
