"""Idempotency-Key behaviour of every mutation endpoint: endpoints x behaviours (the report's matrix).

Behaviours: finalized duplicate (REPLAY-01), terminal 4xx replayed (REPLAY-02), 5xx not stored (REPLAY-03),
lost answers (REPLAY-04), in-flight duplicate (INFLIGHT-01/02), payload mismatch (PAYLOAD-01), key scope
(SCOPE-01), lifetime (LIFE-01), replay failed (RECON-01), crash reconciled (RECON-02).

The lifetime checks are mostly waiting: they run as one batch (ctk/plugin/scheduling.py, fixture
`lifetime_batch`).
"""

import pytest

from ctk.checks.idempotency import ENDPOINT_CHECKS, check_lifetime
from ctk.catalog import ENDPOINTS

CASES = [(op, behaviour, check) for op in ENDPOINTS for behaviour, check in ENDPOINT_CHECKS]


@pytest.mark.parametrize("operation,behaviour,check", CASES, ids=[f"{op}-{b}" for op, b, _ in CASES])
def test_idempotency(request, ctk_context, operation, behaviour, check):
    if check is check_lifetime:
        return request.getfixturevalue("lifetime_batch").verdicts(operation)
    return check(ctk_context, ENDPOINTS[operation])
