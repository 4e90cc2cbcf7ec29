"""Spark workloads against a catalog under test, each followed by an integrity check of the table.

`concurrent_appends(spark, table, writers=2, inserts=1, rows_each=10)`: `writers` threads start together
(a barrier) and each runs `inserts` INSERT statements of `rows_each` rows; appends never conflict logically,
so the Java client must turn every 409 of optimistic concurrency into a refresh-and-retry. Afterwards
`check_table_integrity` verifies:

- every snapshot's manifest list, every manifest of the table (`all_manifests`) and every live data file
  exists in the warehouse (local `file:` warehouses; other schemes are reported as unchecked);
- the snapshot history is one linear parent chain from the current snapshot back to the root, holding every
  snapshot (no orphan branch, no dangling parent);
- the row count equals the expected one and no row id appears twice (no lost or duplicated append);
- as many append snapshots as successful INSERTs (a commit replayed twice would show up here).

`spark` may be a SparkSession (each writer gets `newSession()` and so its own catalog instance, like
separate clients), a callable returning a SparkSession per writer, or a catalog base URL (then
`ctk.spark.session.spark_session(url)` makes the sessions).
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

ID_STRIDE_WRITER = 1_000_000_000
ID_STRIDE_INSERT = 100_000


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


@dataclass
class WorkloadResult:
    table: str
    writers: int
    inserts: int
    rows_each: int
    expected_rows: int
    ok_inserts: int
    errors: list[str]
    insert_seconds: list[float]
    wall_seconds: float
    integrity: IntegrityReport
    commit_stats: dict[str, int] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors and self.integrity.ok

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        return d


# ----------------------------------------------------------------------------------------------- helpers


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
    if expected_appends is not None and report.append_snapshots != expected_appends:
        report.problems.append(f"{report.append_snapshots} append snapshots != {expected_appends} successful INSERTs")
    report.ok = not report.problems
    return report


def _session_maker(spark: Any) -> tuple[Any, Callable[[], Any]]:
    """(a session for setup and checks, a factory of per-writer sessions)."""
    if isinstance(spark, str):
        from ctk.spark.session import spark_session

        main = spark_session(spark)
        return main, lambda: _clone(main)
    if callable(spark) and not hasattr(spark, "sql"):
        main = spark()
        return main, spark
    return spark, lambda: _clone(spark)


def _clone(spark: Any) -> Any:
    """A new session on the same SparkContext with the same catalog settings (its own catalog instances)."""
    s = spark.newSession()
    info = getattr(spark, "_ctk_info", None)
    if info is not None:
        for k, v in info.conf.items():
            s.conf.set(k, v)
        s._ctk_info = info
    else:  # copy the catalog settings of a foreign session
        for k, v in spark.sparkContext.getConf().getAll():
            if k.startswith("spark.sql.catalog.") or k == "spark.sql.defaultCatalog":
                s.conf.set(k, v)
    return s


# ----------------------------------------------------------------------------------------------- workloads


def create_append_table(spark: Any, table: str, *, replace: bool = False) -> None:
    """CREATE NAMESPACE (if needed) and the workload table `(id bigint, writer int, seq int)`."""
    parts = table.split(".")
    if len(parts) >= 2:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {'.'.join(parts[:-1])}")
    if replace:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {table} (id BIGINT, writer INT, seq INT) USING iceberg")


def concurrent_appends(spark: Any, table: str, writers: int = 2, rows_each: int = 10, *, inserts: int = 1,
                       create: bool = True, timeout: float = 300.0) -> WorkloadResult:
    """`writers` threads each run `inserts` INSERTs of `rows_each` rows into `table`, then check integrity.

    The table is created when `create` (and must be empty or absent then, or the expected counts include its
    existing rows and append snapshots).
    """
    main, factory = _session_maker(spark)
    if create:
        create_append_table(main, table)
    before_rows = main.sql(f"SELECT count(*) AS n FROM {table}").collect()[0].n
    before_appends = main.sql(f"SELECT count(*) AS n FROM {table}.snapshots WHERE operation = 'append'").collect()[0].n
    recorder = getattr(getattr(main, "_ctk_info", None), "recorder", None)
    mark = len(recorder.snapshot()) if recorder else 0

    sessions = [factory() for _ in range(writers)]
    barrier = threading.Barrier(writers)
    errors: list[str] = []
    durations: list[float] = []
    ok_inserts = [0]
    lock = threading.Lock()

    def writer(w: int) -> None:
        s = sessions[w]
        try:
            barrier.wait(timeout=timeout)
        except threading.BrokenBarrierError:
            with lock:
                errors.append(f"writer {w}: barrier broken")
            return
        for k in range(inserts):
            base = w * ID_STRIDE_WRITER + k * ID_STRIDE_INSERT
            sql = (f"INSERT INTO {table} SELECT {base} + id AS id, CAST({w} AS INT) AS writer, "
                   f"CAST({k} AS INT) AS seq FROM range({rows_each})")
            t0 = time.monotonic()
            try:
                s.sql(sql)
            except Exception as exc:  # noqa: BLE001 - reported, the check decides
                with lock:
                    errors.append(f"writer {w} insert {k}: {type(exc).__name__}: {str(exc).splitlines()[0][:500]}")
                continue
            with lock:
                durations.append(time.monotonic() - t0)
                ok_inserts[0] += 1

    t0 = time.monotonic()
    threads = [threading.Thread(target=writer, args=(w,), name=f"ctk-writer-{w}", daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    wall = time.monotonic() - t0
    if any(t.is_alive() for t in threads):
        errors.append(f"writers still running after {timeout}s")

    integrity = check_table_integrity(
        main, table,
        expected_rows=before_rows + ok_inserts[0] * rows_each,
        expected_appends=before_appends + ok_inserts[0],
    )
    stats = None
    if recorder is not None:
        from ctk.spark.session import commit_stats

        stats = commit_stats(recorder.snapshot()[mark:])
    return WorkloadResult(
        table=table, writers=writers, inserts=inserts, rows_each=rows_each,
        expected_rows=before_rows + writers * inserts * rows_each, ok_inserts=ok_inserts[0], errors=errors,
        insert_seconds=durations, wall_seconds=wall, integrity=integrity, commit_stats=stats,
    )
