"""Spark workloads against a catalog under test, each followed by an integrity check of the table
(`ctk.spark.integrity.check_table_integrity`: files exist, one linear history, no lost or duplicated row).

`concurrent_appends(spark, table, writers=2, inserts=1, rows_each=10)`: `writers` threads start together
(a barrier) and each runs `inserts` INSERT statements of `rows_each` rows; appends never conflict logically,
so the Java client must turn every 409 of optimistic concurrency into a refresh-and-retry; afterwards the row
count and the append snapshots must match the successful INSERTs. `row_level_conflicts`, `compaction_races`
and `lost_answer_appends` are the other three workloads.

`spark` may be a SparkSession (each writer gets `newSession()` and so its own catalog instance, like
separate clients), a callable returning a SparkSession per writer, or a catalog base URL (then
`ctk.spark.session.spark_session(url)` makes the sessions).
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator

from ctk.spark.integrity import IntegrityReport, check_table_integrity

ID_STRIDE_WRITER = 1_000_000_000
ID_STRIDE_INSERT = 100_000


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
                    errors.append(f"writer {w} insert {k}: {_first_line(exc, 500)}")
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


# ===================================================================================== conflict workloads
#
# The workloads below run their writers through a chain the kit controls:
#
#     Spark writer sessions -> Interposer (holds or breaks commits) -> RequestRecorder -> catalog
#
# so the recorder sees what the catalog answered to every attempt that reached it, and the interposer decides
# what the client hears. The "hold" delays every commit POST at the interposer: every writer has planned its
# statement (read the table) before the first commit lands, which makes conflicts happen rather than hoping
# for them. The main session (setup, checks) talks to the catalog through its own recorder.

COMMIT_PATH_RE = r"/namespaces/[^/]+/tables/[^/?]+(\?.*)?$"

_VALIDATION_MARKERS = (
    "ValidationException", "Found conflicting files", "Missing required files to delete",
    "Found new conflicting delete files", "Cannot commit, found new", "found new delete",
    "Found conflicting deleted files", "Cannot commit rewrite", "conflicting",
)


def classify_error(text: str) -> str:
    """What kind of failure a Spark statement's error is: `validation` (Iceberg's conflict validations),
    `commit-failed` (409s until the retries ran out), `commit-state-unknown` (5xx or no answer on a commit),
    `transport` (no complete answer: Iceberg 1.10 reports a dropped connection on a commit as a plain
    RESTException, not as CommitStateUnknownException), `service` (another 5xx), `other`."""
    if "CommitStateUnknownException" in text:
        return "commit-state-unknown"
    if any(m in text for m in _VALIDATION_MARKERS):
        return "validation"
    if "CommitFailedException" in text:
        return "commit-failed"
    if "RESTException" in text and "Error occurred while processing" in text:
        return "transport"  # the client got no (complete) answer: the HTTP exchange itself failed
    if "ServiceUnavailableException" in text or "ServiceFailureException" in text or "BadGateway" in text:
        return "service"
    return "other"


def _first_line(exc: BaseException, limit: int = 600) -> str:
    text = str(exc).strip()
    java = [ln.strip() for ln in text.splitlines() if "org.apache.iceberg" in ln and "Exception" in ln]
    line = java[0] if java else (text.splitlines()[0] if text else "")
    return f"{type(exc).__name__}: {line}"[:limit]


@dataclass
class StatementOutcome:
    writer: int
    kind: str                   # update | delete | merge | insert | rewrite
    sql: str
    ok: bool
    seconds: float
    error: str | None = None
    error_class: str | None = None  # see classify_error
    landed: bool | None = None      # for failed statements whose effect was looked for: did it land?


@dataclass
class Chain:
    """Recorder + interposer between per-writer sessions and the catalog (see above)."""

    main: Any
    catalog: str
    recorder: Any
    interposer: Any
    uri: str

    @classmethod
    def open(cls, main: Any) -> "Chain":
        from ctk.interposer import Interposer
        from ctk.spark.session import RequestRecorder, session_info

        info = session_info(main)
        recorder = RequestRecorder(info.catalog_url)
        ip = Interposer(upstream=recorder.address)
        try:
            host, iport = ip.start()
        except BaseException:
            recorder.stop()
            raise
        return cls(main, info.catalog, recorder, ip, f"http://{host}:{iport}{recorder.upstream_path}")

    def session(self) -> Any:
        """A writer session (own catalog instance) that reaches the catalog through the chain."""
        from ctk.spark.session import SessionInfo, session_info

        info = session_info(self.main)
        s = self.main.newSession()
        conf = dict(info.conf)
        conf[f"spark.sql.catalog.{self.catalog}.uri"] = self.uri
        for k, v in conf.items():
            s.conf.set(k, v)
        s._ctk_info = SessionInfo(info.catalog, info.catalog_url, self.uri, self.recorder, 0.0, conf)
        return s

    @property
    def faults(self) -> Any:
        """The interposer's faults by intention (ctk.interposer.faults.HttpFaults)."""
        from ctk.interposer.faults import HttpFaults

        return HttpFaults(self.interposer)

    @staticmethod
    def commits(keyed: bool = False) -> Any:
        """What selects the commit POSTs (``keyed``: only those that carry an Idempotency-Key)."""
        from ctk.interposer import HttpMatch

        return HttpMatch(method="POST", path=COMMIT_PATH_RE, header="Idempotency-Key" if keyed else None)

    def hold_commits(self, ms: int, gather: int = 0) -> str | None:
        """Hold the commits until `gather` of them are held (then they go together; later ones pass), `ms` at the
        longest; without `gather`, every commit `ms`."""
        if ms <= 0:
            return None
        return self.faults.hold_requests(self.commits(), ms / 1000.0, gather=gather)

    def count_keyed_commits(self) -> str:
        """A rule that changes nothing on commits that carry Idempotency-Key: its match count tells whether
        keys are sent (`keyed_commits`)."""
        return self.faults.count_matching(self.commits(keyed=True), name="ctk_keyed_commits")

    def keyed_commits(self, rule: str) -> int:
        return self.faults.matched(rule)

    def lose_commit_answer(self, mode: str, name: str) -> str:
        """The next commit lands at the catalog and its answer is lost (`mode`: "503", "500", "drop", "reset")."""
        return self.faults.lose_answer(self.commits(), mode, name=name)

    def applied(self, rule: str) -> int:
        return self.faults.applied(rule)

    def remove(self, name: str | None) -> None:
        self.faults.remove(name)

    def stats(self, mark: int = 0) -> dict[str, int]:
        from ctk.spark.session import commit_stats

        return commit_stats(self.recorder.snapshot()[mark:])

    def mark(self) -> int:
        return len(self.recorder.snapshot())

    def close(self) -> None:
        try:
            self.interposer.stop()
        finally:
            self.recorder.stop()


