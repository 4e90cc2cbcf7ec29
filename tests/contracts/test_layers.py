"""The layer table of docs/architecture.md, enforced: import-linter's contract in `.importlinter` holds for
the package, and it is broken by a lower layer importing a higher one (so the contract can fail)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = shutil.which("lint-imports")

pytestmark = pytest.mark.skipif(LINT is None, reason="import-linter is not installed (the test extra has it)")


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(cwd))
    return subprocess.run([LINT, "--config", str(cwd / ".importlinter"), "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_package_keeps_its_layers():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "ctk", tmp_path / "ctk", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    # core (the lowest layer) reaching up into the plugin
    (tmp_path / "ctk" / "core" / "wrong.py").write_text("import ctk.plugin.options  # noqa: F401\n")
    result = _lint(tmp_path)
    assert result.returncode != 0, result.stdout
    assert "ctk.core is not allowed to import ctk.plugin" in result.stdout
    assert "ctk.core.wrong -> ctk.plugin.options" in result.stdout
