"""REPLAY-04 for every kind of evolution commit (ctk.checks.lost_evolution): the answer dropped after the commit,
the retry with the same key replayed, the final metadata one execution's; a catalog that executes the retry again
fails it."""

from __future__ import annotations

import pytest

from ctk.checks.lost_evolution import KINDS, check_lost_evolution
from ctk.core.verdicts import Status


def test_every_kind_passes_on_the_reference(make_ctx):
    ctx = make_ctx(interposer=True)
    out = {kind: check_lost_evolution(ctx, ctx.test_interposer, kind) for kind in KINDS}
    bad = {k: [(v.status.value, v.message[:400]) for v in vs] for k, vs in out.items()
           if [v.status for v in vs] != [Status.PASS]}
    assert not bad, bad


@pytest.mark.parametrize("kind", ["schema", "view-version"])
def test_a_retry_executed_again_fails(make_ctx, kind):
    """no-replay: the retry runs again. The schema's second run re-adds an equal schema, which Java's builder
    reuses, so its set-current-schema -1 names no added schema: 400 instead of the replayed 200; a view version is
    added again and made current: the interference's version is no longer current."""
    ctx = make_ctx(deviation="no-replay", interposer=True)
    [v] = check_lost_evolution(ctx, ctx.test_interposer, kind)
    assert v.status is Status.FAIL, v.message
    shown = {"schema": "the retry got 400", "view-version": "not one execution's"}[kind]
    assert shown in v.message, v.message


def test_without_an_interposer_it_is_unsupported(make_ctx):
    [v] = check_lost_evolution(make_ctx(), None, "properties")
    assert v.status is Status.UNSUPPORTED


def test_an_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown evolution commit kind 'x'"):
        check_lost_evolution(None, None, "x")   # type: ignore[arg-type]
