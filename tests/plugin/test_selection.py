"""Issue 29 item 3(a): requirement ids, endpoints and behaviours select the kit's checks (-k, --ctk-requirement),
and `ctk list` prints the checks with their ids. Collection only: no catalog is started."""

from __future__ import annotations

import re
import subprocess
import sys

from ctk.core.requirements import REQUIREMENTS


def _collect(tmp_path, *args: str) -> tuple[int, list[str], str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--ctk", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "--noconftest", "--ctk-reports", str(tmp_path / "reports"), *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    return done.returncode, ids, done.stdout + done.stderr


def test_k_selects_by_requirement_id_endpoint_and_behaviour(tmp_path):
    code, ids, out = _collect(tmp_path, "-k", "REPLAY-01")
    assert code == 0 and ids, out[-2000:]
    assert all("finalized-duplicate" in i or "finalized_duplicate" in i for i in ids), ids
    assert any("createTable-finalized-duplicate" in i for i in ids)
    # '_' for '-' selects the same (for shells and pytest versions that do not take '-' in a -k identifier)
    assert _collect(tmp_path, "-k", "REPLAY_01")[1] == ids
    code, ids, out = _collect(tmp_path, "-k", "INFLIGHT-02 and createTable")
    assert ids == ["test_idempotency.py::test_idempotency[createTable-in-flight-duplicate]"], out[-2000:]
    # the catalog-semantics family is selected the same way, from each item's own ids (nothing hard-coded)
    ns = [r for r in REQUIREMENTS if r.startswith("NS-")]
    if ns:
        code, ids, out = _collect(tmp_path, "-k", ns[0])
        assert len(ids) == 1 and ns[0] in ids[0], out[-2000:]


def test_ctk_requirement_option_and_its_usage_error(tmp_path):
    code, ids, out = _collect(tmp_path, "--ctk-requirement", "replay-02,KEY_01")
    assert code == 0 and ids, out[-2000:]
    assert any("malformed-key" in i for i in ids) and any("terminal-4xx-replayed" in i for i in ids)
    assert not any("in-flight" in i for i in ids)
    code, ids, out = _collect(tmp_path, "--ctk-requirement", "REPLAY-99")
    assert code == 4 and "unknown requirement 'REPLAY-99'" in out, (code, out[-2000:])


def test_ctk_list_prints_each_check_with_its_requirement_ids(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ctk", "list", "-k", "REPLAY-01 and createTable"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:]]
    assert rows and all(re.search(r"\bREPLAY-01\b", r[0]) for r in rows), done.stdout
    assert ["REPLAY-01,REPLAY-05", "createTable", "finalized-duplicate"] in [r[:3] for r in rows], done.stdout
    assert not (tmp_path / "reports").exists()     # listing writes no reports
    whole = subprocess.run([sys.executable, "-m", "ctk", "list"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    listed = {rid for line in whole.stdout.splitlines()[1:] for rid in line.split()[0].split(",")}
    assert {"INFLIGHT-01", "INFLIGHT-02", "KEY-01", "DISC-01", "GEN-01", "SCHEMA-01"} <= listed, whole.stdout[-2000:]


def test_ctk_list_names_a_semantic_checks_endpoint_and_behaviour(tmp_path):
    """Issue 35: each catalog-semantics check judges one operation, in its area's column: `ctk list` shows both
    (not "-"), and -k selects it by that operation."""
    from ctk.checks.semantics import semantic_checks

    done = subprocess.run([sys.executable, "-m", "ctk", "list", "-k", "test_semantics"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    rows = {line.split()[-1]: line.split()[1:3] for line in done.stdout.splitlines()[1:]}
    for c in semantic_checks():
        assert rows[f"test_semantics.py::test_semantics[{c.id}]"] == [c.operation, c.behaviour.value], c.id
    code, ids, out = _collect(tmp_path, "-k", "test_semantics and dropNamespace")
    assert ids and all(any(c.id in i and c.operation == "dropNamespace" or c.id in i and "dropNamespace" in c.uses
                               for c in semantic_checks()) for i in ids), ids
