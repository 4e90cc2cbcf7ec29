"""Libraries the checks import lazily from threads of their own are imported once when a check context is made:
pyiceberg.table and pyiceberg.table.update import each other, and two threads importing them for the first time at
once crashed a check ("cannot import name 'AddPartitionSpecUpdate' from partially initialized module
'pyiceberg.table.update'", LIFE-01/03 on fetchScanTasks in one of four runs under load)."""

from __future__ import annotations

import subprocess
import sys

from ctk.checks import context


def test_making_a_context_preloads_the_libraries(make_ctx, monkeypatch):
    calls = []
    monkeypatch.setattr(context, "preload_libraries", lambda: calls.append(1))
    make_ctx()
    assert calls, "CheckContext.create did not preload the libraries the checks import from threads"


def test_preload_imports_every_listed_module_in_a_fresh_process():
    code = ("import sys; from ctk.checks.context import PRELOADED, preload_libraries; "
            "preload_libraries(); "
            "print([m for m in PRELOADED if m not in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
