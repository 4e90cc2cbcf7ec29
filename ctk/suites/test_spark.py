"""The data pipeline on Spark (Iceberg's Java client) writing through the catalog (SPARK-01..04).

Runs with --ctk-spark (Spark needs pyspark, Java 17 and the jars of `ctk spark-jars`) on --ctk-spark-master
(local[2] or a standalone cluster, docs/spark.md), sized by --ctk-spark-writers/-statements/-rows; tables live
in the run namespace's child `spark` and go with it."""

import pytest

# the longest first (row-level conflicts: 24 cases), so that it does not start last
CHECKS = ["check_row_level", "check_appends", "check_compaction", "check_lost_answers"]


@pytest.mark.spark
@pytest.mark.parametrize("name", CHECKS, ids=[c.replace("check_", "") for c in CHECKS])
def test_spark(ctk_session, ctk_context, name):
    if not ctk_session.options.spark:
        pytest.skip("unsupported: Spark checks not requested (pass --ctk-spark)")
    from ctk.checks import spark

    placement = ctk_session.placement   # the run namespace's child `spark` (a registered sibling without nesting)
    ns = ".".join(placement.child("spark")) if placement else f"{ctk_session.namespace}.spark"
    o = ctk_session.options
    where = spark.SparkTarget(ctk_session.target, master=o.spark_master, conf=o.spark_conf,
                              properties=o.catalog_properties, writers=o.spark_writers,
                              statements=o.spark_statements, rows=o.spark_rows)
    return getattr(spark, name)(where, ns, **where.scale(name))
