"""Issue 29 item 1: the same catalog gives the same in-flight results, run after run, on a busy machine too.

A plain `ctk serve` (no control API: the interposer's bursts decide INFLIGHT-01/02) answers a duplicate it takes up
while the original runs with 409, and one it takes up after the original committed with a replay. Which of the two
a burst shows is the server's timing: about one burst in two on an idle machine, one in ten with two CPU hogs, while
the interposer observed every burst overlapping. The checks therefore burst on (`BurstOptions.search`) until an
overlapping burst decides, and classify only from overlapping bursts. Four `ctk run`s against the reference and
four against a variant (`inflight-409-plain`), with two CPU hogs running, give the same status per result
(requirement + endpoint + behaviour) and the same classification. The endpoints are those on which a single burst
showed the 409 least often."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from user_path import cpu_hogs, serve, status_table, verdict_key

ENDPOINTS = ("updateProperties", "dropNamespace", "cancelPlanning")
RUNS = 4


def _in_flight_run(url: str, reports) -> list[dict]:
    picked = " or ".join(ENDPOINTS)
    cmd = [sys.executable, "-m", "ctk", "run", "--catalog-url", url, "--ctk-reports", str(reports), "--",
           "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-k", f"in-flight and ({picked})"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    path = reports / "conformance.json"
    assert path.exists(), (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(path.read_text(encoding="utf-8"))["results"]


def _table(results: list[dict]) -> dict:
    return {k: (v, sorted({str(r.get("classification")) for r in results
                           if verdict_key(r) == k}))
            for k, v in status_table(results).items()}


def test_four_runs_give_the_same_in_flight_results_under_load(tmp_path):
    with cpu_hogs(2):
        for variant in (None, "inflight-409-plain"):
            with serve(control_api=False, variant=variant) as url:
                tables = [_table(_in_flight_run(url, tmp_path / f"{variant or 'reference'}-{i}")) for i in range(RUNS)]
            first = tables[0]
            assert len(first) == 2 * len(ENDPOINTS), first
            assert not any(status == "inconclusive" for status, _ in first.values()), first
            for i, t in enumerate(tables[1:], 2):
                diff = {k: (first.get(k), t.get(k)) for k in set(first) | set(t) if first.get(k) != t.get(k)}
                assert not diff, f"{variant or 'reference'}: run {i} differs from run 1: {diff}"
            # the reference answers in flight with 409 request_in_progress: INFLIGHT-02 is judged, never "not applicable"
            judged = [v for k, v in first.items() if k[0] == "INFLIGHT-02"]
            assert all(status == "pass" for status, _ in judged), judged
