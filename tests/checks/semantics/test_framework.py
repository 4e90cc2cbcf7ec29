"""The catalog-semantics framework: capabilities, the registry, the harness's read-back setup steps and the
baseline gate that keeps retry verdicts off a broken plain operation."""

from __future__ import annotations

import pytest

from ctk.catalog.capabilities import Capabilities, Capability, Known, parse_declared
from ctk.checks.semantics import baseline as baseline_mod
from ctk.checks.semantics.harness import SemRun, SetupBroken, run_semantic
from ctk.checks.semantics.registry import SEMANTIC_CHECKS, SemanticCheck, semantic
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Status
from ctk.reporting.capabilities import capability_section, junit_pairs, terminal_lines


def test_declared_capabilities_parse_and_bad_ones_are_named():
    assert parse_declared(["views=no,pagination=yes", "format-v3=on"]) == {
        Capability.VIEWS: False, Capability.PAGINATION: True, Capability.FORMAT_V3: True}
    with pytest.raises(ValueError, match="unknown capability 'bogus'.*namespace-properties"):
        parse_declared(["bogus=yes"])
    with pytest.raises(ValueError, match="NAME=yes or NAME=no"):
        parse_declared(["views"])


def test_a_declaration_wins_over_a_probe_and_a_probe_runs_once():
    calls = []

    def probe():
        calls.append(1)
        return Known(True, "probe", "seen")

    caps = Capabilities(declared={Capability.VIEWS: False})
    assert caps.get(Capability.VIEWS, probe).supported is False and not calls
    assert caps.get(Capability.PAGINATION, probe).supported is True
    assert caps.get(Capability.PAGINATION, probe).source == "probe" and len(calls) == 1
    assert caps.get(Capability.STORAGE).supported is None      # never learnt: unknown, not "no"


def test_the_registry_refuses_unknown_names():
    with pytest.raises(ValueError, match="unknown requirement"):
        semantic("NOPE-9", "createNamespace")(lambda t: None)
    with pytest.raises(ValueError, match="not a catalog-semantics area"):
        semantic("REPLAY-01", "createNamespace")(lambda t: None)


def test_the_rck_map_names_only_checks_and_tests_that_exist(monkeypatch):
    from ctk.checks.semantics import registry
    from ctk.core import rck

    assert registry.rck_problems() == []
    monkeypatch.setattr(registry, "COVERS", {**rck.COVERS, "no-such-check": ("CatalogTests.testLoadTable",),
                                             "create-table": ("CatalogTests.testNothing",)})
    assert registry.rck_problems() == ["COVERS['no-such-check']: no semantic check of that name",
                                       "COVERS['create-table']: 'CatalogTests.testNothing' is not a compatibility-kit "
                                       "test"]


def test_every_namespace_check_passes_on_the_reference(ctx):
    checks = [c for c in SEMANTIC_CHECKS.values() if c.area == "namespaces"]
    assert len(checks) >= 9
    verdicts = [v for c in checks for v in run_semantic(ctx, c)]
    assert [(v.requirement, v.status.value, v.message) for v in verdicts if v.status is not Status.PASS] == []


def _fake(fn, operation="createNamespace", baseline=True) -> SemanticCheck:
    return SemanticCheck("fake", "NS-01", Behaviour.CATALOG_NAMESPACES, operation, (), (), baseline, fn)


def test_a_setup_step_acknowledged_without_its_effect_makes_the_check_inconclusive(ctx):
    def check(t: SemRun):
        raise SetupBroken("TBL-01", "createTable answered 200, but loading it answered 404")

    (v,) = run_semantic(ctx, _fake(check))
    assert v.status is Status.INCONCLUSIVE and v.details["blocked_by"] == "TBL-01"
    assert "TBL-01" in v.message


def test_a_broken_baseline_gates_the_retry_checks_of_its_operation(ctx, monkeypatch):
    from ctk.catalog import ENDPOINTS
    from ctk.checks.idempotency import ENDPOINT_CHECKS

    replay = dict(ENDPOINT_CHECKS)["finalized-duplicate"]
    before = [v for v in replay(ctx, ENDPOINTS["createNamespace"]) if v.requirement == "REPLAY-01"]
    assert before and all(v.status is Status.PASS for v in before)

    def broken(t: SemRun):
        return t.broken("the namespace loads back", "it answered 404")

    monkeypatch.setattr(baseline_mod, "baselines", lambda op: [_fake(broken)] if op == "createNamespace" else [])
    monkeypatch.setattr(baseline_mod, "_results", {})
    after = replay(ctx, ENDPOINTS["createNamespace"])
    assert after and all(v.status is Status.INCONCLUSIVE and v.details.get("blocked_by") == "NS-01" for v in after)
    assert "plain createNamespace" in after[0].message
    other = replay(ctx, ENDPOINTS["dropNamespace"])          # another operation is not gated
    assert all(v.status is Status.PASS for v in other if v.requirement == "REPLAY-01")


