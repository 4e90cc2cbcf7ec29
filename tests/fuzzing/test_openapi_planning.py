"""The kit's OpenAPI document and scan planning: the document describes every endpoint the reference catalog
advertises, its planning schemas accept the reference's real answers and reject deviating ones (SCHEMA-01,
both the recorded-response validation of ctk.openapi and GEN-01's schemathesis checks), GEN-01 drives the
planning mutations with a replay each, and the upstream document's ambiguous primitive value is normalised."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml

from ctk.checks.context import CheckContext, CheckOptions
from ctk.core.verdicts import Status
from ctk.fuzzing import GenOptions, run_openapi_checks
from ctk.client.transport import CatalogClient, table_path
from ctk.catalog import Catalog, append_file
from ctk.core.exchange import Exchange
from ctk.client.keys import new_key
from ctk.openapi import Spec, default_spec_path, load_spec, normalize_primitive_value
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.client.config import TargetConfig

from upstream import UPSTREAM_SPEC  # ../shared beside the checkout (tests/upstream.py)

UPSTREAM = UPSTREAM_SPEC
PLANNING = ("planTableScan", "cancelPlanning", "fetchScanTasks")
T = "/v1/namespaces/a/tables/t"
DATA_FILE = {"content": "data", "file-path": "file:///w/a/t/data/f.parquet", "file-format": "parquet", "spec-id": 0,
             "partition": [1, None], "file-size-in-bytes": 912, "record-count": 2,
             "column-sizes": {"keys": [1, 2], "values": [112, 78]},
             "lower-bounds": {"keys": [1, 2], "values": [1, "r1"]}, "upper-bounds": {"keys": [1, 2], "values": [2.5, True]}}


@pytest.fixture
def reference(tmp_path):
    """reference(planning_mode="sync", **settings) -> CheckContext on a fresh reference catalog (control API on)."""
    started: list = []

    def make(planning_mode: str = "sync", **kw) -> CheckContext:
        s = ReferenceSettings(warehouse=str(tmp_path / f"wh{len(started)}"), control_api=True, **kw)
        s.planning_mode = planning_mode
        srv = ReferenceServer(s)
        srv.start()
        client = CatalogClient(TargetConfig(srv.url, timeout=20.0))
        started.extend([srv, client])
        return CheckContext.create(client, options=CheckOptions(max_wait=5.0))

    yield make
    for thing in reversed(started):
        (thing.close if isinstance(thing, CatalogClient) else thing.stop)()


def by(verdicts, req):
    return {v.endpoint: v for v in verdicts if v.requirement == req}


def check(spec: Spec, method: str, path: str, status: int, body=None) -> list[str]:
    return spec.validate(Exchange(method, f"http://127.0.0.1:1{path}", status=status,
                                  response_body="" if body is None else json.dumps(body)))


def _shape(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", template)


# ----------------------------------------------------------------------------------------- the document is complete

def test_every_advertised_endpoint_is_described(reference):
    """Every `endpoints` entry of the reference's /v1/config is an operation of ctk-openapi.yaml (so the document
    cannot fall behind the catalog again), with an operationId and a declared success status."""
    ctx = reference()
    advertised = ctx.client.request("GET", "/v1/config").json()["endpoints"]
    assert len(advertised) >= 30
    doc = yaml.safe_load(default_spec_path().read_text(encoding="utf-8"))
    described = {(m.upper(), _shape(t)): op for t, item in doc["paths"].items() for m, op in item.items()
                 if isinstance(op, dict) and m in ("get", "head", "post", "put", "delete", "patch")}
    missing, incomplete = [], []
    for entry in advertised:
        method, template = entry.split(" ", 1)
        op = described.get((method, _shape(template)))
        if op is None:
            missing.append(entry)
        elif not op.get("operationId") or not any(str(k).startswith("2") for k in op.get("responses") or {}):
            incomplete.append(entry)
    assert not missing, f"advertised by the reference, not in {default_spec_path().name}: {missing}"
    assert not incomplete, incomplete


def test_planning_mutations_take_an_idempotency_key_and_declare_the_key_errors():
    doc = load_spec().document
    for op_id in PLANNING:
        op = load_spec().operation_by_id(op_id)
        raw = doc["paths"][op.template][op.method.lower()]
        assert {"$ref": "#/components/parameters/idempotency-key"} in raw["parameters"], op_id
        assert {"400", "404", "409", "422", "5XX"} <= set(op.responses), op_id
    assert "406" in load_spec().operation_by_id("planTableScan").responses     # equality deletes


# ----------------------------------------------------------------------------------------- schemas vs. real answers

def test_reference_planning_answers_conform(reference):
    """Every planning answer of the reference (sync and async, inline and plan tasks, stats, partitions,
    errors) validates against the kit's document."""
    spec = load_spec()
    for mode, task_size in (("sync", 1), ("async", 0)):
        ctx = reference(mode, plan_task_size=task_size)
        c, cat, ns = ctx.client, Catalog(ctx.client), ("p",)
        cat.create_namespace(ns)
        body = {"name": "tp", "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "type": "long", "required": False},
            {"id": 2, "name": "data", "type": "string", "required": False}]},
            "partition-spec": {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "id",
                                                         "transform": "identity"}]}}
        assert c.request("POST", "namespaces/p/tables", json=body).status == 200
        append_file(c, ns, "tp", [1, 2])
        path = table_path(ns, "tp")
        mark = len(c.exchanges)
        plan = c.request("POST", path + "/plan", json={"stats-fields": ["id", "data"]}, idempotency_key=new_key())
        pid = plan.json()["plan-id"]
        fetched = c.request("GET", f"{path}/plan/{pid}").json()
        assert fetched["status"] == "completed"
        for token in fetched.get("plan-tasks") or []:
            c.request("POST", path + "/tasks", json={"plan-task": token}, idempotency_key=new_key())
        c.request("POST", path + "/tasks", json={"plan-task": "nope"}, idempotency_key=new_key())     # 404
        c.request("POST", path + "/tasks", json={}, idempotency_key=new_key())                         # 400
        c.request("POST", path + "/plan", json={"filter": {"type": "bogus"}}, idempotency_key=new_key())  # 400
        c.request("POST", table_path(ns, "tx") + "/plan", json={}, idempotency_key=new_key())          # 404
        c.request("DELETE", f"{path}/plan/{pid}", idempotency_key=new_key())                           # 204
        c.request("GET", f"{path}/plan/{pid}")                                                          # cancelled
        c.request("GET", f"{path}/plan/nope")                                                           # 404
        c.request("GET", path + "/credentials")
        c.request("GET", "namespaces/p/functions")
        c.request("GET", "namespaces/p/functions/f")                                                    # 404
        exchanges = c.exchanges_since(mark)
        bodies = " ".join(e.response_body or "" for e in exchanges)
        assert '"partition":[1]' in bodies and '"lower-bounds"' in bodies, bodies[:2000]
        assert '"status":"cancelled"' in bodies
        if mode == "async":
            assert '"status":"submitted"' in plan.response_body
        problems = [p for e in exchanges for p in spec.validate(e)]
        assert problems == [], problems
        assert all(spec.operation(e.method, e.url) is not None for e in exchanges)


