"""Benchmark of the reference catalog's idempotency layer (plain script: prints figures).

1. Commit throughput through the real app (updateTable: set-properties commits, sequential, one client),
   without and with Idempotency-Key: commits alternate one by one between a plain and a keyed table, so a slow
   spell of the (shared, virtual) machine hits both alike; key overhead in percent from medians and from
   means, the catalog's CPU per commit from /proc/<pid>/task/*/schedstat (ns), and an A/A run of the same
   method without keys as its noise floor. (Blocks of 50 commits with CPU in 10 ms ticks, the earlier method,
   scattered the overhead over 2-16 % from run to run.)
2. Key lookup time of the records store with 1e3 .. 1e6 stored records (rows bulk-inserted directly).

Usage: python bench/bench_reference.py [--commits N] [--rounds R] [--max-records 1000000]
(commits x rounds = the number of commits on each side)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from sqlalchemy import create_engine, insert  # noqa: E402

from ctk.client.keys import new_key  # noqa: E402
from ctk.reference.idempotency import FINALIZED, RecordStore, records  # noqa: E402

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _proc_cpu_ns(pid: int) -> int:
    """CPU time of every thread of the process, in ns (schedstat: exact, unlike the 10 ms ticks of /proc/pid/stat)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def _interleaved(c: httpx.Client, pid: int, pairs: int, keyed: tuple[bool, bool]) -> list[tuple[list, list]]:
    """`pairs` commits to table `a` and to table `b`, one after the other and in alternating order, so a slow
    spell of the machine hits both sides alike. keyed: whether a and b carry an Idempotency-Key.
    Returns per side (latencies in s, catalog CPU in s) per commit."""
    out = ([], []), ([], [])
    for i in range(pairs):
        for side in ((0, 1) if i % 2 == 0 else (1, 0)):
            headers = {"Idempotency-Key": new_key()} if keyed[side] else {}
            body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"n": str(i)}}]}
            c0 = _proc_cpu_ns(pid)
            t0 = time.perf_counter()
            r = c.post(f"/namespaces/b/tables/{'ab'[side]}", headers=headers, json=body)
            t1 = time.perf_counter()
            c1 = _proc_cpu_ns(pid)
            assert r.status_code == 200, r.text
            out[side][0].append(t1 - t0)
            out[side][1].append((c1 - c0) / 1e9)
    return list(out)


def _overhead(base: list[float], other: list[float], stat=statistics.median) -> float:
    return 100 * (stat(other) - stat(base)) / stat(base)


def commit_throughput(commits: int, rounds: int) -> None:
    """The catalog runs as `ctk serve` in a process of its own, so its CPU time per commit (all its threads,
    from /proc/pid/task/*/schedstat) is measured apart from the client's. Plain and keyed commits alternate one
    by one (on two tables of the same history), and medians per commit are compared. The same run with no key
    on either side (A/A) gives the noise floor of the method."""
    pairs = commits * rounds
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
        proc = subprocess.Popen([sys.executable, "-m", "ctk", "serve", "--warehouse", tmp, "--lifetime", "PT30M"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        try:
            url = proc.stdout.readline().strip()
            if not url.startswith("http://127.0.0.1:"):
                raise RuntimeError(f"ctk serve did not start: {url!r}")
            with httpx.Client(base_url=url + "/v1", timeout=60) as c:
                assert c.post("/namespaces", json={"namespace": ["b"], "properties": {}}).status_code == 200
                for name in "ab":
                    assert c.post("/namespaces/b/tables", json={"name": name, "schema": SCHEMA}).status_code == 200
                _interleaved(c, proc.pid, 120, (True, True))      # warm-up: both metadata logs reach their cap
                (pl, pc), (kl, kc) = _interleaved(c, proc.pid, pairs, (False, True))
                (al, ac), (bl, bc) = _interleaved(c, proc.pid, max(200, pairs // 2), (False, False))
        finally:
            proc.terminate()
            proc.wait(10)
    med = statistics.median
    print(f"commit throughput (updateTable; {pairs} plain and {pairs} keyed commits, one by one alternated; "
          "medians per commit; catalog in its own process):")
    print(f"  without key: {1 / med(pl):8.1f} commits/s  ({med(pl) * 1e3:5.2f} ms)   catalog CPU "
          f"{med(pc) * 1e3:5.2f} ms/commit")
    print(f"  with key:    {1 / med(kl):8.1f} commits/s  ({med(kl) * 1e3:5.2f} ms)   catalog CPU "
          f"{med(kc) * 1e3:5.2f} ms/commit")
    print(f"  key overhead: {_overhead(pl, kl):5.1f} % time per commit, {_overhead(pc, kc):5.1f} % catalog CPU "
          f"(target <= 10 %); keyed commit costs {(med(kl) - med(pl)) * 1e3:+.2f} ms")
    mean = statistics.fmean
    print(f"  the same from means (these include the WAL checkpoints and sweeps the records cause): "
          f"{_overhead(pl, kl, mean):5.1f} % time, {_overhead(pc, kc, mean):5.1f} % CPU")
    print(f"  noise floor (A/A, no key on either side, same method): {_overhead(al, bl):+5.1f} % time, "
          f"{_overhead(ac, bc):+5.1f} % CPU from medians; {_overhead(al, bl, mean):+5.1f} % time, "
          f"{_overhead(ac, bc, mean):+5.1f} % CPU from means")
    for label, xs in (("without key", pl), ("with key", kl)):
        q = statistics.quantiles(xs, n=100)
        print(f"  latency {label}: p50 {q[49] * 1e3:5.2f} ms, p90 {q[89] * 1e3:5.2f} ms, p99 {q[98] * 1e3:5.2f} ms, "
              f"max {max(xs) * 1e3:6.2f} ms")


def lookup_times(max_records: int) -> None:
    print("key lookup (records store, SQLite file, median of 2000 lookups of random existing keys):")
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite:///{tmp}/records.db")
        store = RecordStore(engine)
        keys: list[str] = []
        now = time.time()
        size = 10 ** 3
        while size <= max_records:
            batch = []
            while len(keys) < size:
                k = str(uuid.uuid4())
                keys.append(k)
                batch.append(dict(idem_key=k, operation="updateTable", resource=f"db/tables/t{len(keys) % 97}",
                                  principal="anonymous", status=FINALIZED, request_hash="0" * 64,
                                  origin="[]", owner=uuid.uuid4().hex, crashed=False,
                                  response='{"body":null,"headers":{},"status":204}', response_digest="x",
                                  created_at=now, updated_at=now, expires_at=now + 3600))
                if len(batch) >= 20000:
                    with engine.begin() as conn:
                        conn.execute(insert(records), batch)
                    batch = []
            if batch:
                with engine.begin() as conn:
                    conn.execute(insert(records), batch)
            import random
            rnd = random.Random(size)
            samples = []
            for _ in range(2000):
                i = rnd.randrange(len(keys))
                scope = ("updateTable", f"db/tables/t{(i + 1) % 97}", keys[i], "anonymous")
                t0 = time.perf_counter()
                rec = store.get(scope)
                samples.append(time.perf_counter() - t0)
                assert rec is not None
            print(f"  {size:>9,} records: median {statistics.median(samples) * 1e6:7.1f} us, "
                  f"p95 {sorted(samples)[int(0.95 * len(samples))] * 1e6:7.1f} us")
            size *= 10
        engine.dispose()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--max-records", type=int, default=1_000_000)
    ap.add_argument("--skip-commits", action="store_true")
    args = ap.parse_args(argv)
    if not args.skip_commits:
        commit_throughput(args.commits, args.rounds)
    lookup_times(args.max_records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
