"""The evolution, transaction and type checks of the catalog-semantics family (EVO-01..EVO-08, TXN-01..TXN-04,
V3-01): each passes on the reference catalog; the area's deviation profile (replace-loses-snapshot-log) breaks
TXN-03 and nothing else of the family; and checks fail when what they read back is broken."""

from __future__ import annotations

from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core.requirements import REQUIREMENTS, status_if_broken
from ctk.core.verdicts import Status

AREA = ("EVO-", "TXN-", "V3-")


def _ours():
    return [c for c in semantic_checks() if c.requirement.startswith(AREA)]


def _check(name):
    return next(c for c in semantic_checks() if c.name == name)


def test_every_evolution_transaction_and_type_check_passes_on_the_reference(make_ctx):
    ctx = make_ctx()
    out = {c.name: run_semantic(ctx, c) for c in _ours()}
    # every requirement of the registry's evolution, transactions and types areas has a check here
    assert {c.requirement for c in _ours()} == {r for r in REQUIREMENTS if r.startswith(AREA)}
    bad = {n: [(v.status.value, v.message[:600]) for v in vs] for n, vs in out.items()
           if [v.status for v in vs] != [Status.PASS]}
    assert not bad, bad
    assert all(vs[0].exchanges for vs in out.values())


def test_the_deviation_breaks_exactly_txn03_of_the_family(make_ctx):
    """replace-loses-snapshot-log: a replace transaction drops the snapshot log. TXN-03 fails (the kit's MUST: a
    client's history is gone) and every other semantic check still passes."""
    from ctk.reference.deviations import PROFILES

    assert PROFILES["replace-loses-snapshot-log"].catches == ("TXN-03",)
    ctx = make_ctx(deviation="replace-loses-snapshot-log")
    out = [v for c in semantic_checks() for v in run_semantic(ctx, c)]
    broken = {v.requirement for v in out if v.status in (Status.FAIL, Status.DEVIATION, Status.ERROR)}
    assert broken == {"TXN-03"}, [(v.requirement, v.status.value, v.message[:300]) for v in out
                                  if v.requirement in broken]
    [v] = [v for v in out if v.requirement == "TXN-03" and v.details.get("check") == "replace-keeps-snapshot-log"]
    assert v.status is Status.FAIL and "snapshot log" in v.message


def test_a_commit_the_next_load_does_not_show_fails_the_baseline(make_ctx, monkeypatch):
    """EVO-01 (the updateTable baseline) fails when the load after an acknowledged commit shows another
    metadata-location (made here by loading another table of the same namespace)."""
    from ctk.checks.semantics import evolution

    ctx = make_ctx()
    real = evolution.load_result

    def stale_load(t, ns, name, label="read: load table"):
        if label == "read: load the committed table":
            other, _ = t.table(ns)
            return real(t, ns, other, label)
        return real(t, ns, name, label)

    monkeypatch.setattr(evolution, "load_result", stale_load)
    [v] = run_semantic(ctx, _check("commit-read-back"))
    assert v.status is Status.FAIL and "metadata-location" in v.message


def test_a_stale_requirement_accepted_fails_the_conflict_checks(make_ctx):
    """stale-requirement-accepted (a catalog that checks no requirement): the schema conflicts are accepted."""
    ctx = make_ctx(deviation="stale-requirement-accepted")
    [v] = run_semantic(ctx, _check("schema-conflicts"))
    assert v.status is Status.FAIL and "accepted" in v.message


def test_a_v2_table_with_a_variant_column_created_fails_v3_01(make_ctx, monkeypatch):
    """V3-01 fails where a v2 table with a variant column is created (made here by asking for v3 instead)."""
    from ctk.checks.semantics import evolution

    ctx = make_ctx()
    real = evolution.create_table_body

    def v3_instead(name, properties=None):
        if properties == {"format-version": "2"}:
            properties = {"format-version": "3"}
        return real(name, properties)

    monkeypatch.setattr(evolution, "create_table_body", v3_instead)
    [v] = run_semantic(ctx, _check("variant-columns"))
    # V3-01 is the compatibility kit's (no MUST of a client's data): broken, it is judged at that level
    assert v.status.value == status_if_broken("V3-01") and v.status is not Status.PASS and "v2 table" in v.message
