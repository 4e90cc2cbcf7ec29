"""The view checks of the catalog-semantics family (VIEW-01..VIEW-08): each passes on the reference catalog and on
a catalog that does not serve views they are not applicable; every test of ViewCatalogTests is covered (the
listing ones by LIST-03, dropNonEmptyNamespace by NS-07); the area's deviation profile
(view-replace-keeps-old-version) breaks VIEW-06 and nothing else of the family; and the name-clash check fails on
a catalog that lets a view take a table's name."""

from __future__ import annotations

from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core import rck
from ctk.core.requirements import REQUIREMENTS
from ctk.core.verdicts import Status


def _ours():
    return [c for c in semantic_checks() if c.area == "views"]


def _check(name):
    return next(c for c in semantic_checks() if c.name == name)


def test_every_view_check_passes_on_the_reference(make_ctx):
    ctx = make_ctx()
    out = {c.name: run_semantic(ctx, c) for c in _ours()}
    assert {c.requirement for c in _ours()} == {r for r, q in REQUIREMENTS.items() if q.area == "views"}
    bad = {n: [(v.status.value, v.message[:600]) for v in vs] for n, vs in out.items()
           if [v.status for v in vs] != [Status.PASS]}
    assert not bad, bad
    assert all(vs[0].exchanges for vs in out.values())     # each pass rests on requests it sent
    # the baselines of the five view mutations
    assert {c.operation for c in _ours() if c.baseline} == {"createView", "replaceView", "dropView", "renameView",
                                                             "registerView"}


def test_every_view_catalog_test_is_covered_by_the_views_area_or_the_one_named():
    elsewhere = {"dropNonEmptyNamespace": "NS-07", "listViews": "LIST-03", "listViewsInEmptyNamespace": "LIST-03",
                 "listViewsAndTables": "LIST-03"}
    ours = {t.split(".", 1)[1] for c in _ours() for t in c.rck if t.startswith("ViewCatalogTests.")}
    assert ours == set(rck.VIEW_CATALOG_TESTS) - set(elsewhere)


def test_not_applicable_without_view_endpoints(make_ctx):
    """A catalog whose /v1/config lists no view endpoint: every view check is unsupported, none sends a view
    request."""
    from ctk.client.discovery import Discovery

    ctx = make_ctx()
    ctx.discovery = Discovery(config={}, endpoints={"GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces"})
    out = [v for c in _ours() for v in run_semantic(ctx, c)]
    assert {v.status for v in out} == {Status.UNSUPPORTED}
    assert not [e for v in out for e in v.exchanges if "/views" in e["url"]]


def test_the_deviation_breaks_exactly_view06_of_the_family(make_ctx):
    """view-replace-keeps-old-version answers replaceView 200 but leaves the old version current: VIEW-06 fails
    (the kit's MUST: the acknowledged change is not what the next read shows), every other semantic check holds."""
    from ctk.reference.deviations import PROFILES

    assert PROFILES["view-replace-keeps-old-version"].catches == ("VIEW-06",)
    ctx = make_ctx(deviation="view-replace-keeps-old-version")
    out = [v for c in semantic_checks() for v in run_semantic(ctx, c)]
    broken = {v.requirement for v in out if v.status in (Status.FAIL, Status.DEVIATION, Status.ERROR)}
    assert broken == {"VIEW-06"}, [(v.requirement, v.status.value, v.message[:300]) for v in out
                                   if v.requirement in broken]
    [base] = [v for v in out if v.details.get("check") == "replace-view-version"]
    assert base.status is Status.FAIL and "current version is still" in base.message


def test_a_view_taking_a_tables_name_fails(make_ctx, monkeypatch):
    """A catalog whose createView ignores a table of that name (view-name-clash-allowed): VIEW-03 fails, since a
    view now loads beside the table."""
    from ctk.reference import store, views

    def lenient(conn, kind, ns, name, location, overwrite=False):
        if kind == "view" and store.name_taken(conn, ns, name) == "table":
            store.insert_pointer(conn, "view", ns, name, location)
            return
        real(conn, kind, ns, name, location, overwrite)

    real = views.take_name
    monkeypatch.setattr(views, "take_name", lenient)
    ctx = make_ctx()
    [v] = run_semantic(ctx, _check("view-onto-table-name"))
    assert v.status is Status.FAIL and "now loads beside the table" in v.message
