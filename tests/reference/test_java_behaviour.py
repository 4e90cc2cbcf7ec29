"""The reference catalog answers as Iceberg Java's REST catalog does where its compatibility kit (RCK) looks:
format-version 3 tables, `/` in names, ids assigned by the metadata builder, one query per view dialect, and
the wording of requirement failures and name conflicts. All through the HTTP API."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("db")]

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "type": "long", "required": False},
                     {"id": 2, "name": "data", "type": "string", "required": False}]}
DEFAULTS = {"type": "struct", "schema-id": 0,
            "fields": [{"id": 7, "name": "col", "type": "int", "required": True,
                        "initial-default": 12, "write-default": 10}]}
VIEW_VERSION = {"version-id": 1, "schema-id": 5, "timestamp-ms": 1700000000000, "summary": {"engine-name": "t"},
                "default-namespace": ["db"],
                "representations": [{"type": "sql", "sql": "select 1 as id", "dialect": "spark"}]}


def ok(resp, status=200):
    assert resp.status_code == status, resp.text
    return resp.json() if resp.content else None


def err(resp, status, type_, message_part):
    assert resp.status_code == status, resp.text
    error = resp.json()["error"]
    assert error["type"] == type_, error
    assert message_part in error["message"], error
    return error["message"]


def create(client, name="t", schema=SCHEMA, ns="db", **extra):
    return ok(client.post(f"/namespaces/{ns}/tables", json={"name": name, "schema": schema, **extra}))


def commit(client, name, updates, requirements=(), ns="db"):
    return client.post(f"/namespaces/{ns}/tables/{name}",
                       json={"requirements": list(requirements), "updates": list(updates)})


def snapshot(snapshot_id, first_row_id=None, added_rows=None, sequence_number=1, parent=None):
    snap = {"snapshot-id": snapshot_id, "sequence-number": sequence_number, "timestamp-ms": 1700000000000 + snapshot_id,
            "manifest-list": f"file:///nowhere/snap-{snapshot_id}.avro", "summary": {"operation": "append"},
            "schema-id": 0}
    if parent is not None:
        snap["parent-snapshot-id"] = parent
    if first_row_id is not None:
        snap["first-row-id"] = first_row_id
    if added_rows is not None:
        snap["added-rows"] = added_rows
    return snap


def append(snap):
    return [{"action": "add-snapshot", "snapshot": snap},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snap["snapshot-id"]}]


# ---------------------------------------------------------------------------------------------- 1: format version 3

def test_v3_table_is_created_with_next_row_id_and_default_values(client):
    body = create(client, schema=DEFAULTS, properties={"format-version": "3", "owner": "me"})
    meta = body["metadata"]
    assert meta["format-version"] == 3 and meta["next-row-id"] == 0
    assert meta["properties"] == {"owner": "me"}            # format-version is not a stored property
    field = meta["schemas"][0]["fields"][0]
    assert (field["id"], field["initial-default"], field["write-default"]) == (1, 12, 10)
    loaded = ok(client.get("/namespaces/db/tables/t"))
    assert loaded["metadata"] == meta and loaded["metadata-location"] == body["metadata-location"]


def test_v3_staged_create(client):
    body = create(client, schema=DEFAULTS, properties={"format-version": "3"}, **{"stage-create": True})
    assert body["metadata"]["format-version"] == 3 and body["metadata"]["next-row-id"] == 0
    assert "metadata-location" not in body
    assert client.head("/namespaces/db/tables/t").status_code == 404


def test_v3_create_transaction_then_commits_track_row_ids(client):
    staged = create(client, schema=DEFAULTS, properties={"format-version": "3"}, **{"stage-create": True})["metadata"]
    updates = [{"action": "assign-uuid", "uuid": staged["table-uuid"]},
               {"action": "upgrade-format-version", "format-version": 3},
               {"action": "add-schema", "schema": staged["schemas"][0]},
               {"action": "set-current-schema", "schema-id": -1},
               {"action": "add-spec", "spec": staged["partition-specs"][0]},
               {"action": "set-default-spec", "spec-id": -1},
               {"action": "add-sort-order", "sort-order": staged["sort-orders"][0]},
               {"action": "set-default-sort-order", "sort-order-id": -1},
               {"action": "set-location", "location": staged["location"]},
               *append(snapshot(1, first_row_id=0, added_rows=2))]
    meta = ok(commit(client, "t", updates, [{"type": "assert-create"}]))["metadata"]
    assert meta["format-version"] == 3 and meta["next-row-id"] == 2
    assert meta["schemas"][0]["fields"][0]["initial-default"] == 12
    assert meta["snapshots"][0]["first-row-id"] == 0 and meta["snapshots"][0]["added-rows"] == 2

    meta = ok(commit(client, "t", append(snapshot(2, first_row_id=2, added_rows=3, sequence_number=2, parent=1))))
    assert meta["metadata"]["next-row-id"] == 5
    # a snapshot written against an older table: its first row id is behind, a conflict the client may retry
    err(commit(client, "t", append(snapshot(3, first_row_id=4, added_rows=1, sequence_number=3, parent=2))),
        409, "CommitFailedException", "first-row-id is behind table next-row-id: 4 < 5")
    err(commit(client, "t", append(snapshot(4, sequence_number=3, parent=2))),
        400, "BadRequestException", "first-row-id is null")
    assert ok(client.get("/namespaces/db/tables/t"))["metadata"]["next-row-id"] == 5


def test_upgrade_to_v3_starts_row_ids(client):
    create(client)
    meta = ok(commit(client, "t", [{"action": "upgrade-format-version", "format-version": 3}]))["metadata"]
    assert meta["format-version"] == 3 and meta["next-row-id"] == 0
    err(commit(client, "t", [{"action": "upgrade-format-version", "format-version": 2}]),
        400, "BadRequestException", "Cannot downgrade v3 table to v2")


@pytest.mark.parametrize("properties, message", [
    ({"format-version": "2"}, "Invalid initial default for col"),
    ({"format-version": "4"}, "Unsupported format version: v4"),
    ({"format-version": "three"}, "Invalid format-version"),
])
def test_invalid_versions_are_400_not_500(client, properties, message):
    resp = client.post("/namespaces/db/tables", json={"name": "t", "schema": DEFAULTS, "properties": properties})
    err(resp, 400, "BadRequestException", message)
    assert client.head("/namespaces/db/tables/t").status_code == 404


# ---------------------------------------------------------------------------------------------- 2: `/` in names

def test_namespace_with_slash_can_be_loaded_and_dropped(client):
    ok(client.post("/namespaces", json={"namespace": ["new/db"]}))
    assert ["new/db"] in ok(client.get("/namespaces"))["namespaces"]
    assert ok(client.get("/namespaces/new%2Fdb"))["namespace"] == ["new/db"]
    assert client.head("/namespaces/new%2Fdb").status_code == 204
    ok(client.post("/namespaces/new%2Fdb/properties", json={"updates": {"a": "b"}}))
    assert client.delete("/namespaces/new%2Fdb").status_code == 204
    err(client.get("/namespaces/new%2Fdb"), 404, "NoSuchNamespaceException", "Namespace does not exist: new/db")
    assert client.head("/namespaces/new%2Fdb").status_code == 404


def test_nested_namespace_level_with_slash(client):
    ok(client.post("/namespaces", json={"namespace": ["db", "a/b"]}))
    assert ok(client.get("/namespaces", params={"parent": "db"}))["namespaces"] == [["db", "a/b"]]
    assert ok(client.get("/namespaces/db%1Fa%2Fb"))["namespace"] == ["db", "a/b"]


def test_table_and_view_with_slash(client):
    body = create(client, name="tab/le")
    assert ok(client.get("/namespaces/db/tables"))["identifiers"] == [{"namespace": ["db"], "name": "tab/le"}]
    assert ok(client.get("/namespaces/db/tables/tab%2Fle"))["metadata-location"] == body["metadata-location"]
    ok(commit(client, "tab%2Fle", [{"action": "set-properties", "updates": {"k": "v"}}]))
    assert client.delete("/namespaces/db/tables/tab%2Fle").status_code == 204
    assert client.head("/namespaces/db/tables/tab%2Fle").status_code == 404

    ok(client.post("/namespaces/db/views", json={"name": "vi/ew", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}))
    assert ok(client.get("/namespaces/db/views/vi%2Few"))["metadata"]["current-version-id"] == 1
    assert client.delete("/namespaces/db/views/vi%2Few").status_code == 204


# ---------------------------------------------------------------------------------------------- 3: ids

ORDER_BY_ID = {"order-id": 1, "fields": [{"source-id": 1, "transform": "identity", "direction": "asc",
                                          "null-order": "nulls-first"}]}
ORDER_BY_DATA = {"order-id": 1, "fields": [{"source-id": 2, "transform": "identity", "direction": "desc",
                                            "null-order": "nulls-last"}]}


def test_added_sort_order_gets_a_fresh_id_and_minus_one_is_the_last_added(client):
    meta = create(client, **{"write-order": ORDER_BY_ID})["metadata"]
    assert [o["order-id"] for o in meta["sort-orders"]] == [1]
    # the client's id 1 is taken by another order: the new one is 2 (today's pyiceberg answer: 400)
    meta = ok(commit(client, "t", [{"action": "add-sort-order", "sort-order": ORDER_BY_DATA},
                                   {"action": "set-default-sort-order", "sort-order-id": -1}]))["metadata"]
    assert [o["order-id"] for o in meta["sort-orders"]] == [1, 2] and meta["default-sort-order-id"] == 2
    # an order equal to one there is that one: nothing added
    meta = ok(commit(client, "t", [{"action": "add-sort-order", "sort-order": {**ORDER_BY_ID, "order-id": 9}},
                                   {"action": "set-default-sort-order", "sort-order-id": 1}]))["metadata"]
    assert [o["order-id"] for o in meta["sort-orders"]] == [1, 2] and meta["default-sort-order-id"] == 1
    # ... and was not added by this commit: -1 has nothing to name
    err(commit(client, "t", [{"action": "add-sort-order", "sort-order": ORDER_BY_DATA},
                             {"action": "set-default-sort-order", "sort-order-id": -1}]),
        400, "BadRequestException", "no sort order has been added")


def test_added_spec_gets_a_fresh_id(client):
    create(client)
    spec = {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "id_bucket",
                                      "transform": "bucket[16]"}]}
    meta = ok(commit(client, "t", [{"action": "add-spec", "spec": spec},
                                   {"action": "set-default-spec", "spec-id": -1}]))["metadata"]
    assert [s["spec-id"] for s in meta["partition-specs"]] == [0, 1]
    assert meta["default-spec-id"] == 1 and meta["last-partition-id"] == 1000
    # the same fields again, under yet another id: reused
    meta = ok(commit(client, "t", [{"action": "add-spec", "spec": {**spec, "spec-id": 7}},
                                   {"action": "set-default-spec", "spec-id": 0}]))["metadata"]
    assert [s["spec-id"] for s in meta["partition-specs"]] == [0, 1] and meta["default-spec-id"] == 0


def test_added_schema_gets_a_fresh_id(client):
    create(client)
    wider = {**SCHEMA, "schema-id": 0,
             "fields": [*SCHEMA["fields"], {"id": 3, "name": "extra", "type": "int", "required": False}]}
    meta = ok(commit(client, "t", [{"action": "add-schema", "schema": wider},
                                   {"action": "set-current-schema", "schema-id": -1}]))["metadata"]
    assert [s["schema-id"] for s in meta["schemas"]] == [0, 1]
    assert meta["current-schema-id"] == 1 and meta["last-column-id"] == 3


def test_commit_that_changes_nothing_writes_no_metadata(client):
    body = create(client, **{"write-order": ORDER_BY_ID})
    after = ok(commit(client, "t", [{"action": "add-sort-order", "sort-order": ORDER_BY_ID},
                                    {"action": "set-default-sort-order", "sort-order-id": 1}]))
    assert after["metadata-location"] == body["metadata-location"]


def test_new_view_schema_is_zero(client):
    body = ok(client.post("/namespaces/db/views", json={"name": "v", "schema": {**SCHEMA, "schema-id": 5},
                                                        "view-version": VIEW_VERSION, "properties": {}}))
    meta = body["metadata"]
    assert [s["schema-id"] for s in meta["schemas"]] == [0]
    assert meta["versions"][0]["schema-id"] == 0 and meta["current-version-id"] == 1


def test_view_schema_reused_and_minus_one(client):
    meta = ok(client.post("/namespaces/db/views", json={"name": "v", "schema": SCHEMA,
                                                        "view-version": VIEW_VERSION, "properties": {}}))["metadata"]
    version = {**VIEW_VERSION, "schema-id": -1,
               "representations": [{"type": "sql", "sql": "select 2 as id", "dialect": "spark"}]}
    other = {**SCHEMA, "schema-id": 9, "fields": SCHEMA["fields"][:1]}
    meta = ok(client.post("/namespaces/db/views/v", json={"requirements": [], "updates": [
        {"action": "add-schema", "schema": other}, {"action": "add-view-version", "view-version": version},
        {"action": "set-current-view-version", "view-version-id": -1}]}))["metadata"]
    assert [s["schema-id"] for s in meta["schemas"]] == [0, 1]
    assert meta["current-version-id"] == 2 and meta["versions"][-1]["schema-id"] == 1
    # a schema equal to one there is not "added": -1 names nothing
    err(client.post("/namespaces/db/views/v", json={"requirements": [], "updates": [
        {"action": "add-schema", "schema": SCHEMA}, {"action": "add-view-version", "view-version": version}]}),
        400, "ValidationException", "no schema has been added")    # Java: ValidationException.check


# ---------------------------------------------------------------------------------------------- 4: dialects

def test_two_queries_for_one_dialect_are_refused(client):
    twice = {**VIEW_VERSION, "representations": [{"type": "sql", "sql": "select 1", "dialect": "trino"},
                                                 {"type": "sql", "sql": "select 2", "dialect": "Trino"}]}
    err(client.post("/namespaces/db/views", json={"name": "v", "schema": SCHEMA, "view-version": twice, "properties": {}}),
        400, "IllegalArgumentException", "Invalid view version: Cannot add multiple queries for dialect trino")
    assert client.head("/namespaces/db/views/v").status_code == 404

    ok(client.post("/namespaces/db/views", json={"name": "v", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}))
    err(client.post("/namespaces/db/views/v", json={"requirements": [], "updates": [
        {"action": "add-view-version", "view-version": {**twice, "schema-id": 0}},
        {"action": "set-current-view-version", "view-version-id": -1}]}),
        400, "IllegalArgumentException", "Cannot add multiple queries for dialect trino")
    assert ok(client.get("/namespaces/db/views/v"))["metadata"]["current-version-id"] == 1


# ---------------------------------------------------------------------------------------------- 5: wording

def test_requirement_failures_are_worded_as_java(client):
    meta = create(client)["metadata"]
    ok(commit(client, "t", [{"action": "add-schema", "schema": {**SCHEMA, "fields": SCHEMA["fields"][:1]}},
                            {"action": "set-current-schema", "schema-id": -1},
                            {"action": "add-spec", "spec": {"spec-id": 1, "fields": [
                                {"source-id": 1, "field-id": 1000, "name": "b", "transform": "bucket[4]"}]}},
                            {"action": "set-default-spec", "spec-id": -1}]))
    cases = [
        ({"type": "assert-current-schema-id", "current-schema-id": 0}, "current schema changed: expected id 0 != 1"),
        ({"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"},
         f"UUID does not match: expected {meta['table-uuid']} != 00000000-0000-0000-0000-000000000000"),
        ({"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1},
         "last assigned field id changed: expected id 1 != 2"),
        ({"type": "assert-default-spec-id", "default-spec-id": 0}, "default partition spec changed: expected id 0 != 1"),
        ({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
         "last assigned partition id changed: expected id 999 != 1000"),
        ({"type": "assert-default-sort-order-id", "default-sort-order-id": 3},
         "default sort order changed: expected id 3 != 0"),
        ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 5}, "branch or tag main is missing"),
        ({"type": "assert-create"}, "table already exists"),
    ]
    for requirement, wording in cases:
        message = err(commit(client, "t", [{"action": "set-properties", "updates": {"x": "y"}}], [requirement]),
                      409, "CommitFailedException", wording)
        assert message.startswith("Requirement failed: "), message


def test_name_conflicts_are_worded_as_java(client):
    create(client, name="t")
    ok(client.post("/namespaces/db/views", json={"name": "v", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}))
    ok(client.post("/namespaces/db/views", json={"name": "w", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}))
    err(client.post("/namespaces/db/tables", json={"name": "v", "schema": SCHEMA}),
        409, "AlreadyExistsException", "View with same name already exists: db.v")
    err(client.post("/namespaces/db/views", json={"name": "t", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": {}}),
        409, "AlreadyExistsException", "Table with same name already exists: db.t")
    # a create transaction over a view
    err(commit(client, "v", [{"action": "upgrade-format-version", "format-version": 2},
                             {"action": "add-schema", "schema": SCHEMA},
                             {"action": "set-current-schema", "schema-id": -1},
                             {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                             {"action": "set-default-spec", "spec-id": -1},
                             {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                             {"action": "set-default-sort-order", "sort-order-id": -1},
                             {"action": "set-location", "location": "file:///tmp/nowhere-v"}],
               [{"type": "assert-create"}]),
        409, "AlreadyExistsException", "View with same name already exists: db.v")
    rename = {"source": {"namespace": ["db"], "name": "v"}, "destination": {"namespace": ["db"], "name": "w"}}
    err(client.post("/views/rename", json=rename), 409, "AlreadyExistsException",
        "Cannot rename db.v to db.w. View already exists")
    rename = {"source": {"namespace": ["db"], "name": "v"}, "destination": {"namespace": ["db"], "name": "t"}}
    err(client.post("/views/rename", json=rename), 409, "AlreadyExistsException",
        "Cannot rename db.v to db.t. Table already exists")
    rename = {"source": {"namespace": ["db"], "name": "t"}, "destination": {"namespace": ["db"], "name": "v"}}
    err(client.post("/tables/rename", json=rename), 409, "AlreadyExistsException",
        "Cannot rename db.t to db.v. View already exists")


def test_view_uuid_requirement_wording(client):
    meta = ok(client.post("/namespaces/db/views", json={"name": "v", "schema": SCHEMA,
                                                        "view-version": VIEW_VERSION, "properties": {}}))["metadata"]
    other = "00000000-0000-0000-0000-000000000001"
    err(client.post("/namespaces/db/views/v", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": other}],
        "updates": [{"action": "set-properties", "updates": {"a": "b"}}]}),
        409, "CommitFailedException",
        f"Requirement failed: view UUID does not match: expected {meta['view-uuid']} != {other}")


def test_ref_requirement_wording(client):
    create(client)
    ok(commit(client, "t", append(snapshot(1))))
    for snapshot_id, wording in ((99, "branch main has changed: expected id 99 != 1"),
                                 (None, "branch main was created concurrently")):
        err(commit(client, "t", [{"action": "set-properties", "updates": {"x": "y"}}],
                   [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snapshot_id}]),
            409, "CommitFailedException", f"Requirement failed: {wording}")


def test_schema_change_with_default_values(client):
    create(client, name="v2")
    create(client, name="v3", properties={"format-version": "3"})
    wider = {**SCHEMA, "fields": [*SCHEMA["fields"], {"id": 3, "name": "n", "type": "int", "required": False,
                                                      "initial-default": 1, "write-default": 2}]}
    updates = [{"action": "add-schema", "schema": wider}, {"action": "set-current-schema", "schema-id": -1}]
    err(commit(client, "v2", updates), 400, "BadRequestException", "Invalid initial default for n")
    meta = ok(commit(client, "v3", updates))["metadata"]
    assert meta["schemas"][-1]["fields"][-1]["initial-default"] == 1
    assert meta["schemas"][-1]["fields"][-1]["write-default"] == 2 and meta["current-schema-id"] == 1


def test_slash_routing_under_a_prefix(make_reference):
    server = make_reference(prefix="cat")
    with httpx.Client(base_url=server.url + "/v1/cat", timeout=30) as c:
        ok(c.post("/namespaces", json={"namespace": ["a/b"]}))
        create(c, name="x/y", ns="a%2Fb")
        assert ok(c.get("/namespaces/a%2Fb/tables/x%2Fy"))["metadata"]["format-version"] == 2
        err(c.get("/namespaces/a%2Fb/nothing/x%2Fy"), 404, "NotFoundException", "/namespaces/a%2Fb/nothing/x%2Fy")
        assert c.delete("/namespaces/a%2Fb/tables/x%2Fy").status_code == 204
        assert c.delete("/namespaces/a%2Fb").status_code == 204


@pytest.mark.parametrize("update", [
    {"action": "add-spec", "spec": {"spec-id": 0, "fields": [{"source-id": 99, "field-id": 1000, "name": "z",
                                                               "transform": "identity"}]}},
    {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
        {"source-id": 99, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}},
])
def test_spec_or_order_on_an_unknown_column_is_refused(client, update):
    body = create(client)
    err(commit(client, "t", [update]), 400, "BadRequestException", "Cannot find source column")
    assert ok(client.get("/namespaces/db/tables/t"))["metadata-location"] == body["metadata-location"]


def test_removing_a_missing_property_is_no_error(client):
    create(client, properties={"a": "1", "b": "2"})
    meta = ok(commit(client, "t", [{"action": "remove-properties", "removals": ["a", "missing"]}]))["metadata"]
    assert meta["properties"] == {"b": "2"}


def test_removing_ids_that_are_gone_is_no_error(client):
    """A concurrent expiry may have removed them already: Java's builder ignores unknown ids."""
    create(client)
    ok(commit(client, "t", append(snapshot(1))))
    before = ok(client.get("/namespaces/db/tables/t"))
    after = ok(commit(client, "t", [{"action": "remove-snapshots", "snapshot-ids": [77]},
                                    {"action": "remove-partition-specs", "spec-ids": [5]},
                                    {"action": "remove-schemas", "schema-ids": [9]},
                                    {"action": "remove-statistics", "snapshot-id": 1},
                                    {"action": "remove-partition-statistics", "snapshot-id": 1}]))
    assert after["metadata-location"] == before["metadata-location"]       # nothing changed, nothing written
    err(commit(client, "t", [{"action": "remove-schemas", "schema-ids": [0]}]), 400, "BadRequestException",
        "Cannot remove current schema")


def test_crash_recovery_of_a_commit_to_a_table_with_slashes(reference, client):
    """A keyed commit whose record was left in progress (crash before finalize) is reconciled from the state of
    the table it names, also when its namespace and name hold `/` (the canonical resource encodes them)."""
    import uuid6

    ok(client.post("/namespaces", json={"namespace": ["new/db"]}))
    create(client, name="tab/le", ns="new%2Fdb")
    with httpx.Client(base_url=reference.url, timeout=30) as control:
        control.post("/_ctk/reset")
        control.post("/_ctk/faults", json={"action": "crash-before-finalize", "operation": "updateTable"})
        key = str(uuid6.uuid7())
        body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
                "updates": append(snapshot(11))}
        send = lambda: client.post("/namespaces/new%2Fdb/tables/tab%2Fle", json=body,  # noqa: E731
                                   headers={"Idempotency-Key": key})
        assert send().status_code == 500
        retry = send()
        assert retry.status_code == 200, retry.text
        assert control.get("/_ctk/executions").json()["total"] == 1          # reconciled, not executed again
    snaps = ok(client.get("/namespaces/new%2Fdb/tables/tab%2Fle"))["metadata"]["snapshots"]
    assert [s["snapshot-id"] for s in snaps] == [11]
