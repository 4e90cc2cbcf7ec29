"""The Idempotency-Key checks on the scan-planning endpoints (planTableScan, cancelPlanning, fetchScanTasks):
they pass on the reference catalog, a deviation profile breaks them, a target that does not advertise
planning reads as unsupported, and where the kit cannot see a re-execution it says so (inconclusive)."""

from __future__ import annotations

import pytest

from ctk.checks import run_endpoint_checks
from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status
from ctk.client.discovery import Discovery

PLANNING = ("planTableScan", "cancelPlanning", "fetchScanTasks")
FAST = ["finalized-duplicate", "terminal-4xx-replayed", "5xx-not-stored", "lost-answer", "in-flight-duplicate",
        "payload-mismatch", "key-scope", "replay-failed", "crash-reconciled"]
NOT_APPLICABLE = {("cancelPlanning", "PAYLOAD-01")}     # REPLAY-02: the plan's table renamed away, then back


def _by(verdicts):
    return {(v.endpoint, v.requirement, v.behaviour): v for v in verdicts}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_planning_checks_pass_on_the_reference(make_ctx, mode):
    ctx = make_ctx(planning_mode=mode)
    out = []
    for op in PLANNING:
        out += run_endpoint_checks(ctx, op, FAST if mode == "sync" else ["finalized-duplicate", "lost-answer"])
    assert out
    for v in out:
        if (v.endpoint, v.requirement) in NOT_APPLICABLE:
            assert v.status is Status.UNSUPPORTED, v.message
            continue
        assert v.status is Status.PASS, f"{v.endpoint} {v.requirement} {v.behaviour}: {v.status.value}\n{v.message}"


def _replay01(verdicts):
    return [v for v in verdicts if v.requirement == "REPLAY-01"]


def test_no_replay_breaks_every_planning_endpoint(make_ctx):
    ctx = make_ctx(deviation="no-replay")
    for op in PLANNING:
        verdicts = [v for v in run_endpoint_checks(ctx, op, ["finalized-duplicate", "lost-answer"])
                    if v.requirement != "REPLAY-05"]    # no replay to compare: inconclusive beside REPLAY-01
        assert {v.requirement for v in verdicts} == {"REPLAY-01", "REPLAY-04"}
        for v in verdicts:
            assert v.status is Status.FAIL, f"{op} {v.behaviour}: {v.status.value}\n{v.message}"
            assert "expected:" in v.message and "happened:" in v.message and v.exchanges