# ----------------------------------------------------------------------------------------- deviating answers

DEVIATING = [
    ("POST", T + "/plan", 200, {"status": "completed", "file-scan-tasks": []}, "'plan-id' is a required property"),
    ("POST", T + "/plan", 200, {"status": "submitted"}, "'plan-id' is a required property"),
    ("POST", T + "/plan", 200, {"status": "done", "plan-id": "x"}, "status 'done' is not one of"),
    ("POST", T + "/plan", 200, {"status": "cancelled", "plan-id": "x"}, "status 'cancelled' is not one of"),
    ("POST", T + "/plan", 200, {"plan-id": "x", "file-scan-tasks": []}, "'status' is a required property"),
    ("POST", T + "/plan", 200, {"status": "submitted", "plan-id": "x", "plan-tasks": ["a"]}, "should not be valid"),
    ("POST", T + "/plan", 200, {"status": "failed", "plan-id": "x"}, "'error' is a required property"),
    ("POST", T + "/plan", 409, {"error": {"message": "busy", "type": "CommitFailedException", "code": 409,
                                          "subtype": "other"}}, "'request_in_progress' was expected"),
    ("GET", T + "/plan/x", 200, {"status": "running"}, "status 'running' is not one of"),
    ("GET", T + "/plan/x", 200, {"status": "completed", "file-scan-tasks": [{"data-file": {
        k: v for k, v in DATA_FILE.items() if k != "file-path"}}]}, "'file-path' is a required property"),
    ("POST", T + "/tasks", 200, {"file-scan-tasks": [{"data-file": {**DATA_FILE, "partition": [{"v": 1}]}}]},
     "partition/0"),
    ("POST", T + "/tasks", 200, {"file-scan-tasks": [{"data-file": DATA_FILE}],
                                 "delete-files": [{**DATA_FILE, "content": "equality-deletes"}]},
     "'equality-ids' is a required property"),
    ("POST", T + "/tasks", 200, {"file-scan-tasks": [{"data-file": {**DATA_FILE, "content": "position-deletes"}}]},
     "'data' was expected"),
    ("POST", T + "/tasks", 201, {"file-scan-tasks": []}, "status 201 is not declared"),
    ("DELETE", T + "/plan/x", 200, {}, "status 200 is not declared"),
    ("GET", T + "/credentials", 200, {"storage-credentials": [{"config": {}}]}, "'prefix' is a required property"),
]


