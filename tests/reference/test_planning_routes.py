"""HTTP-level tests of server-side scan planning (planTableScan, fetchPlanningResult, cancelPlanning,
fetchScanTasks), loadCredentials, functions and signRequest of the reference catalog, with real data
appended through pyiceberg; pyiceberg's own REST client planning through it; responses validated against the
upstream OpenAPI document when it is present."""

from __future__ import annotations

import datetime
import re
import uuid

import uuid6

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings

pytestmark = pytest.mark.timeout(120)

from upstream import UPSTREAM_SPEC  # ../shared beside the checkout (tests/upstream.py)

UPSTREAM = UPSTREAM_SPEC
# The spec's PrimitiveTypeValue is a oneOf of types that overlap (a JSON number is an IntegerTypeValue and a
# LongTypeValue and a DoubleTypeValue...), so no partition value or bound can satisfy it under strict JSON
# Schema; and {"status": "submitted", "plan-id": ...} is both an AsyncPlanningResult and an EmptyPlanningResult
# unless the discriminator is honoured (jsonschema ignores it). Those problems are the document's.
AMBIGUOUS = re.compile(r"/(partition|lower-bounds/values|upper-bounds/values)/\d+: .* is valid under each of "
                       r"|\(planTableScan\): \(body\): \{'status': 'submitted'.* is valid under each of "
                       r"\{'\$ref': '#/components/schemas/EmptyPlanningResult'\}, "
                       r"\{'\$ref': '#/components/schemas/AsyncPlanningResult'\}$")
T = "namespaces/db/tables/events"


class Served:
    def __init__(self, tmp_path, **settings):
        settings.setdefault("control_api", True)
        self.server = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "wh"), **settings))
        self.url = self.server.start()
        self.http = httpx.Client(base_url=self.url + "/v1/", timeout=30)
        self.catalog = load_catalog("ref", type="rest", uri=self.url)
        self.responses: list[httpx.Response] = []

    def req(self, method, path, json=None, key=None, content=None):
        headers = {"Idempotency-Key": key} if key else {}
        r = self.http.request(method, path, json=json, content=content, headers=headers)
        self.responses.append(r)
        return r

    def plan(self, body=None, key=None, table=T):
        return self.req("POST", f"{table}/plan", json=body if body is not None else {}, key=key)

    def executions(self, op):
        return self.http.get(self.url + "/_ctk/executions").json()["by_operation"].get(op, 0)

    def close(self):
        self.http.close()
        self.server.stop()


def rows(ids, names=None, day=None):
    cols = {"id": pa.array(ids, pa.int64()),
            "name": pa.array(names if names is not None else [f"r{i}" for i in ids], pa.string())}
    if day is not None:
        cols["day"] = pa.array([day] * len(ids), pa.date32())
    return pa.table(cols)


@pytest.fixture
def served(tmp_path):
    s = Served(tmp_path)
    yield s
    s.close()


def make_events(s, batches=((1, 2), (11, 12), (21, 22))):
    """db.events with one data file per batch of ids (names r<id>; 'x' for id 22 is null)."""
    s.catalog.create_namespace("db")
    table = s.catalog.create_table(("db", "events"), schema=rows([0]).schema)
    for ids in batches:
        names = [None if i == 22 else f"r{i}" for i in ids]
        table.append(rows(list(ids), names))
    return s.catalog.load_table(("db", "events"))


def err(r, status, type_):
    assert r.status_code == status, r.text
    e = r.json()["error"]
    assert e["type"] == type_ and e["code"] == status and e["message"], e
    return e


def all_tasks(s, body, key=None, table=T):
    """Plan, then fetch every plan task: (plan response, every FileScanTask, every ScanTasks document)."""
    r = s.plan(body, key=key, table=table)
    assert r.status_code == 200, r.text
    doc = r.json()
    if doc["status"] == "submitted":
        doc = s.req("GET", f"{table}/plan/{doc['plan-id']}").json()
    assert doc["status"] == "completed", doc
    parts = [doc]
    for token in doc.get("plan-tasks", []):
        t = s.req("POST", f"{table}/tasks", json={"plan-task": token})
        assert t.status_code == 200, t.text
        parts.append(t.json())
    return r.json(), [task for p in parts for task in p.get("file-scan-tasks", [])], parts


