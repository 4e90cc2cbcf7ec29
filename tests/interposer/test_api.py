"""The Toxiproxy-compatible control API, through InterposerClient, and the `ctk interposer` CLI."""

from __future__ import annotations

import re
import socket
import subprocess
import sys

import httpx
import pytest
import procs
from interposer_helpers import connect, recv_exactly

from ctk.interposer import HttpMatch, InterposerClient, InterposerError


@pytest.fixture
def api(http_proxy):
    with InterposerClient(http_proxy.api_url) as c:
        yield c


def test_version_and_proxy_shape(api, http_proxy, http_server):
    assert api.version()
    proxies = api.proxies()
    assert set(proxies) == {"ctk"}
    p = proxies["ctk"]
    assert p == {
        "name": "ctk",
        "listen": f"127.0.0.1:{http_proxy.address[1]}",
        "upstream": f"{http_server.address[0]}:{http_server.address[1]}",
        "enabled": True,
        "toxics": [],
    }


def test_toxic_lifecycle_json_shapes(api, http_proxy):
    t = api.add_toxic("ctk", "latency", stream="upstream", attributes={"latency": 20}, toxicity=0.5)
    assert t == {"name": "latency_upstream", "type": "latency", "stream": "upstream", "toxicity": 0.5,
                 "attributes": {"latency": 20, "jitter": 0}}
    assert api.toxics("ctk") == [t]
    assert api.get_toxic("ctk", "latency_upstream") == t
    t2 = api.update_toxic("ctk", "latency_upstream", attributes={"jitter": 5}, toxicity=1.0)
    assert t2["attributes"] == {"latency": 20, "jitter": 5} and t2["toxicity"] == 1.0
    assert api.get_proxy("ctk")["toxics"] == [t2]
    api.remove_toxic("ctk", "latency_upstream")
    assert api.toxics("ctk") == []
    assert http_proxy.toxics() == []


def test_http_toxic_through_api(api, http_proxy, http_server):
    api.add_http_toxic("ctk", "replace_status", HttpMatch(method="POST"), status=504, name="rs")
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:
        assert c.post("/x", json={}).status_code == 504
        assert c.post("/x", json={}).status_code == 200
    cnt = api.counters("ctk")
    assert cnt["injected"] == {"replace_status": 1}
    assert cnt["toxics"]["rs"]["applied"] == 1
    assert api.events("ctk")[-1]["kind"] == "replace_status"
    api.reset_counters("ctk")
    assert api.counters("ctk")["requests"] == 0


def test_create_update_delete_proxy(api, echo_server):
    p = api.create_proxy("echo", upstream=f"127.0.0.1:{echo_server.address[1]}")
    port = int(p["listen"].rsplit(":", 1)[1])
    assert port > 0 and p["enabled"] is True
    s = connect(("127.0.0.1", port))
    s.sendall(b"hi")
    assert recv_exactly(s, 2) == b"hi"
    s.close()
    assert api.set_enabled("echo", False)["enabled"] is False
    with pytest.raises(OSError):
        connect(("127.0.0.1", port), timeout=1)
    api.reset()  # enables every proxy again
    assert api.get_proxy("echo")["enabled"] is True
    s = connect(("127.0.0.1", port))
    s.close()
    api.delete_proxy("echo")
    assert "echo" not in api.proxies()


def test_populate(api, echo_server):
    out = api.populate([{"name": "a", "upstream": f"127.0.0.1:{echo_server.address[1]}"},
                        {"name": "b", "upstream": f"127.0.0.1:{echo_server.address[1]}", "enabled": False}])
    assert [p["name"] for p in out] == ["a", "b"]
    assert set(api.proxies()) == {"ctk", "a", "b"}


def test_reset_removes_toxics(api):
    api.add_toxic("ctk", "latency", attributes={"latency": 1})
    api.add_http_toxic("ctk", "drop_response")
    api.reset()
    assert api.toxics("ctk") == []


