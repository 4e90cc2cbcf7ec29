"""HTTP/1.1 framing through the interposer: pipelining, 100-continue, 101 upgrade, chunked, read-until-close,
half-closed clients, upstream errors, and toxics added or removed while a keep-alive connection is open (the
interposer relays connections without toxics on a fast path and must switch at any point, mid-body included)."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
from required import require
from interposer_helpers import NOT_DELAYED_S, SLOW_MS, ThreadedServer, connect, recv_exactly, recv_until_closed

from ctk.interposer import HttpMatch, Interposer


class ScriptedServer(ThreadedServer):
    """A loopback server that runs `handler(sock)` for each connection in its own thread."""

    def __init__(self, handler):
        self.handler = handler
        self.errors: list[BaseException] = []
        super().__init__()

    def _serve(self, c: socket.socket) -> None:
        c.settimeout(10)
        try:
            self.handler(c)
        except OSError:
            pass
        except BaseException as exc:  # noqa: BLE001
            self.errors.append(exc)
        finally:
            try:
                c.close()
            except OSError:
                pass


def read_head(s: socket.socket, buf: bytearray, timeout: float = 5.0) -> bytes:
    """Read one head (up to the empty line) from `s`, keeping extra bytes in `buf`."""
    s.settimeout(timeout)
    while b"\r\n\r\n" not in buf:
        part = s.recv(65536)
        if not part:
            raise EOFError(bytes(buf))
        buf += part
    i = buf.index(b"\r\n\r\n") + 4
    head = bytes(buf[:i])
    del buf[:i]
    return head


def read_n(s: socket.socket, buf: bytearray, n: int, timeout: float = 5.0) -> bytes:
    s.settimeout(timeout)
    while len(buf) < n:
        part = s.recv(65536)
        if not part:
            raise EOFError(bytes(buf))
        buf += part
    out = bytes(buf[:n])
    del buf[:n]
    return out


def content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            return int(v)
    return 0


def read_response(s: socket.socket, buf: bytearray, *, head_request: bool = False) -> tuple[int, bytes, bytes]:
    head = read_head(s, buf)
    status = int(head.split(b" ", 2)[1])
    body = b"" if head_request or 100 <= status < 200 else read_n(s, buf, content_length(head))
    return status, head, body


def _has_uvloop() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(
    params=[
        {"fast_path": True, "loop": "asyncio"},
        {"fast_path": False, "loop": "asyncio"},
        {"fast_path": True, "loop": "uvloop"},
    ],
    ids=["fast", "coroutine", "fast-uvloop"],
)
def fast(request) -> dict:
    """Every test here runs on the fast path, with the coroutine path forced, and on uvloop (required under CI)."""
    if request.param["loop"] == "uvloop" and not _has_uvloop():
        require("uvloop", "uvloop is not installed (the fast extra: pip install -e '.[fast]')")
    return request.param


@pytest.fixture
def http_proxy(http_server, fast):
    with Interposer(upstream=http_server.address, api=("127.0.0.1", 0), **fast) as ip:
        yield ip


@pytest.fixture
def scripted():
    servers: list[ScriptedServer] = []

    def make(handler) -> ScriptedServer:
        srv = ScriptedServer(handler)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.close()
    for srv in servers:
        assert not srv.errors, srv.errors


# ------------------------------------------------------------------ pipelining and framing


def test_pipelined_requests_in_one_write(http_proxy, http_server):
    s = connect(http_proxy.address)
    s.sendall(
        b"GET /p1 HTTP/1.1\r\nHost: x\r\n\r\n"
        b"POST /p2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        b"HEAD /p3 HTTP/1.1\r\nHost: x\r\n\r\n"
        b"POST /p4 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
        b"GET /p5 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    buf = bytearray()
    answers = [read_response(s, buf, head_request=(i == 2)) for i in range(5)]
    s.close()
    assert [a[0] for a in answers] == [200] * 5
    assert b'"path": "/p1"' in answers[0][2]
    assert b'"echo": "hello"' in answers[1][2]
    assert content_length(answers[2][1]) == 1234 and answers[2][2] == b""
    assert b'"echo": "abcde"' in answers[3][2]
    assert b'"path": "/p5"' in answers[4][2]
    cnt = http_proxy.counters
    assert cnt["requests"] == cnt["responses"] == cnt["passed"] == 5


def test_requests_split_into_single_bytes(http_proxy, http_server):
    s = connect(http_proxy.address)
    # the first write decides the mode (it must look like a request line); then one byte at a time
    raw = b"POST /split HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz"
    s.sendall(raw[:5])
    time.sleep(0.05)
    for i in range(5, len(raw)):
        s.sendall(raw[i : i + 1])
        if i % 10 == 0:
            time.sleep(0.001)
    buf = bytearray()
    status, _, body = read_response(s, buf)
    s.close()
    assert status == 200 and b'"echo": "xyz"' in body


def test_large_bodies_both_ways_stream(http_proxy, http_server):
    payload = b"y" * 700_000
    with httpx.Client(base_url=http_proxy.url, timeout=10) as c:
        r = c.post("/up", content=payload)
        assert r.status_code == 200 and len(r.json()["echo"]) == 700_000
        assert len(c.get("/big=1500000").content) == 1_500_000
    cnt = http_proxy.counters
    assert cnt["bytes_upstream"] > 700_000 and cnt["bytes_downstream"] > 1_500_000


def test_expect_100_continue(scripted, fast):
    def handler(c):
        buf = bytearray()
        head = read_head(c, buf)
        assert b"100-continue" in head.lower()
        c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = read_n(c, buf, content_length(head))
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        read_head(c, buf)  # keep-alive: a second request
        c.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        buf = bytearray()
        status, _, _ = read_response(s, buf)
        assert status == 100
        s.sendall(b"data")
        status, _, body = read_response(s, buf)
        assert status == 200 and body == b"data"
        s.sendall(b"GET /y HTTP/1.1\r\nHost: x\r\n\r\n")
        status, _, _ = read_response(s, buf)
        assert status == 204
        s.close()
        cnt = ip.counters
        assert cnt["requests"] == 2 and cnt["responses"] == 2


def test_101_upgrade_becomes_a_tunnel(scripted, fast):
    def handler(c):
        buf = bytearray()
        head = read_head(c, buf)
        assert b"upgrade: test" in head.lower()
        c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")
        while True:
            if buf:
                data, buf = bytes(buf), bytearray()
            else:
                data = c.recv(65536)
            if not data:
                return
            c.sendall(b"<" + data + b">")

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        # bytes of the new protocol right behind the request, before the 101 came back
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\nearly")
        buf = bytearray()
        status, _, _ = read_response(s, buf)
        assert status == 101
        assert read_n(s, buf, 7) == b"<early>"
        # not HTTP any more: a request-looking line and raw bytes pass unparsed
        s.sendall(b"\x00\x01GET / HTTP/1.1\r\n\r\n")
        assert read_n(s, buf, 22) == b"<\x00\x01GET / HTTP/1.1\r\n\r\n>"
        s.close()
        cnt = ip.counters
        assert cnt["requests"] == 1 and cnt["responses"] == 1


def test_response_delimited_by_close(scripted, fast):
    def handler(c):
        buf = bytearray()
        read_head(c, buf)
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n")
        for _ in range(5):
            c.sendall(b"part;")
            time.sleep(0.01)
        c.shutdown(socket.SHUT_WR)

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        data, how = recv_until_closed(s, timeout=5)
        s.close()
        assert how == "eof"
        assert data.endswith(b"\r\n\r\npart;part;part;part;part;")
        assert ip.counters["responses"] == 1


def test_client_half_close_still_gets_the_answer(http_proxy, http_server):
    s = connect(http_proxy.address)
    s.sendall(b"GET /slow=0.3 HTTP/1.1\r\nHost: x\r\n\r\n")
    s.shutdown(socket.SHUT_WR)
    data, how = recv_until_closed(s, timeout=5)
    s.close()
    assert how == "eof"
    assert data.startswith(b"HTTP/1.") and data.endswith(b'{"slow": true}')


def test_upstream_closes_before_answering(scripted, fast):
    def handler(c):
        read_head(c, bytearray())

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        data, how = recv_until_closed(s, timeout=5)
        s.close()
        assert data == b"" and how in ("eof", "reset")
        assert ip.counters["upstream_errors"] == 1
        assert [e["kind"] for e in ip.events()] == ["upstream_closed_before_answer"]


def test_upstream_sends_garbage(scripted, fast):
    def handler(c):
        read_head(c, bytearray())
        c.sendall(b"this is not http\r\n\r\n")
        time.sleep(0.5)

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        data, how = recv_until_closed(s, timeout=5)
        s.close()
        assert data == b"" and how in ("eof", "reset")
        assert ip.counters["upstream_errors"] == 1
        assert ip.events()[0]["kind"] == "upstream_protocol_error"


@pytest.mark.parametrize(
    "raw",
    [
        b"POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"GET /x HTTP/1.1\r\nno colon here\r\n\r\n",
        b"GET /x HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
        b"POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
    ids=["no-framing", "bad-header", "head-too-large", "bad-chunk"],
)
def test_bad_requests_close_the_connection(http_proxy, http_server, raw):
    s = connect(http_proxy.address)
    try:
        s.sendall(raw)
    except OSError:
        pass
    data, how = recv_until_closed(s, timeout=5)
    s.close()
    assert how in ("eof", "reset")
    assert data == b""
    assert any(e["kind"] == "client_protocol_error" for e in http_proxy.events())
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:  # the interposer is fine afterwards
        assert c.get("/ok").status_code == 200


# ------------------------------------------------------------------ toxics on open connections


def test_tcp_latency_on_an_open_keep_alive_connection(http_proxy, http_server):
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:
        first = c.get("/a").json()["conn"]
        http_proxy.add_toxic("lat", type="latency", stream="downstream", attributes={"latency": SLOW_MS})
        t0 = time.perf_counter()
        assert c.get("/b").json()["conn"] == first
        assert time.perf_counter() - t0 >= SLOW_MS / 1000 - 0.01
        http_proxy.remove_toxic("lat")
        t0 = time.perf_counter()
        assert c.get("/c").json()["conn"] == first
        assert time.perf_counter() - t0 < NOT_DELAYED_S     # the removed toxic would take SLOW_MS again
        # and again, on the same connection
        http_proxy.add_toxic("lat", type="latency", stream="upstream", attributes={"latency": 200})
        t0 = time.perf_counter()
        assert c.get("/d").json()["conn"] == first
        assert time.perf_counter() - t0 >= 0.19
    assert http_proxy.counters["connections"] == 1


def test_http_toxic_on_an_open_keep_alive_connection(http_proxy, http_server):
    with httpx.Client(base_url=http_proxy.url, timeout=5) as c:
        first = c.get("/a").json()["conn"]
        name = http_proxy.add_http_toxic("replace_status", status=503, times=1)
        assert c.get("/b").status_code == 503
        assert c.get("/c").json()["conn"] == first
        http_proxy.remove_toxic(name)
        for i in range(5):
            assert c.get(f"/d{i}").json()["conn"] == first
        http_proxy.add_http_toxic("drop_response", match=HttpMatch(path="^/drop"), times=1)
        with pytest.raises(httpx.RemoteProtocolError):
            c.get("/drop")
        assert c.get("/e").status_code == 200  # a new connection
    cnt = http_proxy.counters
    assert cnt["connections"] == 2
    assert cnt["injected"] == {"replace_status": 1, "drop_response": 1}
    assert cnt["requests"] == cnt["responses"] == 10


def _trickle_server(total: int, piece: int, gap: float):
    def handler(c):
        buf = bytearray()
        read_head(c, buf)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % total)
        sent = 0
        while sent < total:
            n = min(piece, total - sent)
            c.sendall(b"z" * n)
            sent += n
            time.sleep(gap)

    return handler


def test_timeout_toxic_added_mid_body_stops_the_stream(scripted, fast):
    srv = scripted(_trickle_server(total=2000 * 400, piece=2000, gap=0.01))
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        buf = bytearray()
        read_head(s, buf)
        got = len(read_n(s, buf, 20_000))
        ip.add_toxic("to", type="timeout", stream="downstream", attributes={"timeout": 600})
        time.sleep(0.1)  # what was in flight before the toxic arrives
        s.settimeout(0.1)
        try:
            while True:
                got += len(s.recv(65536))
        except TimeoutError:
            pass
        before = got
        data, how = recv_until_closed(s, timeout=5)
        s.close()
        assert len(data) == 0, (before, len(data))
        assert how in ("eof", "reset")
        assert before < 2000 * 400
        assert ip.counters["injected"]["timeout"] == 1


def test_bandwidth_toxic_added_mid_chunked_body(scripted, fast):
    def handler(c):
        buf = bytearray()
        read_head(c, buf)
        c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(60):
            c.sendall(b"3e8\r\n" + b"q" * 1000 + b"\r\n")
            time.sleep(0.005)
        c.sendall(b"0\r\n\r\n")
        read_head(c, buf)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"GET /chunks HTTP/1.1\r\nHost: x\r\n\r\n")
        buf = bytearray()
        read_head(s, buf)
        read_n(s, buf, 5000)
        ip.add_toxic("bw", type="bandwidth", stream="downstream", attributes={"rate": 20})  # 20 KB/s
        t0 = time.perf_counter()
        rest = 60 * (5 + 1000 + 2) + 5 - 5000
        body = read_n(s, buf, rest, timeout=10)
        took = time.perf_counter() - t0
        assert body.endswith(b"0\r\n\r\n")
        assert took >= 1.0, took  # at least ~20 KB of the rest came after the toxic, at 20 KB/s
        ip.remove_toxic("bw")
        s.sendall(b"GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
        status, _, body = read_response(s, buf)
        assert status == 200 and body == b"ok"
        s.close()
        assert ip.counters["responses"] == 2


def test_toxic_added_mid_request_body(http_proxy, http_server):
    s = connect(http_proxy.address)
    first = b"POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabcde"
    s.sendall(first)
    deadline = time.monotonic() + 10      # synchronised: the interposer has read the head before the toxic
    while http_proxy.counters["requests"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert http_proxy.counters["requests"] == 1
    http_proxy.add_toxic("lat", type="latency", stream="upstream", attributes={"latency": 300})
    t0 = time.perf_counter()
    s.sendall(b"fghij")
    buf = bytearray()
    status, _, body = read_response(s, buf)
    took = time.perf_counter() - t0
    assert status == 200 and b'"echo": "abcdefghij"' in body
    assert took >= 0.28, took
    http_proxy.remove_toxic("lat")
    s.sendall(b"GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
    status, _, _ = read_response(s, buf)
    assert status == 200
    s.close()


def test_toxic_churn_under_load(http_proxy, http_server):
    """Toxics come and go while several keep-alive clients run: every answer is complete and correct."""
    stop = threading.Event()
    errors: list[BaseException] = []
    done = [0]

    def worker(i: int) -> None:
        try:
            with httpx.Client(base_url=http_proxy.url, timeout=10) as c:
                j = 0
                while not stop.is_set() and j < 400:
                    body = f"{i}-{j}" * 50
                    r = c.post(f"/w/{i}", content=body)
                    assert r.status_code == 200 and r.json()["echo"] == body
                    r = c.get("/chunked")
                    assert r.text == "hello chunked world"
                    j += 1
                    done[0] += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 3.0
    k = 0
    while time.monotonic() < deadline:
        k += 1
        http_proxy.add_toxic(f"lat{k}", type="latency", stream="downstream" if k % 2 else "upstream",
                             attributes={"latency": 2})
        time.sleep(0.05)
        http_proxy.remove_toxic(f"lat{k}")
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(30)
    assert not errors, errors[:1]
    assert done[0] > 10
    cnt = http_proxy.counters
    assert cnt["requests"] == cnt["responses"] == cnt["passed"]


def test_declined_upgrade_then_a_pipelined_request(scripted, fast):
    def handler(c):
        buf = bytearray()
        head = read_head(c, buf)
        assert b"upgrade" in head.lower()
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno")
        head = read_head(c, buf)
        assert head.startswith(b"GET /next ")
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok2")

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n"
                  b"GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
        buf = bytearray()
        assert read_response(s, buf)[2] == b"no"
        assert read_response(s, buf)[2] == b"ok2"
        s.close()
        cnt = ip.counters
        assert cnt["requests"] == cnt["responses"] == 2


def test_latency_toxic_inside_a_tunnel(scripted, fast):
    def handler(c):
        buf = bytearray()
        read_head(c, buf)
        c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")
        while True:
            data = c.recv(65536)
            if not data:
                return
            c.sendall(data)

    srv = scripted(handler)
    with Interposer(upstream=srv.address, **fast) as ip:
        s = connect(ip.address)
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")
        buf = bytearray()
        assert read_response(s, buf)[0] == 101

        def echo(payload: bytes) -> float:
            t0 = time.perf_counter()
            s.sendall(payload)
            assert read_n(s, buf, len(payload)) == payload
            return time.perf_counter() - t0

        echo(b"one")
        ip.add_toxic("lat", type="latency", stream="downstream", attributes={"latency": SLOW_MS})
        assert echo(b"two") >= SLOW_MS / 1000 - 0.01
        ip.remove_toxic("lat")
        assert echo(b"three") < NOT_DELAYED_S     # the removed toxic would take SLOW_MS again
        s.shutdown(socket.SHUT_WR)
        data, how = recv_until_closed(s, timeout=5)
        s.close()
        assert data == b"" and how == "eof"


def _modes(ip: Interposer) -> list[tuple[bool, bool]]:
    """(request side fast, response side fast) of each open connection (white box)."""

    async def get():
        return [(c.req_fast, c.resp_fast) for c in ip._proxy.connections]

    return ip._runtime.call(get())


def test_fast_path_is_used_and_follows_the_toxics(http_server):
    with Interposer(upstream=http_server.address) as ip, httpx.Client(base_url=ip.url, timeout=5) as c:
        conn = c.get("/a").json()["conn"]
        assert _modes(ip) == [(True, True)]
        ip.add_toxic("lat", type="latency", stream="downstream", attributes={"latency": 1})
        assert _modes(ip) == [(True, False)]  # a TCP toxic: only its direction
        c.get("/b")
        ip.remove_toxic("lat")
        assert _modes(ip) == [(True, True)]  # the response pump waited for a head: back at once
        name = ip.add_http_toxic("delay_request", match=HttpMatch(path="^/never"), times=0)
        assert _modes(ip) == [(False, False)]  # an HTTP toxic: both directions
        assert c.get("/c").status_code == 200
        ip.add_toxic("never", type="latency", attributes={"latency": 500}, toxicity=0.0)
        ip.remove_toxic(name)
        assert _modes(ip) == [(True, True)]  # a toxic this connection rolled out does not count
        for i in range(3):
            assert c.get(f"/d{i}").json()["conn"] == conn
        cnt = ip.counters
        assert cnt["connections"] == 1 and cnt["requests"] == cnt["responses"] == cnt["passed"] == 6


def test_slow_reader_backpressure_bounds_the_buffer(http_server, fast):
    """A client that does not read: the interposer stops reading the upstream (its buffer stays small), and
    every byte still arrives once the client reads."""
    size = 24_000_000
    with Interposer(upstream=http_server.address, **fast) as ip:
        s = connect(ip.address)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.sendall(b"GET /big=%d HTTP/1.1\r\nHost: x\r\n\r\n" % size)
        time.sleep(1.0)

        async def buffered():
            return [c.c_transport.get_write_buffer_size() for c in ip._proxy.connections]

        held = ip._runtime.call(buffered())
        assert held and max(held) < 4_000_000, held  # not the whole 24 MB
        buf = bytearray()
        head = read_head(s, buf, timeout=10)
        assert content_length(head) == size
        got = len(buf)
        s.settimeout(10)
        while got < size:
            part = s.recv(1 << 20)
            if not part:
                break
            got += len(part)
        s.close()
        assert got == size
