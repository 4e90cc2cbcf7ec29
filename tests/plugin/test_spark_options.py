"""--ctk-spark-master, --ctk-spark-conf and the Spark scale options: bad values are usage errors naming the
option; good ones reach the options and `ctk run` forwards them."""

from __future__ import annotations

import pytest

from ctk.checks.spark import SparkTarget
from ctk.spark.session import check_master

PROBE = """
from ctk.plugin.state import get_options

def test_probe(request):
    o = get_options(request.config)
    print("MASTER", o.spark_master, "CONF", sorted(o.spark_conf.items()), "SCALE", o.spark_writers,
          o.spark_statements, o.spark_rows)
"""


@pytest.mark.parametrize("args,needle", [
    (["--ctk-spark-master", "yarn"], "--ctk-spark-master: 'yarn' is not a Spark master URL"),
    (["--ctk-spark-master", "spark://192.0.2.1:7077"], "--ctk-allow-remote"),
    (["--ctk-spark-master", "spark://127.0.0.1"], "spark://HOST:PORT"),
    (["--ctk-spark-master", "spark://127.0.0.1:70000"], "port must be 1..65535"),
    (["--ctk-spark-conf", "executor.memory=2g"], "--ctk-spark-conf expects K=V with a Spark setting"),
    (["--ctk-spark-conf", "spark.executor.memory"], "--ctk-spark-conf expects K=V"),
    (["--ctk-spark-writers", "0"], "--ctk-spark-writers must be 1 or more, not 0"),
    (["--ctk-spark-statements", "two"], "--ctk-spark-statements must be a whole number"),
    (["--ctk-spark-rows", "0"], "--ctk-spark-rows must be 1 or more"),
])
def test_bad_spark_options_are_usage_errors(pytester: pytest.Pytester, args, needle):
    result = pytester.runpytest("--ctk", *args, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert needle in result.stderr.str()


def test_spark_options_parsed(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", "test_probe.py", "--catalog-url", "http://127.0.0.1:9", "-p", "no:html",
                                "--ctk-spark-master", "spark://127.0.0.1:7077", "--ctk-spark-conf",
                                "spark.executor.memory=2g", "--ctk-spark-writers", "4", "--ctk-spark-rows", "7")
    out = result.stdout.str()
    assert "MASTER spark://127.0.0.1:7077 CONF [('spark.executor.memory', '2g')] SCALE 4 None 7" in out, out


def test_defaults_keep_local_and_each_checks_own_scale(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", "test_probe.py", "--catalog-url", "http://127.0.0.1:9", "-p", "no:html")
    assert "MASTER local[2] CONF [] SCALE None None None" in result.stdout.str()


def test_remote_master_allowed_explicitly():
    assert check_master("spark://10.1.2.3:7077", allow_remote=True) == "spark://10.1.2.3:7077"
    assert check_master("local[*]") == "local[*]" and check_master(" local[4] ") == "local[4]"


def test_ctk_run_forwards_the_spark_options():
    import argparse

    from ctk import runner

    parser = argparse.ArgumentParser()
    runner.add_arguments(parser)
    argv = runner.pytest_argv(parser.parse_args(["--ctk-spark", "--ctk-spark-master", "spark://127.0.0.1:7077",
                                                 "--ctk-spark-statements", "3", "--ctk-spark-conf", "spark.a=b"]))
    joined = " ".join(argv)
    for part in ("--ctk-spark-master spark://127.0.0.1:7077", "--ctk-spark-statements 3",
                 "--ctk-spark-conf spark.a=b"):
        assert part in joined, argv


def test_scale_maps_to_each_checks_arguments():
    t = SparkTarget("http://127.0.0.1:9", writers=4, statements=3, rows=2)
    assert t.scale("check_appends") == {"writers": 4, "inserts": 3, "rows_each": 2}
    assert t.scale("check_row_level") == {"writers": 4}
    assert t.scale("check_compaction") == {"appends": 3}
    assert t.scale("check_lost_answers") == {"writers": 4, "rows_each": 2}
    assert SparkTarget("http://127.0.0.1:9").scale("check_appends") == {}
