"""The terminal 4xx of cancelPlanning and fetchScanTasks (the plan's table renamed away: 404 NoSuchTable) and its
clearing: a target that loses the plan (or plan task) across the rename cannot re-execute the request, so
clearing says so (a prerequisite, inconclusive) instead of letting a 404 pass for a replay."""

from __future__ import annotations

import pytest

from ctk.catalog import PrerequisiteError, get_endpoint
from ctk.catalog.bodies import ident


def _rename(client, ns, src: str, dst: str) -> None:
    ex = client.request("POST", "tables/rename", json={"source": ident(ns, src), "destination": ident(ns, dst)})
    assert ex.status in (200, 204), ex.render()


def _names(conflict) -> tuple[str, str]:
    """(the table the conflicting request names, the name it was renamed to) from the variant's `why`."""
    moved = conflict.why.rsplit("(", 1)[1].rstrip(")")
    src, dst = moved.split(" -> ")
    return src, dst


def test_the_conflicting_request_gets_no_such_table(ctx):
    for op in ("cancelPlanning", "fetchScanTasks"):
        case = get_endpoint(op).prepare(ctx)
        ex = case.send(ctx.client, case.conflicting.request, label="conflicting")
        assert ex.status == 404 and ex.json()["error"]["type"] == "NoSuchTableException", ex.render()


@pytest.mark.parametrize("op", ["cancelPlanning", "fetchScanTasks"])
def test_what_the_rename_lost_is_a_prerequisite_not_a_verdict(ctx, op):
    case = get_endpoint(op).prepare(ctx)
    conflict = case.conflicting
    ns = tuple(ctx.namespace)
    src, dst = _names(conflict)
    # stand-in for a target that drops plans on a rename: the plan (task) is used up while the table is back
    _rename(ctx.client, ns, dst, src)
    done = case.send(ctx.client, conflict.request, label="use it up (no key)")
    assert done.status in case.endpoint.success, done.render()
    _rename(ctx.client, ns, src, dst)
    with pytest.raises(PrerequisiteError, match=r"renamed away and back, plan .* (is gone or cancelled|is no longer "
                                                r"listed) on this target: a re-execution could not succeed"):
        case.clear_conflict()

