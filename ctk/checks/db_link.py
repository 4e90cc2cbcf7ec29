"""Fault scenarios between the catalog and its database, through an interposer in front of the database.

``db_interposer`` fronts the database the catalog was configured with (an in-process Interposer, or a
`ctk.interposer.client.ProxyLink` from ``--ctk-db-link``); ``ctx.client`` talks to the catalog. Faults by
intention (`ctk.interposer.faults.LinkFaults`), judged from catalog state as the network scenarios are
(`ctk.checks.network`; both drive the mutation with `ctk.checks.faulted`).

Entry points (all return ``list[Verdict]``):

- ``check_db_latency_inflight(ctx, db_interposer, endpoint)``: INFLIGHT-01, a duplicate while a slow link
  holds the original in flight
- ``check_db_link_failure(ctx, db_interposer, endpoint, mode)``: REPLAY-03, the link fails during the mutation
  (``reset_peer``, ``down``, ``fail_write``); ``db_link_failure(run, ...)`` is one verdict on a `Run`
- ``check_db_commit_cut(ctx, db_interposer, endpoint)``: REPLAY-04 at the database, the answer to COMMIT cut
- ``run_db_link_scenarios(ctx, db_interposer, endpoints=None)``: latency and link failures per endpoint
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ctk.checks.common import (Run, counter_delta, describe, error_of, guarded,
                               single_execution_problems)
from ctk.checks.faulted import (NetworkOptions, attempt_statuses, effects_check, execution_counters,
                                execution_error, http_match, retrying_client, send_mutation,
                                why_invisible)
from ctk.checks.judging import broken
from ctk.core.behaviours import Behaviour, check
from ctk.core.verdicts import Verdict
from ctk.history.recorder import History
from ctk.catalog import Endpoint, get_endpoint
from ctk.client.keys import new_key
from ctk.client.retrying import IdempotencyWindowExpired
from ctk.interposer.faults import DB_FAILURES, HttpFaults, LinkFaults
from ctk.checks.context import CheckContext
from ctk.interposer.faults import DbLink


@check(requirement="INFLIGHT-01", behaviour=Behaviour.DB_LATENCY_IN_FLIGHT)
def check_db_latency_inflight(ctx: CheckContext, db_interposer: DbLink, endpoint: Endpoint | str,
                              options: NetworkOptions | None = None) -> list[Verdict]:
    """INFLIGHT-01: a latency toxic on the DB link holds the mutation in flight; a duplicate with the same key
    arrives meanwhile and must get 409 request_in_progress or wait and replay; one execution in state."""
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded("INFLIGHT-01", Behaviour.DB_LATENCY_IN_FLIGHT)
    def check(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict:
        case = endpoint.prepare(ctx)
        key = new_key()
        history = History()
        before = case.observe()
        c0 = execution_counters(ctx)
        link = LinkFaults(db_interposer)
        result: dict[str, Any] = {}

        def send(tag: str, process: str) -> None:
            inv = history.invoke(process, endpoint.operation, value=key, key=key, op_id=1,
                                 attempt=1 if tag == "first" else 2)
            ex = case.send(ctx.client, key=key, label=f"{tag} (DB link latency {opts.db_latency_ms} ms)",
                           timeout=60.0)
            history.record_exchange(inv, ex)
            result[tag] = ex

        name = link.db_hold(opts.db_latency_ms)
        try:
            t = threading.Thread(target=send, args=("first", "kit-1"), daemon=True)
            t.start()
            time.sleep(opts.db_lead)
            send("duplicate", "kit-2")
            t.join(timeout=90)
        finally:
            link.remove(name)
        first, dup = result.get("first"), result.get("duplicate")
        after = case.observe()
        c1 = execution_counters(ctx)
        n = case.executions(before, after)
        counted = counter_delta(c0, c1, endpoint.operation)
        runs = max(n, counted or 0)
        details: dict[str, Any] = {"key": key, "latency_ms": opts.db_latency_ms, "executions_state": n,
                                   "counter_delta": counted, "history": history.to_list(),
                                   "first": describe(first) if first else None,
                                   "duplicate": describe(dup) if dup else None}
        if first is None or dup is None:
            return run.inconclusive("an attempt did not finish in time", "timeout", details)
        first_end = first.started_at + first.elapsed_ms / 1000.0
        overlapped = dup.started_at < first_end
        details["overlapped"] = overlapped
        expected = ("a duplicate arriving while the original is held in flight by a slow database link never "
                    "executes a second time: 409 request_in_progress or wait-and-replay")
        if runs >= 2 or execution_error(dup) or (first.status not in endpoint.success and execution_error(first)):
            return run.broken(expected, f"{endpoint.operation} executed twice (state {n}, counter {counted}); first "
                              f"{describe(first)}, duplicate {describe(dup)}", "second execution", details)
        if first.status not in endpoint.success:
            return run.inconclusive(f"the first attempt did not succeed ({describe(first)})", "first failed", details)
        if not overlapped:
            return run.inconclusive(f"the duplicate was sent after the first finished; {opts.db_latency_ms} ms of DB "
                                    "latency did not hold it in flight long enough", "no overlap", details)
        if n != 1:
            return run.inconclusive(f"the effect is not visible in state once (seen {n})", "not visible", details)
        if dup.status == 409 and error_of(dup).get("subtype") == "request_in_progress":
            cls = "409 request_in_progress"
        elif dup.status == 409:
            cls = "plain 409"
        elif dup.status == first.status and case.identity(dup) == case.identity(first):
            cls = "wait-and-replay"
        else:
            return run.broken(expected, f"the duplicate got {describe(dup)}", f"other: {describe(dup)}", details)
        return run.ok(f"duplicate during DB latency: {cls}; executed once", cls, details)

    return check(ctx, ep)


@check(requirement="REPLAY-03", behaviour=Behaviour.DB_LINK_RESET_PEER,
       also=(("REPLAY-03", Behaviour.DB_LINK_DOWN), ("REPLAY-03", Behaviour.DB_LINK_FAIL_WRITE)))
def check_db_link_failure(ctx: CheckContext, db_interposer: DbLink, endpoint: Endpoint | str, mode: str = "reset_peer",
                          options: NetworkOptions | None = None) -> list[Verdict]:
    """REPLAY-03: the DB link fails (``reset_peer``, ``down``, or ``fail_write``: the catalog's first write
    statement is dropped and its connection reset, once) during the mutation, the client gets a 5xx; after the
    link is back the retry with the same key executes exactly once and succeeds."""
    if mode not in DB_FAILURES:
        raise ValueError(f"mode must be one of {', '.join(DB_FAILURES)}")
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded("REPLAY-03", Behaviour(f"db-link-{mode.replace('_', '-')}"))
    def check(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict:
        return db_link_failure(run, ctx, endpoint, db_interposer, mode, opts)

    return check(ctx, ep)


def db_link_failure(run: Run, ctx: CheckContext, endpoint: Endpoint, db_interposer: DbLink, mode: str = "reset_peer",
                    opts: NetworkOptions | None = None) -> Verdict:
    """REPLAY-03 through the database link (see `check_db_link_failure`); one verdict on `run`.

    With ``fail_write``, a catalog whose first attempt still succeeded although its write was cut (a pool or a
    driver ran the write again on a fresh connection) is measured once more with ``fail_write_hold``: the link
    stays down from the cut write until the catalog answered, so the retry meets the broken link too."""
    opts = opts or NetworkOptions()
    link = LinkFaults(db_interposer)
    verdict, absorbed = _db_link_attempt(run, ctx, endpoint, link, mode, opts)
    if absorbed is None:
        return verdict
    verdict, _ = _db_link_attempt(run, ctx, endpoint, link, "fail_write_hold", opts, absorbed)
    return verdict


def _db_link_attempt(run: Run, ctx: CheckContext, endpoint: Endpoint, link: LinkFaults, mode: str, opts: NetworkOptions,
                     earlier: dict | None = None) -> tuple[Verdict, dict | None]:
    """One measurement of `db_link_failure`: (verdict, None), or (an inconclusive verdict, what was seen) when a
    ``fail_write`` cut a write and the catalog answered success all the same (the write was retried inside)."""
    case = endpoint.prepare(ctx)
    key = new_key()
    history = History()
    before = case.observe()
    seen: dict[str, Any] = {}
    failed: dict[str, Any] = {}
    held = mode == "fail_write_hold"
    front = _front_interposer(ctx) if held else None
    http = HttpFaults(front) if front is not None else None
    answer_rule = http.record_answer(http_match(ctx, case, key)) if http is not None else None

    def restore() -> None:
        if "rule" in failed:
            rule = failed.pop("rule")
            seen["cut"] = bool(link.cuts(rule)) if rule else None
            link.db_restore(rule)

    def between() -> None:
        if held and http is not None and answer_rule is not None:
            # the link stays down until the catalog answered: the interposer in front of it saw the answer
            seen["answered"] = http.wait_answer(answer_rule, opts.answer_wait)
        restore()
        seen["mid"] = case.observe()
        seen["n1"] = case.executions(before, seen["mid"])
        if seen["n1"] == 1:  # it landed after all: the retry must replay, make a re-execution visible
            case.interfere()
        seen["base"] = case.observe()

    # fail_write: one write fails, the link works for everything after it (a 5xx stored would be replayed);
    # fail_write_hold: from that write on the link is down until the catalog answered
    failed["rule"] = link.db_fail(mode, write_pattern=opts.db_write_pattern)
    rc = retrying_client(ctx, history, between, opts)
    try:
        final = send_mutation(rc, case, key, f"{endpoint.operation} (database link {mode})", timeout=30.0)
    except IdempotencyWindowExpired as exc:
        return run.inconclusive(f"the retrying client stopped: {exc}", "window expired", {"key": key}), None
    finally:
        restore()
        if http is not None:
            http.remove(answer_rule)
    cut = bool(seen.get("cut"))
    attempts = list(rc.last_attempts)
    details: dict[str, Any] = {"key": key, "mode": mode, "attempts": attempt_statuses(attempts),
                               "history": history.to_list()}
    if earlier is not None:
        details["earlier"] = earlier
    if held:
        details["answer_seen_by_interposer"] = seen.get("answered")
    first = attempts[0]
    if "n1" not in seen:
        if mode == "fail_write" and cut and first.status in endpoint.success:
            why = (f"the catalog's write was cut on the database link, yet the first attempt got {describe(first)}: "
                   "the catalog (its connection pool or driver) ran the write again on a fresh connection")
            return run.inconclusive(why, "write retried inside", details), {"attempts": details["attempts"], "why": why}
        if held and cut and first.status in endpoint.success:
            return run.inconclusive(
                f"the link stayed down from the cut write until the catalog answered, yet the first attempt got "
                f"{describe(first)}: the catalog answered without its database ({_why_earlier(earlier)})",
                "fault missed", details), None
        text = f"the database link failure did not reach the client: the first attempt got {describe(first)}"
        if mode in ("fail_write", "fail_write_hold") and not cut:
            text += f" (the catalog sent no write matching {opts.db_write_pattern!r} while the fault was armed)"
        return run.inconclusive(text, "fault missed", details), None
    if first.status is None or first.status < 500:
        return run.inconclusive(f"the first attempt got {describe(first)}, not a 5xx", "no 5xx", details), None
    after = case.observe()
    total = seen["n1"] + case.executions(seen["base"], after)
    details.update(executions=total, committed_before_failure=seen["n1"])
    hc = effects_check(history, key, total)
    details["history_check"] = hc.to_dict()
    how = mode if not held else "fail_write_hold (the link down from the cut write until the catalog answered)"
    if earlier is not None:
        how += f"; a single cut write was retried inside the catalog ({earlier.get('attempts')})"
    problems = []
    if final.status not in endpoint.success:
        problems.append(f"the retry after the link came back got {describe(final)}, not success")
    if total != 1:
        problems.append(f"{endpoint.operation} executed {total} times in state")
    if problems:
        return broken(run, f"a 5xx from a broken database link is not stored: after the link is back the retry "
                          f"with the same key executes {endpoint.operation} once and succeeds",
                          "; ".join(problems) + f"\nDB link {how}\nattempts: {attempt_statuses(attempts)}"
                          f"\nhistory check: {hc}",
                          "5xx replayed" if final.status == first.status else f"final {describe(final)}",
                          details), None
    return run.ok(f"DB link {how}: {describe(first)}; retry {describe(final)}; executed once",
                  "executed once" if not seen["n1"] else "committed, replayed", details), None


def _front_interposer(ctx: CheckContext) -> Any:
    """The interposer between the kit and the catalog, when the run has one (it sees the catalog's answers)."""
    faults = getattr(ctx, "faults", None)
    inner = getattr(faults, "inner", faults)
    return getattr(inner, "interposer", None)


def _why_earlier(earlier: dict | None) -> str:
    return str((earlier or {}).get("why", "")) or "no earlier measurement"


@check(requirement="REPLAY-04", behaviour=Behaviour.DB_COMMIT_CUT)
def check_db_commit_cut(ctx: CheckContext, db_link: DbLink, endpoint: Endpoint | str,
                        options: NetworkOptions | None = None) -> list[Verdict]:
    """REPLAY-04 at the database: the database's answer to the catalog's COMMIT is cut (``cut_after`` on the
    database link: the commit lands, the catalog never hears the outcome). The catalog must not answer a
    success it cannot confirm (a success is allowed only with the effect in state), and the retry with the
    same key ends with success and one execution."""
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded("REPLAY-04", Behaviour.DB_COMMIT_CUT)
    def check(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict:
        return db_commit_cut(run, ctx, endpoint, db_link, opts)

    return check(ctx, ep)


def db_commit_cut(run: Run, ctx: CheckContext, endpoint: Endpoint, db_link: DbLink, opts: NetworkOptions | None = None) -> Verdict:
    opts = opts or NetworkOptions()
    case = endpoint.prepare(ctx)
    key = new_key()
    before = case.observe()
    link = LinkFaults(db_link)
    name = link.db_cut_after_commit(opts.db_commit_pattern)
    try:
        first = case.send(ctx.client, key=key, label=f"first attempt (the database's answer to the catalog's "
                          f"{opts.db_commit_pattern} is cut)", timeout=60.0)
    finally:
        link.remove(name)
    cuts = link.cuts(name)
    details: dict[str, Any] = {"key": key, "first": describe(first), "cut": cuts[0].get("sent") if cuts else None}
    if not cuts:
        return run.inconclusive(f"the catalog sent no {opts.db_commit_pattern!r} to its database during "
                                f"{endpoint.operation} (it got {describe(first)}): nothing was cut", "no commit seen",
                                details)
    mid = case.observe()
    n1 = case.executions(before, mid)
    details["committed"] = n1
    if first.status in endpoint.success and n1 != 1:
        return broken(run, "after the database's answer to its commit was lost, the catalog answers success only "
                      "for a change it confirmed", f"it answered {describe(first)}, but the state shows {n1} "
                      f"execution(s) of {endpoint.operation}", "unconfirmed success", details)
    if first.status is not None and 400 <= first.status < 500:
        if execution_error(first):
            return broken(run, "a catalog that lost its database's answer to the commit does not run the change "
                          "again", f"it answered {describe(first)}, the error a second execution gives",
                          "re-executed", details)
        return run.inconclusive(f"the catalog answered {describe(first)} after the cut", describe(first), details)
    if n1 == 1:
        case.interfere()
    base = case.observe()
    c0 = execution_counters(ctx)
    retry = case.send(ctx.client, key=key, label="retry, same key, after the database's answer was cut")
    c1 = execution_counters(ctx)
    after = case.observe()
    extra = case.executions(base, after)
    counted = counter_delta(c0, c1, endpoint.operation)
    total = n1 + extra
    details.update(retry=describe(retry), executions=total, counter_delta=counted)
    if n1:   # committed: the retry must replay (a re-execution shows after the interfering change)
        problems = single_execution_problems(endpoint, retry, extra, counted, "the retry got")
    else:    # nothing committed: the retry must execute, once
        problems = single_execution_problems(endpoint, retry, 0, None, "the retry got")
        if extra != 1:
            problems.append(f"nothing had been committed and the retry left {extra} execution(s) in state")
    if problems:
        return broken(run, "after the database's answer to the catalog's commit was cut, the retry with the same key "
                      f"ends with success and {endpoint.operation} ran exactly once", "; ".join(problems)
                      + f"\nfirst: {describe(first)} (the cut followed {details['cut']!r})",
                      "re-executed" if (n1 and (extra or counted)) else f"retry {describe(retry)}", details)
    if n1 and (why := why_invisible(case, counted)) is not None:
        return run.inconclusive(f"the retry was answered like a replay, but {why}", "not visible", details)
    how = ("committed before the cut, the catalog answered " + describe(first) if n1
           else "the cut came before anything was committed; the catalog answered " + describe(first))
    return run.ok(f"database answer to {opts.db_commit_pattern} cut: {how}; the retry got {describe(retry)}; "
                  "executed once", "committed, replayed" if n1 else "cut before commit, executed on retry", details)


def run_db_link_scenarios(ctx: CheckContext, db_interposer: DbLink, endpoints: list[str] | None = None,
                          modes: tuple[str, ...] = ("reset_peer", "down"),
                          options: NetworkOptions | None = None) -> list[Verdict]:
    out: list[Verdict] = []
    for op in endpoints or ["updateTable"]:
        out += check_db_latency_inflight(ctx, db_interposer, op, options)
        for mode in modes:
            out += check_db_link_failure(ctx, db_interposer, op, mode, options)
    return out
