"""A TCP front that drops connections the way real catalogs do without saying so (no ``Connection: close``):

* ``idle``       a keep-alive connection that has been answered once is closed when the next request comes in
                 on it, before any answer (a catalog closing idle keep-alive connections, the request racing the
                 close; seen turning TBL-06 into inconclusive);
* ``after-5xx``  the same, only after a 5xx answer (a server that closes the connection after each 500).

The front relays bytes between the kit and the upstream (one upstream connection per client connection); a
request is "the next one" when the client sends bytes after the upstream began an answer. ``drops`` counts the
requests dropped, so a test can assert that the oddity happened. Only reads (GET, HEAD) are dropped: a real
close races every kind of request, but a mutation lost that way is a lost answer (the idempotency family's
matter, which the interposer injects), and the kit's setup must get through.
"""

from __future__ import annotations

import selectors
import socket
import threading
from typing import Any


class DroppingFront:
    def __init__(self, upstream: str, when: str = "idle") -> None:
        host, port = upstream.rsplit("//", 1)[1].rstrip("/").split(":")
        self.upstream = (host, int(port))
        self.when = when
        self.drops = 0
        self.url: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []

    def start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        sock.settimeout(0.2)
        self._sock = sock
        t = threading.Thread(target=self._accept, daemon=True, name="dropping-front")
        t.start()
        self._threads.append(t)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        return self.url

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(5)
        if self._sock is not None:
            self._sock.close()

    def _accept(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            t = threading.Thread(target=self._relay, args=(conn,), daemon=True, name="dropping-front-conn")
            t.start()

    def _due(self, answer_head: bytes) -> bool:
        return self.when == "idle" or (self.when == "after-5xx" and answer_head[9:10] == b"5")

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, "client")
        sel.register(upstream, selectors.EVENT_READ, "upstream")
        answer_head = b""          # the start of the last answer relayed (b"": none since the last request)
        try:
            while not self._stop.is_set():
                for key, _ in sel.select(0.2):
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    if not data:
                        return
                    if key.data == "client":
                        if answer_head and self._due(answer_head) and data.startswith((b"GET ", b"HEAD ")):
                            with self._lock:
                                self.drops += 1
                            return           # closed under the new request, no answer
                        answer_head = b""
                        upstream.sendall(data)
                    else:
                        answer_head = answer_head or data[:16]
                        client.sendall(data)
        except OSError:
            return
        finally:
            sel.close()
            for s in (client, upstream):
                try:
                    s.close()
                except OSError:
                    pass

    def __enter__(self) -> "DroppingFront":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
