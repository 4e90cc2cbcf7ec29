"""Readers of final catalog state: tables (snapshots, parent chain, logs, sequence numbers, properties),
views (versions) and namespaces (existence, properties), through a `CatalogClient`.

Each reader returns a state object also when the entity is missing (``exists=False``) or the read failed
(``exists=None``, ``error`` set), so checkers can tell "absent" from "could not look".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctk.http.client import ns_path, table_path, view_path


@dataclass
class TableState:
    exists: bool | None
    metadata_location: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

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
class ViewState:
    exists: bool | None
    metadata_location: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def versions(self) -> list[dict[str, Any]]:
        return list(self.metadata.get("versions") or [])

    @property
    def version_ids(self) -> list[int]:
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
class NamespaceState:
    exists: bool | None
    properties: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def _status_state(ex: Any) -> tuple[bool | None, str | None]:
    if ex.status == 200:
        return True, None
    if ex.status == 404:
        return False, None
    return None, ex.error or f"status {ex.status}: {(ex.response_body or '')[:200]}"


def read_table_state(client: Any, namespace: Any, name: str) -> TableState:
    ex = client.request("GET", table_path(namespace, name), label="state: load table")
    exists, err = _status_state(ex)
    body = ex.json() if exists else None
    if exists and not isinstance(body, dict):
        return TableState(None, error="load table answered 200 with a non-JSON body")
    if not exists:
        return TableState(exists, error=err)
    return TableState(True, body.get("metadata-location"), body.get("metadata") or {})


def read_view_state(client: Any, namespace: Any, name: str) -> ViewState:
    ex = client.request("GET", view_path(namespace, name), label="state: load view")
    exists, err = _status_state(ex)
    body = ex.json() if exists else None
    if exists and not isinstance(body, dict):
        return ViewState(None, error="load view answered 200 with a non-JSON body")
    if not exists:
        return ViewState(exists, error=err)
    return ViewState(True, body.get("metadata-location"), body.get("metadata") or {})


def read_namespace_state(client: Any, namespace: Any) -> NamespaceState:
    ex = client.request("GET", f"namespaces/{ns_path(namespace)}", label="state: load namespace")
    exists, err = _status_state(ex)
    if not exists:
        return NamespaceState(exists, error=err)
    body = ex.json()
    props = body.get("properties") if isinstance(body, dict) else None
    return NamespaceState(True, dict(props or {}))
