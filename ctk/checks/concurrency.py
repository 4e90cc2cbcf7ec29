"""Commit concurrency checks (plain HTTP, any catalog): requirements, races, serial history, transactions.

* OCC-01  every requirement type, violated, gives 409 CommitFailedException and changes nothing;
* OCC-02  N writers commit on the same base at once: exactly one wins, the others get 409;
* OCC-03  N x M appends with refresh and retry: N x M snapshots in one linear chain, sequence numbers rising;
* HIST-01 / HIST-02  the recorded history against the final state: nothing acknowledged is lost, nothing
          applied twice (Jepsen-style, ok / fail / info);
* INTEG-01 every snapshot's manifest list and manifests exist after the workload;
* OCC-04  a multi-table transaction is all or nothing, also when one table's requirement fails.

Appends are real: pyiceberg writes the data files and manifest lists (ctk.history.writer.stage_append) and
the kit sends the commit body itself, so the outcome of every attempt is recorded, not guessed.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from ctk.checks.common import describe, error_of, guarded
from ctk.core.verdicts import Verdict
from ctk.history.checkers import check_table
from ctk.history.integrity import check_table_integrity
from ctk.history.recorder import History
from ctk.history.state import read_table_state
from ctk.history.writer import MARKER_KEY, StageError, stage_append
from ctk.http.client import table_path
from ctk.http.endpoints import Catalog, ident, set_properties_update

REQUIREMENT_TYPES = (
    "assert-create", "assert-table-uuid", "assert-ref-snapshot-id", "assert-ref-snapshot-id-null",
    "assert-last-assigned-field-id", "assert-current-schema-id", "assert-last-assigned-partition-id",
    "assert-default-spec-id", "assert-default-sort-order-id",
)
OCC_MARK = "ctk.occ"


def _rows(marker: str) -> Any:
    import pyarrow as pa

    schema = pa.schema([pa.field("id", pa.int64(), nullable=True), pa.field("data", pa.string(), nullable=True)])
    return pa.Table.from_pylist([{"id": 1, "data": marker}], schema=schema)


def _violated(kind: str, meta: dict) -> dict:
    """A requirement of ``kind`` that the table's current metadata does NOT satisfy."""
    current = None
    for ref, spec in (meta.get("refs") or {}).items():
        if ref == "main":
            current = spec.get("snapshot-id")
    return {
        "assert-create": {"type": "assert-create"},
        "assert-table-uuid": {"type": "assert-table-uuid", "uuid": str(uuid.uuid4())},
        "assert-ref-snapshot-id": {"type": "assert-ref-snapshot-id", "ref": "main",
                                   "snapshot-id": (current or 0) + 7919},
        # main exists (the table has a snapshot), so "main must not exist" does not hold
        "assert-ref-snapshot-id-null": {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
        "assert-last-assigned-field-id": {"type": "assert-last-assigned-field-id",
                                          "last-assigned-field-id": int(meta.get("last-column-id", 0)) + 100},
        "assert-current-schema-id": {"type": "assert-current-schema-id",
                                     "current-schema-id": int(meta.get("current-schema-id", 0)) + 100},
        "assert-last-assigned-partition-id": {"type": "assert-last-assigned-partition-id",
                                              "last-assigned-partition-id": int(meta.get("last-partition-id", 999)) + 100},
        "assert-default-spec-id": {"type": "assert-default-spec-id",
                                   "default-spec-id": int(meta.get("default-spec-id", 0)) + 100},
        "assert-default-sort-order-id": {"type": "assert-default-sort-order-id",
                                         "default-sort-order-id": int(meta.get("default-sort-order-id", 0)) + 100},
    }[kind]


def _commit(ctx: Any, staged: Any, label: str) -> Any:
    return ctx.client.request("POST", staged.path, json=staged.body, label=label)


def _new_table(ctx: Any, stem: str, with_snapshot: bool) -> str:
    name = ctx.unique(stem)
    Catalog(ctx.client).create_table(ctx.namespace, name)
    if with_snapshot:
        staged = stage_append(ctx.client, ctx.namespace, name, data=_rows("seed"), marker="seed")
        ex = _commit(ctx, staged, "setup: first append")
        if ex.status != 200:
            from ctk.http.endpoints import PrerequisiteError

            raise PrerequisiteError(f"setup: first append answered {describe(ex)}", ex)
    return name


# ------------------------------------------------------------------------------------------------ OCC-01

@guarded("OCC-01", "requirements", needs_support=False, needs_endpoint=False)
def _requirement_violated(run: Any, ctx: Any, endpoint: Any, kind: str, name: str) -> Verdict:
    client = ctx.client
    before = client.load_table(ctx.namespace, name)
    meta = (before or {}).get("metadata") or {}
    req = _violated(kind, meta)
    mark = f"{kind}-{uuid.uuid4().hex[:6]}"
    body = {"identifier": ident(ctx.namespace, name), "requirements": [req],
            "updates": [set_properties_update({OCC_MARK: mark})]}
    ex = client.request("POST", table_path(ctx.namespace, name), json=body, label=f"commit violating {kind}")
    after = client.load_table(ctx.namespace, name)
    changed = ((after or {}).get("metadata-location") != (before or {}).get("metadata-location")
               or ((after or {}).get("metadata") or {}).get("properties", {}).get(OCC_MARK) == mark)
    etype = error_of(ex).get("type") if ex.status else None
    cls = f"{ex.status} {etype}" if ex.status else (ex.error or "no answer")
    if changed:
        return run.broken("409 CommitFailedException and the table unchanged",
                          f"the commit was applied although `{kind}` did not hold ({describe(ex)})", cls)
    if ex.status != 409 or etype != "CommitFailedException":
        return run.broken("409 CommitFailedException", f"{describe(ex)} (the table is unchanged)", cls)
    return run.ok(f"`{kind}` violated: 409 CommitFailedException, table unchanged", cls)


def check_requirements(ctx: Any) -> list[Verdict]:
    """OCC-01 for every requirement type (one verdict each, behaviour ``requirement:<type>``)."""
    from ctk.http.endpoints import PrerequisiteError

    out: list[Verdict] = []
    try:
        name = _new_table(ctx, "occ_req", with_snapshot=True)
    except (PrerequisiteError, StageError) as exc:
        return [Verdict.inconclusive("OCC-01", f"could not prepare the table: {exc}", endpoint="updateTable",
                                     behaviour="requirements")]
    for kind in REQUIREMENT_TYPES:
        for v in _requirement_violated(ctx, None, kind, name, behaviour=f"requirement:{kind}"):
            v.endpoint = "updateTable"
            out.append(v)
    return out


# ------------------------------------------------------------------------------------------------ OCC-02

@guarded("OCC-02", "race", needs_support=False, needs_endpoint=False)
def _race(run: Any, ctx: Any, endpoint: Any, writers: int) -> Verdict:
    name = _new_table(ctx, "occ_race", with_snapshot=True)
    base = ctx.client.load_table(ctx.namespace, name)
    staged = [stage_append(ctx.client, ctx.namespace, name, data=_rows(f"race-{i}"), marker=f"race-{i}", loaded=base)
              for i in range(writers)]
    barrier = threading.Barrier(writers, timeout=30)
    results: list[Any] = [None] * writers

    def go(i: int) -> None:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass
        results[i] = _commit(ctx, staged[i], f"racing writer {i}")

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=ctx.client.target.timeout * 3 + 30)
    statuses = [r.status if r is not None else None for r in results]
    wins = [i for i, s in enumerate(statuses) if s == 200]
    state = read_table_state(ctx.client, ctx.namespace, name)
    landed = [m for m in state.summary_values(MARKER_KEY) if str(m).startswith("race-")]
    cls = f"{len(wins)} won, {statuses.count(409)} got 409"
    details = {"statuses": statuses, "landed": landed}
    if len(wins) != 1 or len(landed) != 1 or statuses.count(409) != writers - 1:
        return run.broken(f"exactly one of {writers} writers on the same base wins, the others get 409, one "
                          "snapshot lands",
                          f"statuses {statuses}; snapshots that landed: {landed}", cls, details)
    return run.ok(f"{writers} writers on one base: one won, {writers - 1} got 409", cls, details)


