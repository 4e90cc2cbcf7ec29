"""`ctk run` argument handling: it never drops to one process silently, forwards the options the README
lists, and keeps pytest's cache out of the reports."""

from __future__ import annotations

import os

import argparse

from ctk import runner
from ctk.cli import main


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    runner.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_no_xdist_is_an_error_not_one_process(monkeypatch, capsys):
    monkeypatch.setattr(runner, "_xdist_installed", lambda: False)
    assert main(["run", "--catalog-url", "http://127.0.0.1:9"]) == 4
    assert "needs pytest-xdist" in capsys.readouterr().err


def test_workers_zero_runs_in_one_process_without_xdist(monkeypatch):
    monkeypatch.setattr(runner, "_xdist_installed", lambda: False)
    argv = runner.pytest_argv(_args("--workers", "0", "--catalog-url", "http://127.0.0.1:9"))
    assert "-n" not in argv


def test_forwarded_options():
    argv = runner.pytest_argv(_args("--catalog-url", "http://127.0.0.1:9", "--ctk-steps", "3", "--ctk-gen-budget",
                                    "5", "--ctk-fail-on", "deviation", "--ctk-reports", "out"))
    for pair in (["--ctk-steps", "3"], ["--ctk-gen-budget", "5"], ["--ctk-fail-on", "deviation"],
                 ["-n", "3"]):
        i = argv.index(pair[0])
        assert argv[i:i + 2] == pair, argv
    # pytest's cache: the kit's cache directory, never the reports directory (reports/ holds reports only)
    cache = argv[argv.index("-o") + 1]
    assert cache.startswith("cache_dir=") and "out" not in cache.split("=", 1)[1].split(os.sep), argv


def test_user_choices_win():
    argv = runner.pytest_argv(_args("--", "-n", "1", "-p", "no:cacheprovider"))
    assert argv.count("-n") == 1 and not any(a.startswith("cache_dir=") for a in argv)


def test_run_takes_every_plugin_option_and_passes_them_on():
    """`ctk run` derives its options from the plugin's one table: whatever the plugin registers with pytest,
    ctk run takes under the same name (but --ctk, which it adds itself) and passes on; --workers becomes -n."""
    from _pytest.config.argparsing import Parser

    from ctk import pytest_plugin

    parser = Parser()
    pytest_plugin.pytest_addoption(parser)
    plugin = {name for group in parser._groups for opt in group.options for name in opt.names()}
    run = argparse.ArgumentParser()
    runner.add_arguments(run)
    taken = {o for a in run._actions for o in a.option_strings}
    assert plugin - taken == {"--ctk"}
    argv = runner.pytest_argv(_args("--catalog-url", "http://127.0.0.1:9", "--catalog-property", "a=1",
                                    "--ctk-spark", "--ctk-fail-on", "unsupported", "--workers", "2"))
    assert argv[argv.index("--catalog-property"):][:2] == ["--catalog-property", "a=1"]
    assert "--ctk-spark" in argv and argv[argv.index("--ctk-fail-on") + 1] == "unsupported"
    assert argv[argv.index("-n"):][:2] == ["-n", "2"] and "--workers" not in argv


def test_catalog_image_is_passed_on_without_the_embedded_catalog():
    argv = runner.pytest_argv(_args("--catalog-image", "example/catalog:1"))
    assert argv[argv.index("--catalog-image"):][:2] == ["--catalog-image", "example/catalog:1"]
    assert "--ctk" not in argv


def test_a_conftest_in_the_working_directory_stays_out_of_the_kits_run(tmp_path):
    """`ctk run` started in a catalog project's checkout does not load that project's tests/conftest.py (pytest
    loads conftests of the working directory's test*/ folders): here one that would change the exit status
    (as this repository's skip guard does under CI=true) and mark itself loaded."""
    import subprocess
    import sys

    from procs import closed_port

    (tmp_path / "tests").mkdir()
    marker = tmp_path / "loaded"
    (tmp_path / "tests" / "conftest.py").write_text(
        f"open({str(marker)!r}, 'w').write('yes')\n"
        "def pytest_sessionfinish(session, exitstatus):\n"
        "    session.exitstatus = 3\n")
    r = subprocess.run([sys.executable, "-m", "ctk", "run", "--workers", "0", "--catalog-url",
                        f"http://127.0.0.1:{closed_port()}", "--ctk-reports", str(tmp_path / "reports")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert not marker.exists(), r.stdout[-2000:]
    assert r.returncode == 6, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])   # the target is unusable


def test_plugins_the_kit_does_not_use_stay_off():
    argv = runner.pytest_argv(_args())
    off = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-p"}
    assert {"no:schemathesis", "no:anyio", "no:unraisableexception"} <= off, argv


def test_a_plugin_the_user_names_is_left_alone():
    argv = runner.pytest_argv(_args("--", "-p", "anyio"))
    assert "no:anyio" not in argv and "no:schemathesis" in argv


def test_k_is_taken_as_pytest_takes_it():
    """Issue 35: `ctk run -k REPLAY-01`, what a pytest user types first, is a selection, not a usage error."""
    argv = runner.pytest_argv(_args("-k", "REPLAY-01", "--catalog-url", "http://127.0.0.1:9"))
    assert argv[argv.index("-k"):argv.index("-k") + 2] == ["-k", "REPLAY-01"], argv
    assert runner.pytest_argv(_args("--", "-k", "keys")).count("-k") == 1
