"""GEN-02 model-based test: passes on the reference catalog; catches no-replay, terminal-4xx-not-stored and
store-5xx; the minimal failing sequence is a scenario that the scenario runner loads and that fails on the
deviant catalog and passes on a correct one."""

from __future__ import annotations

import time

import pytest
import yaml

from ctk.catalog import Catalog
from ctk.core.verdicts import Status
from ctk.fuzzing import StatefulOptions, run_stateful_check
from ctk.scenarios.loader import load_data
from ctk.scenarios.runner import run_scenario

from scenario_session import session_for  # noqa: E402


def _after_the_baselines(ctx):
    """The run namespace's children once the baselines of the model's operations ran (the gate runs them before
    the model; their namespaces stay until the run's cleanup, like every semantic check's)."""
    from ctk.checks.common import baseline_blocked
    from ctk.fuzzing.stateful import OPERATIONS

    assert baseline_blocked(ctx, tuple(OPERATIONS)) is None
    return Catalog(ctx.client).list_namespaces(ctx.namespace)


def test_gen02_passes_on_reference(gen_ctx, timed):
    ctx = gen_ctx()
    before = _after_the_baselines(ctx)
    v, sem1, sem2 = run_stateful_check(ctx, examples=6, steps=10)
    assert v.status is Status.PASS, v.message
    assert v.details["steps"] >= 20 and v.details["faults"] == ["lose_answer", "fail_before"]
    assert v.details["rounds"] == 1 and v.details["steered_around"] == []
    assert (sem1.requirement, sem1.status, sem2.requirement, sem2.status) == \
        ("SEM-01", Status.PASS, "SEM-02", Status.PASS), (sem1.message, sem2.message)
    assert sem1.details["evidence"] > 0 and sem2.details["evidence"] > 0
    assert Catalog(ctx.client).list_namespaces(ctx.namespace) == before     # every sequence cleaned up


@pytest.mark.parametrize("deviation,kinds", [
    ("no-replay", {"re-executed", "replay-status"}),
    ("terminal-4xx-not-stored", {"re-executed", "replay-status", "state"}),
    ("store-5xx", {"retry-after-fault"}),
])
def test_gen02_catches_deviation_and_prints_a_runnable_scenario(gen_ctx, tmp_path, timed, deviation, kinds):
    ctx = gen_ctx(deviation)
    v, *sem = run_stateful_check(ctx, options=StatefulOptions(examples=15, steps=10, shrinks=30,
                                                          report_dir=str(tmp_path / "reports")))
    assert v.status is Status.FAIL, v.message
    assert v.classification in kinds, v.message
    assert [s.status for s in sem] == [Status.PASS, Status.PASS], [s.message for s in sem]   # not blamed
    assert "minimal failing sequence" in v.message and "scenarios:" in v.message
    written = v.details["scenario_file"]
    text = open(written, encoding="utf-8").read()
    assert text == v.details["scenario"] and text in v.message
    [scenario] = load_data(yaml.safe_load(text), source=written)
    assert scenario.requirement == "GEN-02"
    # the scenario reproduces the failure on the deviant catalog ...
    again = run_scenario(scenario, session_for(ctx))
    assert again.status is Status.FAIL, again.message
    # ... and passes on a correct one
    good = gen_ctx()
    ok = run_scenario(scenario, session_for(good))
    assert ok.status is Status.PASS, ok.message


def test_gen02_model_alone_catches_no_replay(gen_ctx, timed):
    """Without execution counters the model (state + statuses) still catches re-executed duplicates."""
    ctx = gen_ctx("no-replay")
    v, *sem = run_stateful_check(ctx, options=StatefulOptions(examples=15, steps=12, shrinks=20,
                                                          counters=False, seed=None))
    assert v.status is Status.FAIL, v.message
    assert v.classification in ("replay-status", "state", "unexpected-status", "retry-after-fault")
    assert [s.status for s in sem] == [Status.PASS, Status.PASS], [s.message for s in sem]


def test_gen02_without_fault_injection_drops_the_fault_rule(gen_ctx):
    ctx = gen_ctx()
    from ctk.checks.faults import NoFaults

    ctx.faults = NoFaults()
    v, *_ = run_stateful_check(ctx, examples=3, steps=6)
    assert v.status is Status.PASS and v.details["faults"] == []
    assert not any("/_ctk/faults" in e.url for e in ctx.client.exchanges)


def test_gen02_seed_is_deterministic(gen_ctx):
    ctx = gen_ctx()
    runs = []
    for _ in range(2):
        mark = len(ctx.client.exchanges)
        v, *_ = run_stateful_check(ctx, examples=2, steps=6, seed=11)
        assert v.status is Status.PASS
        runs.append([(e.method, e.label) for e in ctx.client.exchanges[mark:] if (e.label or "").startswith("model:")])
    assert runs[0] == runs[1] and runs[0]