@pytest.mark.parametrize(
    "method,path,body,status,message",
    [
        # Toxiproxy's exact texts (its clients show them; its own tests compare them)
        ("POST", "/proxies/ctk/toxics", {"type": "no_such", "attributes": {}}, 400, "=invalid toxic type"),
        ("POST", "/proxies/ctk/toxics", {"attributes": {}}, 400, "=invalid toxic type"),
        ("POST", "/proxies/ctk/toxics", {"type": "latency", "stream": "x"}, 400,
         "=stream was invalid, can be either upstream or downstream"),
        ("POST", "/proxies/nope/toxics", {"type": "latency"}, 404, "=proxy not found"),
        ("GET", "/proxies/nope", None, 404, "=proxy not found"),
        ("DELETE", "/proxies/nope", None, 404, "=proxy not found"),
        ("GET", "/proxies/ctk/toxics/nope", None, 404, "=toxic not found"),
        ("DELETE", "/proxies/ctk/toxics/nope", None, 404, "=toxic not found"),
        ("POST", "/proxies/ctk/toxics/nope", {"attributes": {}}, 404, "=toxic not found"),
        ("POST", "/proxies", {"name": "x"}, 400, "=missing required field: upstream"),
        ("POST", "/proxies", {"upstream": "127.0.0.1:1"}, 400, "=missing required field: name"),
        ("POST", "/proxies", {"name": "ctk", "upstream": "127.0.0.1:1"}, 409, "=proxy already exists"),
        ("POST", "/populate", [{"name": "a", "upstream": "127.0.0.1:1"}, {"upstream": "127.0.0.1:1"}], 400,
         "=missing required field: name at proxy 2"),
        ("POST", "/populate", {"name": "a"}, 400, "bad request body"),
        # attribute values Toxiproxy cannot decode: "bad request body: ..."
        ("POST", "/proxies/ctk/toxics", {"type": "latency", "attributes": {"latency": "slow"}}, 400,
         "bad request body: attribute 'latency' must be a number"),
        ("POST", "/proxies", [1, 2], 400, "bad request body"),
        # ours only
        ("POST", "/proxies", {"name": "x", "listen": "0.0.0.0:0", "upstream": "127.0.0.1:1"}, 400, "non-loopback"),
        ("POST", "/proxies", {"name": "x", "listen": "127.0.0.1:notaport", "upstream": "127.0.0.1:1"}, 400, "port"),
        ("GET", "/nothing/here", None, 404, "no route"),
        ("PUT", "/proxies", {}, 405, "not allowed"),
    ],
)
def test_bad_requests_get_clear_4xx(http_proxy, method, path, body, status, message):
    r = httpx.request(method, http_proxy.api_url + path, json=body, timeout=5)
    assert r.status_code == status, r.text
    err = r.json()
    assert err["status"] == status
    if message.startswith("="):
        assert err["error"] == message[1:]
    else:
        assert message in err["error"]


def test_browser_user_agent_is_refused(http_proxy):
    r = httpx.get(http_proxy.api_url + "/proxies", headers={"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"},
                  timeout=5)
    assert r.status_code == 403
    r = httpx.get(http_proxy.api_url + "/proxies", headers={"User-Agent": "Wget/2.1"}, timeout=5)
    assert r.status_code == 200


def test_listen_conflict_is_500_with_the_listen_error(api, http_proxy):
    port = http_proxy.address[1]
    with pytest.raises(InterposerError) as exc:
        api.create_proxy("other", upstream="127.0.0.1:1", listen=f"127.0.0.1:{port}")
    assert exc.value.status == 500
    assert exc.value.message == f"listen tcp 127.0.0.1:{port}: bind: address already in use"
    assert "other" not in api.proxies()


def test_toxic_defaults_and_update_semantics(api):
    r = httpx.post(api.api_url + "/proxies/ctk/toxics", json={"type": "latency", "attributes": {"latency": 10}},
                   timeout=5)
    assert r.status_code == 200
    assert r.json() == {"name": "latency_downstream", "type": "latency", "stream": "downstream", "toxicity": 1.0,
                        "attributes": {"latency": 10, "jitter": 0}}
    # stream in any case; attributes may be null
    t = httpx.post(api.api_url + "/proxies/ctk/toxics", json={"type": "noop", "stream": "UpStream",
                                                              "attributes": None}, timeout=5).json()
    assert t == {"name": "noop_upstream", "type": "noop", "stream": "upstream", "toxicity": 1.0, "attributes": {}}
    # an update merges attributes, keeps an absent toxicity, ignores name/type/stream (clients send it all back)
    u = httpx.patch(api.api_url + "/proxies/ctk/toxics/latency_downstream",
                    json={"attributes": {"jitter": 3}, "type": "bandwidth", "stream": "upstream"}, timeout=5)
    assert u.status_code == 200
    assert u.json() == {"name": "latency_downstream", "type": "latency", "stream": "downstream", "toxicity": 1.0,
                        "attributes": {"latency": 10, "jitter": 3}}
    assert api.update_toxic("ctk", "latency_downstream", toxicity=0.5)["toxicity"] == 0.5
    assert api.update_toxic("ctk", "latency_downstream", attributes={"latency": 20})["toxicity"] == 0.5


