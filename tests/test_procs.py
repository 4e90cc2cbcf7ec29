"""tests/procs.py: servers our tests start bind port 0 and say where, or are started again when a port picked
for them was taken; what a start that fails prints is kept."""

from __future__ import annotations

import socket
import sys

import httpx
import pytest

import procs

# binds the port given as argv[1] and listens until killed (a program that says nothing of its port)
TAKES_A_PORT = ("import socket, sys, time\n"
                "s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(1)\n"
                "time.sleep(600)\n")


def test_serve_and_interposer_say_where_they_listen():
    with procs.serve() as catalog:
        assert httpx.get(f"{catalog.url}/v1/config", timeout=10).status_code == 200
        with procs.interposer(catalog.url.split("//", 1)[1]) as ip:
            host, port = ip.listen
            assert httpx.get(f"http://{host}:{port}/v1/config", timeout=10).status_code == 200
            assert httpx.get(f"{ip.api_url}/proxies", timeout=10).json()["ctk"]["listen"] == f"{host}:{port}"
    assert catalog.popen.returncode == 0 and ip.popen.returncode == 0


def test_exit_before_announcing_is_an_error_with_the_output():
    with pytest.raises(procs.StartFailed) as info:
        procs.start([sys.executable, "-c", "print('no such thing'); raise SystemExit(3)"], {"url": procs.SERVE_URL})
    assert info.value.returncode == 3 and "no such thing" in info.value.output
    assert "before announcing ['url']" in str(info.value) and not info.value.port_taken


def test_a_taken_port_is_tried_again_on_another(monkeypatch):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    taken = busy.getsockname()[1]
    ports = iter([taken, procs.closed_port()])
    monkeypatch.setattr(procs, "closed_port", lambda: next(ports))
    try:
        started, port = procs.start_on_free_port(lambda p: [sys.executable, "-c", TAKES_A_PORT, str(p)])
    finally:
        busy.close()
    with started:
        assert port != taken
        assert procs.listening(started.pid, port)
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass


def test_attempts_are_bounded(monkeypatch):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    tried = []
    monkeypatch.setattr(procs, "closed_port", lambda: tried.append(busy.getsockname()[1]) or tried[-1])
    try:
        with pytest.raises(procs.StartFailed) as info:
            procs.start_on_free_port(lambda p: [sys.executable, "-c", TAKES_A_PORT, str(p)], attempts=2)
    finally:
        busy.close()
    assert len(tried) == 2 and info.value.port_taken and "Address already in use" in info.value.output


def test_another_process_on_the_port_is_not_ours():
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen(1)
        with procs.Started([sys.executable, "-c", "import time; time.sleep(600)"]) as idle:
            assert not procs.listening(idle.pid, other.getsockname()[1])