@pytest.mark.parametrize("method,path,status,body,expected", DEVIATING,
                         ids=[f"{m} {p.rsplit('/t/', 1)[-1]} {s} {e[:30]}" for m, p, s, _b, e in DEVIATING])
def test_schema01_rejects_a_deviating_planning_answer(method, path, status, body, expected):
    problems = check(load_spec(), method, path, status, body)
    assert problems and expected in " ".join(problems), problems


def test_schema01_accepts_the_shapes_it_should():
    spec = load_spec()
    task = {"data-file": DATA_FILE, "delete-file-references": [0]}
    pos = {**DATA_FILE, "content": "position-deletes", "content-offset": 4, "content-size-in-bytes": 10}
    eq = {**DATA_FILE, "content": "equality-deletes", "equality-ids": [1]}
    for method, path, status, body in [
            ("POST", T + "/plan", 200, {"status": "completed", "plan-id": "x", "file-scan-tasks": [task],
                                        "delete-files": [pos, eq], "plan-tasks": ["x-0"]}),
            ("POST", T + "/plan", 200, {"status": "submitted", "plan-id": "x"}),
            ("POST", T + "/plan", 200, {"status": "failed", "error": {"message": "m", "type": "T", "code": 500}}),
            ("POST", T + "/plan", 406, {"error": {"message": "m", "type": "UnsupportedOperationException",
                                                  "code": 406}}),
            ("POST", T + "/plan", 409, {"error": {"message": "m", "type": "RequestInProgressException", "code": 409,
                                                  "subtype": "request_in_progress"}}),
            # the merged spec has no subtype: a plain 409 for an in-flight duplicate is an allowed path
            ("POST", T + "/plan", 409, {"error": {"message": "m", "type": "CommitFailedException", "code": 409}}),
            ("POST", T + "/plan", 422, {"error": {"message": "m", "type": "IdempotencyKeyConflict", "code": 422}}),
            ("POST", T + "/plan", 503, {"error": {"message": "m", "type": "IdempotencyReplayFailed", "code": 503,
                                                  "subtype": "idempotency_replay_failed"}}),
            ("GET", T + "/plan/x", 200, {"status": "completed", "file-scan-tasks": []}),
            ("GET", T + "/plan/x", 200, {"status": "submitted"}),
            ("GET", T + "/plan/x", 200, {"status": "cancelled"}),
            ("DELETE", T + "/plan/x", 204, None),
            ("POST", T + "/tasks", 200, {"file-scan-tasks": [task], "delete-files": [pos]})]:
        assert check(spec, method, path, status, body) == [], (method, path, status, body)