def test_unadvertised_planning_reads_as_unsupported(make_ctx):
    ctx = make_ctx()
    ctx.discovery = Discovery.from_config({"idempotency-key-lifetime": "PT4S", "endpoints": [
        "POST /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces/{namespace}/tables",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"]})
    for op in PLANNING:
        verdicts = run_endpoint_checks(ctx, op, FAST)
        assert verdicts and all(v.status is Status.UNSUPPORTED for v in verdicts), op
        assert all("not offered by the target" in v.message for v in verdicts)
    ctx.discovery = Discovery.from_config({"idempotency-key-lifetime": "PT4S"})    # no list: the default set
    [v] = _replay01(run_endpoint_checks(ctx, "planTableScan", ["finalized-duplicate"]))
    assert v.status is Status.UNSUPPORTED and "default endpoint set" in v.message


def test_without_control_api_the_kit_judges_from_answers_or_says_it_cannot(make_ctx):
    ctx = make_ctx(control_api=False)             # no plan listing, no execution counters
    got = _by(run_endpoint_checks(ctx, "planTableScan", ["finalized-duplicate"])
              + run_endpoint_checks(ctx, "fetchScanTasks", ["finalized-duplicate"])
              + run_endpoint_checks(ctx, "cancelPlanning", ["finalized-duplicate"]))
    # a re-executed plan would carry a new plan-id; a re-executed fetch would find its plan task gone
    assert got[("planTableScan", "REPLAY-01", "finalized-duplicate")].status is Status.PASS
    assert got[("fetchScanTasks", "REPLAY-01", "finalized-duplicate")].status is Status.PASS
    # cancelling a cancelled plan changes nothing in state, but once its table is dropped a re-execution
    # answers 404 (the keyless control shows it): the retry's 204 is then a replay
    v = got[("cancelPlanning", "REPLAY-01", "finalized-duplicate")]
    assert v.status is Status.PASS, v.message
    assert any("control" in (e.get("label") or "") and e.get("status") == 404 for e in v.exchanges)


def test_without_control_api_no_replay_is_still_caught_where_visible(make_ctx):
    ctx = make_ctx(control_api=False, deviation="no-replay")
    for op in ("planTableScan", "fetchScanTasks"):
        [v] = _replay01(run_endpoint_checks(ctx, op, ["finalized-duplicate"]))
        assert v.status is Status.FAIL, f"{op}: {v.status.value}\n{v.message}"
    [v] = _replay01(run_endpoint_checks(ctx, "cancelPlanning", ["finalized-duplicate"]))
    assert v.status is Status.FAIL and "404" in v.message, v.message


def _profiles():
    from ctk.reference.deviations import PROFILES
    from test_sensitivity import BEHAVIOUR, GLOBAL, PROFILE_ENDPOINTS

    return [(p, [r for r in p.catches if r in BEHAVIOUR and r not in GLOBAL]) for p in PROFILES.values()
            if any(r in BEHAVIOUR and r not in GLOBAL for r in p.catches)
            and "planTableScan" in PROFILE_ENDPOINTS.get(p.name, ("planTableScan",))]


@pytest.mark.parametrize("profile,requirements", _profiles(), ids=[p.name for p, _ in _profiles()])
def test_every_key_profile_is_caught_on_plan_table_scan(make_ctx, profile, requirements):
    """The sensitivity matrix of test_sensitivity.py, on planTableScan (whose every behaviour applies)."""
    from test_sensitivity import BEHAVIOUR

    ctx = make_ctx(deviation=profile.name)
    for requirement in requirements:
        verdicts = [v for v in run_endpoint_checks(ctx, "planTableScan", [BEHAVIOUR[requirement]])
                    if v.requirement == requirement]
        assert verdicts, requirement
        for v in verdicts:   # caught, with the level's verdict: fail, deviation, or a pass that classifies it
            assert v.details.get("rule_broken") and v.status.value == status_if_broken(requirement), (
                f"{requirement} not caught on planTableScan under {profile.name} ({profile.breaks}): "
                f"{v.status.value}\n{v.message[:800]}")


@pytest.mark.parametrize("op", ["cancelPlanning", "fetchScanTasks"])
def test_without_an_advertised_rename_only_the_terminal_4xx_check_is_unsupported(make_ctx, op):
    """The variant needs renameTable; a target that advertises planning but not renameTable still gets every
    other check of the operation, and REPLAY-02 says which endpoint it lacked."""
    import dataclasses

    from ctk.checks import run_endpoint_checks
    from ctk.client.discovery import normalize_endpoint
    from ctk.core.verdicts import Status

    from ctk.catalog import get_endpoint

    ctx = make_ctx()
    rename = get_endpoint("renameTable")
    advertised = {e for e in ctx.discovery.endpoints} if ctx.discovery.endpoints is not None else None
    assert advertised is not None, "the reference catalog advertises its endpoints"
    ctx.discovery = dataclasses.replace(ctx.discovery,
                                        endpoints=advertised - {normalize_endpoint(rename.method, rename.template)})
    assert get_endpoint(op).supported(ctx.discovery)[0]
    case = get_endpoint(op).prepare(ctx)
    assert case.conflicting is None and "renameTable" not in case.conflict_unavailable
    assert "tables/rename" in case.conflict_unavailable
    verdicts = {v.requirement: v for v in run_endpoint_checks(ctx, op, ["terminal-4xx-replayed",
                                                                         "finalized-duplicate"])}
    assert verdicts["REPLAY-02"].status is Status.UNSUPPORTED
    assert "does not advertise POST /v1/{prefix}/tables/rename" in verdicts["REPLAY-02"].message
    assert verdicts["REPLAY-01"].status is Status.PASS, verdicts["REPLAY-01"].message
