"""How the kit's own tests spread over pytest-xdist workers (`nox -s tests` runs them with `-n`, as many as
$CTK_TEST_WORKERS says, 2 by default: CI's cores).

A test module is one unit of work, so its module-scoped fixtures (a PostgreSQL cluster, a Spark session, a
served catalog) start once, on one worker. The modules of SPREAD are the exception: each of their tests is a
unit of its own, so that their runs of the whole kit (minutes each) go to whichever worker is free; they are
scheduled first, slowest module first, so that no worker starts one of them last. Everything else follows in
collection order. The tests that start catalogs bind port 0 (tests/procs.py), so workers never race for ports.

tests/conftest.py hands xdist `make_scheduler` and orders the collected items with `order_items`."""

from __future__ import annotations

from typing import Any

#: modules whose tests are spread one by one, slowest first (a run of 2026-11-26 in one process on a busy machine:
#: test_sensitivity_workers.py 31 min, test_sensitivity.py 11 min). Measured alone on 2026-11-27, 2 cores at a
#: load of 14-23: test_sensitivity.py 752 s in one process, 471 s over 2 workers; test_sensitivity_workers.py
#: (its default lane: two runs of the whole kit) 358 s and 328 s - two whole-kit runs side by side share the CPU.
#: A module listed here must not rely on a module-scoped fixture being made once per session
#: (test_sensitivity_workers.py shares its reference run across workers itself).
SPREAD = (
    "tests/checks/test_sensitivity_workers.py",
    "tests/checks/test_sensitivity.py",
)


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: itself in a SPREAD module, else its module."""
    return nodeid if module_of(nodeid) in SPREAD else module_of(nodeid)


def order_items(items: list[Any]) -> None:
    """SPREAD modules' tests first, in SPREAD's order; the rest keep their order (a stable sort)."""
    rank = {m: i for i, m in enumerate(SPREAD)}
    items.sort(key=lambda item: rank.get(module_of(item.nodeid), len(SPREAD)))


def make_scheduler(config: Any, log: Any) -> Any:
    """xdist's `load` distribution (what `-n` alone gives) by unit_of, in collection order; None for any other
    `--dist` the caller chose."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False      # keep order_items' order: xdist would put the biggest modules first

    class Lanes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return Lanes(config, log)
