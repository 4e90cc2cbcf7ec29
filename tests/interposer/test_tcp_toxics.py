"""TCP toxics (Toxiproxy's names and attributes) against a loopback echo server."""

from __future__ import annotations

import socket
import time

import pytest

from ctk.interposer import Interposer, ToxicError
from ctk.interposer.toxics import latency_delay
from interposer_helpers import NOT_DELAYED_S, SLOW_MS, EchoServer, connect, recv_exactly, recv_until_closed


def roundtrip(s: socket.socket, payload: bytes = b"ping") -> tuple[bytes, float]:
    t0 = time.perf_counter()
    s.sendall(payload)
    data = recv_exactly(s, len(payload))
    return data, time.perf_counter() - t0


def test_plain_relay_and_byte_counters(tcp_proxy):
    s = connect(tcp_proxy.address)
    for i in range(20):
        data, _ = roundtrip(s, b"hello %d" % i)
        assert data == b"hello %d" % i
    s.close()
    c = tcp_proxy.counters
    assert c["connections"] == 1
    assert c["http_connections"] == 0
    assert c["bytes_upstream"] == c["bytes_downstream"] == sum(len(b"hello %d" % i) for i in range(20))


def test_server_speaks_first_is_relayed():
    server = EchoServer(greeting=b"HELLO-FROM-SERVER\n")
    try:
        with Interposer(upstream=server.address) as ip:
            s = connect(ip.address)
            assert recv_exactly(s, 18) == b"HELLO-FROM-SERVER\n"
            assert roundtrip(s, b"abc")[0] == b"abc"
            s.close()
    finally:
        server.close()


@pytest.mark.parametrize("stream", ["downstream", "upstream"])
def test_latency(tcp_proxy, stream):
    s = connect(tcp_proxy.address)
    _, base = roundtrip(s)
    tcp_proxy.add_toxic("lat", type="latency", stream=stream, attributes={"latency": SLOW_MS, "jitter": 0})
    data, took = roundtrip(s)
    assert data == b"ping"
    assert took >= SLOW_MS / 1000 - 0.01, took
    tcp_proxy.remove_toxic("lat")
    _, after = roundtrip(s)
    assert after < NOT_DELAYED_S, after      # the removed toxic would take SLOW_MS again
    s.close()


def test_latency_jitter_bounds(tcp_proxy):
    tcp_proxy.add_toxic("lat", type="latency", attributes={"latency": 100, "jitter": 50})
    s = connect(tcp_proxy.address)
    times = [roundtrip(s)[1] for _ in range(6)]
    s.close()
    assert all(t >= 0.045 for t in times), times     # never less than latency - jitter
    # and never more than latency + jitter: the delay each chunk gets, sampled (a timed upper bound would
    # measure the machine's load, not the toxic)
    delays = [latency_delay({"latency": 100, "jitter": 50}) for _ in range(2000)]
    assert 0.05 <= min(delays) and max(delays) <= 0.15 and max(delays) - min(delays) > 0.05, (min(delays),
                                                                                              max(delays))


def test_bandwidth(tcp_proxy):
    tcp_proxy.add_toxic("bw", type="bandwidth", attributes={"rate": 100})  # 100 KB/s
    s = connect(tcp_proxy.address)
    payload = b"x" * 50_000
    t0 = time.perf_counter()
    s.sendall(payload)
    data = recv_exactly(s, len(payload), timeout=10)
    took = time.perf_counter() - t0
    s.close()
    assert data == payload
    # 50 KB at 100 KB/s: at least ~0.5 s; the upper bound only catches a stalled stream (generous: load)
    assert 0.4 <= took < 10.0, took


def test_slicer_delivers_everything_in_pieces(tcp_proxy):
    tcp_proxy.add_toxic("sl", type="slicer", attributes={"average_size": 10, "size_variation": 5, "delay": 2000})
    s = connect(tcp_proxy.address)
    payload = bytes(range(256)) * 4
    t0 = time.perf_counter()
    s.sendall(payload)
    data = recv_exactly(s, len(payload), timeout=10)
    took = time.perf_counter() - t0
    s.close()
    assert data == payload
    # ~100 slices with 2 ms between them
    assert took >= 0.1, took
    assert tcp_proxy.counters["toxics"]["sl"]["applied"] >= 1


