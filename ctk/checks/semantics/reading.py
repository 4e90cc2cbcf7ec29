"""The one reader of table and view metadata for every area of the catalog-semantics checks: loading a table or
view (a read of state answered 5xx or not at all is tried again, then the state is unreadable), and the parts of
its metadata the checks compare (current schema, columns, the current view version)."""

from __future__ import annotations

import time
from typing import Any

from ctk.catalog.state import READ_ATTEMPTS, READ_PAUSE
from ctk.client.errors import PrerequisiteError
from ctk.client.transport import table_path, view_path
from ctk.core.exchange import Exchange
from ctk.checks.semantics.harness import SemRun

ID_NAME_TYPE = ("id", "name", "type")
NAME_TYPE_REQUIRED = ("name", "type", "required")


def read(t: SemRun, path: str, label: str, judged: bool = False) -> Exchange:
    """GET ``path``. A read of state (not ``judged``) answered 5xx or not at all is tried again (``READ_ATTEMPTS``
    in all) and then raises PrerequisiteError: the state is unreadable, the check inconclusive, never a finding.
    A ``judged`` read is the request the verdict is about: sent once, its answer whatever it is."""
    ex = t.send("GET", path, label=label)
    if judged:
        return ex
    for _ in range(READ_ATTEMPTS - 1):
        if ex.status is not None and ex.status < 500:
            return ex
        time.sleep(READ_PAUSE)
        ex = t.send("GET", path, label=label + " (again)")
    if ex.status is None or ex.status >= 500:
        raise PrerequisiteError(f"{label}: state unreadable", ex)
    return ex


def load(t: SemRun, ns: tuple[str, ...], name: str, label: str = "read: load table", judged: bool = False
         ) -> Exchange:
    """loadTable (`read`)."""
    return read(t, table_path(ns, name), label, judged)


def load_view(t: SemRun, ns: tuple[str, ...], name: str, label: str = "read: load view", judged: bool = False
              ) -> Exchange:
    """loadView (`read`)."""
    return read(t, view_path(ns, name), label, judged)


def acknowledged(ex: Exchange) -> bool:
    """Whether the answer is a 2xx."""
    return ex.status is not None and 200 <= ex.status < 300


def body_of(ex: Exchange) -> dict | None:
    """The JSON object of a 200 answer (None otherwise)."""
    body = ex.json() if ex.status == 200 else None
    return body if isinstance(body, dict) else None


def result(ex: Exchange) -> dict | None:
    """The LoadTableResult / LoadViewResult of an answer: a 200 with a metadata object (None otherwise)."""
    body = body_of(ex)
    return body if body is not None and isinstance(body.get("metadata"), dict) else None


def meta(loaded: Any) -> dict:
    m = loaded.get("metadata") if isinstance(loaded, dict) else None
    return m if isinstance(m, dict) else {}


def chosen(m: dict, items: str, id_key: str, current: str) -> dict:
    """The entry of the list ``items`` of metadata ``m`` whose ``id_key`` is ``m[current]`` (the current schema,
    default spec or sort order, current view version); empty when there is none."""
    return next((i for i in m.get(items) or [] if isinstance(i, dict) and i.get(id_key) == m.get(current)), {})


def current_schema(m: dict) -> dict:
    """The current schema of table metadata (empty when it cannot be found)."""
    legacy = m.get("schema")
    return chosen(m, "schemas", "schema-id", "current-schema-id") or (legacy if isinstance(legacy, dict) else {})


def columns(schema: Any, keys: tuple[str, ...] = ID_NAME_TYPE) -> list[tuple[Any, ...]]:
    """The top-level fields of a schema as tuples of ``keys`` (``required`` as a bool), in order."""
    items = schema.get("fields") if isinstance(schema, dict) else None
    return [tuple(bool(f.get(k)) if k == "required" else f.get(k) for k in keys) for f in items or []
            if isinstance(f, dict)]


def current_version(m: dict) -> dict:
    """The current version of view metadata (empty when it cannot be found)."""
    return chosen(m, "versions", "version-id", "current-version-id")


def load_result(t: SemRun, ns: tuple[str, ...], name: str, label: str = "read: load table"
                ) -> tuple[Exchange, dict | None]:
    """loadTable (`read`) and its LoadTableResult (None: not a 200 with a metadata object)."""
    ex = load(t, ns, name, label)
    return ex, result(ex)
