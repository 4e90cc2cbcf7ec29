"""An operation the catalog claims but does not serve (issue 34, item 5): "an advertised operation answered by a
router's own 404 is not served, reported as 'advertised but not served' (a discovery finding), never a semantic
fail", and "an operation a catalog claims (in its endpoints list, or by the spec's default set when it has none)
and refuses with 405/501 is a finding, never 'not applicable'".

Seen on real catalogs: a registerTable listed in /v1/config and answered by the router's 404 became a TBL-09 FAIL;
a catalog sending no endpoints list (so, by the spec, the default set) and answering createTable 405 had every
table check "not applicable". Each odd catalog below is one of them in front of the reference:

* (i)   registerTable listed, answered 404 without an error model (a router's)
* (ii)  no endpoints list, createTable answered 405 (also: 501 with an error model)
* (iii) registerTable listed, answered by a router with an error model of its own for every path it does not
        know (SeaweedFS: 404 {"type": "NotFound", "message": "Path not found"})

The checks of the operation are inconclusive "advertised but not served (DISC-05)" naming the finding they rest
on (``details.blocked_by``), and DISC-05 - judged over the process's traffic by the same function - is a
deviation naming the operation and the exchange. Controls: the plain reference gives DISC-05 pass; an operation
NOT claimed (not listed) and answered a router's 404 stays "not served: unsupported"; a listed operation's own
404 with an error model about a missing resource is not taken for a router's.
"""

from __future__ import annotations

from types import SimpleNamespace

import odd
import pytest
from odd import no_endpoints_listed, refused_as_unserved, router_with_error_model, unlisted

from ctk.catalog.capabilities import Capability
from ctk.checks import run_endpoint_checks
from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status
from ctk.plugin import served

REGISTER = r"/namespaces/[^/]+/register$"
CREATE_TABLE = r"/namespaces/[^/]+/tables$"


def _checks(requirement: str):
    return [c for c in semantic_checks() if c.requirement == requirement]


def disc05(ctx):
    """DISC-05 as the run judges it, over this context's traffic (one process)."""
    session = SimpleNamespace(worker="test", client=ctx.client, discovery=ctx.discovery)
    return served.verdict([served.summarize(session)])


def _advertised_unserved(v, operation: str):
    assert v.status is Status.INCONCLUSIVE, (v.requirement, v.status, v.message)
    assert v.message.startswith("advertised but not served (DISC-05)"), v.message
    assert v.details.get("blocked_by") == "DISC-05", v.details
    assert v.details["advertised_unserved"]["operation"] == operation, v.details["advertised_unserved"]


@pytest.mark.parametrize("router", ["plain-404", "error-model-404"])
def test_a_listed_operation_answered_by_a_router_is_advertised_but_not_served(make_odd, router):
    """(i) and (iii): TBL-09's checks are not FAIL but inconclusive naming DISC-05; DISC-05 is a deviation naming
    registerTable and its exchange (and, for the router with an error model, the control it was compared with)."""
    rule = odd.not_routed("POST", REGISTER) if router == "plain-404" else router_with_error_model("POST", REGISTER)
    ctx, _ = make_odd([rule])
    assert ctx.discovery.endpoints is not None and ctx.discovery.supports("POST", "namespaces/{namespace}/register")
    verdicts = [v for c in _checks("TBL-09") for v in run_semantic(ctx, c)]
    assert rule.hits >= 2 and len(verdicts) == 2
    for v in verdicts:
        _advertised_unserved(v, "registerTable")
        assert "its /v1/config endpoints list" in v.message
    d = disc05(ctx)
    assert d.requirement == "DISC-05" and d.status.value == status_if_broken("DISC-05") == "deviation", d.message
    assert "registerTable" in d.message and "claimed in its /v1/config endpoints list" in d.message
    assert d.details["unserved"] == ["registerTable"] and "createTable" in d.details["served"]
    assert any(e["method"] == "POST" and e["url"].endswith("/register") and e["status"] == 404 for e in d.exchanges)
    if router == "error-model-404":
        assert "as a path no catalog serves is answered" in d.message
        assert any(e["url"].endswith("/ctk-no-such-route") for e in d.exchanges), "the control is the evidence"


def test_a_listed_operation_answered_by_a_router_blocks_its_idempotency_checks_on_discovery(make_odd):
    """The guarded idempotency checks of the same operation judge it with the same function: inconclusive
    naming DISC-05, not "unsupported" (the catalog claims it)."""
    rule = odd.not_routed("POST", REGISTER)
    ctx, _ = make_odd([rule])
    verdicts = run_endpoint_checks(ctx, "registerTable", ["finalized-duplicate", "terminal-4xx-replayed"])
    assert rule.hits and verdicts
    for v in verdicts:
        _advertised_unserved(v, "registerTable")