def test_gen02_hang_backstop_is_inconclusive_naming_the_option(gen_ctx):
    """The wall clock only catches a hang: reached, GEN-02 and SEM-01/02 are inconclusive and name
    --ctk-gen-budget, never pass on what ran before it."""
    ctx = gen_ctx()
    vs = run_stateful_check(ctx, examples=3, steps=4, backstop_s=0.0)
    assert [v.requirement for v in vs] == ["GEN-02", "SEM-01", "SEM-02"]
    for v in vs:
        assert v.status is Status.INCONCLUSIVE, v.message
        assert "--ctk-gen-budget" in v.message, v.message
    assert vs[0].details["backstop_hit"] is True


def test_gen02_counts_not_seconds(gen_ctx, monkeypatch):
    """A slow catalog (each request 50 ms late, as on a busy runner) runs the same sequences and steps."""
    ctx = gen_ctx()
    mark = len(ctx.client.exchanges)
    quick, *_ = run_stateful_check(ctx, examples=3, steps=6, seed=5)
    sent = len(ctx.client.exchanges) - mark
    request = ctx.client.request
    delays: list[float] = []

    def slow(*a, **kw):
        delays.append(0.05)
        time.sleep(0.05)
        return request(*a, **kw)

    monkeypatch.setattr(ctx.client, "request", slow)
    # the hang backstop is a clock of answers, not of the run (issue 30 item 7's leftover): a run many times
    # longer than it, answered all along, is never cut. The backstop is a quarter of the delay the same
    # sequences add (counted, not timed), so the slowed run outlasts it however fast the machine is
    backstop = sent * 0.05 / 4
    slowed, *_ = run_stateful_check(ctx, examples=3, steps=6, seed=5, backstop_s=backstop)
    assert sent >= 8 and sum(delays) > 2 * backstop, (sent, len(delays), backstop)
    assert quick.status is slowed.status is Status.PASS, slowed.message
    assert not slowed.details["backstop_hit"], slowed.details
    assert (quick.details["sequences"], quick.details["steps"]) == (slowed.details["sequences"],
                                                                    slowed.details["steps"])


def test_plain_mode_on_a_target_without_key_support_decides_sem01_sem02(start_catalog, timed):
    """The reference advertising no idempotency-key-lifetime: the model runs without keys, retries, key reuse or
    faults; SEM-01/02 pass on what it observed, GEN-02 (retries with keys) is unsupported."""
    from ctk.checks.context import CheckOptions

    ctx = start_catalog(options=CheckOptions(max_wait=5.0), control_api=True, idempotency_lifetime=None)
    assert not ctx.idempotency_supported
    before = _after_the_baselines(ctx)
    mark = len(ctx.client.exchanges)
    gen, sem1, sem2 = run_stateful_check(ctx, examples=4, steps=10)
    assert gen.status is Status.UNSUPPORTED and "Idempotency-Key" in gen.message, gen.message
    assert (sem1.status, sem2.status) == (Status.PASS, Status.PASS), (sem1.message, sem2.message)
    assert sem1.details["evidence"] > 0 and sem2.details["evidence"] > 0
    assert gen.details["keyless"] is True and gen.details["replays"] == 0 and gen.details["faults"] == []
    assert "plain mode" in sem1.message and "plain mode" in sem2.message
    sent = [e for e in ctx.client.exchanges[mark:] if (e.label or "").startswith("model:")]
    assert sent and not any(k.lower() == "idempotency-key" for e in sent for k in e.request_headers)
    assert not any("/_ctk/faults" in e.url for e in ctx.client.exchanges[mark:])
    assert Catalog(ctx.client).list_namespaces(ctx.namespace) == before


def test_plain_mode_skips_operations_missing_from_the_advertised_endpoints(start_catalog):
    """An endpoints list without views: the model sends no view request and says so in the verdicts."""
    from ctk.checks.context import CheckOptions

    ctx = start_catalog(options=CheckOptions(max_wait=5.0), idempotency_lifetime=None)
    from ctk.client.discovery import DEFAULT_ENDPOINTS

    ctx.discovery.endpoints = {e for e in DEFAULT_ENDPOINTS if "/views" not in e}
    mark = len(ctx.client.exchanges)
    gen, sem1, sem2 = run_stateful_check(ctx, examples=4, steps=10)
    assert (sem1.status, sem2.status) == (Status.PASS, Status.PASS), (sem1.message, sem2.message)
    assert not any("/views" in e.url for e in ctx.client.exchanges[mark:])
    assert set(sem1.details["not_offered"]) == {"createView", "dropView", "renameView", "replaceView"}
    assert "not in the advertised endpoints list" in sem1.message
