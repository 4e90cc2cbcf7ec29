"""The store's commit path (ctk.reference.store): metadata files written new and complete, never over another,
their JSON handed back to the answer; the pointer read and compare-and-swap on statements built once; and the
catalog's answer carrying exactly the metadata its file holds."""

from __future__ import annotations

import json

import pytest
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.types import LongType, NestedField
from sqlalchemy import create_engine

from ctk.reference import store
from ctk.reference.settings import parse_duration

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _metadata(location: str):
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    return new_table_metadata(schema, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, location, {"k": "v"})


@pytest.mark.parametrize("uri", [True, False], ids=["file-uri", "plain-path"])
def test_metadata_file_is_written_whole_and_its_text_returned(tmp_path, uri):
    base = ("file://" if uri else "") + str(tmp_path / "t")
    location = store.new_metadata_location(base, None)
    metadata = _metadata(base)
    text = store.write_table_metadata(metadata, location)        # the metadata directory is made on the way
    path = store.local_path(location)
    with open(path, encoding="utf-8") as f:
        assert f.read() == text
    assert json.loads(text) == store.json_of(metadata)
    assert store.read_table_metadata(location).properties == {"k": "v"}


def test_metadata_file_is_never_written_over(tmp_path):
    location = store.new_metadata_location(str(tmp_path / "t"), None)
    store.write_table_metadata(_metadata(str(tmp_path / "t")), location)
    before = open(store.local_path(location), "rb").read()
    with pytest.raises(FileExistsError, match="already exists"):
        store.write_table_metadata(_metadata(str(tmp_path / "other")), location)
    assert open(store.local_path(location), "rb").read() == before


def test_pointer_swap_compares_and_each_kind_reads_its_own_table(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'c.db'}")
    store.meta.create_all(engine)
    with engine.begin() as conn:
        store.insert_pointer(conn, "table", ["a", "b"], "t", "loc1")
        store.insert_pointer(conn, "view", ["a", "b"], "v", "vloc1")
        store.insert_pointer(conn, "table", ["a"], "t", "other")
        assert store.table_pointer(conn, ["a", "b"], "t") == "loc1"
        assert store.table_pointer(conn, ["a", "b"], "v") is None          # a view is not a table
        assert store.view_pointer(conn, ["a", "b"], "v") == "vloc1"
        assert not store.swap_pointer(conn, "table", ["a", "b"], "t", "stale", "loc2")
        assert store.table_pointer(conn, ["a", "b"], "t") == "loc1"
        assert store.swap_pointer(conn, "table", ["a", "b"], "t", "loc1", "loc2")
        assert store.table_pointer(conn, ["a", "b"], "t") == "loc2"
        assert store.swap_pointer(conn, "table", ["a", "b"], "t", None, "loc3")   # unconditional
        assert store.table_pointer(conn, ["a", "b"], "t") == "loc3"
        assert store.table_pointer(conn, ["a"], "t") == "other"            # only the named row changed
        assert not store.swap_pointer(conn, "view", ["a", "b"], "missing", None, "x")
        assert store.swap_pointer(conn, "view", ["a", "b"], "v", "vloc1", "vloc2")
        assert store.view_pointer(conn, ["a", "b"], "v") == "vloc2"


def test_duration_kept_per_text_still_refuses_a_bad_one_every_time():
    assert parse_duration("PT30M").total_seconds() == 1800
    assert parse_duration("PT30M") is parse_duration("PT30M")
    for _ in range(2):
        with pytest.raises(ValueError, match="not an ISO-8601 duration"):
            parse_duration("thirty minutes")


def test_commit_answer_carries_exactly_the_metadata_of_its_file(client):
    assert client.post("/namespaces", json={"namespace": ["db"]}).status_code == 200
    created = client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA})
    assert created.status_code == 200
    committed = client.post("/namespaces/db/tables/t", json={
        "requirements": [], "updates": [{"action": "set-properties", "updates": {"n": "1"}}]})
    assert committed.status_code == 200
    for answer in (created.json(), committed.json()):
        location = answer["metadata-location"]
        with open(store.local_path(location), encoding="utf-8") as f:
            assert json.load(f) == answer["metadata"]
    assert committed.json()["metadata"]["properties"]["n"] == "1"


def test_answer_bytes_made_with_the_written_text_are_those_of_the_whole_body(tmp_path):
    from ctk.reference.catalog import table_result
    from ctk.reference.idempotency import encode_stored, wire_json
    from ctk.reference.operations import OpResult

    base = str(tmp_path / "t")
    location = store.new_metadata_location(base, None)
    metadata = _metadata(base)
    metadata = metadata.model_copy(update={"properties": {"k": "v", "ünï": "quote \" tab \t nl \n \x01 ✓"}})
    text = store.write_table_metadata(metadata, location)
    body = table_result(location, metadata, text)
    stored, wire, ref = encode_stored(OpResult(200, body, {"ETag": '"x"'}, ref=location, metadata_text=text))
    assert ref == location
    assert wire == wire_json(body)                 # byte for byte what serializing the body whole gives
    assert json.loads(wire)["metadata"]["properties"]["ünï"].endswith("✓")
    assert "metadata" not in json.loads(stored)["body_ref"]["rest"]


def test_sqlite_write_transactions_take_the_write_lock_at_begin_and_reads_do_not(tmp_path):
    from ctk.reference.settings import ReferenceSettings

    engine = store.make_engine(ReferenceSettings(warehouse=str(tmp_path / "w")))
    try:
        with engine.begin() as writer:          # BEGIN IMMEDIATE: the lock is held before any statement
            assert writer.connection.driver_connection.in_transaction
            with store.read_connection(engine) as reader:      # a deferred BEGIN never waits for the writer
                assert store.table_pointer(reader, ["a"], "t") is None
            other = engine.connect()
            other.connection.driver_connection.execute("PRAGMA busy_timeout=0")
            try:
                with pytest.raises(Exception, match="locked"):
                    other.begin()
            finally:
                other.close()
    finally:
        engine.dispose()