def _run_concurrently(jobs: list[Callable[[], None]], timeout: float) -> list[str]:
    """Start `jobs` together (a barrier), wait at most `timeout`; returns problems (timeouts)."""
    barrier = threading.Barrier(len(jobs))
    problems: list[str] = []

    def wrap(fn: Callable[[], None], i: int) -> None:
        try:
            barrier.wait(timeout=timeout)
        except threading.BrokenBarrierError:
            problems.append(f"job {i}: barrier broken")
            return
        fn()

    threads = [threading.Thread(target=wrap, args=(fn, i), daemon=True, name=f"ctk-job-{i}")
               for i, fn in enumerate(jobs)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in threads):
        problems.append(f"statements still running after {timeout}s")
    return problems


def _execute(session: Any, writer: int, kind: str, sql: str) -> StatementOutcome:
    t0 = time.monotonic()
    try:
        session.sql(sql).collect()
    except Exception as exc:  # noqa: BLE001 - recorded and classified
        text = str(exc)
        return StatementOutcome(writer, kind, sql, False, time.monotonic() - t0, _first_line(exc),
                                classify_error(text))
    return StatementOutcome(writer, kind, sql, True, time.monotonic() - t0)


def _create_ns(spark: Any, table: str) -> None:
    parts = table.split(".")
    if len(parts) >= 2:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {'.'.join(parts[:-1])}")


def _read_rows(spark: Any, table: str) -> dict[int, tuple[int, int]]:
    return {r.id: (r.part, r.v) for r in spark.sql(f"SELECT id, part, v FROM {table}").collect()}


