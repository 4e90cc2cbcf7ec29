"""The same selection of the kit against `ctk serve` on PostgreSQL, without and with `--ctk-db-link`, side by side
(issue 34 item 6: the database-link run should finish within twice the plain run's time; three workers waiting
on the link's turns took 1305 s for the idempotency batch against 245 s without the link).

Starts a throwaway PostgreSQL (ctk.interposer.postgres), `ctk interposer` in TCP mode in front of it and `ctk
serve --database-url` through that, then runs pytest with the selection twice on that one catalog - plain, then
with the link - and prints the wall time of each, their ratio, the verdict counts, and the slowest checks of
each run. Figures only, never an assertion.

    python bench/bench_db_link.py [--workers 3] [-k "test_idempotency"] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))   # for tests/procs.py
import procs  # noqa: E402

LINE = re.compile(r"^([0-9.]+)s (call|setup|teardown)\s+(\S+)$")


def run(url: str, link: str | None, workers: int, keyword: str, extra: list[str]) -> dict:
    cwd = tempfile.mkdtemp(prefix="ctk-bench-link-")
    argv = [sys.executable, "-m", "pytest", "--catalog-url", url, "-p", "no:cacheprovider", "-q", "--durations=15",
            "-k", keyword, *extra]
    if link:
        argv += ["--ctk-db-link", link]
    if workers:
        argv += ["-n", str(workers)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=7200)
    wall = time.perf_counter() - t0
    report = Path(cwd) / "reports" / "conformance.json"
    data = json.loads(report.read_text()) if report.exists() else {}
    counts = collections.Counter(v["status"] for v in data.get("results", []))
    slow = [(float(m.group(1)), m.group(3)) for m in map(LINE.match, proc.stdout.splitlines()) if m and
            m.group(2) == "call"][:5]
    return {"wall": wall, "exit": proc.returncode, "counts": dict(counts), "slow": slow,
            "tail": proc.stdout[-1500:] if proc.returncode not in (0, 1) else ""}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("-k", dest="keyword", default="test_idempotency and not lifetime")
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    from ctk.interposer.postgres import TemporaryPostgres

    pg = TemporaryPostgres()
    pg.start()
    started: list[procs.Started] = []
    try:
        db = procs.interposer(f"{pg.host}:{pg.port}", "--name", "catalog-db", "--protocol", "tcp")
        started.append(db)
        link = f"{db.api_url}/proxies/catalog-db"
        catalog = procs.serve("--warehouse", tempfile.mkdtemp(prefix="ctk-bench-wh-"), "--database-url",
                              pg.url_via(*db.listen), "--lifetime", "PT60S")
        started.append(catalog)
        print(f"selection -k {args.keyword!r}, {args.workers} workers, load {os.getloadavg()[0]:.1f}")
        results = {}
        for name, with_link in (("plain", None), ("db-link", link)):
            results[name] = r = run(catalog.url, with_link, args.workers, args.keyword, extra)
            print(f"{name:8s} {r['wall']:7.1f} s  exit {r['exit']}  {r['counts']}")
            for secs, test in r["slow"]:
                print(f"           {secs:7.1f} s  {test}")
            if r["tail"]:
                print(r["tail"])
        print(f"db-link / plain: {results['db-link']['wall'] / results['plain']['wall']:.2f} "
              f"(load {os.getloadavg()[0]:.1f} after)")
    finally:
        for p in reversed(started):
            p.stop(15)
        pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
