"""The data pipeline on Spark (Iceberg's Java client) writing through the catalog (SPARK-01..04).

Runs with --ctk-spark (Spark needs pyspark, Java 17 and the jars of `ctk spark-jars`); tables live in the
run namespace's child `spark` and go with it."""

import pytest

CHECKS = ["check_appends", "check_row_level", "check_compaction", "check_lost_answers"]


@pytest.mark.spark
@pytest.mark.parametrize("name", CHECKS, ids=[c.replace("check_", "") for c in CHECKS])
def test_spark(ctk_session, ctk_context, name):
    if not ctk_session.options.spark:
        pytest.skip("unsupported: Spark checks not requested (pass --ctk-spark)")
    from ctk.checks import spark

    placement = ctk_session.placement   # the run namespace's child `spark` (a registered sibling without nesting)
    ns = ".".join(placement.child("spark")) if placement else f"{ctk_session.namespace}.spark"
    return getattr(spark, name)(ctk_session.target, ns)