def _diff(actual: dict[int, tuple[int, int]], expected: dict[int, tuple[int, int]], limit: int = 6) -> list[str]:
    out = []
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    wrong = sorted(i for i in set(actual) & set(expected) if actual[i] != expected[i])
    if missing:
        out.append(f"{len(missing)} rows missing (ids {missing[:limit]})")
    if extra:
        out.append(f"{len(extra)} unexpected rows (ids {extra[:limit]})")
    if wrong:
        out.append(f"{len(wrong)} rows with wrong values: "
                   + ", ".join(f"id {i}: {actual[i]} != expected {expected[i]}" for i in wrong[:limit]))
    return out


def _values_sql(rows: list[tuple[int, int, int]]) -> str:
    return ", ".join(f"(CAST({i} AS BIGINT), {p}, {v})" for i, p, v in rows)


# --------------------------------------------------------------------------------- row-level conflicts

ROW_OPS = ("update", "delete", "merge")
ROWS_PER_PART = 4
PART_STRIDE = 100


@dataclass
class CaseResult:
    case: str                  # e.g. "update/overlap"
    op: str
    overlap: bool
    isolation: str
    mode: str
    outcomes: list[StatementOutcome]
    problems: list[str]
    commit_stats: dict[str, int] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def summary(self) -> str:
        return ", ".join(f"w{o.writer} " + ("ok" if o.ok else o.error_class or "failed") for o in self.outcomes)


@dataclass
class RowLevelResult:
    table: str
    isolation: str
    mode: str
    cases: list[CaseResult]
    integrity: IntegrityReport
    errors: list[str]
    wall_seconds: float
    commit_stats: dict[str, int] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors and self.integrity.ok and all(c.ok for c in self.cases)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        for c, cd in zip(self.cases, d["cases"]):
            cd["ok"], cd["summary"] = c.ok, c.summary
        return d


def _row_statement(op: str, table: str, writer: int, part: int, model: dict[int, tuple[int, int]]
                   ) -> tuple[str, Callable[[dict[int, tuple[int, int]]], None], list[int]]:
    """(SQL, effect on a model, ids it touches). Effects of different writers commute by construction:
    updates add distinct powers of ten, deletes remove disjoint rows (id parity = writer), merges add and
    insert distinct new ids; so a set of successful statements has one expected result in any order."""
    delta = 10 ** writer
    ids = sorted(i for i, (p, _) in model.items() if p == part)
    if op == "update":
        sql = f"UPDATE {table} SET v = v + {delta} WHERE part = {part}"

        def effect(m: dict) -> None:
            for i in ids:
                if i in m:
                    m[i] = (m[i][0], m[i][1] + delta)
        return sql, effect, ids
    if op == "delete":
        mine = [i for i in ids if i % 2 == writer % 2]
        sql = f"DELETE FROM {table} WHERE part = {part} AND id % 2 = {writer % 2}"

        def effect(m: dict) -> None:
            for i in mine:
                m.pop(i, None)
        return sql, effect, mine
    if op == "merge":
        new_id = part * PART_STRIDE + 50 + writer
        source = [(i, part, delta) for i in ids] + [(new_id, part, delta)]
        sql = (f"MERGE INTO {table} t USING (SELECT * FROM VALUES {_values_sql(source)} AS s(id, part, v)) s "
               f"ON t.id = s.id AND t.part = {part} "
               "WHEN MATCHED THEN UPDATE SET t.v = t.v + s.v "
               "WHEN NOT MATCHED THEN INSERT (id, part, v) VALUES (s.id, s.part, s.v)")

        def effect(m: dict) -> None:
            for i in ids:
                if i in m:
                    m[i] = (m[i][0], m[i][1] + delta)
            m[new_id] = (part, delta)
        return sql, effect, ids + [new_id]
    raise ValueError(f"unknown row-level operation {op!r}")


@contextlib.contextmanager
def _reported(chain: "Chain", errors: list[str]) -> Iterator[dict]:
    """A workload's body: an exception is reported in ``errors`` (first line), not raised; the chain closes
    afterwards in every case, its statistics kept in the yielded dict."""
    stats: dict = {}
    try:
        yield stats
    except Exception as exc:  # noqa: BLE001 - reported
        errors.append(_first_line(exc, 500))
    finally:
        stats.update(chain.stats())
        chain.close()