def paths(tasks):
    return sorted(t["data-file"]["file-path"] for t in tasks)


def local_paths(table, row_filter=None):
    scan = table.scan() if row_filter is None else table.scan(row_filter=row_filter)
    return sorted(t.file.file_path for t in scan.plan_files())


# ---------------------------------------------------------------------------------------------- happy path

def test_plan_sync_lists_every_file_in_plan_tasks(served):
    table = make_events(served)
    first, tasks, parts = all_tasks(served, {})
    assert first["status"] == "completed" and first["plan-id"]
    assert len(first["plan-tasks"]) == 3 and first["file-scan-tasks"] == []   # plan_task_size 1, 3 files
    assert paths(tasks) == local_paths(table) and len(tasks) == 3               # nothing lost, nothing twice
    df = tasks[0]["data-file"]
    assert set(df) >= {"content", "file-path", "file-format", "spec-id", "partition", "file-size-in-bytes",
                       "record-count"}
    assert df["content"] == "data" and df["file-format"] == "parquet" and df["spec-id"] == 0
    assert df["partition"] == [] and df["record-count"] == 2 and df["file-size-in-bytes"] > 0
    assert "lower-bounds" not in df and "column-sizes" not in df                 # no stats-fields asked
    assert all("delete-files" not in p for p in parts)
    assert served.responses[0].headers["content-type"].startswith("application/json")


def test_plan_inline_when_small_enough(tmp_path):
    s = Served(tmp_path, plan_task_size=0)
    try:
        table = make_events(s)
        first, tasks, _ = all_tasks(s, {})
        assert "plan-tasks" not in first and paths(first["file-scan-tasks"]) == local_paths(table)
        s2 = s.plan({"filter": {"type": "eq", "term": "id", "value": 11}})
        assert len(s2.json()["file-scan-tasks"]) == 1
    finally:
        s.close()


def test_empty_table_plans_to_nothing(served):
    served.catalog.create_namespace("db")
    served.catalog.create_table(("db", "events"), schema=rows([0]).schema)
    r = served.plan({})
    assert r.status_code == 200 and r.json()["status"] == "completed" and r.json()["file-scan-tasks"] == []


@pytest.mark.parametrize("flt, ids", [
    (True, {1, 11, 21}),
    (False, set()),
    ({"type": "true"}, {1, 11, 21}),
    ({"type": "gt", "term": "id", "value": 5}, {11, 21}),
    ({"type": "lt-eq", "left": {"type": "reference", "name": "id"}, "right": 2}, {1}),
    ({"type": "gt", "left": 15, "right": {"type": "reference", "name": "id"}}, {1, 11}),        # 15 > id
    ({"type": "eq", "left": {"type": "reference", "id": 1}, "right": {"type": "literal", "value": 12}}, {11}),
    ({"type": "not-eq", "term": "id", "value": 1}, {1, 11, 21}),                              # stats cannot prune
    ({"type": "in", "child": {"type": "reference", "name": "id"}, "values": [2, 22]}, {1, 21}),
    ({"type": "in", "term": "id", "values": {"type": "literals", "values": [12], "data-type": "long"}}, {11}),
    ({"type": "not-in", "term": "id", "values": [1, 2]}, {1, 11, 21}),                        # stats cannot prune
    ({"type": "is-null", "term": "name"}, {21}),
    ({"type": "not-null", "child": {"type": "reference", "name": "name"}}, {1, 11, 21}),
    ({"type": "not", "child": {"type": "lt", "term": "id", "value": 20}}, {21}),
    ({"type": "and", "left": {"type": "gt", "term": "id", "value": 5},
      "right": {"type": "lt", "term": "id", "value": 15}}, {11}),
    ({"type": "or", "left": {"type": "eq", "term": "id", "value": 1},
      "right": {"type": "eq", "term": "id", "value": 21}}, {1, 21}),
    ({"type": "starts-with", "term": "name", "value": "r1"}, {1, 11}),
])
def test_filters_prune_files(served, flt, ids):
    """Files are told apart by their smallest id (one batch per file)."""
    from pyiceberg.conversions import from_bytes
    from pyiceberg.types import LongType

    table = make_events(served)
    _, tasks, _ = all_tasks(served, {"filter": flt})
    low = {t.file.file_path: from_bytes(LongType(), t.file.lower_bounds[1]) for t in table.scan().plan_files()}
    assert len(tasks) == len(ids)
    assert {low[p] for p in paths(tasks)} == ids


