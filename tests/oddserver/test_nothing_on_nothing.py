"""Issue 19, item 6: nothing passes on nothing. On a catalog that acknowledges appends and records no snapshot
(odd_lost_writes.acks_appends_records_nothing) INTEG-01 passed with "0 snapshots checked" and HIST-02 with
"no append applied twice". Now: HIST-01 and OCC-03 fail (the acknowledged appends are lost: the failure it
is), HIST-02 and INTEG-01 are inconclusive, naming the lost writes."""

from __future__ import annotations

from odd_lost_writes import acks_appends_records_nothing

from ctk.checks.concurrency import check_serial_appends
from ctk.core.verdicts import Status


def test_serial_appends_on_a_catalog_that_records_no_snapshot(make_odd):
    ctx, odd = make_odd(lambda up: [acks_appends_records_nothing(up)])
    got = {v.requirement: v for v in check_serial_appends(ctx, writers=2, appends=2)}
    assert odd.rules[0].hits == 4                                  # every append acknowledged, none recorded
    assert got["HIST-01"].status is Status.FAIL and "4 acknowledged append(s) missing" in got["HIST-01"].message
    assert got["OCC-03"].status is Status.FAIL and "0 snapshots for 4 appends" in got["OCC-03"].message
    # before: pass "no append applied twice (4 appends)"
    v = got["HIST-02"]
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "none of the appends is in the final state" in v.message and "lost, see HIST-01" in v.message
    # before: pass "intact: 0 snapshots, 0 manifest lists, 0 manifests checked"
    v = got["INTEG-01"]
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "records no snapshot although 4 append(s) were acknowledged" in v.message
    assert v.details["integrity"]["snapshots"] == 0


def test_a_conforming_catalog_still_passes_them(make_odd):
    ctx, odd = make_odd([])
    got = {v.requirement: v for v in check_serial_appends(ctx, writers=2, appends=2)}
    for r in ("OCC-03", "HIST-01", "HIST-02", "INTEG-01"):
        assert got[r].status is Status.PASS, (r, got[r].message)
    assert "4 appends in the table" in got["HIST-02"].message


def test_occ_setups_need_the_acknowledged_first_append_recorded(make_odd):
    """OCC-01/02 build on a table with one append; an acknowledged append that was never recorded is a setup that
    did not happen (inconclusive, naming the lost write), not a base to judge commits on."""
    from ctk.checks.concurrency import check_race

    ctx, odd = make_odd(lambda up: [acks_appends_records_nothing(up)])
    [v] = check_race(ctx, writers=2)
    assert odd.rules[0].hits == 1
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "acknowledged" in v.message and "records no snapshot" in v.message
