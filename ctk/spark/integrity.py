"""The integrity of a table after a Spark workload (`check_table_integrity(spark, table, expected_rows=,
expected_appends=)` -> `IntegrityReport`):

- every snapshot's manifest list, every manifest of the table (`all_manifests`) and every live data file
  exists in the warehouse (local `file:` warehouses; other schemes are reported as unchecked);
- the snapshot history is one linear parent chain from the current snapshot back to the root, holding every
  snapshot (no orphan branch, no dangling parent);
- the row count equals the expected one and no row id appears twice (no lost or duplicated append);
- as many append snapshots as successful INSERTs (a commit replayed twice would show up here).

The workloads (`ctk.spark.workloads`) run it at their end.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass
class IntegrityReport:
    ok: bool
    problems: list[str] = field(default_factory=list)
    rows: int | None = None
    distinct_ids: int | None = None
    snapshots: int = 0
    append_snapshots: int = 0
    files_checked: int = 0
    files_unchecked: int = 0
    chain: list[int] = field(default_factory=list)  # snapshot ids, root first

    def to_dict(self) -> dict:
        return asdict(self)


def _local_path(uri: str) -> Path | None:
    """A local filesystem path for `file:` URIs and bare paths; None for other schemes."""
    parts = urlsplit(uri)
    if parts.scheme in ("", "file"):
        return Path(unquote(parts.path))
    return None


def _check_files(paths: list[str], what: str, report: IntegrityReport) -> None:
    for p in paths:
        local = _local_path(p)
        if local is None:
            report.files_unchecked += 1
            continue
        report.files_checked += 1
        if not local.is_file():
            report.problems.append(f"{what} missing: {p}")


def check_table_integrity(spark: Any, table: str, *, expected_rows: int | None = None,
                          expected_appends: int | None = None) -> IntegrityReport:
    """Check `table` (as Spark names it, e.g. `db.t` or `cat.db.t`); see the module docstring."""
    report = IntegrityReport(ok=False)
    snaps = spark.sql(
        f"SELECT snapshot_id, parent_id, operation, manifest_list, committed_at FROM {table}.snapshots"
    ).collect()
    report.snapshots = len(snaps)
    report.append_snapshots = sum(1 for s in snaps if s.operation == "append")
    by_id = {s.snapshot_id: s for s in snaps}
    if len(by_id) != len(snaps):
        report.problems.append("duplicate snapshot ids in the snapshots table")

    # the chain from the current snapshot (main) back to the root
    refs = spark.sql(f"SELECT name, type, snapshot_id FROM {table}.refs").collect()
    main = [r.snapshot_id for r in refs if r.name == "main"]
    if snaps and not main:
        report.problems.append("table has snapshots but no main ref")
    chain: list[int] = []
    if main:
        cur: int | None = main[0]
        seen: set[int] = set()
        while cur is not None:
            if cur in seen:
                report.problems.append(f"parent cycle at snapshot {cur}")
                break
            seen.add(cur)
            snap = by_id.get(cur)
            if snap is None:
                report.problems.append(f"snapshot {cur} is referenced (main or as a parent) but not in metadata")
                break
            chain.append(cur)
            cur = snap.parent_id
        report.chain = list(reversed(chain))
        off_chain = set(by_id) - set(chain)
        if off_chain:
            report.problems.append(f"{len(off_chain)} snapshots are not on main's parent chain: {sorted(off_chain)[:5]}")
        times = [by_id[s].committed_at for s in report.chain]
        if any(a > b for a, b in zip(times, times[1:])):
            report.problems.append("committed_at goes backwards along the parent chain")

    _check_files([s.manifest_list for s in snaps if s.manifest_list], "manifest list", report)
    manifests = spark.sql(f"SELECT DISTINCT path FROM {table}.all_manifests").collect()
    _check_files([m.path for m in manifests], "manifest", report)
    data_files = spark.sql(f"SELECT file_path FROM {table}.files").collect()
    _check_files([f.file_path for f in data_files], "data file", report)

    counts = spark.sql(f"SELECT count(*) AS n, count(DISTINCT id) AS d FROM {table}").collect()[0]
    report.rows, report.distinct_ids = counts.n, counts.d
    if expected_rows is not None and report.rows != expected_rows:
        report.problems.append(f"row count {report.rows} != expected {expected_rows}")
    if report.rows != report.distinct_ids:
        report.problems.append(f"{report.rows - report.distinct_ids} duplicated row ids")
    if expected_appends and not report.snapshots:   # the first cause: acknowledged, nothing recorded
        report.problems.insert(0, f"the table records no snapshot although {expected_appends} INSERT(s) succeeded "
                                  "(acknowledged appends lost)")
    elif expected_appends is not None and report.append_snapshots != expected_appends:
        report.problems.append(f"{report.append_snapshots} append snapshots != {expected_appends} successful INSERTs")
    report.ok = not report.problems
    return report