def create_partitioned_table(spark: Any, table: str, parts: list[int], *, props: dict[str, str],
                             rows_per_part: int = ROWS_PER_PART, inserts: int = 1) -> dict[int, tuple[int, int]]:
    """`(id bigint, part int, v int)` partitioned by `part`, format v2, seeded with `rows_per_part` rows per
    partition in `inserts` INSERTs (more INSERTs, more files per partition); returns the model {id: (part, v)}."""
    _create_ns(spark, table)
    tbl = ", ".join(f"'{k}'='{v}'" for k, v in {"format-version": "2", **props}.items())
    spark.sql(f"CREATE TABLE {table} (id BIGINT, part INT, v INT) USING iceberg PARTITIONED BY (part) "
              f"TBLPROPERTIES ({tbl})")
    model: dict[int, tuple[int, int]] = {}
    for k in range(inserts):
        rows = [(p * PART_STRIDE + k * rows_per_part + j, p, 0) for p in parts for j in range(rows_per_part)]
        spark.sql(f"INSERT INTO {table} VALUES {_values_sql(rows)}")
        model.update({i: (p, v) for i, p, v in rows})
    return model


def row_level_conflicts(spark: Any, table: str, *, isolation: str = "serializable", mode: str = "copy-on-write",
                        ops: tuple[str, ...] = ROW_OPS, overlaps: tuple[bool, ...] = (True, False),
                        writers: int = 2, hold_ms: int = 1500, timeout: float = 240.0) -> RowLevelResult:
    """Concurrent UPDATE / DELETE / MERGE from `writers` sessions on a partitioned table with
    `write.{update,delete,merge}.isolation-level = isolation` and `.mode = mode`.

    One case per (op, overlap): with overlap every writer targets the same partition (same data files), else
    each writer its own partition. Commits are held `hold_ms` by the interposer so every writer plans on the
    same snapshot. After each case the whole table is compared with a model holding the effects of exactly
    the statements that succeeded (a failed statement must leave no effect, a successful one its effect once);
    every failure must be a conflict the client detected (`validation` or `commit-failed`), never a corrupt
    table. At the end: `check_table_integrity` (files exist, one linear history, no duplicate ids).
    Which statements conflict is recorded (CaseResult.summary), not asserted: Iceberg's rules decide.
    """
    from ctk.spark.session import session_info

    main = spark
    if isolation not in ("serializable", "snapshot"):
        raise ValueError("isolation must be serializable or snapshot")
    if mode not in ("copy-on-write", "merge-on-read"):
        raise ValueError("mode must be copy-on-write or merge-on-read")
    cases_plan = [(op, ov) for op in ops for ov in overlaps]
    # partitions: overlap cases use one, disjoint cases one per writer
    parts_of: dict[tuple[str, bool], list[int]] = {}
    nxt = 0
    for op, ov in cases_plan:
        n = 1 if ov else writers
        parts_of[(op, ov)] = list(range(nxt, nxt + n))
        nxt += n
    props = {}
    for op in ("update", "delete", "merge"):
        props[f"write.{op}.mode"] = mode
        props[f"write.{op}.isolation-level"] = isolation
    t_start = time.monotonic()
    model = create_partitioned_table(main, table, list(range(nxt)), props=props)
    main_rec = session_info(main).recorder
    main_mark = len(main_rec.snapshot()) if main_rec else 0
    chain = Chain.open(main)
    cases: list[CaseResult] = []
    errors: list[str] = []
    with _reported(chain, errors) as stats:
        sessions = [chain.session() for _ in range(writers)]
        for op, ov in cases_plan:
            parts = parts_of[(op, ov)]
            plans = [_row_statement(op, table, w, parts[0] if ov else parts[w], model) for w in range(writers)]
            outcomes: list[StatementOutcome | None] = [None] * writers
            mark = chain.mark()
            hold = chain.hold_commits(hold_ms, gather=writers)   # each writer's first commit, then all go

            def job(w: int) -> Callable[[], None]:
                def run() -> None:
                    outcomes[w] = _execute(sessions[w], w, op, plans[w][0])
                return run

            try:
                problems = _run_concurrently([job(w) for w in range(writers)], timeout)
            finally:
                chain.remove(hold)
            outs = [o for o in outcomes if o is not None]
            expected = dict(model)
            for o in outs:
                if o.ok:
                    plans[o.writer][1](expected)
            actual = _read_rows(main, table)
            diff = _diff(actual, expected)
            if diff:
                problems.append("table content is not the effect of exactly the successful statements: "
                                + "; ".join(diff))
                for o in outs:  # say which failed statements left (part of) their effect
                    if not o.ok:
                        alone = dict(model)
                        plans[o.writer][1](alone)
                        touched = plans[o.writer][2]
                        o.landed = all(actual.get(i) == alone.get(i) for i in touched)
            for o in outs:
                if not o.ok and o.error_class not in ("validation", "commit-failed"):
                    problems.append(f"writer {o.writer} failed with an error that is not a conflict the client "
                                    f"detected: {o.error}")
            cases.append(CaseResult(f"{op}/{'overlap' if ov else 'disjoint'}", op, ov, isolation, mode, outs,
                                    problems, chain.stats(mark)))
            model = actual  # continue from what is there (a failed case does not cascade)
    integrity = check_table_integrity(main, table, expected_rows=len(model))
    if main_rec is not None:
        from ctk.spark.session import commit_stats

        main_stats = commit_stats(main_rec.snapshot()[main_mark:])
        stats = {k: stats.get(k, 0) + main_stats.get(k, 0) for k in stats}
    return RowLevelResult(table, isolation, mode, cases, integrity, errors, time.monotonic() - t_start, stats)


