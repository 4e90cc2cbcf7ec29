"""Scheduling of checks that are mostly waiting: the lifetime batch, and the order of the kit's items.

The lifetime checks (LIFE-01) retry at 90% of the advertised key lifetime, so the first of them to run starts
all of them at once, each on a client of its own (its verdict carries only its own exchanges), with no fault
rules, judged from catalog state and, where the target has them, from the execution counters of its own
operation (one check per operation runs in the batch), and waits for all of them; the others then collect
their verdicts. Nothing of the batch runs behind other tests (their fault rules and counters are global).

Under xdist every worker has a session of its own, so each worker given a lifetime item would run the whole batch
again: `make_scheduler` gives xdist a scheduling that sends the lifetime items (and with --ctk-spark the Spark
workloads) to one worker each, and `order_items` puts them first, so that their waiting overlaps the other
workers' checks; then the longest single check (the generated OpenAPI cases), so that no worker starts it last.

With --ctk-db-link the checks that arm faults on the catalog's database link form one more group, and the run's
traffic takes turns on the link (`link_turns`, ctk.interposer.linklock): every request of the kit's client a shared
one while it is in flight, the checks whose traffic its requests do not bound (`whole_check_turn`) a shared one
for their whole run, and one fault injection the exclusive one, from arming to removal. The link carries every
request the catalog serves, so without the turns one worker's armed fault gave other workers' checks stray 5xx
(issue 30); with a turn per check (the exclusive one to the arming check's end) three workers waited on each other
for 1305 s where the plain run took 245 s (issue 34).
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

import pytest

from ctk.checks.context import CheckContext
from ctk.checks.faults import ControlFaults, CountersOnly, InterposerFaults, NoFaults
from ctk.checks.idempotency import check_lifetime
from ctk.catalog import ENDPOINTS
from ctk.interposer.linklock import LinkLock

if TYPE_CHECKING:  # pragma: no cover
    from ctk.core.verdicts import Verdict
    from ctk.client.transport import CatalogClient
    from ctk.plugin.session import CtkSession


class LifetimeBatch:
    """Runs every operation's lifetime check at once, the first time one of them is asked for."""

    def __init__(self, session: "CtkSession") -> None:
        self.session = session
        self.lock = threading.Lock()
        self.futures: dict[str, Future] | None = None
        self.pool: ThreadPoolExecutor | None = None
        self.clients: list["CatalogClient"] = []
        self.closed = False
        self.clients_lock = threading.Lock()

    def _one(self, operation: str) -> "Verdict | list[Verdict]":
        base, own = self.session.context, self.session.client
        if base is None or own is None:
            raise RuntimeError("the lifetime batch runs in a started session only (it has no check context yet)")
        client = own.sibling()   # same prefix, separator, storage settings and placement
        with self.clients_lock:     # (not self.lock: `verdicts` holds that while the batch runs)
            self.clients.append(client)
            if self.closed:      # the batch ended (an interrupted run) before this check began
                client.close()
                raise RuntimeError("the lifetime batch was ended before this check began (the run was stopped)")
        # the interposer in front of the catalog, when the run has one, says when each retry reached it (LIFE-01)
        ip = getattr(self.session, "interposer", None)
        watcher = InterposerFaults(ip, client) if ip is not None else None
        faults = CountersOnly(base.faults.for_client(client) if isinstance(base.faults, ControlFaults)
                              else NoFaults(), arrivals=watcher)
        ctx = CheckContext.bind(client, base.discovery, base.namespace, faults, base.options)
        return check_lifetime(ctx, ENDPOINTS[operation])

    def verdicts(self, operation: str) -> "Verdict | list[Verdict]":
        with self.lock:
            if self.futures is None:
                self.pool = ThreadPoolExecutor(max_workers=len(ENDPOINTS), thread_name_prefix="ctk-lifetime")
                self.futures = {op: self.pool.submit(self._one, op) for op in ENDPOINTS}
                # The whole batch ends inside this test: requests left running behind later tests would take
                # their fault rules and move the execution counters they read.
                wait(self.futures.values())
        return self.futures[operation].result()

    def close(self) -> None:
        """End the batch. Its clients first: a check still running (an interrupted run) then fails at its next
        request instead of creating more in the run namespace, and its thread ends."""
        with self.clients_lock:
            self.closed = True
            clients = list(self.clients)
        for c in clients:
            c.close()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


