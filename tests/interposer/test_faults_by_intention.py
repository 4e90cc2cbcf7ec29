"""ctk.interposer.faults: the intention-named faults do what their names say, against a loopback HTTP server
(HttpFaults) and an echo server (LinkFaults)."""

from __future__ import annotations

import socket

import httpx
import pytest

from ctk.interposer import HttpMatch, Interposer
from ctk.interposer.faults import HttpFaults, LinkFaults

COMMIT = HttpMatch(method="POST", path=r"/tables/")


def commits(http_server) -> int:
    return len(http_server.app.commits)


def test_answer_503_and_drop_answer_after_the_server_answered(http_proxy, http_server):
    faults = HttpFaults(http_proxy)
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:
        rule = faults.answer_503(COMMIT)
        assert c.post("/tables/t", json={"x": 1}).status_code == 503
        assert commits(http_server) == 1                      # the server did commit
        assert faults.applied(rule) == 1 and faults.kept_answers(rule)[0]["status"] == 200
        assert c.post("/tables/t", json={"x": 2}).status_code == 200   # once only
        rule = faults.lose_answer(COMMIT, "drop")
        with pytest.raises(httpx.HTTPError):
            c.post("/tables/t", json={"x": 3})
        assert commits(http_server) == 3 and faults.applied(rule) == 1
    with pytest.raises(ValueError):
        faults.lose_answer(COMMIT, "lost")


def test_delay_answer_and_wait_answer(http_proxy, http_server):
    faults = HttpFaults(http_proxy)
    rule = faults.delay_answer(COMMIT, 1.0)
    with httpx.Client(base_url=http_proxy.url, timeout=0.2) as c:
        with pytest.raises(httpx.TimeoutException):
            c.post("/tables/t", json={"x": 1})
    assert faults.wait_answer(rule, timeout=5.0) is True      # the held answer reached the interposer
    assert commits(http_server) == 1
    # a rule no request reached: nothing to wait for (the grace, not the whole timeout)
    idle = faults.delay_answer(HttpMatch(method="POST", path=r"/never"), 1.0)
    assert faults.wait_answer(idle, timeout=30.0, unseen_grace=0.1) is False
    faults.remove(rule, idle, None, "not-there")               # used up, unknown or None: ignored


def test_count_matching_changes_nothing(http_proxy):
    faults = HttpFaults(http_proxy)
    rule = faults.count_matching(HttpMatch(method="POST", header="Idempotency-Key"), name="keyed")
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:
        assert c.post("/tables/t", json={}, headers={"Idempotency-Key": "k"}).status_code == 200
        assert c.post("/tables/t", json={}).status_code == 200
    assert faults.matched(rule) == 1 and http_proxy.counters["injected_total"] == 0


def test_hold_link_until_removed(http_proxy):
    faults = HttpFaults(http_proxy)
    rule = faults.hold_link(1.0)
    with httpx.Client(base_url=http_proxy.url, timeout=0.3) as c:
        with pytest.raises(httpx.TimeoutException):
            c.get("/held")
    faults.remove(rule)
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:
        assert c.get("/fast").status_code == 200


def test_duplicate_burst_reports_overlap(http_proxy, http_server):
    faults = HttpFaults(http_proxy)
    rule = faults.duplicate_burst(COMMIT, copies=2)
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:
        assert c.post("/tables/t", json={"x": 1}).status_code == 200
    event = faults.burst(rule, 5.0)
    assert event is not None and len(event["requests"]) == 3
    assert commits(http_server) == 3


def _echo(ip: Interposer, data: bytes = b"ping") -> bytes:
    with socket.create_connection(ip.address, timeout=2) as s:
        s.sendall(data)
        return s.recv(64)


def test_link_faults_fail_and_restore(tcp_proxy):
    link = LinkFaults(tcp_proxy)
    assert _echo(tcp_proxy) == b"ping"
    down = link.db_fail("down")
    with pytest.raises(OSError):
        _echo(tcp_proxy)
    link.db_restore(down)
    assert _echo(tcp_proxy) == b"ping"
    held = link.db_hold(10)
    cut = link.db_cut_after_commit("COMMIT")
    assert {t["name"] for t in tcp_proxy.toxics()} == {held, cut}
    link.remove(held, cut)
    assert tcp_proxy.toxics() == []
    with pytest.raises(ValueError):
        link.db_fail("melt")