def test_case_insensitive_and_select_and_stats(served):
    make_events(served)
    err(served.plan({"filter": {"type": "eq", "term": "ID", "value": 1}}), 400, "BadRequestException")
    _, tasks, _ = all_tasks(served, {"filter": {"type": "eq", "term": "ID", "value": 1}, "case-sensitive": False,
                                     "select": ["id"], "stats-fields": ["id"]})
    assert len(tasks) == 1
    df = tasks[0]["data-file"]
    assert df["lower-bounds"] == {"keys": [1], "values": [1]} and df["upper-bounds"] == {"keys": [1], "values": [2]}
    assert df["value-counts"] == {"keys": [1], "values": [2]} and df["null-value-counts"]["keys"] == [1]


def test_snapshot_and_incremental_scans(served):
    table = make_events(served)
    snaps = [s.snapshot_id for s in table.metadata.snapshots]
    _, first, _ = all_tasks(served, {"snapshot-id": snaps[0]})
    assert len(first) == 1
    _, tasks, _ = all_tasks(served, {"start-snapshot-id": snaps[0], "end-snapshot-id": snaps[2]})
    assert paths(tasks) == sorted(set(local_paths(table)) - set(paths(first)))     # appended after the start
    _, tasks, _ = all_tasks(served, {"start-snapshot-id": snaps[1], "end-snapshot-id": snaps[2],
                                     "filter": {"type": "lt", "term": "id", "value": 5}})
    assert tasks == []
    err(served.plan({"snapshot-id": 12345}), 400, "BadRequestException")
    err(served.plan({"snapshot-id": snaps[0], "start-snapshot-id": snaps[0]}), 400, "BadRequestException")
    err(served.plan({"start-snapshot-id": snaps[0]}), 400, "BadRequestException")


def test_partitioned_table_partition_values(served):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DateType, LongType, NestedField, StringType

    served.catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "name", StringType(), required=False),
                    NestedField(3, "day", DateType(), required=False))
    spec = PartitionSpec(PartitionField(3, 1000, IdentityTransform(), "day"))
    table = served.catalog.create_table(("db", "events"), schema=schema, partition_spec=spec)
    table.append(rows([1, 2], day=datetime.date(2024, 1, 2)))
    table.append(rows([3], day=datetime.date(2024, 3, 4)))
    _, tasks, _ = all_tasks(served, {"filter": {"type": "eq", "term": "day", "value": "2024-03-04"}})
    assert [t["data-file"]["partition"] for t in tasks] == [["2024-03-04"]]
    _, tasks, _ = all_tasks(served, {})
    assert sorted(t["data-file"]["partition"][0] for t in tasks) == ["2024-01-02", "2024-03-04"]


# ---------------------------------------------------------------------------------------------- async, cancel, tasks

