"""The Spark request recorder is a tap on an interposer: what it records, with no Spark needed."""

from __future__ import annotations

import http.client
import http.server
import threading
import time
from urllib.parse import urlsplit

import pytest

from ctk.spark.session import RequestRecorder, commit_stats


class _Catalog(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _answer(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        status = 409 if self.path.endswith("/tables/conflict") else 200
        body = b'{"path": "%s"}' % self.path.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


@pytest.fixture
def catalog():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Catalog)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/api/catalog"
    srv.shutdown()
    srv.server_close()


def _wait_records(rec: RequestRecorder, n: int) -> list:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        got = rec.snapshot()
        if len(got) >= n:
            return got
        time.sleep(0.01)
    return rec.snapshot()


def test_recorder_notes_every_exchange_and_forwards_unchanged(catalog):
    rec = RequestRecorder(catalog)
    try:
        assert rec.url.endswith("/api/catalog")
        u = urlsplit(rec.url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        sent = [("GET", "/v1/config?warehouse=w"), ("POST", "/v1/namespaces/a/tables/t"),
                ("POST", "/v1/namespaces/a/tables/conflict")]
        for method, path in sent:
            conn.request(method, u.path + path, body=b"{}" if method == "POST" else None)
            resp = conn.getresponse()
            # the upstream saw the path unchanged (prefix included)
            assert resp.read() == b'{"path": "%s"}' % (u.path + path).encode()
        conn.close()
        records = _wait_records(rec, 3)
        assert [(r.method, r.path, r.status) for r in records] == [
            ("GET", "/v1/config?warehouse=w", 200), ("POST", "/v1/namespaces/a/tables/t", 200),
            ("POST", "/v1/namespaces/a/tables/conflict", 409)]
        assert all(r.seconds >= 0 and r.error is None for r in records)
        stats = commit_stats(records)
        assert stats["attempts"] == 2 and stats["conflicts"] == 1, stats
        rec.clear()
        assert rec.snapshot() == []
    finally:
        rec.stop()


def test_recorder_notes_a_request_left_unanswered(catalog):
    rec = RequestRecorder(catalog)
    try:
        u = urlsplit(rec.url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        # a body announced but never sent: the client gives up, the connection ends before any answer
        conn.putrequest("POST", u.path + "/v1/namespaces")
        conn.putheader("Content-Length", "10")
        conn.endheaders(b"{}")
        conn.close()
        records = _wait_records(rec, 1)
        assert [(r.method, r.path, r.status) for r in records] == [("POST", "/v1/namespaces", None)]
        assert records[0].error
    finally:
        rec.stop()


def test_recorder_refuses_https():
    with pytest.raises(ValueError, match="plain http"):
        RequestRecorder("https://127.0.0.1:1/")
