"""The reference's views as Iceberg Java's ViewMetadata.Builder and BaseViewOperations make them (issue 28 item 9):
metadata files under write.metadata.path, versions expired by version.history.num-entries, arguments the builder
refuses answered 400 IllegalArgumentException (the type a Java client raises as IllegalArgumentException again),
and a dropped view's file kept with gc.enabled=false where dropping deletes metadata."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ctk.checks.semantics.views import SCHEMA, create_body, rep, version

NS = ("db",)
SCHEMA0 = {**SCHEMA, "schema-id": 0}


def _create(client, name, **kw):
    r = client.post("/namespaces/db/views", json=create_body(NS, name, schema=SCHEMA0, **kw))
    assert r.status_code == 200, r.text
    return r.json()


def _commit(client, name, updates, uuid=None):
    reqs = [{"type": "assert-view-uuid", "uuid": uuid}] if uuid else []
    return client.post(f"/namespaces/db/views/{name}", json={"identifier": {"namespace": list(NS), "name": name},
                                                             "requirements": reqs, "updates": updates})


def _new_version(sql, vid):
    return [{"action": "add-view-version",
             "view-version": version(NS, [rep("spark", sql)], vid, 0, operation="replace")},
            {"action": "set-current-view-version", "view-version-id": -1}]


def _file(location: str) -> Path:
    return Path(urlsplit(location).path)


@pytest.mark.usefixtures("db")
def test_metadata_files_go_under_write_metadata_path(client, tmp_path):
    custom = (tmp_path / "custom-metadata").as_uri()
    made = _create(client, "v", properties={"write.metadata.path": custom})
    assert made["metadata-location"].startswith(custom + "/00001-")
    r = _commit(client, "v", _new_version("select 2", 2))
    assert r.status_code == 200 and r.json()["metadata-location"].startswith(custom + "/00002-")
    assert _file(r.json()["metadata-location"]).exists()
    plain = _create(client, "w")
    assert "/metadata/00001-" in plain["metadata-location"]


@pytest.mark.usefixtures("db")
def test_versions_expire_by_version_history_num_entries(client):
    _create(client, "v", properties={"version.history.num-entries": "2"})
    for vid in (2, 3, 4):
        assert _commit(client, "v", _new_version(f"select {vid}", vid)).status_code == 200
    m = client.get("/namespaces/db/views/v").json()["metadata"]
    assert m["current-version-id"] == 4
    assert sorted(v["version-id"] for v in m["versions"]) == [3, 4]
    assert [e["version-id"] for e in m["version-log"]] == [3, 4]
    # the default keeps 10
    _create(client, "w")
    for vid in range(2, 13):
        assert _commit(client, "w", _new_version(f"select {vid}", vid)).status_code == 200
    m = client.get("/namespaces/db/views/w").json()["metadata"]
    assert sorted(v["version-id"] for v in m["versions"]) == list(range(3, 13))


@pytest.mark.usefixtures("db")
def test_invalid_view_arguments_are_illegal_argument_400s(client):
    r = client.post("/namespaces/db/views", json=create_body(NS, "v", [rep("trino"), rep("TRINO")], SCHEMA0))
    assert r.status_code == 400 and r.json()["error"]["type"] == "IllegalArgumentException"
    r = client.post("/namespaces/db/views", json=create_body(NS, "v", schema=SCHEMA0,
                                                             properties={"version.history.num-entries": "0"}))
    assert r.status_code == 400 and r.json()["error"]["type"] == "IllegalArgumentException"
    made = _create(client, "v")
    before = made["metadata-location"]
    for updates in ([{"action": "add-view-version", "view-version": version(NS, [rep("a"), rep("a")], 2, 0)}],
                    [{"action": "add-view-version", "view-version": version(NS, [rep("a")], 2, 99)}],
                    [{"action": "remove-properties", "removals": [None]}],
                    [{"action": "set-properties", "updates": {"k": None}}],
                    [{"action": "set-location", "location": None}]):
        r = _commit(client, "v", updates)
        assert r.status_code == 400 and r.json()["error"]["type"] == "IllegalArgumentException", (updates, r.text)
    assert client.get("/namespaces/db/views/v").json()["metadata-location"] == before


def test_drop_deleting_metadata_keeps_a_view_with_gc_disabled(make_reference):
    import httpx

    server = make_reference(variant="drop-deletes-metadata")
    with httpx.Client(base_url=server.url + "/v1", timeout=30) as client:
        assert client.post("/namespaces", json={"namespace": ["db"]}).status_code == 200
        kept = _create(client, "kept", properties={"gc.enabled": "false"})["metadata-location"]
        gone = _create(client, "gone")["metadata-location"]
        for name in ("kept", "gone"):
            assert client.delete(f"/namespaces/db/views/{name}").status_code == 204
        assert not _file(gone).exists()          # deleted before the drop answered
        assert _file(kept).exists()
        r = client.post("/namespaces/db/register-view", json={"name": "kept", "metadata-location": kept})
        assert r.status_code == 200, r.text