def test_async_mode_submits_then_completes_on_fetch(tmp_path):
    s = Served(tmp_path, planning_mode="async")
    try:
        table = make_events(s)
        r = s.plan({"filter": {"type": "gt", "term": "id", "value": 5}})
        assert r.status_code == 200 and r.json()["status"] == "submitted" and set(r.json()) == {"status", "plan-id"}
        pid = r.json()["plan-id"]
        listed = s.http.get(s.url + "/_ctk/plans", params={"namespace": "db", "table": "events"}).json()["plans"]
        assert [(p["plan-id"], p["status"]) for p in listed] == [(pid, "submitted")]
        done = s.req("GET", f"{T}/plan/{pid}").json()
        assert done["status"] == "completed" and "plan-id" not in done and len(done["plan-tasks"]) == 2
        assert s.req("GET", f"{T}/plan/{pid}").json() == done                 # completing happens once
        # a bad filter is refused at submission, not turned into a failed plan later
        err(s.plan({"filter": {"type": "eq", "term": "nope", "value": 1}}), 400, "BadRequestException")
        _, tasks, _ = all_tasks(s, {})
        assert paths(tasks) == local_paths(table)
    finally:
        s.close()


def test_cancel_planning(served):
    make_events(served)
    pid = served.plan({}).json()["plan-id"]
    tokens = served.req("GET", f"{T}/plan/{pid}").json()["plan-tasks"]
    r = served.req("DELETE", f"{T}/plan/{pid}")
    assert r.status_code == 204 and r.content == b""
    assert served.req("GET", f"{T}/plan/{pid}").json() == {"status": "cancelled"}
    err(served.req("POST", f"{T}/tasks", json={"plan-task": tokens[0]}), 404, "NoSuchPlanTaskException")
    assert served.req("DELETE", f"{T}/plan/{pid}").status_code == 204       # cancelling again changes nothing
    err(served.req("DELETE", f"{T}/plan/{uuid.uuid4()}"), 404, "NoSuchPlanIdException")
    err(served.req("GET", f"{T}/plan/{uuid.uuid4()}"), 404, "NoSuchPlanIdException")


def test_fetch_scan_tasks_consumes_the_plan_task(served):
    make_events(served)
    pid = served.plan({}).json()["plan-id"]
    tokens = served.req("GET", f"{T}/plan/{pid}").json()["plan-tasks"]
    first = served.req("POST", f"{T}/tasks", json={"plan-task": tokens[0]})
    assert first.status_code == 200 and len(first.json()["file-scan-tasks"]) == 1
    assert served.req("GET", f"{T}/plan/{pid}").json()["plan-tasks"] == tokens[1:]
    e = err(served.req("POST", f"{T}/tasks", json={"plan-task": tokens[0]}), 404, "NoSuchPlanTaskException")
    assert "already fetched" in e["message"]
    err(served.req("POST", f"{T}/tasks", json={"plan-task": "no-such-task"}), 404, "NoSuchPlanTaskException")
    for body in ({}, {"plan-task": 5}, {"plan-task": ""}):
        err(served.req("POST", f"{T}/tasks", json=body), 400, "BadRequestException")
    err(served.req("POST", f"{T}/tasks", content=b"{not json"), 400, "BadRequestException")


def test_plans_belong_to_their_table(served):
    make_events(served)
    served.catalog.create_table(("db", "other"), schema=rows([0]).schema)
    pid = served.plan({}).json()["plan-id"]
    token = served.req("GET", f"{T}/plan/{pid}").json()["plan-tasks"][0]
    other = "namespaces/db/tables/other"
    err(served.req("GET", f"{other}/plan/{pid}"), 404, "NoSuchPlanIdException")
    err(served.req("DELETE", f"{other}/plan/{pid}"), 404, "NoSuchPlanIdException")
    err(served.req("POST", f"{other}/tasks", json={"plan-task": token}), 404, "NoSuchPlanTaskException")
    # dropped and created again under the same name: another table, the old plan is gone
    served.catalog.drop_table(("db", "events"))
    served.catalog.create_table(("db", "events"), schema=rows([0]).schema)
    err(served.req("GET", f"{T}/plan/{pid}"), 404, "NoSuchPlanIdException")


@pytest.mark.parametrize("method, suffix, body", [
    ("POST", "/plan", {}), ("GET", "/plan/p1", None), ("DELETE", "/plan/p1", None),
    ("POST", "/tasks", {"plan-task": "x"}), ("GET", "/credentials", None),
])
def test_unknown_table_or_namespace_is_404(served, method, suffix, body):
    served.catalog.create_namespace("db")
    err(served.req(method, f"namespaces/db/tables/nope{suffix}", json=body), 404, "NoSuchTableException")
    if suffix != "/credentials":
        err(served.req(method, f"namespaces/nons/tables/nope{suffix}", json=body), 404, "NoSuchNamespaceException")


