"""Table integrity (INTEG-01): every snapshot's manifest list exists, every manifest it lists exists, and
(optionally) every live data file of the current snapshot exists; rows of the current snapshot counted
from manifest entries on request. Reads storage through pyiceberg's FileIO, using the table metadata the
catalog returned (``load table``), so it sees exactly what a reader of the catalog would see, with the storage
settings the catalog vends with the table plus ``--catalog-property`` (``TableState.storage``), behind the
kit's loopback guard: storage outside loopback raises ``ctk.client.storage.StorageGuardError`` (inconclusive,
never a "CORRUPT" table) before anything is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctk.history.state import TableState, read_table_state


@dataclass
class Missing:
    snapshot_id: int | None
    kind: str          # "manifest-list" | "manifest" | "data-file" | "unreadable"
    path: str
    detail: str = ""

    def __str__(self) -> str:
        return f"snapshot {self.snapshot_id}: {self.kind} {self.path} {self.detail}".rstrip()


@dataclass
class IntegrityResult:
    snapshots: int = 0
    manifest_lists: int = 0
    manifests: int = 0
    data_files: int = 0
    rows: int | None = None
    missing: list[Missing] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not self.missing and self.error is None

    def vacuous_reason(self, acknowledged: int | None = None) -> str | None:
        """Why this result cannot support a pass (None when it can): no snapshot was there to check. With
        `acknowledged` (appends the catalog acknowledged on this table) the reason names the lost writes."""
        if self.error is not None or self.missing or self.snapshots:
            return None
        if acknowledged:
            return (f"0 snapshots to check: the table records no snapshot although {acknowledged} append(s) were "
                    "acknowledged (lost writes: see HIST-01)")
        return "0 snapshots to check: the table records no snapshot"

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "snapshots": self.snapshots, "manifest_lists": self.manifest_lists,
                "manifests": self.manifests, "data_files": self.data_files, "rows": self.rows,
                "missing": [str(m) for m in self.missing], "error": self.error}

    def __str__(self) -> str:
        head = "intact" if self.ok else "CORRUPT"
        text = (f"{head}: {self.snapshots} snapshots, {self.manifest_lists} manifest lists, "
                f"{self.manifests} manifests checked" + (f", {self.rows} rows" if self.rows is not None else ""))
        if self.error:
            text += f"\n  error: {self.error}"
        return text + "".join(f"\n  missing {m}" for m in self.missing)


def _io_for(metadata: Any, settings: Any = None, extra_properties: dict[str, str] | None = None) -> Any:
    """A guarded FileIO for the table: ``settings`` (a StorageSettings; default: none vended, guard on)
    with ``extra_properties`` on top."""
    from ctk.client.storage import StorageSettings

    base = settings if settings is not None else StorageSettings()
    settings = StorageSettings({**base.properties, **(extra_properties or {})}, base.allow_remote)
    return settings.file_io(metadata.location, "the table's files")


class _Unreadable(Exception):
    """Storage could not answer whether a file exists (refused, denied, ...): nothing can be judged."""


def _exists(io: Any, path: str) -> bool:
    from ctk.client.storage import StorageGuardError

    try:
        return bool(io.new_input(path).exists())
    except StorageGuardError:
        raise
    except Exception as exc:  # noqa: BLE001 - the storage, not the table, failed
        raise _Unreadable(f"storage unreadable: cannot tell whether {path} exists ({type(exc).__name__}: "
                          f"{str(exc)[:300]})") from None


def check_integrity(state: TableState | dict[str, Any], count_rows: bool = False, check_data_files: bool = False,
                    io_properties: dict[str, str] | None = None) -> IntegrityResult:
    """Check storage references of a table given its `TableState` or raw table metadata dict. A storage that
    cannot answer whether a file exists gives ``error`` "storage unreadable: ..." (no verdict on the table)."""
    from pyiceberg.table.metadata import TableMetadataUtil

    from ctk.client.storage import StorageGuardError

    raw = state.metadata if isinstance(state, TableState) else state
    settings = getattr(state, "storage", None) if isinstance(state, TableState) else None
    res = IntegrityResult()
    if not raw:
        res.error = "no table metadata"
        return res
    try:
        metadata = TableMetadataUtil.parse_obj(raw)
        io = _io_for(metadata, settings, io_properties)
    except StorageGuardError:
        raise
    except Exception as exc:  # noqa: BLE001 - report, do not crash the check
        res.error = f"cannot parse table metadata: {type(exc).__name__}: {exc}"
        return res
    try:
        _walk(metadata, io, res, count_rows, check_data_files)
    except _Unreadable as exc:   # no verdict on the table from a storage that does not answer
        res.error = str(exc)
        return res
    if count_rows and res.rows is None and metadata.current_snapshot_id is not None:
        res.rows = 0
    if count_rows and metadata.current_snapshot_id is None:
        res.rows = 0
    return res


def _walk(metadata: Any, io: Any, res: IntegrityResult, count_rows: bool, check_data_files: bool) -> None:
    from pyiceberg.manifest import ManifestContent, read_manifest_list

    current = metadata.current_snapshot_id
    for snap in metadata.snapshots:
        res.snapshots += 1
        path = snap.manifest_list
        if not path:
            res.missing.append(Missing(snap.snapshot_id, "manifest-list", "<none>", "(no manifest list in metadata)"))
            continue
        res.manifest_lists += 1
        if not _exists(io, path):
            res.missing.append(Missing(snap.snapshot_id, "manifest-list", path))
            continue
        try:
            manifests = list(read_manifest_list(io.new_input(path)))
        except Exception as exc:  # noqa: BLE001
            res.missing.append(Missing(snap.snapshot_id, "unreadable", path, f"({type(exc).__name__}: {exc})"))
            continue
        for mf in manifests:
            res.manifests += 1
            if not _exists(io, mf.manifest_path):
                res.missing.append(Missing(snap.snapshot_id, "manifest", mf.manifest_path))
                continue
            if snap.snapshot_id == current and (count_rows or check_data_files):
                try:
                    entries = mf.fetch_manifest_entry(io, discard_deleted=True)
                except Exception as exc:  # noqa: BLE001
                    res.missing.append(Missing(snap.snapshot_id, "unreadable", mf.manifest_path,
                                               f"({type(exc).__name__}: {exc})"))
                    continue
                for entry in entries:
                    df = entry.data_file
                    if count_rows and mf.content == ManifestContent.DATA:
                        res.rows = (res.rows or 0) + df.record_count
                    if check_data_files:
                        res.data_files += 1
                        if not _exists(io, df.file_path):
                            res.missing.append(Missing(snap.snapshot_id, "data-file", df.file_path))


def check_table_integrity(client: Any, namespace: Any, name: str, **kw: Any) -> IntegrityResult:
    """Load the table through the catalog and run `check_integrity`."""
    state = read_table_state(client, namespace, name)
    if not state.exists:
        return IntegrityResult(error=f"table not loadable: {state.error or 'absent'}")
    return check_integrity(state, **kw)
