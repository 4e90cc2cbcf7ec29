"""Issue 19 items 8 and 7(d): leave nothing, and blame what was seen, on catalogs that name namespaces their own way.

A catalog that joins the levels of a nested namespace with '.' (`odd.dot_joined_namespaces`) answers 200 to
createNamespace [run, ctk_nesting_probe], then 404 to loading and to dropping it under its levels: each run left
one `<run>.ctk_nesting_probe` per worker, silently, and `ctk cleanup` did not find them (no marker, not a run
namespace's name). Now the probe removes it under the name the catalog lists, what cannot be removed is a
"leftover" in the run's reports, `ctk cleanup` finds namespaces of the kit's shape (also those whose marker
property the catalog dropped: listed, removed only with --include-unmarked), and "created 200, then 404" is a
SEM-02 finding (a catalog that refuses nested namespaces is unsupported, not failed)."""

from __future__ import annotations

import json

import httpx
import pytest
from odd import (OddServer, dot_joined_namespaces, drop_namespace_properties, refuse_nested_namespaces,
                 undeletable_namespaces)

from ctk.checks.discovery import check_nested_namespace_loadable
from ctk.cli import main
from ctk.core.requirements import status_if_broken
from ctk.plugin import namespace as nsmod


def _top(url: str) -> list[list[str]]:
    return httpx.get(f"{url}/v1/namespaces", timeout=10).json()["namespaces"]


def test_the_probe_removes_what_a_dot_joining_catalog_made(make_odd):
    rule = dot_joined_namespaces()
    ctx, odd = make_odd([rule])
    run = tuple(ctx.namespace)
    probe = nsmod.probe_nesting(ctx.client, run, "r1")
    # what such a catalog does: 200 to the create, 404 to the load and to the drop under the levels
    assert rule.hits == 1 and (probe.created, probe.loaded, probe.nested) == (200, 404, False)
    drops = [e for e in ctx.client.exchanges if e.method == "DELETE"]
    assert drops[0].status == 404 and drops[0].url.endswith(f"{run[0]}%1Fctk_nesting_probe")
    # what the kit does now: finds it as the catalog lists it, and drops it there
    assert probe.listed_as == [(f"{run[0]}.ctk_nesting_probe",)] and drops[-1].status == 204
    assert "the catalog lists it as" in probe.note and probe.leftovers == []
    assert [run[0] + ".ctk_nesting_probe"] not in _top(odd.url)


def test_what_cannot_be_removed_is_a_leftover(make_odd):
    ctx, odd = make_odd([dot_joined_namespaces(), undeletable_namespaces(r"\.ctk_nesting_probe$")])
    probe = nsmod.probe_nesting(ctx.client, tuple(ctx.namespace), "r2")
    assert len(probe.leftovers) == 1 and probe.leftovers[0].startswith("leftover: namespace")
    assert "ctk_nesting_probe" in probe.leftovers[0] and "403" in probe.leftovers[0]


ONE_CHECK = """
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_one(ctk_client):
    return Verdict.ok("KEY-01", "ran")
"""


def test_a_leftover_reaches_the_reports(pytester: pytest.Pytester, start_catalog):
    ctx = start_catalog(front=lambda up: OddServer(up, [dot_joined_namespaces(),
                                                        undeletable_namespaces(r"\.ctk_nesting_probe$")]),
                        control_api=False)
    url = ctx.test_front.url
    pytester.makepyfile(test_clean=ONE_CHECK)
    result = pytester.runpytest_subprocess("test_clean.py", "--catalog-url", url, "-p", "no:html", "--ctk-reports",
                                           "rep", timeout=180)
    assert result.ret == 0, result.stdout.str()[-3000:]
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    left = [p for p in data["cleanup_problems"] if p.startswith("leftover:")]
    assert len(left) == 1 and ".ctk_nesting_probe" in left[0], data["cleanup_problems"]
    assert "leftover: namespace" in (pytester.path / "rep" / "conformance.html").read_text()
    assert "cleanup problem" in result.stdout.str() and "ctk_nesting_probe" in result.stdout.str()


def test_cleanup_finds_joined_and_unmarked_namespaces(start_catalog, capsys):
    """`ctk cleanup` on a catalog that drops namespace properties: a run namespace and a probe left without the
    marker are listed as unmarked and kept; --include-unmarked removes them. One with the marker goes at once."""
    ctx = start_catalog(front=lambda up: OddServer(up, [drop_namespace_properties()]), control_api=False)
    url, upstream = ctx.test_front.url, ctx.test_front.upstream
    for ns, props in ((["ctk_dead0001_gw0"], {}), (["ctk_dead0001_gw0.ctk_nesting_probe"], {}),
                      (["ctk_dead0002_gw1.ctk_nesting_probe"], {"ctk.run-id": "dead0002"}),
                      (["ctk_dead0003_gw0"], {"ctk.run-id": "someone-else"}), (["mine"], {})):
        r = httpx.post(f"{upstream}/v1/namespaces", json={"namespace": ns, "properties": props}, timeout=10)
        assert r.status_code == 200, r.text
    assert main(["cleanup", "--catalog-url", url]) == 0
    out = capsys.readouterr().out
    assert "removing ctk_dead0002_gw1.ctk_nesting_probe (run dead0002)" in out
    assert "unmarked, kept ctk_dead0001_gw0 " in out and "unmarked, kept ctk_dead0001_gw0.ctk_nesting_probe" in out
    assert "--include-unmarked" in out and "removed 1 of 1 run namespaces (read back)" in out
    names = {ns[0] for ns in _top(url)}
    assert {"ctk_dead0001_gw0", "ctk_dead0001_gw0.ctk_nesting_probe", "ctk_dead0003_gw0", "mine"} <= names
    assert "ctk_dead0002_gw1.ctk_nesting_probe" not in names
    assert main(["cleanup", "--catalog-url", url, "--include-unmarked"]) == 0
    names = {ns[0] for ns in _top(url)}
    assert names >= {"ctk_dead0003_gw0", "mine"} and not names & {"ctk_dead0001_gw0",
                                                                  "ctk_dead0001_gw0.ctk_nesting_probe"}


@pytest.mark.parametrize("rules,status,classification", [
    ([dot_joined_namespaces], status_if_broken("SEM-02"), "created, not loadable"),
    ([refuse_nested_namespaces], "unsupported", None),
    ([], "pass", "loads back"),
])
def test_nested_namespace_created_but_not_loadable_is_a_finding(make_odd, rules, status, classification):
    ctx, _ = make_odd([r() for r in rules])
    [v] = check_nested_namespace_loadable(ctx)
    assert v.requirement == "SEM-02" and v.status.value == status, (v.status, v.message)
    assert v.classification == classification, v.classification
    if status != "pass" and classification:
        assert "answered 200, loading it answered 404" in v.message and "lists it as" in v.message
        assert v.exchanges, "the create and the load are the evidence"
    assert [n for n in _top(ctx.client.target.url) if "nesting_probe" in ".".join(n)] == []
