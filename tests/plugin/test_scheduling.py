"""Scheduling of the kit's items: the lifetime batch runs once, on one worker, first; an interrupted batch ends
before the run namespace goes; the embedded catalog is discarded whole."""

from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from ctk.plugin import scheduling
from ctk.plugin.scheduling import LIFETIME_GROUP, SPARK_GROUP, LifetimeBatch, group_of, make_scheduler, order_items
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings


class _Item:
    def __init__(self, name: str, behaviour: str | None = None):
        self.originalname = name
        self.callspec = SimpleNamespace(params={"behaviour": behaviour} if behaviour else {})
        self.markers: list = []

    def add_marker(self, mark) -> None:
        self.markers.append(mark)


def test_lifetime_items_first_then_spark_then_the_generated_cases():
    items = [_Item("test_idempotency", "finalized-duplicate"), _Item("test_generated_openapi"),
             _Item("test_idempotency", "lifetime"), _Item("test_keys"), _Item("test_idempotency", "lifetime"),
             _Item("test_spark")]
    order_items(items, spark=True)  # type: ignore[arg-type]
    assert [(i.originalname, i.callspec.params.get("behaviour")) for i in items] == [
        ("test_idempotency", "lifetime"), ("test_idempotency", "lifetime"), ("test_spark", None),
        ("test_generated_openapi", None), ("test_idempotency", "finalized-duplicate"), ("test_keys", None)]
    plain = [_Item("test_keys"), _Item("test_spark")]
    order_items(plain, spark=False)  # type: ignore[arg-type]   # skipped at once: nothing to schedule
    assert [i.originalname for i in plain] == ["test_keys", "test_spark"]


def test_groups_by_node_id():
    assert group_of("test_idempotency.py::test_idempotency[createTable-lifetime]", spark=False) == LIFETIME_GROUP
    assert group_of("test_idempotency.py::test_idempotency[createTable-finalized-duplicate]", False) is None
    assert group_of("test_discovery.py::test_discovery[lifetime-placement]", False) is None
    assert group_of("test_spark.py::test_spark[row_level]", spark=True) == SPARK_GROUP
    assert group_of("test_spark.py::test_spark[row_level]", spark=False) is None


def test_which_checks_hold_the_database_links_turn_for_their_whole_run():
    """Issue 34 item 6: with --ctk-db-link only the checks whose catalog traffic the kit's client does not bound
    hold a shared turn for their whole run; the others' requests take theirs (ctk.interposer.linklock)."""
    whole = scheduling.whole_check_turn
    assert not whole("test_idempotency.py::test_idempotency[createTable-5xx-not-stored]")
    assert not whole("ctk/suites/test_semantics.py::test_semantics[TBL-01]")
    assert not whole("test_generated.py::test_generated_openapi")
    assert whole("test_idempotency.py::test_idempotency[createTable-lifetime]")        # timed against the lifetime
    assert whole("test_network.py::test_network[createTable-network-duplicate]")       # the interposer's copies
    assert whole("test_network.py::test_lost_evolution[schema]")
    assert whole("test_spark.py::test_spark[row_level]")
    assert whole("test_real_client.py::test_real_client_pyiceberg")
    assert whole("scenarios/retry.yaml::retry")                                          # unknown: the safe side


def test_the_kits_scheduling_only_for_xdists_default_distribution():
    chosen = SimpleNamespace(getvalue=lambda name: "loadscope")
    assert make_scheduler(chosen, None, spark=False) is None    # type: ignore[arg-type]  # the user's choice stays


def test_the_lifetime_batch_runs_on_one_worker(tmp_path):
    """Every worker has a session of its own: before the group, each worker given a lifetime item ran the whole
    batch again (three times the waiting and the requests with three workers)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--ctk", "--ctk-reports", str(tmp_path / "rep"),
                           "--noconftest", "-p", "no:cacheprovider", "-n", "2", "-k", "lifetime", "-v"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    ran = re.findall(r"\[(gw\d+)\] \[\s*\d+%\] PASSED \S*test_idempotency\[\w+-lifetime\](\S*)", proc.stdout)
    assert len(ran) >= 10, proc.stdout[-3000:]
    workers = {w for w, _ in ran}
    assert len(workers) == 1, f"lifetime items ran on {sorted(workers)}\n{proc.stdout[-3000:]}"
    assert {suffix for _, suffix in ran} == {""}, "node ids carry a group suffix"   # reports show plain ids


def test_a_closed_batch_starts_no_check():
    session = SimpleNamespace(context=SimpleNamespace(), client=SimpleNamespace(sibling=lambda: _Client()))
    batch = LifetimeBatch(session)  # type: ignore[arg-type]
    batch.close()
    with pytest.raises(RuntimeError, match="ended before this check began"):
        batch._one("createNamespace")
    assert all(c.closed for c in batch.clients)


class _Client:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_the_embedded_catalog_is_disposable_only_when_nothing_of_it_lives_elsewhere(tmp_path):
    assert ReferenceServer(ReferenceSettings()).disposable
    assert not ReferenceServer(ReferenceSettings(warehouse=str(tmp_path))).disposable
    assert not ReferenceServer(ReferenceSettings(database_url=f"sqlite:///{tmp_path}/c.db")).disposable


def test_checks_that_arm_database_link_faults_share_one_worker_with_a_link():
    from ctk.plugin.scheduling import DB_LINK_GROUP

    for nodeid in ("test_idempotency.py::test_idempotency[createTable-5xx-not-stored]",
                   "test_idempotency.py::test_idempotency[updateTable-lost-answer]",
                   "test_idempotency.py::test_idempotency[dropView-in-flight-duplicate]",
                   "test_network.py::test_network[renameTable-network-duplicate-inflight]"):
        assert group_of(nodeid, False, db_link=True) == DB_LINK_GROUP, nodeid
        assert group_of(nodeid, False) is None, nodeid                  # without --ctk-db-link: each alone
    assert group_of("test_network.py::test_network[renameTable-network-duplicate]", False, db_link=True) is None
    assert group_of("test_idempotency.py::test_idempotency[createTable-lifetime]", False, True) == LIFETIME_GROUP
