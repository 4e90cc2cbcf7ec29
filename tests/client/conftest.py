"""Small local servers for client tests: a hanging one and a resetting one (a closed port: procs.closed_port)."""

from __future__ import annotations

import socket

from threaded_server import ThreadedServer


class RawServer(ThreadedServer):
    """A TCP server on 127.0.0.1 whose behaviour per connection is `mode`:
    "hang" (read, never answer), "reset" (read the request, then close without answering),
    "garbage" (answer with bytes that are not HTTP)."""

    def __init__(self, mode: str):
        self.mode = mode
        super().__init__()
        self.port = self.address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(1.0)
        try:
            conn.recv(65536)
        except OSError:
            pass
        if self.mode == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            conn.close()
        elif self.mode == "garbage":
            conn.sendall(b"\x00\x01garbage\r\n\r\n")
            conn.close()


import pytest


@pytest.fixture
def hanging_server():
    srv = RawServer("hang")
    yield srv
    srv.close()


@pytest.fixture
def resetting_server():
    srv = RawServer("reset")
    yield srv
    srv.close()


@pytest.fixture
def garbage_server():
    srv = RawServer("garbage")
    yield srv
    srv.close()


