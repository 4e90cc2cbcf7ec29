"""Time of the conformance kit against the embedded reference catalog, per suite (target: the whole non-Spark
kit under 60 s on 2 cores).

Runs the kit twice in one go, in one process and with two pytest-xdist workers, and prints the seconds each
suite took (summed test durations: setup + call + teardown) and the wall time of each run.

    python bench/bench_suites.py [--workers 3] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"^([0-9.]+)s (call|setup|teardown)\s+(\S+?)::(\S+)")


def run(workers: int, extra: list[str]) -> tuple[float, dict[str, float], dict[str, int], str]:
    argv = [sys.executable, "-m", "pytest", "--ctk", "-q", "-p", "no:cacheprovider", "--durations=0",
            "--ctk-reports", tempfile.mkdtemp(prefix="ctk-bench-"), *extra]
    if workers:
        argv += ["-n", str(workers)]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tempfile.mkdtemp(prefix="ctk-bench-cwd-"),
                          timeout=1800)
    wall = time.perf_counter() - started
    per: dict[str, float] = collections.Counter()
    count: dict[str, int] = collections.Counter()
    summary = ""
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m:
            suite = m.group(3)
            if suite.endswith(".yaml"):
                suite = "scenarios/*.yaml"
            per[suite] += float(m.group(1))
            if m.group(2) == "call":
                count[suite] += 1
        elif re.search(r"\d+ (passed|failed)", line):
            summary = line.strip("= ")
    if proc.returncode not in (0,):
        print(proc.stdout[-3000:], proc.stderr[-2000:], file=sys.stderr)
    return wall, per, count, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("extra", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    print(f"ctk suites against the embedded reference catalog ({os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f})")
    results = {}
    for workers in (0, args.workers):
        results[workers] = run(workers, extra)
        wall, _, _, summary = results[workers]
        label = "one process" if workers == 0 else f"{workers} workers"
        print(f"  {label:12s}: {wall:6.1f} s wall   ({summary})")
    one = results[0]
    par = results[args.workers]
    suites = sorted(set(one[1]) | set(par[1]), key=lambda s: -one[1].get(s, 0.0))
    print(f"\n  {'suite':34s} {'tests':>5s} {'one process':>12s} {'summed, n=' + str(args.workers):>14s}")
    for s in suites:
        print(f"  {s:34s} {one[2].get(s, 0):5d} {one[1].get(s, 0.0):11.1f}s {par[1].get(s, 0.0):13.1f}s")
    print(f"\n  speed-up with {args.workers} workers: {one[0] / par[0]:.2f}x; "
          f"target: whole non-Spark kit < 60 s -> {'met' if par[0] < 60 else 'NOT met'} ({par[0]:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