def test_slow_close(tcp_proxy):
    tcp_proxy.add_toxic("sc", type="slow_close", stream="downstream", attributes={"delay": 300})
    s = connect(tcp_proxy.address)
    assert roundtrip(s)[0] == b"ping"
    s.shutdown(socket.SHUT_WR)  # echo server closes -> downstream close is delayed
    t0 = time.perf_counter()
    data, how = recv_until_closed(s, timeout=5)
    took = time.perf_counter() - t0
    s.close()
    assert how == "eof"
    assert took >= 0.28, took
    assert tcp_proxy.counters["injected"].get("slow_close") == 1


def test_timeout_closes_after_timeout_and_drops_data(tcp_proxy):
    s = connect(tcp_proxy.address)
    assert roundtrip(s)[0] == b"ping"
    tcp_proxy.add_toxic("to", type="timeout", attributes={"timeout": 300})
    t0 = time.perf_counter()
    s.sendall(b"lost")
    data, how = recv_until_closed(s, timeout=5)
    took = time.perf_counter() - t0
    assert how in ("eof", "reset") and data == b""     # closed by the toxic, within recv_until_closed's 5 s
    assert took >= 0.25, took
    assert tcp_proxy.counters["injected"]["timeout"] == 1
    # new connections are affected too while the toxic exists, then fine once removed
    tcp_proxy.remove_toxic("to")
    s2 = connect(tcp_proxy.address)
    assert roundtrip(s2)[0] == b"ping"
    s2.close()


def test_timeout_zero_holds_until_removed(tcp_proxy):
    tcp_proxy.add_toxic("hold", type="timeout", stream="upstream", attributes={"timeout": 0})
    s = connect(tcp_proxy.address)
    s.sendall(b"held")
    s.settimeout(0.5)
    with pytest.raises(TimeoutError):
        s.recv(10)
    tcp_proxy.remove_toxic("hold")
    assert recv_exactly(s, 4, timeout=5) == b"held"
    s.close()


def test_reset_peer(tcp_proxy):
    s = connect(tcp_proxy.address)
    assert roundtrip(s)[0] == b"ping"
    tcp_proxy.add_toxic("rst", type="reset_peer", attributes={"timeout": 200})
    t0 = time.perf_counter()
    data, how = recv_until_closed(s, timeout=5)
    assert how == "reset", how
    assert time.perf_counter() - t0 >= 0.18
    s.close()
    assert tcp_proxy.counters["injected"]["reset_peer"] == 1


def test_reset_peer_immediate_on_new_connections(tcp_proxy):
    tcp_proxy.add_toxic("rst", type="reset_peer", attributes={"timeout": 0})
    s = None
    try:
        # Under load the RST can arrive before connect() returns: a reset at any step is the behaviour.
        s = connect(tcp_proxy.address)
        s.sendall(b"x")
        _, how = recv_until_closed(s, timeout=5)
    except (ConnectionResetError, BrokenPipeError):
        how = "reset"
    finally:
        if s is not None:
            s.close()
    assert how == "reset"


def test_limit_data(tcp_proxy):
    tcp_proxy.add_toxic("lim", type="limit_data", stream="downstream", attributes={"bytes": 10})
    s = connect(tcp_proxy.address)
    s.sendall(b"0123456789abcdefghij")
    data, how = recv_until_closed(s, timeout=5)
    s.close()
    assert data == b"0123456789"
    assert how in ("eof", "reset")
    assert tcp_proxy.counters["injected"]["limit_data"] == 1


def test_toxicity_zero_never_applies(tcp_proxy):
    tcp_proxy.add_toxic("lat", type="latency", attributes={"latency": SLOW_MS}, toxicity=0.0)
    s = connect(tcp_proxy.address)
    assert roundtrip(s)[1] < NOT_DELAYED_S
    s.close()


def test_disable_and_enable(tcp_proxy):
    host, port = tcp_proxy.address
    s = connect((host, port))
    assert roundtrip(s)[0] == b"ping"
    tcp_proxy.disable()
    _, how = recv_until_closed(s, timeout=3)
    assert how in ("eof", "reset")
    with pytest.raises(OSError):
        connect((host, port), timeout=1)
    tcp_proxy.enable()
    assert tcp_proxy.address == (host, port)
    s2 = connect((host, port))
    assert roundtrip(s2)[0] == b"ping"
    s2.close()


