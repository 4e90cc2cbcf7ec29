"""Issue 34 item 6: a run over a database link (`--ctk-db-link`, the reference on PostgreSQL) stopped with Ctrl-C
while one of its checks has a fault armed on the link removes its run namespaces, or names what stays in the
verdict block and in conformance.json's ``cleanup_problems``. Seen on upstream over PostgreSQL: "removing the run
namespace" printed, the namespace left with 1579 tables, ``cleanup_problems`` empty."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

import procs
from ctk.interposer.client import ProxyLink

pytest.importorskip("psycopg", reason="psycopg is not installed (the reference catalog's PostgreSQL driver)")

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")]
BOUND_S = 300.0     # bounded waits on a loaded machine, never a timing assertion


def _run_namespaces(url: str) -> list[str]:
    r = httpx.get(f"{url}/v1/namespaces", timeout=30)
    r.raise_for_status()
    return [ns[0] for ns in r.json()["namespaces"] if ns[0].startswith("ctk_")]


def _tables(url: str) -> int:
    """Tables in the run namespaces and their children (one level down)."""
    n = 0
    for name in _run_namespaces(url):
        kids = httpx.get(f"{url}/v1/namespaces", params={"parent": name}, timeout=30).json().get("namespaces") or []
        for ns in [[name], *kids]:
            r = httpx.get(f"{url}/v1/namespaces/{'%1F'.join(ns)}/tables", timeout=30)
            n += len(r.json().get("identifiers") or []) if r.status_code == 200 else 0
    return n


@pytest.mark.parametrize("slow_database", [False, True], ids=["link-fault-armed", "slow-database"])
def test_ctrl_c_over_a_database_link_leaves_nothing_unsaid(pg, tmp_path, slow_database):
    """``link-fault-armed``: Ctrl-C while a check has a fault armed on the link. ``slow-database``: Ctrl-C once the
    run namespaces hold tables, the database answering slowly from then on (a latency of the test's own on the
    link): the workers' cleanup outlasts the controller's grace for them, and they are stopped before it ends."""
    started: list[procs.Started] = []
    try:
        catalog, link = procs.serve_over_db_link(pg, str(tmp_path / "wh"), started)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
        cmd = [sys.executable, "-m", "ctk", "run", "--catalog-url", catalog.url, "--ctk-db-link", link, "--workers",
               "2", "--ctk-reports", str(tmp_path / "reports")]
        out_file = tmp_path / "out.txt"
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=open(out_file, "w"), stderr=subprocess.STDOUT, env=env)
        proxy = ProxyLink(link)
        deadline = time.monotonic() + BOUND_S
        try:
            # the moment that matters: a check has a fault armed on the link (a toxic, or the link taken down)
            def ready() -> bool:
                if slow_database:
                    return _tables(catalog.url) >= 40
                return bool(proxy.toxics() or not proxy.check().get("enabled", True))

            while not ready():
                assert proc.poll() is None, out_file.read_text()[-3000:]
                assert time.monotonic() < deadline, "not ready within the bound"
                time.sleep(0.05 if not slow_database else 0.5)
            if slow_database:
                proxy.add_toxic("test-slow-database", type="latency", stream="downstream",
                                attributes={"latency": 400, "jitter": 0})
            proc.send_signal(signal.SIGINT)
            proc.wait(BOUND_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for toxic in proxy.toxics():
            proxy.remove_toxic(toxic["name"])
        left = _run_namespaces(catalog.url)
    finally:
        for p in reversed(started):
            p.stop(15)
    out = out_file.read_text()
    data = json.loads((tmp_path / "reports" / "conformance.json").read_text())
    problems = "\n".join(data["cleanup_problems"])
    unsaid = [ns for ns in left if ns not in problems]
    assert unsaid == [], (left, data["cleanup_problems"], out[-3000:])
    assert all(ns in out for ns in left), out[-3000:]
    print(f"stopped ({'slow database' if slow_database else 'link fault armed'}): {len(left)} run namespaces left, "
          f"all named: {left}")
