"""The plugin module stays thin: no heavy imports until the embedded catalog is used, no module-level state
(its state is in the config's stash), and pytest calls the check (the plugin only wraps that call; a crashing check's error verdict: tests/oddserver/test_crash_reports.py)."""

from __future__ import annotations

import subprocess
import sys

import ctk.pytest_plugin as plugin


def test_importing_the_plugin_loads_no_web_server_or_database_library():
    code = ("import sys, ctk.pytest_plugin; "
            "print(sorted(m for m in ('starlette', 'uvicorn', 'sqlalchemy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_no_module_level_list_or_dict_of_run_state():
    mutable = [name for name, value in vars(plugin).items()
               if not name.startswith("__") and isinstance(value, (list, dict, set))]
    assert mutable == []


def test_the_call_hook_wraps_pytests_own():
    impl = plugin.pytest_pyfunc_call
    opts = getattr(impl, "pytest_impl", None) or getattr(impl, "pytest_hookimpl", None) or {}
    assert opts.get("wrapper") or opts.get("hookwrapper"), opts
