"""Scheduling of checks that are mostly waiting: the lifetime batch.

The lifetime checks (LIFE-01) retry at 90% of the advertised key lifetime, so the first of them to run starts
all of them at once, each on a client of its own (its verdict carries only its own exchanges), with no fault
rules, judged from catalog state and, where the target has them, from the execution counters of its own
operation (one check per operation runs in the batch), and waits for all of them; the others then collect
their verdicts. Nothing of the batch runs behind other tests (their fault rules and counters are global).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from ctk.checks.context import CheckContext
from ctk.checks.faults import ControlFaults, CountersOnly, InterposerFaults, NoFaults
from ctk.checks.idempotency import check_lifetime
from ctk.catalog import ENDPOINTS

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

    def _one(self, operation: str) -> "Verdict | list[Verdict]":
        base, own = self.session.context, self.session.client
        if base is None or own is None:
            raise RuntimeError("the lifetime batch runs in a started session only (it has no check context yet)")
        client = own.sibling()   # same prefix, separator, storage settings and placement
        self.clients.append(client)
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
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        for c in self.clients:
            c.close()
