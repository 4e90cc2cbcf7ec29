"""Mutation pipeline (placeholder until the idempotency layer lands): run the operation in one transaction."""

from __future__ import annotations

from ctk.reference.operations import CatalogError, Mutation, OpResult


def run_mutation(engine, settings, mutation: Mutation) -> OpResult:
    with engine.begin() as conn:
        try:
            return mutation.execute(conn)
        except CatalogError as exc:
            conn.rollback()
            return exc.result()
