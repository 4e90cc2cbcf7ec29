"""The table and listing checks of the catalog-semantics family (TBL-01..TBL-11, LIST-01..LIST-03): each passes
on the reference catalog; the deviation profile of the area (missing-metadata-5xx) breaks TBL-05 and nothing else
of the family; and checks fail when the state they read back is broken."""

from __future__ import annotations

import pytest

from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core.requirements import REQUIREMENTS
from ctk.core.verdicts import Status

AREA = ("TBL-", "LIST-")


def _ours():
    return [c for c in semantic_checks() if c.requirement.startswith(AREA)]


def _run(ctx, checks):
    return {c.name: run_semantic(ctx, c) for c in checks}


def test_every_table_and_listing_check_passes_on_the_reference(make_ctx):
    ctx = make_ctx()
    out = _run(ctx, _ours())
    reqs = {c.requirement for c in _ours()}
    assert reqs == {r for r in REQUIREMENTS if r.startswith(AREA)}      # every one of the registry has a check
    bad = {n: [(v.status.value, v.message[:600]) for v in vs] for n, vs in out.items()
           if [v.status for v in vs] != [Status.PASS]}
    assert not bad, bad
    # each judged something: a pass names what it saw
    assert all(vs[0].exchanges for vs in out.values())


def test_the_deviation_breaks_exactly_tbl05_of_the_family(make_ctx):
    """missing-metadata-5xx answers 500 to loadTable of a table whose metadata file is gone: TBL-05 deviates
    (a SHOULD of the compatibility kit) and every other semantic check still passes."""
    from ctk.reference.deviations import PROFILES

    assert PROFILES["missing-metadata-5xx"].catches == ("TBL-05",)
    ctx = make_ctx(deviation="missing-metadata-5xx")
    out = [v for c in semantic_checks() for v in run_semantic(ctx, c)]
    broken = {v.requirement for v in out if v.status in (Status.FAIL, Status.DEVIATION, Status.ERROR)}
    assert broken == {"TBL-05"}, [(v.requirement, v.status.value, v.message[:300]) for v in out
                                  if v.requirement in broken]
    [v] = [v for v in out if v.requirement == "TBL-05"]
    assert v.status is Status.DEVIATION and "500" in v.message


def _check(name):
    return next(c for c in semantic_checks() if c.name == name)


def test_drop_that_keeps_the_table_fails(make_ctx, monkeypatch):
    """The baseline of dropTable fails when the table still loads after an acknowledged drop (a catalog that
    answers 204 and drops nothing, made here by answering the drop without sending it)."""
    from ctk.checks.semantics import tables

    ctx = make_ctx()
    real = tables.drop

    def fake_drop(t, ns, name, purge=None, label="dropTable"):
        ex = real(t, ns, name + "_not_this_one", purge, label)     # the table itself is never dropped
        ex.status = 204
        return ex

    monkeypatch.setattr(tables, "drop", fake_drop)
    [v] = run_semantic(ctx, _check("drop-table"))
    assert v.status is Status.FAIL and "gone" in v.message


def test_listing_that_omits_a_table_fails(make_ctx, monkeypatch):
    from ctk.checks.semantics import listing

    ctx = make_ctx()
    real = listing.listed

    def omit_last(t, ns, kind="tables"):
        items = real(t, ns, kind)
        return items[:-1] if items else items

    monkeypatch.setattr(listing, "listed", omit_last)
    [v] = run_semantic(ctx, _check("list-tables"))
    assert v.status is Status.FAIL and "expected" in v.message


def test_pages_longer_than_page_size_fail(make_ctx, monkeypatch):
    """A catalog that ignores pageSize (every item on one page) breaks LIST-02."""
    from ctk.checks.semantics import listing

    ctx = make_ctx()
    real_send = listing.SemRun.send

    def send(self, method, path, json=None, params=None, label="semantic"):
        if params and "pageSize" in params:
            params = {k: v for k, v in params.items() if k != "pageSize"}
        return real_send(self, method, path, json, params, label)

    monkeypatch.setattr(listing.SemRun, "send", send)
    [v] = run_semantic(ctx, _check("pagination"))
    assert v.status is Status.DEVIATION and "pageSize" in v.message


@pytest.mark.parametrize("variant", ["drop-deletes-metadata", "separator-dot"])
def test_variants_that_touch_tables_pass(make_ctx, variant):
    ctx = make_ctx(variant=variant)
    out = _run(ctx, _ours())
    bad = {n: [(v.status.value, v.message[:400]) for v in vs] for n, vs in out.items()
           if [v.status for v in vs] != [Status.PASS]}
    assert not bad, bad
