"""Idempotency-Key behaviour of every mutation endpoint: endpoints x behaviours (the report's matrix).

Behaviours: finalized duplicate (REPLAY-01), terminal 4xx replayed (REPLAY-02), 5xx not stored (REPLAY-03),
lost answers (REPLAY-04), in-flight duplicate (INFLIGHT-01/02), payload mismatch (PAYLOAD-01), key scope
(SCOPE-01), lifetime (LIFE-01), replay failed (RECON-01), crash reconciled (RECON-02).

The lifetime checks are mostly waiting (a retry at 90% of the advertised lifetime), so the first of them
to run starts all of them at once, each on a client of its own (its verdict carries only its own
exchanges), with no fault rules, judged from catalog state and, where the target has them, from the execution
counters of its own operation (one check per operation runs in the batch), and waits for all of them; the
others then collect their verdicts. Nothing of the batch runs behind other tests (their fault rules and
counters are global).
"""

import threading
from concurrent.futures import ThreadPoolExecutor, wait

import pytest

from ctk.checks.context import CheckContext
from ctk.checks.faults import ControlFaults, CountersOnly, NoFaults
from ctk.checks.idempotency import ENDPOINT_CHECKS, check_lifetime
from ctk.http.endpoints import ENDPOINTS

CASES = [(op, behaviour, check) for op in ENDPOINTS for behaviour, check in ENDPOINT_CHECKS]


class _LifetimeBatch:
    def __init__(self, session):
        self.session, self.lock, self.futures, self.pool, self.clients = session, threading.Lock(), None, None, []

    def _one(self, operation):
        base = self.session.context
        client = self.session.client.sibling()   # same prefix, separator, storage settings and placement
        self.clients.append(client)
        faults = CountersOnly(base.faults.for_client(client)) if isinstance(base.faults, ControlFaults) \
            else NoFaults()
        ctx = CheckContext(client, base.discovery, base.namespace, faults, base.options)
        return check_lifetime(ctx, ENDPOINTS[operation])

    def verdicts(self, operation):
        with self.lock:
            if self.futures is None:
                self.pool = ThreadPoolExecutor(max_workers=len(ENDPOINTS), thread_name_prefix="ctk-lifetime")
                self.futures = {op: self.pool.submit(self._one, op) for op in ENDPOINTS}
                # The whole batch ends inside this test: requests left running behind later tests would take
                # their fault rules and move the execution counters they read.
                wait(self.futures.values())
        return self.futures[operation].result()

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        for c in self.clients:
            c.close()


@pytest.fixture(scope="session")
def lifetime_batch(ctk_session):
    batch = _LifetimeBatch(ctk_session)
    yield batch
    batch.close()


@pytest.mark.parametrize("operation,behaviour,check", CASES, ids=[f"{op}-{b}" for op, b, _ in CASES])
def test_idempotency(request, ctk_context, operation, behaviour, check):
    if check is check_lifetime:
        return request.getfixturevalue("lifetime_batch").verdicts(operation)
    return check(ctk_context, ENDPOINTS[operation])
