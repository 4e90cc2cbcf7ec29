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
from functools import partial
from typing import Any

from ctk.checks.common import (baseline_blocked, blocked_verdict, commit_answer, control_sender, describe,
                               effect_missing, error_of, guarded, unserved, unserved_verdict)
from ctk.core.behaviours import Behaviour, check
from ctk.core.verdicts import Verdict
from ctk.history.checkers import check_table
from ctk.history.integrity import check_table_integrity
from ctk.history.recorder import History
from ctk.history.state import read_table_state
from ctk.history.writer import MARKER_KEY, StageError, StorageBlocked, stage_append
from ctk.client.transport import table_path
from ctk.catalog import Catalog, Endpoint, ident, readback, set_properties_update
from ctk.client.errors import EffectMissing
from ctk.checks.context import CheckContext
from ctk.checks.common import Run

REQUIREMENT_TYPES = (
    "assert-create", "assert-table-uuid", "assert-ref-snapshot-id", "assert-ref-snapshot-id-null",
    "assert-last-assigned-field-id", "assert-current-schema-id", "assert-last-assigned-partition-id",
    "assert-default-spec-id", "assert-default-sort-order-id",
)
OCC_MARK = "ctk.occ"
# the plain operation every check here rests on (its baseline gates the checks: ctk.checks.semantics.baseline);
# a create that does not work shows in their setup steps (inconclusive), never as a commit finding
GATE_ON = ("updateTable",)
# requirement types whose violation needs the table to have a snapshot (main must exist)
NEEDS_SNAPSHOT = ("assert-ref-snapshot-id-null",)


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
    requirements: dict[str, dict] = {
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
    }
    return requirements[kind]


def _commit(ctx: CheckContext, staged: Any, label: str) -> Any:
    return ctx.client.request("POST", staged.path, json=staged.body, label=label)


def _load(ctx: CheckContext, name: str, label: str) -> dict:
    """The table's LoadTableResult for a setup step (5xx tried again, bounded); PrerequisiteError otherwise."""
    from ctk.history.state import read_with_retry
    from ctk.catalog import PrerequisiteError

    ex = read_with_retry(ctx.client, table_path(ctx.namespace, name), label)
    body = ex.json() if ex.status == 200 else None
    if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
        raise PrerequisiteError(f"{label}: load table {name} answered {describe(ex)}", ex)
    return body


def _stage(ctx: CheckContext, name: str, marker: str, label: str, loaded: dict | None = None) -> Any:
    """stage_append for a setup step: a failure to stage is a PrerequisiteError carrying the load exchange."""
    from ctk.catalog import PrerequisiteError

    loaded = loaded if loaded is not None else _load(ctx, name, label)
    try:
        return stage_append(ctx.client, ctx.namespace, name, data=_rows(marker), marker=marker, loaded=loaded)
    except PrerequisiteError:
        raise
    except StageError as exc:
        raise PrerequisiteError(f"{label}: staging an append failed: {exc}") from exc


def _new_table(ctx: CheckContext, stem: str, with_snapshot: bool) -> str:
    name = ctx.unique(stem)
    Catalog(ctx.client).create_table(ctx.namespace, name)
    if with_snapshot:
        seed_append(ctx, name, "seed", "setup: first append")
    return name


def seed_append(ctx: CheckContext, name: str, marker: str, label: str) -> Any:
    """A setup append to table ``name`` whose whole effect is read back: answered as applied, the snapshot current
    and main pointing at it (an append is add-snapshot AND set-snapshot-ref main; a catalog that lands only the
    first leaves no base to commit on). EffectMissing(EVO-06) otherwise: the checks resting on appends are then
    inconclusive naming that finding, never an OCC, replay or client failure read off a table without main."""
    from ctk.catalog import PrerequisiteError

    staged = _stage(ctx, name, marker, f"{label}: load table")

    def commit() -> Any:
        ex = _commit(ctx, staged, label)
        if ex.status != 200 or commit_answer(ex)[0] != "applied":
            raise PrerequisiteError(f"{label} answered {describe(ex)}", ex)
        return ex

    def metadata() -> dict | None:
        state = read_table_state(ctx.client, ctx.namespace, name)
        if state.unreadable:
            raise PrerequisiteError(f"{label}: reading the table back: {state.error or 'state unreadable'}",
                                    state.exchange)
        return state.metadata if state.exists else None

    return readback.appended(f"{'.'.join(ctx.namespace)}.{name}", commit, metadata, staged.snapshot_id)