# ------------------------------------------------------------------------------------------- compaction


@dataclass
class RaceResult:
    """One workload of several phases, each a set of concurrent statements, then checks."""

    table: str
    phases: list[dict]           # {"name", "outcomes": [StatementOutcome...], "problems": [...], "commit_stats"}
    integrity: IntegrityReport
    errors: list[str]
    wall_seconds: float
    commit_stats: dict[str, int] | None = None
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors and self.integrity.ok and all(not p["problems"] for p in self.phases)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def _phase(chain: Chain, main: Any, table: str, name: str, statements: list[tuple[Any, int, str, str, Callable | None]],
           model: dict, hold_ms: int, timeout: float, allowed: tuple[str, ...]) -> tuple[dict, dict]:
    """Run statements (session, writer, kind, sql, effect-on-model or None) concurrently; compare the table
    with the model plus the effects of the successful ones. Returns (phase record, new model)."""
    outcomes: list[StatementOutcome | None] = [None] * len(statements)
    mark = chain.mark()
    hold = chain.hold_commits(hold_ms, gather=len(statements))   # each statement's first commit, then all go

    def job(k: int) -> Callable[[], None]:
        s, w, kind, sql, _ = statements[k]

        def run() -> None:
            outcomes[k] = _execute(s, w, kind, sql)
        return run

    try:
        problems = _run_concurrently([job(k) for k in range(len(statements))], timeout)
    finally:
        chain.remove(hold)
    outs = [o for o in outcomes if o is not None]
    expected = dict(model)
    for k, o in enumerate(outcomes):
        apply = statements[k][4]
        if o is not None and o.ok and apply is not None:
            apply(expected)
    actual = _read_rows(main, table)
    diff = _diff(actual, expected)
    if diff:
        problems.append("row content differs from the effects of the successful statements: " + "; ".join(diff))
    for o in outs:
        if not o.ok and o.error_class not in allowed:
            problems.append(f"{o.kind} (writer {o.writer}) failed with an error that is not a detected conflict: "
                            f"{o.error}")
    return ({"name": name, "outcomes": outs, "problems": problems, "commit_stats": chain.stats(mark),
             "summary": ", ".join(f"{o.kind} " + ("ok" if o.ok else o.error_class or "failed") for o in outs)},
            actual)


