"""Spark conformance checks (SPARK-01..04): a real Iceberg Java client (Spark 3.5, Iceberg 1.10) against the
catalog under test, each workload followed by an integrity check of the table (ctk.spark.workloads).

* SPARK-01 concurrent appends: every INSERT lands once, 409s retried by the client, table intact;
* SPARK-02 concurrent UPDATE / DELETE / MERGE (overlapping and disjoint partitions) under serializable and
  snapshot isolation, copy-on-write and merge-on-read: conflicts surface as the client's validation errors,
  the table holds exactly the effects of the successful statements, never a corrupt or half-applied state;
* SPARK-03 compaction (rewrite_data_files) racing with appends and row-level changes: table intact, rows as
  expected;
* SPARK-04 lost commit answers (503 after commit, connection dropped after commit): table intact, every
  successful INSERT present once, a failed one all or nothing (the honest observation: Iceberg 1.10 sends no
  Idempotency-Key and does not retry, so the statement fails although the commit landed).

`spark` is a SparkSession made by `ctk.spark.session.spark_session`, a catalog base URL / TargetConfig, or a
`SparkTarget` (a TargetConfig plus the Spark master, settings and storage properties; then a session is made
here). `SparkTarget.scale(check)` gives the workload sizes asked for (writers, statements, rows) as the check's
keyword arguments. Missing Java, pyspark or jars give `unsupported` with the reason.
Which statements conflict is Iceberg's business and is recorded in the verdict's classification and details,
not asserted; the verdicts assert the invariants.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from ctk.core.behaviours import Behaviour, check
from ctk.core import needs
from ctk.core.verdicts import Verdict

COMBOS = (("serializable", "copy-on-write"), ("serializable", "merge-on-read"),
          ("snapshot", "copy-on-write"), ("snapshot", "merge-on-read"))


@dataclass(frozen=True)
class SparkTarget:
    """The catalog (a TargetConfig or URL) and how the kit's Spark reaches it: `master` (local[N] or
    spark://HOST:PORT), `conf` (Spark settings), `properties` (storage properties, given to the Spark catalog
    as they are: executors read and write the table files with them); `writers`, `statements`, `rows`: the
    workload sizes (None: each check's own)."""
    target: Any
    master: str | None = None
    conf: dict = field(default_factory=dict)
    properties: dict = field(default_factory=dict)
    writers: int | None = None
    statements: int | None = None
    rows: int | None = None

    def scale(self, check: str) -> dict[str, int]:
        """Keyword arguments of `check` (a function name of this module) for the sizes given."""
        names = {"check_appends": ("writers", "inserts", "rows_each"), "check_row_level": ("writers", None, None),
                 "check_compaction": (None, "appends", None), "check_lost_answers": ("writers", None, "rows_each")}
        return {k: v for k, v in zip(names.get(check, (None, None, None)), (self.writers, self.statements, self.rows))
                if k and v is not None}


def _session(spark: Any) -> Any:
    """A ctk SparkSession for `spark` (raises SparkUnavailable)."""
    if hasattr(spark, "sql"):
        return spark
    from ctk.spark.session import spark_session

    if isinstance(spark, SparkTarget):
        props = {f"spark.sql.catalog.ctkcheck.{k}": v for k, v in spark.properties.items()}
        return spark_session(spark.target, name="ctkcheck", master=spark.master, spark_conf=spark.conf,
                             extra_conf=props)
    return spark_session(spark, name="ctkcheck")


def _namespace(namespace: str | None) -> str:
    return namespace or f"ctk_spark_{uuid.uuid4().hex[:8]}"


def _guard(requirement: str, behaviour: str, spark: Any, fn: Callable[[Any], list[Verdict]]) -> list[Verdict]:
    from ctk.spark.session import SparkUnavailable

    try:
        session = _session(spark)
    except SparkUnavailable as exc:
        return [Verdict.unsupported(requirement, f"Spark is not available: {exc}", needs=needs.SPARK,
                                    behaviour=behaviour)]
    try:
        return fn(session)
    except SparkUnavailable as exc:
        return [Verdict.unsupported(requirement, f"Spark is not available: {exc}", needs=needs.SPARK,
                                    behaviour=behaviour)]
    except Exception as exc:  # noqa: BLE001 - a workload that could not run says nothing about the target
        return [Verdict.inconclusive(requirement, f"the Spark workload did not complete: {type(exc).__name__}: "
                                     f"{str(exc).splitlines()[0][:600] if str(exc) else ''}", behaviour=behaviour)]


def _stats_text(stats: dict | None) -> str:
    if not stats:
        return "no request record"
    return (f"{stats.get('attempts', 0)} commit attempts, {stats.get('conflicts', 0)} x 409, "
            f"{stats.get('server_errors', 0)} x 5xx, {stats.get('broken', 0)} broken")


def _verdict(requirement: str, behaviour: str, ok: bool, expected: str, happened: str, message: str,
             classification: str, details: dict) -> Verdict:
    if ok:
        return Verdict.ok(requirement, message, endpoint="updateTable", behaviour=behaviour,
                          classification=classification, details=details)
    return Verdict.broken(requirement, f"expected: {expected}\nhappened: {happened}", endpoint="updateTable",
                          behaviour=behaviour, classification=classification, details=details)


# ---------------------------------------------------------------------------------------------- SPARK-01

@check(requirement="SPARK-01", behaviour=Behaviour.CONCURRENT_APPENDS)
def check_appends(spark: Any, namespace: str | None = None, *, writers: int = 3, inserts: int = 2,
                  rows_each: int = 5) -> list[Verdict]:
    """SPARK-01: `writers` sessions x `inserts` concurrent INSERTs; all land once, history serial, files exist."""

    def run(s: Any) -> list[Verdict]:
        from ctk.spark.workloads import concurrent_appends

        res = concurrent_appends(s, f"{_namespace(namespace)}.spark_appends", writers=writers,
                                 rows_each=rows_each, inserts=inserts)
        st = res.commit_stats or {}
        details = {"writers": writers, "inserts": inserts, "ok_inserts": res.ok_inserts, "errors": res.errors,
                   "commit_stats": st, "integrity": res.integrity.to_dict(),
                   "wall_seconds": round(res.wall_seconds, 3)}
        total = writers * inserts
        cls = f"{res.ok_inserts}/{total} INSERTs, {_stats_text(st)}"
        problems = list(res.errors) + list(res.integrity.problems)
        if not problems and not res.ok_inserts:    # nothing passes on nothing
            return [Verdict.inconclusive("SPARK-01", "0 INSERTs succeeded: nothing to judge", endpoint="updateTable",
                                         behaviour=Behaviour.CONCURRENT_APPENDS, classification=cls,
                                         details=details)]
        return [_verdict("SPARK-01", Behaviour.CONCURRENT_APPENDS, not problems,
                         f"all {total} INSERTs succeed and land once; one linear history; every file exists",
                         "; ".join(problems[:8]),
                         f"{total} concurrent INSERTs from {writers} writers landed once each "
                         f"({st.get('conflicts', 0)} x 409 retried by the client); table intact", cls, details)]

    return _guard("SPARK-01", Behaviour.CONCURRENT_APPENDS, spark, run)


# ---------------------------------------------------------------------------------------------- SPARK-02

@check(requirement="SPARK-02", behaviour=Behaviour.SERIALIZABLE_COPY_ON_WRITE,
       also=(("SPARK-02", Behaviour.SERIALIZABLE_MERGE_ON_READ), ("SPARK-02", Behaviour.SNAPSHOT_COPY_ON_WRITE),
             ("SPARK-02", Behaviour.SNAPSHOT_MERGE_ON_READ)))
def check_row_level(spark: Any, namespace: str | None = None, *, combos: tuple = COMBOS,
                    hold_ms: int = 1500, writers: int = 2) -> list[Verdict]:
    """SPARK-02: one verdict per (isolation, mode); cases UPDATE/DELETE/MERGE x overlapping/disjoint."""
    out: list[Verdict] = []
    ns = _namespace(namespace)
    for isolation, mode in combos:
        behaviour = Behaviour(f"{isolation}/{mode}")

        def run(s: Any, isolation: str = isolation, mode: str = mode, behaviour: str = behaviour) -> list[Verdict]:
            from ctk.spark.workloads import row_level_conflicts

            table = f"{ns}.rl_{isolation[:4]}_{'cow' if mode == 'copy-on-write' else 'mor'}"
            res = row_level_conflicts(s, table, isolation=isolation, mode=mode, hold_ms=hold_ms,
                                      writers=writers)
            cases = {c.case: c.summary for c in res.cases}
            failures = Counter(o.error_class for c in res.cases for o in c.outcomes if not o.ok)
            details = {"cases": cases, "commit_stats": res.commit_stats, "integrity": res.integrity.to_dict(),
                       "errors": res.errors,
                       "failed_statements": [{"case": c.case, "writer": o.writer, "error": o.error,
                                              "class": o.error_class, "landed": o.landed}
                                             for c in res.cases for o in c.outcomes if not o.ok],
                       "problems": {c.case: c.problems for c in res.cases if c.problems},
                       "wall_seconds": round(res.wall_seconds, 3)}
            conflicted = [c.case for c in res.cases if any(not o.ok for o in c.outcomes)]
            cls = "; ".join(f"{k}: {v}" for k, v in cases.items())
            problems = list(res.errors) + list(res.integrity.problems) + [
                f"{c.case}: {p}" for c in res.cases for p in c.problems]
            n_fail = sum(failures.values())
            return [_verdict("SPARK-02", behaviour, not problems,
                             "conflicting statements fail with the client's validation errors; the table holds "
                             "exactly the effects of the successful statements; every file exists",
                             "; ".join(problems[:8]),
                             f"{len(res.cases)} cases, {n_fail} statement(s) rejected by client validation "
                             f"({dict(failures)}), table = effects of the successful statements, intact; "
                             f"{_stats_text(res.commit_stats)}", cls, {**details, "conflicted_cases": conflicted})]

        out += _guard("SPARK-02", behaviour, spark, run)
    return out


# ---------------------------------------------------------------------------------------------- SPARK-03

@check(requirement="SPARK-03", behaviour=Behaviour.COMPACTION_RACES)
def check_compaction(spark: Any, namespace: str | None = None, *, hold_ms: int = 1500,
                     appends: int = 2) -> list[Verdict]:
    """SPARK-03: rewrite_data_files racing with INSERTs, a copy-on-write UPDATE and a merge-on-read DELETE."""

    def run(s: Any) -> list[Verdict]:
        from ctk.spark.workloads import compaction_races

        res = compaction_races(s, f"{_namespace(namespace)}.spark_compaction", hold_ms=hold_ms,
                               appends=appends)
        cls = "; ".join(f"{p['name']}: {p['summary']}" for p in res.phases)
        details = {"phases": {p["name"]: {"summary": p["summary"], "commit_stats": p["commit_stats"],
                                          "problems": p["problems"],
                                          "errors": [o.error for o in p["outcomes"] if not o.ok]}
                              for p in res.phases},
                   "commit_stats": res.commit_stats, "integrity": res.integrity.to_dict(), "errors": res.errors,
                   "wall_seconds": round(res.wall_seconds, 3)}
        problems = list(res.errors) + list(res.integrity.problems) + [
            f"{p['name']}: {x}" for p in res.phases for x in p["problems"]]
        return [_verdict("SPARK-03", Behaviour.COMPACTION_RACES, not problems,
                         "rows equal the seed plus the successful statements' effects; conflicts surface as "
                         "client validation errors; every file exists; one linear history",
                         "; ".join(problems[:8]),
                         f"compaction raced with appends and row-level changes: rows as expected, table intact; "
                         f"{_stats_text(res.commit_stats)}", cls, details)]

    return _guard("SPARK-03", Behaviour.COMPACTION_RACES, spark, run)


# ---------------------------------------------------------------------------------------------- SPARK-04

@check(requirement="SPARK-04", behaviour=Behaviour.LOST_ANSWERS)
def check_lost_answers(spark: Any, namespace: str | None = None, *, writers: int = 2,
                       rows_each: int = 5) -> list[Verdict]:
    """SPARK-04: concurrent INSERTs with one commit answer lost (503 after commit; dropped connection)."""

    def run(s: Any) -> list[Verdict]:
        from ctk.spark.workloads import lost_answer_appends

        res = lost_answer_appends(s, f"{_namespace(namespace)}.spark_lost", writers=writers,
                                  rows_each=rows_each)
        keyed = res.extra.get("keyed_commits", 0)
        cls = "; ".join(f"{p['name']}: {p['summary']}" for p in res.phases) + (
            f"; client sent Idempotency-Key on {keyed} commit(s)" if keyed else "; client sent no Idempotency-Key")
        details = {"phases": {p["name"]: {"summary": p["summary"], "commit_stats": p["commit_stats"],
                                          "injected": p["injected"], "problems": p["problems"],
                                          "errors": [o.error for o in p["outcomes"] if not o.ok],
                                          "landed_unacknowledged": sum(1 for o in p["outcomes"]
                                                                       if not o.ok and o.landed)}
                              for p in res.phases},
                   "keyed_commits": keyed, "commit_stats": res.commit_stats,
                   "integrity": res.integrity.to_dict(), "errors": res.errors,
                   "wall_seconds": round(res.wall_seconds, 3)}
        problems = list(res.errors) + list(res.integrity.problems) + [
            f"{p['name']}: {x}" for p in res.phases for x in p["problems"]]
        not_injected = [p["name"] for p in res.phases if not p["injected"]]
        if not problems and not_injected:
            return [Verdict.inconclusive("SPARK-04", f"the fault was never injected for {not_injected} (no commit "
                                         "matched)", endpoint="updateTable", behaviour=Behaviour.LOST_ANSWERS,
                                         classification=cls, details=details)]
        unacked = sum(d["landed_unacknowledged"] for d in details["phases"].values())
        return [_verdict("SPARK-04", Behaviour.LOST_ANSWERS, not problems,
                         "every successful INSERT present once, a failed one all or nothing, table intact",
                         "; ".join(problems[:8]),
                         f"lost answers: table intact, no duplicate or partial INSERT; {unacked} statement(s) "
                         "failed although their commit landed (the client neither sends keys nor retries)"
                         if not keyed else "lost answers: table intact, no duplicate or partial INSERT",
                         cls, details)]

    return _guard("SPARK-04", Behaviour.LOST_ANSWERS, spark, run)


def run_all(spark: Any, namespace: str | None = None, *, combos: tuple = COMBOS) -> list[Verdict]:
    """All Spark checks on one session (made here when `spark` is a URL or TargetConfig)."""
    from ctk.spark.session import SparkUnavailable

    try:
        session = _session(spark)
    except SparkUnavailable as exc:
        return [Verdict.unsupported(r, f"Spark is not available: {exc}", needs=needs.SPARK) for r in
                ("SPARK-01", "SPARK-02", "SPARK-03", "SPARK-04")]
    ns = _namespace(namespace)
    return (check_appends(session, ns) + check_row_level(session, ns, combos=combos)
            + check_compaction(session, ns) + check_lost_answers(session, ns))
