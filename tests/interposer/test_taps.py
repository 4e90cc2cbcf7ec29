"""Taps on the interposer's HTTP events (what the Spark request recorder is built on): one call per request,
on the fast path and on the coroutine path alike, with the upstream's status, or with none and an error when
the connection ended before the answer."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from interposer_helpers import connect

from ctk.interposer import HttpMatch, Interposer


def _collect(ip: Interposer):
    seen: list[tuple[str, str, int | None, str | None, float]] = []
    lock = threading.Lock()

    def tap(request, status, error):
        with lock:
            seen.append((request.method, request.target, status, error, request.began))

    ip.add_tap(tap)

    def wait(n: int) -> list:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with lock:
                if len(seen) >= n:
                    return list(seen)
            time.sleep(0.01)
        with lock:
            return list(seen)

    return wait


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "coroutine"])
def test_tap_sees_every_exchange(http_server, fast_path):
    with Interposer(upstream=http_server.address, fast_path=fast_path) as ip:
        wait = _collect(ip)
        with httpx.Client(base_url=ip.url, timeout=5) as c:
            assert c.get("/a").status_code == 200
            assert c.post("/b", content=b"x" * 100_000).status_code == 200
            # an answer a toxic replaces: the tap reports what the upstream answered
            ip.add_http_toxic("replace_status", match=HttpMatch(path="^/c"), status=503)
            assert c.get("/c").status_code == 503
        got = wait(3)
        assert [(m, t, s, e) for m, t, s, e, _ in got] == [
            ("GET", "/a", 200, None), ("POST", "/b", 200, None), ("GET", "/c", 200, None)]
        assert all(began > 0 for *_, began in got)


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "coroutine"])
def test_tap_sees_a_request_left_unanswered(http_server, fast_path):
    with Interposer(upstream=http_server.address, fast_path=fast_path) as ip:
        wait = _collect(ip)
        s = connect(ip.address)
        s.sendall(b"POST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        s.close()
        got = wait(1)
        assert [(m, t, s_) for m, t, s_, _, _ in got] == [("POST", "/cut", None)]
        assert got[0][3] == "connection closed before the answer"

