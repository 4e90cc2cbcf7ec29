"""A staged create on a local warehouse makes `<location>/metadata` (issue 21 item 7).

A table created at once has its metadata directory (its first metadata file is in it). A staged create writes no
file, and a writer that then puts the first commit's manifests under `<location>/metadata/` without creating
directories - DuckDB's iceberg extension, for its default CREATE TABLE AS and for CREATE + INSERT in one
transaction - failed on the missing directory. The catalog makes it; an object-store location has none to make.
"""

from __future__ import annotations

import os

import pytest

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("db")]

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def stage(client, name, ns="db", **extra):
    return client.post(f"/namespaces/{ns}/tables",
                       json={"name": name, "schema": SCHEMA, "stage-create": True, **extra})


def local(location: str) -> str:
    assert location.startswith("file://") or location.startswith("/"), location
    return location[len("file://"):] if location.startswith("file://") else location


def test_staged_create_makes_the_metadata_directory(client):
    r = stage(client, "s")
    assert r.status_code == 200, r.text
    location = r.json()["metadata"]["location"]
    metadata_dir = os.path.join(local(location), "metadata")
    assert os.path.isdir(metadata_dir)
    assert os.listdir(metadata_dir) == []          # a directory only: a staged create writes no metadata file
    assert client.head("/namespaces/db/tables/s").status_code == 404     # and takes no name
    assert client.get("/namespaces/db/tables").json()["identifiers"] == []


@pytest.mark.parametrize("form", ["file-uri", "path"])
def test_staged_create_at_a_client_location(client, tmp_path, form):
    where = tmp_path / f"elsewhere-{form}" / "tbl"
    location = f"file://{where}" if form == "file-uri" else str(where)
    r = stage(client, "s", location=location)
    assert r.status_code == 200, r.text
    assert os.path.isdir(where / "metadata")


def test_staged_create_in_an_object_store_makes_nothing(client, tmp_path):
    """An s3:// location is answered as before; nothing is written anywhere (no store is contacted)."""
    before = sorted(p for p, _, _ in os.walk(tmp_path))
    r = stage(client, "s", location="s3://bucket/db/s")
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["location"] == "s3://bucket/db/s"
    assert sorted(p for p, _, _ in os.walk(tmp_path)) == before


def test_refused_staged_create_makes_no_directory(client, reference):
    """The directory is made only for a staged create that was answered 200 (not for a missing namespace)."""
    warehouse = local(reference.settings.warehouse)
    r = stage(client, "s", ns="missing")
    assert r.status_code == 404, r.text
    assert not os.path.exists(os.path.join(warehouse, "missing"))


def test_staged_then_committed_table_loads(client):
    """The directory made for a staged create does not get in the way of the commit that creates the table."""
    staged = stage(client, "s").json()["metadata"]
    updates = [{"action": "assign-uuid", "uuid": staged["table-uuid"]},
               {"action": "upgrade-format-version", "format-version": staged["format-version"]},
               {"action": "add-schema", "schema": staged["schemas"][0], "last-column-id": staged["last-column-id"]},
               {"action": "set-current-schema", "schema-id": -1},
               {"action": "add-spec", "spec": staged["partition-specs"][0]},
               {"action": "set-default-spec", "spec-id": -1},
               {"action": "add-sort-order", "sort-order": staged["sort-orders"][0]},
               {"action": "set-default-sort-order", "sort-order-id": -1},
               {"action": "set-location", "location": staged["location"]}]
    r = client.post("/namespaces/db/tables/s", json={"requirements": [{"type": "assert-create"}], "updates": updates})
    assert r.status_code == 200, r.text
    metadata_location = r.json()["metadata-location"]
    assert os.path.dirname(local(metadata_location)) == os.path.join(local(staged["location"]), "metadata")
    assert os.path.isfile(local(metadata_location))
    assert client.get("/namespaces/db/tables/s").status_code == 200
