"""Spark benchmark: jar assembly, session start, INSERT commit latency, concurrent appends (prints figures).

    python bench/bench_spark.py [--inserts N] [--writers W] [--json FILE] [--skip-build] [--no-workloads]

With the workloads (default), also the wall time and commit counts of the SPARK-01..04 checks
(ctk.checks.spark): concurrent appends, row-level conflicts per isolation level and write mode, compaction
races, lost commit answers.

Runs against an embedded reference catalog on 127.0.0.1. Keeps Spark small (local[2], 1g driver).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inserts", type=int, default=5, help="warm INSERTs timed one after another")
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="concurrent-append rounds")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="do not time a fresh `ctk spark-jars` build")
    ap.add_argument("--no-workloads", action="store_true", help="skip the SPARK-01..04 workloads")
    args = ap.parse_args(argv)

    from ctk.spark import jars
    from ctk.spark.session import SparkUnavailable, commit_stats, session_info, spark_session, stop_session
    from ctk.spark.workloads import concurrent_appends

    figures: dict[str, object] = {}
    try:
        classpath = jars.ensure_jars(quiet=True)
    except (jars.BuildError, OSError) as exc:
        print(f"bench_spark: skipped: {exc}")
        return 0
    if not args.skip_build:
        cache = classpath[0].parent
        with tempfile.TemporaryDirectory(prefix="ctk-bench-jars-") as tmp:
            debs = cache / "debs" if (cache / "debs").is_dir() else None
            t0 = time.monotonic()
            jars.build(Path(tmp), debs, quiet=True)
            figures["spark_jars_build_s"] = round(time.monotonic() - t0, 2)

    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    with tempfile.TemporaryDirectory(prefix="ctk-bench-wh-") as wh, \
            ReferenceServer(ReferenceSettings(warehouse=wh)) as server:
        try:
            spark = spark_session(server.url)
        except SparkUnavailable as exc:
            print(f"bench_spark: skipped: {exc}")
            return 0
        try:
            figures["session_start_s"] = round(session_info(spark).started_seconds, 2)
            spark.sql("CREATE NAMESPACE bench")
            spark.sql("CREATE TABLE bench.t (id BIGINT, s STRING) USING iceberg")
            t0 = time.monotonic()
            spark.sql("INSERT INTO bench.t VALUES (0, 'cold')")
            figures["first_insert_s"] = round(time.monotonic() - t0, 3)
            warm = []
            for i in range(1, args.inserts + 1):
                t0 = time.monotonic()
                spark.sql(f"INSERT INTO bench.t VALUES ({i}, 'warm')")
                warm.append(time.monotonic() - t0)
            figures["warm_insert_median_s"] = round(statistics.median(warm), 3)
            figures["warm_insert_min_s"] = round(min(warm), 3)
            rec = session_info(spark).recorder
            commits = [r for r in rec.snapshot() if r.method == "POST" and r.path.endswith("/tables/t")]
            figures["server_commit_roundtrip_median_s"] = round(statistics.median(r.seconds for r in commits), 4)
            rounds = []
            for k in range(args.rounds):
                res = concurrent_appends(spark, f"bench.c{k}", writers=args.writers, rows_each=10)
                rounds.append({**(res.commit_stats or {}), "integrity_ok": res.ok, "wall_s": round(res.wall_seconds, 3)})
                if not res.ok:
                    print("integrity problems:", res.errors, res.integrity.problems, file=sys.stderr)
            figures["concurrent_appends"] = rounds
            figures["all_requests"] = commit_stats(rec.snapshot())
            if not args.no_workloads:
                from ctk.checks import spark as spark_checks

                runs = [("SPARK-01 appends", lambda: spark_checks.check_appends(spark, "bench_w"))]
                for iso, mode in spark_checks.COMBOS:
                    runs.append((f"SPARK-02 {iso}/{mode}",
                                 lambda iso=iso, mode=mode: spark_checks.check_row_level(spark, "bench_w",
                                                                                         combos=((iso, mode),))))
                runs += [("SPARK-03 compaction", lambda: spark_checks.check_compaction(spark, "bench_w")),
                         ("SPARK-04 lost answers", lambda: spark_checks.check_lost_answers(spark, "bench_w"))]
                workloads = {}
                for label, fn in runs:
                    t0 = time.monotonic()
                    (v,) = fn()
                    workloads[label] = {"status": v.status.value, "wall_s": round(time.monotonic() - t0, 2),
                                        "commit_stats": v.details.get("commit_stats"),
                                        "classification": v.classification}
                figures["workloads"] = workloads
        finally:
            stop_session(spark, stop_spark=True)

    print("bench_spark:")
    for k, v in figures.items():
        if k == "workloads":
            continue
        print(f"  {k}: {v}")
    for label, w in (figures.get("workloads") or {}).items():  # type: ignore[union-attr]
        st = w["commit_stats"] or {}
        print(f"  {label:<38} {w['status']:<5} {w['wall_s']:>6.1f} s  attempts {st.get('attempts', 0):>3}  "
              f"409s {st.get('conflicts', 0):>3}  5xx {st.get('server_errors', 0)}")
        print(f"      {w['classification']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    ok = all(r["integrity_ok"] for r in figures.get("concurrent_appends", []))  # type: ignore[union-attr]
    ok = ok and all(w["status"] == "pass" for w in (figures.get("workloads") or {}).values())  # type: ignore[union-attr]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