def _unreadable(run: Run, state: Any, when: str, cls: str | None = None, details: dict | None = None) -> Verdict:
    """Inconclusive: the table state could not be read (5xx / no answer), with the read exchange."""
    if state.exchange is not None and all(e is not state.exchange for e in run.exchanges()):
        run.extra.append(state.exchange)
    return run.inconclusive(f"{state.error or 'state unreadable'} {when}: nothing can be judged from it",
                            cls or "state unreadable", details)


# ------------------------------------------------------------------------------------------------ OCC-01

# OCC-01 rests on no working commit: a commit whose requirement does not hold answered as a success breaks it
# whatever happened to its updates, and a refusal is judged by the table read back (issue 34 item 4)
@guarded("OCC-01", Behaviour.REQUIREMENTS, needs_support=False, needs_endpoint=False)
def _requirement_violated(run: Run, ctx: CheckContext, endpoint: Endpoint, kind: str, name: str) -> Verdict:
    client = ctx.client
    before = read_table_state(client, ctx.namespace, name)
    if not before.exists:
        from ctk.catalog import PrerequisiteError

        raise PrerequisiteError(f"setup: load table {name} before the commit: {before.error or 'absent'}",
                                before.exchange)
    req = _violated(kind, before.metadata)
    mark = f"{kind}-{uuid.uuid4().hex[:6]}"
    body = {"identifier": ident(ctx.namespace, name), "requirements": [req],
            "updates": [set_properties_update({OCC_MARK: mark})]}
    ex = client.request("POST", table_path(ctx.namespace, name), json=body, label=f"commit violating {kind}")
    answer, text = commit_answer(ex)
    cls = f"{ex.status} {error_of(ex).get('type')}" if ex.status else (ex.error or "no answer")
    if answer == "applied":   # the answer itself breaks the rule, whatever state says
        return run.broken("409 CommitFailedException and the table unchanged",
                          f"the commit was accepted ({describe(ex)}) although `{kind}` did not hold", cls)
    after = read_table_state(client, ctx.namespace, name)
    if after.unreadable:
        return _unreadable(run, after, f"after the commit violating `{kind}` (answered {describe(ex)})", cls)
    changed = ((after.metadata_location is not None and after.metadata_location != before.metadata_location)
               or after.properties.get(OCC_MARK) == mark)
    if changed:
        return run.broken("409 CommitFailedException and the table unchanged",
                          f"the commit was applied although `{kind}` did not hold ({text})", cls)
    if answer != "conflict":
        return run.broken("409 CommitFailedException", f"{text} (the table is unchanged)", cls)
    return run.ok(f"`{kind}` violated: {text}, table unchanged", cls)


