"""ETag and If-None-Match on the reference catalog's load answers (issue 21 item 6).

The spec makes both optional: loadTable's If-None-Match "allows the server to return 304 (Not Modified) if the
metadata is current", with the ETag received in a CreateTableResponse, LoadTableResponse or
CommitTableResponse; `snapshots=refs` and `all` give different content and so "should have distinct ETags".
iceberg-js relies on them for its conditional load. The reference also tags loadView (HTTP's conditional GET).
"""

from __future__ import annotations

import uuid6

import pytest

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("db")]

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
VIEW_VERSION = {"version-id": 1, "schema-id": 0, "timestamp-ms": 1700000000000, "summary": {},
                "default-namespace": ["db"],
                "representations": [{"type": "sql", "sql": "select 1 as id", "dialect": "spark"}]}


def set_property(client, name, key, value):
    r = client.post(f"/namespaces/db/tables/{name}",
                    json={"requirements": [], "updates": [{"action": "set-properties", "updates": {key: value}}]})
    assert r.status_code == 200, r.text
    return r


def test_load_table_etag_and_304(client):
    created = client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA})
    assert created.status_code == 200, created.text
    first = client.get("/namespaces/db/tables/t")
    assert first.status_code == 200
    etag = first.headers.get("etag")
    assert etag and etag.startswith('"') and etag.endswith('"'), first.headers
    # the tag a create answer carries is the one loadTable gives for that version (a client may send either)
    assert created.headers.get("etag") == etag
    assert client.get("/namespaces/db/tables/t").headers["etag"] == etag

    unchanged = client.get("/namespaces/db/tables/t", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304
    assert unchanged.content == b""
    assert unchanged.headers["etag"] == etag
    for header in (f'"other", {etag}', f"W/{etag}", "*"):
        assert client.get("/namespaces/db/tables/t", headers={"If-None-Match": header}).status_code == 304, header
    other = client.get("/namespaces/db/tables/t", headers={"If-None-Match": '"not-this-one"'})
    assert other.status_code == 200 and other.json()["metadata-location"] == first.json()["metadata-location"]

    committed = set_property(client, "t", "k", "v")
    new_etag = committed.headers.get("etag")
    assert new_etag and new_etag != etag
    changed = client.get("/namespaces/db/tables/t", headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.json()["metadata"]["properties"]["k"] == "v"
    assert changed.headers["etag"] == new_etag
    assert client.get("/namespaces/db/tables/t", headers={"If-None-Match": new_etag}).status_code == 304


def test_snapshots_refs_has_its_own_etag(client):
    assert client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).status_code == 200
    everything = client.get("/namespaces/db/tables/t").headers["etag"]
    refs = client.get("/namespaces/db/tables/t", params={"snapshots": "refs"})
    assert refs.status_code == 200
    assert refs.headers["etag"] != everything
    assert client.get("/namespaces/db/tables/t", params={"snapshots": "all"}).headers["etag"] == everything
    # a tag names one representation: the other one's tag is not "current" for it
    assert client.get("/namespaces/db/tables/t", params={"snapshots": "refs"},
                      headers={"If-None-Match": everything}).status_code == 200
    assert client.get("/namespaces/db/tables/t", params={"snapshots": "refs"},
                      headers={"If-None-Match": refs.headers["etag"]}).status_code == 304


def test_replayed_create_carries_the_same_etag(client):
    key = str(uuid6.uuid7())
    body = {"name": "t", "schema": SCHEMA}
    first = client.post("/namespaces/db/tables", json=body, headers={"Idempotency-Key": key})
    again = client.post("/namespaces/db/tables", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == again.status_code == 200
    assert first.headers["etag"] == again.headers["etag"] == client.get("/namespaces/db/tables/t").headers["etag"]


def test_missing_or_staged_table_has_no_etag(client):
    assert client.get("/namespaces/db/tables/nope", headers={"If-None-Match": "*"}).status_code == 404
    staged = client.post("/namespaces/db/tables", json={"name": "s", "schema": SCHEMA, "stage-create": True})
    assert staged.status_code == 200
    assert "etag" not in staged.headers       # no metadata file yet: no version to name
    head = client.head("/namespaces/db/tables/nope")
    assert head.status_code == 404


def test_recreated_table_does_not_match_the_old_etag(client):
    """A table dropped and created again under the same name is another version: the old tag does not match."""
    assert client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).status_code == 200
    etag = client.get("/namespaces/db/tables/t").headers["etag"]
    assert client.delete("/namespaces/db/tables/t").status_code == 204
    assert client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).status_code == 200
    assert client.get("/namespaces/db/tables/t", headers={"If-None-Match": etag}).status_code == 200


def test_load_view_etag_and_304(client):
    r = client.post("/namespaces/db/views",
                    json={"name": "v", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}})
    assert r.status_code == 200, r.text
    loaded = client.get("/namespaces/db/views/v")
    etag = loaded.headers.get("etag")
    assert loaded.status_code == 200 and etag
    unchanged = client.get("/namespaces/db/views/v", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    replaced = client.post("/namespaces/db/views/v", json={
        "requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
    assert replaced.status_code == 200, replaced.text
    changed = client.get("/namespaces/db/views/v", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.json()["metadata"]["properties"]["k"] == "v"
    assert changed.headers["etag"] != etag


def test_register_answer_carries_the_load_etag(client):
    created = client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA})
    location = created.json()["metadata-location"]
    registered = client.post("/namespaces/db/register", json={"name": "again", "metadata-location": location})
    assert registered.status_code == 200, registered.text
    etag = registered.headers.get("etag")
    assert etag and etag == client.get("/namespaces/db/tables/again").headers["etag"]
    assert client.get("/namespaces/db/tables/again", headers={"If-None-Match": etag}).status_code == 304
