"""Loopback servers and socket helpers for the interposer tests (echo, tiny HTTP/1.1, hanging server)."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time

from threaded_server import ThreadedServer

# Where a test checks that a toxic does NOT delay (removed, reset, toxicity 0), the toxic is long (SLOW_MS) and
# "not delayed" is a bound of half of it: applying it would take SLOW_MS, and half leaves a loaded 2-core
# machine room. No test bounds a fast path tightly; that a delay IS applied is a lower bound, which load
# cannot break.
SLOW_MS = 2000
NOT_DELAYED_S = SLOW_MS / 1000 / 2


class EchoServer(ThreadedServer):
    """Threaded TCP echo server; `greeting` is sent first when set (a server-speaks-first protocol)."""

    def __init__(self, greeting: bytes = b""):
        self.greeting = greeting
        super().__init__()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        try:
            if self.greeting:
                conn.sendall(self.greeting)
            while not self.stop_flag.is_set():
                data = conn.recv(65536)
                if not data:
                    break
                conn.sendall(data)
        except OSError:
            pass
        finally:
            conn.close()


class App:
    """State of the tiny HTTP server: counts the POSTs that committed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.commits: list[dict] = []
        self.hits = 0
        # answer no POST before this many have arrived (bounded by hold_s): a burst meets at the server by design
        self.hold_until: int | None = None
        self.hold_s = 5.0
        self.arrived = threading.Condition(self.lock)


def make_handler(app: App):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0], 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b""):
                            pass
                        return out
                    out += self.rfile.read(size)
                    self.rfile.read(2)
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _send(self, status: int, body: bytes, ctype: str = "application/json", extra=None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            with app.lock:
                app.hits += 1
            path = self.path
            if path.startswith("/slow"):
                time.sleep(float(path.split("=", 1)[1]) if "=" in path else 0.5)
                self._send(200, b'{"slow": true}')
            elif path.startswith("/big"):
                n = int(path.split("=", 1)[1])
                self._send(200, b"x" * n, "application/octet-stream")
            elif path.startswith("/chunked"):
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for part in (b"hello ", b"chunked ", b"world"):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            elif path.startswith("/die"):
                # headers promise more than is sent, then the connection dies
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                self.wfile.write(b"partial")
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            elif path.startswith("/close"):
                self._send(200, b'{"close": true}', extra={"Connection": "close"})
                self.close_connection = True
            elif path.startswith("/commits"):
                with app.lock:
                    self._send(200, json.dumps({"commits": len(app.commits)}).encode())
            else:
                self._send(200, json.dumps({"path": path, "conn": id(self.connection)}).encode())

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "1234")
            self.end_headers()

        def do_POST(self) -> None:
            body = self._body()
            with app.lock:
                app.hits += 1
                app.commits.append({"path": self.path, "body": body.decode("latin-1"),
                                    "key": self.headers.get("Idempotency-Key")})
                n = len(app.commits)
                app.arrived.notify_all()
                if app.hold_until is not None:
                    app.arrived.wait_for(lambda: len(app.commits) >= app.hold_until, timeout=app.hold_s)
            self._send(200, json.dumps({"committed": n, "echo": body.decode("latin-1")}).encode())

        do_PUT = do_POST
        do_DELETE = do_POST

    return Handler


class HttpServer:
    def __init__(self) -> None:
        self.app = App()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.app))
        self.server.daemon_threads = True
        self.address = self.server.server_address[:2]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(2)


class HangServer(ThreadedServer):
    """Accepts and never answers (the connection stays open until `close`)."""

    def _serve(self, conn: socket.socket) -> None:
        pass


def connect(address, timeout: float = 5.0) -> socket.socket:
    s = socket.create_connection(tuple(address), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exactly(s: socket.socket, n: int, timeout: float = 5.0) -> bytes:
    s.settimeout(timeout)
    out = b""
    while len(out) < n:
        part = s.recv(n - len(out))
        if not part:
            break
        out += part
    return out


def recv_until_closed(s: socket.socket, timeout: float = 5.0) -> tuple[bytes, str]:
    """All bytes until the peer closes; returns (data, 'eof' | 'reset' | 'timeout')."""
    s.settimeout(timeout)
    out = b""
    try:
        while True:
            part = s.recv(65536)
            if not part:
                return out, "eof"
            out += part
    except ConnectionResetError:
        return out, "reset"
    except TimeoutError:
        return out, "timeout"
