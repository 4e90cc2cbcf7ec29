"""Install outside a checkout: the wheel carries every default (OpenAPI document, scenario files), installs
non-editable into a fresh virtual environment, and `ctk run` works from an empty directory against the
embedded catalog with pytest-xdist (a base dependency), leaving nothing in that directory but reports/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from required import require

REPO = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "ctk", "scenarios", "open-api")


def _build_wheel(tmp: Path) -> Path:
    """A wheel of the working tree (copied, so the checkout gets no build/ or egg-info)."""
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, src / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(p, src / name)
    out = tmp / "dist"
    base = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(out)]
    # offline first (the interpreter's setuptools), then with build isolation (setuptools from PyPI)
    for extra in (["--no-build-isolation"], []):
        r = subprocess.run(base + extra, capture_output=True, text=True, timeout=300)
        wheels = list(out.glob("*.whl"))
        if r.returncode == 0 and wheels:
            return wheels[0]
    require("the wheel", f"no wheel could be built here (offline without a usable setuptools?): {r.stderr[-500:]}")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return _build_wheel(tmp_path_factory.mktemp("wheel"))


def test_wheel_carries_the_defaults(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "ctk/data/ctk-openapi.yaml" in names
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("ctk/data/scenarios/")}
    assert shipped == {p.name for p in (REPO / "scenarios").iterdir() if p.is_file()}
    assert {"ctk/suites/test_discovery.py", "ctk/py.typed"} <= names
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [ln for ln in zipfile.ZipFile(wheel).read(meta).decode().splitlines() if ln.startswith("Requires-Dist")]
    assert any("pytest-xdist" in ln and "extra ==" not in ln for ln in requires), requires


def test_ctk_run_from_an_empty_directory(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    # The dependencies come from this interpreter's site-packages (a path file, after the venv's own: works
    # under nox's venv too, where --system-site-packages would reach the base Python instead). Its .pth files
    # are not run from there, so a checkout's editable install of the kit stays out of the way.
    own_site = subprocess.run([str(py), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                              text=True, check=True).stdout.strip()
    import site

    parents = [p for p in site.getsitepackages() + [site.getusersitepackages()] if os.path.isdir(p)]
    Path(own_site, "zz_parent_site.pth").write_text("\n".join(parents) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall", str(wheel)],
                   check=True, timeout=300)
    where = subprocess.run([str(py), "-c", "import ctk, ctk.openapi as o; print(ctk.__file__); "
                                           "print(o.default_spec_path())"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    assert all(str(venv) in w for w in where), where           # the installed copy, not the checkout
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    r = subprocess.run([str(venv / "bin" / "ctk"), "run", "--workers", "2", "--", "-k", "discovery"],
                       cwd=empty, capture_output=True, text=True, timeout=600, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "-n 2" in out and "created: 2/2 workers" in out, out[-3000:]      # xdist ran, not one process
    assert sorted(p.name for p in empty.iterdir()) == ["reports"], list(empty.iterdir())
    data = json.loads((empty / "reports" / "conformance.json").read_text())
    assert data["counts"]["pass"] >= 1 and data["subset"] and data["selection"]["keyword"] == "discovery"
    assert (empty / "reports" / "junit.xml").is_file() and (empty / "reports" / "conformance.html").is_file()
