"""A catalog whose router answers every path it does not know with an error model of its own (SeaweedFS 4.48:
404 {"type": "NotFound", "message": "Path not found"}), and that does not serve registerView, while it lists no
endpoints in /v1/config: found on SeaweedFS with --ctk-capability views=yes, where VIEW-08 was a deviation
("registerView answered 404 NotFound") for an operation the catalog does not have. The semantic check's operation
is told unserved by one control request to a path no catalog serves, answered the same: not applicable. A served
operation's own 404s (another message) are not mistaken for it."""

from __future__ import annotations

import odd
from odd import no_endpoints_listed

from ctk.catalog.capabilities import Capability
from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core.verdicts import Status


def _check(requirement: str):
    return next(c for c in semantic_checks() if c.requirement == requirement)


def _ctx(make_odd, router):
    ctx, _ = make_odd([no_endpoints_listed(), router])
    ctx.capabilities.declared[Capability.VIEWS] = True       # --ctk-capability views=yes, as the lane declares
    return ctx


def test_an_operation_the_router_does_not_know_is_not_applicable(make_odd):
    router = odd.router_with_error_model("POST", r"/register-view$")
    ctx = _ctx(make_odd, router)
    [v] = run_semantic(ctx, _check("VIEW-08"))
    assert router.hits >= 1 and router.unknown >= 1, "neither the operation nor the control reached the router"
    assert v.status is Status.UNSUPPORTED, (v.status, v.message)
    assert "registerView is not served by the target" in v.message and "as a path no catalog serves" in v.message
    assert any(e["url"].endswith("/ctk-no-such-route") for e in v.exchanges), "the control request is the evidence"


def test_a_served_operation_with_the_same_router_is_still_judged(make_odd):
    """The same router in front, registerView served: VIEW-08 decides (pass), its 404s are not a router's."""
    router = odd.router_with_error_model("POST", r"/no-operation-matches-this$")
    ctx = _ctx(make_odd, router)
    [v] = run_semantic(ctx, _check("VIEW-08"))
    assert v.status is Status.PASS, (v.status, v.message)
