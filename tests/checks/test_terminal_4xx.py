"""REPLAY-02 (check_terminal_4xx_replayed): only what changed after the retry is blamed on the retry."""

from __future__ import annotations

from ctk.checks import run_endpoint_checks
from ctk.core.verdicts import Status

BEHAVIOUR = "terminal-4xx-replayed"


def test_a_partial_change_of_the_first_attempt_is_not_the_retrys_execution(make_ctx):
    """transaction-not-atomic: the first attempt sets the first table's property, then 404s on the missing
    table. That change is seen before the retry; the retry replays the stored 404 and executes nothing."""
    ctx = make_ctx(deviation="transaction-not-atomic")
    [v] = run_endpoint_checks(ctx, "commitTransaction", [BEHAVIOUR])
    assert v.status == Status.PASS, v.message
    assert v.details["first_attempt_changed_state"] is True and v.details["counter_delta"] == 0
    assert "changed state before its 404" in v.message


def test_a_re_executed_retry_is_still_caught(make_ctx):
    ctx = make_ctx(deviation="no-replay")
    [v] = run_endpoint_checks(ctx, "commitTransaction", [BEHAVIOUR])
    assert v.status != Status.PASS and v.classification == "re-executed", v.message
    ctx = make_ctx()
    [v] = run_endpoint_checks(ctx, "commitTransaction", [BEHAVIOUR])
    assert v.status == Status.PASS and "first_attempt_changed_state" not in v.details, v.message
