"""The README agrees with the code: its CI recipe, run as written against `ctk serve`, exits 0 with the reports
in place; its counts, options and exit codes are the code's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import procs
import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def _block(marker: str) -> str:
    m = re.search(re.escape(marker) + r"\s*```sh\n(.*?)```", README, re.S)
    assert m, f"no ```sh block after {marker} in README.md"
    return m.group(1)


def test_deviation_profile_count():
    from ctk.reference.deviations import PROFILES

    counts = re.findall(r"one of (\d+) deviation profiles", README)
    assert counts and all(int(n) == len(PROFILES) for n in counts), (counts, len(PROFILES))


def test_listed_options_exist():
    import argparse

    from ctk import runner

    options = set(re.findall(r"`(--(?:ctk|catalog|openapi|warehouse)[a-z-]*)", README))
    parser = argparse.ArgumentParser()
    runner.add_arguments(parser)
    known = {o for a in parser._actions for o in a.option_strings}
    assert options and options <= known, sorted(options - known)   # every option the README names, ctk run takes


def test_exit_code_table():
    from ctk.plugin import exits

    rows = dict(re.findall(r"^\| (\d) \| (.*?) \|$", README, re.M))
    assert rows[str(exits.EXIT_OK)].startswith("no MUST broken")
    assert rows[str(exits.EXIT_MUST_BROKEN)].startswith("a MUST broken")
    assert rows[str(exits.EXIT_INTERRUPTED)].startswith("interrupted")
    assert rows[str(exits.EXIT_USAGE)].startswith("usage error")
    assert rows[str(exits.EXIT_UNUSABLE_TARGET)].startswith("the target is unusable")


@pytest.mark.skipif(shutil.which("curl") is None, reason="the recipe waits with curl, which is not installed here")
def test_shell_recipe_runs_as_written(tmp_path):
    script = tmp_path / "ci.sh"
    script.write_text(_block("<!-- ci-recipe:shell -->"))
    bindir = Path(sys.executable).parent
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))},
           "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    # the recipe starts `ctk serve --port "$CATALOG_PORT"` as a user's CI does, so it takes a port number: when
    # another process took the one picked here before ctk serve bound it (its log says so, and the kit may have
    # run against that other server), the recipe runs again on another port, at most 3 times
    for _attempt in range(3):
        env["CATALOG_PORT"] = str(procs.closed_port())
        r = subprocess.run(["sh", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        log = tmp_path / "catalog.log"
        if not (log.exists() and procs.PORT_TAKEN.search(log.read_text(errors="replace"))):
            break
        shutil.rmtree(tmp_path / "reports", ignore_errors=True)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    reports = tmp_path / "reports"
    for name in ("junit.xml", "report.html", "conformance.json", "conformance.html"):
        assert (reports / name).is_file(), name
    data = json.loads((reports / "conformance.json").read_text())
    assert data["state"] == "complete" and not data["subset"] and data["counts"]["pass"] > 0
    assert data["counts"]["fail"] == 0
