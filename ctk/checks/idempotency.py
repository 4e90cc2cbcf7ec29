"""Per-endpoint Idempotency-Key checks: replay, in-flight, payload, scope, lifetime, recovery.

Every check is called as ``check(ctx, endpoint, ...) -> list[Verdict]`` (see `ctk.checks.common.guarded`).
Executions are always counted from catalog STATE (``case.observe()`` / ``case.executions()``), with an
interference step between attempts so that a re-execution becomes visible; when the target has the
reference control API its execution counters are used as a second witness. Where no interference can make a
re-execution visible (``case.blind``: cancelling a cancelled plan), a retry answered like a replay passes
only on the counters' word; without counters the verdict is inconclusive, never a pass on no evidence.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ctk.checks.common import counter_delta, describe, error_of, guarded, single_execution_problems
from ctk.checks.judging import broken
from ctk.checks.faults import FaultMatch
from ctk.core.behaviours import Behaviour, check, registered
from ctk.catalog import ENDPOINTS, Endpoint, PrerequisiteError
from ctk.core.exchange import Exchange
from ctk.core import needs
from ctk.core.verdicts import Verdict
from ctk.client.keys import new_key
from ctk.checks.context import CheckContext
from ctk.catalog import Case
from ctk.checks.common import Run

LOWER = "idempotency-key"


def _first_success(run: Run, case: Case, ex: Exchange, what: str = "the first attempt") -> Verdict | None:
    if ex.status in case.endpoint.success:
        return None
    return run.inconclusive(f"{what} of {case.endpoint.operation} did not succeed ({describe(ex)}), so the "
                            "behaviour under test could not be exercised")


def _blind(run: Run, case: Case, counted: int | None, details: dict | None = None,
           what: str = "the retry") -> Verdict | None:
    """Inconclusive (instead of a pass) when a re-execution would leave no trace in state (``case.blind``)
    and the target has no execution counters to tell instead; None when the kit can judge."""
    if case.blind is None or counted is not None:
        return None
    return run.inconclusive(f"{what} was answered like a replay, but {case.blind}; without the target's execution "
                            "counters the kit cannot tell a replay from a re-execution", "not visible", details,
                            needs=needs.EXECUTION_COUNTERS)


def _counters(ctx: CheckContext) -> dict | None:
    return ctx.faults.executions() if ctx.faults.supports("executions") else None


def _metadata(ex: Any) -> dict | None:
    body = ex.json()
    md = body.get("metadata") if isinstance(body, dict) else None
    return md if isinstance(md, dict) else None


def _effect_missing(first: Any, retry: Any) -> str | None:
    """Why the retry's body does not carry the original's effect (None when it does, or when the bodies carry
    nothing to compare). A newer state is allowed: the original's metadata file is then in the metadata log,
    its snapshot among the snapshots, its view version among the versions."""
    a, b = _metadata(first), _metadata(retry)
    if a is None or b is None:
        return None
    fa, fb = first.json(), retry.json()
    loc = fa.get("metadata-location") if "table-uuid" in a else None   # a view's metadata keeps no file log
    if loc and loc != fb.get("metadata-location"):
        log = {e.get("metadata-file") for e in b.get("metadata-log") or [] if isinstance(e, dict)}
        if loc not in log:
            return f"the original's metadata file {loc} is neither the replay's nor in its metadata-log"
    snap = a.get("current-snapshot-id")
    if snap not in (None, -1) and snap not in {s.get("snapshot-id") for s in b.get("snapshots") or []
                                               if isinstance(s, dict)}:
        return f"the original's snapshot {snap} is not among the replay's snapshots"
    schemas = {s.get("schema-id") for s in b.get("schemas") or [] if isinstance(s, dict)}
    if a.get("current-schema-id") is not None and schemas and a.get("current-schema-id") not in schemas:
        return f"the original's schema {a.get('current-schema-id')} is not among the replay's schemas"
    version = a.get("current-version-id")
    if version is not None and version not in {v.get("version-id") for v in b.get("versions") or []
                                               if isinstance(v, dict)}:
        return f"the original's view version {version} is not among the replay's versions"
    return None


def _newer_state(first: Any, retry: Any) -> str | None:
    """What shows that a replay that carries the original's effect was rebuilt from a newer state (None: it
    shows the original's state)."""
    a, b = _metadata(first), _metadata(retry)
    if a is None or b is None:
        return None
    la, lb = first.json().get("metadata-location"), retry.json().get("metadata-location")
    if la and lb and la != lb:
        return f"metadata-location {lb} instead of the original's {la}"
    if a.get("current-version-id") != b.get("current-version-id"):
        return f"view version {b.get('current-version-id')} instead of the original's {a.get('current-version-id')}"
    if a.get("last-updated-ms") != b.get("last-updated-ms"):
        return f"last-updated-ms {b.get('last-updated-ms')} instead of the original's {a.get('last-updated-ms')}"
    return None


def replay_differences(case: Case, first: Any, retry: Any) -> list[str]:
    """How the retry's answer differs in meaning from the original's (not byte for byte): another status,
    another error type, another resource (table-uuid, view-uuid, namespace, plan), or a body without the
    original's effect. A body that reflects a newer state of the same resource is not a difference."""
    if retry.status != first.status:
        return [f"the retry got {describe(retry)} instead of the original {describe(first)}"]
    ea, eb = error_of(first), error_of(retry)
    if (ea or eb) and ea.get("type") != eb.get("type"):
        return [f"the retry's error type {eb.get('type')!r} differs from the original's {ea.get('type')!r}"]
    if case.identity(retry) != case.identity(first):
        ia, ib = case.identity(first), case.identity(retry)
        same_kind = isinstance(ia, tuple) and isinstance(ib, tuple) and ia[:2] == ib[:2]
        what = "another resource" if same_kind else "another kind of body"
        return [f"the retry's body names {what}: identity {ib!r} instead of {ia!r}"]
    missing = _effect_missing(first, retry)
    return [missing] if missing else []


def _replay_problems(case: Case, first: Any, retry: Any, extra: int, counted: int | None) -> list[str]:
    problems = replay_differences(case, first, retry)
    if extra:
        problems.append(f"the state shows the mutation executed again on the retry ({extra} more execution(s) "
                        "after the interfering change)")
    if counted:
        problems.append(f"the target's execution counter for {case.endpoint.operation} rose by {counted} "
                        "during the retry")
    return problems


def _retry_with_interference(ctx: CheckContext, case: Case, key: str, label: str, counters: bool = True,
                             interfere: bool = True) -> tuple[Exchange, int, int | None]:
    """interfere, observe, retry with the same key (lower-case header), observe; returns (retry, extra, counted)."""
    if interfere:
        case.interfere()
    base = case.observe()
    c0 = _counters(ctx) if counters else None
    retry = case.send(ctx.client, key=key, header_name=LOWER, label=label)
    c1 = _counters(ctx) if counters else None
    after = case.observe()
    return retry, case.executions(base, after), counter_delta(c0, c1, case.endpoint.operation)


# ----------------------------------------------------------------------------------------------------------
@check(requirement="REPLAY-01", behaviour=Behaviour.FINALIZED_DUPLICATE,
       also=(("REPLAY-05", Behaviour.REPLAY_ORIGINAL_STATE),))