def test_bad_toxics_are_refused(tcp_proxy):
    with pytest.raises(ToxicError, match="invalid toxic type"):
        tcp_proxy.add_toxic("x", type="no_such_toxic")
    with pytest.raises(ToxicError, match="stream"):
        tcp_proxy.add_toxic("x", type="latency", stream="sideways")
    with pytest.raises(ToxicError, match="unknown attribute"):
        tcp_proxy.add_toxic("x", type="latency", attributes={"latnecy": 5})
    with pytest.raises(ToxicError, match="negative"):
        tcp_proxy.add_toxic("x", type="latency", attributes={"latency": -5})
    with pytest.raises(ToxicError, match="toxicity"):
        tcp_proxy.add_toxic("x", type="latency", toxicity=2)
    tcp_proxy.add_toxic("x", type="latency")
    with pytest.raises(ToxicError, match="already exists"):
        tcp_proxy.add_toxic("x", type="latency")


def test_refuses_non_loopback_listen(echo_server):
    with pytest.raises(ValueError, match="non-loopback"):
        Interposer(upstream=echo_server.address, listen=("0.0.0.0", 0))


def test_upstream_unreachable_closes_client_cleanly():
    with socket.socket() as tmp:
        tmp.bind(("127.0.0.1", 0))
        dead_port = tmp.getsockname()[1]
    with Interposer(upstream=("127.0.0.1", dead_port)) as ip:
        s = connect(ip.address)
        data, how = recv_until_closed(s, timeout=5)
        s.close()
        assert data == b"" and how == "eof"
        assert ip.counters["upstream_errors"] == 1


def test_reset_clears_toxics_and_counters(tcp_proxy):
    tcp_proxy.add_toxic("lat", type="latency", attributes={"latency": SLOW_MS})
    tcp_proxy.disable()
    tcp_proxy.reset()
    assert tcp_proxy.toxics() == []
    s = connect(tcp_proxy.address)
    assert roundtrip(s)[1] < NOT_DELAYED_S
    s.close()
    assert tcp_proxy.counters["connections"] == 1


def test_cut_after_drops_the_answer_to_the_pattern_and_resets(tcp_proxy, echo_server):
    """cut_after: what the client sends up to and with the pattern reaches the server; the server's answer to
    it does not reach the client, which gets a reset; once used up, the next connection is untouched."""
    name = tcp_proxy.add_toxic("cut", type="cut_after", stream="upstream", attributes={"pattern": "COMMIT"})
    s = connect(tcp_proxy.address)
    s.sendall(b"BEGIN;")
    assert recv_exactly(s, 6) == b"BEGIN;"
    s.sendall(b"COMMIT;")
    data, how = recv_until_closed(s, timeout=5)
    assert (data, how) == (b"", "reset")
    s.close()
    assert tcp_proxy.counters["injected"].get("cut_after") == 1
    [ev] = [e for e in tcp_proxy.events() if e["kind"] == "cut_after"]
    assert ev["toxic"] == name and "COMMIT" in ev["sent"] and ev["dropped"] == 7
    s2 = connect(tcp_proxy.address)          # times=1: used up
    s2.sendall(b"COMMIT;")
    assert recv_exactly(s2, 7) == b"COMMIT;"
    s2.close()


def test_cut_after_needs_a_text_pattern(tcp_proxy):
    with pytest.raises(ToxicError, match="pattern"):
        tcp_proxy.add_toxic("cut", type="cut_after", stream="upstream", attributes={"pattern": 5})


def test_cut_after_without_delivery_drops_the_matching_write(tcp_proxy, echo_server):
    """deliver 0: the chunk that matches never reaches the server; the client gets a reset at once."""
    tcp_proxy.add_toxic("cut", type="cut_after", stream="upstream",
                        attributes={"pattern": r"INSERT INTO|UPDATE \S+ SET", "deliver": 0})
    s = connect(tcp_proxy.address)
    s.sendall(b"SELECT 1 FOR UPDATE;")
    assert recv_exactly(s, 20) == b"SELECT 1 FOR UPDATE;"
    s.sendall(b"UPDATE t SET a = 1;")
    data, how = recv_until_closed(s, timeout=5)
    assert (data, how) == (b"", "reset")
    s.close()
    [ev] = [e for e in tcp_proxy.events() if e["kind"] == "cut_after"]
    assert "UPDATE t SET" in ev["sent"] and ev["dropped"] == 0
