"""The generated checks need nested namespaces; on a target without them they are inconclusive, and create nothing."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ctk.core.verdicts import Status
from ctk.catalog import PrerequisiteError
from ctk.client.placement import Placement


class _NoRequests:
    def __init__(self):
        self.placement = Placement(("ctk_r_main",), nested=False, nesting_note="created, but loading it answered 404")

    def request(self, *a, **kw):  # pragma: no cover - must not be called
        raise AssertionError("no request expected")


def test_arena_refuses_without_nesting():
    from ctk.fuzzing.openapi_run import make_arena

    ctx = SimpleNamespace(client=_NoRequests(), namespace=("ctk_r_main",), unique=lambda s: s + "_1")
    with pytest.raises(PrerequisiteError, match="nested namespaces.*loading it answered 404"):
        make_arena(ctx, "gen")


def test_model_based_run_inconclusive_without_nesting():
    from ctk.fuzzing.stateful import run_stateful_check

    ctx = SimpleNamespace(client=_NoRequests(), namespace=("ctk_r_main",), idempotency_supported=True,
                          discovery=None, faults=None)
    vs = run_stateful_check(ctx)
    assert [v.requirement for v in vs] == ["GEN-02", "SEM-01", "SEM-02"]
    assert all(v.status is Status.INCONCLUSIVE and "nested namespaces" in v.message for v in vs)