@pytest.mark.parametrize("body", [
    b"{not json", b"[1]", b'{"snapshot-id": "1"}', b'{"select": "id"}', b'{"case-sensitive": "yes"}',
    b'{"filter": {"type": "eq", "term": "id"}}', b'{"filter": {"type": "like", "term": "id", "value": 1}}',
    b'{"filter": {"type": "eq", "term": {"type": "transform", "transform": "bucket[4]", "term": "id"}, "value": 1}}',
    b'{"filter": {"type": "eq", "left": {"type": "apply", "function": "f", "arguments": []}, "right": 1}}',
    b'{"filter": {"type": "eq", "term": "nope", "value": 1}}',
    b'{"filter": {"type": "eq", "term": "id", "value": "x"}}',
    b'{"filter": {"type": "in", "term": "id", "values": 1}}', b'{"filter": 5}', b'{"select": ["nope"]}',
    b'{"stats-fields": ["nope"]}', b'{"filter": {"type": "eq", "left": {"type": "reference", "id": 99}, "right": 1}}',
])
def test_malformed_plan_requests_are_400(served, body):
    make_events(served, batches=((1,),))
    err(served.req("POST", f"{T}/plan", content=body), 400, "BadRequestException")


# ---------------------------------------------------------------------------------------------- idempotency

def test_plan_replay_same_key_same_plan(served):
    make_events(served)
    key = str(uuid6.uuid7())
    a = served.plan({"select": ["id"]}, key=key)
    b = served.plan({"select": ["id"]}, key=key)
    assert a.status_code == b.status_code == 200 and a.json() == b.json()
    assert b.headers.get("Idempotent-Replayed") == "true"
    assert served.executions("planTableScan") == 1
    other = served.plan({"select": ["name"]}, key=key)
    err(other, 422, "IdempotencyKeyConflict")
    assert served.plan({"select": ["id"]}).json()["plan-id"] != a.json()["plan-id"]   # no key: a new plan
    assert served.executions("planTableScan") == 2


def test_plan_replay_in_async_mode_returns_the_same_plan_id(tmp_path):
    s = Served(tmp_path, planning_mode="async")
    try:
        make_events(s)
        key = str(uuid6.uuid7())
        a, b = s.plan({}, key=key).json(), s.plan({}, key=key).json()
        assert a == b and a["status"] == "submitted"
        listed = s.http.get(s.url + "/_ctk/plans", params={"namespace": "db", "table": "events"}).json()["plans"]
        assert [p["plan-id"] for p in listed] == [a["plan-id"]]
    finally:
        s.close()


def test_fetch_scan_tasks_replay_same_key_same_tasks(served):
    make_events(served)
    pid = served.plan({}).json()["plan-id"]
    tokens = served.req("GET", f"{T}/plan/{pid}").json()["plan-tasks"]
    key = str(uuid6.uuid7())
    a = served.req("POST", f"{T}/tasks", json={"plan-task": tokens[0]}, key=key)
    b = served.req("POST", f"{T}/tasks", json={"plan-task": tokens[0]}, key=key)
    assert a.status_code == b.status_code == 200 and a.json() == b.json()
    assert b.headers.get("Idempotent-Replayed") == "true"
    err(served.req("POST", f"{T}/tasks", json={"plan-task": tokens[1]}, key=key), 422, "IdempotencyKeyConflict")
    assert served.req("GET", f"{T}/plan/{pid}").json()["plan-tasks"] == tokens[1:]   # token 1 not fetched


