"""Spark 3.5 with Iceberg 1.10.2 (`ctk spark-jars`) through PySpark against `ctk serve`: DDL, INSERT, MERGE,
rewrite_data_files, time travel, read back with PyIceberg. Few statements: Spark is slow on two cores. The JVM is
the process's one (ctk.spark.session), left running for tests/spark to reuse."""

from __future__ import annotations

import importlib.util

import pytest
from required import require

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600)]

NS = "spk"


@pytest.fixture(scope="module")
def spark(served):
    from ctk.spark.jars import BuildError, ensure_jars, java_tool
    from ctk.spark.session import SparkUnavailable, spark_session, stop_session

    if importlib.util.find_spec("pyspark") is None:
        require("Spark", "pyspark is not installed: pip install 'iceberg-rest-ctk[spark]'")
    try:
        java_tool("java")
        jars = ensure_jars(quiet=True)
        session = spark_session(served.url, name="lane", jars_dir=jars[0].parent, record=False,
                                credential=f"{served.client_id}:{served.secret}",
                                extra_conf={"spark.sql.catalog.lane.oauth2-server-uri":
                                            f"{served.url}/v1/oauth/tokens"})
    except (BuildError, SparkUnavailable) as exc:
        require("Spark", str(exc))
    yield session
    stop_session(session)


def test_ddl_insert_merge_rewrite_time_travel(spark, pyiceberg_catalog):
    sql = spark.sql
    sql(f"CREATE NAMESPACE lane.{NS}")
    sql(f"CREATE TABLE lane.{NS}.orders (id BIGINT, kind STRING, amount DOUBLE) USING iceberg "
        "PARTITIONED BY (kind) TBLPROPERTIES ('format-version' = '2')")
    sql(f"INSERT INTO lane.{NS}.orders VALUES (1, 'a', 10.0), (2, 'b', 20.0)")
    sql(f"INSERT INTO lane.{NS}.orders VALUES (3, 'a', 30.0), (4, 'b', 40.0)")
    sql(f"""MERGE INTO lane.{NS}.orders t
            USING (SELECT * FROM VALUES (2L, 'b', 25.0), (5L, 'c', 50.0) AS s(id, kind, amount)) s
            ON t.id = s.id
            WHEN MATCHED THEN UPDATE SET t.amount = s.amount
            WHEN NOT MATCHED THEN INSERT *""")
    want = [(1, "a", 10.0), (2, "b", 25.0), (3, "a", 30.0), (4, "b", 40.0), (5, "c", 50.0)]

    table = pyiceberg_catalog.load_table((NS, "orders"))
    assert sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist()) == want
    assert [f.name for f in table.spec().fields] == ["kind"]
    snapshots = table.snapshots()
    assert [s.summary.operation.value for s in snapshots[:2]] == ["append", "append"] and len(snapshots) == 3
    files_before = len(table.inspect.files())

    rewritten = sql(f"CALL lane.system.rewrite_data_files(table => '{NS}.orders', "
                    "options => map('min-input-files', '2'))").collect()[0]
    assert rewritten.rewritten_data_files_count >= 2 and rewritten.added_data_files_count >= 1, rewritten
    table = pyiceberg_catalog.load_table((NS, "orders"))
    assert table.snapshots()[-1].summary.operation.value == "replace"
    assert len(table.inspect.files()) < files_before
    assert sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist()) == want

    first = snapshots[0].snapshot_id
    old = sql(f"SELECT id, amount FROM lane.{NS}.orders VERSION AS OF {first} ORDER BY id").collect()
    assert [(r.id, r.amount) for r in old] == [(1, 10.0), (2, 20.0)]
    now = sql(f"SELECT id, kind, amount FROM lane.{NS}.orders ORDER BY id").collect()
    assert [tuple(r) for r in now] == want
