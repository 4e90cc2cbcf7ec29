"""`ctk spark-jars` says what it downloads and, offline, works from a given directory of packages without
touching the network (the network calls are replaced by ones that fail the test)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ctk.spark import jars


@pytest.fixture
def no_network(monkeypatch):
    def refuse(url, timeout=60.0):
        raise AssertionError(f"network used: {url}")

    monkeypatch.setattr(jars, "_http_get", refuse)


def test_offline_without_packages_says_what_to_fetch(tmp_path, no_network):
    deb = jars.DEBS[0]
    with pytest.raises(jars.BuildError) as info:
        jars.obtain_deb(deb, None, tmp_path / "cache", offline=True)
    text = str(info.value)
    assert text.startswith("offline:") and f"{jars.DEBIAN_MIRROR}/{deb.pool_path}" in text
    assert deb.sha256 in text and "--debs DIR" in text
    assert not (tmp_path / "cache").exists()


def test_given_directory_is_used_without_network(tmp_path, no_network):
    debs = tmp_path / "debs"
    debs.mkdir()
    for deb in jars.DEBS:
        (debs / f"{deb.package}_9.9-1_all.deb").write_bytes(b"!<arch>\n")
    for deb in jars.DEBS:
        path, record = jars.obtain_deb(deb, debs, tmp_path / "cache", offline=True)
        assert path.parent == debs and record["version"] == "9.9-1" and record["pinned"] is False


def test_cached_package_is_used_without_network(tmp_path, no_network, monkeypatch):
    deb = jars.DEBS[1]
    cache = tmp_path / "cache"
    cache.mkdir()
    cached = cache / f"{deb.package}_{deb.version}_all.deb"
    cached.write_bytes(b"pinned bytes")
    monkeypatch.setattr(jars, "DEBS", (jars.Deb(deb.package, deb.version, deb.pool_path,
                                                jars.sha256_file(cached), deb.jars),))
    path, record = jars.obtain_deb(jars.DEBS[0], None, cache, offline=True)
    assert path == cached and record["pinned"] is True


def test_download_is_announced(tmp_path, monkeypatch, capsys):
    deb = jars.DEBS[0]
    monkeypatch.setattr(jars, "_http_get", lambda url, timeout=60.0: b"not the pinned bytes")
    with pytest.raises(jars.BuildError, match="does not match the expected"):
        jars.obtain_deb(deb, None, tmp_path / "cache", quiet=True)
    err = capsys.readouterr().err
    assert f"downloading {deb.package} {deb.version} from {jars.DEBIAN_MIRROR}/{deb.pool_path}" in err


def test_env_offline(monkeypatch):
    monkeypatch.setenv("CTK_OFFLINE", "1")
    assert jars.offline_default()
    monkeypatch.setenv("CTK_OFFLINE", "")
    assert not jars.offline_default()


def test_help_lists_the_downloads():
    out = subprocess.run([sys.executable, "-m", "ctk", "spark-jars", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "--offline" in out
    for deb in jars.DEBS:
        assert deb.pool_path in out.replace("\n", "")
