"""Network faults through the interposer, on any target (REPLAY-04, HIST-02, INFLIGHT-01, INTEG-01).

For every mutation endpoint: the answer lost after the commit (dropped, 503, reset mid-response, timeout),
a slow link, and the request duplicated by the network; the retrying client (same key) must end with the
right answer and catalog state must show one execution. Seed example 1b (keys) checks table integrity.
"""

import pytest

from ctk.checks.lost_evolution import KINDS as LOST_KINDS, check_lost_evolution
from ctk.checks.network import SCENARIOS, check_network_scenario, run_seed_example
from ctk.catalog import ENDPOINTS

CASES = [(op, s) for op in ENDPOINTS for s in SCENARIOS]


def _interposer(ctk_session):
    if ctk_session.interposer is None:
        pytest.skip(f"unsupported: no interposer in front of the target ({ctk_session.interposer_note})")
    return ctk_session.interposer


@pytest.mark.parametrize("operation,scenario", CASES, ids=[f"{op}-{s}" for op, s in CASES])
def test_network(ctk_session, ctk_context, operation, scenario):
    return check_network_scenario(ctk_context, ENDPOINTS[operation], _interposer(ctk_session), scenario)


def test_seed_example_1b(ctk_session, ctk_context):
    """A commit whose 503 hides that it landed, retried with the same key: 200 replayed, table intact."""
    return run_seed_example(ctk_context, _interposer(ctk_session), variants=("1b",))


@pytest.mark.parametrize("kind", LOST_KINDS)
def test_lost_evolution(ctk_session, ctk_context, kind):
    """A committed evolution commit of each kind (schema, spec, order, properties, refs, replace, view version)
    whose answer is lost, retried with the same key: success, and the final metadata is one execution's."""
    return check_lost_evolution(ctk_context, _interposer(ctk_session), kind)
