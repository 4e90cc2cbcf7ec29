"""The loop the interposer tests ask for (tests/interposer/conftest.py) is the loop the interposer runs on."""

from __future__ import annotations

from ctk.interposer import Interposer
from interposer_helpers import connect, recv_exactly


def test_interposer_runs_on_the_loop_the_test_asked_for(echo_server, interposer_loop):
    with Interposer(upstream=echo_server.address) as ip:
        assert ip.loop_name == interposer_loop
        module = type(ip._runtime.loop).__module__
        assert module.startswith("uvloop") if interposer_loop == "uvloop" else module.startswith("asyncio"), module
        s = connect(ip.address)
        s.sendall(b"ping")
        assert recv_exactly(s, 4) == b"ping"
        s.close()