def test_cancel_replay_same_key(served):
    make_events(served)
    pid = served.plan({}).json()["plan-id"]
    key = str(uuid6.uuid7())
    assert served.req("DELETE", f"{T}/plan/{pid}", key=key).status_code == 204
    r = served.req("DELETE", f"{T}/plan/{pid}", key=key)
    assert r.status_code == 204 and r.headers.get("Idempotent-Replayed") == "true"
    assert served.executions("cancelPlanning") == 1
    missing = str(uuid6.uuid7())
    key2 = str(uuid6.uuid7())
    err(served.req("DELETE", f"{T}/plan/{missing}", key=key2), 404, "NoSuchPlanIdException")
    r = served.req("DELETE", f"{T}/plan/{missing}", key=key2)
    assert r.status_code == 404 and r.headers.get("Idempotent-Replayed") == "true"


@pytest.mark.parametrize("op, path_of, body_of", [
    ("planTableScan", lambda pid, tok: f"{T}/plan", lambda tok: {}),
    ("fetchScanTasks", lambda pid, tok: f"{T}/tasks", lambda tok: {"plan-task": tok}),
    ("cancelPlanning", lambda pid, tok: f"{T}/plan/{pid}", lambda tok: None),
])
def test_crash_before_finalize_is_reconciled(served, op, path_of, body_of):
    make_events(served)
    pid = served.plan({}).json()["plan-id"]
    token = served.req("GET", f"{T}/plan/{pid}").json()["plan-tasks"][0]
    method = "DELETE" if op == "cancelPlanning" else "POST"
    rule = served.http.post(served.url + "/_ctk/faults", json={"action": "crash-before-finalize", "operation": op})
    assert rule.status_code in (200, 201), rule.text
    key = str(uuid6.uuid7())
    before = served.executions(op)
    first = served.req(method, path_of(pid, token), json=body_of(token), key=key)
    assert first.status_code == 500
    retry = served.req(method, path_of(pid, token), json=body_of(token), key=key)
    assert retry.status_code in (200, 204), retry.text
    assert served.executions(op) == before + 1                     # reconciled from state, not executed again
    again = served.req(method, path_of(pid, token), json=body_of(token), key=key)
    assert again.status_code == retry.status_code and again.content.strip() == retry.content.strip() == b"" \
        or again.json() == retry.json()
    if op == "planTableScan":
        plans = served.http.get(served.url + "/_ctk/plans", params={"namespace": "db", "table": "events"}).json()
        assert retry.json()["plan-id"] in [p["plan-id"] for p in plans["plans"]] and len(plans["plans"]) == 2


# ---------------------------------------------------------------------------------------------- the rest

def test_credentials_functions_sign_and_config(served):
    make_events(served, batches=())
    r = served.req("GET", f"{T}/credentials")
    assert r.status_code == 200 and r.json() == {"storage-credentials": []}
    assert served.req("GET", f"{T}/credentials?planId=x").status_code == 200
    assert served.req("GET", "namespaces/db/functions").json() == {"identifiers": []}
    assert served.req("GET", "namespaces/db/functions?pageSize=2").json() == {"identifiers": []}
    err(served.req("GET", "namespaces/db/functions?pageSize=0"), 400, "BadRequestException")
    err(served.req("GET", "namespaces/nons/functions"), 404, "NoSuchNamespaceException")
    err(served.req("GET", "namespaces/db/functions/f"), 404, "NoSuchFunctionException")
    err(served.req("GET", "namespaces/nons/functions/f"), 404, "NoSuchNamespaceException")
    err(served.req("POST", f"{T}/sign", json={"region": "x", "uri": "s3://b/k", "method": "GET", "headers": {}}),
        404, "NotFoundException")
    endpoints = served.http.get("config").json()["endpoints"]
    for e in ("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
              "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
              "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
              "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks",
              "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
              "GET /v1/{prefix}/namespaces/{namespace}/functions",
              "GET /v1/{prefix}/namespaces/{namespace}/functions/{function}"):
        assert e in endpoints
    assert not [e for e in endpoints if e.endswith("/sign")]


def test_prefixed_routes(tmp_path):
    s = Served(tmp_path, prefix="cat1")
    try:
        make_events(s, batches=((1,),))
        r = s.http.post("cat1/namespaces/db/tables/events/plan", json={})
        assert r.status_code == 200 and r.json()["status"] == "completed"
    finally:
        s.close()


