"""Issue 35 item 1 as a catalog's CI meets it, on the reference catalog (`ctk serve`) behind an odd server whose
dropTable answers 204 and keeps the table: `ctk run` on a few checks fails on TBL-08; `ctk known-gaps` over that
run writes a file that, read back under --ctk-fail-on ci, makes the same run green (the failing test an expected
failure); a gap the catalog does not have is stale and fails under ci; a check the kit does not have is a usage
error with its line, also under workers. The same against lakana: tests/interop (test_interop.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import procs
from odd import OddServer
from odd_semantics import drop_table_keeps

PICKED = "test_semantics and (TBL-08-drop-table or NS-01-create-namespace)"
STALE = "- check: test_semantics.py::test_semantics[NS-01-create-namespace]\n  reason: not a gap of this catalog\n"


def _run(url: str, reports: Path, *options: str, workers: str = "0") -> tuple[int, str, dict]:
    cmd = [sys.executable, "-m", "ctk", "run", "--workers", workers, "--catalog-url", url, "--ctk-reports",
           str(reports), "-k", PICKED, *options, "--", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    path = reports / "conformance.json"
    return (done.returncode, done.stdout + done.stderr,
            json.loads(path.read_text(encoding="utf-8")) if path.exists() else {})


def test_known_gaps_file_from_a_run_reads_back_green_and_a_fixed_gap_is_stale(tmp_path):
    with procs.serve() as catalog, OddServer(catalog.url, [drop_table_keeps()]) as odd:
        code, log, first = _run(odd.url, tmp_path / "first")
        assert code == 1 and any(r["status"] == "fail" and r["requirement"] == "TBL-08" for r in first["results"]), log
        assert first["known_gaps"] is None and first["new_findings"] is None
        gaps = tmp_path / "ctk-known-gaps.yaml"
        subprocess.run([sys.executable, "-m", "ctk", "known-gaps", str(tmp_path / "first" / "conformance.json"), "-o",
                        str(gaps)], check=True, capture_output=True, timeout=120)
        code, log, again = _run(odd.url, tmp_path / "again", "--ctk-known-gaps", str(gaps), "--ctk-fail-on", "ci")
        assert code == 0, log[-3000:]
        assert again["new_findings"] == [] and [e["state"] for e in again["known_gaps"]["entries"]] == ["known"]
        assert "1 xfailed" in log and "known gap: TODO" in log, log[-3000:]
        junit = (tmp_path / "again" / "junit.xml").read_text(encoding="utf-8")
        assert "known gap (" in junit and 'name="ctk.known_gap.1" value="known: ' in junit
        stale = tmp_path / "stale.yaml"
        stale.write_text(gaps.read_text(encoding="utf-8") + STALE, encoding="utf-8")
        code, log, third = _run(odd.url, tmp_path / "stale", "--ctk-known-gaps", str(stale), "--ctk-fail-on", "ci")
        assert code == 1 and [e["state"] for e in third["known_gaps"]["entries"]] == ["known", "stale"], log[-3000:]
        assert f"fixed: remove it from {stale}" in log and "stale known gap" in log, log[-3000:]
        code, log, _ = _run(odd.url, tmp_path / "lenient", "--ctk-known-gaps", str(stale))
        assert code == 0, log[-3000:]           # stale fails the run only under --ctk-fail-on stale (ci)


def test_a_check_the_kit_does_not_have_is_a_usage_error_with_its_line_also_under_workers(tmp_path):
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("gaps:\n  - check: test_semantics.py::test_semantics[NS-01-create-namespaces]\n    reason: x\n",
                     encoding="utf-8")
    with procs.serve() as catalog:
        for workers in ("0", "2"):
            code, log, _ = _run(catalog.url, tmp_path / f"w{workers}", "--ctk-known-gaps", str(wrong), workers=workers)
            assert code == 4, (workers, log[-3000:])
            assert f"{wrong}:2: check 'test_semantics.py::test_semantics[NS-01-create-namespaces]' is not a check" in log
