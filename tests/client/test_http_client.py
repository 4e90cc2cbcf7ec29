import threading
import time

import httpx
import pytest

from ctk.client.transport import CatalogClient, error_kind, ns_path, table_path, view_path
from ctk.client.keys import is_valid_key, malformed_keys, new_key
from ctk.client.config import TargetConfig
from ctk.client.discovery import DiscoveryError, discover

import procs


def mock_client(handler, **kw):
    return CatalogClient(TargetConfig("http://127.0.0.1:9", **kw), transport=httpx.MockTransport(handler))


def test_paths_and_namespace_encoding():
    c = mock_client(lambda r: httpx.Response(200), prefix="p")
    assert ns_path(("a", "b c", "d/e")) == "a%1Fb%20c%1Fd%2Fe"
    assert ns_path("a.b") == "a%1Fb"
    assert table_path(("a", "b"), "t") == "namespaces/a%1Fb/tables/t"
    assert view_path(["x"], "v 1") == "namespaces/x/views/v%201"
    assert c.url_for("namespaces") == "http://127.0.0.1:9/v1/p/namespaces"
    assert c.url_for("/namespaces") == "http://127.0.0.1:9/v1/p/namespaces"
    assert c.url_for("/v1/config") == "http://127.0.0.1:9/v1/config"
    assert c.url_for("/_ctk/faults") == "http://127.0.0.1:9/_ctk/faults"
    assert (c.url_for("namespaces/{namespace}/tables/{table}", namespace=("a", "b"), table="t/x")
            == "http://127.0.0.1:9/v1/p/namespaces/a%1Fb/tables/t%2Fx")
    assert c.url_for("namespaces", query={"parent": "a", "pageToken": None}) == "http://127.0.0.1:9/v1/p/namespaces?parent=a"
    c.set_prefix(None)
    assert c.url_for("tables/rename") == "http://127.0.0.1:9/v1/tables/rename"
    with pytest.raises(ValueError):
        ns_path(())


def test_namespace_encoding_reaches_the_wire():
    seen = []

    def handler(req):
        seen.append(req.url.raw_path)
        return httpx.Response(200, json={"namespace": ["a", "b"], "properties": {}})
    c = mock_client(handler)
    assert c.load_namespace(("a", "b")) == {"namespace": ["a", "b"], "properties": {}}
    assert seen == [b"/v1/namespaces/a%1Fb"]


def test_request_records_headers_body_and_key():
    seen = []

    def handler(req):
        seen.append(req)
        return httpx.Response(200, json={"ok": True}, headers={"X-Trace": "1"})
    c = mock_client(handler, headers={"X-Client": "ctk"})
    k = new_key()
    ex = c.request("POST", "namespaces", json={"namespace": ["n"]}, idempotency_key=k, label="create")
    assert ex.status == 200 and ex.json() == {"ok": True} and ex.error is None and ex.label == "create"
    assert seen[0].headers["Idempotency-Key"] == k and seen[0].headers["X-Client"] == "ctk"
    assert seen[0].headers["Content-Type"] == "application/json"
    assert ex.request_headers["Idempotency-Key"] == k
    assert ex.request_body == '{"namespace":["n"]}'
    assert ex.response_headers["x-trace"] == "1"
    assert c.exchanges == [ex]
    ex2 = c.request("POST", "namespaces", content=b"raw", idempotency_key=k, header_name="idempotency-key")
    assert seen[1].content == b"raw" and seen[1].headers.get_list("idempotency-key") == [k]
    assert ex2.request_headers["idempotency-key"] == k


def test_key_sent_twice_with_raw_headers():
    seen = []

    def handler(req):
        seen.append(req.headers.get_list("Idempotency-Key"))
        return httpx.Response(400)
    c = mock_client(handler)
    k1, k2 = new_key(), new_key()
    ex = c.request("POST", "namespaces", json={}, raw_headers=[("Idempotency-Key", k1), ("Idempotency-Key", k2)])
    assert seen == [[k1, k2]]
    assert ex.request_headers["Idempotency-Key"] == f"{k1}, {k2}"


def test_bearer_token_sent_and_redacted():
    seen = []

    def handler(req):
        seen.append(req.headers.get("Authorization"))
        return httpx.Response(200, json={"access_token": "leak?"})
    c = mock_client(handler, token="tok-SECRET")
    ex = c.request("GET", "namespaces")
    assert seen == ["Bearer tok-SECRET"]
    assert "tok-SECRET" not in ex.render() and "tok-SECRET" not in str(ex.to_dict())
    assert "leak?" not in ex.render()
    assert "tok-SECRET" not in repr(c)


def test_oauth_token_fetched_once_and_redacted():
    calls = {"token": 0}
    auths = []

    def handler(req):
        if req.url.path == "/v1/oauth/tokens":
            calls["token"] += 1
            body = req.content.decode()
            assert "grant_type=client_credentials" in body and "client_secret=sec" in body
            return httpx.Response(200, json={"access_token": "AT-123", "token_type": "bearer"})
        auths.append(req.headers.get("Authorization"))
        return httpx.Response(200, json={})
    c = mock_client(handler, credential="cid:sec")
    for _ in range(3):
        c.request("GET", "namespaces")
    assert calls["token"] == 1 and auths == ["Bearer AT-123"] * 3
    text = "\n".join(e.render() for e in c.exchanges)
    assert "AT-123" not in text and "sec&" not in text and "client_secret=sec" not in text


