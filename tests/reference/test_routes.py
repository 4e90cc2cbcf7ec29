"""HTTP-level tests of every route of the reference catalog, and of bad inputs."""

from __future__ import annotations

import json
import os
import uuid

import uuid6

import httpx
import pytest

pytestmark = pytest.mark.timeout(120)

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
VIEW_VERSION = {"version-id": 1, "schema-id": 0, "timestamp-ms": 1700000000000, "summary": {},
                "default-namespace": ["db"],
                "representations": [{"type": "sql", "sql": "select 1 as id", "dialect": "spark"}]}


def err(resp, status, type_):
    assert resp.status_code == status, resp.text
    body = resp.json()["error"]
    assert body["type"] == type_, body
    assert body["code"] == status
    assert body["message"]
    return body


def mk_ns(client, *levels, props=None):
    r = client.post("/namespaces", json={"namespace": list(levels), "properties": props or {}})
    assert r.status_code == 200, r.text
    return r.json()


def mk_table(client, ns="db", name="t", **extra):
    r = client.post(f"/namespaces/{ns}/tables", json={"name": name, "schema": SCHEMA, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def mk_view(client, ns="db", name="v"):
    r = client.post(f"/namespaces/{ns}/views",
                    json={"name": name, "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}})
    assert r.status_code == 200, r.text
    return r.json()


def add_column(name, col_id, schema_id=1):
    return {"action": "add-schema", "last-column-id": col_id,
            "schema": {"type": "struct", "schema-id": schema_id,
                       "fields": [SCHEMA["fields"][0], {"id": col_id, "name": name, "type": "string",
                                                        "required": False}]}}


# ------------------------------------------------------------------------------------------ config / misc

def test_config(client):
    body = client.get("/config").json()
    assert body["idempotency-key-lifetime"] == "PT30M"
    assert "idempotency-key-lifetime" not in body["overrides"]
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}" in body["endpoints"]
    assert "POST /v1/{prefix}/transactions/commit" in body["endpoints"]
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan" in body["endpoints"]  # scan planning
    assert not any(e.endswith("/sign") for e in body["endpoints"])  # remote signing is not served


@pytest.mark.parametrize("deviation,where,value", [
    ("lifetime-in-overrides", "overrides", "PT30M"),
    ("lifetime-weeks", "top", "P1W"),
    ("no-discovery-rejects-key", None, None),
])
def test_config_deviations(make_reference, deviation, where, value):
    server = make_reference(deviation=deviation, prefix="wh")
    body = httpx.get(server.url + "/v1/config", timeout=10).json()
    assert body["overrides"]["prefix"] == "wh"
    if where == "overrides":
        assert body["overrides"]["idempotency-key-lifetime"] == value
        assert "idempotency-key-lifetime" not in body
    elif where == "top":
        assert body["idempotency-key-lifetime"] == value
    else:
        assert "idempotency-key-lifetime" not in body and "idempotency-key-lifetime" not in body["overrides"]


def test_no_lifetime_advertised(make_reference):
    server = make_reference(idempotency_lifetime=None)
    assert "idempotency-key-lifetime" not in httpx.get(server.url + "/v1/config", timeout=10).json()


def test_prefix_routes(make_reference):
    server = make_reference(prefix="wh")
    with httpx.Client(base_url=server.url, timeout=10) as c:
        assert c.post("/v1/wh/namespaces", json={"namespace": ["a"]}).status_code == 200
        assert c.get("/v1/wh/namespaces").json()["namespaces"] == [["a"]]
        assert c.get("/v1/namespaces").json()["namespaces"] == [["a"]]
        err(c.get("/v1/other/namespaces"), 404, "NotFoundException")


def test_unknown_route_and_method(client):
    err(client.get("/nothing/here"), 404, "NotFoundException")
    err(client.put("/namespaces"), 405, "MethodNotAllowedException")
    err(client.patch("/namespaces/db/tables/t"), 405, "MethodNotAllowedException")


def test_metrics_accepted(client):
    mk_ns(client, "db")
    mk_table(client)
    assert client.post("/namespaces/db/tables/t/metrics", json={"report-type": "scan-report"}).status_code == 204


# ------------------------------------------------------------------------------------------ namespaces

def test_namespace_lifecycle(client):
    assert mk_ns(client, "db", props={"a": "1"}) == {"namespace": ["db"], "properties": {"a": "1"}}
    err(client.post("/namespaces", json={"namespace": ["db"]}), 409, "AlreadyExistsException")
    mk_ns(client, "db", "sub")
    err(client.post("/namespaces", json={"namespace": ["nope", "x"]}), 404, "NoSuchNamespaceException")
    assert client.get("/namespaces").json() == {"namespaces": [["db"]]}
    assert client.get("/namespaces", params={"parent": "db"}).json()["namespaces"] == [["db", "sub"]]
    err(client.get("/namespaces", params={"parent": "zz"}), 404, "NoSuchNamespaceException")
    assert client.get("/namespaces/db").json() == {"namespace": ["db"], "properties": {"a": "1"}}
    assert client.get("/namespaces/db%1Fsub").json()["namespace"] == ["db", "sub"]
    assert client.head("/namespaces/db").status_code == 204
    assert client.head("/namespaces/zz").status_code == 404
    err(client.get("/namespaces/zz"), 404, "NoSuchNamespaceException")
    err(client.delete("/namespaces/db"), 409, "NamespaceNotEmptyException")  # has a child namespace
    assert client.delete("/namespaces/db%1Fsub").status_code == 204
    assert client.delete("/namespaces/db").status_code == 204
    err(client.delete("/namespaces/db"), 404, "NoSuchNamespaceException")
    assert client.get("/namespaces").json()["namespaces"] == []


def test_namespace_paging(client):
    for i in range(5):
        mk_ns(client, f"n{i}")
    first = client.get("/namespaces", params={"pageSize": 2}).json()
    assert first["namespaces"] == [["n0"], ["n1"]]
    second = client.get("/namespaces", params={"pageSize": 2, "pageToken": first["next-page-token"]}).json()
    third = client.get("/namespaces", params={"pageSize": 2, "pageToken": second["next-page-token"]}).json()
    assert second["namespaces"] == [["n2"], ["n3"]] and third["namespaces"] == [["n4"]]
    assert "next-page-token" not in third
    err(client.get("/namespaces", params={"pageToken": "abc"}), 400, "BadRequestException")
    err(client.get("/namespaces", params={"pageSize": "0"}), 400, "BadRequestException")


def test_namespace_properties(client):
    mk_ns(client, "db", props={"a": "1", "b": "2"})
    r = client.post("/namespaces/db/properties", json={"updates": {"c": "3", "a": "9"}, "removals": ["b", "zz"]})
    assert r.status_code == 200, r.text
    assert r.json() == {"updated": ["a", "c"], "removed": ["b"], "missing": ["zz"]}
    assert client.get("/namespaces/db").json()["properties"] == {"a": "9", "c": "3"}
    err(client.post("/namespaces/zz/properties", json={"updates": {}}), 404, "NoSuchNamespaceException")
    r = client.post("/namespaces/db/properties", json={"updates": {"a": "1"}, "removals": ["a"]})
    assert r.status_code == 422
    assert client.get("/namespaces/db").json()["properties"] == {"a": "9", "c": "3"}


def test_namespace_not_empty_with_table_or_view(client):
    mk_ns(client, "db")
    mk_table(client)
    err(client.delete("/namespaces/db"), 409, "NamespaceNotEmptyException")
    assert client.delete("/namespaces/db/tables/t").status_code == 204
    mk_view(client)
    err(client.delete("/namespaces/db"), 409, "NamespaceNotEmptyException")
    assert client.delete("/namespaces/db/views/v").status_code == 204
    assert client.delete("/namespaces/db").status_code == 204


@pytest.mark.parametrize("body", [
    b"{not json", b"[]", b'"x"', b'{"namespace": "db"}', b'{"namespace": []}', b'{"namespace": [""]}',
    b'{"namespace": [1]}', b'{"namespace": ["a"], "properties": {"k": 1}}', b'{"namespace": ["a"], "properties": []}',
    b"\xff\xfe",
])
def test_create_namespace_bad_bodies(client, body):
    err(client.post("/namespaces", content=body, headers={"content-type": "application/json"}),
        400, "BadRequestException")
    assert client.get("/namespaces").json()["namespaces"] == []


def test_body_too_large(make_reference):
    server = make_reference(max_body_bytes=1000)
    r = httpx.post(server.url + "/v1/namespaces", timeout=10,
                   json={"namespace": ["db"], "properties": {"k": "x" * 2000}})
    err(r, 413, "RequestTooLargeException")
    assert httpx.get(server.url + "/v1/namespaces", timeout=10).json()["namespaces"] == []


# ------------------------------------------------------------------------------------------ tables

def test_table_lifecycle(client, reference):
    mk_ns(client, "db")
    created = mk_table(client, properties={"p": "v"})
    loc = created["metadata-location"]
    assert "/db/t/metadata/00001-" in loc and loc.endswith(".metadata.json")
    assert created["metadata"]["properties"]["p"] == "v"
    assert os.path.exists(loc.replace("file://", ""))
    err(client.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}), 409, "AlreadyExistsException")
    err(client.post("/namespaces/zz/tables", json={"name": "t", "schema": SCHEMA}), 404, "NoSuchNamespaceException")
    loaded = client.get("/namespaces/db/tables/t").json()
    assert loaded["metadata-location"] == loc
    assert loaded["metadata"]["table-uuid"] == created["metadata"]["table-uuid"]
    assert client.head("/namespaces/db/tables/t").status_code == 204
    assert client.head("/namespaces/db/tables/zz").status_code == 404
    err(client.get("/namespaces/db/tables/zz"), 404, "NoSuchTableException")
    # Spark's metadata-table probe: table "snapshots" in namespace db.t
    err(client.get("/namespaces/db%1Ft/tables/snapshots"), 404, "NoSuchTableException")
    assert client.get("/namespaces/db/tables").json() == {"identifiers": [{"namespace": ["db"], "name": "t"}]}
    err(client.get("/namespaces/zz/tables"), 404, "NoSuchNamespaceException")
    assert client.delete("/namespaces/db/tables/t").status_code == 204
    err(client.delete("/namespaces/db/tables/t"), 404, "NoSuchTableException")
    assert os.path.exists(loc.replace("file://", ""))  # no purge requested: files stay


def test_table_client_locations(client, tmp_path):
    mk_ns(client, "db")
    for i, loc in enumerate([f"file:{tmp_path}/loc1", f"file://{tmp_path}/loc2", str(tmp_path / "loc3")]):
        created = mk_table(client, name=f"t{i}", location=loc)
        assert created["metadata"]["location"] == loc
        assert os.path.isdir(tmp_path / f"loc{i + 1}" / "metadata")


def test_table_paging(client):
    mk_ns(client, "db")
    for i in range(3):
        mk_table(client, name=f"t{i}")
    r = client.get("/namespaces/db/tables", params={"pageSize": 2}).json()
    assert [i["name"] for i in r["identifiers"]] == ["t0", "t1"]
    r = client.get("/namespaces/db/tables", params={"pageSize": 2, "pageToken": r["next-page-token"]}).json()
    assert [i["name"] for i in r["identifiers"]] == ["t2"] and "next-page-token" not in r


@pytest.mark.parametrize("body", [
    {"name": "t"}, {"schema": SCHEMA}, {"name": "", "schema": SCHEMA}, {"name": "t", "schema": {"type": "nope"}},
    {"name": "t", "schema": SCHEMA, "properties": {"a": 1}}, {"name": "a\x1fb", "schema": SCHEMA},
])
def test_create_table_bad_bodies(client, body):
    mk_ns(client, "db")
    err(client.post("/namespaces/db/tables", json=body), 400, "BadRequestException")
    assert client.get("/namespaces/db/tables").json()["identifiers"] == []


def test_commit_table(client):
    mk_ns(client, "db")
    created = mk_table(client)
    uuid_ = created["metadata"]["table-uuid"]
    r = client.post("/namespaces/db/tables/t", json={
        "requirements": [{"type": "assert-table-uuid", "uuid": uuid_}, {"type": "assert-current-schema-id",
                                                                        "current-schema-id": 0}],
        "updates": [{"action": "set-properties", "updates": {"k": "v"}}, add_column("c", 2),
                    {"action": "set-current-schema", "schema-id": -1}]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["metadata"]["properties"]["k"] == "v"
    assert body["metadata"]["current-schema-id"] == 1
    assert "/metadata/00002-" in body["metadata-location"]
    assert body["metadata"]["metadata-log"][-1]["metadata-file"] == created["metadata-location"]
    assert client.get("/namespaces/db/tables/t").json()["metadata-location"] == body["metadata-location"]

    # a requirement that does not hold: 409, nothing changes
    r = client.post("/namespaces/db/tables/t", json={
        "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0}],
        "updates": [{"action": "set-properties", "updates": {"k": "other"}}]})
    e = err(r, 409, "CommitFailedException")
    assert e["message"].startswith("Requirement failed")
    now = client.get("/namespaces/db/tables/t").json()
    assert now["metadata-location"] == body["metadata-location"] and now["metadata"]["properties"]["k"] == "v"

    err(client.post("/namespaces/db/tables/t", json={
        "requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
        "updates": []}), 409, "CommitFailedException")
    err(client.post("/namespaces/db/tables/zz", json={"requirements": [], "updates": []}), 404,
        "NoSuchTableException")
    err(client.post("/namespaces/db/tables/t", json={"updates": [{"action": "no-such-update"}]}), 400,
        "BadRequestException")
    err(client.post("/namespaces/db/tables/t", json={"requirements": [{"type": "assert-nothing"}]}), 400,
        "BadRequestException")
    err(client.post("/namespaces/db/tables/t", content=b"{", headers={"content-type": "application/json"}), 400,
        "BadRequestException")
    err(client.post("/namespaces/db/tables/t", json={"updates": [{"action": "set-current-schema",
                                                                  "schema-id": 42}]}), 400, "BadRequestException")
    assert client.get("/namespaces/db/tables/t").json()["metadata-location"] == body["metadata-location"]


def test_stage_create_then_commit(client):
    mk_ns(client, "db")
    staged = mk_table(client, name="s", **{"stage-create": True})
    assert "metadata-location" not in staged
    assert client.head("/namespaces/db/tables/s").status_code == 404
    meta = staged["metadata"]
    updates = [{"action": "assign-uuid", "uuid": meta["table-uuid"]},
               {"action": "upgrade-format-version", "format-version": meta["format-version"]},
               {"action": "add-schema", "schema": meta["schemas"][0], "last-column-id": meta["last-column-id"]},
               {"action": "set-current-schema", "schema-id": -1},
               {"action": "add-spec", "spec": meta["partition-specs"][0]},
               {"action": "set-default-spec", "spec-id": -1},
               {"action": "add-sort-order", "sort-order": meta["sort-orders"][0]},
               {"action": "set-default-sort-order", "sort-order-id": -1},
               {"action": "set-location", "location": meta["location"]}]
    r = client.post("/namespaces/db/tables/s", json={"requirements": [{"type": "assert-create"}], "updates": updates})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["table-uuid"] == meta["table-uuid"]
    assert client.head("/namespaces/db/tables/s").status_code == 204
    # a second assert-create commit fails: the table exists now
    err(client.post("/namespaces/db/tables/s", json={"requirements": [{"type": "assert-create"}],
                                                     "updates": updates}), 409, "CommitFailedException")


def test_drop_purge(client):
    mk_ns(client, "db")
    created = mk_table(client)
    path = created["metadata-location"].replace("file://", "")
    assert client.delete("/namespaces/db/tables/t", params={"purgeRequested": "true"}).status_code == 204
    assert not os.path.exists(path)


def test_replayed_drop_with_purge_does_not_purge_the_table_now_under_that_name(client):
    """A retried purge-drop is a replay: it must not delete the files of the table created since under the
    same name (the fast path runs the drop before it finds the key taken, then rolls it back)."""
    mk_ns(client, "db")
    mk_table(client)
    key = {"Idempotency-Key": str(uuid6.uuid7())}
    purge = {"purgeRequested": "true"}
    assert client.delete("/namespaces/db/tables/t", params=purge, headers=key).status_code == 204
    again = mk_table(client)
    replay = client.delete("/namespaces/db/tables/t", params=purge, headers=key)
    assert replay.status_code == 204 and replay.headers["idempotent-replayed"] == "true"
    assert os.path.exists(again["metadata-location"].replace("file://", ""))
    loaded = client.get("/namespaces/db/tables/t")
    assert loaded.status_code == 200 and loaded.json()["metadata-location"] == again["metadata-location"]


def test_rename_table(client):
    mk_ns(client, "db")
    mk_ns(client, "other")
    mk_table(client)
    mk_table(client, name="t2")
    ident = lambda ns, n: {"namespace": [ns], "name": n}  # noqa: E731
    err(client.post("/tables/rename", json={"source": ident("db", "zz"), "destination": ident("db", "x")}),
        404, "NoSuchTableException")
    err(client.post("/tables/rename", json={"source": ident("db", "t"), "destination": ident("nope", "x")}),
        404, "NoSuchNamespaceException")
    err(client.post("/tables/rename", json={"source": ident("db", "t"), "destination": ident("db", "t2")}),
        409, "AlreadyExistsException")
    err(client.post("/tables/rename", json={"source": ident("db", "t")}), 400, "BadRequestException")
    assert client.post("/tables/rename", json={"source": ident("db", "t"),
                                               "destination": ident("other", "moved")}).status_code == 204
    assert client.head("/namespaces/db/tables/t").status_code == 404
    assert client.head("/namespaces/other/tables/moved").status_code == 204


def test_register_and_unregister(client):
    mk_ns(client, "db")
    created = mk_table(client)
    r = client.post("/namespaces/db/tables/t/unregister")
    assert r.status_code == 200, r.text
    assert r.json()["metadata-location"] == created["metadata-location"]
    assert client.head("/namespaces/db/tables/t").status_code == 404
    err(client.post("/namespaces/db/tables/t/unregister"), 404, "NoSuchTableException")
    r = client.post("/namespaces/db/register", json={"name": "back", "metadata-location": created["metadata-location"]})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["table-uuid"] == created["metadata"]["table-uuid"]
    err(client.post("/namespaces/db/register", json={"name": "back", "metadata-location":
                                                     created["metadata-location"]}), 409, "AlreadyExistsException")
    r = client.post("/namespaces/db/register", json={"name": "back", "overwrite": True,
                                                     "metadata-location": created["metadata-location"]})
    assert r.status_code == 200
    err(client.post("/namespaces/db/register", json={"name": "x", "metadata-location": "file:///nope.json"}),
        400, "BadRequestException")
    err(client.post("/namespaces/zz/register", json={"name": "x", "metadata-location":
                                                     created["metadata-location"]}), 404, "NoSuchNamespaceException")
    err(client.post("/namespaces/db/register", json={"name": "x"}), 400, "BadRequestException")


# ------------------------------------------------------------------------------------------ transactions

def test_transaction_all_or_nothing(client):
    mk_ns(client, "db")
    a, b = mk_table(client, name="a"), mk_table(client, name="b")
    ok = {"table-changes": [
        {"identifier": {"namespace": ["db"], "name": "a"},
         "requirements": [{"type": "assert-table-uuid", "uuid": a["metadata"]["table-uuid"]}],
         "updates": [{"action": "set-properties", "updates": {"x": "1"}}]},
        {"identifier": {"namespace": ["db"], "name": "b"}, "requirements": [],
         "updates": [{"action": "set-properties", "updates": {"x": "1"}}]}]}
    assert client.post("/transactions/commit", json=ok).status_code == 204
    for n in "ab":
        assert client.get(f"/namespaces/db/tables/{n}").json()["metadata"]["properties"]["x"] == "1"
    locs = {n: client.get(f"/namespaces/db/tables/{n}").json()["metadata-location"] for n in "ab"}
    bad = json.loads(json.dumps(ok))
    bad["table-changes"][0]["updates"][0]["updates"]["x"] = "2"
    bad["table-changes"][1]["requirements"] = [{"type": "assert-table-uuid", "uuid": a["metadata"]["table-uuid"]}]
    err(client.post("/transactions/commit", json=bad), 409, "CommitFailedException")
    for n in "ab":
        assert client.get(f"/namespaces/db/tables/{n}").json()["metadata-location"] == locs[n]
    missing = {"table-changes": [{**ok["table-changes"][0]}, {"identifier": {"namespace": ["db"], "name": "zz"},
                                                               "requirements": [], "updates": []}]}
    err(client.post("/transactions/commit", json=missing), 404, "NoSuchTableException")
    assert client.get("/namespaces/db/tables/a").json()["metadata-location"] == locs["a"]
    err(client.post("/transactions/commit", json={"table-changes": []}), 400, "BadRequestException")
    err(client.post("/transactions/commit", json={"table-changes": [{"requirements": [], "updates": []}]}), 400,
        "BadRequestException")
    assert b


def test_transaction_not_atomic_deviation(make_reference):
    server = make_reference(deviation="transaction-not-atomic")
    with httpx.Client(base_url=server.url + "/v1", timeout=30) as c:
        mk_ns(c, "db")
        a = mk_table(c, name="a")
        mk_table(c, name="b")
        r = c.post("/transactions/commit", json={"table-changes": [
            {"identifier": {"namespace": ["db"], "name": "a"}, "requirements": [],
             "updates": [{"action": "set-properties", "updates": {"x": "1"}}]},
            {"identifier": {"namespace": ["db"], "name": "b"},
             "requirements": [{"type": "assert-table-uuid", "uuid": a["metadata"]["table-uuid"]}],
             "updates": [{"action": "set-properties", "updates": {"x": "1"}}]}]})
        err(r, 409, "CommitFailedException")
        # the deviation keeps the first table's change
        assert c.get("/namespaces/db/tables/a").json()["metadata"]["properties"].get("x") == "1"
        assert "x" not in c.get("/namespaces/db/tables/b").json()["metadata"]["properties"]


def test_stale_requirement_accepted_deviation(make_reference):
    server = make_reference(deviation="stale-requirement-accepted")
    with httpx.Client(base_url=server.url + "/v1", timeout=30) as c:
        mk_ns(c, "db")
        mk_table(c)
        r = c.post("/namespaces/db/tables/t", json={
            "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 7}],
            "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
        assert r.status_code == 200, r.text


# ------------------------------------------------------------------------------------------ views

def test_view_lifecycle(client):
    mk_ns(client, "db")
    mk_ns(client, "other")
    created = mk_view(client)
    meta = created["metadata"]
    assert meta["current-version-id"] == 1 and "/db/v/metadata/00001-" in created["metadata-location"]
    err(client.post("/namespaces/db/views", json={"name": "v", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}),
        409, "AlreadyExistsException")
    mk_table(client, name="tv")
    err(client.post("/namespaces/db/views", json={"name": "tv", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}),
        409, "AlreadyExistsException")
    err(client.post("/namespaces/db/tables", json={"name": "v", "schema": SCHEMA}), 409, "AlreadyExistsException")
    err(client.post("/namespaces/zz/views", json={"name": "v", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}),
        404, "NoSuchNamespaceException")
    err(client.post("/namespaces/db/views", json={"name": "w", "schema": SCHEMA}), 400, "BadRequestException")
    assert client.get("/namespaces/db/views").json() == {"identifiers": [{"namespace": ["db"], "name": "v"}]}
    assert client.get("/namespaces/db/views/v").json()["metadata"]["view-uuid"] == meta["view-uuid"]
    assert client.head("/namespaces/db/views/v").status_code == 204
    assert client.head("/namespaces/db/views/zz").status_code == 404
    err(client.get("/namespaces/db/views/zz"), 404, "NoSuchViewException")

    new_version = {**VIEW_VERSION, "version-id": 2, "schema-id": -1,
                   "representations": [{"type": "sql", "sql": "select 2 as id, 'x' as c", "dialect": "spark"}]}
    replace = {"requirements": [{"type": "assert-view-uuid", "uuid": meta["view-uuid"]}],
               "updates": [add_column("c", 2), {"action": "add-view-version", "view-version": new_version},
                           {"action": "set-current-view-version", "view-version-id": -1},
                           {"action": "set-properties", "updates": {"comment": "hi"}}]}
    r = client.post("/namespaces/db/views/v", json=replace)
    assert r.status_code == 200, r.text
    m2 = r.json()["metadata"]
    assert m2["current-version-id"] == 2 and len(m2["versions"]) == 2 and len(m2["schemas"]) == 2
    assert m2["properties"]["comment"] == "hi" and "/metadata/00002-" in r.json()["metadata-location"]
    bad = {**replace, "requirements": [{"type": "assert-view-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]}
    err(client.post("/namespaces/db/views/v", json=bad), 409, "CommitFailedException")
    err(client.post("/namespaces/db/views/v", json={"requirements": [], "updates": [{"action": "bogus"}]}),
        400, "BadRequestException")
    err(client.post("/namespaces/db/views/zz", json={"requirements": [], "updates": []}), 404, "NoSuchViewException")
    assert client.get("/namespaces/db/views/v").json()["metadata"]["current-version-id"] == 2

    ident = lambda ns, n: {"namespace": [ns], "name": n}  # noqa: E731
    err(client.post("/views/rename", json={"source": ident("db", "zz"), "destination": ident("db", "x")}),
        404, "NoSuchViewException")
    err(client.post("/views/rename", json={"source": ident("db", "v"), "destination": ident("db", "tv")}),
        409, "AlreadyExistsException")
    assert client.post("/views/rename", json={"source": ident("db", "v"),
                                              "destination": ident("other", "v2")}).status_code == 204
    loc = client.get("/namespaces/other/views/v2").json()["metadata-location"]
    assert client.delete("/namespaces/other/views/v2").status_code == 204
    err(client.delete("/namespaces/other/views/v2"), 404, "NoSuchViewException")

    r = client.post("/namespaces/db/register-view", json={"name": "again", "metadata-location": loc})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["view-uuid"] == meta["view-uuid"]
    err(client.post("/namespaces/db/register-view", json={"name": "again", "metadata-location": loc}),
        409, "AlreadyExistsException")
    err(client.post("/namespaces/db/register-view", json={"name": "x", "metadata-location": "file:///nope"}),
        400, "BadRequestException")


# ------------------------------------------------------------------------------------------ auth

def test_oauth_and_bearer(make_reference):
    server = make_reference(token="s3cret")
    base = server.url + "/v1"
    err(httpx.get(base + "/namespaces", timeout=10), 401, "NotAuthorizedException")
    err(httpx.get(base + "/namespaces", headers={"Authorization": "Bearer wrong"}, timeout=10), 401,
        "NotAuthorizedException")
    err(httpx.post(base + "/namespaces", json={"namespace": ["db"]}, timeout=10), 401, "NotAuthorizedException")
    assert httpx.get(base + "/namespaces", headers={"Authorization": "Bearer s3cret"}, timeout=10).status_code == 200
    bad = httpx.post(base + "/oauth/tokens", data={"grant_type": "client_credentials", "client_id": "c",
                                                    "client_secret": "nope"}, timeout=10)
    assert bad.status_code == 401 and bad.json()["error"] == "invalid_client"
    tok = httpx.post(base + "/oauth/tokens", data={"grant_type": "client_credentials", "client_id": "c",
                                                    "client_secret": "s3cret"}, timeout=10)
    assert tok.status_code == 200, tok.text
    token = tok.json()["access_token"]
    r = httpx.post(base + "/namespaces", json={"namespace": ["db"]}, headers={"Authorization": f"Bearer {token}"},
                   timeout=10)
    assert r.status_code == 200, r.text
    from pyiceberg.catalog import load_catalog
    cat = load_catalog("a", type="rest", uri=server.url, credential="c:s3cret")
    assert ("db",) in cat.list_namespaces()
