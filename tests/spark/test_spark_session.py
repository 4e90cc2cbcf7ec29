"""A SparkSession on the reference catalog: SQL DDL, two INSERTs, metadata tables, concurrent appends."""

from __future__ import annotations

import time
import uuid

import pytest

from ctk.spark.session import SparkUnavailable, commit_stats, is_commit, RecordedRequest, session_info
from ctk.spark.integrity import check_table_integrity
from ctk.spark.workloads import concurrent_appends


def _ns(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def test_session_start_time(spark, report_timing):
    report_timing("session_start", session_info(spark).started_seconds)
    assert spark.sparkContext.master == "local[2]"
    assert spark.conf.get("spark.sql.catalog.ctk.type") == "rest"


def test_create_insert_read_snapshots(spark, report_timing):
    ns = _ns("smoke")
    rec = session_info(spark).recorder
    mark = len(rec.snapshot())
    spark.sql(f"CREATE NAMESPACE {ns}")
    spark.sql(f"CREATE TABLE {ns}.t (id BIGINT, s STRING) USING iceberg")
    t0 = time.monotonic()
    spark.sql(f"INSERT INTO {ns}.t VALUES (1, 'a')")
    report_timing("first_insert_commit", time.monotonic() - t0)
    t0 = time.monotonic()
    spark.sql(f"INSERT INTO {ns}.t VALUES (2, 'b')")
    report_timing("warm_insert_commit", time.monotonic() - t0)

    assert spark.sql(f"SELECT count(*) AS n FROM {ns}.t").collect()[0].n == 2
    snaps = spark.sql(f"SELECT snapshot_id, parent_id, operation FROM {ns}.t.snapshots ORDER BY committed_at").collect()
    assert [s.operation for s in snaps] == ["append", "append"]
    assert snaps[0].parent_id is None and snaps[1].parent_id == snaps[0].snapshot_id

    records = rec.snapshot()[mark:]
    stats = commit_stats(records)
    assert (stats["attempts"], stats["ok"], stats["conflicts"]) == (2, 2, 0), stats
    # Spark first looks for a table `snapshots` in namespace `<ns>\x1Ft` and needs a 404 for it
    assert any("%1Ft/tables/snapshots" in r.path and r.status == 404 for r in records)

    report = check_table_integrity(spark, f"{ns}.t", expected_rows=2, expected_appends=2)
    assert report.ok, report.problems
    assert report.files_checked >= 4 and report.files_unchecked == 0


def test_concurrent_appends_two_writers(spark, report_timing):
    ns = _ns("conc")
    result = concurrent_appends(spark, f"{ns}.appends", writers=2, rows_each=5)
    report_timing("concurrent_appends_2_writers_wall", result.wall_seconds)
    print(result.commit_stats)
    assert result.ok, (result.errors, result.integrity.problems)
    assert result.integrity.rows == 10 and result.integrity.append_snapshots == 2
    assert len(result.integrity.chain) == 2
    stats = result.commit_stats
    assert stats is not None and stats["ok"] == 2
    assert stats["attempts"] == 2 + stats["conflicts"], stats  # every 409 was retried exactly once more


def test_hadoop_catalog_validates_jars(spark, tmp_path):
    """The jars alone (no REST): a Hadoop catalog on a local warehouse, in a new session of the same JVM."""
    s = spark.newSession()
    s.conf.set("spark.sql.catalog.hloc", "org.apache.iceberg.spark.SparkCatalog")
    s.conf.set("spark.sql.catalog.hloc.type", "hadoop")
    s.conf.set("spark.sql.catalog.hloc.warehouse", str(tmp_path / "wh"))
    s.sql("CREATE TABLE hloc.db.t (id BIGINT) USING iceberg")
    s.sql("INSERT INTO hloc.db.t VALUES (1), (2), (3)")
    assert s.sql("SELECT count(*) AS n FROM hloc.db.t").collect()[0].n == 3
    assert check_table_integrity(s, "hloc.db.t", expected_rows=3, expected_appends=1).ok


def test_missing_jars_error(spark_jars, spark_reference, tmp_path):
    from ctk.spark.session import spark_session

    with pytest.raises(SparkUnavailable, match="run `ctk spark-jars` first"):
        spark_session(spark_reference.url, jars_dir=tmp_path)


@pytest.mark.parametrize(
    "method,path,commit",
    [
        ("POST", "/v1/namespaces/db/tables/t", True),
        ("POST", "/v1/pfx/namespaces/db/tables/t", True),
        ("POST", "/v1/transactions/commit", True),
        ("POST", "/v1/namespaces/db/tables", False),
        ("POST", "/v1/namespaces/db/tables/t/metrics", False),
        ("GET", "/v1/namespaces/db/tables/t", False),
        ("POST", "/v1/namespaces", False),
    ],
)
def test_is_commit(method, path, commit):
    assert is_commit(RecordedRequest(method, path, 200, 0.0, 0.0)) is commit


def test_through_interposer(spark, spark_reference):
    """`through=`: Spark (via the recorder) reaches the catalog through the interposer."""
    from urllib.parse import urlsplit

    from ctk.interposer import Interposer
    from ctk.spark.session import spark_session, stop_session

    up = urlsplit(spark_reference.url)
    ip = Interposer(upstream=(up.hostname, up.port))
    host, port = ip.start()
    try:
        via = spark_session(spark_reference.url, name="via", through=(host, port))
        try:
            ns = _ns("via")
            via.sql(f"CREATE NAMESPACE {ns}")
            via.sql(f"CREATE TABLE {ns}.t (id BIGINT) USING iceberg")
            via.sql(f"INSERT INTO {ns}.t VALUES (7)")
            assert via.sql(f"SELECT count(*) AS n FROM {ns}.t").collect()[0].n == 1
            assert commit_stats(session_info(via).recorder.snapshot())["ok"] == 1
            counters = ip.counters
            assert counters.get("requests", 0) >= len(session_info(via).recorder.snapshot()), counters
        finally:
            stop_session(via)
    finally:
        ip.stop()
