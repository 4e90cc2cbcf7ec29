"""Issue 30 item 6(b): on a catalog without nested namespaces the model-based run places its namespaces the way
every other check does, as run-unique siblings of the run namespace (`Placement.child`), and decides SEM-01/02
there; it said "needs nested namespaces" (inconclusive) before. Nothing of it is left behind."""

from __future__ import annotations

import httpx
from odd import refuse_nested_namespaces
from test_model_semantics import OPTS, by_req

from ctk.client.placement import Placement
from ctk.core.verdicts import Status
from ctk.fuzzing import StatefulOptions, run_stateful_check


def test_flat_catalog_decides_sem01_and_sem02_beside_the_run_namespace(make_odd):
    rule = refuse_nested_namespaces()
    ctx, odd = make_odd([rule], idempotency_lifetime=None)       # plain mode: SEM-01/02 alone
    run = tuple(ctx.namespace)
    ctx.client.placement = Placement(run, nested=False, nesting_note="creating a nested namespace answered 400")
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    for req in ("SEM-01", "SEM-02"):
        v = vs[req]
        assert v.status is Status.PASS, (req, v.message)
        assert "nested" not in v.message and v.details["evidence"] > 0, v.message
    assert vs["GEN-02"].status is Status.UNSUPPORTED
    assert rule.hits == 0, "the model created no nested namespace"
    model = [s for s in ctx.client.placement.siblings if s[-1].startswith(f"{run[-1]}_m")]
    assert model and all(len(s) == 1 for s in model), model        # beside the run namespace, registered
    top = [tuple(n) for n in httpx.get(f"{odd.upstream}/v1/namespaces", timeout=10).json()["namespaces"]]
    assert not set(model) & set(top), top                           # every sequence cleaned up
