"""The commit concurrency checks pass on the reference catalog and fail under the deviations they target."""

from __future__ import annotations

import pytest

from ctk.checks import concurrency
from ctk.checks.context import CheckContext
from ctk.core.verdicts import Status
from ctk.client.transport import CatalogClient
from ctk.reference.deviations import PROFILES
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.client.config import TargetConfig


def _run(tmp_path, deviation):
    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path), control_api=True, deviation=deviation)) as srv:
        client = CatalogClient(TargetConfig(url=srv.url, timeout=20))
        try:
            return concurrency.run_all(CheckContext.create(client), writers=3, appends=4, race_writers=6)
        finally:
            client.close()


def test_all_pass_on_reference(tmp_path):
    verdicts = _run(tmp_path, None)
    bad = [(v.requirement, v.behaviour, v.message[:500]) for v in verdicts if v.status is not Status.PASS]
    assert not bad
    assert {v.requirement for v in verdicts} == {"OCC-01", "OCC-02", "OCC-03", "OCC-04", "HIST-01", "HIST-02",
                                                 "INTEG-01"}
    assert sum(v.requirement == "OCC-01" for v in verdicts) == len(concurrency.REQUIREMENT_TYPES)


@pytest.mark.parametrize("profile", ["stale-requirement-accepted", "no-atomic-swap", "transaction-not-atomic"])
def test_deviation_is_caught(tmp_path, profile):
    verdicts = _run(tmp_path, profile)
    failed = {v.requirement for v in verdicts if v.status is Status.FAIL}
    caught = set(PROFILES[profile].catches)
    assert caught <= failed, f"{profile} should fail {sorted(caught)}, failed only {sorted(failed)}"
    for v in verdicts:
        if v.status is Status.FAIL:
            assert "expected:" in v.message and "exchanges:" in v.message


def test_lost_updates_are_named_in_history_verdict(tmp_path):
    verdicts = _run(tmp_path, "no-atomic-swap")
    hist = [v for v in verdicts if v.requirement == "HIST-01"][0]
    assert hist.status is Status.FAIL and "missing" in hist.message
    assert hist.details["acknowledged"] > hist.details["snapshots"]


def test_occ01_is_decided_where_no_append_can_be_written(tmp_path, monkeypatch):
    """The table's storage out of the kit's reach (no append can be staged): OCC-01 is still decided for every
    requirement that needs no snapshot (a stale assert-current-schema-id, ...), on a table without one; only
    assert-ref-snapshot-id (null), which needs main to exist, is undecided, naming the staging step."""
    from ctk.history.writer import StorageBlocked

    def blocked(*args, **kwargs):
        raise StorageBlocked("the table's files would be written outside loopback")

    monkeypatch.setattr(concurrency, "stage_append", blocked)
    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path), control_api=True)) as srv:
        client = CatalogClient(TargetConfig(url=srv.url, timeout=20))
        try:
            verdicts = concurrency.check_requirements(CheckContext.create(client))
        finally:
            client.close()
    by_kind = {v.behaviour.value.split(":", 1)[1]: v for v in verdicts}
    assert set(by_kind) == set(concurrency.REQUIREMENT_TYPES), [(v.behaviour, v.message[:200]) for v in verdicts]
    held = by_kind.pop("assert-ref-snapshot-id-null")
    assert held.status is Status.INCONCLUSIVE and "outside loopback" in held.message, held.message
    assert all(v.status is Status.PASS for v in by_kind.values()), {k: v.message[:200] for k, v in by_kind.items()}
