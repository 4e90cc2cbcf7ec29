"""Discovery: DISC-01..04 (GET /v1/config advertises idempotency-key-lifetime, top level, Java-parseable;
keys are ignored by a server that does not advertise support)."""

import pytest

from ctk.checks.discovery import DISCOVERY_CHECKS


@pytest.mark.parametrize("behaviour,check", DISCOVERY_CHECKS, ids=[b for b, _ in DISCOVERY_CHECKS])
def test_discovery(ctk_context, behaviour, check):
    return check(ctk_context)