LIFETIME_GROUP = "ctk-lifetime"
SPARK_GROUP = "ctk-spark"
DB_LINK_GROUP = "ctk-db-link"
_LIFETIME_ID = re.compile(r"test_idempotency\.py::test_idempotency\[\w+-lifetime\]$")
_SPARK_ID = re.compile(r"test_spark\.py::test_spark\[\w+\]$")
#: the checks that arm faults on the catalog's database link when --ctk-db-link is given: REPLAY-03 (its write
#: fails), REPLAY-04 (the answer to its commit is cut), INFLIGHT-01/02 and the network's in-flight duplicates (the
#: database held while the copies arrive)
_DB_LINK_ID = re.compile(r"(test_idempotency\.py::test_idempotency\[\w+-(5xx-not-stored|lost-answer|in-flight-duplicate)\]"
                         r"|test_network\.py::test_network\[\w+-network-duplicate-inflight\])$")


def _rank(item: pytest.Item, spark: bool = False) -> int:
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    name = getattr(item, "originalname", None)
    if name == "test_idempotency" and params.get("behaviour") == "lifetime":
        return 0
    if name == "test_spark" and spark:
        return 1
    if name == "test_generated_openapi":
        return 2
    return 3


def order_items(items: list[pytest.Item], spark: bool = False) -> None:
    """The lifetime items first; the Spark workloads (when asked for) next; then the generated OpenAPI cases; the
    rest as collected. (Which worker runs what: `group_of`.)"""
    items.sort(key=lambda item: _rank(item, spark))          # stable: the order within each rank is the collection's


def group_of(nodeid: str, spark: bool, db_link: bool = False) -> str | None:
    """The group an item runs in, on one worker: every lifetime item (the batch runs once), with --ctk-spark
    every Spark workload (one JVM: three on a 2-core runner took longer than one after the other), and with
    --ctk-db-link every check that arms a fault on the shared database link (they take its turns one after the
    other anyway: `link_turns`); None: alone."""
    if _LIFETIME_ID.search(nodeid):
        return LIFETIME_GROUP
    if spark and _SPARK_ID.search(nodeid):
        return SPARK_GROUP
    if db_link and _DB_LINK_ID.search(nodeid):
        return DB_LINK_GROUP
    return None


#: the checks that hold a shared turn on the database link for their whole run (`whole_check_turn`): the lifetime
#: batch (its retries are timed against the key lifetime: a fault window of another worker must not push one past
#: it), the network scenarios (the interposer sends copies of a request after its answer, and a client times out
#: while the catalog goes on), the Spark workloads and the pyiceberg client (their requests are not the kit's
#: client's)
_WHOLE_CHECK_ID = re.compile(r"test_idempotency\.py::test_idempotency\[\w+-lifetime\]$|test_network\.py::"
                             r"|test_spark\.py::|test_real_client\.py::")
#: the test files whose catalog traffic is all the kit's client's requests (the rest: a turn for the whole check)
_PER_REQUEST_FILES = ("test_idempotency.py", "test_keys.py", "test_discovery.py", "test_semantics.py",
                      "test_concurrency.py", "test_generated.py", "test_schema.py")


def whole_check_turn(nodeid: str) -> bool:
    """Whether the check holds a shared turn on the database link for its whole run (`_WHOLE_CHECK_ID`, and any
    check this module does not know), not only while each of its client's requests is in flight."""
    if _WHOLE_CHECK_ID.search(nodeid):
        return True
    path = nodeid.split("::", 1)[0]
    return path.rsplit("/", 1)[-1] not in _PER_REQUEST_FILES


def link_turns(db_link: str | None) -> LinkLock | None:
    """The turns on the catalog's database link (--ctk-db-link), shared by every process of the run (and any other
    run on that link): each request of the kit's client (and each check of `whole_check_turn`) runs in a shared
    turn, arming a link fault takes the exclusive one until it is removed, so that a fault meets only the requests
    of the check that armed it (ctk.interposer.linklock). None without a link."""
    return LinkLock.for_url(db_link) if db_link else None


def make_scheduler(config: pytest.Config, log: Any, spark: bool, db_link: bool = False) -> Any:
    """xdist's default distribution (``load``, which a user who chose nothing gets) with the kit's groups: each
    group goes to one worker, every other item on its own, in collection order (groups first: xdist orders work
    units by size). Grouped by node id, not by xdist's ``xdist_group`` marks, whose node-id suffix pytest 9.2
    no longer honours. None (xdist's own) for any distribution the user chose."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class KitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid, spark, db_link) or nodeid

    return KitScheduling(config, log)
