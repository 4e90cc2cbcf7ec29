"""The kit's own tests under pytest-xdist (tests/xdist_lanes.py): a slow module's tests go to every worker one
by one, any other module stays whole on one worker, and the slow modules are scheduled first."""

from __future__ import annotations

import json
from pathlib import Path

import xdist_lanes

CONFTEST = """
import xdist_lanes

def pytest_collection_modifyitems(items):
    xdist_lanes.order_items(items)

def pytest_xdist_make_scheduler(config, log):
    return xdist_lanes.make_scheduler(config, log)
"""

RECORDING_TEST = """
import json, os, pathlib

def _record(name):
    out = pathlib.Path({out!r})
    with open(out, "a", encoding="utf-8") as f:
        f.write(json.dumps([name, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")
"""


def test_units_spread_the_slow_modules_only():
    slow = xdist_lanes.SPREAD[0]
    assert xdist_lanes.unit_of(f"{slow}::test_a[x]") == f"{slow}::test_a[x]"
    assert xdist_lanes.unit_of("tests/reporting/test_x.py::test_a[x]") == "tests/reporting/test_x.py"


def test_slow_modules_first_in_their_order():
    class Item:
        def __init__(self, nodeid):
            self.nodeid = nodeid

    items = [Item("tests/a/test_a.py::t1"), Item(f"{xdist_lanes.SPREAD[1]}::t"), Item("tests/a/test_a.py::t2"),
             Item(f"{xdist_lanes.SPREAD[0]}::t")]
    xdist_lanes.order_items(items)
    assert [i.nodeid for i in items] == [f"{xdist_lanes.SPREAD[0]}::t", f"{xdist_lanes.SPREAD[1]}::t",
                                         "tests/a/test_a.py::t1", "tests/a/test_a.py::t2"]


def test_two_workers_share_a_slow_module_and_keep_another_whole(pytester, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(xdist_lanes.__file__).parent))
    out = tmp_path / "ran.jsonl"
    pytester.makeconftest(CONFTEST)
    slow_dir, _, slow_name = xdist_lanes.SPREAD[0].rpartition("/")
    pytester.mkdir("tests")
    pytester.mkdir(slow_dir)
    body = RECORDING_TEST.format(out=str(out))
    (pytester.path / slow_dir / slow_name).write_text(
        body + "".join(f"\ndef test_slow_{i}():\n    _record('slow{i}')\n" for i in range(4)))
    (pytester.path / "tests" / "test_whole.py").write_text(
        body + "".join(f"\ndef test_whole_{i}():\n    _record('whole{i}')\n" for i in range(4)))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")        # xdist alone: workers start faster
    result = pytester.runpytest_subprocess("-p", "xdist.plugin", "-n", "2", "-p", "no:cacheprovider", "tests")
    result.assert_outcomes(passed=8)
    ran = [json.loads(line) for line in out.read_text().splitlines()]
    workers = {}
    for name, worker in ran:
        workers.setdefault(name.rstrip("0123456789"), set()).add(worker)
    assert workers["slow"] == {"gw0", "gw1"}, ran
    assert len(workers["whole"]) == 1, ran
    for worker in ("gw0", "gw1"):     # on each worker the slow module's tests came first
        kinds = [name.rstrip("0123456789") for name, w in ran if w == worker]
        assert kinds == sorted(kinds, key=lambda kind: kind != "slow"), ran
