"""Every check on every endpoint passes on the reference catalog (about 3 minutes: opt in with
CTK_CHECKS_FULL=1; test_sensitivity.py covers createTable and updateTable by default)."""

from __future__ import annotations

import os

import pytest

from ctk.checks import run_endpoint_checks
from ctk.core.verdicts import Status
from ctk.catalog import ENDPOINTS
from ctk.reference.deviations import PROFILES
from ctk.reference.variants import VARIANTS

pytestmark = pytest.mark.skipif(os.environ.get("CTK_CHECKS_FULL") != "1",
                                reason="slow: set CTK_CHECKS_FULL=1 to run every check on every endpoint")

# Their terminal 4xx: the plan's (or plan task's) table renamed away, 404 NoSuchTable; renaming it back clears it.
PLANNING_4XX = ("cancelPlanning", "fetchScanTasks")


@pytest.mark.parametrize("op", sorted(ENDPOINTS))
def test_every_check_passes(make_ctx, op):
    ctx = make_ctx()
    behaviours = None if op in ("createNamespace", "updateTable") else \
        [b for b in ("finalized-duplicate", "terminal-4xx-replayed", "5xx-not-stored", "lost-answer",
                     "in-flight-duplicate", "payload-mismatch", "key-scope", "replay-failed", "crash-reconciled")]
    for v in run_endpoint_checks(ctx, op, behaviours):
        if v.requirement == "PAYLOAD-01" and not ENDPOINTS[op].has_payload:
            assert v.status is Status.UNSUPPORTED
            continue
        assert v.status is Status.PASS, f"{v.requirement} {v.behaviour}: {v.status.value}\n{v.message}"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_planning_4xx_replay_is_broken_exactly_by_its_profiles(make_ctx, profile):
    """Sensitivity of REPLAY-02 on the planning operations: the profiles that list REPLAY-02 (a terminal 404 not
    stored, no replay, keys honoured on one endpoint only) make the retry after the rename back re-execute - the
    plan cancelled, the task fetched - and the check says so; every other profile leaves it a pass (or
    unsupported where the key is not advertised)."""
    verdicts = run_endpoint_checks(make_ctx(deviation=profile), PLANNING_4XX[0], ["terminal-4xx-replayed"]) + \
        run_endpoint_checks(make_ctx(deviation=profile), PLANNING_4XX[1], ["terminal-4xx-replayed"])
    assert len(verdicts) == 2
    for v in verdicts:
        if "REPLAY-02" in PROFILES[profile].catches:
            assert v.status is Status.DEVIATION and v.classification == "re-executed", (v.endpoint, v.message)
            assert "the state shows the request was executed on the retry" in v.message, v.message
        else:
            assert v.status in (Status.PASS, Status.UNSUPPORTED), (v.endpoint, v.status, v.message)
            assert v.status is Status.UNSUPPORTED or v.classification == "replayed 404", (v.endpoint, v.message)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_planning_4xx_replay_passes_on_every_allowed_variant(make_ctx, variant):
    """Specificity: each allowed-variant profile replays the stored 404 NoSuchTable on both operations."""
    for op in PLANNING_4XX:
        [v] = run_endpoint_checks(make_ctx(variant=variant), op, ["terminal-4xx-replayed"])
        assert v.status is Status.PASS and v.classification == "replayed 404", (op, v.message)
