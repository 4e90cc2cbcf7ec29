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
    """Every option the README names is in the one table (ctk run and pytest take it), and the README's Options
    section names every option of the table, in the group `--help` shows it in."""
    from ctk.plugin.options import GROUPS, OPTIONS

    named = set(re.findall(r"`(--(?:ctk|catalog|openapi|warehouse|workers)[a-z-]*)", README))
    flags = {o.flag for o in OPTIONS}
    assert named and named <= flags, sorted(named - flags)
    section = README[README.index("\n## Options\n"):README.index("\n### Fixtures for your own checks")]
    for o in OPTIONS:
        title = GROUPS[o.group]
        line = re.search(rf"^- \*\*{re.escape(title)}\*\*:(.*?)(?=^- |^\S)", section, re.M | re.S)
        assert line and f"`{o.flag}" in line.group(1), (o.flag, title)


def _commands(block: str) -> list[list[str]]:
    """The `ctk ...` commands of a shell block: continuation lines joined, redirections and `&` dropped."""
    import shlex

    out = []
    for line in block.replace("\\\n", " ").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("ctk "):
            words = shlex.split(line)
            cut = next((i for i, w in enumerate(words) if w in (">", "2>&1", "&", "&&", "|")), len(words))
            out.append(words[1:cut])
    return out


def test_db_link_recipe_parses():
    """The recommended CI setup's commands (ctk interposer in front of the database, the catalog, ctk run with
    --ctk-db-link) use real options: each parses with ctk's own parser, and the run's --ctk-db-link names the
    interposer's proxy and control API."""
    from ctk.cli import build_parser

    commands = _commands(_block("<!-- ci-recipe:db-link -->"))
    assert [c[0] for c in commands] == ["interposer", "serve", "run"]
    parsed = {c[0]: build_parser(only=c[0]).parse_args(c) for c in commands}
    proxy = parsed["interposer"]
    assert parsed["run"].ctk_db_link == f"http://{proxy.api}/proxies/{proxy.name}"
    assert proxy.listen.rsplit(":", 1)[1] in parsed["serve"].database_url
    assert parsed["run"].ctk_fail_on == "ci"


def test_exit_code_table():
    from ctk.plugin import exits

    rows = dict(re.findall(r"^\| (\d) \| (.*?) \|$", README, re.M))
    assert rows[str(exits.EXIT_OK)].startswith("no MUST broken")
    assert rows[str(exits.EXIT_MUST_BROKEN)].startswith("a MUST broken")
    assert rows[str(exits.EXIT_INTERRUPTED)].startswith("interrupted")
    assert rows[str(exits.EXIT_USAGE)].startswith("usage error")
    assert rows[str(exits.EXIT_UNUSABLE_TARGET)].startswith("the target is unusable")
    assert rows[str(exits.EXIT_MUST_UNDECIDED)].startswith("no MUST broken, but a MUST left undecided")
    assert "docs/verdicts.md" in README


def test_fresh_machine_commands_first():
    """The two fresh-machine commands open the README, each saying what it is; .ci/run runs the test one."""
    first = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    assert README.index(first) < README.index("\n## ")                    # before any section
    lines = [ln for ln in first.splitlines() if not ln.startswith(" ")]
    assert [ln.split("#")[0].split() [-1] for ln in lines] == ["kit", "tests"]
    assert "THE KIT:" in lines[0] and "THE KIT'S OWN TESTS:" in lines[1]
    # PEP 668 systems (Debian 12+) refuse pip into the system Python: nox goes into a virtualenv first
    for line in lines:
        command = line.split("#")[0]
        assert command.startswith("python3 -m venv .venv && .venv/bin/pip install nox && .venv/bin/nox "), line
    ci = (REPO / ".ci" / "run").read_text()
    assert "nox -s tests" in ci and "python3 -m venv .venv" in ci
    assert not re.search(r"^\s*(python3 -m )?pip3? install", ci, re.M), "the system Python's pip: refused by PEP 668"
    assert " -q" not in ci          # a first install takes minutes: pip says what it does


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


def test_requirement_counts_are_the_registry_s():
    """Issue 35 item 5: every "of N requirements" the README states is the registry's count (it said 37 where the
    pages listed 83)."""
    from ctk.core.requirements import REQUIREMENTS

    counts = re.findall(r"\bof (\d+) requirements\b", README)
    assert counts and all(int(n) == len(REQUIREMENTS) for n in counts), (counts, len(REQUIREMENTS))
