"""Issue 30 (2b): the catalog's database link is shared by every request the catalog serves, so a fault one xdist
worker arms on it meets the other workers' requests. Set up as the README tells a catalog author - `ctk serve` on
PostgreSQL behind `ctk interposer`, `ctk run`-style pytest with `--ctk-db-link` - three workers must give the
verdicts one worker gives, with the link's faults armed (ctk.interposer.linklock, ctk/plugin/scheduling.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import procs

pytest.importorskip("psycopg", reason="psycopg is not installed (the reference catalog's PostgreSQL driver)")

pytestmark = pytest.mark.postgres

#: the checks that arm link faults for two endpoints, and ordinary checks of those endpoints and others beside them
SELECT = ("(updateTable or createNamespace or dropTable) and not lifetime "
          "and not network-duplicate and not lost-timeout and not slow-link")


def run_kit(url: str, link: str, where: Path, workers: int) -> tuple[dict[tuple, str], dict, str]:
    where.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    argv = [sys.executable, "-m", "pytest", "--catalog-url", url, "--ctk-db-link", link, "-p", "no:cacheprovider",
            "-q", "-k", SELECT, "-n", str(workers)]
    t0 = time.monotonic()
    r = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, timeout=900)
    print(f"{workers or 1} worker(s): {time.monotonic() - t0:.1f} s")
    report = where / "reports" / "conformance.json"
    data = json.loads(report.read_text()) if report.exists() else {}
    got = {(v["requirement"], v.get("endpoint"), v["behaviour"]): v["status"] for v in data.get("results", [])
           if v.get("behaviour") != "all-traffic"}
    return got, data, r.stdout[-4000:] + r.stderr[-2000:]


def test_three_workers_with_link_faults_give_the_verdicts_of_one(pg, tmp_path):
    started: list[procs.Started] = []
    try:
        catalog, link = procs.serve_over_db_link(pg, str(tmp_path / "wh"), started)
        one, data1, out1 = run_kit(catalog.url, link, tmp_path / "one", 0)
        three, data3, out3 = run_kit(catalog.url, link, tmp_path / "three", 3)
    finally:
        for proc in reversed(started):
            proc.stop(15)
    assert one and set(one) == set(three), (out1, out3)
    differ = {k: (one[k], three[k]) for k in one if one[k] != three[k]}
    by3 = {(v["requirement"], v.get("endpoint"), v["behaviour"]): v for v in data3.get("results", [])}
    assert not differ, "\n".join(f"{k}: one worker {a}, three {b}: {by3[k]['message'][:400]}"
                                 for k, (a, b) in differ.items())
    assert not {"fail", "error", "deviation"} & set(one.values()), one      # the reference conforms
    assert one[("REPLAY-03", "updateTable", "5xx-not-stored")] == "pass"           # a link fault was armed
    workers = {v.get("worker") for v in data3["results"] if v.get("worker")}
    assert len(workers) == 3, workers