def compaction_races(spark: Any, table: str, *, appends: int = 2, hold_ms: int = 1500,
                     timeout: float = 240.0) -> RaceResult:
    """`CALL <catalog>.system.rewrite_data_files` racing with (1) INSERTs, (2) a copy-on-write UPDATE and
    (3) a merge-on-read DELETE of the rows being compacted.

    The table (2 partitions, 3 files each) gets `write.update.mode=copy-on-write`, `write.delete.mode=
    merge-on-read`. Each phase runs the statements together with commits held; afterwards the row content
    must equal the seed plus the effects of the successful statements (compaction has none), failures must be
    conflicts the client detected; at the end `check_table_integrity`. Appends and compaction do not conflict
    in Iceberg's rules; compaction and a row-level change of the same files do (one of them fails): recorded.
    """
    from ctk.spark.session import session_info

    main = spark
    t_start = time.monotonic()
    props = {"write.update.mode": "copy-on-write", "write.delete.mode": "merge-on-read",
             "write.merge.mode": "copy-on-write"}
    model = create_partitioned_table(main, table, [0, 1], props=props, rows_per_part=3, inserts=3)
    catalog = session_info(main).catalog
    chain = Chain.open(main)
    phases: list[dict] = []
    errors: list[str] = []
    rewrite = (f"CALL {catalog}.system.rewrite_data_files(table => '{table}', "
               "options => map('rewrite-all', 'true'))")
    with _reported(chain, errors) as stats:
        s = [chain.session() for _ in range(1 + appends)]
        # (1) compaction vs appends
        stmts: list[tuple[Any, int, str, str, Callable | None]] = [(s[0], 0, "rewrite", rewrite, None)]
        for a in range(appends):
            rows = [(500 + 10 * a + j, j % 2, 7) for j in range(4)]

            def eff(m: dict, rows: list = rows) -> None:
                m.update({i: (p, v) for i, p, v in rows})
            stmts.append((s[1 + a], 1 + a, "insert", f"INSERT INTO {table} VALUES {_values_sql(rows)}", eff))
        rec, model = _phase(chain, main, table, "rewrite+appends", stmts, model, hold_ms, timeout,
                            ("validation", "commit-failed"))
        phases.append(rec)

        # a few more files so the next rewrites have work
        main.sql(f"INSERT INTO {table} VALUES {_values_sql([(600 + j, j % 2, 0) for j in range(4)])}")
        model = _read_rows(main, table)

        # (2) compaction vs a copy-on-write UPDATE of partition 0
        ids0 = [i for i, (p, _) in model.items() if p == 0]

        def upd(m: dict) -> None:
            for i in ids0:
                m[i] = (m[i][0], m[i][1] + 1000)
        stmts = [(s[0], 0, "rewrite", rewrite, None),
                 (s[1], 1, "update", f"UPDATE {table} SET v = v + 1000 WHERE part = 0", upd)]
        rec, model = _phase(chain, main, table, "rewrite+update(copy-on-write)", stmts, model, hold_ms, timeout,
                            ("validation", "commit-failed"))
        phases.append(rec)
        main.sql(f"INSERT INTO {table} VALUES {_values_sql([(700 + j, j % 2, 0) for j in range(4)])}")
        model = _read_rows(main, table)

        # (3) compaction vs a merge-on-read DELETE in partition 1
        gone = [i for i, (p, _) in model.items() if p == 1 and i % 2 == 1]

        def dele(m: dict) -> None:
            for i in gone:
                m.pop(i, None)
        stmts = [(s[0], 0, "rewrite", rewrite, None),
                 (s[1], 1, "delete", f"DELETE FROM {table} WHERE part = 1 AND id % 2 = 1", dele)]
        rec, model = _phase(chain, main, table, "rewrite+delete(merge-on-read)", stmts, model, hold_ms, timeout,
                            ("validation", "commit-failed"))
        phases.append(rec)
    integrity = check_table_integrity(main, table, expected_rows=len(model))
    return RaceResult(table, phases, integrity, errors, time.monotonic() - t_start, stats)


# ------------------------------------------------------------------------------------------ lost answers

LOST_FAULTS = ("503", "drop")
LOST_FAULT_TEXT = {"503": "answer replaced by 503", "500": "answer replaced by 500",
                   "drop": "connection dropped without an answer", "reset": "connection reset"}


