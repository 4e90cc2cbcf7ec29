"""Fixtures for the interposer tests (servers live in interposer_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from interposer_helpers import EchoServer, HangServer, HttpServer

from ctk.interposer import Interposer


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
