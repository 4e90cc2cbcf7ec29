"""Fixtures for history tests: a reference catalog of our own and a table (id long, v string) in it."""

import pytest

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "v", "required": False, "type": "string"}]}


@pytest.fixture
def table(ref_client):
    """("db",), "t": a fresh empty table in the reference catalog."""
    ex = ref_client.request("POST", "namespaces", json={"namespace": ["db"], "properties": {}})
    assert ex.status == 200, ex.render()
    ex = ref_client.request("POST", "namespaces/db/tables", json={"name": "t", "schema": SCHEMA})
    assert ex.status == 200, ex.render()
    return ("db",), "t"
