"""`ctk run` and signals, as a CI job meets them, against `ctk serve`:

* SIGKILL of `ctk run` leaves no process behind: pytest gets SIGTERM from the kernel (the parent-death signal,
  ctk.plugin.lifeline), stops as on Ctrl-C, and its xdist workers go with it; the run namespaces are removed.
* SIGTERM: exit 2, one line saying so, no traceback and no KeyboardInterrupt banner; the run namespaces are
  removed. The time from the signal to the end is printed (a figure, not an assertion: the machine is shared).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import procs
import pytest

from ctk.plugin.exits import EXIT_INTERRUPTED

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the parent-death "
                                                                            "signal is Linux's")
BOUND_S = 180.0     # bounded waits (a loaded 2-core machine), never a timing assertion


@pytest.fixture(scope="module")
def served():
    with procs.serve("--control-api") as server:
        yield server.url


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids: list[int] = []
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as f:
                    kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
        out += kids
        todo += kids
    return out


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _run_namespaces(url: str) -> list[str]:
    r = httpx.get(f"{url}/v1/namespaces", timeout=30)
    r.raise_for_status()
    return [ns[0] for ns in r.json()["namespaces"] if ns[0].startswith("ctk_") and not ns[0].endswith("_preflight")]


def _busy(url: str) -> bool:
    """A worker's run namespace holds something: checks are running."""
    for name in _run_namespaces(url):
        tables = httpx.get(f"{url}/v1/namespaces/{name}/tables", timeout=30).json().get("identifiers")
        kids = httpx.get(f"{url}/v1/namespaces", params={"parent": name}, timeout=30).json().get("namespaces")
        if tables or kids:
            return True
    return False


def _until(pred, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + BOUND_S
    while not pred():
        if proc is not None:
            assert proc.poll() is None, f"`ctk run` ended before {what}"
        assert time.monotonic() < deadline, f"not within {BOUND_S:.0f} s: {what}"
        time.sleep(0.2)


def _start_run(url: str, tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """`ctk run` with 2 workers, once its checks are running: the process and its descendants (pytest, workers)."""
    assert _run_namespaces(url) == []
    cmd = [sys.executable, "-m", "ctk", "run", "--catalog-url", url, "--workers", "2", "--ctk-reports",
           str(tmp_path / "reports")]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=open(tmp_path / "out.txt", "w"), stderr=subprocess.STDOUT,
                            env=env)
    _until(lambda: len(_descendants(proc.pid)) >= 3 and _busy(url), "checks are running", proc)
    return proc, _descendants(proc.pid)


def _stop_all(proc: subprocess.Popen, pids: list[int]) -> None:
    for pid in [proc.pid, *pids]:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    if proc.poll() is None:
        proc.wait()


def test_sigkill_leaves_no_process_behind(served, tmp_path):
    proc, pids = _start_run(served, tmp_path)
    try:
        assert len(pids) >= 3 and all(_alive(p) for p in pids)      # pytest and its 2 workers
        t0 = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(BOUND_S)
        _until(lambda: not any(_alive(p) for p in pids), "every process of the run ended")
        gone = time.monotonic() - t0
        _until(lambda: _run_namespaces(served) == [], "the run namespaces were removed")
    finally:
        _stop_all(proc, pids)
    out = (tmp_path / "out.txt").read_text()
    assert "SIGTERM received" in out, out[-2000:]                  # pytest stopped as on SIGTERM, not killed
    print(f"SIGKILL of ctk run: {len(pids)} processes, all ended {gone:.1f} s later, no run namespace left")


def test_sigterm_one_line_exit_2(served, tmp_path):
    proc, pids = _start_run(served, tmp_path)
    try:
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(BOUND_S)
        took = time.monotonic() - t0
        _until(lambda: not any(_alive(p) for p in pids), "every process of the run ended")
    finally:
        _stop_all(proc, pids)
    out = (tmp_path / "out.txt").read_text()
    assert code == EXIT_INTERRUPTED, out[-3000:]
    assert [ln for ln in out.splitlines() if "SIGTERM" in ln] == [
        "ctk: SIGTERM received: stopping, removing the run namespace, writing partial reports"], out[-3000:]
    assert "Traceback" not in out and "KeyboardInterrupt" not in out and "INTERNALERROR" not in out, out[-3000:]
    assert _run_namespaces(served) == []
    print(f"SIGTERM to ctk run: exit {code} {took:.1f} s later")


def test_ctrl_c_is_named_as_the_signal_the_user_sent(served, tmp_path):
    """Issue 29 item 3(f): `ctk run` passes Ctrl-C (SIGINT) on to pytest as SIGTERM; the line names SIGINT."""
    proc, pids = _start_run(served, tmp_path)
    try:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(BOUND_S)
        _until(lambda: not any(_alive(p) for p in pids), "every process of the run ended")
    finally:
        _stop_all(proc, pids)
    out = (tmp_path / "out.txt").read_text()
    assert code == EXIT_INTERRUPTED, out[-3000:]
    assert [ln for ln in out.splitlines() if " received: " in ln] == [
        "ctk: SIGINT (Ctrl-C) received: stopping, removing the run namespace, writing partial reports"], out[-3000:]
    assert _run_namespaces(served) == []
