"""Small local servers for client tests: a hanging one and a resetting one (a closed port: procs.closed_port)."""

from __future__ import annotations

import socket
import threading
import time


class RawServer:
    """A TCP server on 127.0.0.1 whose behaviour per connection is `mode`:
    "hang" (read, never answer), "reset" (read the request, then close without answering),
    "garbage" (answer with bytes that are not HTTP)."""

    def __init__(self, mode: str, hold: float = 10.0):
        self.mode = mode
        self.hold = hold
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        deadline = time.monotonic() + 120
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self._conns.append(conn)
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

    def close(self) -> None:
        self._stop.set()
        self.thread.join(2)
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass
        self.sock.close()


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


