"""The probes that decide what the kit can do are read again on a 5xx (issue 36 item 1): a control API whose
``GET /_ctk`` answers 503 twice before 200 is still found, and the checks that need it decide; one that never
answers readably leaves those checks "probe failed: ..." (inconclusive, the probe's exchanges shown), never
"needs the reference control API" as if the target had none."""

from __future__ import annotations

from ctk.checks import run_endpoint_checks
from ctk.checks.faults import ControlFaults
from ctk.core.verdicts import Status
from oddserver.odd import OddServer, busy_at_first


def _replay_failed(ctx):
    return {v.requirement: v for v in run_endpoint_checks(ctx, "createNamespace", ["replay-failed", "5xx-not-stored"])}


def test_control_api_busy_twice_is_still_found_and_the_checks_decide(start_catalog):
    probe, config = busy_at_first(r"^/_ctk$", times=2), busy_at_first(r"^/v1/config$", times=2)
    ctx = start_catalog(front=lambda up: OddServer(up, [probe, config]), control_api=True)
    assert probe.hits == 2 and config.hits == 2, (probe.hits, config.hits)
    assert isinstance(ctx.faults, ControlFaults), ctx.faults
    assert [e.status for e in ctx.faults.probe.exchanges] == [503, 503, 200]
    got = _replay_failed(ctx)
    for req in ("REPLAY-03", "RECON-01"):
        assert got[req].status is Status.PASS, (req, got[req].status, got[req].message[:400])


def test_control_api_never_readable_is_probe_failed_not_absent(start_catalog):
    probe = busy_at_first(r"^/_ctk$", times=99)
    ctx = start_catalog(front=lambda up: OddServer(up, [probe]), control_api=True)
    assert not isinstance(ctx.faults, ControlFaults)
    assert probe.hits == 4, probe.hits   # bounded: PROBE_TRIES reads, then the kit says so
    got = _replay_failed(ctx)
    for req in ("REPLAY-03", "RECON-01"):
        v = got[req]
        assert v.status is Status.INCONCLUSIVE, (req, v.status, v.message[:300])
        assert v.message.startswith("probe failed: GET ") and "503" in v.message, v.message[:300]
        assert not v.needs, v.needs
        assert sum("/_ctk" in e["url"] for e in v.exchanges) >= 4
