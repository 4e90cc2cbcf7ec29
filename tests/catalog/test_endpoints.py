"""The endpoint catalog: agrees with the merged upstream OpenAPI spec, and its state counting sees (re-)executions."""

from __future__ import annotations

import pytest
import yaml

from ctk.catalog import ENDPOINTS, Catalog, PrerequisiteError, body_identity, get_endpoint
from ctk.core.exchange import Exchange
from ctk.client.discovery import Discovery

from upstream import UPSTREAM_SPEC  # ../shared beside the checkout (tests/upstream.py)

SPEC = UPSTREAM_SPEC


@pytest.fixture(scope="module")
def spec_ops():
    if not SPEC.exists():
        pytest.skip(f"{SPEC} not available")
    doc = yaml.safe_load(SPEC.read_text())
    ops = {}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and "operationId" in op:
                params = [p.get("$ref", "") for p in op.get("parameters") or []]
                ops[op["operationId"]] = (method.upper(), path,
                                          any(p.endswith("/idempotency-key") for p in params))
    return ops


def test_catalog_lists_every_mutation():
    assert set(ENDPOINTS) == {
        "createNamespace", "dropNamespace", "updateProperties", "createTable", "registerTable", "updateTable",
        "dropTable", "unregisterTable", "renameTable", "commitTransaction", "createView", "replaceView",
        "dropView", "renameView", "registerView", "planTableScan", "cancelPlanning", "fetchScanTasks"}


def test_every_mutation_of_the_spec_is_in_the_catalog(spec_ops):
    """Every operation the spec marks with the Idempotency-Key header has an Endpoint."""
    assert {op for op, (_m, _p, header) in spec_ops.items() if header} <= set(ENDPOINTS)


@pytest.mark.parametrize("op", sorted(ENDPOINTS))
def test_method_path_and_header_match_the_spec(spec_ops, op):
    method, path, has_header = spec_ops[op]
    ep = ENDPOINTS[op]
    assert ep.entry == f"{method} {path}"
    assert ep.spec_has_header == has_header
    assert ep.spec_has_header == (op != "createView")


def test_gating_by_advertised_endpoints():
    no_list = Discovery.from_config({"idempotency-key-lifetime": "PT1M"})
    assert get_endpoint("createTable").supported(no_list)[0]
    ok, why = get_endpoint("createView").supported(no_list)
    assert not ok and "default endpoint set" in why
    listed = Discovery.from_config({"endpoints": ["POST /v1/{prefix}/namespaces/{namespace}/views",
                                                  "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
                                                  "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}"]})
    assert get_endpoint("createView").supported(listed)[0]
    ok, why = get_endpoint("createTable").supported(listed)
    assert not ok and "POST /v1/{prefix}/namespaces/{namespace}/tables" in why


def test_body_identity():
    def ex(status, body):
        return Exchange("POST", "u", status=status, response_body=body)

    t1 = ex(200, '{"metadata-location":"a","metadata":{"table-uuid":"u1","properties":{}}}')
    t1b = ex(200, '{"metadata-location":"b","metadata":{"table-uuid":"u1","properties":{"x":"y"}}}')
    t2 = ex(200, '{"metadata-location":"a","metadata":{"table-uuid":"u2"}}')
    assert body_identity(t1) == body_identity(t1b) != body_identity(t2)
    assert body_identity(ex(204, None)) != body_identity(ex(200, None))
    assert body_identity(ex(409, '{"error":{"type":"AlreadyExistsException","code":409}}')) != \
        body_identity(ex(409, '{"error":{"type":"RequestInProgressException","code":409}}'))
    assert body_identity(ex(200, '{"replayed":true}')) != body_identity(t1)


@pytest.mark.parametrize("op", sorted(ENDPOINTS))
def test_case_counts_executions_from_state(ctx, op):
    """request -> 1 execution; interfere then execute again (no key) -> visible as 1 more; conflicting -> the
    expected 4xx, and after clear_conflict() the same request executes."""
    case = get_endpoint(op).prepare(ctx)
    c = ctx.client
    before = case.observe()
    first = case.send(c, label="plain request")
    assert first.status in case.endpoint.success, first.render()
    mid = case.observe()
    assert case.executions(before, mid) == 1
    assert case.executions(mid, case.observe()) == 0          # nothing happened: nothing counted
    case.interfere()
    base = case.observe()
    assert case.executions(base, case.observe()) == 0
    if case.reexecutable:
        again = case.send(c, label="re-execution after interference")
        assert again.status in case.endpoint.success, again.render()
        assert case.executions(base, case.observe()) == 1          # a re-execution is visible
    else:                                                           # the effect cannot be undone (a cancelled plan)
        assert case.blind or case.send(c, label="again").status not in case.endpoint.success
    if case.alternative is not None:
        case.interfere()
        base = case.observe()
        alt = case.send(c, case.alternative, label="alternative")
        assert alt.status in case.endpoint.success, alt.render()
        assert case.alt_executions(base, case.observe()) == 1
    conflict = case.conflicting
    if conflict is None:
        return
    ex = case.send(c, conflict.request, label="conflicting")
    assert ex.status in conflict.expect, ex.render()
    case.clear_conflict()
    assert not case.conflict_executed()
    ex = case.send(c, conflict.request, label="conflicting after clear")
    assert ex.status in case.endpoint.success, ex.render()
    assert case.conflict_executed()


def test_prerequisite_error_carries_the_exchange(ctx):
    cat = Catalog(ctx.client)
    with pytest.raises(PrerequisiteError) as info:
        cat.create_table(("no_such_ns_for_ctk",), "t")
    assert info.value.exchange is not None and info.value.exchange.status == 404
