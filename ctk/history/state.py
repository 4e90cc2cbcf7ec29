"""Readers of final catalog state: tables (snapshots, parent chain, logs, sequence numbers, properties),
views (versions) and namespaces (existence, properties), through a `CatalogClient`.

Each reader returns a state object also when the entity is missing (``exists=False``) or the read failed
(``exists=None``, ``error`` set), so checkers can tell "absent" from "could not look". The reading is the
catalog layer's one state reader (`ctk.catalog.state.read`): a read answered 5xx (or not answered) is tried
again a few times (bounded: ``READ_ATTEMPTS``); if it stays so the state is *unreadable* (``unreadable`` is
true, ``error`` says "state unreadable (5xx)" and ``exchange`` is the last read): a checker must call that
inconclusive, never absent, lost or corrupt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctk.catalog.state import READ_ATTEMPTS, READ_PAUSE, read, read_with_retry, resource_path

__all__ = ["READ_ATTEMPTS", "READ_PAUSE", "NamespaceState", "TableState", "ViewState", "read_namespace_state",
           "read_table_state", "read_view_state", "read_with_retry"]


class _ReadState:
    """What every state has: ``exists`` (None when the catalog could not be read) and ``error``."""

    exists: bool | None
    error: str | None

    @property
    def unreadable(self) -> bool:
        """The catalog could not be read (5xx, no answer, not a load result): nothing can be judged from it."""
        return self.exists is None


@dataclass
class _LoadedState(_ReadState):
    """A table or a view as its load answered: metadata location and metadata."""
    exists: bool | None
    metadata_location: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    exchange: Any = None          # the (last) read exchange


@dataclass
class TableState(_LoadedState):
    storage: Any = None           # ctk.client.storage.StorageSettings of the table's files (vended + the user's)

    @property
    def table_uuid(self) -> str | None:
        return self.metadata.get("table-uuid")

    @property
    def properties(self) -> dict[str, str]:
        return dict(self.metadata.get("properties") or {})

    @property
    def snapshots(self) -> list[dict[str, Any]]:
        return list(self.metadata.get("snapshots") or [])

    @property
    def snapshot_ids(self) -> list[int]:
        return [s["snapshot-id"] for s in self.snapshots if "snapshot-id" in s]

    def snapshot(self, snapshot_id: int) -> dict[str, Any] | None:
        return next((s for s in self.snapshots if s.get("snapshot-id") == snapshot_id), None)

    @property
    def snapshot_log(self) -> list[dict[str, Any]]:
        return list(self.metadata.get("snapshot-log") or [])

    @property
    def metadata_log(self) -> list[dict[str, Any]]:
        return list(self.metadata.get("metadata-log") or [])

    @property
    def last_sequence_number(self) -> int | None:
        return self.metadata.get("last-sequence-number")

    def ref_snapshot_id(self, ref: str = "main") -> int | None:
        refs = self.metadata.get("refs") or {}
        if ref in refs:
            return refs[ref].get("snapshot-id")
        if ref == "main":
            cur = self.metadata.get("current-snapshot-id")
            return None if cur in (None, -1) else cur
        return None

    def parent_chain(self, ref: str = "main", limit: int = 100_000) -> list[int]:
        """Snapshot ids from the ref's head back to the root (stops on a missing parent or a cycle)."""
        out: list[int] = []
        seen: set[int] = set()
        sid = self.ref_snapshot_id(ref)
        while sid is not None and sid not in seen and len(out) < limit:
            snap = self.snapshot(sid)
            if snap is None:
                break
            out.append(sid)
            seen.add(sid)
            sid = snap.get("parent-snapshot-id")
        return out

    def summary_values(self, key: str) -> list[Any]:
        """The values of a snapshot summary property across all snapshots (one per snapshot carrying it)."""
        return [s["summary"][key] for s in self.snapshots if key in (s.get("summary") or {})]


@dataclass
class ViewState(_LoadedState):
    @property
    def versions(self) -> list[dict[str, Any]]:
        return list(self.metadata.get("versions") or [])

    @property
    def version_ids(self) -> list[int | None]:
        """The ids of the view's versions (None for a version that names none)."""
        return [v.get("version-id") for v in self.versions]

    @property
    def current_version_id(self) -> int | None:
        return self.metadata.get("current-version-id")

    @property
    def version_log(self) -> list[dict[str, Any]]:
        return list(self.metadata.get("version-log") or [])

    @property
    def properties(self) -> dict[str, str]:
        return dict(self.metadata.get("properties") or {})


@dataclass
class NamespaceState(_ReadState):
    exists: bool | None
    properties: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    exchange: Any = None


def read_table_state(client: Any, namespace: Any, name: str) -> TableState:
    got = read(client, resource_path(namespace, name, "table"), "state: load table", "load table", READ_ATTEMPTS)
    body = got.body     # a dict whenever the table exists
    if not got.exists or body is None:
        return TableState(got.exists, error=got.error, exchange=got.exchange)
    storage = client.storage_settings(body) if hasattr(client, "storage_settings") else None
    return TableState(True, body.get("metadata-location"), body.get("metadata") or {}, exchange=got.exchange,
                      storage=storage)


def read_view_state(client: Any, namespace: Any, name: str) -> ViewState:
    got = read(client, resource_path(namespace, name, "view"), "state: load view", "load view", READ_ATTEMPTS)
    body = got.body     # a dict whenever the view exists
    if not got.exists or body is None:
        return ViewState(got.exists, error=got.error, exchange=got.exchange)
    return ViewState(True, body.get("metadata-location"), body.get("metadata") or {}, exchange=got.exchange)


def read_namespace_state(client: Any, namespace: Any) -> NamespaceState:
    got = read(client, resource_path(namespace), "state: load namespace", "load namespace", READ_ATTEMPTS)
    body = got.body     # a dict whenever the namespace exists
    if not got.exists or body is None:
        return NamespaceState(got.exists, error=got.error, exchange=got.exchange)
    return NamespaceState(True, dict(body.get("properties") or {}), exchange=got.exchange)