def test_pyiceberg_plans_on_the_server(served):
    from pyiceberg.expressions import And, GreaterThan, In

    make_events(served)
    cat = load_catalog("srv", type="rest", uri=served.url, **{"scan-planning-mode": "server"})
    table = cat.load_table(("db", "events"))
    assert table.scan().to_arrow().sort_by("id")["id"].to_pylist() == [1, 2, 11, 12, 21, 22]
    got = table.scan(row_filter=And(GreaterThan("id", 5), In("name", {"r11", "r21"})), selected_fields=("id",))
    assert sorted(got.to_arrow()["id"].to_pylist()) == [11, 21]
    assert served.executions("planTableScan") == 2 and served.executions("fetchScanTasks") == 3 + 2


@pytest.mark.skipif(not UPSTREAM.is_file(), reason=f"upstream spec not present at {UPSTREAM}")
def test_responses_conform_to_the_upstream_spec(tmp_path):
    from ctk.core.exchange import Exchange
    from ctk.openapi import load_spec

    spec = load_spec(UPSTREAM)
    for mode in ("sync", "async"):
        s = Served(tmp_path / mode, planning_mode=mode, plan_task_size=2)
        try:
            make_events(s)
            _, _, _ = all_tasks(s, {"stats-fields": ["id", "name"], "filter": {"type": "gt", "term": "id", "value": 0}})
            pid = s.plan({}).json()["plan-id"]
            s.req("DELETE", f"{T}/plan/{pid}")
            s.req("GET", f"{T}/plan/{pid}")
            s.req("GET", f"{T}/plan/nope")
            s.req("POST", f"{T}/tasks", json={"plan-task": "nope"})
            s.plan({"filter": {"type": "like"}})
            s.req("GET", f"{T}/credentials")
            s.req("GET", "namespaces/db/functions")
            s.req("GET", "namespaces/db/functions/f")
            problems = []
            for r in s.responses:
                ex = Exchange(r.request.method, str(r.request.url), status=r.status_code, response_body=r.text)
                problems += [p for p in spec.validate(ex) if not AMBIGUOUS.search(p)]
            assert not problems, problems
        finally:
            s.close()


# ---------------------------------------------------------------------------------------------- pure functions

def test_to_expression_both_forms_give_the_same_predicate():
    from pyiceberg.expressions import EqualTo, GreaterThan, In, IsNull, Not, Or
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    from ctk.reference.planning import to_expression

    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "name", StringType()))
    ref = {"type": "reference", "name": "id"}
    assert to_expression({"type": "eq", "term": "id", "value": 5}, schema) == EqualTo("id", 5)
    assert to_expression({"type": "eq", "left": ref, "right": 5}, schema) == EqualTo("id", 5)
    assert to_expression({"type": "eq", "left": {"type": "reference", "id": 2}, "right": "a"}, schema) == \
        EqualTo("name", "a")
    assert to_expression({"type": "lt", "left": 5, "right": ref}, schema) == GreaterThan("id", 5)
    assert to_expression({"type": "not", "child": {"type": "is-null", "child": ref}}, schema) == Not(IsNull("id"))
    assert to_expression({"type": "or", "left": {"type": "in", "term": "id", "values": [1, 2]},
                          "right": {"type": "eq", "term": "id", "value": {"type": "literal", "value": 3}}},
                         schema) == Or(In("id", {1, 2}), EqualTo("id", 3))


