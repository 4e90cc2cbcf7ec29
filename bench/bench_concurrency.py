"""Commit concurrency benchmark against the embedded reference catalog (plain script: prints a table).

For 1, 2, 4 and 8 concurrent writers, each making `--appends` appends to one table:

* plain HTTP: every writer stages a real append with pyiceberg (ctk.history.writer.stage_append: data file,
  manifest, manifest list) and commits it itself through its own CatalogClient; on 409 it reloads, re-stages
  and retries (as ctk.checks.concurrency.check_serial_appends does);
* Spark: N sessions (one JVM, local[2]) run INSERTs from N threads (ctk.spark.workloads.concurrent_appends);
  the Iceberg Java client does its own refresh-and-retry on 409.

Reported per row: successful commits per second (wall), commit attempts, 409s, retries per commit, and
whether the table came out intact (every append present, one linear history, files exist). Also the Spark
session start time, the first (cold) and the median warm INSERT commit.

    python bench/bench_concurrency.py [--writers 1,2,4,8] [--appends 5] [--spark-inserts 2] [--no-spark]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _rows(marker: str):
    import pyarrow as pa

    schema = pa.schema([pa.field("id", pa.int64(), nullable=True), pa.field("data", pa.string(), nullable=True)])
    return pa.Table.from_pylist([{"id": 1, "data": marker}], schema=schema)


def http_round(url: str, writers: int, appends: int, max_attempts: int = 200, timeout: float = 300.0) -> dict:
    from ctk.history.integrity import check_table_integrity
    from ctk.history.state import read_table_state
    from ctk.history.writer import MARKER_KEY, StageError, stage_append
    from ctk.client.transport import CatalogClient
    from ctk.catalog import Catalog
    from ctk.client.config import TargetConfig

    ns, name = ("bench_http",), f"w{writers}_{uuid.uuid4().hex[:6]}"
    admin = CatalogClient(TargetConfig(url=url))
    cat = Catalog(admin)
    if admin.request("GET", "namespaces/bench_http").status != 200:
        cat.create_namespace(ns)
    cat.create_table(ns, name)
    clients = [CatalogClient(TargetConfig(url=url)) for _ in range(writers)]
    counts = {"attempts": 0, "conflicts": 0, "ok": 0, "other": 0}
    lock = threading.Lock()
    errors: list[str] = []
    barrier = threading.Barrier(writers)
    deadline = time.monotonic() + timeout

    def writer(w: int) -> None:
        c = clients[w]
        barrier.wait(timeout=60)
        for j in range(appends):
            for attempt in range(1, max_attempts + 1):
                if time.monotonic() > deadline:
                    errors.append(f"writer {w} out of time")
                    return
                try:
                    staged = stage_append(c, ns, name, data=_rows(f"w{w}-{j}"), marker=f"w{w}-{j}")
                except StageError as exc:
                    errors.append(str(exc))
                    return
                ex = c.request("POST", staged.path, json=staged.body, label="commit")
                with lock:
                    counts["attempts"] += 1
                    if ex.status == 200:
                        counts["ok"] += 1
                    elif ex.status == 409:
                        counts["conflicts"] += 1
                    else:
                        counts["other"] += 1
                if ex.status == 200:
                    break
                if ex.status != 409:
                    errors.append(f"writer {w}: {ex.status} {ex.error}")
                    return

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 5)
    wall = time.perf_counter() - t0
    state = read_table_state(admin, ns, name)
    integrity = check_table_integrity(admin, ns, name)
    markers = [m for m in state.summary_values(MARKER_KEY)]
    intact = (integrity.ok and not errors and len(markers) == writers * appends
              and len(set(markers)) == len(markers))
    for c in [admin, *clients]:
        c.close()
    return {"writers": writers, "commits": counts["ok"], "wall_s": wall, "commits_per_s": counts["ok"] / wall,
            "attempts": counts["attempts"], "conflicts": counts["conflicts"], "intact": intact,
            "errors": errors[:3]}


def spark_rounds(url: str, writer_counts: list[int], inserts: int) -> tuple[dict, list[dict]]:
    from ctk.spark.session import SparkUnavailable, session_info, spark_session, stop_session
    from ctk.spark.workloads import concurrent_appends

    try:
        spark = spark_session(url)
    except SparkUnavailable as exc:
        return {"skipped": str(exc)}, []
    figures: dict = {"session_start_s": session_info(spark).started_seconds}
    rows = []
    try:
        spark.sql("CREATE NAMESPACE IF NOT EXISTS bench_spark")
        spark.sql("CREATE TABLE bench_spark.warm (id BIGINT) USING iceberg")
        t0 = time.monotonic()
        spark.sql("INSERT INTO bench_spark.warm VALUES (0)")
        figures["first_insert_s"] = time.monotonic() - t0
        warm = []
        for i in range(1, 6):
            t0 = time.monotonic()
            spark.sql(f"INSERT INTO bench_spark.warm VALUES ({i})")
            warm.append(time.monotonic() - t0)
        figures["warm_insert_median_s"] = statistics.median(warm)
        for n in writer_counts:
            res = concurrent_appends(spark, f"bench_spark.w{n}", writers=n, rows_each=5, inserts=inserts)
            st = res.commit_stats or {}
            rows.append({"writers": n, "commits": res.ok_inserts, "wall_s": res.wall_seconds,
                         "commits_per_s": res.ok_inserts / res.wall_seconds, "attempts": st.get("attempts", 0),
                         "conflicts": st.get("conflicts", 0), "intact": res.ok,
                         "errors": (res.errors + res.integrity.problems)[:3]})
    finally:
        stop_session(spark, stop_spark=True)
    return figures, rows


def _table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(f"  {'writers':>7} {'commits':>7} {'wall s':>8} {'commits/s':>10} {'attempts':>8} {'409s':>6} "
          f"{'retries/commit':>14} {'intact':>6}")
    for r in rows:
        per = (r["attempts"] - r["commits"]) / r["commits"] if r["commits"] else float("nan")
        print(f"  {r['writers']:>7} {r['commits']:>7} {r['wall_s']:>8.2f} {r['commits_per_s']:>10.2f} "
              f"{r['attempts']:>8} {r['conflicts']:>6} {per:>14.2f} {'yes' if r['intact'] else 'NO':>6}")
        for e in r.get("errors") or []:
            print(f"          ! {e}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", default="1,2,4,8")
    ap.add_argument("--appends", type=int, default=5, help="appends per writer (plain HTTP)")
    ap.add_argument("--spark-inserts", type=int, default=2, help="INSERTs per writer (Spark)")
    ap.add_argument("--no-spark", action="store_true")
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.writers.split(",")]

    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    ok = True
    with tempfile.TemporaryDirectory(prefix="ctk-bench-conc-") as wh, \
            ReferenceServer(ReferenceSettings(warehouse=wh)) as server:
        http_round(server.url, 1, 2)  # warm-up (imports, first metadata writes)
        rows = [http_round(server.url, n, args.appends) for n in counts]
        _table(f"plain HTTP (pyiceberg-staged appends, refresh-and-retry on 409), {args.appends} appends per writer",
               rows)
        ok &= all(r["intact"] for r in rows)
        if not args.no_spark:
            figures, srows = spark_rounds(server.url, counts, args.spark_inserts)
            if "skipped" in figures:
                print(f"\nSpark: skipped: {figures['skipped']}")
            else:
                _table(f"Spark (INSERTs from N threads, Iceberg 1.10 client retries 409), "
                       f"{args.spark_inserts} INSERTs per writer", srows)
                print(f"\n  Spark session start: {figures['session_start_s']:.2f} s; first INSERT commit: "
                      f"{figures['first_insert_s']:.2f} s; warm INSERT commit (median of 5): "
                      f"{figures['warm_insert_median_s']:.3f} s")
                ok &= all(r["intact"] for r in srows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
