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


def test_without_key_support_or_nesting_gen02_is_unsupported_and_sem_inconclusive():
    """A target without Idempotency-Key support runs the model in its plain mode for SEM-01/02 (GEN-02 does not
    apply); without nested namespaces that cannot run either: SEM-01/02 inconclusive naming why, and no request."""
    from ctk.fuzzing.stateful import run_stateful_check

    ctx = SimpleNamespace(client=_NoRequests(), namespace=("ctk_r_main",), idempotency_supported=False,
                          discovery=SimpleNamespace(lifetime_error="absent", endpoints=None), faults=None)
    gen, sem1, sem2 = run_stateful_check(ctx)
    assert gen.status is Status.UNSUPPORTED and "idempotency-key-lifetime: absent" in gen.message, gen.message
    for v in (sem1, sem2):
        assert v.status is Status.INCONCLUSIVE and "nested namespaces" in v.message, v.message
