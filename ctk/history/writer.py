"""Stage a table append with pyiceberg WITHOUT committing through pyiceberg.

`stage_append()` loads the table through the kit's `CatalogClient`, builds a pyiceberg `Table` on that
metadata (with a no-op catalog, so pyiceberg can never commit by itself), runs ``Transaction.append()`` -
which writes the data files, the manifest and the manifest list to storage - and turns the transaction's
requirements and updates into a ``CommitTableRequest`` body. The kit then sends that body itself (plain,
with a key, through the retrying client, through the interposer...).

Files are written with the storage settings of the table (what the catalog vends with it, asked for with
``X-Iceberg-Access-Delegation``, plus the user's ``--catalog-property`` values) behind the kit's loopback guard
(``ctk.client.storage``): a table whose storage would be reached outside loopback raises `StorageBlocked`, which
is both a `StageError` and a ``PrerequisiteError`` (checks call it inconclusive, with the property to set).

`cleanup_staged()` deletes the staged files, as a client does after it believes the commit failed (a 409):
when that commit had in fact landed, the table now references a missing manifest list (seed example 1a).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctk.client.transport import ns_tuple, table_path
from ctk.client.storage import StorageGuardError, settings_for

MARKER_KEY = "ctk.op"


class StageError(RuntimeError):
    pass


class StorageBlocked(StageError, StorageGuardError):
    """The table's files would be written outside loopback: nothing was written (see ctk.client.storage)."""


@dataclass
class StagedCommit:
    namespace: tuple[str, ...]
    name: str
    path: str                         # request path for the commit (relative to /v1/{prefix})
    body: dict[str, Any]              # CommitTableRequest as JSON
    snapshot_id: int
    parent_snapshot_id: int | None
    manifest_list: str
    manifests: list[str] = field(default_factory=list)
    data_files: list[str] = field(default_factory=list)
    marker: str | None = None
    io: Any = None                    # pyiceberg FileIO that wrote the files

    @property
    def files(self) -> list[str]:
        return [self.manifest_list, *self.manifests, *self.data_files]


def _table_from_load_result(namespace: tuple[str, ...], name: str, loaded: dict[str, Any],
                            client: Any = None) -> Any:
    from pyiceberg.catalog.noop import NoopCatalog
    from pyiceberg.table import Table
    from pyiceberg.table.metadata import TableMetadataUtil

    metadata = TableMetadataUtil.parse_obj(loaded["metadata"])
    try:
        io = settings_for(client, loaded, metadata.location).file_io(
            metadata.location, f"table {'.'.join(namespace)}.{name}'s files")
    except StorageGuardError as exc:
        raise StorageBlocked(str(exc)) from None
    return Table((*namespace, name), metadata, loaded.get("metadata-location") or "", io, NoopCatalog("ctk-noop"))


def stage_append(client: Any, namespace: Any, name: str, data: Any = None, marker: str | None = None,
                 snapshot_properties: dict[str, str] | None = None, loaded: dict[str, Any] | None = None
                 ) -> StagedCommit:
    """Write an append's files and return the commit body for it (nothing is committed).

    data      a pyarrow Table matching the table schema (default: one row of nulls/defaults is NOT guessed;
              it must be given unless the schema is the kit's (id long, v string) shape, for which one row
              with ``id=0`` and ``v=marker`` is used)
    marker    written into the snapshot summary under ``ctk.op`` so checkers can find the operation
    loaded    a LoadTableResult already read (default: loaded now through ``client``)
    """
    from pyiceberg.manifest import read_manifest_list
    from pyiceberg.table import CommitTableRequest, Namespace, TableIdentifier
    from pyiceberg.table.update import AddSnapshotUpdate

    ns = ns_tuple(namespace)
    if loaded is None:
        loaded = client.load_table(ns, name)
    if not isinstance(loaded, dict) or "metadata" not in loaded:
        raise StageError(f"cannot load table {'.'.join(ns)}.{name} to stage an append")
    table = _table_from_load_result(ns, name, loaded, client)
    if data is None:
        data = _default_rows(table, marker)
    props = dict(snapshot_properties or {})
    if marker is not None:
        props[MARKER_KEY] = marker
    txn = table.transaction()
    try:
        txn.append(data, snapshot_properties=props)
    except StorageGuardError as exc:   # a path outside the table location's store
        raise StorageBlocked(str(exc)) from None
    except OSError as exc:             # the storage refused or failed the write: a setup problem, not the catalog's
        raise StageError(f"writing the files of table {'.'.join(ns)}.{name} failed: {type(exc).__name__}: "
                         f"{str(exc)[:300]}") from None
    updates, requirements = txn._updates, txn._requirements  # pyiceberg keeps them until commit_transaction()
    adds = [u for u in updates if isinstance(u, AddSnapshotUpdate)]
    if len(adds) != 1:
        raise StageError(f"expected one add-snapshot update, got {len(adds)}")
    snap = adds[0].snapshot
    request = CommitTableRequest(identifier=TableIdentifier(namespace=Namespace(root=list(ns)), name=name),
                                 requirements=requirements, updates=updates)
    body = json.loads(request.model_dump_json())
    manifests = [m.manifest_path for m in read_manifest_list(table.io.new_input(snap.manifest_list))
                 if m.added_snapshot_id == snap.snapshot_id]
    data_files: list[str] = []
    for m in read_manifest_list(table.io.new_input(snap.manifest_list)):
        if m.added_snapshot_id == snap.snapshot_id:
            data_files += [e.data_file.file_path for e in m.fetch_manifest_entry(table.io, discard_deleted=True)]
    return StagedCommit(ns, name, table_path(ns, name), body, snap.snapshot_id, snap.parent_snapshot_id,
                        snap.manifest_list, manifests, data_files, marker, table.io)


def _default_rows(table: Any, marker: str | None) -> Any:
    import pyarrow as pa

    schema = table.schema().as_arrow()
    names = [f.name for f in schema]
    if names[:2] == ["id", "v"] and len(names) == 2:
        return pa.Table.from_pylist([{"id": 0, "v": marker or ""}], schema=schema)
    raise StageError(f"give data for a table with columns {names}")


def cleanup_staged(staged: StagedCommit, data_files: bool = False) -> list[str]:
    """Delete the staged manifest list and manifests (and data files if asked); returns the deleted paths.

    This is what a client does when it believes its commit failed. Missing files are skipped.
    """
    paths = [staged.manifest_list, *staged.manifests] + (staged.data_files if data_files else [])
    deleted = []
    for p in paths:
        try:
            staged.io.delete(p)
            deleted.append(p)
        except FileNotFoundError:
            continue
    return deleted
