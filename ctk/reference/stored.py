"""What the idempotency records keep of a response, and how a replay rebuilds it.

A table or view load result (createTable, updateTable, registerTable, createView, replaceView, ...) carries the
whole metadata, which grows with the table; storing it with every record made keyed commits write tens of KB
each. Metadata files are immutable, so the record keeps the result without its ``metadata`` and a replay reads
it back from the file its ``metadata-location`` names: the same body, from "a sufficient summary to reproduce
it" (design document). A file that is gone makes the response unproducible: `StoredResponseError`, answered
as 5xx ``idempotency_replay_failed`` without re-executing.
"""

from __future__ import annotations

from typing import Any

from ctk.reference.idempotency import StoredResponseError
from ctk.reference.operations import OpResult

MARK = "$ctk-from-metadata-location"


def compact(result: OpResult) -> OpResult:
    body = result.body
    if isinstance(body, dict) and isinstance(body.get("metadata-location"), str) \
            and isinstance(body.get("metadata"), dict):
        meta = body["metadata"]
        kind = "view" if "view-uuid" in meta else "table" if "table-uuid" in meta else None
        if kind is not None:
            return OpResult(result.status, {**body, "metadata": {MARK: kind}}, dict(result.headers))
    return result


def expand(result: OpResult) -> OpResult:
    body = result.body
    if not (isinstance(body, dict) and isinstance(body.get("metadata"), dict) and MARK in body["metadata"]):
        return result
    from ctk.reference import store
    from ctk.reference.catalog import dump

    location, kind = body.get("metadata-location"), body["metadata"][MARK]
    try:
        model: Any = store.read_view_metadata(location) if kind == "view" else store.read_table_metadata(location)
    except Exception as exc:  # noqa: BLE001 - any failure to read means the response cannot be produced
        raise StoredResponseError(f"the metadata file {location} of the stored response cannot be read "
                                  f"({type(exc).__name__})") from None
    return OpResult(result.status, {**body, "metadata": dump(model)}, dict(result.headers))
