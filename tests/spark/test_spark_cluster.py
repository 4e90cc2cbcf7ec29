"""The Spark pipeline on a Spark standalone cluster (--ctk-spark-master spark://...): a master and a worker of
pyspark's own distribution on 127.0.0.1 (tests/spark/standalone.py), `ctk run` against the embedded reference
with the pipeline checks at a reduced scale, and the master's JSON status showing the kit's application got
the worker's core and ran its executors there (the Iceberg jars reached them through spark.jars)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from standalone import standalone_cluster

# SPARK-01 (concurrent appends) and SPARK-04 (lost commit answers through the interposer): the part of the
# pipeline that stays a few minutes on one 1-core worker; SPARK-02/03 run the same way, only longer.
SELECT = "test_spark and (appends or lost_answers)"


def test_pipeline_runs_on_a_standalone_cluster(spark_jars, tmp_path, report_timing):
    reports = tmp_path / "reports"
    with standalone_cluster(tmp_path) as cluster:
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "ctk", "run", "--ctk-spark", "--ctk-spark-master", cluster.master_url,
             "--ctk-spark-writers", "2", "--ctk-spark-statements", "1", "--ctk-spark-rows", "3",
             "--workers", "0", "--ctk-reports", str(reports), "--", "-q", "-p", "no:cacheprovider", "-k", SELECT],
            capture_output=True, text=True, timeout=1500, cwd=tmp_path)
        report_timing("cluster_pipeline_s", time.monotonic() - t0)
        status = cluster.status()
        workers = {w["id"]: cluster.get(w["webuiaddress"] + "/json/") for w in status["workers"]}
        logs = cluster.log_tail()
    tail = (proc.stdout[-3000:] + proc.stderr[-3000:])
    assert proc.returncode == 0, f"ctk run exited {proc.returncode}:\n{tail}\n{logs}"

    results = json.loads((reports / "conformance.json").read_text())["results"]
    spark = {r["requirement"]: r for r in results if r["requirement"].startswith("SPARK-")}
    assert set(spark) == {"SPARK-01", "SPARK-04"}, f"{sorted(spark)}\n{tail}"
    for req, r in spark.items():
        assert r["status"] == "pass", f"{req}: {r['status']}: {r['message']}"
    appends = spark["SPARK-01"]["details"]
    assert appends["writers"] == 2 and appends["inserts"] == 1, appends   # the scale options reached the check

    # The master saw the kit's application, gave it the worker's core and finished it; nothing else ran there.
    apps = status["completedapps"] + status["activeapps"]
    assert [a["name"] for a in apps] == ["ctk-ctkcheck"], json.dumps(status, indent=1)[:3000]
    app = apps[0]
    assert app["state"] == "FINISHED" and app["cores"] == 1, app
    [worker] = status["workers"]
    assert worker["host"] == "127.0.0.1" and worker["state"] == "ALIVE", worker
    # ...and its executor ran on that worker (the worker's JSON status), whose work directory holds the Iceberg
    # runtime the driver served through spark.jars
    ran = [e for e in workers[worker["id"]]["finishedexecutors"] + workers[worker["id"]]["executors"]
           if e["appid"] == app["id"]]
    assert ran, json.dumps(workers, indent=1)[:3000]
    fetched = [p.name for p in (tmp_path / "work" / app["id"]).glob("*/*.jar")]
    assert any(n.startswith("iceberg-spark-runtime") for n in fetched), (fetched, logs)
