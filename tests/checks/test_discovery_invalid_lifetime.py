"""DISC-01 can fail: a top-level idempotency-key-lifetime that is not an ISO-8601 duration is broken (a SHOULD:
a deviation), not "support not advertised"; the same catalog advertising a valid one passes."""

from __future__ import annotations

from ctk.checks import run_global_checks
from ctk.client.discovery import Discovery
from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status


def test_an_invalid_top_level_lifetime_breaks_disc01(ctx):
    [ok] = run_global_checks(ctx, ["discovery"])
    assert ok.requirement == "DISC-01" and ok.status is Status.PASS, ok.message
    ctx.discovery = Discovery.from_config({"idempotency-key-lifetime": "30m", "defaults": {}, "overrides": {}})
    [v] = run_global_checks(ctx, ["discovery"])
    assert v.requirement == "DISC-01" and v.status.value == status_if_broken("DISC-01") == "deviation", v.message
    assert v.classification == "invalid" and "'30m'" in v.message
