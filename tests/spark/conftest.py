"""Fixtures for the Spark layer (marker `spark`).

`spark_jars`: the assembled classpath (session-scoped; reuses the `ctk spark-jars` cache, builds it when absent).
`spark_reference`: a ReferenceServer (control API on) for the whole session.
`spark`: one SparkSession on that server (one JVM for the whole test session; tests use their own namespaces).
Tests skip only when Java or pyspark is absent; a failing jar build is a failure.
"""

from __future__ import annotations

import importlib.util
import time

import pytest
from required import require

TIMINGS: dict[str, float] = {}


def _spark_missing() -> str | None:
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'iceberg-rest-ctk[spark]')"
    from ctk.spark.jars import BuildError, java_tool

    try:
        java_tool("java")
    except BuildError as exc:
        return f"Java is not available: {exc}"
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/tests/spark/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark_jars():
    reason = _spark_missing()
    if reason:
        require("the Spark toolchain", reason)
    from ctk.spark.jars import ensure_jars

    t0 = time.monotonic()
    paths = ensure_jars(quiet=True)
    TIMINGS["jars_ready_s"] = time.monotonic() - t0
    return paths


@pytest.fixture(scope="session")
def spark_reference(tmp_path_factory):
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    with ReferenceServer(ReferenceSettings(warehouse=str(warehouse), control_api=True)) as server:
        yield server


@pytest.fixture(scope="session")
def spark(spark_jars, spark_reference):
    from ctk.spark.session import session_info, spark_session, stop_session

    s = spark_session(spark_reference.url, jars_dir=spark_jars[0].parent)
    TIMINGS["session_start_s"] = session_info(s).started_seconds
    yield s
    stop_session(s, stop_spark=True)


@pytest.fixture
def report_timing(request):
    """report_timing(name, seconds): print it (even without -s) and attach it as a JUnit property."""
    capman = request.config.pluginmanager.getplugin("capturemanager")

    def report(name: str, seconds: float) -> None:
        TIMINGS[name] = seconds
        request.node.user_properties.append((name, round(seconds, 3)))
        line = f"\n[ctk spark timing] {name} = {seconds:.3f}s"
        if capman is not None:
            with capman.global_and_fixture_disabled():
                print(line, flush=True)
        else:
            print(line, flush=True)

    return report