def check_race(ctx: Any, writers: int = 8) -> list[Verdict]:
    vs = _race(ctx, None, writers)
    for v in vs:
        v.endpoint = "updateTable"
    return vs


# --------------------------------------------------------------------------------- OCC-03, HIST, INTEG

def check_serial_appends(ctx: Any, writers: int = 4, appends: int = 5, max_attempts: int = 40) -> list[Verdict]:
    """N writers x M appends with refresh-and-retry on 409; checks OCC-03, HIST-01, HIST-02, INTEG-01."""
    from ctk.checks.common import Run
    from ctk.http.endpoints import PrerequisiteError

    runs = {r: Run(ctx, r, None, "serial-history") for r in ("OCC-03", "HIST-01", "HIST-02", "INTEG-01")}
    try:
        name = _new_table(ctx, "occ_serial", with_snapshot=False)
    except PrerequisiteError as exc:
        return [r.inconclusive(f"could not prepare the table: {exc}") for r in runs.values()]
    history = History()
    deadline = time.monotonic() + max(60.0, ctx.client.target.timeout * 6)
    errors: list[str] = []

    def writer(w: int) -> None:
        for j in range(appends):
            marker = f"w{w}-{j}"
            op_id = None
            for attempt in range(1, max_attempts + 1):
                if time.monotonic() > deadline:
                    errors.append(f"writer {w} ran out of time at append {j}")
                    return
                try:
                    staged = stage_append(ctx.client, ctx.namespace, name, data=_rows(marker), marker=marker)
                except StageError as exc:
                    errors.append(f"writer {w}: {exc}")
                    return
                ev = history.invoke(w, "append", value=marker, op_id=op_id, attempt=attempt)
                op_id = ev.op_id
                ex = _commit(ctx, staged, f"writer {w} append {j} attempt {attempt}")
                history.record_exchange(ev, ex)
                if ex.status == 200:
                    break
                if ex.status == 409 or ex.status is None or ex.status >= 500:
                    time.sleep(0.005 * attempt)
                    continue
                errors.append(f"writer {w} append {j}: {describe(ex)}")
                return

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()) + 5)
    state = read_table_state(ctx.client, ctx.namespace, name)
    result = check_table(history, state, op="append", summary_key=MARKER_KEY)
    integrity = check_table_integrity(ctx.client, ctx.namespace, name)
    ops = history.operations()
    acked = sum(1 for o in ops if o.outcome == "ok")
    attempts = sum(len(o.attempts) for o in ops)
    total = writers * appends
    chain = result.counts.get("chain_length", 0)
    details = {"writers": writers, "appends": appends, "acknowledged": acked, "attempts": attempts,
               "conflicts_retried": attempts - len(ops), "chain_length": chain,
               "snapshots": len(state.snapshot_ids), "anomalies": result.anomalies, "errors": errors[:10]}
    cls = f"{len(state.snapshot_ids)}/{total} snapshots, {attempts - len(ops)} retries"
    out = []
    r = runs["OCC-03"]
    problems = list(errors[:5])
    if len(state.snapshot_ids) != total:
        problems.append(f"{len(state.snapshot_ids)} snapshots instead of {total}")
    if result.count("nonlinear"):
        problems.append("history not one linear chain with rising sequence numbers: "
                        + "; ".join(map(str, result.anomalies.get("nonlinear", [])[:5])))
    out.append(r.broken(f"{total} snapshots in one linear parent chain, sequence numbers rising",
                        "; ".join(problems), cls, details) if problems
               else r.ok(f"{total} appends from {writers} writers: one linear chain of {chain}", cls, details))
    r = runs["HIST-01"]
    lost = result.anomalies.get("lost", [])
    out.append(r.broken("every acknowledged append present in the final state",
                        f"{len(lost)} acknowledged append(s) missing: {lost[:5]}", cls, details) if lost
               else r.ok(f"all {acked} acknowledged appends present", cls, details))
    r = runs["HIST-02"]
    dup = result.anomalies.get("duplicated", [])
    out.append(r.broken("no append applied twice", f"{len(dup)} duplicated: {dup[:5]}", cls, details) if dup
               else r.ok("no append applied twice", cls, details))
    r = runs["INTEG-01"]
    out.append(r.broken("every snapshot's manifest list and manifests exist", str(integrity), cls,
                        {**details, "integrity": integrity.to_dict()}) if not integrity.ok
               else r.ok(str(integrity), cls, {**details, "integrity": integrity.to_dict()}))
    for v in out:
        v.endpoint = "updateTable"
    return out


