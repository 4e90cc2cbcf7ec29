"""Answers that carry a table's metadata are stored by reference to its metadata file: the replay reads the
file again and is the same answer; a purge copies such answers into their records before the files go; a
referenced file that is gone makes the answer unproducible (500 idempotency_replay_failed), never a
re-execution."""

from __future__ import annotations

import json
import os
import uuid

import uuid6

import httpx
import pytest
from sqlalchemy import create_engine, select

from ctk.reference.idempotency import (RecordStore, StoredResponseError, decode_response, digest_of,
                                       encode_stored, records)
from ctk.reference import store
from ctk.reference.operations import OpResult

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
LOCATION = "file:///w/db/t/metadata/00002-x.metadata.json"


def _body(metadata: dict) -> dict:
    return {"metadata": metadata, "config": {"k": "v"}, "metadata-location": LOCATION}


# --- storage ------------------------------------------------------------------------------------------

def test_stored_without_the_metadata_and_replayed_from_the_file():
    metadata = {"format-version": 2, "snapshots": [{"snapshot-id": i} for i in range(200)]}
    stored, wire, ref = encode_stored(OpResult(200, _body(metadata), {"Content-Type": "application/json"},
                                               ref=LOCATION))
    assert ref == LOCATION and "snapshots" not in stored and len(stored) < 300
    assert json.loads(wire) == _body(metadata)
    seen = []
    out = decode_response(stored, digest_of(stored), lambda loc: seen.append(loc) or metadata)
    assert seen == [LOCATION]
    assert out.status == 200 and out.headers == {"content-type": "application/json"}
    assert list(out.body) == list(_body(metadata)) and out.body == _body(metadata)   # same keys, same order


def test_ref_that_does_not_name_the_bodys_location_stores_the_body_whole():
    stored, _wire, ref = encode_stored(OpResult(200, _body({"x": 1}), ref="file:///elsewhere.json"))
    assert ref is None and "body_ref" not in json.loads(stored)
    assert decode_response(stored, digest_of(stored)).body == _body({"x": 1})


def test_unreadable_referenced_file_is_a_stored_response_error():
    stored, _wire, _ref = encode_stored(OpResult(200, _body({"x": 1}), ref=LOCATION))
    with pytest.raises(StoredResponseError, match="nothing here can read it"):
        decode_response(stored, digest_of(stored))

    def gone(location):
        raise FileNotFoundError(location)

    with pytest.raises(StoredResponseError, match="cannot be read: .*FileNotFoundError"):
        decode_response(stored, digest_of(stored), gone)


def test_damaged_reference_is_unreadable():
    stored, _wire, _ref = encode_stored(OpResult(200, _body({"x": 1}), ref=LOCATION))
    doc = json.loads(stored)
    doc["body_ref"]["keys"] = ["config"]                       # lost its metadata key
    bad = json.dumps(doc)
    with pytest.raises(StoredResponseError, match="unreadable"):
        decode_response(bad, digest_of(bad), lambda loc: {})


def test_records_table_from_before_gets_the_ref_column(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path}/old.db")
    RecordStore(engine)
    with engine.begin() as conn:                              # the table as an older version left it
        conn.exec_driver_sql("DROP INDEX ix_ctk_idem_ref")
        conn.exec_driver_sql(f"ALTER TABLE {records.name} DROP COLUMN ref")
    RecordStore(engine)
    with engine.connect() as conn:
        columns = {r[1] for r in conn.exec_driver_sql(f"PRAGMA table_info({records.name})")}
        indexes = {r[1] for r in conn.exec_driver_sql(f"PRAGMA index_list({records.name})")}
    assert "ref" in columns and "ix_ctk_idem_ref" in indexes


# --- through the catalog ------------------------------------------------------------------------------

@pytest.fixture
def catalog(reference):
    with httpx.Client(base_url=reference.url + "/v1", timeout=30) as client:
        assert client.post("/namespaces", json={"namespace": ["db"], "properties": {}}).status_code == 200
        yield client, reference.app.state.engine


def _refs(engine) -> dict[str, str | None]:
    with engine.connect() as conn:
        return {r.idem_key: r.ref for r in conn.execute(select(records.c.idem_key, records.c.ref))}


