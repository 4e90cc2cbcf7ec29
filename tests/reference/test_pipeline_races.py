"""A duplicate on the fast path that fails on its original's own change is answered as a duplicate."""

from __future__ import annotations

import time

import uuid6

from sqlalchemy import create_engine

from ctk.reference.operations import Mutation
from ctk.reference.pipeline import Pipeline
from ctk.reference.settings import ReferenceSettings


def _failing(conn):
    raise RuntimeError("UNIQUE constraint failed: items.name (the original inserted it meanwhile)")


def _pipeline(tmp_path) -> Pipeline:
    engine = create_engine(f"sqlite:///{tmp_path}/p.db")
    return Pipeline(engine, ReferenceSettings(warehouse=str(tmp_path / "w")))


def test_failure_while_the_key_is_held_elsewhere_is_not_a_500(tmp_path):
    pipeline = _pipeline(tmp_path)
    scope = ("createItem", "items/a", "0190f1e2-3a4b-7c5d-8e9f-0a1b2c3d4e5f", "anonymous")
    now = time.time()
    assert pipeline.records.reserve(scope, "h" * 64, now + 60, now) is not None     # the original, in flight
    mutation = Mutation("createItem", "items/a", "anonymous", b"{}", _failing)
    assert pipeline._reserve_and_execute(mutation, scope, "h" * 64, now + 60, now, "[]") is None
    pipeline.close()


def test_failure_with_the_key_free_is_a_500(tmp_path):
    pipeline = _pipeline(tmp_path)
    scope = ("createItem", "items/a", "0190f1e2-3a4b-7c5d-8e9f-0a1b2c3d4e5f", "anonymous")
    now = time.time()
    mutation = Mutation("createItem", "items/a", "anonymous", b"{}", _failing)
    result = pipeline._reserve_and_execute(mutation, scope, "h" * 64, now + 60, now, "[]")
    assert result.status == 500 and result.body["error"]["type"] == "InternalServerError"
    assert pipeline.records.get(scope) is None                                       # nothing stored
    pipeline.close()


def test_a_waiting_duplicate_does_not_run_the_commit_on_every_poll(make_reference):
    """in_flight=wait: the duplicate polls the record while its original is held; it must not run the
    commit each time (every run writes a metadata file before it rolls back)."""
    import os
    import threading
    import uuid

    import httpx

    server = make_reference(in_flight="wait", in_flight_wait_timeout=10, control_api=True)
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    with httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.post("/v1/namespaces", json={"namespace": ["db"]}).status_code == 200
        created = c.post("/v1/namespaces/db/tables", json={"name": "t", "schema": schema}).json()
        directory = os.path.dirname(created["metadata-location"].replace("file://", ""))
        before = set(os.listdir(directory))
        assert c.post("/_ctk/faults", json={"action": "delay", "operation": "updateTable", "seconds": 1.5,
                                            "times": 1}).status_code in (200, 201)
        key = {"Idempotency-Key": str(uuid6.uuid7())}
        body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"b": "2"}}]}
        out = {}
        first = threading.Thread(target=lambda: out.setdefault(
            "first", httpx.post(f"{server.url}/v1/namespaces/db/tables/t", json=body, headers=key, timeout=30)))
        first.start()
        time.sleep(0.4)
        second = c.post("/v1/namespaces/db/tables/t", json=body, headers=key)
        first.join(30)
    assert out["first"].status_code == 200 and second.status_code == 200
    assert second.headers["idempotent-replayed"] == "true" and second.content == out["first"].content
    # the original's file, and at most one from the duplicate's first try (run, then rolled back)
    assert len(set(os.listdir(directory)) - before) <= 2, sorted(set(os.listdir(directory)) - before)