def test_json_value_writes_what_java_writes():
    from decimal import Decimal

    from pyiceberg import types as T

    from ctk.reference.planning import json_value

    assert json_value(T.DateType(), 19724) == "2024-01-02"
    assert json_value(T.TimestampType(), 1_000_001) == "1970-01-01T00:00:01.000001"
    assert json_value(T.TimestamptzType(), 0) == "1970-01-01T00:00:00.000000+00:00"
    assert json_value(T.TimeType(), 3_600_000_000) == "01:00:00"
    assert json_value(T.DecimalType(9, 2), Decimal("14.20")) == "14.20"
    assert json_value(T.BinaryType(), b"xyz") == "78797A"
    assert json_value(T.UUIDType(), uuid.UUID(int=1).bytes) == "00000000-0000-0000-0000-000000000001"
    assert json_value(T.DoubleType(), float("nan")) is None
    assert json_value(T.LongType(), None) is None and json_value(T.BooleanType(), True) is True


@pytest.mark.postgres
def test_planning_on_postgres(pg, tmp_path):
    s = Served(tmp_path, database_url=pg.url)
    try:
        table = make_events(s)
        key = str(uuid6.uuid7())
        first, tasks, _ = all_tasks(s, {"filter": {"type": "gt", "term": "id", "value": 5}}, key=key)
        assert len(tasks) == 2 and set(paths(tasks)) < set(local_paths(table))
        again = s.plan({"filter": {"type": "gt", "term": "id", "value": 5}}, key=key)
        assert again.json() == first and again.headers.get("Idempotent-Replayed") == "true"
        pid = first["plan-id"]
        assert "plan-tasks" not in s.req("GET", f"{T}/plan/{pid}").json()            # both fetched
        assert s.req("DELETE", f"{T}/plan/{pid}").status_code == 204
        assert s.req("GET", f"{T}/plan/{pid}").json() == {"status": "cancelled"}
    finally:
        s.close()


def test_old_plans_are_swept_but_never_before_a_key_expires(tmp_path):
    from ctk.reference.planning import plan_ttl

    assert plan_ttl(ReferenceSettings(plan_ttl=1.0)) == (30 + 5) * 60          # PT30M + PT5M
    assert plan_ttl(ReferenceSettings(plan_ttl=1.0, idempotency_lifetime=None)) == 1.0
    s = Served(tmp_path, plan_ttl=0.0, idempotency_lifetime=None)
    try:
        make_events(s, batches=((1,),))
        old = s.plan({}).json()["plan-id"]
        new = s.plan({}).json()["plan-id"]                                     # sweeps the first
        err(s.req("GET", f"{T}/plan/{old}"), 404, "NoSuchPlanIdException")
        assert s.req("GET", f"{T}/plan/{new}").status_code == 200
    finally:
        s.close()


def test_delete_files_are_listed_once_and_referenced_by_index():
    """pyiceberg cannot write merge-on-read deletes, so the delete-file path is checked on built objects."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.schema import Schema
    from pyiceberg.table import FileScanTask
    from pyiceberg.table.metadata import new_table_metadata
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField

    from ctk.reference.planning import scan_tasks, task_entry

    md = new_table_metadata(Schema(NestedField(1, "id", LongType())), UNPARTITIONED_PARTITION_SPEC,
                            UNSORTED_SORT_ORDER, "file:///tmp/t", {})

    def f(path, content=DataFileContent.DATA, **kw):
        df = DataFile.from_args(content=content, file_path=path, file_format=FileFormat.PARQUET, partition=Record(),
                                record_count=3, file_size_in_bytes=100, **kw)
        df.spec_id = 0
        return df

    pos = f("d/pos.parquet", DataFileContent.POSITION_DELETES)
    eq = f("d/eq.parquet", DataFileContent.EQUALITY_DELETES, equality_ids=[1])
    tasks = [FileScanTask(f("a.parquet"), {pos}), FileScanTask(f("b.parquet"), {pos, eq}), FileScanTask(f("c.parquet"))]
    doc = scan_tasks([task_entry(t, md, md.schema(), None) for t in tasks])
    assert [d["content"] for d in doc["delete-files"]] == ["position-deletes", "equality-deletes"]
    assert doc["delete-files"][1]["equality-ids"] == [1] and "equality-ids" not in doc["delete-files"][0]
    refs = [t.get("delete-file-references") for t in doc["file-scan-tasks"]]
    assert refs == [[0], [1, 0], None]                      # pos.parquet listed once, shared by a and b
