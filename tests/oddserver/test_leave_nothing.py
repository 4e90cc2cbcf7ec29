"""Issue 30 item 4: leave nothing on every catalog, read back after every delete, say what was left.

Three naming schemes seen on small catalogs, each with a DELETE of a namespace the catalog does not have answered
200 (`odd.delete_missing_namespace_ok`): levels joined with '.' into one name (`odd.dot_joined_namespaces`),
nested namespaces created but not loadable (`odd.nested_namespaces_unloadable`), and '.' read as the level
separator in a URL without advertising it (`odd.dot_path_namespaces`). The kit trusted the 200 of its DELETE:
every run left its nesting probe and said nothing, and `ctk cleanup` printed "removed" for what it had not
removed. Now every delete is read back (listing and load), the namespace is dropped under every name the catalog
lists it by, addressed every way a catalog may read it, and only what is really gone is reported as removed."""

from __future__ import annotations

import re

import httpx
import pytest
from odd import (Answer, OddServer, Req, Rule, delete_missing_namespace_ok, dot_joined_namespaces, dot_path_namespaces,
                 ignore_namespace_drops, nested_namespaces_unloadable)

from ctk.catalog.facade import Budget, drop_tree, pages
from ctk.cli import main
from ctk.plugin import namespace as nsmod

SCHEMES = {
    "dot-joined": lambda: [dot_joined_namespaces(), delete_missing_namespace_ok()],
    "nested-unloadable": lambda: [nested_namespaces_unloadable(), delete_missing_namespace_ok()],
    "dot-path": lambda: [dot_path_namespaces(), delete_missing_namespace_ok()],
}


def everything(upstream: str) -> list[tuple[str, ...]]:
    """Every namespace the catalog behind the odd server has (read from the reference directly, two levels)."""
    top = [tuple(n) for n in httpx.get(f"{upstream}/v1/namespaces", timeout=10).json()["namespaces"]]
    out = list(top)
    for ns in top:
        r = httpx.get(f"{upstream}/v1/namespaces", params={"parent": "\x1f".join(ns)}, timeout=10)
        out += [tuple(n) for n in r.json()["namespaces"]]
    return out


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_the_probe_leaves_nothing_and_reads_back(make_odd, scheme):
    rules = SCHEMES[scheme]()
    ctx, odd = make_odd(rules)
    run = tuple(ctx.namespace)
    probe = nsmod.probe_nesting(ctx.client, run, "r1")
    assert rules[0].hits >= 1 and probe.created == 200 and not probe.nested, probe.note
    left = [n for n in everything(odd.upstream) if "ctk_nesting_probe" in ".".join(n)]
    assert left == [] and probe.leftovers == [], (left, probe.leftovers)
    reads = [e for e in ctx.client.exchanges if e.label == "cleanup: read back"]
    assert reads, "every delete is read back"


def test_what_a_200_did_not_remove_is_a_leftover(make_odd):
    """A DELETE answered 200 that drops nothing: the probe is named as left, not taken for gone."""
    ctx, odd = make_odd([dot_joined_namespaces(), ignore_namespace_drops(r"ctk_nesting_probe$")])
    probe = nsmod.probe_nesting(ctx.client, tuple(ctx.namespace), "r1")
    assert len(probe.leftovers) == 1 and "ctk_nesting_probe" in probe.leftovers[0], probe.leftovers
    assert "leftover: namespace" in probe.leftovers[0]
    assert probe.leftovers[0].endswith("(made by the nested-namespace probe); remove it by hand or with ctk cleanup")


def test_every_probe_says_what_it_left_in_one_form(make_odd):
    """The names probe's tables and the nesting probe's namespace, when a drop answered 204 removes nothing, are
    noted on the run's placement in the same words: what, made by which probe, how to remove it."""
    from odd import ignore_table_drops

    from ctk.checks.semantics.probes import names_with_dot_or_slash, nested_namespaces

    ctx, _ = make_odd([ignore_namespace_drops(r"child$"), ignore_table_drops()])
    from ctk.client.placement import Placement

    ctx.client.placement = Placement(tuple(ctx.namespace))       # no session probe: the check probes itself
    assert nested_namespaces(ctx).supported is True and names_with_dot_or_slash(ctx).supported is True
    left = ctx.client.placement.left
    assert any("child" in x and "(made by the nested-namespace probe)" in x for x in left), left
    assert any("ctk.dot" in x and "(made by the names probe)" in x for x in left), left
    assert all(x.startswith("leftover: ") and x.endswith("; remove it by hand or with ctk cleanup") for x in left), left


def test_a_nested_namespace_loaded_under_one_joined_level_is_not_nesting(make_odd):
    """Issue 34 item 5: the probe passed although the nested name came back as one level ("a.b")."""
    from odd import one_level_nested

    from ctk.checks.semantics.probes import nested_namespaces

    rule = one_level_nested()
    ctx, _ = make_odd([rule])
    probe = nsmod.probe_nesting(ctx.client, tuple(ctx.namespace), "r1")
    assert rule.hits >= 1 and probe.loaded == 200, probe
    assert probe.nested is False and "not the levels" in probe.note, probe.note
    assert not probe.leftovers, probe.leftovers
    known = nested_namespaces(ctx)
    assert known.supported is False and "one level, not nested" in known.why, known