@check(requirement="OCC-01", behaviour=Behaviour.REQUIREMENTS)
def check_requirements(ctx: CheckContext) -> list[Verdict]:
    """OCC-01 for every requirement type (one verdict each, behaviour ``requirement:<type>``)."""
    from ctk.checks.common import Run, setup_failed
    from ctk.catalog import PrerequisiteError

    out: list[Verdict] = []
    run = Run(ctx, "OCC-01", None, Behaviour.REQUIREMENTS)
    # not gated on the plain commit's baseline: what each verdict needs is read back on the way (the table, the
    # append the snapshot requirement needs)
    lost: EffectMissing | None = None
    unstaged: PrerequisiteError | None = None
    try:
        try:
            name = _new_table(ctx, "occ_req", with_snapshot=True)
        except EffectMissing as exc:
            # appends acknowledged and not recorded: every requirement that needs no snapshot is still decided,
            # on a table without one; the one that needs main to exist rests on the broken append
            lost = exc
            name = _new_table(ctx, "occ_req_nosnap", with_snapshot=False)
        except PrerequisiteError as exc:
            if not isinstance(exc, StageError) and not isinstance(exc.__cause__, StageError):
                raise
            # no append could be written (the table's storage is out of the kit's reach): likewise
            unstaged = exc
            name = _new_table(ctx, "occ_req_nosnap", with_snapshot=False)
    except PrerequisiteError as exc:
        v = run.inconclusive(f"could not prepare the table: {setup_failed(exc)}")
        v.endpoint = "updateTable"
        return [v]
    except Exception as exc:  # noqa: BLE001 - a crash is an error verdict
        v = run.crashed(exc)
        v.endpoint = "updateTable"
        return [v]
    for kind in REQUIREMENT_TYPES:
        if lost is not None and kind in NEEDS_SNAPSHOT:
            v = effect_missing(Run(ctx, "OCC-01", None, Behaviour(f"requirement:{kind}")), lost)
            v.endpoint = "updateTable"
            out.append(v)
            continue
        if unstaged is not None and kind in NEEDS_SNAPSHOT:
            v = Run(ctx, "OCC-01", None, Behaviour(f"requirement:{kind}")).inconclusive(
                f"`{kind}` needs a table with a snapshot: {setup_failed(unstaged)}")
            v.endpoint = "updateTable"
            out.append(v)
            continue
        for v in _requirement_violated(ctx, None, kind, name, behaviour=Behaviour(f"requirement:{kind}")):
            v.endpoint = "updateTable"
            out.append(v)
    return out


check_requirements.requirement = "OCC-01"  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------------ OCC-02

