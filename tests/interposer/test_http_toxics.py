"""HTTP toxics (per request, keep-alive aware) against a tiny loopback HTTP/1.1 server."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from interposer_helpers import connect, recv_until_closed

from ctk.interposer import HttpMatch, Interposer, ToxicError


def client(ip: Interposer, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(base_url=ip.url, timeout=timeout)


def commits(http_server) -> int:
    return len(http_server.app.commits)


def test_keep_alive_requests_share_one_connection(http_proxy, http_server):
    with client(http_proxy) as c:
        conns = {c.get(f"/a{i}").json()["conn"] for i in range(10)}
        r = c.post("/tables/t1", json={"x": 1})
        assert r.json()["echo"] == '{"x":1}'
    assert len(conns) == 1
    cnt = http_proxy.counters
    assert cnt["connections"] == 1 and cnt["http_connections"] == 1
    assert cnt["requests"] == cnt["responses"] == cnt["passed"] == 11
    assert cnt["injected_total"] == 0


def test_chunked_bodies_both_ways(http_proxy, http_server):
    with client(http_proxy) as c:
        r = c.get("/chunked")
        assert r.text == "hello chunked world"

        def gen():
            yield b'{"a": '
            yield b"1}"

        r = c.post("/chunked-upload", content=gen())
        assert r.json()["echo"] == '{"a": 1}'
        # the connection is still usable after chunked framing
        assert c.get("/after").status_code == 200
    assert http_proxy.counters["connections"] == 1


def test_head_and_large_and_close_responses(http_proxy):
    with client(http_proxy) as c:
        assert c.head("/h").headers["content-length"] == "1234"
        assert len(c.get("/big=300000").content) == 300000
        assert c.get("/close").json() == {"close": True}
        assert c.get("/again").status_code == 200
    assert http_proxy.counters["responses"] == 4


def test_drop_response_commits_but_client_never_hears(http_proxy, http_server):
    http_proxy.add_http_toxic("drop_response", match=HttpMatch(method="POST", path=r"/tables/"), times=1)
    with client(http_proxy) as c:
        assert c.get("/tables/x").status_code == 200  # GET does not match
        with pytest.raises(httpx.RemoteProtocolError):
            c.post("/tables/t1", json={"v": 1})
        assert commits(http_server) == 1  # the server committed
        r = c.post("/tables/t1", json={"v": 2})  # times=1: the next one passes
        assert r.status_code == 200 and r.json()["committed"] == 2
    cnt = http_proxy.counters
    assert cnt["injected"] == {"drop_response": 1}
    name = next(iter(cnt["toxics"]))
    assert cnt["toxics"][name] == {"type": "drop_response", "matched": 2, "applied": 1}
    ev = [e for e in http_proxy.events() if e["kind"] == "drop_response"]
    assert ev and ev[0]["status"] == 200 and ev[0]["target"] == "/tables/t1"


def test_drop_response_raw_socket_sees_no_byte(http_proxy, http_server):
    http_proxy.add_http_toxic("drop_response", times=1)
    s = connect(http_proxy.address)
    s.sendall(b"POST /tables/t HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
    data, how = recv_until_closed(s, timeout=5)
    s.close()
    assert data == b"" and how == "eof"
    assert commits(http_server) == 1


@pytest.mark.parametrize("status", [503, 502, 504, 500])
def test_replace_status(http_proxy, http_server, status):
    http_proxy.add_http_toxic("replace_status", match=HttpMatch(method="POST"), status=status, times=1)
    with client(http_proxy) as c:
        r = c.post("/tables/t1", json={})
        assert r.status_code == status
        err = r.json()["error"]
        assert err["code"] == status and err["type"] and err["message"]
        assert commits(http_server) == 1  # it committed behind the fake error
        assert c.post("/tables/t1", json={}).status_code == 200  # same keep-alive connection still works
    assert http_proxy.counters["connections"] == 1


def test_header_match(http_proxy, http_server):
    http_proxy.add_http_toxic(
        "replace_status", match=HttpMatch(header="Idempotency-Key", header_value="k-1"), status=503, times=0
    )
    with client(http_proxy) as c:
        assert c.post("/x", json={}).status_code == 200
        assert c.post("/x", json={}, headers={"Idempotency-Key": "k-2"}).status_code == 200
        assert c.post("/x", json={}, headers={"idempotency-key": "k-1"}).status_code == 503
        assert c.post("/x", json={}, headers={"Idempotency-Key": "k-1"}).status_code == 503  # times=0: always


def test_path_regex_and_method_match(http_proxy):
    http_proxy.add_http_toxic(
        "replace_status", match=HttpMatch(method="post", path=r"/namespaces/[^/]+/tables$"), status=500, times=0
    )
    with client(http_proxy) as c:
        assert c.post("/v1/namespaces/ns/tables", json={}).status_code == 500
        assert c.post("/v1/namespaces/ns/tables/t", json={}).status_code == 200
        assert c.get("/v1/namespaces/ns/tables").status_code == 200


def test_times_counts_applications(http_proxy):
    http_proxy.add_http_toxic("replace_status", status=503, times=2)
    with client(http_proxy) as c:
        codes = [c.get("/x").status_code for _ in range(4)]
    assert codes == [503, 503, 200, 200]


def test_toxicity_probability(http_proxy):
    http_proxy.add_http_toxic("replace_status", status=503, times=0, toxicity=0.0, name="never")
    http_proxy.add_http_toxic("replace_status", match=HttpMatch(path="^/half"), status=502, times=0,
                              toxicity=0.5, name="half")
    with client(http_proxy) as c:
        assert all(c.get("/x").status_code == 200 for _ in range(5))
        codes = [c.get("/half").status_code for _ in range(60)]
    assert 5 <= codes.count(502) <= 55


def test_delay_request_and_delay_response(http_proxy, http_server):
    http_proxy.add_http_toxic("delay_request", match=HttpMatch(path="^/dreq"), delay_ms=300)
    http_proxy.add_http_toxic("delay_response", match=HttpMatch(path="^/dresp"), delay_ms=300)
    with client(http_proxy) as c:
        t0 = time.perf_counter()
        c.get("/dreq")
        assert time.perf_counter() - t0 >= 0.28
        t0 = time.perf_counter()
        c.get("/dresp")
        assert time.perf_counter() - t0 >= 0.28
        c.get("/dreq")  # times=1 by default: no more delay (the counters below say it was applied once)
    inj = http_proxy.counters["injected"]
    assert inj == {"delay_request": 1, "delay_response": 1}


def test_delay_request_holds_the_request_before_the_server_sees_it(http_proxy, http_server):
    http_proxy.add_http_toxic("delay_request", match=HttpMatch(method="POST"), delay_ms=2000)
    result = {}

    def post():
        with client(http_proxy) as c:
            result["r"] = c.post("/tables/t", json={})

    t = threading.Thread(target=post)
    t.start()
    # synchronised on the interposer's counter: the request arrived and the hold began (2 s, so that the check
    # below runs inside it however loaded the machine is)
    deadline = time.monotonic() + 10
    while http_proxy.counters["injected"].get("delay_request") != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert http_proxy.counters["injected"].get("delay_request") == 1
    assert commits(http_server) == 0
    t.join(5)
    assert result["r"].status_code == 200 and commits(http_server) == 1


def test_delay_request_gather_holds_until_enough_are_held_then_lets_all_go(http_proxy, http_server):
    """``gather`` 2: the first POST waits (the rule's 60 s would be its longest hold) until the second is held
    too; both then reach the server, and a third passes at once. Synchronised on counters, never on time."""
    http_proxy.add_http_toxic("delay_request", match=HttpMatch(method="POST"), delay_ms=60_000, times=0, gather=2)
    result: dict = {}

    def post(tag):
        with client(http_proxy) as c:
            result[tag] = c.post("/tables/t", json={})

    first = threading.Thread(target=post, args=("a",))
    first.start()
    deadline = time.monotonic() + 30
    while http_proxy.counters["injected"].get("delay_request") != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert http_proxy.counters["injected"].get("delay_request") == 1
    assert commits(http_server) == 0 and first.is_alive()     # held: one of two
    second = threading.Thread(target=post, args=("b",))
    second.start()
    first.join(30)
    second.join(30)
    assert not first.is_alive() and not second.is_alive(), "the gathered requests were not let go together"
    assert result["a"].status_code == 200 and result["b"].status_code == 200 and commits(http_server) == 2
    post("c")                                                  # after the gathering: no hold at all
    assert result["c"].status_code == 200 and commits(http_server) == 3
    assert http_proxy.counters["injected"]["delay_request"] == 2


def test_delay_request_gather_must_be_a_count(http_proxy):
    with pytest.raises(Exception, match="gather"):
        http_proxy.add_http_toxic("delay_request", delay_ms=10, gather=-1)


def test_reset_after_bytes(http_proxy, http_server):
    http_proxy.add_http_toxic("reset_after_bytes", match=HttpMatch(method="POST"), bytes=12)
    s = connect(http_proxy.address)
    s.sendall(b"POST /tables/t HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
    data, how = recv_until_closed(s, timeout=5)
    s.close()
    assert how == "reset", (data, how)
    assert data == b"HTTP/1.0 200" or data == b"HTTP/1.1 200"
    assert commits(http_server) == 1
    with client(http_proxy) as c:  # interposer fine afterwards
        assert c.get("/x").status_code == 200


def test_reset_after_zero_bytes_with_httpx(http_proxy, http_server):
    http_proxy.add_http_toxic("reset_after_bytes", bytes=0)
    with client(http_proxy) as c:
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            c.post("/tables/t", json={})
    assert commits(http_server) == 1


@pytest.mark.parametrize("parallel", [False, True])
def test_duplicate_request(http_proxy, http_server, parallel):
    http_proxy.add_http_toxic("duplicate_request", match=HttpMatch(method="POST"), parallel=parallel)
    with client(http_proxy) as c:
        r = c.post("/tables/t", json={"n": 1}, headers={"Idempotency-Key": "abc"})
        assert r.status_code == 200
        first = r.json()["committed"]
        deadline = time.monotonic() + 5
        while commits(http_server) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    assert commits(http_server) == 2
    assert [x["key"] for x in http_server.app.commits] == ["abc", "abc"]
    if not parallel:
        assert first == 1  # the client got the first answer, the copy came after
    deadline = time.monotonic() + 5
    while http_proxy.counters["duplicate_statuses"].get("200") != 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert http_proxy.counters["duplicate_statuses"] == {"200": 1}
    assert http_proxy.counters["injected"] == {"duplicate_request": 1}


def test_bad_http_toxics(http_proxy):
    with pytest.raises(ToxicError, match="invalid HTTP toxic type"):
        http_proxy.add_http_toxic("explode")
    with pytest.raises(ToxicError, match="regular expression"):
        http_proxy.add_http_toxic("drop_response", match=HttpMatch(path="(unclosed"))
    with pytest.raises(ToxicError, match="status"):
        http_proxy.add_http_toxic("replace_status", status=99)


def test_upstream_dies_mid_response(http_proxy):
    with client(http_proxy) as c:
        with pytest.raises(httpx.RemoteProtocolError):
            c.get("/die")
    with client(http_proxy) as c:
        assert c.get("/ok").status_code == 200


def test_upstream_hangs_client_times_out_interposer_survives(hang_server, http_server):
    with Interposer(upstream=hang_server.address) as ip:
        with httpx.Client(base_url=ip.url, timeout=0.5) as c:
            with pytest.raises(httpx.ReadTimeout):
                c.get("/x")
        assert ip.counters["requests"] == 1
    # a stuck upstream connection does not block stop(); and a new interposer works
    with Interposer(upstream=http_server.address) as ip2:
        with client(ip2) as c:
            assert c.get("/x").status_code == 200


def test_upstream_restarts_between_requests(http_server):
    with Interposer(upstream=http_server.address) as ip:
        with client(ip) as c:
            assert c.get("/close").status_code == 200  # server closes: the client must see it, then reconnect
            assert c.get("/x").status_code == 200
        assert ip.counters["connections"] == 2


def test_many_concurrent_clients(http_proxy, http_server):
    errors = []

    def worker(i):
        try:
            with client(http_proxy) as c:
                for j in range(10):
                    r = c.post(f"/t/{i}", content=json.dumps({"i": i, "j": j}))
                    assert r.json()["echo"] == json.dumps({"i": i, "j": j})
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert commits(http_server) == 80
    assert http_proxy.counters["passed"] == 80


def _burst_events(ip, name, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ip.events_of(name, "duplicate_burst")
        if found:
            return found
        time.sleep(0.02)
    return []


def test_duplicate_burst_released_together_with_timings(http_proxy, http_server):
    """A parallel burst: the original and 3 copies reach the server; one event gives every request's forward
    and answer times (ms from the first forward), the copies' statuses and bodies, and the overlap."""
    name = http_proxy.add_http_toxic("duplicate_request", match=HttpMatch(method="POST"), parallel=True, copies=3)
    # the server answers none before all four arrived (at most 5 s): on a busy machine the copies' connections may
    # open after a fast answer began; a burst sent one after another's answer still waits the 5 s and fails below
    http_server.app.hold_until = 4
    with client(http_proxy) as c:
        r = c.post("/tables/t", json={"n": 1}, headers={"Idempotency-Key": "k1"})
        assert r.status_code == 200
    events = _burst_events(http_proxy, name)
    assert len(events) == 1
    ev = events[0]
    assert ev["parallel"] is True
    assert [q["role"] for q in ev["requests"]] == ["original", "copy", "copy", "copy"]
    assert commits(http_server) == 4
    for q in ev["requests"]:
        assert q["status"] == 200 and q["sent_ms"] is not None and q["answer_ms"] is not None
        assert q["answer_ms"] >= q["sent_ms"]
    assert all('"committed"' in q["body"] for q in ev["requests"][1:])
    # written in one turn of the loop: each later request went out before the original's answer began
    assert ev["overlapped"] is True and ev["pair"] == [0, 1]
    assert http_proxy.counters["duplicate_statuses"] == {"200": 3}


def test_duplicate_sequential_has_no_overlap(http_proxy, http_server):
    name = http_proxy.add_http_toxic("duplicate_request", match=HttpMatch(method="POST"), copies=2)
    with client(http_proxy) as c:
        assert c.post("/tables/t", json={"n": 1}).status_code == 200
    ev = _burst_events(http_proxy, name)[0]
    assert ev["parallel"] is False and len(ev["requests"]) == 3
    first, *copies = ev["requests"]
    assert all(q["sent_ms"] >= first["answer_ms"] for q in copies)
    assert ev["overlapped"] is False and ev["pair"] is None


def test_overlap_rule():
    from ctk.interposer.http_toxics import overlap

    assert overlap([{"sent": 0.0, "answered": 1.0}, {"sent": 0.5, "answered": 1.5}])["pair"] == [0, 1]
    assert overlap([{"sent": 0.0, "answered": 1.0}, {"sent": 1.0, "answered": 1.5}])["overlapped"] is False
    # an answer that never began leaves the request in flight
    assert overlap([{"sent": 0.0, "answered": None}, {"sent": 2.0, "answered": 2.5}])["overlapped"] is True
    # order by forward time, whatever the list order
    assert overlap([{"sent": 0.5, "answered": 0.6}, {"sent": 0.0, "answered": 0.4}])["overlapped"] is False
    assert overlap([{"sent": None, "answered": None}, {"sent": 0.0, "answered": 0.4}])["overlapped"] is False


def test_bad_copies_rejected(http_proxy):
    with pytest.raises(ToxicError, match="copies"):
        http_proxy.add_http_toxic("duplicate_request", copies=9)
    with pytest.raises(ToxicError, match="copies"):
        http_proxy.add_http_toxic("duplicate_request", copies=0)


@pytest.mark.parametrize("kind,attrs", [("replace_status", {"status": 503}), ("drop_response", {}),
                                        ("record_response", {})])
def test_answer_taken_from_the_client_is_recorded(http_proxy, http_server, kind, attrs):
    name = http_proxy.add_http_toxic(kind, match=HttpMatch(method="POST"), **attrs)
    with client(http_proxy) as c:
        try:
            r = c.post("/tables/t", json={"n": 1})
        except httpx.HTTPError:
            r = None
    if kind == "record_response":
        assert r is not None and r.status_code == 200
    ev = http_proxy.events_of(name, kind)
    assert len(ev) == 1 and ev[0]["status"] == 200 and '"committed": 1' in ev[0]["body"].replace('":1', '": 1')


def test_held_copy_waits_until_the_toxic_is_removed(http_proxy, http_server):
    """hold_copy: the network's copy goes only once the toxic is removed, so the client can act in between."""
    name = http_proxy.add_http_toxic("duplicate_request", match=HttpMatch(method="POST"), hold_copy=True)
    with client(http_proxy) as c:
        assert c.post("/tables/t", json={"n": 1}).status_code == 200
    assert _burst_events(http_proxy, name, timeout=0.3) == []
    assert commits(http_server) == 1            # the copy is held
    http_proxy.remove_toxic(name)
    ev = _burst_events(http_proxy, name)[0]
    assert [q["status"] for q in ev["requests"]] == [200, 200] and commits(http_server) == 2
