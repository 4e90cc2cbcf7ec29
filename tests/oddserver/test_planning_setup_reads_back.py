"""The scan-planning cases' setup steps read their effect back (issue 28's leftover): a catalog that answers an
append 200 and keeps the table as it was has a broken plain operation (EVO-06), so fetchScanTasks's checks,
which need a table with a data file, are inconclusive naming it, not judged on plans of an empty table."""

from __future__ import annotations

from odd import TABLE, Answer, Req, Rule
from odd_semantics import _as_it_was

from ctk.core.verdicts import Status


class append_discarded(Rule):
    """A table commit that adds a snapshot answers 200 with the table as it was: acknowledged, not applied."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def before(self, req: Req) -> Answer | None:
        body = req.json()
        updates = body.get("updates") if isinstance(body, dict) else None
        if not req.is_("POST", TABLE) or not any(isinstance(u, dict) and u.get("action") == "add-snapshot"
                                                 for u in updates or []):
            return None
        answer = _as_it_was(self.upstream, req)
        if answer is not None:
            self.hit()
        return answer


def test_an_append_acknowledged_without_its_snapshot_blocks_the_fetch_scan_tasks_checks(make_odd):
    from ctk.checks import run_endpoint_checks

    ctx, server = make_odd(lambda up: [append_discarded(up)])
    [rule] = server.rules
    verdicts = run_endpoint_checks(ctx, "fetchScanTasks", ["finalized-duplicate", "terminal-4xx-replayed"])
    assert rule.hits >= 1 and verdicts
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE, (v.requirement, v.status, v.message[:300])
        assert v.details.get("blocked_by") == "EVO-06", v.details
        assert "an append of snapshot" in v.message and "the next load's current snapshot is" in v.message