@guarded()
def check_finalized_duplicate(run: Run, ctx: CheckContext, endpoint: Endpoint) -> list[Verdict]:
    """REPLAY-01 (the replay means the original: status, error type, resource, its effect; ran once) and
    REPLAY-05 (the replay shows the original's state, not a newer one)."""
    from ctk.checks.common import Run

    run05 = Run(ctx, "REPLAY-05", endpoint, Behaviour.REPLAY_ORIGINAL_STATE)
    run05.mark = run.mark

    def both(v01):
        return [v01, run05.inconclusive("no replay of the original to compare (see REPLAY-01)", v01.classification)]

    case = endpoint.prepare(ctx)
    key = new_key()
    before = case.observe()
    first = case.send(ctx.client, key=key, label="first attempt")
    if (v := _first_success(run, case, first)) is not None:
        return both(v)
    mid = case.observe()
    n1 = case.executions(before, mid)
    if n1 != 1:
        return both(run.inconclusive(f"the first attempt succeeded but its effect is not visible in state once "
                                     f"(seen {n1}); cannot count executions"))
    retry, extra, counted = _retry_with_interference(ctx, case, key, "retry, same key, lower-case header name")
    problems = _replay_problems(case, first, retry, extra, counted)
    details = {"key": key, "executions": 1 + extra, "counter_delta": counted,
               "replay_headers": _replay_headers(first, retry)}
    if problems:
        cls = "re-executed" if (extra or counted) else "different response"
        return both(broken(run, f"the retry with the same key (header spelled {LOWER!r}) gets the original "
                           f"{describe(first)} for the same resource with the original's effect, and "
                           f"{endpoint.operation} runs exactly once", "; ".join(problems), cls, details))
    if (v := _blind(run, case, counted, details)) is not None:
        return both(v)
    newer = _newer_state(first, retry)
    details["replay"] = "rebuilt from a newer state" if newer else "the original's state"
    v01 = run.ok(f"replayed {describe(first)} for the same resource"
                 + (f" (a newer state: {newer})" if newer else "") + "; executed once",
                 "replayed (newer state)" if newer else "replayed", details)
    if newer:
        v05 = broken(run05, "the replay is the original response, with the state the original produced",
                     f"the replay was rebuilt from a newer state: {newer}", "rebuilt from current state", details)
    else:
        v05 = run05.ok("the replay shows the original's state", "stored original", details)
    return [v01, v05]


def _replay_headers(first: Any, retry: Any) -> dict:
    """Headers a replay carries that tell the client it is one, and whether an ETag came back unchanged."""
    def low(ex):
        return {k.lower(): v for k, v in (ex.response_headers or {}).items()}

    a, b = low(first), low(retry)
    out = {k: b[k] for k in b if "replay" in k or k == "idempotency-key"}
    if "etag" in a or "etag" in b:
        out["etag"] = "same" if a.get("etag") == b.get("etag") else f"{a.get('etag')} -> {b.get('etag')}"
    return out


