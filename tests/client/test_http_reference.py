"""The client layer against the embedded reference catalog."""

import random

from ctk.history.recorder import History
from ctk.client.transport import CatalogClient
from ctk.client.keys import new_key
from ctk.client.retrying import RetryingClient
from ctk.client.config import TargetConfig
from ctk.client.discovery import discover


def test_discover_reference(ref_client):
    d = discover(ref_client)
    assert d.idempotency_supported and d.java_parseable and d.misplaced_in is None
    assert d.lifetime.total_seconds() == 1800
    assert d.supports("POST", "namespaces")


def test_readers_and_replay(ref_client):
    assert ref_client.request("POST", "namespaces", json={"namespace": ["a"]}).status == 200
    k = new_key()
    first = ref_client.request("POST", "namespaces", json={"namespace": ["a", "b c"]}, idempotency_key=k)
    assert first.status == 200, first.render()
    again = ref_client.request("POST", "namespaces", json={"namespace": ["a", "b c"]}, idempotency_key=k,
                               header_name="idempotency-key")
    assert again.status == 200, again.render()
    assert ref_client.namespace_exists(("a", "b c")) is True
    assert ref_client.namespace_exists(("a", "zz")) is False
    assert ref_client.load_namespace(("a", "b c"))["namespace"] == ["a", "b c"]
    assert ref_client.load_table(("a", "b c"), "nope") is None


def test_retrying_create_namespace_replays_after_503(ref_client):
    d = discover(ref_client)
    ex = ref_client.request("POST", "/_ctk/faults", json={"action": "fail-after-commit", "operation": "createNamespace",
                                                         "status": 503, "times": 1})
    assert ex.status in (200, 201), ex.render()
    rc = RetryingClient(ref_client, d, history=History(), sleep=lambda s: None, rng=random.Random(0))
    ex = rc.mutate("POST", "namespaces", json={"namespace": ["r1"]}, op="createNamespace")
    assert [a.status for a in rc.last_attempts] == [503, 200]
    assert rc.history.operations()[0].outcome == "ok"
    counts = ref_client.request("GET", "/_ctk/executions").json()
    assert counts["by_operation"].get("createNamespace") == 1, counts


def test_client_prefix_from_target(ref_server):
    with CatalogClient(TargetConfig(ref_server.url, prefix="nonexistent", timeout=5)) as c:
        d = discover(c)
        assert c.prefix == d.prefix