@guarded("OCC-02", Behaviour.RACE, needs_support=False, needs_endpoint=False, gate_on=GATE_ON)
def _race(run: Run, ctx: CheckContext, endpoint: Endpoint, writers: int) -> Verdict:
    name = _new_table(ctx, "occ_race", with_snapshot=True)
    base = _load(ctx, name, "setup: load the common base")
    staged = [_stage(ctx, name, f"race-{i}", "setup: stage racing append", loaded=base) for i in range(writers)]
    barrier = threading.Barrier(writers, timeout=30)
    results: list[Any] = [None] * writers
    crashes: list[str] = []

    def go(i: int) -> None:
        try:
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                pass
            results[i] = _commit(ctx, staged[i], f"racing writer {i}")
        except Exception as exc:  # noqa: BLE001 - recorded, shown in the finding
            crashes.append(f"writer {i}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=ctx.client.target.timeout * 3 + 30)
    answers = [commit_answer(r) if r is not None else ("crashed", "no exchange") for r in results]
    kinds = [k for k, _ in answers]
    statuses = [r.status if r is not None else None for r in results]
    state = read_table_state(ctx.client, ctx.namespace, name)
    details: dict[str, Any] = {"statuses": statuses, "answers": kinds, "crashes": crashes}
    if state.unreadable:
        return _unreadable(run, state, "after the race", details=details)
    landed = [m for m in state.summary_values(MARKER_KEY) if str(m).startswith("race-")]
    details["landed"] = landed
    won = [i for i, k in enumerate(kinds) if k == "applied"]
    unknown = [i for i, k in enumerate(kinds) if k == "unknown"]
    conflicts = kinds.count("conflict")
    cls = f"{len(won)} won, {conflicts} got 409" + (f", {len(unknown)} commit state unknown (5xx)" if unknown else "")
    expected = (f"exactly one of {writers} writers on the same base wins, the others get 409, one snapshot lands")
    problems = []
    if len(landed) > 1:
        problems.append(f"{len(landed)} commits on the same base landed: {landed}")
    if len(won) > 1:
        problems.append(f"{len(won)} writers were told their commit on the same base succeeded: {won}")
    missing = [i for i in won if f"race-{i}" not in landed]
    if missing:
        problems.append(f"acknowledged commit(s) of writer(s) {missing} not in the table")
    for i, (k, text) in enumerate(answers):
        if k in ("error-200", "conflict-400", "other"):
            problems.append(f"writer {i}: {text}")
    if not landed and not won and not unknown and not crashes:
        problems.append("no writer won: every commit on the base was refused")
    unknown_text = ""
    if unknown:
        found = [i for i in unknown if f"race-{i}" in landed]
        unknown_text = (f"; {len(unknown)} commit(s) answered 5xx or nothing (commit state unknown, counted neither "
                        f"as win nor as conflict; {len(found)} of them landed)")
        details["commit_state_unknown"] = {"writers": unknown, "landed": found}
        details["commit_state_unknown_count"] = len(unknown)     # read by the reports (ctk.reporting.model)
    if crashes:
        details["crashes"] = crashes
    if problems:
        return run.broken(expected, "; ".join(problems) + f"\nstatuses {statuses}{unknown_text}"
                          + (f"\nwriter errors: {crashes}" if crashes else ""), cls, details)
    if crashes or (not won and not conflicts):
        why = (f"writer thread(s) crashed: {crashes}" if crashes
               else "every commit answered 5xx or nothing (commit state unknown): nothing to judge")
        return run.inconclusive(why + unknown_text, cls, details)
    return run.ok(f"{writers} writers on one base: one landed, {conflicts} got 409{unknown_text}", cls, details)


@check(requirement="OCC-02", behaviour=Behaviour.RACE)
def check_race(ctx: CheckContext, writers: int = 8) -> list[Verdict]:
    vs = _race(ctx, None, writers)
    for v in vs:
        v.endpoint = "updateTable"
    return vs


check_race.requirement = "OCC-02"  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------- OCC-03, HIST, INTEG

class _Writers:
    """What the serial-append writers did besides commits: failures the server caused (a commit answered
    something no client can act on) and failures of the kit's own steps (staging, exceptions, time)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.server: list[str] = []
        self.setup: list[str] = []
        self.unknown: list[str] = []          # commits answered 5xx / nothing
        self.recovered: list[str] = []        # ... whose append was then found in the table

    def add(self, bucket: list[str], text: str) -> None:
        with self.lock:
            bucket.append(text)


def _landed(ctx: CheckContext, name: str, marker: str) -> bool | None:
    """Whether an append with ``marker`` is in the table (None: the state could not be read)."""
    state = read_table_state(ctx.client, ctx.namespace, name)
    if state.unreadable:
        return None
    return marker in state.summary_values(MARKER_KEY)


@check(requirement="OCC-03", behaviour=Behaviour.SERIAL_HISTORY,
       also=(("HIST-01", Behaviour.SERIAL_HISTORY), ("HIST-02", Behaviour.SERIAL_HISTORY),
             ("INTEG-01", Behaviour.SERIAL_HISTORY)))
def check_serial_appends(ctx: CheckContext, writers: int = 4, appends: int = 5, max_attempts: int = 40) -> list[Verdict]:
    """N writers x M appends with refresh-and-retry on 409; checks OCC-03, HIST-01, HIST-02, INTEG-01."""
    runs = {r: Run(ctx, r, None, Behaviour.SERIAL_HISTORY) for r in ("OCC-03", "HIST-01", "HIST-02", "INTEG-01")}
    # the history rests on appends being recorded and loads showing them: semantics first
    blocked = baseline_blocked(ctx, GATE_ON)
    if blocked is not None:
        out = [blocked_verdict(r, blocked) for r in runs.values()]
    else:
        out = _serial_appends(ctx, runs, writers, appends, max_attempts)
    for v in out:
        v.endpoint = "updateTable"
    return out


check_serial_appends.requirement = "OCC-03"  # type: ignore[attr-defined]


def _serial_appends(ctx: CheckContext, runs: dict, writers: int, appends: int, max_attempts: int) -> list[Verdict]:
    from ctk.checks.common import setup_failed
    from ctk.catalog import PrerequisiteError

    try:
        name = _new_table(ctx, "occ_serial", with_snapshot=False)
    except EffectMissing as exc:
        return [effect_missing(r, exc) for r in runs.values()]
    except PrerequisiteError as exc:
        return [r.inconclusive(f"could not prepare the table: {setup_failed(exc)}") for r in runs.values()]
    except Exception as exc:  # noqa: BLE001 - a crash is an error verdict
        return [r.crashed(exc) for r in runs.values()]
    try:
        return _serial(ctx, runs, name, writers, appends, max_attempts)
    except Exception as exc:  # noqa: BLE001
        return [r.crashed(exc) for r in runs.values()]


def _serial(ctx: CheckContext, runs: dict, name: str, writers: int, appends: int, max_attempts: int) -> list[Verdict]:
    history = History()
    deadline = time.monotonic() + max(60.0, ctx.client.target.timeout * 6)
    notes = _Writers()

    def writer(w: int) -> None:
        ev = None
        try:
            for j in range(appends):
                marker = f"w{w}-{j}"
                op_id = None
                for attempt in range(1, max_attempts + 1):
                    ev = None
                    if time.monotonic() > deadline:
                        notes.add(notes.setup, f"writer {w} ran out of time at append {j} (the hang backstop, "
                                                           "6 x --ctk-timeout, at least 60 s: raise --ctk-timeout)")
                        return
                    try:
                        staged = stage_append(ctx.client, ctx.namespace, name, data=_rows(marker), marker=marker)
                    except StorageBlocked as exc:
                        notes.add(notes.setup, f"writer {w}: {exc}")
                        return
                    except StageError as exc:   # e.g. the table could not be loaded (5xx): try again, bounded
                        if attempt == max_attempts:
                            notes.add(notes.setup, f"writer {w} append {j}: staging failed: {exc}")
                            return
                        time.sleep(0.02 * attempt)
                        continue
                    ev = history.invoke(w, "append", value=marker, op_id=op_id, attempt=attempt)
                    op_id = ev.op_id
                    ex = _commit(ctx, staged, f"writer {w} append {j} attempt {attempt}")
                    history.record_exchange(ev, ex)
                    ev = None
                    kind, text = commit_answer(ex)
                    if kind == "applied":
                        break
                    if kind == "conflict":
                        time.sleep(0.005 * attempt)
                        continue
                    if kind == "unknown":   # like a client after CommitStateUnknown: look before retrying
                        notes.add(notes.unknown, f"writer {w} append {j} attempt {attempt}: {text}")
                        landed = _landed(ctx, name, marker)
                        if landed is None:   # a retry now could apply it twice: stop, do not guess
                            notes.add(notes.setup, f"writer {w} append {j}: commit state unknown and the table "
                                                   "unreadable, so the writer stopped rather than retry blindly")
                            return
                        if landed:
                            notes.add(notes.recovered, marker)
                            break
                        time.sleep(0.005 * attempt)
                        continue
                    notes.add(notes.server, f"writer {w} append {j}: {text}")
                    return
                else:
                    notes.add(notes.setup, f"writer {w} append {j}: no success in {max_attempts} attempts")
                    return
        except Exception as exc:  # noqa: BLE001 - the history records it (info) and the finding shows it
            history.crashed(w, "append", exc, invoke=ev)
            notes.add(notes.setup, f"writer {w} crashed: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()) + 5)
    state = read_table_state(ctx.client, ctx.namespace, name)
    result = check_table(history, state, op="append", summary_key=MARKER_KEY)
    ops = history.operations()
    acked = sum(1 for o in ops if o.outcome == "ok")
    recovered = result.count("recovered")
    attempts = sum(len(o.attempts) for o in ops)
    total = writers * appends
    chain = result.counts.get("chain_length", 0)
    crashes = history.errors()
    details = {"writers": writers, "appends": appends, "acknowledged": acked, "attempts": attempts,
               "conflicts_retried": attempts - len(ops), "chain_length": chain,
               "snapshots": len(state.snapshot_ids), "anomalies": result.anomalies,
               "server_errors": notes.server[:10], "setup_errors": notes.setup[:10],
               "commit_state_unknown": notes.unknown[:10], "commit_state_unknown_count": len(notes.unknown),
               "recovered_after_unknown": notes.recovered[:10],
               "history_errors": crashes[:10]}
    cls = f"{len(state.snapshot_ids)}/{total} snapshots, {attempts - len(ops)} retries"
    unknown_text = (f"; {len(notes.unknown)} commit(s) answered 5xx or nothing (commit state unknown, recorded as "
                    f"info; {len(notes.recovered)} found landed)" if notes.unknown else "")
    setup_text = ("\nwriter errors (not the catalog's commit answers): " + "; ".join(notes.setup[:5])
                  if notes.setup else "")
    out: list[Verdict] = []
    if attempts == 0:
        nothing = "no commit was sent" + (f": {'; '.join(notes.setup[:5])}" if notes.setup else "")
        return [r.inconclusive(nothing, "nothing sent", details) for r in runs.values()]
    if state.unreadable:
        return [_unreadable(r, state, "after the appends", details=details) for r in runs.values()]
    # the whole effect of the appends read back: snapshots that main never points at are a broken plain append
    # (EVO-06), on which no history verdict rests
    partly = readback.append_in_part(state.metadata, acked + recovered)
    if partly is not None:
        missing = EffectMissing("EVO-06", f"the serial appends: {partly}", state.exchange)
        return [effect_missing(r, missing) for r in runs.values()]

    r = runs["OCC-03"]
    problems = list(notes.server[:5])
    present = acked + recovered
    if len(state.snapshot_ids) != present:
        problems.append(f"{len(state.snapshot_ids)} snapshots for {present} appends that were acknowledged or "
                        "found landed")
    if result.count("nonlinear"):
        problems.append("history not one linear chain with rising sequence numbers: "
                        + "; ".join(map(str, result.anomalies.get("nonlinear", [])[:5])))
    expected = f"{total} snapshots in one linear parent chain, sequence numbers rising"
    if problems:
        out.append(r.broken(expected, "; ".join(problems) + unknown_text + setup_text, cls, details))
    elif notes.setup:
        out.append(r.inconclusive(f"{present} of {total} appends done, the rest not attempted to the end"
                                  + unknown_text + setup_text, cls, details))
    elif present == 0:
        out.append(r.inconclusive("0 acknowledged appends: nothing to judge" + unknown_text, cls, details))
    else:
        out.append(r.ok(f"{total} appends from {writers} writers: one linear chain of {chain}{unknown_text}",
                        cls, details))

    r = runs["HIST-01"]
    lost = result.anomalies.get("lost", [])
    if lost:
        out.append(r.broken("every acknowledged append present in the final state",
                            f"{len(lost)} acknowledged append(s) missing: {lost[:5]}" + setup_text, cls, details))
    elif (why := result.vacuous_reason("append")) is not None:
        out.append(r.inconclusive(why + unknown_text + setup_text, cls, details))
    else:
        out.append(r.ok(f"all {acked} acknowledged appends present{unknown_text}" + setup_text, cls, details))

    r = runs["HIST-02"]
    dup = result.anomalies.get("duplicated", [])
    if dup:
        out.append(r.broken("no append applied twice", f"{len(dup)} duplicated: {dup[:5]}" + setup_text, cls,
                            details))
    elif present == 0:
        out.append(r.inconclusive("0 acknowledged appends: nothing to judge" + unknown_text + setup_text, cls,
                                  details))
    elif (why := result.duplicates_vacuous_reason("append")) is not None:
        out.append(r.inconclusive(why + unknown_text + setup_text, "nothing visible", details))
    else:
        out.append(r.ok(f"no append applied twice ({result.present} appends in the table){unknown_text}"
                        + setup_text, cls, details))

    r = runs["INTEG-01"]
    if present == 0:
        out.append(r.inconclusive("0 acknowledged appends: nothing to judge" + setup_text, cls, details))
        return out
    integrity = check_table_integrity(ctx.client, ctx.namespace, name)
    idetails = {**details, "integrity": integrity.to_dict()}
    if integrity.error and "unreadable" in integrity.error:
        out.append(r.inconclusive(f"integrity not checked: {integrity.error}", "state unreadable", idetails))
    elif (why := integrity.vacuous_reason(acked)) is not None:
        out.append(r.inconclusive(why + setup_text, "nothing to check", idetails))
    elif not integrity.ok:
        out.append(r.broken("every snapshot's manifest list and manifests exist", str(integrity), cls, idetails))
    else:
        out.append(r.ok(str(integrity), cls, idetails))
    return out


# ------------------------------------------------------------------------------------------------ OCC-04

@guarded("OCC-04", Behaviour.TRANSACTION, needs_support=False, needs_endpoint=False,
         gate_on=GATE_ON + ("commitTransaction",))
def _transaction(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict:
    if ctx.discovery is not None and hasattr(ctx.discovery, "supports") \
            and not ctx.discovery.supports("POST", "/v1/{prefix}/transactions/commit"):
        return run.unsupported("commitTransaction not offered by the target (not in /v1/config endpoints)")
    cat = Catalog(ctx.client)
    a, b = ctx.unique("occ_tx_a"), ctx.unique("occ_tx_b")
    # the valid transaction asserts table b's uuid: the tables must load with the uuid their create answered
    made = {t: readback.made("table", t, partial(cat.create_table, ctx.namespace, t),
                             partial(cat.table_state, ctx.namespace, t), same_uuid=True) for t in (a, b)}
    mark = uuid.uuid4().hex[:8]

    def change(t: str, requirements: list) -> dict:
        return {"identifier": ident(ctx.namespace, t), "requirements": requirements,
                "updates": [set_properties_update({OCC_MARK: mark})]}

    def applied_to() -> list[str] | Verdict:
        out = []
        for t in (a, b):
            st = read_table_state(ctx.client, ctx.namespace, t)
            if st.unreadable:
                return _unreadable(run, st, f"for table {t} after the transaction")
            if st.properties.get(OCC_MARK) == mark:
                out.append(t)
        return out

    uuid_b = ((made[b] or {}).get("metadata") or {}).get("table-uuid")
    bad = {"table-changes": [change(a, []), change(b, [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}])]}
    ex = ctx.client.request("POST", "transactions/commit", json=bad, label="transaction, second table's requirement fails")
    found = unserved(ctx.discovery, [ex], "POST", "transactions/commit", "commitTransaction",
                     control_sender(ctx.client), ctx.client.exchanges)
    if found is not None:       # claimed (it is, to reach here): advertised but not served, DISC-05's finding
        return unserved_verdict(run, found)
    kind, text = commit_answer(ex)
    applied = applied_to()
    if isinstance(applied, Verdict):
        return applied
    if applied:
        return run.broken("409 and neither table changed", f"{text}; applied to {applied}", f"{ex.status} partial")
    if kind != "conflict":
        return run.broken("409 CommitFailedException for the failed requirement", text, str(ex.status))
    good = {"table-changes": [change(a, []), change(b, [{"type": "assert-table-uuid", "uuid": uuid_b}])]}
    ex2 = ctx.client.request("POST", "transactions/commit", json=good, label="transaction, all requirements hold")
    kind2, text2 = commit_answer(ex2)
    applied2 = applied_to()
    if isinstance(applied2, Verdict):
        return applied2
    if kind2 == "unknown" and len(applied2) in (0, 2):
        return run.inconclusive(f"the valid transaction got {text2}; applied to {applied2}", str(ex2.status))
    if kind2 != "applied" or len(applied2) != 2:
        return run.broken("a valid transaction applies to both tables", f"{text2}; applied to {applied2}",
                          str(ex2.status))
    return run.ok(f"failed requirement: {text}, nothing applied; valid transaction: both tables changed",
                  "409 atomic")


@check(requirement="OCC-04", behaviour=Behaviour.TRANSACTION)
def check_transaction(ctx: CheckContext) -> list[Verdict]:
    vs = _transaction(ctx, None)
    for v in vs:
        v.endpoint = "commitTransaction"
    return vs


check_transaction.requirement = "OCC-04"  # type: ignore[attr-defined]


def run_all(ctx: CheckContext, writers: int = 4, appends: int = 5, race_writers: int = 8) -> list[Verdict]:
    return (check_requirements(ctx) + check_race(ctx, race_writers)
            + check_serial_appends(ctx, writers, appends) + check_transaction(ctx))
