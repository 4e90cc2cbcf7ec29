"""Idempotency end to end through the real reference catalog routes (uses the `reference` fixture)."""

from __future__ import annotations

import json
import threading
import time
import uuid

import uuid6

import httpx
import pytest
from sqlalchemy import insert

from ctk.reference.idempotency import IN_PROGRESS, canonical_hash, origin_of, records

pytestmark = pytest.mark.timeout(180)

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def key() -> str:
    return str(uuid6.uuid7())


@pytest.fixture
def ref(reference):
    with httpx.Client(base_url=reference.url, timeout=30) as c:
        c.reference = reference
        assert c.post("/v1/namespaces", json={"namespace": ["db"], "properties": {}}).status_code == 200
        r = c.post("/v1/namespaces/db/tables", json={"name": "t", "schema": SCHEMA})
        assert r.status_code == 200, r.text
        c.post("/_ctk/reset")
        yield c


def commit_body(c, snapshot_id: int) -> dict:
    meta = c.get("/v1/namespaces/db/tables/t").json()["metadata"]
    parent = meta.get("current-snapshot-id")
    if parent == -1:
        parent = None
    snap = {"snapshot-id": snapshot_id, "timestamp-ms": int(time.time() * 1000) - 5000,
            "manifest-list": f"file:///tmp/ctk-none/snap-{snapshot_id}.avro",
            "summary": {"operation": "append"}, "schema-id": 0,
            "sequence-number": meta.get("last-sequence-number", 0) + 1}
    if parent is not None:
        snap["parent-snapshot-id"] = parent
    return {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}],
            "updates": [{"action": "add-snapshot", "snapshot": snap},
                        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                         "snapshot-id": snapshot_id}]}


def snapshots(c) -> list[int]:
    return [s["snapshot-id"] for s in c.get("/v1/namespaces/db/tables/t").json()["metadata"].get("snapshots", [])]


def executions(c, op=None):
    e = c.get("/_ctk/executions").json()
    return e["total"] if op is None else e["by_operation"].get(op, 0)


def test_update_table_replay(ref):
    k, body = key(), commit_body(ref, 101)
    first = ref.post("/v1/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": k})
    assert first.status_code == 200, first.text
    again = ref.post("/v1/namespaces/db/tables/t", json=body, headers={"idempotency-key": k})
    assert again.status_code == 200 and again.json() == first.json()
    assert executions(ref) == 1 and snapshots(ref) == [101]
    conflict = ref.post("/v1/namespaces/db/tables/t", json=commit_body(ref, 102), headers={"Idempotency-Key": k})
    assert conflict.status_code == 422


def test_update_table_drop_after_commit_then_retry(ref):
    k, body = key(), commit_body(ref, 201)
    ref.post("/_ctk/faults", json={"action": "drop-after-commit", "operation": "updateTable"})
    with pytest.raises(httpx.TransportError):
        ref.post("/v1/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": k})
    retry = ref.post("/v1/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": k})
    assert retry.status_code == 200 and retry.headers["idempotent-replayed"] == "true"
    assert executions(ref) == 1 and snapshots(ref) == [201]


def test_update_table_without_key_retry_conflicts(ref):
    """The motivating failure: without a key the retry of a landed commit gets 409."""
    body = commit_body(ref, 301)
    ref.post("/_ctk/faults", json={"action": "fail-after-commit", "status": 503, "operation": "updateTable"})
    assert ref.post("/v1/namespaces/db/tables/t", json=body).status_code == 503
    assert ref.post("/v1/namespaces/db/tables/t", json=body).status_code == 409


@pytest.mark.parametrize("case", ["updateTable", "createNamespace", "updateProperties", "createTable",
                                  "dropTable", "renameTable", "commitTransaction", "dropNamespace"])