def test_oauth_failure_is_exchange_error_not_exception():
    def handler(req):
        return httpx.Response(401, json={"error": "invalid_client"})
    c = mock_client(handler, credential="cid:bad")
    ex = c.request("GET", "namespaces")
    assert ex.status is None and error_kind(ex) == "auth" and "oauth" in ex.error.lower()


def test_readers_and_exists():
    def handler(req):
        p = req.url.path
        if req.method == "HEAD":
            return httpx.Response(204 if p.endswith("/t1") else 404)
        if p == "/v1/namespaces/db/tables/t1":
            return httpx.Response(200, json={"metadata-location": "x", "metadata": {}})
        return httpx.Response(404, json={"error": {"message": "no", "type": "NoSuchTableException", "code": 404}})
    c = mock_client(handler)
    assert c.load_table("db", "t1")["metadata-location"] == "x"
    assert c.load_table("db", "nope") is None
    assert c.table_exists("db", "t1") is True and c.table_exists("db", "nope") is False


def test_exists_unknown_on_5xx():
    c = mock_client(lambda r: httpx.Response(503))
    assert c.namespace_exists("db") is None


def test_thread_safe_recording():
    c = mock_client(lambda r: httpx.Response(200))
    ts = [threading.Thread(target=lambda: [c.request("GET", "namespaces") for _ in range(25)]) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert len(c.exchanges) == 200


def test_target_down_is_refused_error():
    # nothing listens on the port and nothing is started there: a closed port is all a refused connection needs
    c = CatalogClient(TargetConfig(f"http://127.0.0.1:{procs.closed_port()}", timeout=2, connect_timeout=1))
    ex = c.request("POST", "namespaces", json={"namespace": ["x"]})
    assert ex.status is None and error_kind(ex) == "refused", ex.error
    assert c.exchanges == [ex]
    with pytest.raises(DiscoveryError, match="did not answer"):
        discover(c)


def test_hanging_target_times_out_within_bound(hanging_server):
    c = CatalogClient(TargetConfig(hanging_server.url, timeout=0.5, connect_timeout=0.5))
    t0 = time.monotonic()
    ex = c.request("GET", "/v1/config")
    took = time.monotonic() - t0
    assert ex.status is None and error_kind(ex) == "timeout", ex.error
    assert took < 2.0 and ex.elapsed_ms >= 400
    t0 = time.monotonic()
    ex = c.request("GET", "/v1/config", timeout=0.2)
    assert time.monotonic() - t0 < 1.0 and error_kind(ex) == "timeout"
    with pytest.raises(DiscoveryError, match="timeout"):
        discover(c)


def test_reset_connection_is_reset_error(resetting_server):
    c = CatalogClient(TargetConfig(resetting_server.url, timeout=3))
    ex = c.request("POST", "namespaces", json={})
    assert ex.status is None and error_kind(ex) == "reset", ex.error


def test_garbage_answer_is_protocol_error(garbage_server):
    c = CatalogClient(TargetConfig(garbage_server.url, timeout=3))
    ex = c.request("GET", "/v1/config")
    assert ex.status is None and error_kind(ex) in ("protocol", "reset"), ex.error


def test_keys():
    k = new_key()
    assert is_valid_key(k) and is_valid_key(k, require_v7=True) and len(k) == 36
    assert new_key() != k
    assert is_valid_key("550e8400-e29b-41d4-a716-446655440000")
    assert not is_valid_key("550e8400-e29b-41d4-a716-446655440000", require_v7=True)
    for bad in malformed_keys() + [None, 42, "550e8400e29b41d4a716446655440000xxxx"]:
        assert not is_valid_key(bad), bad
    ks = [new_key() for _ in range(50)]
    assert ks == sorted(ks)  # time-ordered


class _Turns:
    """What the client's requests are sent in (with --ctk-db-link, the database link's shared turns): a log."""

    def __init__(self):
        self.log: list[str] = []
        self.held = 0

    def request(self):
        import contextlib

        @contextlib.contextmanager
        def turn():
            self.held += 1
            self.log.append("enter")
            try:
                yield
            finally:
                self.held -= 1
                self.log.append("leave")
        return turn()

    def unfinished(self):
        self.log.append("unfinished")


def test_every_request_is_sent_in_a_turn_and_one_without_an_answer_says_so():
    """Issue 34 item 6: a link fault another worker arms waits for the requests in flight, not for whole checks
    (ctk.interposer.linklock): the client holds a turn while each request is in flight - its siblings too - and
    says when one ended without its answer (the catalog may still be at work on it)."""
    turns = _Turns()

    def handler(request: httpx.Request) -> httpx.Response:
        assert turns.held == 1                       # in flight inside the turn
        if request.url.path.endswith("/lost"):
            raise httpx.ReadTimeout("no answer", request=request)
        return httpx.Response(200, json={})

    c = mock_client(handler)
    c.turns = turns
    assert c.get("namespaces").status == 200
    assert turns.log == ["enter", "leave"]
    assert c.post("lost", json={}).status is None
    assert turns.log[2:] == ["enter", "unfinished", "leave"]
    sibling = c.sibling()
    assert sibling.turns is turns
    assert mock_client(handler).turns is None        # without a link: no turns
