"""`ctk spark-jars`: the cached build verifies, helpers parse .deb files, and a missing cache says what to do."""

from __future__ import annotations

import pytest

from ctk.spark import jars


def test_manifest_verifies(spark_jars):
    dest = spark_jars[0].parent
    assert jars.check_jars(dest, full=True) == []
    manifest = jars._read_manifest(dest)
    assert manifest["classpath"][0].startswith("iceberg-spark-runtime-3.5_2.12-1.10")
    assert {d["package"] for d in manifest["debs"]} == {"libhttpclient5-java", "libhttpcore5-java"}
    assert all(len(d["sha256"]) == 64 for d in manifest["debs"])


def test_cli_check(spark_jars, capsys):
    from ctk.cli import main

    assert main(["spark-jars", "--check", "--dest", str(spark_jars[0].parent)]) == 0
    assert capsys.readouterr().out.count("ok ") == len(spark_jars)


def test_check_detects_tampering(spark_jars, tmp_path):
    import shutil

    dest = tmp_path / "copy"
    shutil.copytree(spark_jars[0].parent, dest, ignore=shutil.ignore_patterns("debs", ".lock"))
    deps = next(p for p in dest.glob("iceberg-shaded-deps-*.jar"))
    data = bytearray(deps.read_bytes())
    data[100] ^= 0xFF
    deps.write_bytes(bytes(data))
    problems = jars.check_jars(dest, full=True)
    assert problems and "SHA-256 mismatch" in problems[0]
    assert jars.check_jars(dest, full=False) == []  # same size: only the full check sees it


def test_relocated_classes_present(spark_jars):
    import zipfile

    deps = next(p for p in spark_jars if p.name.startswith("iceberg-shaded-deps-"))
    names = set(zipfile.ZipFile(deps).namelist())
    assert "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/ObjectMapper.class" in names
    assert "org/apache/iceberg/shaded/org/apache/hc/client5/http/impl/classic/HttpClients.class" in names
    assert not any(n.startswith(("com/fasterxml/", "org/apache/hc/")) for n in names)
    assert "META-INF/services/org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory" in names


def test_deb_extraction(spark_jars, tmp_path):
    debs = sorted((spark_jars[0].parent / "debs").glob("libhttpcore5-java_*.deb"))
    if not debs:
        pytest.skip("the cache was built from --debs elsewhere")
    out = jars.extract_deb_jars(debs[0], (r"httpcore5-\d[\w.]*\.jar",), tmp_path)
    assert [p.name.startswith("httpcore5-5.") for p in out] == [True]


def test_missing_jars_say_what_to_do(tmp_path):
    with pytest.raises(jars.JarsMissing, match="run `ctk spark-jars` first"):
        jars.classpath(tmp_path)
    assert jars.check_jars(tmp_path) != []