def _deviate(monkeypatch, change):
    """Make the in-process reference answer planTableScan with `change(body)` (the answer is also what it
    stores and replays for the key)."""
    from ctk.reference import planning

    real = planning.planned_response

    def patched(conn, plan):
        result = real(conn, plan)
        result.body = change(dict(result.body))
        return result

    monkeypatch.setattr(planning, "planned_response", patched)


@pytest.mark.parametrize("change,expected", [
    (lambda b: {k: v for k, v in b.items() if k != "plan-id"}, "plan-id"),
    (lambda b: {**b, "status": "done"}, "done"),
], ids=["no-plan-id", "wrong-status"])
def test_gen01_schema01_flags_a_deviating_plan_answer(reference, monkeypatch, change, expected):
    """End to end: the reference answers planTableScan without a plan-id / with a status the protocol does not
    have; GEN-01's SCHEMA-01 verdict for planTableScan deviates and names it, GEN-01 itself (replay) passes."""
    ctx = reference()
    _deviate(monkeypatch, change)
    vs = run_openapi_checks(ctx, examples=3, operations=("planTableScan",))
    schema, gen = by(vs, "SCHEMA-01")["planTableScan"], by(vs, "GEN-01")["planTableScan"]
    assert schema.status is Status.DEVIATION, schema.message
    assert expected in schema.message and "/plan -> 200" in schema.message, schema.message
    assert gen.status is Status.PASS, gen.message
    # the recorded-response validation (test_schema_recorded) flags the same answers
    spec = load_spec()
    flagged = [p for e in ctx.client.exchanges if e.method == "POST" and e.url.endswith("/plan") and e.status == 200
               for p in spec.validate(e)]
    assert flagged and all("planTableScan" in p for p in flagged), flagged


# ----------------------------------------------------------------------------------------- GEN-01 over planning

@pytest.mark.parametrize("mode", ["sync", "async"])
def test_gen01_drives_the_planning_mutations(reference, mode):
    ctx = reference(mode)
    run_ns = ctx.namespace[0]
    vs = run_openapi_checks(ctx, examples=4, operations=PLANNING)
    gen, schema = by(vs, "GEN-01"), by(vs, "SCHEMA-01")
    assert set(gen) == set(schema) == set(PLANNING), [(v.endpoint, v.status, v.message[:300]) for v in vs]
    for op in PLANNING:
        assert gen[op].status is Status.PASS and schema[op].status is Status.PASS, (gen[op].message,
                                                                                    schema[op].message)
        assert gen[op].details["observe"] == "counters"
        # each reaches success, not only 4xx: the arena's tables, plans and plan tasks are real
        assert any(s.startswith("2") for s in gen[op].details["statuses"]), (op, gen[op].details["statuses"])
    planned = [e for e in ctx.client.exchanges if e.method == "POST" and e.url.endswith("/plan")
               and (e.label or "").startswith("generated") and e.status == 200]
    assert any('"plan-id"' in (e.response_body or "") for e in planned)
    # the shared planning arena is gone afterwards
    assert Catalog(ctx.client).list_namespaces((run_ns,)) == []


