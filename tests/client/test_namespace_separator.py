"""The client's namespace separator (advertised `namespace-separator`) and the access-delegation header."""

from __future__ import annotations

import httpx
import pytest

from ctk.client.transport import CatalogClient, encode_separator, table_path
from ctk.client.config import TargetConfig


@pytest.fixture
def recorded():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"namespaces": [], "identifiers": []})

    client = CatalogClient(TargetConfig("http://127.0.0.1:1", prefix="dev"), transport=httpx.MockTransport(handler))
    yield client, seen
    client.close()


def test_encode_separator():
    assert encode_separator("%2E") == "%2E" and encode_separator("%1f") == "%1F"
    assert encode_separator(".") == "." and encode_separator(":") == "%3A"
    for unusable in (None, "", "/", "%2F", 7):
        assert encode_separator(unusable) is None


def test_default_unit_separator(recorded):
    client, seen = recorded
    client.request("GET", table_path(("a", "b"), "t"))
    assert seen[-1].url.raw_path.decode() == "/v1/dev/namespaces/a%1Fb/tables/t"


def test_advertised_separator_in_paths_and_parent_query(recorded):
    client, seen = recorded
    assert client.set_namespace_separator("%2E") == "%2E"
    client.request("GET", table_path(("a", "b"), "t"))
    assert seen[-1].url.raw_path.decode() == "/v1/dev/namespaces/a%2Eb/tables/t"
    client.request("GET", "namespaces", params={"parent": "a\x1fb"})
    assert "parent=a%2Eb" in seen[-1].url.raw_path.decode()
    assert client.set_namespace_separator(None) == "%1F"     # back to the default


def test_access_delegation_header_on_table_loads_and_creations_only(recorded):
    client, seen = recorded
    client.request("GET", table_path(("a",), "t"))
    client.request("POST", "namespaces/a/tables", json={"name": "t"})
    client.request("GET", "namespaces/a/tables")
    client.request("POST", table_path(("a",), "t"), json={})
    client.request("GET", table_path(("a",), "t"), headers={"X-Iceberg-Access-Delegation": "remote-signing"})
    got = [r.headers.get("X-Iceberg-Access-Delegation") for r in seen]
    assert got == ["vended-credentials", "vended-credentials", None, None, "remote-signing"]
