"""The plugin against a live target: run namespace lifecycle (also after failures), reports, hanging target."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]

MAKES_MESS_AND_FAILS = """
import pytest
from ctk.core.verdicts import Verdict

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}

def test_make_mess_then_fail(ctk_client, ctk_namespace):
    c, ns = ctk_client, ctk_namespace
    assert c.request("POST", "namespaces", json={"namespace": [ns, "child"]}).status == 200
    assert c.request("POST", "namespaces", json={"namespace": [ns, "child", "grand"]}).status == 200
    assert c.request("POST", f"namespaces/{ns}/tables", json={"name": "t1", "schema": SCHEMA}).status == 200
    assert c.request("POST", f"namespaces/{ns}%1Fchild%1Fgrand/tables", json={"name": "t2", "schema": SCHEMA}).status == 200
    view = {"name": "v1", "schema": SCHEMA, "properties": {},
            "view-version": {"version-id": 1, "timestamp-ms": 1, "schema-id": 0, "summary": {},
                             "default-namespace": [ns],
                             "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}]}}
    assert c.request("POST", f"namespaces/{ns}%1Fchild/views", json=view).status == 200
    print("RUN-NAMESPACE", ns)
    assert False, "failing on purpose after creating things"

@pytest.mark.ctk
def test_verdict(ctk_context):
    return Verdict.ok("KEY-01", "fine")
"""


def test_namespace_created_and_dropped_after_failure(pytester: pytest.Pytester, reference_url, namespaces):
    pytester.makepyfile(test_mess=MAKES_MESS_AND_FAILS)
    before = namespaces(reference_url)
    result = pytester.runpytest("test_mess.py", "--catalog-url", reference_url, "-s", "-p", "no:html",
                                "--ctk-namespace-prefix", "kit")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    name = out.split("RUN-NAMESPACE ", 1)[1].split()[0]
    assert name.startswith("kit_") and name.endswith("_main")
    after = namespaces(reference_url)
    assert [name] not in after, f"run namespace {name} left behind: {after}"
    assert after == before  # the kit touched nothing else
    assert "cleanup problems" not in out


def test_reports_written(pytester: pytest.Pytester, reference_url):
    scen = pytester.path / "scenarios"
    scen.mkdir()
    shutil.copy(ROOT / "scenarios" / "create_namespace.yaml", scen / "create_namespace.yaml")
    result = pytester.runpytest("--catalog-url", reference_url, "--ctk-scenarios", str(scen), "scenarios",
                                "--ctk-reports", "out")
    result.assert_outcomes(passed=3)
    out = pytester.path / "out"
    for name in ("junit.xml", "report.html", "conformance.json", "conformance.html"):
        assert (out / name).is_file(), name
    junit = (out / "junit.xml").read_text()
    assert 'name="ctk.requirement" value="REPLAY-04"' in junit
    assert 'name="ctk.count.pass" value="3"' in junit  # suite statistics
    data = json.loads((out / "conformance.json").read_text())
    assert data["counts"]["pass"] == 3
    assert {r["requirement"] for r in data["results"]} == {"REPLAY-01", "REPLAY-02", "REPLAY-04"}
    out = result.stdout.str()
    assert "checks (3): 3 pass, 0 classified (pass), 0 fail" in out
    assert out.rstrip().splitlines()[-1].startswith("exit 0: ")      # the kit's summary ends the output


def test_hanging_target_fails_clearly_within_timeout(pytester: pytest.Pytester, hanging_url):
    pytester.makepyfile(test_hang="""
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_one(ctk_context):
    return Verdict.ok("KEY-01", "never reached")

@pytest.mark.ctk
def test_two(ctk_client):
    return Verdict.ok("KEY-02", "never reached")
""")
    t0 = time.monotonic()
    result = pytester.runpytest("test_hang.py", "--catalog-url", hanging_url, "--ctk-timeout", "1", "-p", "no:html")
    elapsed = time.monotonic() - t0
    assert result.ret == 6                       # unusable target: one early error, no check ran
    result.assert_outcomes()
    out = result.stdout.str()
    assert f"catalog at {hanging_url} did not answer GET /v1/config within the 1 s timeout" in out
    assert elapsed < 20, elapsed


def test_dead_target_fails_clearly(pytester: pytest.Pytester):
    pytester.makepyfile(test_dead="""
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_one(ctk_client):
    return Verdict.ok("KEY-01", "never reached")
""")
    result = pytester.runpytest("test_dead.py", "--catalog-url", "http://127.0.0.1:9", "--ctk-timeout", "1",
                                "-p", "no:html")
    assert result.ret == 6
    result.assert_outcomes()
    assert "catalog at http://127.0.0.1:9 is unreachable" in result.stdout.str()


def test_xdist_workers_use_separate_namespaces(pytester: pytest.Pytester, reference_url, namespaces):
    pytester.makepyfile(test_par="""
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.parametrize("i", range(4))
@pytest.mark.ctk
def test_ns(ctk_client, ctk_namespace, i):
    ex = ctk_client.request("POST", "namespaces", json={"namespace": [ctk_namespace, f"c{i}"]})
    assert ex.status == 200, ex.render()
    return Verdict.ok("KEY-01", ctk_namespace)
""")
    before = namespaces(reference_url)
    result = pytester.runpytest_subprocess("test_par.py", "--catalog-url", reference_url, "-n", "2",
                                           "-p", "no:html", "--ctk-reports", "rep", timeout=120)
    result.assert_outcomes(passed=4)
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    used = {r["message"] for r in data["results"]}
    assert len(data["results"]) == 4
    # one namespace per xdist worker (ids gw0, gw1, ...; xdist may replace a worker under load, hence not
    # literally gw0/gw1), never more than the two workers running at once
    workers = {n.rsplit("_", 1)[1] for n in used}
    assert all(re.fullmatch(r"gw\d+", w) for w in workers) and 1 <= len(workers) <= 2, used
    assert len({n.split("_")[1] for n in used}) == 1  # one run id shared by the workers
    assert namespaces(reference_url) == before
