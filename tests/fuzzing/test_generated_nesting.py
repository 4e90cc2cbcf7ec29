"""The generated OpenAPI arena needs nested namespaces; on a target without them it refuses, and creates nothing.
(The model-based run places its namespaces beside the run namespace there: tests/oddserver/test_model_flat.py.)"""

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
