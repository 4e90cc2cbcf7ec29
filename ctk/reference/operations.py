"""What the reference catalog's HTTP layer hands to the mutation pipeline.

Contract between ctk/reference/app.py + catalog.py (which build a Mutation for each mutating route) and
ctk/reference/pipeline.py (which wraps every Mutation in idempotency handling and test hooks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from sqlalchemy.engine import Connection


@dataclass
class OpResult:
    """The outcome of an operation: what the HTTP response will carry."""

    status: int
    body: Any = None                       # JSON-serialisable, or None for 204
    headers: dict[str, str] = field(default_factory=dict)
    # Set when body["metadata"] is the table metadata in the file at this location (which the catalog does not
    # change): the idempotency record then stores the answer by reference instead of a copy of the metadata.
    ref: str | None = None
    # With ref: body["metadata"] as the JSON text written to that file (the answer's bytes are made with it
    # rather than by serializing the same metadata again). Only for a body["metadata"] parsed from this text.
    metadata_text: str | None = None


class CatalogError(Exception):
    """A terminal error of an operation, answered with the spec's ErrorModel."""

    def __init__(self, status: int, type_: str, message: str, subtype: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.type, self.message, self.subtype = status, type_, message, subtype
        self.headers = headers or {}

    def result(self) -> OpResult:
        error: dict[str, Any] = {"message": self.message, "type": self.type, "code": self.status}
        if self.subtype:
            error["subtype"] = self.subtype
        return OpResult(self.status, {"error": error}, dict(self.headers))


def exists(what: str, ns, name=None) -> CatalogError:
    """409 AlreadyExistsException for `what` (e.g. "Namespace", "Table") at ns[.name]."""
    ident = ".".join([*ns, name] if name is not None else ns)
    return CatalogError(409, "AlreadyExistsException", f"{what} already exists: {ident}")


@dataclass
class Mutation:
    operation: str                                  # operationId, e.g. "updateTable", "createView"
    resource: str                                   # canonical resource, e.g. "ns\x1fsub/tables/t"
    principal: str                                  # caller identity ("anonymous" without auth)
    body: bytes                                     # raw request body (hashed canonically by the pipeline)
    execute: Callable[[Connection], OpResult]       # runs inside one DB transaction; raises CatalogError
    # Is the intended change already in the catalog state? Returns the result to answer with, or None.
    reconcile: Callable[[Connection], OpResult | None] | None = None
    # Called once the transaction in which `execute` ran has committed (not after a rollback, a replay, a
    # reconcile or a simulated crash): for work outside the database that must follow only a real change,
    # such as a purge.
    on_commit: Callable[[], None] | None = None
    # The caller's control-API scope (X-Ctk-Scope header, set by the pipeline; see faults.py): whose fault rules
    # apply and whose counters an execution counts in.
    scope: str | None = None

    def did_commit(self) -> None:
        if self.on_commit is not None:
            self.on_commit()
