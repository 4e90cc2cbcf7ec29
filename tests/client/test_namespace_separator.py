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


# --- the reference's separator-dot variant, and fault rules that match what the client sends ----------------

def test_reference_separator_variant_advertises_dot_and_decodes_both(tmp_path):
    """`ctk serve --variant separator-dot`: /v1/config advertises ``namespace-separator: %2E``; a nested
    namespace is found under ``a%2Eb`` and under ``a%1Fb`` (the spec: servers decode both), listings too."""
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path), variant="separator-dot")) as srv:
        with httpx.Client(base_url=srv.url + "/v1", timeout=10) as h:
            assert h.get("/config").json()["overrides"]["namespace-separator"] == "%2E"
            for ns in (["a"], ["a", "b"], ["a", "b", "c"]):
                assert h.post("/namespaces", json={"namespace": ns}).status_code == 200
            for path in ("a%2Eb", "a%1Fb", "a.b"):
                got = h.get(f"/namespaces/{path}")
                assert got.status_code == 200 and got.json()["namespace"] == ["a", "b"], (path, got.text)
            for parent in ("a.b", "a\x1fb"):
                assert h.get("/namespaces", params={"parent": parent}).json()["namespaces"] == [["a", "b", "c"]]
    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "default"))) as srv:
        with httpx.Client(base_url=srv.url + "/v1", timeout=10) as h:
            assert "namespace-separator" not in h.get("/config").json()["overrides"]
            assert h.post("/namespaces", json={"namespace": ["a.b"]}).status_code == 200
            assert h.get("/namespaces/a.b").json()["namespace"] == ["a.b"]     # a dot is part of a level here


@pytest.mark.parametrize("variant", [None, "separator-dot"])
def test_interposer_fault_fires_on_the_path_the_client_sends(start_catalog, variant):
    """A fault rule on dropNamespace of a nested namespace fires whatever separator the catalog advertised:
    the rule's path comes from the client's one path builder (url_path), not from a %1F spelling of it."""
    from ctk.checks.faults import FaultMatch, InterposerFaults
    from ctk.client.keys import new_key
    from ctk.client.transport import ns_path

    ctx = start_catalog(interposer=True, control_api=False, variant=variant)
    assert isinstance(ctx.faults, InterposerFaults)
    config = ctx.client.get("/v1/config").json()
    assert ctx.client.set_namespace_separator(config["overrides"].get("namespace-separator")) == \
        ("%2E" if variant else "%1F")
    ns = tuple(ctx.namespace) + ("child",)
    ctx.catalog.create_namespace(ns)
    key = new_key()
    path = f"namespaces/{ns_path(ns)}"
    rule = ctx.faults.lose_answer(FaultMatch("dropNamespace", "DELETE", path, key), "503")
    ex = ctx.client.delete(path, idempotency_key=key)
    assert ("%2E" in ex.url) == bool(variant), ex.url
    assert ex.status == 503 and ctx.faults.http.applied(rule) == 1, (ex.status, ex.url)
    assert ctx.client.namespace_exists(ns) is False          # the catalog dropped it; the client never heard