def test_create_and_commit_replay_from_the_metadata_file_and_survive_a_purge(catalog):
    client, engine = catalog
    create_key, commit_key = str(uuid6.uuid7()), str(uuid6.uuid7())
    create_body = {"name": "t", "schema": SCHEMA, "properties": {"a": "1"}}
    commit_body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"b": "2"}}]}
    created = client.post("/namespaces/db/tables", json=create_body, headers={"Idempotency-Key": create_key})
    committed = client.post("/namespaces/db/tables/t", json=commit_body, headers={"Idempotency-Key": commit_key})
    assert created.status_code == committed.status_code == 200
    refs = _refs(engine)
    assert refs[create_key] == created.json()["metadata-location"]
    assert refs[commit_key] == committed.json()["metadata-location"]

    def replays():
        again_create = client.post("/namespaces/db/tables", json=create_body, headers={"Idempotency-Key": create_key})
        again_commit = client.post("/namespaces/db/tables/t", json=commit_body,
                                   headers={"Idempotency-Key": commit_key})
        assert again_create.headers["idempotent-replayed"] == again_commit.headers["idempotent-replayed"] == "true"
        assert again_create.status_code == again_commit.status_code == 200
        assert again_create.content == created.content and again_commit.content == committed.content

    replays()
    files = [created.json()["metadata-location"], committed.json()["metadata-location"]]
    assert client.delete("/namespaces/db/tables/t", params={"purgeRequested": "true"}).status_code == 204
    assert not any(os.path.exists(f.replace("file://", "")) for f in files)
    assert _refs(engine)[create_key] is None and _refs(engine)[commit_key] is None   # copied in before the purge
    replays()
    assert client.head("/namespaces/db/tables/t").status_code == 404                 # nothing re-executed


def test_referenced_file_gone_is_500_replay_failed_and_no_reexecution(catalog):
    client, engine = catalog
    assert client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).status_code == 200
    key = str(uuid6.uuid7())
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"b": "2"}}]}
    first = client.post("/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == 200
    later = client.post("/namespaces/db/tables/t", json={"requirements": [], "updates": [
        {"action": "set-properties", "updates": {"c": "3"}}]})
    assert later.status_code == 200
    os.remove(first.json()["metadata-location"].replace("file://", ""))    # removed behind the catalog's back
    again = client.post("/namespaces/db/tables/t", json=body, headers={"Idempotency-Key": key})
    assert again.status_code == 500
    error = again.json()["error"]
    assert error["type"] == "IdempotencyReplayFailedException" and "cannot be read" in error["message"]
    with engine.connect() as conn:                 # not executed again: the pointer did not move
        assert store.table_pointer(conn, ["db"], "t") == later.json()["metadata-location"]


def test_purge_keeps_every_file_when_the_answers_cannot_be_copied(catalog, reference, monkeypatch):
    client, _engine = catalog
    key = str(uuid6.uuid7())
    created = client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA},
                          headers={"Idempotency-Key": key})
    assert created.status_code == 200

    def broken(*_args, **_kwargs):
        raise RuntimeError("database is gone")

    monkeypatch.setattr(reference.app.state.pipeline.records, "materialize", broken)
    assert client.delete("/namespaces/db/tables/t", params={"purgeRequested": "true"}).status_code == 204
    assert os.path.exists(created.json()["metadata-location"].replace("file://", ""))
    again = client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}, headers={"Idempotency-Key": key})
    assert again.status_code == 200 and again.content == created.content


def _metadata_files(created: dict) -> set[str]:
    directory = os.path.dirname(created["metadata-location"].replace("file://", ""))
    return set(os.listdir(directory))


def test_duplicate_of_a_key_finalized_here_replays_without_running_the_commit_first(catalog):
    client, _engine = catalog
    created = client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).json()
    key = {"Idempotency-Key": str(uuid6.uuid7())}
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"b": "2"}}]}
    first = client.post("/namespaces/db/tables/t", json=body, headers=key)
    files = _metadata_files(created)
    again = client.post("/namespaces/db/tables/t", json=body, headers=key)
    assert again.headers["idempotent-replayed"] == "true" and again.content == first.content
    assert _metadata_files(created) == files          # no metadata file written for a commit rolled back


def test_key_finalized_here_whose_record_is_gone_executes_again(catalog, reference):
    client, _engine = catalog
    assert client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).status_code == 200
    key = {"Idempotency-Key": str(uuid6.uuid7())}
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"b": "2"}}]}
    first = client.post("/namespaces/db/tables/t", json=body, headers=key)
    reference.app.state.pipeline.records.clear()      # as the sweep does once the lifetime is over
    again = client.post("/namespaces/db/tables/t", json=body, headers=key)
    assert again.status_code == 200 and "idempotent-replayed" not in again.headers
    assert again.json()["metadata-location"] != first.json()["metadata-location"]
    assert reference.app.state.pipeline.records.count() == 1
