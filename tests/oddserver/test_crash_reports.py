"""(e) A crashed check is a verdict `error` in conformance.json/html, counted in the overall and the exit code
(issue 15, item 6); a run against the odd server (409 without `type`) shows SCHEMA-01's finding in the report."""

from __future__ import annotations

import json

import odd
import pytest

from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings

CRASHING = """
import pytest
from ctk.checks.common import guarded
from ctk.core.verdicts import Verdict


@guarded("OCC-02", "race", needs_support=False, needs_endpoint=False)
def _crashing(run, ctx, endpoint):
    ctx.client.request("GET", "namespaces", label="the last exchange before the crash")
    raise ZeroDivisionError("division by zero inside the check")


@pytest.mark.ctk
def test_guarded_crash(ctk_context):
    return _crashing(ctk_context, None)


@pytest.mark.ctk
def test_occ_01_crash_outside_any_guard(ctk_client):
    ctk_client.request("GET", "namespaces", label="listed before the KeyError")
    return {}["metadata-location"]


@pytest.mark.ctk
def test_crash_naming_no_requirement():
    raise RuntimeError("nobody said which requirement")


from ctk.checks import concurrency


@pytest.mark.ctk
@pytest.mark.parametrize("name", ["check_transaction"])
def test_named_check_crash(name):
    raise OSError("disk gone")


@pytest.mark.ctk
def test_fine():
    return Verdict.ok("KEY-01", "ran")
"""

HANGING = """
import threading

import pytest

REQUIREMENT = "HIST-01"


@pytest.mark.ctk
@pytest.mark.timeout(2)
def test_hangs_past_its_backstop():
    threading.Event().wait(60)    # pytest-timeout's backstop ends it
"""


@pytest.fixture(scope="module")
def reference_url(tmp_path_factory):
    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path_factory.mktemp("wh")))) as srv:
        yield srv.url


def test_crashed_check_is_an_error_verdict_in_the_reports(pytester: pytest.Pytester, reference_url):
    pytester.makepyfile(test_crashing=CRASHING)
    result = pytester.runpytest_subprocess("test_crashing.py", "--catalog-url", reference_url, "-p", "no:html",
                                           "--ctk-reports", "rep", timeout=120)
    result.assert_outcomes(passed=1, failed=4)
    assert result.ret == 1
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    errors = {r["requirement"]: r for r in data["results"] if r["status"] == "error"}
    assert set(errors) == {"OCC-02", "OCC-01", "OCC-04", "(unknown)"}, data["results"]
    assert data["counts"]["error"] == 4 and data["counts"]["pass"] == 1
    assert "OSError: disk gone" in errors["OCC-04"]["message"]
    assert data["overall"] == "error" or (data["overall"] is None and data["subset"])   # a subset has none
    assert data["requirements"]["OCC-02"]["status"] == "error"
    g = errors["OCC-02"]
    assert "the check crashed (race): ZeroDivisionError: division by zero inside the check" in g["message"]
    assert "the last exchange before the crash" in g["message"]            # the last exchange, named
    assert g["exchanges"] and g["exchanges"][-1]["label"] == "the last exchange before the crash"
    assert "ZeroDivisionError" in g["details"]["traceback"]
    u = errors["OCC-01"]
    assert "KeyError: 'metadata-location'" in u["message"] and "listed before the KeyError" in u["message"]
    assert "RuntimeError: nobody said which requirement" in errors["(unknown)"]["message"]
    html = (pytester.path / "rep" / "conformance.html").read_text()
    assert "ZeroDivisionError" in html and "s-error" in html and ">ERROR<" in html
    out = result.stdout.str()
    assert "OCC-02 (MUST) ERROR" in out and "4 error" in out


def test_check_stopped_by_a_timeout_is_inconclusive_naming_the_limit(pytester: pytest.Pytester, reference_url):
    """A check that pytest-timeout stops (a limit the user set: the kit puts none on its checks) is not decided:
    inconclusive, naming the limit, never "ERROR: a check crashed" (a slow runner is no kit error, issue 36)."""
    pytester.makepyfile(test_hanging=HANGING)
    result = pytester.runpytest_subprocess("test_hanging.py", "--catalog-url", reference_url, "-p", "no:html",
                                           "--ctk-reports", "rep", timeout=120)
    result.assert_outcomes(skipped=1)
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    [verdict] = data["results"]
    assert verdict["requirement"] == "HIST-01" and verdict["status"] == "inconclusive", verdict
    assert "the timeout mark of the test (2 s)" in verdict["message"] and "Timeout" in verdict["message"]
    assert "--timeout 0" in verdict["needs"]
    assert data["overall"] != "error"