# ----------------------------------------------------------------------------------------------------------
@check(requirement="REPLAY-02", behaviour=Behaviour.TERMINAL_4XX_REPLAYED)
@guarded()
def check_terminal_4xx_replayed(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict:
    case = endpoint.prepare(ctx)
    conflict = case.conflicting
    if conflict is None:
        return run.unsupported(f"{endpoint.operation}: {case.conflict_unavailable}" if case.conflict_unavailable
                               else f"the kit has no deterministic terminal 4xx variant of {endpoint.operation}")
    key = new_key()
    first = case.send(ctx.client, conflict.request, key=key, label=f"first attempt ({conflict.why})")
    if first.status is None or not 400 <= first.status < 500:
        return run.inconclusive(f"the conflicting request ({conflict.why}) got {describe(first)}, not a terminal "
                                f"4xx (expected {conflict.expect}); cannot test the replay of a stored 4xx")
    case.clear_conflict()
    # observed before the retry: a first attempt that changed state before its 4xx (a non-atomic transaction)
    # left that change; it is not the retry's execution (atomicity is OCC-04's finding)
    partial = case.conflict_executed()
    c0 = _counters(ctx)
    retry = case.send(ctx.client, conflict.request, key=key, header_name=LOWER,
                      label="retry, same key, after the conflict was cleared")
    c1 = _counters(ctx)
    executed = case.conflict_executed() and not partial
    counted = counter_delta(c0, c1, endpoint.operation)
    problems = []
    if retry.status != first.status:
        problems.append(f"the retry got {describe(retry)} instead of the stored {describe(first)}")
    elif error_of(retry).get("type") != error_of(first).get("type"):
        problems.append(f"the retry's error type {error_of(retry).get('type')!r} differs from the stored "
                        f"{error_of(first).get('type')!r}")
    if executed:
        problems.append("the state shows the request was executed on the retry")
    if counted:
        problems.append(f"the execution counter rose by {counted} during the retry")
    details = {"key": key, "first_status": first.status, "counter_delta": counted}
    note = ""
    if partial:
        details["first_attempt_changed_state"] = True
        note = (f"; the first attempt changed state before its {describe(first)} (seen before the retry), so "
                "state cannot show the retry's execution: judged by "
                + ("the retry's answer and the execution counter" if counted is not None else "the retry's answer"))
    if problems:
        return broken(run, f"the terminal {describe(first)} ({conflict.why}) is finalized: after the cause is "
                          "removed, the retry with the same key still gets it and nothing is executed",
                          "; ".join(problems) + note, "re-executed" if (executed or counted) else
                          "different response", details)
    return run.ok(f"stored {describe(first)} replayed after the conflict was cleared; nothing executed{note}",
                  f"replayed {first.status}", details)


# ----------------------------------------------------------------------------------------------------------
# What the fault-needing checks need, said where they are unsupported (a reader can give it on the next run)

NEEDS_FAIL_BEFORE = (
    "a 5xx before anything is persisted needs one of: the catalog's database link (--ctk-db-link "
    "http://HOST:PORT/proxies/NAME: a `ctk interposer` in TCP mode in front of the catalog's database; the kit "
    "drops the catalog's first write statement; works on any catalog) or a target with the reference control "
    "API (/_ctk, `ctk serve --control-api`)")
NEEDS_CORRUPT_STORED = (
    "a finalized answer that cannot be produced needs a hook inside the catalog that makes its stored response "
    "unreadable after the first attempt (the reference control API, /_ctk: `ctk serve --control-api`); "
    "--ctk-db-link does not help: the database link sees statements and bytes, not which rows hold the catalog's "
    "stored answer, and altering them in flight is not a fault the kit injects")
NEEDS_CRASH_BEFORE_FINALIZE = (
    "an idempotency record left IN_PROGRESS by a crash needs the catalog to stop between committing the change and "
    "finalizing its record (the reference control API's crash-before-finalize, /_ctk: `ctk serve --control-api`); "
    "--ctk-db-link does not help: cutting the database link makes the running catalog answer an error (REPLAY-03 "
    "and the db-commit-cut check of REPLAY-04 judge that), it does not stop the process, and the kit cannot "
    "restart a catalog it did not start")


def _cannot_inject(ctx: CheckContext, fault: str, needed: str) -> str | None:
    """Why a check cannot run on this run, when its fault injector does not support ``fault``: what the check
    ``needed`` and which injector the run uses (None: it can inject it)."""
    if ctx.faults.supports(fault):
        return None
    return f"{needed}; this run injects faults via {ctx.faults.name}"


@check(requirement="REPLAY-03", behaviour=Behaviour.FIVE_XX_NOT_STORED)
@guarded()
def check_5xx_not_stored(run: Run, ctx: CheckContext, endpoint: Endpoint, status: int = 503) -> Verdict:
    db = ctx.db_link_faults
    if not ctx.faults.supports("fail_before") and db is not None:
        from ctk.checks.db_link import db_link_failure   # the database write fails: any catalog

        return db_link_failure(run, ctx, endpoint, db.link, "fail_write")
    if (why := _cannot_inject(ctx, "fail_before", NEEDS_FAIL_BEFORE)) is not None:
        return run.unsupported(why, needs=needs.DB_LINK_OR_CONTROL_API)
    case = endpoint.prepare(ctx)
    key = new_key()
    before = case.observe()
    ctx.faults.fail_before(FaultMatch.for_case(case, key), status)
    first = case.send(ctx.client, key=key, label=f"first attempt (fails with {status} before persisting)")
    if first.status != status:
        return run.inconclusive(f"the injected {status} did not happen (got {describe(first)})")
    mid = case.observe()
    if case.executions(before, mid):
        return run.inconclusive("the state shows an execution although the fault answered before persisting")
    retry = case.send(ctx.client, key=key, header_name=LOWER, label="retry, same key")
    after = case.observe()
    n = case.executions(mid, after)
    details = {"key": key, "executions": n}
    if retry.status in endpoint.success and n == 1:
        return run.ok(f"the {status} was not stored: the retry executed and got {describe(retry)}", "executed",
                      details)
    happened = f"the retry got {describe(retry)}"
    if retry.status == status:
        happened += f" - the stored {status} was replayed"
    happened += f"; executions visible in state: {n}"
    return broken(run, f"a {status} is never stored: the retry with the same key executes {endpoint.operation} "
                      "and succeeds", happened, "5xx replayed" if retry.status == status else "not executed",
                      details)


# ----------------------------------------------------------------------------------------------------------
@guarded("REPLAY-04", Behaviour.LOST_ANSWER)
def check_lost_answer(run: Run, ctx: CheckContext, endpoint: Endpoint, mode: str = "503") -> Verdict | list[Verdict]:
    if (why := _cannot_inject(ctx, f"lose_answer:{mode}",
                              f"losing the answer ({mode}) needs the control API or the interposer")) is not None:
        return run.unsupported(why, needs=needs.CONTROL_API_OR_INTERPOSER)
    case = endpoint.prepare(ctx)
    key = new_key()
    before = case.observe()
    rule = ctx.faults.lose_answer(FaultMatch.for_case(case, key), mode)
    first = case.send(ctx.client, key=key, label=f"first attempt (committed, answer lost: {mode})")
    lost = first.status is None if mode in ("reset", "drop") else first.status == int(mode)
    if not lost:
        return run.inconclusive(f"the injected loss of the answer ({mode}) did not happen (got {describe(first)})")
    for taken in ctx.faults.swallowed(rule):   # the lost answer as the interposer read it (e.g. its plan-id)
        case.learned(Exchange(first.method, first.url, status=taken.get("status"), response_body=taken.get("body"),
                              label="the answer kept from the client"))
    mid = case.observe()
    n1 = case.executions(before, mid)
    if n1 != 1:
        return run.inconclusive(f"the fault did not leave {endpoint.operation} committed (executions in state: {n1})")
    retry, extra, counted = _retry_with_interference(ctx, case, key, "retry, same key, after the lost answer")
    details = {"key": key, "mode": mode, "executions": 1 + extra, "counter_delta": counted}
    problems = single_execution_problems(endpoint, retry, extra, counted)
    if problems:
        return broken(run, f"after a committed request whose answer was lost ({mode}), the retry with the same key "
                          f"returns success and {endpoint.operation} ran exactly once", "; ".join(problems),
                          "re-executed" if (extra or counted) else f"retry {describe(retry)}", details)
    if (v := _blind(run, case, counted, details)) is not None:
        return v
    return run.ok(f"answer lost ({mode}); the retry got {describe(retry)}, executed once", "recovered", details)


# ----------------------------------------------------------------------------------------------------------
def _in_progress_error(ex: Any) -> bool:
    e = error_of(ex)
    return e.get("subtype") == "request_in_progress" or "progress" in str(e.get("type", "")).lower()


EXECUTION_ERRORS = ("alreadyexists", "nosuch", "notempty", "commitfailed")


def _execution_error(ex: Any) -> bool:
    """An error an execution of the mutation itself would give (not an idempotency answer)."""
    t = str(error_of(ex).get("type", "")).lower()
    return any(s in t for s in EXECUTION_ERRORS)


def _run_in_flight(run: Run, ctx: CheckContext, endpoint: Endpoint) -> tuple[str, dict[str, Any], Case]:
    """Shared by INFLIGHT-01 and -02: returns (classification, evidence dict) or a verdict builder tuple."""
    case = endpoint.prepare(ctx)
    key = new_key()
    hold = float(ctx.options.inflight_hold)
    server_hold = ctx.faults.supports("delay:server")
    before = case.observe()
    c0 = _counters(ctx)
    result: dict[str, Any] = {}
    rule = None
    until_met = bool(getattr(ctx.faults, "hold_until_met", False))
    if until_met:
        # the hold ends when the duplicate meets the first in flight (the catalog's own event), so its ceiling
        # costs nothing on a catalog that sees it: long enough that a busy runner's duplicate still arrives
        # while the first is held (a 1 s hold expired first under two CPU hogs, and the duplicate's replay of
        # the finished first read as a wait-and-replay on a catalog that answers 409 in flight)
        hold = max(hold, HOLD_UNTIL_MET_CEILING)
    if server_hold:
        # held until the duplicate met it in flight (where the control API can tell), `hold` at the longest
        rule = ctx.faults.delay(FaultMatch.for_case(case, key), hold, until_met=1)
    else:   # (with the interposer, _inflight_bursts runs instead)
        return ("unsupported", {"reason": "holding a request in flight needs the control API (delay) or the "
                                          f"interposer (duplicate); this run injects faults via {ctx.faults.name}"},
                case)

    def first_call():
        result["first"] = case.send(ctx.client, key=key, label="first attempt (held in flight)",
                                    timeout=hold + 30)

    t = threading.Thread(target=first_call, daemon=True)
    t.start()
    dup = None
    if server_hold:
        # the duplicate goes only once the first is held inside the server (a duplicate that overtook the
        # first on a busy machine would itself take the delay, and the roles would swap)
        arrived = ctx.faults.wait_applied(rule, timeout=max(2.0, hold))
        if arrived is None:
            time.sleep(min(0.4, hold / 3))
        if arrived is False:
            t.join(timeout=hold + 40)
            return ("inconclusive", {"key": key, "hold_seconds": hold, "mode": "server delay",
                                     "reason": f"the first attempt had not reached the server after "
                                               f"{max(2.0, hold):.1f} s, so no duplicate was sent"}, case)
        dup = case.send(ctx.client, key=key, label="duplicate while the first is in flight", timeout=hold + 30)
    t.join(timeout=hold + 40)
    first = result.get("first")
    after = case.observe()
    c1 = _counters(ctx)
    n = case.executions(before, after)
    counted = counter_delta(c0, c1, endpoint.operation)
    ev = {"key": key, "executions_state": n, "counter_delta": counted, "hold_seconds": hold,
          "mode": "server delay" if server_hold else "interposer duplicate"}
    if first is None:
        return ("inconclusive", {**ev, "reason": "the first attempt did not finish in time"}, case)
    runs = max(n, counted or 0)
    if runs >= 2:
        return ("second execution", ev, case)
    if dup is None:
        return ("inconclusive", {**ev, "reason": "no duplicate was sent"}, case)
    ev["first"], ev["duplicate"] = describe(first), describe(dup)
    first_end = first.started_at + first.elapsed_ms / 1000.0
    overlapped = dup.started_at < first_end
    if first.status not in endpoint.success:
        if _execution_error(first) or _execution_error(dup):
            return ("second execution", {**ev, "reason": "one attempt failed the way a second execution of the "
                                                         "mutation fails"}, case)
        return ("inconclusive", {**ev, "reason": f"the first attempt did not succeed ({describe(first)})"}, case)
    if dup.status == 409 and not _execution_error(dup):
        return ("409 request_in_progress" if error_of(dup).get("subtype") == "request_in_progress"
                else "plain 409", ev, case)
    if _execution_error(dup):
        return ("second execution", {**ev, "reason": "the duplicate failed the way a second execution fails"}, case)
    if dup.status == first.status and case.identity(dup) == case.identity(first):
        dup_end = dup.started_at + dup.elapsed_ms / 1000.0
        if until_met or (overlapped and dup_end >= first_end - 0.05):
            # with until-met the duplicate was sent once the first was held, and the hold lasts until it meets
            # it: the answer decides (the search in _inflight_verdicts looks again for a 409 where it may hide)
            return ("wait-and-replay", ev, case)
        return ("no overlap observed", {**ev, "reason": "the duplicate was answered before the first finished "
                                        "without a second execution"}, case)
    return (f"other: {describe(dup)}", ev, case)


def _inflight_bursts(run01: Run, run02: Run, ctx: CheckContext, endpoint: Endpoint) -> list[Verdict]:
    """Without a server-side hold: the interposer sends the first with copies as bursts until one overlaps at
    the server (observed from its forward/answer times) and decides; see ctk.checks.bursts."""
    from ctk.checks.bursts import BurstOptions, inflight_verdicts, run_bursts

    opts = getattr(ctx.options, "bursts", None) or BurstOptions()

    def arm(case, key, copies):
        return ctx.faults.duplicate(FaultMatch.for_case(case, key), parallel=True, copies=copies)

    def send(case, key):
        first = case.send(ctx.client, key=key, label="first attempt (the interposer sends copies with it, "
                          "released together)", timeout=30)
        return first, [first]

    rounds = run_bursts(ctx, endpoint, opts, arm, send, lambda r: ctx.faults.burst(r, opts.wait),
                        ctx.faults.remove, lambda: _counters(ctx), want_409=True)
    return inflight_verdicts(run01, run02, rounds)


#: longest hold of the first attempt when the control API ends it as the duplicate meets it (`until-met`)
HOLD_UNTIL_MET_CEILING = 20.0
#: held rounds at most while none showed the catalog's in-flight answer (a count: the same on a busy runner)
INFLIGHT_HELD_ROUNDS = 3
#: what a held round can show that ends the search: the catalog's in-flight answer, or a second execution
_HELD_DECISIVE = ("409 request_in_progress", "plain 409", "second execution", "unsupported")


def _held_rounds(run01: Run, ctx: CheckContext, endpoint: Endpoint) -> tuple[str, dict[str, Any], Case]:
    """`_run_in_flight` again on a fresh case while its rounds showed only a replay or nothing in flight, at most
    `INFLIGHT_HELD_ROUNDS`: a replay can be the finished first's (the duplicate arrived late) on a catalog that
    answers 409 in flight, a 409 never is; the first round that shows the catalog's in-flight answer decides."""
    rounds: list[tuple[str, dict[str, Any], Case]] = []
    for _ in range(INFLIGHT_HELD_ROUNDS):
        rounds.append(_run_in_flight(run01, ctx, endpoint))
        if rounds[-1][0] in _HELD_DECISIVE or rounds[-1][0].startswith("other"):
            break
    # the round that decides: the catalog's in-flight answer, else a replay (every round that reached it in
    # flight was replayed: it waits), else the last
    cls, ev, case = rounds[-1] if rounds[-1][0] in _HELD_DECISIVE or rounds[-1][0].startswith("other") else \
        next((r for r in reversed(rounds) if r[0] == "wait-and-replay"), rounds[-1])
    return cls, {**ev, "held_rounds": [r[0] for r in rounds]}, case


def _inflight_verdicts(run01, run02, ctx, endpoint):
    if not ctx.faults.supports("delay:server") and ctx.faults.supports("duplicate"):
        return _inflight_bursts(run01, run02, ctx, endpoint)
    cls, ev, case = _held_rounds(run01, ctx, endpoint)
    if cls == "unsupported":
        return [run01.unsupported(ev["reason"]), run02.unsupported(ev["reason"])]
    if cls in ("inconclusive", "no overlap observed"):
        return [run01.inconclusive(ev.get("reason", cls), cls, ev), run02.inconclusive(ev.get("reason", cls), cls, ev)]
    expected1 = ("a duplicate sent while the first is in flight never executes a second time: it gets 409 "
                 "(request_in_progress) or waits and replays the first's result")
    if cls == "second execution":
        v1 = broken(run01, expected1, f"{endpoint.operation} executed twice (state: {ev['executions_state']}, "
                          f"counter: {ev['counter_delta']}; first {ev.get('first')}, duplicate {ev.get('duplicate')})"
                          + (f"; {ev['reason']}" if ev.get("reason") else ""), cls, ev)
        return [v1, run02.inconclusive("the duplicate executed; no in-flight 409 to inspect", cls, ev)]
    if case.blind is not None and ev.get("counter_delta") is None and cls != "409 request_in_progress" \
            and cls != "plain 409":
        reason = (f"the duplicate was answered like the first ({cls}), but {case.blind}; without the target's "
                  "execution counters the kit cannot tell a replay from a second execution")
        return [run01.inconclusive(reason, "not visible", ev, needs=needs.EXECUTION_COUNTERS),
                run02.inconclusive(reason, "not visible", ev, needs=needs.EXECUTION_COUNTERS)]
    v1 = run01.ok(f"in-flight duplicate: {cls}; executed once", cls, ev)
    if cls == "409 request_in_progress":
        v2 = run02.ok("409 with subtype request_in_progress", cls, ev)
    elif cls == "plain 409":
        v2 = broken(run02, "the in-flight 409 carries the error subtype `request_in_progress`",
                          f"the duplicate got {ev.get('duplicate')} without that subtype", cls, ev)
    elif cls.startswith("other"):
        # executed once (INFLIGHT-01 holds); the answer is neither the design document's 409 nor a replay
        v2 = broken(run02, "an in-flight duplicate gets 409 with the subtype `request_in_progress` (or waits and "
                    "replays the first's result)", f"the duplicate got {ev.get('duplicate')}", cls, ev)
    else:
        v2 = run02.unsupported(f"the target {cls}s in-flight duplicates instead of answering 409; "
                               "there is no 409 to inspect")
        v2.classification = cls
    return [v1, v2]


@check(requirement="INFLIGHT-01", behaviour=Behaviour.IN_FLIGHT_DUPLICATE,
       also=(("INFLIGHT-02", Behaviour.IN_FLIGHT_409_SUBTYPE),))
@guarded()
def check_in_flight(run: Run, ctx: CheckContext, endpoint: Endpoint) -> list[Verdict]:
    """Returns two verdicts: INFLIGHT-01 and INFLIGHT-02."""
    from ctk.checks.common import Run

    run02 = Run(ctx, "INFLIGHT-02", endpoint, Behaviour.IN_FLIGHT_409_SUBTYPE)
    run02.mark = run.mark
    return _inflight_verdicts(run, run02, ctx, endpoint)


# ----------------------------------------------------------------------------------------------------------
@check(requirement="PAYLOAD-01", behaviour=Behaviour.PAYLOAD_MISMATCH)
@guarded()
def check_payload_mismatch(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict | list[Verdict]:
    if not endpoint.has_payload:
        return run.unsupported(f"{endpoint.operation} has no request body, so there is no other payload to send")
    case = endpoint.prepare(ctx)
    if case.alternative is None:
        return run.unsupported(f"the kit has no alternative payload for {endpoint.operation}")
    key = new_key()
    first = case.send(ctx.client, key=key, label="first attempt")
    if (v := _first_success(run, case, first)) is not None:
        return v
    case.interfere()
    base = case.observe()
    c0 = _counters(ctx)
    alt = case.send(ctx.client, case.alternative, key=key, label="same key, other payload")
    c1 = _counters(ctx)
    after = case.observe()
    n_alt = case.alt_executions(base, after) if case.alt_executions else 0
    n_main = case.executions(base, after)
    counted = counter_delta(c0, c1, endpoint.operation)
    details = {"key": key, "alternative_executed": n_alt, "original_reexecuted": n_main, "counter_delta": counted}
    executed = bool(n_alt or n_main or counted)
    if alt.status is not None and 400 <= alt.status < 500 and not _execution_error(alt):
        cls = str(alt.status)
    elif alt.status in endpoint.success and executed:
        cls = "executed"
    elif alt.status == first.status and case.identity(alt) == case.identity(first):
        cls = "undetected"
    else:
        cls = f"other: {describe(alt)}"
    expected = "the same key with another payload is rejected with 422 and executes nothing"
    if cls == "422" and not executed:
        return run.ok("rejected with 422; nothing executed", cls, details)
    if executed:
        return broken(run, expected, f"the request with the other payload was executed (got {describe(alt)})",
                          cls, details)
    if cls == "undetected":
        return broken(run, expected, f"the other payload was not detected: the stored {describe(first)} was "
                          "replayed", cls, details)
    observed = _alt_observed(case, first, alt, details)
    if alt.status is not None and alt.status >= 500:     # a finding of its own, whatever the profile
        from ctk.checks.common import Run

        run02 = Run(ctx, "SCOPE-02", endpoint, Behaviour.KEY_REUSE_NO_5XX)
        run02.mark = run.mark
        return [broken(run, expected, f"not 422: {observed}", cls, details),
                broken(run02, "the same key with another payload is answered like any well-formed request (2xx, "
                       "4xx, or the first's replay), not with a 5xx", f"it got {describe(alt)}",
                       f"5xx: {describe(alt)}", details)]
    return broken(run, expected, f"not 422: {observed}", cls, details)


def _alt_observed(case: Case, first: Any, alt: Any, details: dict) -> str:
    """What the answer to the other payload showed, when the state shows no execution: a rejection (4xx), or a
    success carrying a result of its own (a new plan-id: something was made, the state just cannot show it),
    or another answer."""
    if alt.status is not None and 400 <= alt.status < 500:
        return f"rejected with {describe(alt)} (nothing executed)"
    if alt.status is not None and 200 <= alt.status < 300 and case.identity(alt) != case.identity(first):
        body, was = alt.json(), first.json()
        pid = body.get("plan-id") if isinstance(body, dict) else None
        if isinstance(pid, str):
            old = was.get("plan-id") if isinstance(was, dict) else None
            details["new_plan_id"] = pid
            return (f"answered {describe(alt)} with a new plan-id {pid!r} (the first attempt's was {old!r}): a plan "
                    "was made for the other payload, though the kit's reading of the table's plans does not show it")
        return (f"answered {describe(alt)} with a result of its own (not the first attempt's replay), though the "
                "state shows no execution")
    return f"answered {describe(alt)}; no execution visible in state"


# ----------------------------------------------------------------------------------------------------------
@check(requirement="SCOPE-01", behaviour=Behaviour.KEY_SCOPE,
       also=(("SCOPE-02", Behaviour.KEY_REUSE_NO_5XX),))
@guarded()
def check_scope(run: Run, ctx: CheckContext, endpoint: Endpoint) -> list[Verdict]:
    """SCOPE-01 (the same key on another operation is not answered with the first's stored response) and
    SCOPE-02 (nor with a 5xx: a finding of its own, whatever the scope)."""
    from ctk.checks.common import Run

    run02 = Run(ctx, "SCOPE-02", endpoint, Behaviour.KEY_REUSE_NO_5XX)
    run02.mark = run.mark
    case = endpoint.prepare(ctx)
    other_ep = ENDPOINTS["updateProperties" if endpoint.operation == "createNamespace" else "createNamespace"]
    other = other_ep.prepare(ctx)
    key = new_key()
    first = case.send(ctx.client, key=key, label="first attempt")
    if (v := _first_success(run, case, first)) is not None:
        return [v, run02.inconclusive(v.message, needs=v.needs)]
    ob = other.observe()
    # the label marks the deliberate reuse: SCHEMA-01 does not judge the answer (ctk/suites/test_schema.py)
    second = other.send(ctx.client, key=key, label=f"reused key: the same key on {other_ep.operation} "
                                                    f"({other.resource})")
    oa = other.observe()
    n = other.executions(ob, oa)
    details = {"key": key, "other_operation": other_ep.operation, "other_executions": n,
               "other_status": second.status}
    replayed = second.status == first.status and case.identity(second) == case.identity(first)
    if second.status is not None and second.status >= 500:
        v2 = broken(run02, f"the same key on {other_ep.operation} is answered like any well-formed request "
                    "(2xx, 4xx, or the first's replay), not with a 5xx",
                    f"it got {describe(second)}; {other_ep.operation} executions visible in state: {n}",
                    f"5xx: {describe(second)}", details)
        v1 = run.inconclusive(f"the reused key was answered {describe(second)}: neither a new execution nor a "
                              "replay (see SCOPE-02)", f"5xx: {describe(second)}", details)
        return [v1, v2]
    v2 = run02.ok(f"no 5xx ({describe(second)})", describe(second), details)
    if second.status in other_ep.success and n == 1:
        no_effect = _key_without_effect(ctx, case, key, first)
        if no_effect is not None:
            # the other operation ran as a new request, but so does this one's retry: the key is ignored here, so
            # no scope of it can be observed on this endpoint
            details["key_effect"] = no_effect
            return [run.inconclusive(f"the key on {other_ep.operation} was treated as a new request, but the key "
                                     f"has no effect on {endpoint.operation} at all (a retry with it after an "
                                     f"interfering change: {no_effect}): no scope can be observed there",
                                     "key has no effect", details), v2]
        scope_cls, third = _resource_scope(ctx, case, endpoint, key, first, details)
        if third is not None and third.status is not None and third.status >= 500:
            v2 = broken(run02, f"the same key on another resource of {endpoint.operation} is answered like any "
                        "well-formed request (2xx, 4xx, or the first's replay), not with a 5xx",
                        f"it got {describe(third)}", f"5xx: {describe(third)}", details)
        return [run.ok(f"the key on {other_ep.operation} was treated as a new request; scope: {scope_cls}",
                       scope_cls, details), v2]
    if second.status is not None and 400 <= second.status < 500 and n == 0 and not replayed:
        return [run.ok(f"the key on {other_ep.operation} was rejected ({describe(second)}), not replayed",
                       f"rejected {second.status}", details), v2]
    cls = "global (replays the first)" if replayed else f"other: {describe(second)}"
    return [broken(run, f"the same key on another operation ({other_ep.operation}, {other.resource}) is not "
                   f"answered with the stored response of {endpoint.operation}",
                   f"it got {describe(second)}" + (" - the first request's stored response" if replayed else "")
                   + f"; {other_ep.operation} executions visible in state: {n}", cls, details), v2]


def _key_without_effect(ctx: CheckContext, case: Case, key: str, first: Exchange) -> str | None:
    """How a retry of ``case`` with ``key``, after an interfering change, shows the key has no effect on its
    operation (it is not the first's replay, or it executed again); None when it is replayed, or when the case
    cannot make a re-execution visible (``case.blind``: then nothing is claimed)."""
    if case.blind:
        return None
    retry, extra, _ = _retry_with_interference(ctx, case, key, "the same key again on the first operation: does "
                                               "the key have an effect here?", counters=False)
    problems = replay_differences(case, first, retry)
    if extra:
        problems.append(f"it executed again ({extra} more execution(s) visible in state)")
    return "; ".join(problems) if problems else None


def _resource_scope(ctx: CheckContext, case: Case, endpoint: Endpoint, key: str, first: Exchange,
                    details: dict) -> tuple[str, Exchange | None]:
    """Classified, not judged: the same operation on another resource with the same key (a new request where
    keys are scoped per resource). Returns (classification, the answer or None when it could not be probed)."""
    try:
        other = endpoint.prepare(ctx)
    except PrerequisiteError as exc:
        details["other_resource"] = f"not probed: {exc}"
        return "per operation", None
    if other.request.path == case.request.path:   # one path for every resource (a create, a transaction)
        details["other_resource"] = f"not probed: {endpoint.operation} has one path for every resource"
        return "per operation (one path for every resource)", None
    before = other.observe()
    ans = other.send(ctx.client, key=key, label=f"reused key: the same key on {endpoint.operation} "
                                                f"({other.resource})")
    n = other.executions(before, other.observe())
    details["other_resource"] = {"resource": other.resource, "status": ans.status, "executions": n}
    if ans.status in endpoint.success and n == 1:
        return "per operation and resource", ans
    if ans.status == first.status and case.identity(ans) == case.identity(first):
        return "per operation (another resource gets the first's replay)", ans
    if ans.status is not None and 400 <= ans.status < 500 and n == 0:
        return f"per operation (another resource: rejected {ans.status})", ans
    return f"per operation (another resource: {describe(ans)})", ans


# ----------------------------------------------------------------------------------------------------------
@check(requirement="LIFE-01", behaviour=Behaviour.LIFETIME,
       also=(("LIFE-03", Behaviour.LIFETIME_GRACE),))
@guarded()
def check_lifetime(run: Run, ctx: CheckContext, endpoint: Endpoint, fraction: float = 0.9,
                   measurements: int = 3) -> list[Verdict]:
    """LIFE-01 (a duplicate at 90% of the advertised lifetime is replayed) and LIFE-03 (one just after the
    lifetime still is: a grace margin), each judged from state after an interfering change.

    Times are taken from when each request reached the catalog: the interposer in front of it notes when it
    forwarded each one (`FaultInjector.watch_arrivals`), else the client's send times stand in. A retry meant
    for 90% of the lifetime that reached the catalog only after the lifetime (a busy machine) is no evidence
    about "before": it is measured again with a new key, at most `measurements` times, else inconclusive."""
    from ctk.checks.common import Run

    run03 = Run(ctx, "LIFE-03", endpoint, Behaviour.LIFETIME_GRACE)
    run03.mark = run.mark
    discovery = ctx.discovery
    lifetime = discovery.lifetime if discovery is not None else None
    if discovery is None or lifetime is None:
        return [run.unsupported("no valid advertised lifetime"), run03.unsupported("no valid advertised lifetime")]
    seconds = lifetime.total_seconds()
    wait = seconds * fraction
    margin = max(0.5, seconds * 0.05)
    after = seconds + margin
    if wait > ctx.options.max_wait:
        why = (f"a retry at {fraction:.0%} of the advertised lifetime ({lifetime}) means waiting {wait:.0f} s, more "
               f"than max_wait ({ctx.options.max_wait:.0f} s)")
        return [run.unsupported(why, needs=needs.max_wait(wait)), run03.unsupported(why, needs=needs.max_wait(wait))]
    late: list[dict] = []
    for _ in range(max(1, measurements)):
        m = _lifetime_measure(run, ctx, endpoint, fraction, wait, seconds)
        if isinstance(m, Verdict):       # a setup that could not happen
            return [m, run03.inconclusive(m.message, needs=m.needs)]
        if m["late"] is None:
            break
        late.append(m["late"])
    else:
        arrived = ", ".join(f"{x['retry_after_s']:.2f} s" for x in late)
        why = (f"each retry meant for {fraction:.0%} of the lifetime ({wait:.1f} s) reached the catalog only after "
               f"the lifetime of {seconds:.1f} s ({arrived} after the first, by {late[-1]['judged_by']}), and was not "
               f"replayed: no evidence about a duplicate before expiry ({len(late)} measurements)")
        details = {"late_measurements": late, "lifetime_seconds": seconds}
        return [run.inconclusive(why, "retry arrived after the lifetime", details),
                run03.inconclusive("no measurement before expiry (see LIFE-01), so no grace to probe",
                                   "retry arrived after the lifetime", details)]
    case, key, first, retry, extra, counted, problems, details = (
        m["case"], m["key"], m["first"], m["retry"], m["extra"], m["counted"], m["problems"], m["details"])
    if late:
        details["late_measurements"] = late
    first_at = details["arrival"]["first_at"]
    if problems:
        v = broken(run, f"a duplicate {fraction:.0%} into the advertised lifetime ({discovery.lifetime_raw}) "
                   "is still replayed without executing again", "; ".join(problems)
                   + f" (it reached the catalog {details['arrival']['retry_after_s']:.2f} s after the first, within "
                   f"the lifetime of {seconds:.1f} s, by {details['arrival']['judged_by']})",
                   "forgotten" if (extra or counted) else "different response", details)
        return [v, run03.inconclusive("not replayed within the lifetime (see LIFE-01), so no grace to probe",
                                      v.classification)]
    if (blind := _blind(run, case, counted, details)) is not None:
        return [blind, run03.inconclusive(blind.message, needs=blind.needs)]
    gap = details["arrival"]["retry_after_s"]
    v1 = run.ok(f"replayed; the retry reached the catalog {gap:.1f} s after the first attempt "
                f"({details['arrival']['judged_by']})", "honoured", details)
    if after > ctx.options.max_wait or not case.reexecutable:
        why = (f"a retry {margin:.1f} s past the lifetime means waiting {after:.0f} s, more than max_wait "
               f"({ctx.options.max_wait:.0f} s)") if case.reexecutable else \
            f"{endpoint.operation} cannot be executed again, so an expired key would not show"
        return [v1, run03.unsupported(why, needs=needs.max_wait(after) if case.reexecutable else None)]
    # "Just after" the lifetime: the kit aims at `margin` past it and counts an arrival up to `margin` later still
    # (transit); a probe that reached the catalog later than that and was not replayed says nothing about a grace
    # just after the lifetime (a busy machine): measured again with a new key, else inconclusive.
    bound = seconds + 2 * margin
    probe: str | Verdict | tuple[Case, Exchange, Exchange, int, int | None, dict] = \
        _grace_probe(ctx, case, key, first, first_at, after, margin)
    late3: list[dict] = []
    while True:
        if isinstance(probe, str):
            return [v1, run03.inconclusive(f"a step of the probe past the lifetime failed: {probe}")]
        if isinstance(probe, Verdict):     # a measurement again whose setup could not happen
            return [v1, probe]
        case3, first3, late_ex, extra2, counted2, d3 = probe
        d3 = {**details, **d3}
        honoured = not _replay_problems(case3, first3, late_ex, extra2, counted2)
        if honoured or d3["late_arrival"]["retry_after_s"] <= bound:
            break
        late3.append({**d3["late_arrival"], "retry": describe(late_ex), "executions": extra2})
        if len(late3) >= max(1, measurements):
            arrived = ", ".join(f"{x['retry_after_s']:.2f} s" for x in late3)
            return [v1, run03.inconclusive(
                f"each probe meant for {margin:.1f} s past the lifetime of {seconds:.1f} s reached the catalog later "
                f"than {bound:.1f} s after the first ({arrived}, by {late3[-1]['judged_by']}) and was not replayed: no "
                f"evidence about a duplicate just after the lifetime ({len(late3)} measurements)",
                "retry arrived well after the lifetime", {**d3, "late_probes": late3})]
        m3 = _lifetime_measure(run03, ctx, endpoint, after / seconds, after, seconds, grace=True)
        if isinstance(m3, Verdict):
            probe = m3
        else:
            probe = (m3["case"], m3["first"], m3["retry"], m3["extra"], m3["counted"],
                     {"late_seconds": m3["details"]["arrival"]["retry_after_s"], "late_status": m3["retry"].status,
                      "late_arrival": m3["details"]["arrival"], "key": m3["key"]})
    if late3:
        d3["late_probes"] = late3
    if honoured:
        if (blind3 := _blind(run03, case3, counted2, d3)) is not None:
            return [v1, blind3]
        return [v1, run03.ok(f"still replayed {d3['late_seconds']:.1f} s after the first attempt, past the "
                             f"lifetime of {seconds:.1f} s", "grace after the lifetime", d3)]
    cls = "expires at the lifetime" if (extra2 or counted2) else f"other: {describe(late_ex)}"
    return [v1, broken(run03, f"a duplicate sent {margin:.1f} s after the advertised lifetime is still honoured "
                       "(a grace margin for transit and clock skew)",
                       f"it got {describe(late_ex)}, having reached the catalog {d3['late_seconds']:.2f} s after the "
                       f"first ({d3['late_arrival']['judged_by']}); executions visible in state: {extra2}", cls, d3)]


def _grace_probe(ctx: CheckContext, case: Case, key: str, first: Exchange, first_at: float, after: float,
                 margin: float) -> "str | tuple[Case, Exchange, Exchange, int, int | None, dict]":
    """The LIFE-03 probe on LIFE-01's case: the same key again `after` s after the first attempt reached the
    catalog. (case, first, the answer, executions, counted, details with when it arrived) or why a step failed.

    No second interference: after the replayed retry the state still shows the first one (a re-execution now
    would be visible again), and a second one may not even apply (re-creating what exists)."""
    watch = ctx.faults.watch_arrivals(FaultMatch.for_case(case, key))     # before the wait: nothing more after it
    try:
        _until_grace_probe_time(first_at + after)
        late_ex, extra2, counted2 = _retry_with_interference(
            ctx, case, key, f"retry, same key, {margin:.1f} s after the lifetime", counters=case.blind is not None,
            interfere=False)
        seen = ctx.faults.arrivals(watch) or []
    except PrerequisiteError as exc:
        return str(exc)
    finally:
        ctx.faults.unwatch(watch)
    if seen:
        arrival = {"retry_after_s": round(seen[-1] - first_at, 3),
                   "judged_by": "when the interposer forwarded each request to the catalog"}
    else:
        arrival = {"retry_after_s": round(late_ex.started_at - first_at, 3),
                   "judged_by": "when the client sent each request (no interposer saw them arrive)"}
    return (case, first, late_ex, extra2, counted2,
            {"late_seconds": arrival["retry_after_s"], "late_status": late_ex.status, "late_arrival": arrival})


def _lifetime_measure(run: Run, ctx: CheckContext, endpoint: Endpoint, fraction: float, wait: float,
                      lifetime: float, grace: bool = False) -> "Verdict | dict":
    """One LIFE-01 measurement: a first attempt, the interfering change, then the retry timed to reach the catalog
    `wait` s after the first did. A Verdict when the setup could not happen; else what was seen, with ``late``
    set (the arrival times) when the retry was not replayed but reached the catalog only after the lifetime."""
    case = endpoint.prepare(ctx)
    key = new_key()
    watch = ctx.faults.watch_arrivals(FaultMatch.for_case(case, key))
    try:
        before = case.observe()
        first = case.send(ctx.client, key=key, label="first attempt")
        if (v := _first_success(run, case, first)) is not None:
            return v
        if case.executions(before, case.observe()) != 1:
            return run.inconclusive("the first attempt's effect is not visible in state once")
        seen = ctx.faults.arrivals(watch) or []
        first_at = seen[0] if seen else first.started_at
        # The interfering change before the wait, so that the retry leaves when it should (on a busy machine the
        # change's requests pushed it past a short lifetime). Counters only where state cannot tell (case.blind):
        # the lifetime checks run side by side, and another check's setup moves its operation's counter.
        case.interfere()
        base = case.observe()
        (_until_grace_probe_time if grace else _until_retry_time)(first_at + wait)
        c0 = _counters(ctx) if case.blind is not None else None
        retry = case.send(ctx.client, key=key, header_name=LOWER,
                          label=f"retry, same key, {fraction:.0%} of the lifetime after the first")
        c1 = _counters(ctx) if case.blind is not None else None
        extra = case.executions(base, case.observe())
        seen = ctx.faults.arrivals(watch) or []
    finally:
        ctx.faults.unwatch(watch)
    counted = counter_delta(c0, c1, endpoint.operation)
    arrival: dict[str, Any]
    if len(seen) >= 2:
        arrival = {"first_at": seen[0], "retry_after_s": round(seen[1] - seen[0], 3),
                   "judged_by": "when the interposer forwarded each request to the catalog"}
    else:
        arrival = {"first_at": first.started_at, "retry_after_s": round(retry.started_at - first.started_at, 3),
                   "judged_by": "when the client sent each request (no interposer saw them arrive)"}
    problems = _replay_problems(case, first, retry, extra, counted)
    details = {"key": key, "waited_seconds": round(time.time() - arrival["first_at"], 2), "lifetime_seconds": lifetime,
               "arrival": arrival}
    late = None
    if problems and arrival["retry_after_s"] >= lifetime:
        late = {"key": key, "retry_after_s": arrival["retry_after_s"], "judged_by": arrival["judged_by"],
                "retry": describe(retry), "executions": extra}
    return {"case": case, "key": key, "first": first, "retry": retry, "extra": extra, "counted": counted,
            "problems": problems, "details": details, "late": late}


def _until_retry_time(deadline: float) -> None:
    """Wait until the LIFE-01 retry is due (its own name: a test can make that retry late)."""
    _sleep_until(deadline)


def _until_grace_probe_time(deadline: float) -> None:
    """Wait until the LIFE-03 probe past the lifetime is due (its own name: a test can make that probe late)."""
    _sleep_until(deadline)


def _sleep_until(deadline: float) -> None:
    while (left := deadline - time.time()) > 0:
        time.sleep(min(left, 1.0))


# ----------------------------------------------------------------------------------------------------------
@check(requirement="RECON-01", behaviour=Behaviour.REPLAY_FAILED,
       also=(("RECON-03", Behaviour.REPLAY_FAILED_SUBTYPE),))
@guarded()
def check_replay_failed(run: Run, ctx: CheckContext, endpoint: Endpoint) -> list[Verdict]:
    """RECON-01 (a finalized answer that cannot be produced: 5xx, never a re-execution) and RECON-03 (that
    5xx carries the subtype idempotency_replay_failed)."""
    from ctk.checks.common import Run

    run03 = Run(ctx, "RECON-03", endpoint, Behaviour.REPLAY_FAILED_SUBTYPE)
    run03.mark = run.mark
    if (why := _cannot_inject(ctx, "corrupt_stored_response", NEEDS_CORRUPT_STORED)) is not None:
        return [run.unsupported(why, needs=needs.CONTROL_API), run03.unsupported(why, needs=needs.CONTROL_API)]
    case = endpoint.prepare(ctx)
    key = new_key()
    ctx.faults.corrupt_stored_response(FaultMatch.for_case(case, key))
    first = case.send(ctx.client, key=key, label="first attempt (its stored response is made unreadable)")
    if (v := _first_success(run, case, first)) is not None:
        return [v, run03.inconclusive(v.message, needs=v.needs)]
    retry, extra, counted = _retry_with_interference(ctx, case, key, "retry, same key")
    sub = error_of(retry).get("subtype")
    details = {"key": key, "executions_on_retry": extra, "counter_delta": counted, "subtype": sub}
    problems = []
    if extra or counted:
        problems.append(f"the retry executed the mutation again (state: {extra}, counter: {counted})")
    if retry.status is None or retry.status < 500:
        problems.append(f"the retry got {describe(retry)}, not a 5xx")
    if problems:
        v1 = broken(run, "when the finalized response cannot be produced: a 5xx, and no re-execution",
                    "; ".join(problems), "re-executed" if (extra or counted) else describe(retry), details)
        return [v1, run03.inconclusive("no 5xx without re-execution to inspect (see RECON-01)", v1.classification)]
    if (v := _blind(run, case, counted, details)) is not None:
        return [v, run03.inconclusive(v.message, needs=v.needs)]
    v1 = run.ok(f"{describe(retry)}; not re-executed", "replay failed", details)
    if sub == "idempotency_replay_failed":
        return [v1, run03.ok(f"{describe(retry)}", sub, details)]
    return [v1, broken(run03, "the 5xx carries the subtype idempotency_replay_failed",
                       f"the {retry.status} carries subtype {sub!r}", f"{retry.status} without subtype", details)]


@check(requirement="RECON-02", behaviour=Behaviour.CRASH_RECONCILED)
@guarded()
def check_crash_reconciled(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict | list[Verdict]:
    if (why := _cannot_inject(ctx, "crash_before_finalize", NEEDS_CRASH_BEFORE_FINALIZE)) is not None:
        return run.unsupported(why, needs=needs.CONTROL_API)
    case = endpoint.prepare(ctx)
    key = new_key()
    before = case.observe()
    ctx.faults.crash_before_finalize(FaultMatch.for_case(case, key))
    first = case.send(ctx.client, key=key, label="first attempt (commits, then 'crashes' before finalizing)")
    if first.status is None or first.status < 500:
        return run.inconclusive(f"the injected crash did not happen (got {describe(first)})")
    mid = case.observe()
    if case.executions(before, mid) != 1:
        return run.inconclusive("the crash did not leave the mutation committed")
    c0 = _counters(ctx)
    retry = case.send(ctx.client, key=key, header_name=LOWER, label="retry, same key (record left IN_PROGRESS)")
    c1 = _counters(ctx)
    after = case.observe()
    extra, counted = case.executions(mid, after), counter_delta(c0, c1, endpoint.operation)
    details = {"key": key, "executions_on_retry": extra, "counter_delta": counted}
    problems = []
    if retry.status not in endpoint.success:
        problems.append(f"the retry got {describe(retry)}, not success")
    if extra or counted:
        problems.append(f"the retry executed the mutation again (state: {extra}, counter: {counted})")
    if problems:
        return broken(run, "the IN_PROGRESS record left by the crash is reconciled from state on retry: success, "
                          "one execution", "; ".join(problems),
                          "re-executed" if (extra or counted) else describe(retry), details)
    if (v := _blind(run, case, counted, details)) is not None:
        return v
    return run.ok(f"reconciled: {describe(retry)}, executed once", "reconciled", details)


# ----------------------------------------------------------------------------------------------------------
@check(requirement="REPLAY-04", behaviour=Behaviour.LOST_ANSWER)
def check_lost_answers(ctx: CheckContext, endpoint: Endpoint, modes: tuple[str, ...] | None = None) -> list[Verdict]:
    out = []
    for mode in modes or ctx.options.lose_modes:
        out += check_lost_answer(ctx, endpoint, mode=mode, behaviour=Behaviour(f"lost-answer-{mode}"))
    db = ctx.db_link_faults
    if db is not None:   # the database's answer to the catalog's commit is cut
        from ctk.checks.db_link import check_db_commit_cut

        out += check_db_commit_cut(ctx, db.link, endpoint)
    return out


# (behaviour, function) pairs, in the report's column order: the registered checks of the idempotency area
ENDPOINT_CHECKS = [(c.behaviour, c.fn) for c in registered("idempotency")]