class nested_load_unavailable(Rule):
    """Loading a namespace whose path holds a nested name (levels joined by %1F) answers 503."""

    def before(self, req: Req) -> Answer | None:
        if req.method == "GET" and re.search(r"/namespaces/[^/?]*%1f[^/?]*$", req.path, flags=re.I):
            self.hit()
            return Answer.of(503, {"error": {"message": "unavailable", "type": "ServiceUnavailableException",
                                             "code": 503}})
        return None


def test_a_nested_namespace_whose_load_answers_5xx_leaves_nesting_undecided(make_odd):
    """The semantic probe's fallback reads the probe as the session's (`probe_nesting`): a load answered 503
    tells nothing, so nesting is undecided (None), not "not nested"."""
    from ctk.checks.semantics.probes import nested_namespaces

    rule = nested_load_unavailable()
    ctx, _ = make_odd([rule])
    known = nested_namespaces(ctx)
    assert rule.hits >= 1, "the odd rule never answered"
    assert known.supported is None and "503" in known.why, known


def _seed(url: str, run: str, run_id: str, table: bool = True) -> None:
    """What a run of an older kit left through the odd server: its run namespace (marked), the nesting probe
    below it (marked), a table."""
    for levels in ([run], [run, "ctk_nesting_probe"]):
        r = httpx.post(f"{url}/v1/namespaces", json={"namespace": levels, "properties": {"ctk.run-id": run_id}},
                       timeout=10)
        assert r.status_code == 200, r.text
    if table:
        r = httpx.post(f"{url}/v1/namespaces/{run}/tables", timeout=10, json={
            "name": "t", "schema": {"type": "struct", "schema-id": 0,
                                    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}})
        assert r.status_code == 200, r.text


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_ctk_cleanup_removes_everything_and_reads_it_back(start_catalog, capsys, scheme):
    ctx = start_catalog(front=lambda up: OddServer(up, SCHEMES[scheme]()), control_api=False)
    url, upstream = ctx.test_front.url, ctx.test_front.upstream
    _seed(url, "ctk_dead0001_gw0", "dead0001")
    _seed(url, "ctk_dead0002_gw1", "dead0002", table=False)
    for ns, props in ((["ctk_dead0003_gw0"], {"ctk.run-id": "someone-else"}), (["mine"], {})):
        assert httpx.post(f"{upstream}/v1/namespaces", json={"namespace": ns, "properties": props},
                          timeout=10).status_code == 200
    assert main(["cleanup", "--catalog-url", url, "--include-unmarked"]) == 0
    out = capsys.readouterr()
    left = [n for n in everything(upstream) if re.search("dead000[12]", ".".join(n))]
    assert left == [], (left, out.out, out.err)
    m = re.search(r"removed (\d+) of (\d+) run namespaces \(read back\)", out.out)
    assert m and m.group(1) == m.group(2) and int(m.group(1)) >= 2, out.out
    assert "not removed" not in out.err, out.err
    assert {("ctk_dead0003_gw0",), ("mine",)} <= set(everything(upstream))


def test_ctk_cleanup_reports_only_what_is_gone(start_catalog, capsys):
    """A catalog that answers 200 to dropping a namespace and keeps it: "removed 0", the namespace named, exit 1."""
    ctx = start_catalog(front=lambda up: OddServer(up, [ignore_namespace_drops(r"ctk_dead0001_gw0$")]),
                        control_api=False)
    url = ctx.test_front.url
    _seed(url, "ctk_dead0001_gw0", "dead0001")
    assert main(["cleanup", "--catalog-url", url]) == 1
    out = capsys.readouterr()
    assert "removed 0 of 1 run namespaces (read back)" in out.out, out.out
    assert "still listed after removal: ctk_dead0001_gw0" in out.err, out.err


def test_the_cleanup_budget_counts_requests(make_odd):
    ctx, odd = make_odd([])
    root = tuple(ctx.namespace) + ("tree",)
    httpx.post(f"{odd.upstream}/v1/namespaces", json={"namespace": list(root)}, timeout=10)
    budget = Budget(3)
    problems = drop_tree(ctx.client, root, budget=budget)
    assert budget.left == 0 and any("cleanup budget of 3 requests used up" in p for p in problems), problems
    assert drop_tree(ctx.client, root) == []
    items, _ = pages(ctx.client, "namespaces", "namespaces", "read", {"parent": ctx.namespace[0]})
    assert items == []