def test_the_kits_checks_carry_no_wall_clock(pytester: pytest.Pytester, reference_url):
    """Without a limit asked for, a ctk check gets pytest-timeout's 0 (none), whatever the ini's timeout says
    (the kit's own tests keep theirs)."""
    pytester.makepyfile(test_marks="""
import pytest

@pytest.mark.ctk
def test_a_check(request):
    from ctk.core.verdicts import Verdict
    assert request.node.get_closest_marker("timeout").args == (0,)
    return Verdict.ok("KEY-01", "ran")

def test_not_a_check(request):
    assert request.node.get_closest_marker("timeout") is None
""")
    pytester.makeini("[pytest]\ntimeout = 7\n")
    result = pytester.runpytest_subprocess("test_marks.py", "--catalog-url", reference_url, "-p", "no:html",
                                           "--ctk-reports", "rep", timeout=120)
    result.assert_outcomes(passed=2)


def test_suite_run_against_the_odd_server_reports_schema_finding_not_occ_failure(pytester: pytest.Pytester,
                                                                                  reference_url):
    """The built-in concurrency and schema suites through `pytest --catalog-url` on a catalog whose commit
    conflicts lack `type`: OCC-01/02 pass, SCHEMA-01 names the 409 body."""
    with odd.OddServer(reference_url, [odd.conflict_without_type()]) as server:
        result = pytester.runpytest_subprocess(
            "--catalog-url", server.url, "-p", "no:html", "--ctk-reports", "rep",
            "--pyargs", "ctk.suites.test_concurrency", "ctk.suites.test_schema",
            "-k", "requirements or race or recorded", timeout=300)
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    by = {}
    for r in data["results"]:
        by.setdefault(r["requirement"], []).append(r)
    assert by["OCC-01"] and all(r["status"] == "pass" for r in by["OCC-01"]), by["OCC-01"]
    assert all(r["status"] == "pass" for r in by["OCC-02"])
    [schema] = by["SCHEMA-01"]
    assert schema["status"] == "deviation" and "-> 409" in schema["message"]
    assert "'type' is a required property" in schema["message"]
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert data["requirements"]["OCC-01"]["status"] == "pass"


def test_schema_judges_every_xdist_workers_traffic(pytester: pytest.Pytester, reference_url):
    """Under xdist each worker validates its own traffic at its end; the controller adds one SCHEMA-01 verdict
    over all of it, so a 409 without `type` seen by any worker is in the report."""
    with odd.OddServer(reference_url, [odd.conflict_without_type()]) as server:
        result = pytester.runpytest_subprocess(
            "--catalog-url", server.url, "-p", "no:html", "--ctk-reports", "rep", "-n", "2",
            "--pyargs", "ctk.suites.test_concurrency", "ctk.suites.test_schema",
            "-k", "requirements or race or recorded", timeout=300)
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    [every] = [r for r in data["results"] if r["requirement"] == "SCHEMA-01" and r["behaviour"] == "all-traffic"]
    assert every["status"] == "deviation", every["message"]
    assert "-> 409" in every["message"] and "'type' is a required property" in every["message"]
    assert every["details"]["workers"] and all(w.startswith("gw") for w in every["details"]["workers"])
    assert every["nodeid"] == "ctk::SCHEMA-01[all traffic]"
    assert result.ret == 0, result.stdout.str()[-3000:]


def test_crashed_scenario_is_an_error_of_its_requirement(pytester: pytest.Pytester, reference_url):
    import shutil
    from pathlib import Path

    scen = pytester.path / "scen"
    scen.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "scenarios" / "create_namespace.yaml", scen / "one.yaml")
    pytester.makeconftest("""
import ctk.scenarios.runner as runner

def _broken(*args, **kwargs):
    raise RuntimeError("the scenario runner broke")

runner.run_scenario = _broken
""")
    result = pytester.runpytest_subprocess("--catalog-url", reference_url, "-p", "no:html", "--ctk-scenarios",
                                           str(scen), str(scen), "--ctk-reports", "rep", timeout=120)
    assert result.ret == 1
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    assert data["results"] and all(r["status"] == "error" for r in data["results"])
    assert {r["requirement"] for r in data["results"]} == {"REPLAY-01", "REPLAY-02", "REPLAY-04"}
    assert all("RuntimeError: the scenario runner broke" in r["message"] for r in data["results"])
