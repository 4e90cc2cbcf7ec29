"""One option table (ctk.plugin.options.OPTIONS) for `ctk run` and the plugin: the same names in both, grouped
by purpose in both helps, in the same order; `--workers` works under pytest too; and the messages of an
unusable target name the option to change."""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import procs
import pytest

from ctk import runner
from ctk.plugin.namespace import _create_hint
from ctk.plugin.options import GROUPS, OPTIONS
from ctk.plugin.session import probe

TITLES = list(GROUPS.values())


def _sections(text: str, prefix: str = "") -> dict[str, list[str]]:
    """Help sections (title -> option flags in it) of an argparse help text."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):      # a section's title
            m = re.match(rf"^{re.escape(prefix)}(.+):$", line)
            current = m.group(1) if m else None
            if current is not None:
                out[current] = []
        elif current is not None and (fm := re.match(r"^  (--[a-z-]+)", line)):
            out[current].append(fm.group(1))
    return out


def _ctk_run_help() -> str:
    r = subprocess.run([sys.executable, "-m", "ctk", "run", "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_ctk_run_help_is_grouped_by_purpose():
    help_text = _ctk_run_help()
    sections = _sections(help_text)
    assert [t for t in sections if t in TITLES] == TITLES
    for o in OPTIONS:
        if o.run:
            assert o.flag in sections[GROUPS[o.group]], (o.flag, o.group)
    print(f"ctk run --help: {len(help_text.splitlines())} lines, {len(TITLES)} groups")


def test_pytest_help_has_the_same_groups_and_names(pytester: pytest.Pytester):
    out = pytester.runpytest("--help").stdout.str()
    pytest_sections = {k: v for k, v in _sections(out, "ctk: ").items() if k in TITLES}
    assert list(pytest_sections) == TITLES
    run_sections = _sections(_ctk_run_help())
    for title in TITLES:       # the same options in the same group, in the same order; --ctk is pytest's alone
        assert [f for f in pytest_sections[title] if f != "--ctk"] == run_sections[title], title


def test_every_option_in_both():
    from _pytest.config.argparsing import Parser

    from ctk import pytest_plugin

    parser = Parser()
    pytest_plugin.pytest_addoption(parser)
    plugin = {name for group in parser._groups for opt in group.options for name in opt.names()}
    run = argparse.ArgumentParser()
    runner.add_arguments(run)
    taken = {o for a in run._actions for o in a.option_strings} - {"-h", "--help"}
    assert plugin - taken == {"--ctk"}          # `ctk run` implies it
    assert taken - plugin == {"-k"}             # pytest's own -k, which `ctk run` takes too (issue 35)
    assert {"--workers", "--catalog-image"} <= plugin & taken


def test_workers_under_pytest(pytester: pytest.Pytester):
    pytester.makepyfile(test_w="def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    result = pytester.runpytest_subprocess("--workers", "2", "-p", "no:cacheprovider", "test_w.py", timeout=300)
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert "created: 2/2 workers" in result.stdout.str()
    both = pytester.runpytest_subprocess("--workers", "2", "-n", "3", "test_w.py", timeout=300)
    assert both.ret == pytest.ExitCode.USAGE_ERROR and "--workers 2 or -n 3" in both.stderr.str()
    bad = pytester.runpytest_subprocess("--workers", "two", "test_w.py", timeout=300)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR and "--workers must be a whole number" in bad.stderr.str()


# --- hints name the option to change ---------------------------------------------------------------------


class _Answer(BaseHTTPRequestHandler):
    status, ctype, body = 404, "application/json", b'{"error": {"code": 404, "message": "no route"}}'

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(self.status)
        self.send_header("Content-Type", self.ctype)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


def _serving(handler) -> tuple[ThreadingHTTPServer, str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def test_404_on_config_names_the_url_and_prefix():
    srv, url = _serving(_Answer)
    try:
        problem = probe(url, 10, strict=True)
    finally:
        srv.shutdown()
    assert problem and "HTTP 404" in problem and "--catalog-url" in problem and "--catalog-prefix" in problem


def test_web_page_names_the_url():
    class Html(_Answer):
        status, ctype, body = 200, "text/html", b"<html>welcome</html>"

    srv, url = _serving(Html)
    try:
        problem = probe(url, 10, strict=True)
    finally:
        srv.shutdown()
    assert problem and "not a JSON object" in problem and "--catalog-url" in problem


def test_hang_names_the_timeout():
    """Accepts connections (the kernel's backlog) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        problem = probe(f"http://127.0.0.1:{sock.getsockname()[1]}", 1, strict=True)
    finally:
        sock.close()
    assert problem and "within the 1 s timeout" in problem and "--ctk-timeout" in problem


def test_nothing_listening_names_the_url():
    problem = probe(f"http://127.0.0.1:{procs.closed_port()}", 5, strict=True)
    assert problem and "connection refused" in problem and "--catalog-url" in problem


@pytest.mark.parametrize("status, option", [(404, "--catalog-prefix"), (403, "--catalog-token"),
                                            (400, "--ctk-parent-namespace")])
def test_run_namespace_not_creatable_names_the_option(status, option):
    assert option in _create_hint(status)