def test_what_a_worker_left_is_said_in_the_verdict_block(capsys):
    """Under xdist the controller has no run namespace: the workers' cleanup problems (reached through the
    collector, as in conformance.json) are said in the terminal too, not only in the JSON."""
    from types import SimpleNamespace

    import pytest as _pytest

    from ctk.plugin.options import CtkOptions
    from ctk.plugin.reports import FinalSummary, VerdictCollector

    c = VerdictCollector(CtkOptions())
    c.cleanup_problems = ["leftover: namespace 'ctk_x_gw1.ctk_nesting_probe' not removed: still listed"]
    c.build()
    config = SimpleNamespace(stash=_pytest.Stash(), pluginmanager=SimpleNamespace(get_plugin=lambda name: None))
    FinalSummary(config, c).write(0)
    out = capsys.readouterr().out
    assert "cleanup problem: leftover: namespace 'ctk_x_gw1.ctk_nesting_probe'" in out, out


class joined_listing_lenient_load(Rule):
    """A catalog that lists a nested namespace at the top level by its levels joined with '.', answers a load of
    that joined name 200 with no properties (whatever the name), and a DELETE of it 200 without dropping
    anything: the nested entry, with its properties, is only reachable under its levels."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    @staticmethod
    def _joined(req: Req) -> str | None:
        m = re.search(r"/namespaces/([^/?%]+\.[^/?%]+)$", req.path)
        return m.group(1) if m else None

    def before(self, req: Req) -> Answer | None:
        name = self._joined(req)
        if name and req.method == "GET":
            self.hit()
            return Answer.of(200, {"namespace": [name], "properties": {}})
        if name and req.method == "DELETE":
            self.hit()
            return Answer(200, [], b"")
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("GET", r"/namespaces$") and "parent=" not in req.query and answer.status == 200:
            body = answer.json() or {}
            extra = []
            for ns in body.get("namespaces") or []:
                r = httpx.get(f"{self.upstream}{req.path}", params={"parent": "\x1f".join(ns)}, timeout=10)
                extra += [[".".join(child)] for child in (r.json() or {}).get("namespaces") or []]
            if extra:
                self.hit()
                return Answer.of(200, {**body, "namespaces": body["namespaces"] + extra})
        return None


def test_ctk_cleanup_reads_the_marker_on_the_nested_entry(start_catalog, capsys):
    """The probe is listed as 'run.ctk_nesting_probe', which loads without properties: the marker is on the
    nested entry. It is the kit's (not "unmarked"), and it goes, read back."""
    rules: list = []
    ctx = start_catalog(front=lambda up: OddServer(up, rules.append(joined_listing_lenient_load(up)) or rules),
                        control_api=False)
    url, upstream = ctx.test_front.url, ctx.test_front.upstream
    _seed(url, "ctk_dead0001_gw0", "dead0001", table=False)
    assert main(["cleanup", "--catalog-url", url]) == 0
    out = capsys.readouterr()
    assert rules[0].hits >= 1
    assert "removing ctk_dead0001_gw0.ctk_nesting_probe (run dead0001)" in out.out, out.out
    assert "unmarked" not in out.out and "not removed" not in out.err, (out.out, out.err)
    assert [n for n in everything(upstream) if "dead0001" in ".".join(n)] == []


def test_what_was_left_is_in_junit_too():
    from ctk.plugin.options import CtkOptions
    from ctk.plugin.reports import VerdictCollector
    from ctk.reporting.junit import statistics

    c = VerdictCollector(CtkOptions())
    c.cleanup_problems = ["leftover: namespace 'ctk_x_gw0.ctk_nesting_probe' not removed: still listed"]
    pairs = dict(statistics(c.build()))
    assert pairs["ctk.cleanup_problem.1"] == c.cleanup_problems[0]


def test_a_cleanup_budget_is_a_count_of_requests():
    with pytest.raises(ValueError, match="number of requests >= 0"):
        Budget(-1)
    b = Budget(1)
    assert b.take() and not b.take() and b.used_up == "cleanup budget of 1 requests used up"


ONE_CHECK = """
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_one(ctk_client):
    return Verdict.ok("KEY-01", "ran")
"""


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_a_run_leaves_nothing(tmp_path, start_catalog, scheme):
    """What was seen: every run left its nesting probes and said nothing. A whole run on each scheme now leaves
    no namespace of the kit, and reports no cleanup problem (there is none). (A plain subprocess, not pytester:
    pytester drops the modules the in-process catalog imported during the test.)"""
    import json
    import subprocess
    import sys

    ctx = start_catalog(front=lambda up: OddServer(up, SCHEMES[scheme]()), control_api=False)
    url, upstream = ctx.test_front.url, ctx.test_front.upstream
    before = set(everything(upstream))
    (tmp_path / "test_clean.py").write_text(ONE_CHECK)
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_clean.py",
                             "--catalog-url", url, "-p", "no:html", "--ctk-reports", "rep"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-3000:]
    assert set(everything(upstream)) == before, set(everything(upstream)) - before
    data = json.loads((tmp_path / "rep" / "conformance.json").read_text())
    assert data["cleanup_problems"] == [] and "cleanup problem" not in result.stdout