def test_crash_before_finalize_reconciled_through_real_routes(ref, case):
    if case == "updateTable":
        method, path, body = "POST", "/v1/namespaces/db/tables/t", commit_body(ref, 401)
    elif case == "createNamespace":
        method, path, body = "POST", "/v1/namespaces", {"namespace": ["n2"], "properties": {"a": "b"}}
    elif case == "updateProperties":
        method, path, body = "POST", "/v1/namespaces/db/properties", {"updates": {"x": "1"}, "removals": []}
    elif case == "createTable":
        method, path, body = "POST", "/v1/namespaces/db/tables", {"name": "t2", "schema": SCHEMA}
    elif case == "dropTable":
        method, path, body = "DELETE", "/v1/namespaces/db/tables/t", None
    elif case == "renameTable":
        method, path, body = "POST", "/v1/tables/rename", {"source": {"namespace": ["db"], "name": "t"},
                                                           "destination": {"namespace": ["db"], "name": "t9"}}
    elif case == "dropNamespace":
        ref.post("/v1/namespaces", json={"namespace": ["empty"], "properties": {}})
        ref.post("/_ctk/reset")
        method, path, body = "DELETE", "/v1/namespaces/empty", None
    else:
        b = commit_body(ref, 402)
        method, path, body = "POST", "/v1/transactions/commit", {"table-changes": [
            {"identifier": {"namespace": ["db"], "name": "t"}, **b}]}
    k = key()
    ref.post("/_ctk/faults", json={"action": "crash-before-finalize", "operation": case})
    send = lambda: ref.request(method, path, json=body, headers={"Idempotency-Key": k})  # noqa: E731
    crashed = send()
    assert crashed.status_code == 500, crashed.text
    retry = send()
    assert retry.status_code in (200, 204), retry.text
    assert executions(ref) == 1, ref.get("/_ctk/executions").json()
    assert send().status_code == retry.status_code                      # finalized: replayed
    assert executions(ref) == 1
    if case in ("updateTable", "commitTransaction"):
        assert snapshots(ref) == [401 if case == "updateTable" else 402]
        assert retry.status_code == (200 if case == "updateTable" else 204)


def test_crash_before_finalize_on_unregister_answers_the_last_metadata(ref):
    """Reconciled from the unregistered table's last pointer: the same 200 + metadata a plain unregister gives."""
    loaded = ref.get("/v1/namespaces/db/tables/t").json()
    k = key()
    ref.post("/_ctk/faults", json={"action": "crash-before-finalize", "operation": "unregisterTable"})
    send = lambda: ref.post("/v1/namespaces/db/tables/t/unregister", headers={"Idempotency-Key": k})  # noqa: E731
    assert send().status_code == 500
    retry = send()
    assert retry.status_code == 200, retry.text
    assert retry.json()["metadata-location"] == loaded["metadata-location"]
    assert retry.json()["metadata"] == loaded["metadata"]
    assert executions(ref) == 1
    assert ref.get("/v1/namespaces/db/tables/t").status_code == 404


def test_crash_left_record_for_an_absent_commit_executes(ref):
    """An IN_PROGRESS record (crash-marked) whose commit is not in the state: reconcile says absent, the retry
    executes once."""
    body = commit_body(ref, 501)
    k = key()
    engine = ref.reference.app.state.engine
    now = time.time()
    with engine.begin() as conn:
        conn.execute(insert(records).values(
            idem_key=k, operation="updateTable", resource="db/tables/t", principal="anonymous",
            status=IN_PROGRESS, request_hash=canonical_hash(json.dumps(body).encode()),
            origin=origin_of("updateTable", "db/tables/t", "anonymous"), owner="f" * 32, crashed=True,
            created_at=now, updated_at=now, expires_at=now + 3600))
    r = ref.post("/v1/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": k})
    assert r.status_code == 200, r.text
    assert executions(ref) == 1 and snapshots(ref) == [501]


def test_in_flight_commit_duplicate_gets_409(ref):
    k, body = key(), commit_body(ref, 601)
    ref.post("/_ctk/faults", json={"action": "delay", "seconds": 1.0, "operation": "updateTable"})
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("first", ref.post(
        "/v1/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": k})))
    t.start()
    time.sleep(0.3)
    second = ref.post("/v1/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": k})
    t.join(timeout=30)
    assert out["first"].status_code == 200
    assert second.status_code == 409 and second.json()["error"]["subtype"] == "request_in_progress"
    assert snapshots(ref) == [601] and executions(ref) == 1