@pytest.mark.parametrize("status,body", [(405, None),
                                         (501, {"error": {"message": "no", "type": "NotImplemented", "code": 501}})],
                         ids=["405-plain", "501-error-model"])
def test_createtable_refused_on_the_default_set_is_a_finding_not_not_applicable(make_odd, status, body):
    """(ii): no endpoints list, so the catalog claims the default set, createTable in it; createTable refused with
    405 (501): no table check is "not applicable"; those that reached createTable are inconclusive naming
    DISC-05, and DISC-05 names createTable."""
    rule = refused_as_unserved("POST", CREATE_TABLE, status, body)
    ctx, _ = make_odd([no_endpoints_listed(), rule])
    assert ctx.discovery.endpoints is None
    verdicts = [v for c in semantic_checks() if c.requirement.startswith("TBL-") for v in run_semantic(ctx, c)]
    assert rule.hits and verdicts
    assert not [v for v in verdicts if v.status is Status.UNSUPPORTED and "not served" in v.message], \
        [(v.requirement, v.message[:200]) for v in verdicts if v.status is Status.UNSUPPORTED]
    assert not [v for v in verdicts if v.status in (Status.FAIL, Status.DEVIATION, Status.PASS)
                and any(e["status"] == status for e in v.exchanges)], "a verdict rests on the refused createTable"
    blocked = [v for v in verdicts if (v.details or {}).get("blocked_by") == "DISC-05"]
    assert len(blocked) >= 5, [(v.requirement, v.status.value, v.message[:160]) for v in verdicts]
    for v in blocked:
        _advertised_unserved(v, "createTable")
        assert "the spec's default endpoint set" in v.message
    d = disc05(ctx)
    assert d.status is Status.DEVIATION, d.message
    assert "createTable" in d.message and d.details["unserved"] == ["createTable"]
    assert any(e["status"] == status and e["url"].endswith("/tables") for e in d.exchanges)


def test_the_plain_reference_serves_what_it_claims(make_odd):
    """Control: the reference, nothing odd. TBL-09 is decided (pass) and DISC-05 passes, naming what it saw."""
    ctx, _ = make_odd([])
    verdicts = [v for c in _checks("TBL-09") for v in run_semantic(ctx, c)]
    assert [v.status for v in verdicts] == [Status.PASS, Status.PASS], [v.message for v in verdicts]
    d = disc05(ctx)
    assert d.status is Status.PASS, d.message
    assert {"registerTable", "createTable", "loadTable"} <= set(d.details["served"]), d.details


def test_no_evidence_is_no_pass(make_odd):
    """Control: nothing the catalog claims was reached (only /v1/config): DISC-05 is inconclusive."""
    ctx, _ = make_odd([])
    only_config = SimpleNamespace(exchanges=[ctx.discovery.exchange])
    d = served.verdict([served.summarize(SimpleNamespace(worker="test", client=only_config,
                                                         discovery=ctx.discovery))])
    assert d.status is Status.INCONCLUSIVE, d.message
    assert "no operation the catalog claims was reached" in d.message


def test_an_unlisted_operation_answered_by_a_router_stays_unsupported(make_odd):
    """Control: registerView NOT in the endpoints list (served only because the user declares views), answered
    a router's 404: not offered, so "not served" is unsupported as before, and DISC-05 does not name it."""
    rule = odd.not_routed("POST", r"/register-view$")
    ctx, _ = make_odd([unlisted(r"/register-view$"), rule])
    ctx.capabilities.declared[Capability.VIEWS] = True       # --ctk-capability views=yes
    assert not ctx.discovery.supports("POST", "namespaces/{namespace}/register-view")
    [v] = [v for c in _checks("VIEW-08") for v in run_semantic(ctx, c)][:1]
    assert rule.hits >= 1
    assert v.status is Status.UNSUPPORTED, (v.status, v.message)
    assert "registerView is not served by the target" in v.message and "DISC-05" not in v.message
    d = disc05(ctx)
    assert d.status is Status.PASS and "registerView" not in d.details["unserved"], d.message


def test_a_listed_operations_own_404_is_not_a_routers(make_odd):
    """Control against false positives: the same router (error model of its own for unknown paths) in front of
    a catalog that serves everything; a check whose only requests to its operation answer the operation's own
    404 (NoSuchTableException about a missing table) is decided, and the control tells it from the router's."""
    rule = router_with_error_model("POST", r"/no-operation-matches-this$")
    ctx, _ = make_odd([rule])
    for check in _checks("TBL-07") + _checks("TBL-04"):
        for v in run_semantic(ctx, check):
            assert v.status in (Status.PASS, Status.DEVIATION, Status.FAIL), (v.requirement, v.message)
            assert "DISC-05" not in v.message
    d = disc05(ctx)
    assert d.status is Status.PASS, d.message
