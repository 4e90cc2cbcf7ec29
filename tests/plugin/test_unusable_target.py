"""An unusable target gives one early error naming the cause and the user's URL, exit code 6, and a report that
says why: nothing listening, never answers, not HTTP, HTML or 500 to everything, credentials rejected, run
namespace not creatable. A usable target still runs (the check does not get in the way)."""

from __future__ import annotations

import json
import re
import socket
import threading
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import procs
import pytest

from ctk.plugin.exits import EXIT_UNUSABLE_TARGET

TESTS = """
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_one(ctk_context):
    return Verdict.ok("KEY-01", "ran")

@pytest.mark.ctk
def test_two(ctk_client):
    return Verdict.ok("KEY-02", "ran")
"""


class _Handler(BaseHTTPRequestHandler):
    mode = "html"

    def log_message(self, *args):  # quiet
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        mode = self.server.mode  # type: ignore[attr-defined]
        if mode == "html":
            self._send(200, "text/html", b"<html><body>Welcome to nginx!</body></html>")
        elif mode == "500":
            self._send(500, "application/json", b'{"error": {"code": 500, "message": "boom"}}')
        elif mode == "401":
            self._send(401, "application/json", b'{"error": {"code": 401, "type": "NotAuthorizedException"}}')
        elif mode == "no-namespace":
            if self.path.startswith("/v1/config"):
                self._send(200, "application/json", b'{"defaults": {}, "overrides": {}}')
            else:
                self._send(403, "application/json",
                           b'{"error": {"code": 403, "type": "ForbiddenException", "message": "read-only"}}')

    do_GET = do_POST = do_DELETE = do_HEAD = _answer

    def _send(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def scripted():
    servers = []

    def start(mode: str) -> str:
        srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        srv.mode = mode  # type: ignore[attr-defined]
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def not_http_url():
    """Accepts, writes a non-HTTP greeting, closes."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def loop():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            try:
                c.settimeout(2)
                c.recv(65536)                     # read the request, so closing does not reset the connection
                c.sendall(b"SSH-2.0-OpenSSH_9.2\r\nProtocol mismatch.\r\n")
                c.shutdown(socket.SHUT_WR)
                c.recv(65536)
            except OSError:
                pass
            finally:
                c.close()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    t.join(2)
    srv.close()


def _dead_url() -> str:
    """A URL nothing listens on; nothing is started there, so a closed port is all it needs."""
    return f"http://127.0.0.1:{procs.closed_port()}"


def _run(pytester: pytest.Pytester, url: str, *extra: str) -> tuple[pytest.RunResult, str, dict]:
    pytester.makepyfile(test_unusable=TESTS)
    result = pytester.runpytest("test_unusable.py", "--catalog-url", url, "--ctk-timeout", "2",
                                "--ctk-reports", "rep", "-p", "no:html", *extra)
    text = result.stdout.str() + result.stderr.str()
    result.rep_dir = pytester.path / "rep"  # type: ignore[attr-defined]
    data = json.loads((result.rep_dir / "conformance.json").read_text())  # type: ignore[attr-defined]
    return result, text, data


def _assert_unusable(result, text: str, data: dict, url: str, cause: str) -> None:
    assert result.ret == EXIT_UNUSABLE_TARGET, text
    assert re.search(cause, text), text
    assert text.count("the target is unusable, no check ran") == 1, text   # one error, not one per check
    assert text.count("exit 6: the target is unusable (docs/verdicts.md)") == 1, text   # the exit line, once
    assert "ran" not in [r.get("message") for r in data["results"]]  # no check ran
    assert len(text.splitlines()) < 60, text
    port = url.rsplit(":", 1)[1]
    assert set(re.findall(r"127\.0\.0\.1:(\d+)", text)) == {port}, text   # the user's URL, never the interposer's
    assert data["state"] == "unusable-target" and re.search(cause, data["problem"]), data
    assert data["overall"] is None
    html = (result.rep_dir / "conformance.html").read_text()
    assert "UNUSABLE TARGET" in html and 'id="unusable"' in html
    _assert_junit_fails(result.rep_dir / "junit.xml", url, cause)


def _assert_junit_fails(path, url: str, cause: str) -> None:
    """A CI job that reads only junit.xml sees the run fail, with the cause and the user's URL."""
    assert path.is_file(), f"no {path}"
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    failures = [(case, f) for s in suites for case in s.iter("testcase") for f in case.findall("failure")]
    assert len(failures) == 1, ET.tostring(root, encoding="unicode")
    case, failure = failures[0]
    assert case.get("name") == "target_usable"
    assert re.search(cause, failure.get("message")) and url in failure.get("message"), failure.get("message")
    assert sum(int(s.get("failures")) for s in suites) == 1 and sum(int(s.get("tests")) for s in suites) == 1


def test_nothing_listening(pytester: pytest.Pytester):
    url = _dead_url()
    result, text, data = _run(pytester, url)
    _assert_unusable(result, text, data, url, r"connection refused, nothing listening")


def test_never_answers(pytester: pytest.Pytester, hanging_url):
    result, text, data = _run(pytester, hanging_url)
    _assert_unusable(result, text, data, hanging_url, r"did not answer GET /v1/config within the 2 s timeout")


def test_not_http(pytester: pytest.Pytester, not_http_url):
    result, text, data = _run(pytester, not_http_url)
    _assert_unusable(result, text, data, not_http_url, r"does not speak HTTP")


@pytest.mark.parametrize("mode, cause", [
    ("html", r"not a JSON object \(text/html\)"),
    ("500", r"answered HTTP 500 to GET /v1/config"),
    ("401", r"requires credentials: GET /v1/config answered HTTP 401"),
    ("no-namespace", r"run namespace not creatable: .*HTTP 403"),
])
def test_answers_but_unusable(pytester: pytest.Pytester, scripted, mode, cause):
    url = scripted(mode)
    result, text, data = _run(pytester, url)
    _assert_unusable(result, text, data, url, cause)


@pytest.fixture(scope="module")
def token_server():
    """`ctk serve --token s3cret` in its own process (an inline pytest run must not share its modules)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "ctk", "serve", "--token", "s3cret"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def test_wrong_token_reads_as_rejected(pytester: pytest.Pytester, token_server):
    result, text, data = _run(pytester, token_server, "--catalog-token", "wrong")
    _assert_unusable(result, text, data, token_server, r"rejected the credentials: GET /v1/config answered HTTP 401")


def test_wrong_client_secret_reads_as_rejected(pytester: pytest.Pytester, token_server):
    url = token_server
    result, text, data = _run(pytester, url, "--catalog-credential", "me:wrong")
    _assert_unusable(result, text, data, url, r"rejected the client credentials: POST /v1/oauth/tokens "
                                              r"answered HTTP 401")
    assert "did not answer" not in text
    # the right secret works: both checks run
    pytester.makepyfile(test_unusable=TESTS)
    ok = pytester.runpytest("test_unusable.py", "--catalog-url", url, "--catalog-credential", "me:s3cret",
                            "-p", "no:html", "--ctk-reports", "rep2")
    assert ok.ret == 0, ok.stdout.str()
    ok.assert_outcomes(passed=2)


def test_unusable_under_xdist_exits_before_workers(pytester: pytest.Pytester):
    url = _dead_url()
    pytester.makepyfile(test_unusable=TESTS)
    result = pytester.runpytest_subprocess("test_unusable.py", "--catalog-url", url, "-n", "2", "-p", "no:html",
                                           "--ctk-reports", "rep", timeout=120)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == EXIT_UNUSABLE_TARGET, text
    assert "connection refused" in text and len(text.splitlines()) < 60, text
    assert "[gw0]" not in text   # no worker started


@pytest.mark.parametrize("mode", ["dead-port", "html"])
def test_unusable_under_xdist_writes_junit(pytester: pytest.Pytester, scripted, mode):
    """With workers the controller stops before its session starts, so pytest writes no junit.xml of its own:
    the kit writes it, with the same one failure as without workers."""
    url = _dead_url() if mode == "dead-port" else scripted("html")
    cause = r"connection refused" if mode == "dead-port" else r"not a JSON object \(text/html\)"
    pytester.makepyfile(test_unusable=TESTS)
    result = pytester.runpytest_subprocess("test_unusable.py", "--catalog-url", url, "-n", "2", "-p", "no:html",
                                           "--ctk-timeout", "2", "--ctk-reports", "rep", timeout=120)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == EXIT_UNUSABLE_TARGET, text
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    assert data["state"] == "unusable-target" and re.search(cause, data["problem"]), data
    _assert_junit_fails(pytester.path / "rep" / "junit.xml", url, cause)
