"""reports/ holds reports only: pytest's cache and the hypothesis database go to the kit's cache directory."""

from __future__ import annotations

import os

from ctk import pytest_plugin
from ctk.plugin.caches import cache_dir


def test_hypothesis_database_outside_the_reports(tmp_path, monkeypatch):
    from hypothesis import configuration

    monkeypatch.setenv("CTK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    reports = tmp_path / "reports"
    previous = pytest_plugin._keep_hypothesis_database_with_reports(str(reports))
    try:
        home = str(configuration.storage_directory(intent_to_write=False).path)
        assert home.startswith(str(tmp_path / "cache")) and not home.startswith(str(reports)), home
    finally:
        configuration.set_hypothesis_home_dir(previous[1])
    assert cache_dir("pytest") == os.path.join(str(tmp_path / "cache"), "pytest")


def test_cache_dir_default_and_unwritable_fallback(tmp_path, monkeypatch):
    monkeypatch.delenv("CTK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir("hypothesis") == str(tmp_path / "xdg" / "ctk" / "hypothesis")
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("CTK_CACHE_DIR", str(blocked / "sub"))
    assert os.path.isdir(cache_dir("pytest"))          # a temporary directory instead, never an error
