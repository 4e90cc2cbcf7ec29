"""SIGTERM cleans up like Ctrl-C: once checks are running in a run against `ctk serve`, SIGTERM (to `ctk run`,
or to pytest itself) ends the run with exit 2, partial reports marked "interrupted", and no namespace of the
run left in the target. `ctk cleanup` removes leftovers of earlier runs, and only the kit's own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from ctk.plugin.exits import EXIT_INTERRUPTED


@pytest.fixture(scope="module")
def served():
    """`ctk serve --control-api` in its own process (the catalog outlives the runs we interrupt)."""
    proc = subprocess.Popen([sys.executable, "-m", "ctk", "serve", "--control-api", "--lifetime", "PT4S",
                             "--grace", "PT2S"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


def _top(url: str) -> list[str]:
    r = httpx.get(f"{url}/v1/namespaces", timeout=10)
    r.raise_for_status()
    return [ns[0] for ns in r.json()["namespaces"]]


def _busy(url: str) -> bool:
    """Some run namespace already holds something: checks are running."""
    for name in _top(url):
        if name.startswith("ctk_") and not name.endswith("_preflight"):
            enc = name
            kids = httpx.get(f"{url}/v1/namespaces", params={"parent": enc}, timeout=10).json().get("namespaces")
            tables = httpx.get(f"{url}/v1/namespaces/{enc}/tables", timeout=10).json().get("identifiers")
            if kids or tables:
                return True
    return False


def _wait_busy(url: str, proc: subprocess.Popen, limit: float = 180.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before its checks got going"
        if _busy(url):
            return
        time.sleep(0.2)
    pytest.fail("no check started within the time limit")


@pytest.mark.parametrize("how", ["ctk-run-xdist", "ctk-run-as-background-job", "pytest-one-process",
                                 "pytest-xdist-controller"])
def test_sigterm_leaves_no_namespace(served, tmp_path, how):
    before = [n for n in _top(served) if n.startswith("ctk_")]
    assert not before, before
    reports = tmp_path / "rep"
    if how.startswith("ctk-run"):
        cmd = [sys.executable, "-m", "ctk", "run", "--catalog-url", served, "--workers", "2",
               "--ctk-reports", str(reports), "--", "-p", "no:cacheprovider"]
    else:   # SIGTERM to pytest itself; with xdist only the controller gets it and passes it on to its workers
        cmd = [sys.executable, "-m", "pytest", "--catalog-url", served, "--ctk-reports", str(reports),
               "-p", "no:cacheprovider"] + (["-n", "2"] if how.endswith("xdist-controller") else [])
    log = open(tmp_path / "out.txt", "w")
    # a shell's background job (`ctk run ... &` in a CI script) starts with SIGINT ignored, and so do its children
    ignore_sigint = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if how.endswith("background-job") else None
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, preexec_fn=ignore_sigint)
    try:
        _wait_busy(served, proc)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(150)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    out = (tmp_path / "out.txt").read_text()
    assert code == EXIT_INTERRUPTED, out[-3000:]
    left = [n for n in _top(served) if n.startswith("ctk_")]
    assert left == [], (left, out[-3000:])
    data = json.loads((reports / "conformance.json").read_text())
    assert data["state"] == "interrupted" and data["overall"] in (None, "fail", "deviation")
    assert "Interrupted." in (reports / "conformance.html").read_text()
    print(f"{how}: exit {code} {took:.1f} s after SIGTERM, results {len(data['results'])}")


def _ns(url: str, name: list[str], props: dict | None = None) -> None:
    r = httpx.post(f"{url}/v1/namespaces", json={"namespace": name, "properties": props or {}}, timeout=10)
    assert r.status_code == 200, r.text


def test_cleanup_removes_only_the_kits_own(served, capsys):
    from ctk.cli import main

    _ns(served, ["ctk_deadbeef_gw0"], {"ctk.run-id": "deadbeef"})       # a marked run namespace
    _ns(served, ["ctk_deadbeef_gw0", "child"])                           # with a child
    _ns(served, ["ctk_deadbeef_gw0_sib"])                                # and a registered-style sibling
    _ns(served, ["ctk_cafe0000_gw1"])                                    # same pattern, no marker: not ours
    _ns(served, ["ctk_12345678_main"], {"ctk.run-id": "87654321"})       # marker of another id: not ours
    _ns(served, ["mine"], {"ctk.run-id": "deadbeef"})                    # the user's
    try:
        assert main(["cleanup", "--catalog-url", served, "--dry-run"]) == 0
        assert "would remove ctk_deadbeef_gw0 (run deadbeef) (+1 sibling namespaces)" in capsys.readouterr().out
        assert "ctk_deadbeef_gw0" in _top(served)
        assert main(["cleanup", "--catalog-url", served]) == 0
        left = _top(served)
        assert "ctk_deadbeef_gw0" not in left and "ctk_deadbeef_gw0_sib" not in left
        assert {"ctk_cafe0000_gw1", "ctk_12345678_main", "mine"} <= set(left)
        assert main(["cleanup", "--catalog-url", served]) == 0
        assert "no leftover run namespaces" in capsys.readouterr().out
    finally:
        for name in ("ctk_cafe0000_gw1", "ctk_12345678_main", "mine"):
            httpx.delete(f"{served}/v1/namespaces/{name}", timeout=10)


def test_cleanup_of_an_unusable_target(capsys):
    from ctk.cli import main

    assert main(["cleanup", "--catalog-url", "http://127.0.0.1:9", "--ctk-timeout", "1"]) == 6
    assert "did not answer GET /v1/config" in capsys.readouterr().err


def test_runner_forwards_signals_to_the_child_group(tmp_path):
    """`ctk run`'s wait_forwarding: SIGTERM to us reaches the child's process group as SIGTERM, also when the
    child has SIGINT ignored (a shell's background job)."""
    script = ("import signal, sys, time\n"
              "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
              "signal.signal(signal.SIGTERM, lambda *a: sys.exit(2))\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")
    runner = ("import subprocess, sys\n"
              "from ctk.runner import wait_forwarding\n"
              f"child = subprocess.Popen([sys.executable, '-c', {script!r}], start_new_session=True)\n"
              "sys.exit(wait_forwarding(child))\n")
    proc = subprocess.Popen([sys.executable, "-c", runner], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 2


CLEANUP_FAILS = """
import pytest
from ctk.plugin import namespace as nsmod

_real = nsmod.drop_tree

def _failing(client, parts, *a, **kw):
    problems = _real(client, parts, *a, **kw)
    return problems + [f"view {'.'.join(parts)}.v1: HTTP 503 (simulated)"]

nsmod.drop_tree = _failing
"""

ONE_CHECK = """
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
@pytest.mark.parametrize("i", range(2))
def test_one(ctk_client, i):
    return Verdict.ok("KEY-01", "ran")
"""


@pytest.mark.parametrize("workers", [0, 2])
def test_cleanup_problems_are_in_the_report(pytester: pytest.Pytester, served, workers):
    pytester.makeconftest(CLEANUP_FAILS)
    pytester.makepyfile(test_clean=ONE_CHECK)
    args = ["test_clean.py", "--catalog-url", served, "-p", "no:html", "--ctk-reports", "rep"]
    if workers:
        args += ["-n", str(workers)]
    result = pytester.runpytest_subprocess(*args, timeout=180)
    assert result.ret == 0, result.stdout.str()[-3000:]
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    assert data["cleanup_problems"] and all("HTTP 503 (simulated)" in p for p in data["cleanup_problems"])
    assert len(data["cleanup_problems"]) >= (1 if not workers else 1)
    assert 'id="cleanup"' in (pytester.path / "rep" / "conformance.html").read_text()


def test_cleanup_inside_a_parent_namespace(served):
    from ctk.cli import main

    _ns(served, ["team"])
    _ns(served, ["team", "ctk_0badc0de_main"], {"ctk.run-id": "0badc0de"})
    _ns(served, ["team", "ctk_0badc0de_main", "child"])
    _ns(served, ["team", "keep"])
    try:
        assert main(["cleanup", "--catalog-url", served, "--ctk-parent-namespace", "team"]) == 0
        r = httpx.get(f"{served}/v1/namespaces", params={"parent": "team"}, timeout=10)
        assert [ns[-1] for ns in r.json()["namespaces"]] == ["keep"]
        assert "team" in _top(served)
    finally:
        httpx.delete(f"{served}/v1/namespaces/team%1Fkeep", timeout=10)
        httpx.delete(f"{served}/v1/namespaces/team", timeout=10)
