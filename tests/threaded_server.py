"""A loopback TCP server for tests that runs `_serve(conn)` for each connection in a thread of its own (the
interposer tests' echo and HTTP servers, the client tests' hanging and resetting servers)."""

from __future__ import annotations

import socket
import threading


class ThreadedServer:
    """A loopback TCP server that runs `_serve(conn)` for each connection in a thread of its own."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.address = self.sock.getsockname()
        self.stop_flag = threading.Event()
        self.connections = 0
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop_flag.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.stop_flag.set()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass
        self.sock.close()
        self.thread.join(2)
