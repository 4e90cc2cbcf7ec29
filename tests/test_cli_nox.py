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
