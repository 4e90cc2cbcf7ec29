"""The scan-planning cases' setup steps read their effect back (issue 28's leftover): a catalog that answers an
append 200 and keeps the table as it was has a broken plain operation (EVO-06), so fetchScanTasks's checks,
which need a table with a data file, are inconclusive naming it, not judged on plans of an empty table."""

from __future__ import annotations

from odd_semantics import update_lost

from ctk.core.verdicts import Status


def test_an_append_acknowledged_without_its_snapshot_blocks_the_fetch_scan_tasks_checks(make_odd):
    from ctk.checks import run_endpoint_checks

    # a table commit that adds a snapshot answers 200 with the table as it was: acknowledged, not applied
    ctx, server = make_odd(lambda up: [update_lost(up, "add-snapshot")])
    [rule] = server.rules
    verdicts = run_endpoint_checks(ctx, "fetchScanTasks", ["finalized-duplicate", "terminal-4xx-replayed"])
    assert rule.hits >= 1 and verdicts
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE, (v.requirement, v.status, v.message[:300])
        assert v.details.get("blocked_by") == "EVO-06", v.details
        assert "an append of snapshot" in v.message and "the next load's current snapshot is" in v.message
