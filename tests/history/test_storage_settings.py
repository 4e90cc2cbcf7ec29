"""The kit's file reads and writes use what the catalog vends with a table plus --catalog-property."""

from __future__ import annotations

import httpx

from ctk.history.state import read_table_state
from ctk.client.transport import CatalogClient
from ctk.catalog import create_table_body
from ctk.client.config import TargetConfig

LOADED = {"metadata-location": "s3://b/db/t/metadata/1.json",
          "metadata": {"format-version": 2, "location": "s3://b/db/t"},
          "config": {"s3.endpoint": "http://127.0.0.1:9000", "s3.access-key-id": "config-key"},
          "storage-credentials": [{"prefix": "s3://b/db/", "config": {"s3.access-key-id": "vended-key",
                                                                     "s3.secret-access-key": "vended-secret"}}]}


def _client(body):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=body)

    return CatalogClient(TargetConfig("http://127.0.0.1:1"), transport=httpx.MockTransport(handler))


def test_table_state_carries_vended_settings_with_the_users_on_top():
    client = _client(LOADED)
    client.storage_properties = {"s3.region": "us-east-1", "s3.secret-access-key": "mine"}
    state = read_table_state(client, ("db",), "t")
    assert state.storage.properties == {"s3.endpoint": "http://127.0.0.1:9000", "s3.access-key-id": "vended-key",
                                        "s3.secret-access-key": "mine", "s3.region": "us-east-1"}
    assert state.storage.allow_remote is False
    state.storage.check("s3://b/db/t/metadata/snap-1.avro")   # a loopback endpoint: allowed
    client.storage_allow_remote = True
    assert read_table_state(client, ("db",), "t").storage.allow_remote is True
    client.close()


def test_create_table_body_is_the_java_clients():
    body = create_table_body("t", {"k": "v"})
    assert body["name"] == "t" and "location" not in body
    assert body["schema"]["schema-id"] == 0 and body["schema"]["identifier-field-ids"] == []
    assert body["partition-spec"] == {"spec-id": 0, "fields": []}
    assert body["write-order"] == {"order-id": 0, "fields": []}
    assert body["stage-create"] is False and body["properties"] == {"k": "v"}


class _BrokenStorage:
    """A FileIO whose storage answers nothing (connection refused)."""

    properties: dict = {}

    def new_input(self, path):
        raise OSError(f"connection refused while reading {path}")

    def new_output(self, path):
        raise OSError(f"connection refused while writing {path}")

    def delete(self, path):
        raise OSError("connection refused")


def test_storage_that_does_not_answer_is_unreadable_not_corrupt(ref_client, table, monkeypatch):
    from ctk.history import integrity
    from ctk.history.writer import stage_append

    ns, name = table
    staged = stage_append(ref_client, ns, name, marker="m")
    assert ref_client.request("POST", staged.path, json=staged.body).status == 200
    state = read_table_state(ref_client, ns, name)
    assert integrity.check_integrity(state).ok           # intact with the real storage
    monkeypatch.setattr(integrity, "_io_for", lambda *a, **kw: _BrokenStorage())
    res = integrity.check_integrity(state, count_rows=True)
    assert not res.ok and not res.missing                 # nothing declared missing
    assert res.error.startswith("storage unreadable: cannot tell whether") and "connection refused" in res.error


def test_a_failed_write_is_a_stage_error(ref_client, table, monkeypatch):
    import pytest

    from ctk.history import writer
    from ctk.client.storage import StorageSettings

    class Settings(StorageSettings):
        def file_io(self, location, what="table files"):
            return _BrokenStorage()

    monkeypatch.setattr(writer, "settings_for", lambda *a, **kw: Settings())
    with pytest.raises(writer.StageError, match="writing the files of table db.t failed: OSError"):
        writer.stage_append(ref_client, *table, marker="m")
