"""Seed example 1a/1b through the interposer (not the control API): the commit lands, the interposer replaces
its answer by 503. 1a: the blind retry reads 409, the client deletes its staged files, the table is corrupt.
1b: the keyed retry replays 200, the table is intact."""

from __future__ import annotations

from ctk.checks.network import NetworkOptions, run_seed_example
from ctk.core.verdicts import Status

FAST = NetworkOptions(timeout=0.3, margin=0.4, hold=0.5)


def test_seed_example_pair_through_the_interposer(net):
    ctx, ip = net
    before = ip.counters["injected"].get("replace_status", 0)
    a, b_integ, b_replay = run_seed_example(ctx, ip, options=FAST)
    assert ip.counters["injected"].get("replace_status", 0) == before + 2  # the interposer did both 503s

    assert (a.requirement, a.behaviour, a.status) == ("INTEG-01", "seed-1a", Status.FAIL), a.message
    assert a.details["control"] is True and a.details["attempts"] == [503, 409]
    assert a.details["key"] is None and a.details["deleted"]
    assert a.details["history_check"]["counts"].get("failed_present") == 1
    assert not a.details["integrity"]["ok"] and any("manifest-list" in m for m in a.details["integrity"]["missing"])
    assert "expected:" in a.message and "CORRUPT" in a.message and "exchanges:" in a.message
    assert "failed_present" in a.classification

    assert (b_integ.requirement, b_integ.behaviour, b_integ.status) == ("INTEG-01", "seed-1b", Status.PASS), \
        b_integ.message
    assert b_integ.details["attempts"] == [503, 200] and b_integ.details["key"]
    assert b_integ.details["integrity"]["rows"] == 1 and not b_integ.details["deleted"]
    assert (b_replay.requirement, b_replay.status) == ("REPLAY-04", Status.PASS), b_replay.message


def test_seed_example_1b_fails_without_replay(make_net):
    ctx, ip = make_net("no-replay")
    integ, replay = run_seed_example(ctx, ip, variants=("1b",), options=FAST)
    # the retry re-executes the append: the commit's requirement no longer holds -> 409, files deleted
    assert integ.status == Status.FAIL and replay.status == Status.FAIL, (integ.message, replay.message)
    assert replay.details["attempts"] == [503, 409]