# ------------------------------------------------------------------------------------------------ OCC-04

@guarded("OCC-04", "transaction", needs_support=False, needs_endpoint=False)
def _transaction(run: Any, ctx: Any, endpoint: Any) -> Verdict:
    if ctx.discovery is not None and hasattr(ctx.discovery, "supports") \
            and not ctx.discovery.supports("POST", "/v1/{prefix}/transactions/commit"):
        return run.unsupported("commitTransaction not offered by the target (not in /v1/config endpoints)")
    cat = Catalog(ctx.client)
    a, b = ctx.unique("occ_tx_a"), ctx.unique("occ_tx_b")
    cat.create_table(ctx.namespace, a)
    cat.create_table(ctx.namespace, b)
    before = {t: ctx.client.load_table(ctx.namespace, t) for t in (a, b)}
    mark = uuid.uuid4().hex[:8]

    def change(t: str, requirements: list) -> dict:
        return {"identifier": ident(ctx.namespace, t), "requirements": requirements,
                "updates": [set_properties_update({OCC_MARK: mark})]}

    uuid_b = ((before[b] or {}).get("metadata") or {}).get("table-uuid")
    bad = {"table-changes": [change(a, []), change(b, [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}])]}
    ex = ctx.client.request("POST", "transactions/commit", json=bad, label="transaction, second table's requirement fails")
    after = {t: ctx.client.load_table(ctx.namespace, t) for t in (a, b)}
    applied = [t for t in (a, b) if ((after[t] or {}).get("metadata") or {}).get("properties", {}).get(OCC_MARK) == mark]
    if applied:
        return run.broken("409 and neither table changed", f"{describe(ex)}; applied to {applied}",
                          f"{ex.status} partial")
    if ex.status != 409:
        return run.broken("409 CommitFailedException for the failed requirement", describe(ex), str(ex.status))
    good = {"table-changes": [change(a, []), change(b, [{"type": "assert-table-uuid", "uuid": uuid_b}])]}
    ex2 = ctx.client.request("POST", "transactions/commit", json=good, label="transaction, all requirements hold")
    after2 = {t: ctx.client.load_table(ctx.namespace, t) for t in (a, b)}
    applied2 = [t for t in (a, b) if ((after2[t] or {}).get("metadata") or {}).get("properties", {}).get(OCC_MARK) == mark]
    if ex2.status not in (200, 204) or len(applied2) != 2:
        return run.broken("a valid transaction applies to both tables", f"{describe(ex2)}; applied to {applied2}",
                          str(ex2.status))
    return run.ok("failed requirement: 409, nothing applied; valid transaction: both tables changed", "409 atomic")


def check_transaction(ctx: Any) -> list[Verdict]:
    vs = _transaction(ctx, None)
    for v in vs:
        v.endpoint = "commitTransaction"
    return vs


def run_all(ctx: Any, writers: int = 4, appends: int = 5, race_writers: int = 8) -> list[Verdict]:
    return (check_requirements(ctx) + check_race(ctx, race_writers)
            + check_serial_appends(ctx, writers, appends) + check_transaction(ctx))