def test_gen01_planning_without_counters_and_under_no_replay(reference):
    """Observed through plan state instead of execution counters, the planning mutations pass; a catalog that
    re-executes duplicates makes a second plan for the replay, which GEN-01 catches."""
    ctx = reference()
    vs = run_openapi_checks(ctx, options=GenOptions(examples=3, operations=PLANNING, observe="state"))
    gen = by(vs, "GEN-01")
    assert set(gen) == set(PLANNING)
    assert all(v.status is Status.PASS and v.details["observe"] == "state" for v in gen.values()), \
        [(v.endpoint, v.message[:300]) for v in gen.values()]
    bad = reference(deviation="no-replay")
    v = by(run_openapi_checks(bad, examples=3, operations=("planTableScan",)), "GEN-01")["planTableScan"]
    assert v.status is Status.FAIL and v.classification in ("replay-body", "re-executed"), (v.classification, v.message)


# ----------------------------------------------------------------------------------------- upstream primitive value

def _doc(alternatives: list, extra: dict | None = None) -> dict:
    schemas = {"IntV": {"type": "integer"}, "LongV": {"type": "integer", "format": "int64"},
               "DoubleV": {"type": "number"}, "StrV": {"type": "string"}, "DecV": {"type": "string"},
               "BoolV": {"type": "boolean"}, **(extra or {})}
    schemas["PrimitiveTypeValue"] = {"oneOf": alternatives}
    return {"openapi": "3.1.0", "paths": {}, "components": {"schemas": schemas}}


def test_primitive_value_normalisation_is_narrow():
    ref = lambda n: {"$ref": f"#/components/schemas/{n}"}  # noqa: E731
    doc = _doc([ref("BoolV"), ref("IntV"), ref("LongV"), ref("DoubleV"), ref("StrV"), ref("DecV")])
    assert normalize_primitive_value(doc) and "anyOf" in doc["components"]["schemas"]["PrimitiveTypeValue"]
    for untouched in (_doc([ref("BoolV"), ref("StrV")]),                             # disjoint: oneOf is right
                      _doc([ref("IntV"), ref("LongV"), {"type": "string"}]),            # not all $refs
                      _doc([ref("IntV"), ref("Obj")], {"Obj": {"type": "object"}}),     # not all scalars
                      _doc([ref("IntV"), ref("Mix")], {"Mix": {"anyOf": [{"type": "integer"}]}})):
        before = copy.deepcopy(untouched)
        assert normalize_primitive_value(untouched) == [] and untouched == before
    plain = {"openapi": "3.1.0", "paths": {}}
    assert normalize_primitive_value(plain) == []


@pytest.mark.skipif(not UPSTREAM.is_file(), reason=f"upstream spec not present at {UPSTREAM}")
def test_upstream_bounds_and_partitions_validate_after_normalisation():
    raw = yaml.safe_load(UPSTREAM.read_text(encoding="utf-8"))
    assert "oneOf" in raw["components"]["schemas"]["PrimitiveTypeValue"]       # the quirk is still there
    answer = {"file-scan-tasks": [{"data-file": {**DATA_FILE, "partition": [1, "r1"]}}]}
    spec = load_spec(UPSTREAM)
    assert any("PrimitiveTypeValue" in n for n in spec.normalized)
    assert check(spec, "POST", T + "/tasks", 200, answer) == []
    # read literally, every integer or string value is "valid under more than one" alternative
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    reg = Registry().with_resource("urn:u", Resource.from_contents(raw, default_specification=DRAFT202012))
    v = Draft202012Validator({"$ref": "urn:u#/components/schemas/PrimitiveTypeValue"}, registry=reg)
    assert not v.is_valid(1) and not v.is_valid("r1") and v.is_valid(True)
    # what the normalisation leaves alone and the report names: no null partition values upstream, and a
    # `submitted` planTableScan answer matches two alternatives of its oneOf
    assert check(spec, "POST", T + "/tasks", 200, {"file-scan-tasks": [{"data-file": DATA_FILE}]})
    [p] = check(spec, "POST", T + "/plan", 200, {"status": "submitted", "plan-id": "x"})
    assert "valid under each of" in p
