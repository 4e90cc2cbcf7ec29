"""Fixtures for the interposer tests (servers live in interposer_helpers.py).

Every interposer test runs on both event loops the interposer can take: asyncio's own and uvloop (the default
whenever uvloop is installed; the `fast` extra, in `.[all]`, installs it). Tests that choose the loop
themselves (test_http_framing.py's `fast` fixture) are left to their own parameters. uvloop missing skips the
uvloop half on a developer's machine and fails it under CI."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from interposer_helpers import EchoServer, HangServer, HttpServer

from ctk.interposer import Interposer
from required import require

LOOPS = ("asyncio", "uvloop")


def pytest_generate_tests(metafunc):
    if "interposer_loop" in metafunc.fixturenames and "fast" not in metafunc.fixturenames:
        metafunc.parametrize("interposer_loop", LOOPS, indirect=True)


@pytest.fixture(autouse=True)
def interposer_loop(request, monkeypatch) -> str | None:
    """The event loop every Interposer of the test runs on (CTK_INTERPOSER_LOOP, read when one is made)."""
    loop = getattr(request, "param", None)
    if loop == "uvloop":
        try:
            import uvloop  # noqa: F401
        except ImportError:
            require("uvloop", "uvloop is not installed (the fast extra: pip install -e '.[fast]')")
    if loop is not None:
        monkeypatch.setenv("CTK_INTERPOSER_LOOP", loop)
    return loop


@pytest.fixture
def echo_server() -> Iterator[EchoServer]:
    s = EchoServer()
    yield s
    s.close()


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    s = HttpServer()
    yield s
    s.close()


@pytest.fixture
def hang_server() -> Iterator[HangServer]:
    s = HangServer()
    yield s
    s.close()


@pytest.fixture
def tcp_proxy(echo_server) -> Iterator[Interposer]:
    with Interposer(upstream=echo_server.address) as ip:
        yield ip


@pytest.fixture
def http_proxy(http_server) -> Iterator[Interposer]:
    with Interposer(upstream=http_server.address, api=("127.0.0.1", 0)) as ip:
        yield ip
