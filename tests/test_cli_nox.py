"""The project's nox sessions leave the system Python alone (each session has its own virtualenv) and apt-get says
what it installs and why before it runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

nox = pytest.importorskip("nox")


@pytest.fixture(scope="module")
def noxfile():
    spec = importlib.util.spec_from_file_location("ctk_noxfile", REPO / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sessions_have_their_own_virtualenv(noxfile):
    assert nox.options.default_venv_backend in ("venv", "virtualenv", "uv", "venv|virtualenv")
    assert "none" not in str(nox.options.default_venv_backend)


class _Session:
    def __init__(self):
        self.calls: list[tuple[str, tuple]] = []

    def log(self, *args):
        self.calls.append(("log", args))

    def warn(self, *args):
        self.calls.append(("warn", args))

    def run(self, *args, **kwargs):
        self.calls.append(("run", args))


def test_apt_get_says_what_and_why_first(noxfile, monkeypatch):
    monkeypatch.setattr(noxfile.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(noxfile.os.path, "isdir", lambda path: False)
    monkeypatch.setattr(noxfile.os, "geteuid", lambda: 0)
    session = _Session()
    noxfile._apt_install(session)
    kinds = [kind for kind, _ in session.calls]
    assert kinds[0] == "log" and "run" in kinds
    said = " ".join(session.calls[0][1])
    for package, why in noxfile.DEBIAN_PACKAGES.items():
        assert package in said and why in said
    install = next(args for kind, args in session.calls if kind == "run" and "install" in args)
    assert set(noxfile.DEBIAN_PACKAGES) <= set(install)


def test_nothing_missing_runs_nothing(noxfile, monkeypatch):
    monkeypatch.setattr(noxfile.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(noxfile.os.path, "isdir", lambda path: True)
    monkeypatch.setattr(noxfile.os, "listdir", lambda path: ["16"])
    monkeypatch.setattr(noxfile.os.path, "exists", lambda path: True)
    session = _Session()
    noxfile._apt_install(session)
    assert session.calls == []


def test_apt_get_waits_for_the_package_lock(noxfile, monkeypatch):
    """Another apt-get or dpkg holding the lock (unattended upgrades on a fresh machine) is waited for."""
    monkeypatch.setattr(noxfile.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(noxfile.os.path, "isdir", lambda path: False)
    monkeypatch.setattr(noxfile.os, "geteuid", lambda: 0)
    session = _Session()
    noxfile._apt_install(session)
    apt = [args for kind, args in session.calls if kind == "run" and args[0] == "apt-get"]
    assert len(apt) == 2            # update, install
    for args in apt:
        assert args[1:3] == ("-o", "DPkg::Lock::Timeout=600"), args


def test_tests_session_spreads_over_workers_and_lists_the_slowest(noxfile, monkeypatch):
    monkeypatch.setattr(noxfile, "_apt_install", lambda session: None)
    monkeypatch.delenv("CTK_TEST_WORKERS", raising=False)
    session = _Session()
    session.posargs = []
    noxfile.tests.func(session) if hasattr(noxfile.tests, "func") else noxfile.tests(session)
    [pytest_args] = [args for kind, args in session.calls if kind == "run" and "pytest" in args]
    assert "--durations=25" in pytest_args
    assert pytest_args[pytest_args.index("-n") + 1] == "2"
    # a first install takes minutes: pip says what it fetches (no -q), without progress bars in a CI log
    [pip_args] = [args for kind, args in session.calls if kind == "run" and "pip" in args]
    assert "-q" not in pip_args and "--progress-bar" in pip_args