def lost_answer_appends(spark: Any, table: str, *, writers: int = 2, rows_each: int = 5,
                        faults: tuple = LOST_FAULTS, timeout: float = 240.0) -> RaceResult:
    """Concurrent INSERTs with the answer of one commit lost (per fault: ``"503"`` - the catalog committed, the
    client hears 503 - or ``"drop"`` - the catalog committed, the connection closes without an answer), once,
    on POST .../tables/{t}.

    Iceberg 1.10 sends no Idempotency-Key and does not retry a POST commit on 5xx, so the statement that
    lost its answer fails (CommitStateUnknownException after the 503; a plain RESTException "Error occurred
    while processing POST request" after the dropped connection). Recorded per fault: which statements failed and
    how, whether the failed statement's rows are in the table anyway (`landed`), whether the client sent
    keys (a rule that changes nothing counts the commits with Idempotency-Key) and how many attempts reached the
    catalog. Required: every successful INSERT present exactly once, a failed one all or nothing (never
    partial, never twice), and the table intact (every manifest list, manifest and data file exists: a client
    that cleaned up after an unknown commit state would have removed files of a landed commit).
    """
    main = spark
    t_start = time.monotonic()
    _create_ns(main, table)
    main.sql(f"CREATE TABLE {table} (id BIGINT, part INT, v INT) USING iceberg")
    chain = Chain.open(main)
    phases: list[dict] = []
    errors: list[str] = []
    model: dict[int, tuple[int, int]] = {}
    extra: dict = {}
    appends = 0
    with _reported(chain, errors) as stats:
        keyed = chain.count_keyed_commits()
        sessions = [chain.session() for _ in range(writers)]
        for fi, mode in enumerate(faults):
            mark = chain.mark()
            lost = chain.lose_commit_answer(mode, name=f"ctk_lost_{fi}")
            rows_of = {w: [(fi * ID_STRIDE_INSERT + w * 1000 + j, w, fi) for j in range(rows_each)]
                       for w in range(writers)}
            outcomes: list[StatementOutcome | None] = [None] * writers

            def job(w: int) -> Callable[[], None]:
                def run() -> None:
                    outcomes[w] = _execute(sessions[w], w, "insert",
                                           f"INSERT INTO {table} VALUES {_values_sql(rows_of[w])}")
                return run

            problems = _run_concurrently([job(w) for w in range(writers)], timeout)
            injected = chain.applied(lost)
            chain.remove(lost)
            outs = [o for o in outcomes if o is not None]
            actual = _read_rows(main, table)
            expected = dict(model)
            for o in outs:
                present = [i for i, _, _ in rows_of[o.writer] if i in actual]
                if o.ok:
                    appends += 1
                    expected.update({i: (p, v) for i, p, v in rows_of[o.writer]})
                else:
                    o.landed = len(present) == rows_each
                    if present and len(present) != rows_each:
                        problems.append(f"writer {o.writer}'s failed INSERT is partially present "
                                        f"({len(present)}/{rows_each} rows)")
                    if o.landed:
                        appends += 1
                        expected.update({i: (p, v) for i, p, v in rows_of[o.writer]})
                    if o.error_class not in ("commit-state-unknown", "transport", "service", "commit-failed"):
                        problems.append(f"writer {o.writer} failed with an unexpected error: {o.error}")
            diff = _diff(actual, expected)
            if diff:
                problems.append("rows differ from the successful INSERTs plus the failed ones that landed: "
                                + "; ".join(diff))
            st = chain.stats(mark)
            phases.append({"name": LOST_FAULT_TEXT.get(mode, mode), "outcomes": outs,
                           "problems": problems, "commit_stats": st, "injected": injected,
                           "summary": ", ".join(f"w{o.writer} " + ("ok" if o.ok else f"{o.error_class}"
                                                                   + (" (landed)" if o.landed else " (not landed)"))
                                                for o in outs)})
            model = actual
        extra["keyed_commits"] = chain.keyed_commits(keyed)
        chain.remove(keyed)
    integrity = check_table_integrity(main, table, expected_rows=len(model), expected_appends=appends)
    return RaceResult(table, phases, integrity, errors, time.monotonic() - t_start, stats, extra)