def test_update_proxy_ignores_what_it_cannot_change(api, echo_server):
    p = api.create_proxy("echo", upstream=f"127.0.0.1:{echo_server.address[1]}")
    api.add_toxic("echo", "latency", attributes={"latency": 1})
    # Toxiproxy's Go client sends the whole proxy back, toxics included
    body = dict(api.get_proxy("echo"), enabled=False)
    r = httpx.post(api.api_url + "/proxies/echo", json=body, timeout=5)
    assert r.status_code == 200 and r.json()["enabled"] is False
    assert r.json()["listen"] == p["listen"] and len(r.json()["toxics"]) == 1


def test_populate_keeps_unchanged_proxies_and_replaces_changed_ones(api, echo_server, http_server):
    up1 = f"127.0.0.1:{echo_server.address[1]}"
    up2 = f"127.0.0.1:{http_server.address[1]}"
    first = api.populate([{"name": "a", "upstream": up1}, {"name": "b", "upstream": up1}])
    api.add_toxic("a", "latency", attributes={"latency": 1})
    api.add_toxic("b", "latency", attributes={"latency": 1})
    again = api.populate([{"name": "a", "upstream": up1, "listen": first[0]["listen"]},
                          {"name": "b", "upstream": up2, "listen": first[1]["listen"]}])
    assert again[0]["listen"] == first[0]["listen"] and len(again[0]["toxics"]) == 1  # untouched
    assert again[1]["upstream"] == up2 and again[1]["toxics"] == []  # replaced
    # nothing changes when one entry is bad
    r = httpx.post(api.api_url + "/populate", json=[{"name": "c", "upstream": up1},
                                                    {"name": "d", "upstream": up1, "listen": "10.1.2.3:0"}], timeout=5)
    assert r.status_code == 400 and r.json()["proxies"] is None
    assert "c" not in api.proxies()
    r = httpx.post(api.api_url + "/populate", json=[{"name": "e", "upstream": up1}, {"name": "e", "upstream": up1}],
                   timeout=5)
    assert r.status_code == 500 and r.json()["error"] == 'duplicate proxy name "e"'


def test_version_shape(http_proxy):
    r = httpx.get(http_proxy.api_url + "/version", timeout=5)
    assert r.status_code == 200 and set(r.json()) == {"version"}


def test_bad_json_and_duplicate_toxic(http_proxy, api):
    r = httpx.post(http_proxy.api_url + "/proxies/ctk/toxics", content=b"{not json", timeout=5)
    assert r.status_code == 400 and "invalid JSON" in r.json()["error"]
    r = httpx.post(http_proxy.api_url + "/proxies/ctk/toxics", content=b"[1, 2]", timeout=5)
    assert r.status_code == 400 and "JSON object" in r.json()["error"]
    api.add_toxic("ctk", "latency", name="dup")
    with pytest.raises(InterposerError) as exc:
        api.add_toxic("ctk", "latency", name="dup")
    assert exc.value.status == 409 and "already exists" in exc.value.message


def test_api_survives_garbage(http_proxy, api):
    s = socket.create_connection(("127.0.0.1", int(http_proxy.api_url.rsplit(":", 1)[1])), timeout=5)
    s.sendall(b"\x00\x01garbage\r\n\r\n")
    s.settimeout(5)
    try:
        s.recv(100)
    except OSError:
        pass
    s.close()
    assert api.version()


def test_cli_standalone(http_server):
    # the proxy and the API bind port 0 and print where they listen: no port probed free can be taken meanwhile
    with procs.interposer(f"127.0.0.1:{http_server.address[1]}") as ip:
        with InterposerClient(ip.api_url, timeout=2) as client:
            client.add_http_toxic("ctk", "replace_status", status=503)
            with httpx.Client(base_url=f"http://127.0.0.1:{ip.listen[1]}", timeout=5) as c:
                assert c.get("/x").status_code == 503
                assert c.get("/x").status_code == 200
            assert client.counters("ctk")["injected"] == {"replace_status": 1}
    assert ip.popen.returncode == 0, ip.output()
    assert re.search(r"^control API: http://127\.0\.0\.1:\d+$", ip.output(), re.M)


def test_cli_refuses_non_loopback():
    r = subprocess.run([sys.executable, "-m", "ctk", "interposer", "--listen", "0.0.0.0:0", "--upstream",
                        "127.0.0.1:1"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "non-loopback" in r.stderr
