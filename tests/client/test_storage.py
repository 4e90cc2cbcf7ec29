"""The storage settings of the kit's own file reads and writes, and the loopback guard in front of them."""

from __future__ import annotations

import pytest

from ctk.catalog import PrerequisiteError
from ctk.client.storage import StorageGuardError, StorageSettings, guard_problem, settings_for, vended_properties

LOOP = {"s3.endpoint": "http://127.0.0.1:9000", "s3.access-key-id": "ak", "s3.secret-access-key": "sk"}


@pytest.mark.parametrize("path", ["s3://warehouse/db/t", "s3a://warehouse/db/t", "oss://b/t"])
def test_s3_without_endpoint_is_refused_naming_the_property(path):
    problem = guard_problem(path, {})
    assert problem and path in problem
    assert "no s3.endpoint is set" in problem and "public AWS endpoint" in problem
    assert "--catalog-property s3.endpoint=http://127.0.0.1:PORT" in problem and "--ctk-allow-remote" in problem


@pytest.mark.parametrize("endpoint", ["http://10.0.0.5:9000", "https://s3.amazonaws.com", "minio.example.org:9000"])
def test_s3_with_a_remote_endpoint_is_refused(endpoint):
    problem = guard_problem("s3://b/t", {"s3.endpoint": endpoint})
    assert problem and "not a loopback address" in problem and endpoint in problem


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9000", "http://localhost:9000", "http://[::1]:9000",
                                      "http://127.8.9.10:1"])
def test_s3_with_a_loopback_endpoint_is_allowed(endpoint):
    assert guard_problem("s3://b/t", {"s3.endpoint": endpoint}) is None


def test_s3_proxy_signer_and_role_must_stay_on_loopback():
    assert "s3.proxy-uri" in guard_problem("s3://b/t", {**LOOP, "s3.proxy-uri": "http://proxy.corp:3128"})
    assert "s3.signer.uri" in guard_problem("s3://b/t", {**LOOP, "s3.signer.uri": "https://signer.example.com"})
    assert "STS" in guard_problem("s3://b/t", {**LOOP, "s3.role-arn": "arn:aws:iam::1:role/x"})
    assert guard_problem("s3://b/t", {**LOOP, "s3.signer.uri": "http://127.0.0.1:8181",
                                      "s3.signer.endpoint": "v1/sign"}) is None


def test_other_stores():
    assert "gcs.service.host" in guard_problem("gs://b/t", {})
    assert guard_problem("gs://b/t", {"gcs.service.host": "http://127.0.0.1:4443"}) is None
    assert "adls.account-host" in guard_problem("abfss://c@acct.dfs.core.windows.net/t", {})
    assert guard_problem("abfs://c@acct/t", {"adls.connection-string":
                                             "AccountName=a;BlobEndpoint=http://127.0.0.1:10000/a;"}) is None
    assert "HDFS" in guard_problem("hdfs://namenode.corp:8020/t", {})
    assert guard_problem("hdfs://127.0.0.1:8020/t", {}) is None
    assert "cannot tell" in guard_problem("weird://x/y", {})


@pytest.mark.parametrize("path", ["/tmp/wh/t", "file:///tmp/wh/t", "file:/tmp/wh/t"])
def test_local_files_are_fine(path):
    assert guard_problem(path, {}) is None


def test_vended_properties_storage_credentials_win_over_config_longest_prefix_last():
    loaded = {"config": {"s3.endpoint": "http://127.0.0.1:1", "s3.access-key-id": "from-config"},
              "storage-credentials": [
                  {"prefix": "s3://b/", "config": {"s3.access-key-id": "bucket-wide"}},
                  {"prefix": "s3://b/db/t", "config": {"s3.access-key-id": "table"}},
                  {"prefix": "s3://other/", "config": {"s3.access-key-id": "other"}}]}
    props = vended_properties(loaded, "s3://b/db/t")
    assert props == {"s3.endpoint": "http://127.0.0.1:1", "s3.access-key-id": "table"}
    assert vended_properties({"config": "junk", "storage-credentials": "junk"}) == {}
    assert vended_properties(None) == {}


class _Client:
    storage_properties = {"s3.endpoint": "http://127.0.0.1:9000"}
    storage_allow_remote = False


def test_settings_for_user_properties_win_over_vended():
    loaded = {"metadata": {"location": "s3://b/t"}, "config": {"s3.endpoint": "https://s3.amazonaws.com",
                                                             "s3.region": "eu-west-1"}}
    s = settings_for(_Client(), loaded)
    assert s.properties == {"s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-1"}
    assert s.allow_remote is False
    s.check("s3://b/t/metadata/x.avro")   # loopback endpoint: allowed


def test_guard_error_is_a_prerequisite_error_and_allow_remote_lifts_it():
    with pytest.raises(StorageGuardError) as info:
        StorageSettings({}).check("s3://b/t")
    assert isinstance(info.value, PrerequisiteError)
    StorageSettings({}, allow_remote=True).check("s3://b/t")


def test_io_properties_keep_pyarrow_from_asking_aws():
    props = StorageSettings(dict(LOOP)).io_properties("s3://b/t")
    assert props["s3.region"] == "us-east-1" and props["s3.resolve-region"] == "false"
    anon = StorageSettings({"s3.endpoint": "http://127.0.0.1:9000"}).io_properties("s3://b/t")
    assert anon["s3.anonymous"] == "true"     # no keys: unsigned, never the instance-metadata credentials
    assert StorageSettings({"a": "b"}).io_properties("file:///tmp/x") == {"a": "b"}


def test_file_io_refuses_before_building_and_checks_every_path(tmp_path, monkeypatch):
    import pyiceberg.io as pio

    built: list[str | None] = []
    real = pio.load_file_io
    monkeypatch.setattr(pio, "load_file_io", lambda props, location=None: built.append(location) or real(props,
                                                                                                           location))
    with pytest.raises(StorageGuardError, match="no s3.endpoint"):
        StorageSettings({}).file_io("s3://warehouse/db/t")
    assert built == []                      # no FileIO was even made for the refused location
    io = StorageSettings({}).file_io(str(tmp_path))
    out = tmp_path / "f.bin"
    with io.new_output(str(out)).create() as f:
        f.write(b"x")
    assert io.new_input(str(out)).exists()
    with pytest.raises(StorageGuardError, match="s3://elsewhere"):
        io.new_input("s3://elsewhere/manifest.avro")   # a path outside the table's store is checked as well
    with pytest.raises(StorageGuardError):
        io.delete("gs://elsewhere/x")
