"""Scheduling of the kit's items: the lifetime batch runs once, on one worker, first; an interrupted batch ends
before the run namespace goes; the embedded catalog is discarded whole."""

from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from ctk.plugin import scheduling
from ctk.plugin.scheduling import LIFETIME_GROUP, SPARK_GROUP, LifetimeBatch, order_items, use_groups
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings


class _Item:
    def __init__(self, name: str, behaviour: str | None = None):
        self.originalname = name
        self.callspec = SimpleNamespace(params={"behaviour": behaviour} if behaviour else {})
        self.markers: list = []

    def add_marker(self, mark) -> None:
        self.markers.append(mark)


def test_lifetime_items_first_in_one_group_then_the_generated_cases():
    items = [_Item("test_idempotency", "finalized-duplicate"), _Item("test_generated_openapi"),
             _Item("test_idempotency", "lifetime"), _Item("test_keys"), _Item("test_idempotency", "lifetime")]
    order_items(items)  # type: ignore[arg-type]
    assert [(i.originalname, i.callspec.params.get("behaviour")) for i in items] == [
        ("test_idempotency", "lifetime"), ("test_idempotency", "lifetime"), ("test_generated_openapi", None),
        ("test_idempotency", "finalized-duplicate"), ("test_keys", None)]
    grouped = [i for i in items if any(m.name == "xdist_group" and m.args == (LIFETIME_GROUP,) for m in i.markers)]
    assert [i.callspec.params.get("behaviour") for i in grouped] == ["lifetime", "lifetime"]


def test_spark_workloads_next_in_a_group_of_their_own_when_asked_for():
    items = [_Item("test_keys"), _Item("test_spark"), _Item("test_idempotency", "lifetime"), _Item("test_spark")]
    order_items(items, spark=True)  # type: ignore[arg-type]
    assert [i.originalname for i in items] == ["test_idempotency", "test_spark", "test_spark", "test_keys"]
    assert all(any(m.args == (SPARK_GROUP,) for m in i.markers) for i in items[1:3])
    plain = [_Item("test_keys"), _Item("test_spark")]
    order_items(plain, spark=False)  # type: ignore[arg-type]   # skipped at once: nothing to schedule
    assert [i.originalname for i in plain] == ["test_keys", "test_spark"] and not plain[1].markers


def test_xdist_load_becomes_loadgroup_and_the_workers_are_told():
    controller = SimpleNamespace(option=SimpleNamespace(dist="load"))
    use_groups(controller)  # type: ignore[arg-type]
    assert controller.option.dist == "loadgroup"
    node = SimpleNamespace(config=controller, workerinput={})
    scheduling.tell_worker(node)
    worker = SimpleNamespace(option=SimpleNamespace(dist="no", loadgroup=False), workerinput=node.workerinput)
    use_groups(worker)  # type: ignore[arg-type]
    assert worker.option.loadgroup is True
    chosen = SimpleNamespace(option=SimpleNamespace(dist="loadscope"))     # the user's choice stays
    use_groups(chosen)  # type: ignore[arg-type]
    assert chosen.option.dist == "loadscope"


def test_the_lifetime_batch_runs_on_one_worker(tmp_path):
    """Every worker has a session of its own: before the group, each worker given a lifetime item ran the whole
    batch again (three times the waiting and the requests with three workers)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--ctk", "--ctk-reports", str(tmp_path / "rep"),
                           "--noconftest", "-p", "no:cacheprovider", "-n", "2", "-k", "lifetime", "-v"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    ran = re.findall(r"\[(gw\d+)\] \[\s*\d+%\] PASSED \S*test_idempotency\[\w+-lifetime\]", proc.stdout)
    assert len(ran) >= 10, proc.stdout[-3000:]
    assert len(set(ran)) == 1, f"lifetime items ran on {sorted(set(ran))}"


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
