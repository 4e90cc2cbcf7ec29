"""Issue 29 item 3 (b-e): `ctk --version`; a usage error of `ctk run` (an unknown option, a value it can judge
itself) exits 4 with `ctk run`'s usage before pytest starts; a URL ending in /v1 is run as its base URL and says so;
the unusable-target exit ends with the kit's own line, after pytest's exit banner."""

from __future__ import annotations

import subprocess
import sys

import procs

from ctk import __version__
from ctk.plugin.exits import EXIT_UNUSABLE_TARGET

USAGE = 4


def _ctk(*args: str, cwd=None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctk", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def test_version():
    done = _ctk("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"ctk {__version__}", done


def test_usage_errors_of_ctk_run_exit_4_with_its_usage_before_pytest(tmp_path):
    for args, said in ((["--ctk-stirct"], "unrecognized arguments: --ctk-stirct"),
                       (["--workers", "x"], "--workers: invalid int value"),
                       (["--ctk-fail-on", "cii"], "--ctk-fail-on 'cii'"),
                       (["--catalog-url", "127.0.0.1:8181"], "must be an http(s) URL"),
                       (["--catalog-url", "http://192.0.2.1:8181"], "not a loopback address")):
        done = _ctk("run", *args, "--ctk-reports", str(tmp_path / "r"), cwd=tmp_path)
        err = done.stderr
        assert done.returncode == USAGE, (args, done.returncode, err)
        assert err.startswith("usage: ctk run ") and said in err, (args, err)
        assert "pytest" not in done.stdout and not (tmp_path / "r").exists(), (args, done.stdout)   # never started


def test_v1_url_runs_as_its_base_and_the_kit_line_is_last(tmp_path):
    port = procs.closed_port()
    done = _ctk("run", "--catalog-url", f"http://127.0.0.1:{port}/v1/", "--workers", "0", "--ctk-reports",
                str(tmp_path / "r"), cwd=tmp_path, timeout=300)
    assert done.returncode == EXIT_UNUSABLE_TARGET, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert f"the base URL tested is http://127.0.0.1:{port}" in done.stderr, done.stderr[-2000:]
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    assert lines[-1].startswith("ctk: the target is unusable, no check ran"), lines[-5:]
    assert any("_pytest.outcomes.Exit" in ln for ln in lines[:-1])     # pytest's banner, before the kit's line


def test_the_plugin_says_which_base_a_v1_url_tests(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", "--catalog-url", "http://127.0.0.1:8181/v1", "--collect-only",
                           "-p", "no:cacheprovider", "--noconftest", "--ctk-reports", str(tmp_path / "r"), "-k", "KEY-01"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "ends in /v1: the base URL tested is http://127.0.0.1:8181" in done.stdout, done.stdout[-2000:]
