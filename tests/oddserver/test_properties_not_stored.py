"""Issue 19 item 2 (the setup audit): the createNamespace case counted executions by the kit's mark in the
properties given at create, which the merged spec stores only "if supported by the server". On a catalog that
drops them (`odd.drop_namespace_properties`) REPLAY-01 was undecided ("effect not visible") and REPLAY-02 passed
on no evidence (the conflicting request's mark could never show). Now such a catalog is counted by existence:
the checks are decided, and a catalog that re-executes duplicates still fails them."""

from __future__ import annotations

import pytest
from odd import drop_namespace_properties

from ctk.checks import run_endpoint_checks

BEHAVIOURS = ["finalized-duplicate", "terminal-4xx-replayed"]


@pytest.mark.parametrize("deviation,expected", [
    (None, {"REPLAY-01": "pass", "REPLAY-02": "pass"}),
    ("no-replay", {"REPLAY-01": "fail", "REPLAY-02": "deviation"}),
    ("terminal-4xx-not-stored", {"REPLAY-01": "pass", "REPLAY-02": "deviation"}),
])
def test_create_namespace_is_decided_where_properties_are_dropped(make_odd, deviation, expected):
    rule = drop_namespace_properties()
    ctx, _ = make_odd([rule], deviation=deviation)
    verdicts = {v.requirement: v for v in run_endpoint_checks(ctx, "createNamespace", BEHAVIOURS)}
    assert rule.hits >= 3
    got = {r: verdicts[r].status.value for r in expected}
    assert got == expected, {r: verdicts[r].message[:400] for r in expected}
