"""A duplicate on the fast path that fails on its original's own change is answered as a duplicate."""

from __future__ import annotations

import time

from sqlalchemy import create_engine

from ctk.reference.operations import Mutation
from ctk.reference.pipeline import Pipeline
from ctk.reference.settings import ReferenceSettings


def _failing(conn):
    raise RuntimeError("UNIQUE constraint failed: items.name (the original inserted it meanwhile)")


def _pipeline(tmp_path) -> Pipeline:
    engine = create_engine(f"sqlite:///{tmp_path}/p.db")
    return Pipeline(engine, ReferenceSettings(warehouse=str(tmp_path / "w")))


def test_failure_while_the_key_is_held_elsewhere_is_not_a_500(tmp_path):
    pipeline = _pipeline(tmp_path)
    scope = ("createItem", "items/a", "0190f1e2-3a4b-7c5d-8e9f-0a1b2c3d4e5f", "anonymous")
    now = time.time()
    assert pipeline.records.reserve(scope, "h" * 64, now + 60, now) is not None     # the original, in flight
    mutation = Mutation("createItem", "items/a", "anonymous", b"{}", _failing)
    assert pipeline._reserve_and_execute(mutation, scope, "h" * 64, now + 60, now, "[]") is None
    pipeline.close()


def test_failure_with_the_key_free_is_a_500(tmp_path):
    pipeline = _pipeline(tmp_path)
    scope = ("createItem", "items/a", "0190f1e2-3a4b-7c5d-8e9f-0a1b2c3d4e5f", "anonymous")
    now = time.time()
    mutation = Mutation("createItem", "items/a", "anonymous", b"{}", _failing)
    result = pipeline._reserve_and_execute(mutation, scope, "h" * 64, now + 60, now, "[]")
    assert result.status == 500 and result.body["error"]["type"] == "InternalServerError"
    assert pipeline.records.get(scope) is None                                       # nothing stored
    pipeline.close()
