"""The composite GitHub Action (action.yml): its inputs are documented and reach .ci/action.sh, whose steps run
here as the action runs them - the kit against a catalog already up (the action starts nothing), the reports in
the `reports` input's directory, the exit code decided by `fail-on` and written to $GITHUB_OUTPUT."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import procs
import yaml

REPO = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
SCRIPT = REPO / ".ci" / "action.sh"


def test_inputs_are_documented_and_reach_the_script():
    inputs = ACTION["inputs"]
    assert inputs["catalog-url"]["required"] is True
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("<!-- action -->"):]
    for name, spec in inputs.items():
        assert spec.get("description"), name
        assert f"`{name}`" in section, f"README's action section does not document the input {name}"
    run, upload = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite" and ".ci/action.sh" in run["run"]
    # every input but the artifact's name goes to the script, under the name the script reads
    assert {v.strip("${} ").removeprefix("inputs.") for v in run["env"].values()} == set(inputs) - {"artifact-name"}
    script = SCRIPT.read_text(encoding="utf-8")
    assert all(f"${{{k}" in script for k in run["env"]), run["env"]
    # the reports are uploaded also when the run failed; the job fails by the run step's exit code
    assert upload["if"] == "always()" and upload["uses"].startswith("actions/upload-artifact@")
    assert upload["with"]["path"] == "${{ inputs.reports }}" and "continue-on-error" not in run


def _action(tmp_path: Path, url: str, fail_on: str, name: str) -> tuple[int, str, Path]:
    out = tmp_path / f"{name}.output"
    env = {**os.environ, "CTK_CATALOG_URL": url, "CTK_FAIL_ON": fail_on, "CTK_REPORTS": str(tmp_path / name),
           "CTK_OPTIONS": "--workers 0 -- -k test_keys -p no:cacheprovider", "CTK_INSTALL": "none",
           "GITHUB_OUTPUT": str(out), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr, out


def test_script_runs_the_kit_and_fails_by_fail_on(tmp_path):
    with procs.serve("--deviation", "accept-repeated-key") as catalog:      # KEY-02: a deviation, not a fail
        code, log, out = _action(tmp_path, catalog.url, "deviation", "strict")
        assert code == 1, log[-3000:]
        assert out.read_text().splitlines() == ["exit-code=1", f"reports={tmp_path / 'strict'}"]
        assert (tmp_path / "strict" / "conformance.json").exists() and (tmp_path / "strict" / "junit.xml").exists()
        assert "--ctk-fail-on counted: " in log, log[-3000:]
        code, log, out = _action(tmp_path, catalog.url, "", "lenient")
        assert code == 0, log[-3000:]
        assert out.read_text().splitlines()[0] == "exit-code=0"


def test_script_says_what_is_missing(tmp_path):
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "CTK_CATALOG_URL"})
    assert done.returncode != 0 and "CTK_CATALOG_URL" in done.stderr, done.stderr


def test_known_gaps_and_certify_inputs_reach_the_kit(tmp_path):
    """The `known-gaps` input is the kit's --ctk-known-gaps (a file naming no requirement of the kit: the kit's
    usage error, exit 4, with the line), `certify: true` its --ctk-certify; nothing is contacted before that."""
    gaps = tmp_path / "ctk-known-gaps.yaml"
    gaps.write_text("gaps:\n  - requirement: NOPE-01\n    reason: x\n", encoding="utf-8")
    env = {**os.environ, "CTK_CATALOG_URL": "http://127.0.0.1:9", "CTK_KNOWN_GAPS": str(gaps), "CTK_CERTIFY": "true",
           "CTK_REPORTS": str(tmp_path / "r"), "CTK_INSTALL": "none", "CTK_OPTIONS": "--workers 0",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 4, out[-3000:]
    assert f"--ctk-known-gaps {gaps} --ctk-certify" in out and f"{gaps}:2: requirement 'NOPE-01'" in out, out[-3000:]
