"""Fixtures for history tests: a reference catalog of our own and a table (id long, v string) in it."""

import pytest

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "v", "required": False, "type": "string"}]}


@pytest.fixture
def ref_server(tmp_path):
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "warehouse"), control_api=True)) as srv:
        yield srv


@pytest.fixture
def ref_client(ref_server):
    from ctk.http.client import CatalogClient
    from ctk.target.config import TargetConfig

    with CatalogClient(TargetConfig(ref_server.url, timeout=10)) as c:
        yield c


@pytest.fixture
def table(ref_client):
    """("db",), "t": a fresh empty table in the reference catalog."""
    ex = ref_client.request("POST", "namespaces", json={"namespace": ["db"], "properties": {}})
    assert ex.status == 200, ex.render()
    ex = ref_client.request("POST", "namespaces/db/tables", json={"name": "t", "schema": SCHEMA})
    assert ex.status == 200, ex.render()
    return ("db",), "t"