def test_the_capability_section_merges_results_and_names_each_source():
    results = [
        {"requirement": "NS-03", "status": "unsupported",
         "details": {"capabilities": {"namespace-properties": {"supported": False, "source": "probe", "why": "x"}}}},
        {"requirement": "NS-01", "status": "pass", "details": {}},
        {"requirement": "TBL-08", "status": "fail", "details": {}},
        {"requirement": "REPLAY-01", "status": "fail", "details": {}},
    ]
    section = capability_section(results)
    assert section["areas"]["namespaces"]["pass"] == 1 and section["areas"]["tables"]["fail"] == 1
    assert "replay" not in section["areas"]
    lines = terminal_lines(section)
    assert lines[0] == "catalog semantics: namespaces pass, tables fail"
    assert "namespace-properties no (probe)" in lines[1]
    assert ("ctk.area.tables", "fail") in junit_pairs(section)


@pytest.mark.parametrize("method,path,reads", [
    ("GET", "/v1/p/namespaces/a%1Fb/tables/t", True),        # loadTable: NoSuchNamespace vs NoSuchTable by type
    ("DELETE", "/v1/namespaces/a/views/v", True),
    ("POST", "/v1/namespaces/a/views", True),                 # createView (view error handler)
    ("POST", "/v1/tables/rename", True),
    ("POST", "/v1/namespaces/a/register", True),
    ("POST", "/v1/namespaces/a/tables", True),                # createTable (tableErrorHandler reads the type)
    ("GET", "/v1/namespaces/a/views", False),                 # listViews (namespaceErrorHandler)
    ("POST", "/v1/namespaces/a/tables/t", False),             # a commit: 404 is no such table
    ("GET", "/v1/namespaces/a", False),                       # namespace operations: the status decides
    ("GET", "/v1/namespaces/a/tables", False),
])
def test_the_error_type_is_judged_only_where_a_client_reads_it(method, path, reads):
    from ctk.checks.semantics.harness import client_reads_type
    from ctk.core.exchange import Exchange

    ex = Exchange(method, f"http://127.0.0.1:1{path}", status=404, response_body='{"error": {"type": "NotFound"}}')
    assert client_reads_type(ex) is reads
    assert client_reads_type(Exchange(method, f"http://127.0.0.1:1{path}", status=409)) is False


@pytest.mark.parametrize("path,kind,raised", [
    ("/v1/namespaces/a/tables/t", "NotFoundError", "NoSuchTableException"),     # lakana's type: a client reads it
    ("/v1/namespaces/a/tables/t", "NoSuchTableException", "NoSuchTableException"),   # as no such table
    ("/v1/namespaces/a/tables/t", "NoSuchNamespaceException", "NoSuchNamespaceException"),
    ("/v1/namespaces/a/tables/t", "NotFoundException", "NotFoundException"),
    ("/v1/namespaces/a/views/v", "NotFoundException", "NoSuchViewException"),
    ("/v1/namespaces/a/views/v", "NoSuchNamespaceException", "NoSuchNamespaceException"),
])
def test_a_404_is_judged_by_the_exception_a_java_client_raises_for_it(path, kind, raised):
    from ctk.checks.semantics.harness import client_exception
    from ctk.core.exchange import Exchange

    ex = Exchange("GET", f"http://127.0.0.1:1{path}", status=404, response_body='{"error": {"type": "%s"}}' % kind)
    assert client_exception(ex) == raised


def test_an_operation_the_catalog_does_not_route_is_not_judged(ctx, monkeypatch):
    """lakana answers registerTable with FastAPI's 404 {"detail": "Not Found"} and lists no endpoints: the check's
    every request to the operation answered as by a router that does not know it. The spec's default set (no
    endpoints list) claims registerTable, so the check is not judged but rests on DISC-05 (advertised but not
    served); an operation the catalog does not claim (registerView, served only by --ctk-capability views=yes) is
    not applicable."""
    from ctk.catalog.capabilities import Capability
    from ctk.core.exchange import Exchange

    monkeypatch.setattr(ctx.discovery, "endpoints", None)

    def check(t: SemRun):
        t.extra.append(Exchange("POST", "http://127.0.0.1:1/v1/namespaces/a/register", status=404,
                                response_body='{"detail": "Not Found"}'))
        return t.broken("a registered table loads", "404")

    (v,) = run_semantic(ctx, _fake(check, operation="registerTable"))
    assert v.status is Status.INCONCLUSIVE and v.details["blocked_by"] == "DISC-05", v.message
    assert v.message.startswith("advertised but not served (DISC-05)") and "default endpoint set" in v.message

    def view(t: SemRun):
        t.extra.append(Exchange("POST", "http://127.0.0.1:1/v1/namespaces/a/register-view", status=404,
                                response_body='{"detail": "Not Found"}'))
        return t.broken("a registered view loads", "404")

    monkeypatch.setitem(ctx.capabilities.declared, Capability.VIEWS, True)
    (v,) = run_semantic(ctx, _fake(view, operation="registerView"))
    assert v.status is Status.UNSUPPORTED and "not served" in v.message and "DISC-05" not in v.message

    def served(t: SemRun):
        t.extra.append(Exchange("POST", "http://127.0.0.1:1/v1/namespaces/a/register", status=409,
                                response_body='{"error": {"type": "AlreadyExistsException", "code": 409}}'))
        t.extra.append(Exchange("POST", "http://127.0.0.1:1/v1/namespaces/a/register", status=404,
                                response_body='{"detail": "Not Found"}'))
        return t.broken("a registered table loads", "404")

    (v,) = run_semantic(ctx, _fake(served, operation="registerTable"))
    assert v.status is not Status.UNSUPPORTED
