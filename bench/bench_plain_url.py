"""Time of `pytest --catalog-url URL` against a plain `ctk serve` (no control API, no database link), default
options, from an empty directory: what a catalog author's CI runs (target: under 60 s on 2 cores, overall PASS,
exit 0).

Starts `ctk serve --port 0` (it prints its URL once it is up), runs pytest in a fresh empty directory
(``--durations`` kept), and prints the wall time, pytest's own figure, the exit code, the overall verdict and
its counts (from reports/conformance.json), the slowest suites and the load average before and after.

    python bench/bench_plain_url.py [--runs 1] [--keep DIR] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))   # for tests/procs.py
import procs  # noqa: E402

LINE = re.compile(r"^([0-9.]+)s (call|setup|teardown)\s+(\S+?)::\S+?(?:\[(\S+)\])?$")
SUMMARY = re.compile(r"in ([0-9.]+)s")


def start_serve() -> procs.Started:
    """`ctk serve --port 0` (the console script): it binds a free port itself and prints its URL once it is up."""
    return procs.serve(command=(shutil.which("ctk") or "ctk",))


def run_once(url: str, extra: list[str], keep: str | None) -> dict:
    cwd = tempfile.mkdtemp(prefix="ctk-plain-")
    argv = [sys.executable, "-m", "pytest", "--catalog-url", url, "--durations=0", *extra]
    load = os.getloadavg()[0]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=1800)
    wall = time.perf_counter() - started
    per: dict[str, float] = collections.Counter()
    said = None
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m:
            param = m.group(4) or ""
            group = f"{m.group(3)}:{param.split('-', 1)[1] if '-' in param else param}"
            per[group] += float(m.group(1))
        elif (s := SUMMARY.search(line)) and ("passed" in line or "failed" in line):
            said = float(s.group(1))
    report = os.path.join(cwd, "reports", "conformance.json")
    data = json.load(open(report)) if os.path.exists(report) else {}
    if keep:
        shutil.copytree(cwd, keep, dirs_exist_ok=True)
        with open(os.path.join(keep, "out.txt"), "w") as f:
            f.write(proc.stdout + proc.stderr)
    shutil.rmtree(cwd, ignore_errors=True)
    return {"wall": wall, "pytest": said, "rc": proc.returncode, "overall": data.get("overall"),
            "counts": data.get("counts"), "per": per, "load_before": load, "load_after": os.getloadavg()[0],
            "inconclusive": [f"{r['requirement']} {r.get('endpoint') or ''} {r.get('behaviour')}: "
                             f"{(r.get('message') or '')[:160]}" for r in data.get("results", [])
                             if r.get("status") == "inconclusive"],
            "tail": proc.stdout[-2000:] + proc.stderr[-1000:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", help="copy the run directory (reports, out.txt) here")
    parser.add_argument("extra", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    print(f"pytest --catalog-url against a plain `ctk serve` ({os.cpu_count()} cores)")
    serve = start_serve()
    url = serve.url
    failed = False
    try:
        for i in range(args.runs):
            r = run_once(url, extra, args.keep)
            counts = ", ".join(f"{v} {k}" for k, v in (r["counts"] or {}).items() if v)
            print(f"run {i + 1}: {r['wall']:.1f} s wall (pytest: {r['pytest']} s), exit {r['rc']}, overall "
                  f"{r['overall']} ({counts}); load {r['load_before']:.2f} -> {r['load_after']:.2f}")
            for group, secs in sorted(r["per"].items(), key=lambda kv: -kv[1])[:8]:
                print(f"    {secs:6.2f} s  {group}")
            for line in r["inconclusive"]:
                print(f"    inconclusive: {line}")
            if r["rc"] != 0:
                failed = True
                print(r["tail"], file=sys.stderr)
    finally:
        serve.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
