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


def test_sem_on_a_target_without_key_support_says_not_decided_not_that_it_does_not_apply():
    """lakana and SeaweedFS (the interop lane) advertise no idempotency-key-lifetime: GEN-02 does not apply there,
    but SEM-01/02 (plain catalog semantics) do; their verdict says only that the model-based run did not decide
    them, and why."""
    from ctk.fuzzing.stateful import run_stateful_check

    ctx = SimpleNamespace(idempotency_supported=False, discovery=SimpleNamespace(lifetime_error="absent"))
    gen, sem1, sem2 = run_stateful_check(ctx)
    assert gen.message.startswith("the target does not advertise Idempotency-Key support")
    for v in (sem1, sem2):
        assert v.status is Status.UNSUPPORTED
        assert v.message.startswith("not decided by the model-based run"), v.message
        assert "idempotency-key-lifetime: absent" in v.message
