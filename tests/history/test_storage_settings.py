"""The kit's file reads and writes use what the catalog vends with a table plus --catalog-property."""

from __future__ import annotations

import httpx

from ctk.history.state import read_table_state
from ctk.http.client import CatalogClient
from ctk.http.endpoints import create_table_body
from ctk.target.config import TargetConfig

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
