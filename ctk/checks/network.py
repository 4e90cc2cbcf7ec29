"""Network fault scenarios through the interposer, for every mutation of the endpoint catalog, on any target.

The kit's client talks to an in-process `ctk.interposer.Interposer` that sits between it and the target URL
(``ctx.client`` must point at the interposer). Each scenario prepares a `Case` of the endpoint catalog, arms
a fault by intention (`ctk.interposer.faults`: `HttpFaults` between kit and catalog, `LinkFaults` between the
catalog and its database; only they know toxic names) that applies only to the mutation (method, path and the
Idempotency-Key value), drives
the mutation with the kit's `RetryingClient` (keys on, the same key on every retry) recording every attempt
in a `History`, and judges from catalog STATE (``case.observe()`` / ``case.executions()``, with the
interference step between the attempts so that a re-execution becomes visible) plus the final answer the
client got. When the target also has the reference control API, its execution counters are a second
witness.

Scenarios (behaviour -> requirement):

=========================  ===========  ===========================================================
lost-drop                  REPLAY-04    committed, then the connection closes without an answer
lost-503                   REPLAY-04    committed, the answer is replaced by a 503
lost-reset                 REPLAY-04    committed, a TCP RST after the first bytes of the answer
lost-timeout               REPLAY-04    committed, the answer is held longer than the first attempt's
                                        timeout (the retries get the normal one); the retry waits for
                                        the held answer to reach the interposer, so state is read after
                                        the catalog finished, not after a guessed time
slow-link                  REPLAY-04    the link delays every answer longer than the first attempt's
                                        timeout; the link recovers before the retry (which waits as above)
network-duplicate          HIST-02      the network delivers the request twice (the copy after the
                                        first answer; held until the kit made a re-execution visible
                                        where it would leave no trace): the copy must be replayed
network-duplicate-inflight INFLIGHT-01  copies sent with the request as bursts until the interposer
                                        observes an overlap (ctk.checks.bursts); the owner is held at
                                        the server (control API) or its database held (--ctk-db-link);
                                        a retry after an in-flight 409 goes once the burst was answered
                                        whole (the interposer's event), not after a fixed Retry-After
=========================  ===========  ===========================================================

Entry points (all return ``list[Verdict]``):

- ``run_network_scenarios(ctx, interposer, endpoints=None, scenarios=None, options=None)``
- ``check_network_scenario(ctx, endpoint, interposer, scenario, options=None)``
- ``run_seed_example(ctx, interposer, variants=("1a", "1b"))``: seed example 1a/1b through the interposer
  (1a is the CONTROL: a blind client corrupts the table, so its INTEG-01 verdict is expected to FAIL;
  its details carry ``{"control": True, "expected": "fail"}``)
- ``check_db_latency_inflight(ctx, db_interposer, endpoint)``, ``check_db_link_failure(ctx, db_interposer,
  endpoint, mode)``, ``check_db_commit_cut(ctx, db_interposer, endpoint)`` and ``run_db_link_scenarios(ctx,
  db_interposer, endpoints=None)``: the interposer between the catalog and its database (INFLIGHT-01,
  REPLAY-03, REPLAY-04 at the database); ``db_interposer`` fronts the database the catalog was configured
  with (an in-process Interposer, or a `ctk.interposer.client.ProxyLink` from ``--ctk-db-link``),
  ``ctx.client`` talks to the catalog.

Answers the client never got (lost, or a copy's) are read by the interposer and join the observed state
(``case.learned``: a plan-id). Limit: a re-execution that leaves neither state nor answer changed (cancelling
a cancelled plan, on a target that answers a cancel of a missing plan with 204) stays inconclusive without
counters.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from ctk.checks.common import (Run, counter_delta, describe, error_of, guarded, setup_failed,
                               single_execution_problems)
from ctk.checks.faults import FaultMatch
from ctk.checks.judging import broken
from ctk.core.behaviours import Behaviour, check
from ctk.core.verdicts import Verdict
from ctk.history.checkers import check_effects
from ctk.history.recorder import History
from ctk.history.writer import StageError
from ctk.catalog import ENDPOINTS, Endpoint, PrerequisiteError, get_endpoint
from ctk.client.keys import new_key
from ctk.client.retrying import IdempotencyWindowExpired, RetryingClient
from ctk.interposer.faults import DB_FAILURES, HttpFaults, LinkFaults

LOST = ("lost-drop", "lost-503", "lost-reset", "lost-timeout", "slow-link")
DUPLICATES = ("network-duplicate", "network-duplicate-inflight")
SCENARIOS = LOST + DUPLICATES
REQUIREMENT = {**{s: "REPLAY-04" for s in LOST}, "network-duplicate": "HIST-02",
               "network-duplicate-inflight": "INFLIGHT-01"}
EXECUTION_ERRORS = ("alreadyexists", "nosuch", "notempty", "commitfailed")


@dataclass
class NetworkOptions:
    timeout: float = 0.15          # client timeout (seconds) of the FIRST attempt in lost-timeout / slow-link (the
                                   # retries get the target's normal timeout)
    margin: float = 0.75           # how much longer than the timeout the answer is held / delayed
    answer_wait: float = 30.0      # lost-timeout / slow-link: longest wait for the held answer to reach the
                                   # interposer (the evidence that the catalog finished) before the retry
    reset_bytes: int = 12          # lost-reset: bytes of the answer sent before the RST ("HTTP/1.1 200")
    max_attempts: int = 5          # RetryingClient attempts
    max_sleep: float = 2.0         # cap of one backoff sleep
    hold: float = 0.8              # network-duplicate-inflight: server-side hold when the control API exists
    copy_wait: float = 15.0        # longest wait for the duplicate copy's answer
    db_latency_ms: int = 120       # check_db_latency_inflight: latency of the database link
    db_lead: float = 0.25          # seconds between the first request and its duplicate
    bursts: Any = None             # network-duplicate-inflight: ctk.checks.bursts.BurstOptions (None: defaults)
    db_commit_pattern: str = "COMMIT"  # check_db_commit_cut: what the catalog sends its database to commit
    db_write_pattern: str = r"INSERT INTO|UPDATE \S+ SET|DELETE FROM"  # fail_write: a write statement


# ----------------------------------------------------------------------------------------------------------
# helpers

def _match(ctx: Any, case: Any, key: str | None) -> Any:
    """The interposer's match for the case's request, its path as the context's client sends it."""
    from ctk.interposer import HttpMatch

    fm = FaultMatch.for_case(case, key)
    path = fm.path_regex(ctx.client)
    if key is None:
        return HttpMatch(method=fm.method, path=path)
    return HttpMatch(method=fm.method, path=path, header="Idempotency-Key", header_value=key)


def _counters(ctx: Any) -> dict | None:
    faults = getattr(ctx, "faults", None)
    return faults.executions() if faults is not None and faults.supports("executions") else None


def _execution_error(ex: Any) -> bool:
    t = str(error_of(ex).get("type", "")).lower()
    return any(s in t for s in EXECUTION_ERRORS)


def _retrying(ctx: Any, history: History, between: Callable[[], None] | None, opts: NetworkOptions,
              use_keys: bool = True, settled: Callable[[float], bool] | None = None) -> RetryingClient:
    """A RetryingClient whose first backoff sleep runs ``between`` (link recovery, observation, interference).
    ``settled(seconds)``: waits at most `seconds` for an event after which nothing of this mutation is in
    flight any more (a burst answered whole) and says whether it came; then a backoff sleep (Retry-After
    included) is cut to the plain exponential one: waiting longer would buy no evidence."""
    calls = {"n": 0}

    def sleep(seconds: float) -> None:
        calls["n"] += 1
        if calls["n"] == 1 and between is not None:
            between()
        seconds = max(0.0, min(seconds, opts.max_sleep))
        if settled is not None:
            started = time.monotonic()
            if settled(seconds):
                floor = min(0.5, 0.05 * 2 ** (calls["n"] - 1))
                seconds = min(seconds, floor)
            seconds -= time.monotonic() - started
        time.sleep(max(0.0, seconds))

    return RetryingClient(ctx.client, ctx.discovery, max_attempts=opts.max_attempts, base_delay=0.05,
                          max_delay=0.5, max_retry_after=opts.max_sleep, use_keys=use_keys, history=history,
                          process="kit", sleep=sleep)


def _mutate(rc: RetryingClient, case: Any, key: str | None, label: str, timeout: float | None = None,
            first_timeout: float | None = None) -> Any:
    r = case.request
    return rc.mutate(r.method, r.path, json=r.json, params=r.params, op=case.endpoint.operation, value=key,
                     key=key, label=label, timeout=timeout, first_timeout=first_timeout)


def _keys_problem(attempts: list) -> str | None:
    keys = {a.request_headers.get("Idempotency-Key") for a in attempts}
    if len(keys) != 1 or None in keys:
        return f"the retrying client did not send one key on every attempt (keys: {sorted(map(str, keys))})"
    return None


def _invisible(case: Any, counted: int | None, copy: bool = False) -> str | None:
    """Why a second execution could go unseen here (``case.blind``, or ``case.copy_blind`` for a network
    copy) when the target has no execution counters; None when state or counters can tell."""
    if counted is not None:
        return None
    return case.blind or (case.copy_blind if copy else None)


def _history_check(history: History, key: str, executions: int) -> Any:
    """The history checker on the operation: value = key, observed = the key once per execution in state."""
    return check_effects(history, [key] * max(0, executions))


def _statuses(attempts: list) -> list:
    return [a.status if a.status is not None else (a.error or "error").split(":", 1)[0] for a in attempts]


# ----------------------------------------------------------------------------------------------------------
# lost answers, timeout, slow link

def _learn_swallowed(faults: HttpFaults, case: Any, names: list[str], attempts: list | None = None) -> None:
    """The answers the faults kept from the client, as the interposer read them, join the observed state
    (planTableScan: the plan-id the first attempt made, which the client never saw)."""
    from ctk.core.exchange import Exchange

    like = attempts[0] if attempts else None
    for name in names:
        for e in faults.kept_answers(name):
            case.learned(Exchange(like.method if like else "?", like.url if like else "?", status=e["status"],
                                  response_body=e["body"], label=f"answer kept from the client by {name}"))


def _arm_lost(ctx: Any, faults: HttpFaults, case: Any, key: str, scenario: str,
              opts: NetworkOptions) -> tuple[list[str], str | None, float | None]:
    """(rules to remove, the rule whose kept answer shows the catalog finished, the first attempt's timeout)."""
    m = _match(ctx, case, key)
    held = opts.timeout + opts.margin
    if scenario == "lost-drop":
        return [faults.drop_answer(m)], None, None
    if scenario == "lost-503":
        return [faults.answer_503(m)], None, None
    if scenario == "lost-reset":
        return [faults.reset_answer(m, after_bytes=opts.reset_bytes)], None, None
    if scenario == "lost-timeout":
        name = faults.delay_answer(m, held)
        return [name], name, opts.timeout
    if scenario == "slow-link":
        link = faults.hold_link(held, name=f"ctk_slow_link_{key[-8:]}")
        # the answer the client will not wait for is recorded by the interposer (what it names is known)
        record = faults.record_answer(m)
        return [link, record], record, opts.timeout
    raise ValueError(f"unknown lost-answer scenario {scenario!r}")


FAULT_TEXT = {
    "lost-drop": "committed, connection closed without an answer",
    "lost-503": "committed, answer replaced by 503",
    "lost-reset": "committed, TCP reset mid-response",
    "lost-timeout": "committed, answer held past the client timeout",
    "slow-link": "committed, the slow link delivers the answer after the client timeout",
}


def _lost(run: Run, ctx: Any, endpoint: Endpoint, ip: Any, scenario: str, opts: NetworkOptions) -> Verdict:
    case = endpoint.prepare(ctx)
    key = new_key()
    history = History()
    before = case.observe()
    seen: dict[str, Any] = {}
    faults = HttpFaults(ip)
    names, witness, first_timeout = _arm_lost(ctx, faults, case, key, scenario, opts)

    def between() -> None:
        if scenario == "slow-link":       # the link recovers before the retry
            faults.remove(names[0])
        if witness is not None:
            # the first attempt timed out on purpose, maybe before the catalog finished: its answer reaching
            # the interposer is the evidence that it did (state is observed after that, not after a guess)
            seen["answer_reached_interposer"] = faults.wait_answer(witness, opts.answer_wait)
        _learn_swallowed(faults, case, names, attempts=rc.last_attempts)
        seen["mid"] = case.observe()
        seen["n1"] = case.executions(before, seen["mid"])
        if seen["n1"] == 1:
            case.interfere()
        seen["base"] = case.observe()
        seen["c0"] = _counters(ctx)

    rc = _retrying(ctx, history, between, opts)
    try:
        final = _mutate(rc, case, key, f"{endpoint.operation} ({FAULT_TEXT[scenario]})", first_timeout=first_timeout)
    except IdempotencyWindowExpired as exc:
        return run.inconclusive(f"the retrying client stopped: {exc}", "window expired", {"key": key})
    finally:
        faults.remove(*names)
    attempts = list(rc.last_attempts)
    c1 = _counters(ctx)
    details: dict[str, Any] = {"key": key, "scenario": scenario, "attempts": _statuses(attempts),
                               "history": history.to_list(), "first_timeout": first_timeout,
                               "answer_reached_interposer": seen.get("answer_reached_interposer")}
    if "n1" not in seen:
        return run.inconclusive(f"the injected fault ({FAULT_TEXT[scenario]}) did not happen: the first attempt "
                                f"got {describe(attempts[0])} and the client did not retry", "fault missed",
                                details)
    if (kp := _keys_problem(attempts)) is not None:
        return run.inconclusive(kp, "client", details)
    if seen["n1"] != 1:
        late = (f"; the catalog's answer to it did not reach the interposer within {opts.answer_wait:g} s"
                if seen.get("answer_reached_interposer") is False else "")
        return run.inconclusive(f"the fault did not leave {endpoint.operation} committed once (executions in "
                                f"state after the first attempt: {seen['n1']}{late})", "not committed", details)
    after = case.observe()
    extra = case.executions(seen["base"], after)
    counted = counter_delta(seen.get("c0"), c1, endpoint.operation)
    hc = _history_check(history, key, 1 + extra)
    details.update(executions=1 + extra, counter_delta=counted, history_check=hc.to_dict())
    problems = single_execution_problems(endpoint, final, extra, counted, "the client's final answer was")
    if problems:
        return run.broken(f"after {FAULT_TEXT[scenario]}, the retrying client's retry with the same key gets "
                          f"success and {endpoint.operation} ran exactly once",
                          "; ".join(problems) + f"\nattempts: {_statuses(attempts)}\nhistory:\n{history.render(20)}"
                          + f"\nhistory check: {hc}",
                          "re-executed" if (extra or counted) else f"final {describe(final)}", details)
    if (why := _invisible(case, counted)) is not None:
        return run.inconclusive(f"the retry was answered like a replay, but {why}; without the target's execution "
                                "counters the kit cannot tell a replay from a re-execution", "not visible", details)
    return run.ok(f"{FAULT_TEXT[scenario]}; attempts {_statuses(attempts)}; final {describe(final)}, executed once",
                  "recovered", details)


# ----------------------------------------------------------------------------------------------------------
# network duplicates

def _inflight_bursts(run: Run, ctx: Any, endpoint: Endpoint, ip: Any, opts: NetworkOptions) -> Verdict:
    """network-duplicate-inflight: the network sends copies with the request, released together, in bursts
    until one overlaps at the server (observed from the interposer's forward/answer times); the retrying
    client must end with success and state must show one execution (ctk.checks.bursts)."""
    from ctk.checks.bursts import BurstOptions, inflight_verdicts, run_bursts

    bo = opts.bursts or BurstOptions()
    histories: list[History] = []
    faults = HttpFaults(ip)
    armed: dict[str, Any] = {}

    def hold(case: Any, key: str) -> None:
        if ctx.faults.supports("delay:server"):  # the owner is held at the server: the copies overlap for sure
            ctx.faults.delay(FaultMatch.for_case(case, key), opts.hold)

    link = LinkFaults(ctx.faults.link) if ctx.faults.supports("db_link") else None

    def arm(case: Any, key: str, copies: int) -> Any:
        held = None
        if link is not None:   # the database is held: the original is still in flight when the copies arrive
            held = link.db_hold(ctx.faults.hold_ms)
        armed["rule"] = faults.duplicate_burst(_match(ctx, case, key), copies=copies)
        return armed["rule"], held

    def remove(rule: Any) -> None:
        faults.remove(rule[0])
        if rule[1] is not None:
            link.remove(rule[1])

    def send(case: Any, key: str) -> tuple[Any, list, bool]:
        history = History()
        histories.append(history)
        after: dict[str, Any] = {"retries": 0, "settled": 0, "seen": None}

        def settled(seconds: float) -> bool:
            # a retry (after a 409 in flight) waits for the burst to be answered whole, not a fixed Retry-After
            after["retries"] += 1
            done = faults.burst(armed["rule"], seconds) is not None
            after["settled"] += done
            if done and after["retries"] == 1:   # what the burst did, before the retry meets the finalized key
                after["seen"] = (case.observe(), _counters(ctx))
            return done

        rc = _retrying(ctx, history, None, opts, settled=settled)
        try:
            final = _mutate(rc, case, key, f"{case.endpoint.operation} (the network sends copies with it, at the "
                            "same time)")
        except IdempotencyWindowExpired:
            final = None
        late = after["settled"] == after["retries"]
        return final, list(rc.last_attempts), late, after["seen"] if late else None

    rounds = run_bursts(ctx, endpoint, bo, arm, send, lambda rule: faults.burst(rule[0], opts.copy_wait),
                        remove, lambda: _counters(ctx), hold, want_409=True)
    last = rounds[-1]
    if (kp := _keys_problem(last.attempts)) is not None:
        return run.inconclusive(kp, "client", {"key": last.key})
    verdict = inflight_verdicts(run, None, rounds, client_final=True)[0]
    hc = _history_check(histories[-1], last.key, last.runs)
    verdict.details = {**(verdict.details or {}), "history": histories[-1].to_list(), "history_check": hc.to_dict(),
                       "held_at_server": ctx.faults.supports("delay:server")}
    return verdict


def _duplicate(run: Run, ctx: Any, endpoint: Endpoint, ip: Any, parallel: bool, opts: NetworkOptions) -> Verdict:
    from ctk.checks.bursts import copy_exchanges, timings

    if parallel:
        return _inflight_bursts(run, ctx, endpoint, ip, opts)
    case = endpoint.prepare(ctx)
    key = new_key()
    history = History()
    before = case.observe()
    c0 = _counters(ctx)
    held = False
    # where a second execution leaves no trace as such (case.blind), the copy is held until the kit has made
    # one visible (interfere) and observed the state the copy meets
    hold = case.blind is not None
    faults = HttpFaults(ip)
    names = [faults.duplicate(_match(ctx, case, key), parallel=parallel, hold_copy=hold)]
    rc = _retrying(ctx, history, None, opts)
    try:
        final = _mutate(rc, case, key, f"{endpoint.operation} (the network sends it twice"
                        f"{', at the same time' if parallel else ''})")
        if hold and final.status in endpoint.success and case.executions(before, case.observe()) == 1:
            case.interfere()
            before, c0 = case.observe(), _counters(ctx)   # the copy's execution is counted from here
            before_interfere = True
        else:
            before_interfere = False
    except IdempotencyWindowExpired as exc:
        faults.remove(*names)
        return run.inconclusive(f"the retrying client stopped: {exc}", "window expired", {"key": key})
    finally:
        faults.remove(*names)                             # releases a held copy
    event = faults.burst(names[0], opts.copy_wait)
    attempts = list(rc.last_attempts)
    copies = copy_exchanges(event, attempts[0] if attempts else None)
    for c in copies:  # the copy's answer, as the interposer read it, names what the copy did (its plan-id)
        case.learned(c)
    copy = None if event is None else (str(copies[0].status) if copies and copies[0].status is not None
                                       else "error")
    after = case.observe()
    c1 = _counters(ctx)
    n = case.executions(before, after) + (1 if before_interfere else 0)
    counted = counter_delta(c0, c1, endpoint.operation)
    if before_interfere and counted is not None:
        counted += 1                                      # the first execution, counted before c0
    runs = max(n, counted or 0)
    hc = _history_check(history, key, runs)
    details: dict[str, Any] = {"key": key, "parallel": parallel, "copy_status": copy, "attempts": _statuses(attempts),
                               "executions_state": n, "counter_delta": counted, "held_at_server": held,
                               "history": history.to_list(), "history_check": hc.to_dict(),
                               "timings": timings(event)}
    if copy is None:
        return run.inconclusive("the interposer did not report the duplicate copy's answer", "no copy", details)
    if (kp := _keys_problem(attempts)) is not None:
        return run.inconclusive(kp, "client", details)
    copy_ok = copy.isdigit() and int(copy) in endpoint.success
    first = attempts[0] if attempts else None
    if (first is not None and first.status not in endpoint.success and final.status not in endpoint.success
            and not copy_ok and runs < 2):
        # the request the network copied did not succeed: there was no execution to repeat, so the copy's
        # answer says nothing about replay (a failed request fails again, replayed or not)
        details["first_attempt"] = describe(first)
        return run.inconclusive(
            f"{endpoint.operation}'s first attempt, the one the network copied, got {describe(first)}, not success: "
            f"the mutation itself fails on this target, so its duplicate cannot be judged (copy answered {copy}; "
            f"executions in state: {n})", f"first attempt {describe(first)}", details)
    problems = []
    if final.status not in endpoint.success:
        problems.append(f"the client's final answer was {describe(final)}, not success")
    if runs >= 2:
        problems.append(f"{endpoint.operation} executed {runs} times (state: {n}, counter: {counted})")
    ok_first = next((a for a in attempts if a.status in endpoint.success), None)
    differs = [] if not copies else (
        [f"got {copy} instead of the stored result"] if not copy_ok else
        [f"names another resource ({case.identity(copies[0])!r}, not {case.identity(ok_first)!r})"]
        if ok_first is not None and case.identity(copies[0]) != case.identity(ok_first) else [])
    # a success answered differently while state and counters show ONE execution is a replay with another
    # answer (REPLAY-01's finding), not a second execution: noted, not judged here
    replayed_otherwise = (not parallel and differs and runs < 2 and copies[0].status is not None
                          and 200 <= copies[0].status < 300 and not _execution_error(copies[0])
                          and _invisible(case, counted, copy=True) is None)
    if replayed_otherwise:
        details["copy_answer_differs"] = (f"the copy's answer {differs[0]}, but state and counters show one "
                                          f"execution (state: {n}, counter: {counted}): a replay with another "
                                          "answer, which the replay checks judge")
    elif not parallel and not copy_ok:
        problems.append(f"the copy, sent after the first answer, got {copy} instead of the stored result: it was "
                        "executed again")
    if parallel and copy.isdigit() and int(copy) == 404:
        problems.append("the copy got 404: it was executed after the first")
    if copies and copy_ok and differs and not replayed_otherwise:
        problems.append(f"the copy's answer {differs[0]}: it was executed again")
    if not problems and n == 0:
        return run.inconclusive(f"{endpoint.operation} succeeded but its effect is not visible in state",
                                "not visible", details)
    read = bool(copies) and copies[0].response_body is not None   # the copy's answer was read: nothing hidden
    if not problems and (why := _invisible(case, counted, copy=not read)) is not None:
        return run.inconclusive(f"{endpoint.operation} ran once as far as the kit can see, but {why}; without the "
                                "target's execution counters a second execution cannot be ruled out", "not visible",
                                details)
    if parallel:
        cls = "replayed or waited" if copy_ok else ("rejected in flight (409)" if copy == "409" else f"copy {copy}")
        expected = ("a copy of the request arriving while the original is in flight never executes a second time "
                    "(409 request_in_progress or wait-and-replay), and the client ends with success")
    else:
        cls = "replayed" if copy_ok else f"copy {copy}"
        expected = ("a copy of the request delivered by the network after the first answer is answered with the "
                    "stored result and executes nothing: the mutation is applied once")
    if problems:
        return run.broken(expected, "; ".join(problems) + f"\nattempts: {_statuses(attempts)}; copy: {copy}"
                          + f"\nhistory check: {hc}", "second execution" if runs >= 2 or not copy_ok else cls,
                          details)
    note = f"; {details['copy_answer_differs']}" if replayed_otherwise else ""
    return run.ok(f"copy answered {copy}; client final {describe(final)}; executed once{note}", cls, details)


# ----------------------------------------------------------------------------------------------------------
# public entry points

@check(requirement="REPLAY-04", behaviour=Behaviour.LOST_DROP,
       also=(("REPLAY-04", Behaviour.LOST_503), ("REPLAY-04", Behaviour.LOST_RESET),
             ("REPLAY-04", Behaviour.LOST_TIMEOUT),
             ("REPLAY-04", Behaviour.SLOW_LINK), ("HIST-02", Behaviour.NETWORK_DUPLICATE),
             ("INFLIGHT-01", Behaviour.NETWORK_DUPLICATE_INFLIGHT)))
def check_network_scenario(ctx: Any, endpoint: Endpoint | str, interposer: Any, scenario: str,
                           options: NetworkOptions | None = None) -> list[Verdict]:
    """One scenario (see the module docstring) for one endpoint; always a list of one verdict."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown network scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded(REQUIREMENT[scenario], Behaviour(scenario))
    def check(run: Run, ctx: Any, endpoint: Endpoint) -> Verdict:
        if interposer is None:
            return run.unsupported("network scenarios need the interposer between the kit and the target")
        if scenario in LOST:
            return _lost(run, ctx, endpoint, interposer, scenario, opts)
        return _duplicate(run, ctx, endpoint, interposer, scenario == "network-duplicate-inflight", opts)

    return check(ctx, ep)


def run_network_scenarios(ctx: Any, interposer: Any, endpoints: list[str] | None = None,
                          scenarios: list[str] | None = None, options: NetworkOptions | None = None) -> list[Verdict]:
    """Every scenario for every endpoint (operationIds; default: the whole endpoint catalog)."""
    out: list[Verdict] = []
    for op in endpoints or list(ENDPOINTS):
        for sc in scenarios or SCENARIOS:
            out += check_network_scenario(ctx, op, interposer, sc, options)
    return out


# ----------------------------------------------------------------------------------------------------------
# seed example 1a / 1b through the interposer

SEED_SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "v", "required": False, "type": "string"}]}


def _seed_table(ctx: Any) -> tuple[tuple[str, ...], str]:
    from ctk.client.transport import ns_path

    ns, name = tuple(ctx.namespace), ctx.unique("seed")
    ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables", json={"name": name, "schema": SEED_SCHEMA},
                            label=f"setup: create table {name}")
    if ex.status != 200:
        raise PrerequisiteError(f"setup: create table {name} answered {ex.status or ex.error}", ex)
    return ns, name


def _seed_run(ctx: Any, interposer: Any, use_keys: bool, opts: NetworkOptions) -> dict[str, Any]:
    from ctk.history.checkers import check_table
    from ctk.history.integrity import check_integrity
    from ctk.history.state import read_table_state
    from ctk.history.writer import cleanup_staged, stage_append
    from ctk.interposer import HttpMatch

    ns, name = _seed_table(ctx)
    staged = stage_append(ctx.client, ns, name, marker=f"append-{'keys' if use_keys else 'blind'}")
    key = new_key() if use_keys else None
    fm = FaultMatch("updateTable", "POST", staged.path, key)
    match = (HttpMatch(method="POST", path=fm.path_regex(ctx.client), header="Idempotency-Key", header_value=key)
             if key else HttpMatch(method="POST", path=fm.path_regex(ctx.client)))
    history = History()
    faults = HttpFaults(interposer)
    names = [faults.answer_503(match)]
    rc = _retrying(ctx, history, None, opts, use_keys=use_keys)
    try:
        final = rc.mutate("POST", staged.path, json=staged.body, op="append", value=staged.snapshot_id, key=key,
                          label=f"append commit ({'same key' if use_keys else 'blind retry, no key'}; the "
                          "interposer replaces the committed answer by 503)")
    finally:
        faults.remove(*names)
    deleted = cleanup_staged(staged) if final.status == 409 else []  # the client believes the commit failed
    state = read_table_state(ctx.client, ns, name)
    integrity = check_integrity(state, count_rows=True, check_data_files=True)
    hist = check_table(history, state, op="append")
    return {"final": final, "attempts": list(rc.last_attempts), "staged": staged, "state": state,
            "integrity": integrity, "history": history, "history_check": hist, "deleted": deleted, "key": key}


@check(requirement="INTEG-01", behaviour=Behaviour.SEED_1A,
       also=(("INTEG-01", Behaviour.SEED_1B), ("REPLAY-04", Behaviour.SEED_1B)))
def run_seed_example(ctx: Any, interposer: Any, variants: tuple[str, ...] = ("1a", "1b"),
                     options: NetworkOptions | None = None) -> list[Verdict]:
    """Seed example 1a (blind retry; the CONTROL, expected to fail INTEG-01) and 1b (keys) via the interposer."""
    opts = options or NetworkOptions()
    ep = ENDPOINTS["updateTable"]
    out: list[Verdict] = []
    for variant in variants:
        keyed = variant == "1b"
        run = Run(ctx, "INTEG-01", ep, Behaviour(f"seed-{variant}"))
        if keyed and not ctx.idempotency_supported:
            out.append(run.unsupported("the target does not advertise Idempotency-Key support "
                                       "(idempotency-key-lifetime); example 1b needs it"))
            continue
        try:
            r = _seed_run(ctx, interposer, keyed, opts)
        except PrerequisiteError as exc:
            out.append(run.inconclusive(setup_failed(exc)))
            continue
        except StageError as exc:    # staging with pyiceberg can fail on exotic targets: a setup step
            out.append(run.inconclusive(f"a setup step failed: staging the append: {exc}"))
            continue
        except Exception as exc:  # noqa: BLE001 - anything else is the check crashing: an error verdict
            out.append(run.crashed(exc))
            continue
        final, integ, hist, staged = r["final"], r["integrity"], r["history_check"], r["staged"]
        details = {"variant": variant, "attempts": _statuses(r["attempts"]), "key": r["key"],
                   "integrity": integ.to_dict(), "history_check": hist.to_dict(), "deleted": r["deleted"],
                   "snapshot_id": staged.snapshot_id, "history": r["history"].to_list()}
        if not keyed:
            details.update(control=True, expected="fail")
        if r["state"].unreadable:       # nothing to judge: never "corrupt" or "missing" on a 5xx read
            if r["state"].exchange is not None:
                run.extra.append(r["state"].exchange)
            why = f"{r['state'].error} after the append: the table cannot be judged"
            out.append(run.inconclusive(why, "state unreadable", details))
            if keyed:
                rrun = Run(ctx, "REPLAY-04", ep, Behaviour.SEED_1B)
                rrun.mark = run.mark
                out.append(rrun.inconclusive(why, "state unreadable", details))
            continue
        if (why := integ.vacuous_reason(1 if final.status in ep.success else None)) is not None:
            out.append(run.inconclusive(f"example {variant}: attempts {_statuses(r['attempts'])}; {why}",
                                        "nothing to check", details))
        elif integ.ok:
            out.append(run.ok(f"example {variant}: attempts {_statuses(r['attempts'])}; table {integ}", "intact",
                              details))
        else:
            out.append(run.broken(
                "every snapshot of the table references a manifest list and manifests that exist",
                f"example {variant}: attempts {_statuses(r['attempts'])}; the client took the final "
                f"{describe(final)} for a failed commit and deleted {len(r['deleted'])} staged file(s); table "
                f"{integ}\nhistory check: {hist}", "corrupt" + (" (failed_present)" if hist.count("failed_present")
                                                               else ""), details))
        if keyed:
            rrun = Run(ctx, "REPLAY-04", ep, Behaviour.SEED_1B)
            rrun.mark = run.mark
            snaps = r["state"].snapshot_ids
            problems = []
            if final.status not in ep.success:
                problems.append(f"the retry got {describe(final)}, not 200")
            if snaps != [staged.snapshot_id]:
                problems.append(f"the table has snapshots {snaps}, not exactly the staged {staged.snapshot_id}")
            if not hist.valid:
                problems.append(f"history check: {hist}")
            if problems:
                out.append(rrun.broken("the commit answered 503 after it landed; the retry with the same key "
                                       "replays 200 and the table has the one snapshot", "; ".join(problems),
                                       "re-executed" if len(snaps) > 1 else describe(final), details))
            else:
                out.append(rrun.ok(f"503 after commit, retry replayed {describe(final)}; one snapshot", "replayed",
                                   details))
    return out


# ----------------------------------------------------------------------------------------------------------
# between the catalog and its database

@check(requirement="INFLIGHT-01", behaviour=Behaviour.DB_LATENCY_IN_FLIGHT)
def check_db_latency_inflight(ctx: Any, db_interposer: Any, endpoint: Endpoint | str,
                              options: NetworkOptions | None = None) -> list[Verdict]:
    """INFLIGHT-01: a latency toxic on the DB link holds the mutation in flight; a duplicate with the same key
    arrives meanwhile and must get 409 request_in_progress or wait and replay; one execution in state."""
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded("INFLIGHT-01", Behaviour.DB_LATENCY_IN_FLIGHT)
    def check(run: Run, ctx: Any, endpoint: Endpoint) -> Verdict:
        case = endpoint.prepare(ctx)
        key = new_key()
        history = History()
        before = case.observe()
        c0 = _counters(ctx)
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
        c1 = _counters(ctx)
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
        if runs >= 2 or _execution_error(dup) or (first.status not in endpoint.success and _execution_error(first)):
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
def check_db_link_failure(ctx: Any, db_interposer: Any, endpoint: Endpoint | str, mode: str = "reset_peer",
                          options: NetworkOptions | None = None) -> list[Verdict]:
    """REPLAY-03: the DB link fails (``reset_peer``, ``down``, or ``fail_write``: the catalog's first write
    statement is dropped and its connection reset, once) during the mutation, the client gets a 5xx; after the
    link is back the retry with the same key executes exactly once and succeeds."""
    if mode not in DB_FAILURES:
        raise ValueError(f"mode must be one of {', '.join(DB_FAILURES)}")
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded("REPLAY-03", Behaviour(f"db-link-{mode.replace('_', '-')}"))
    def check(run: Run, ctx: Any, endpoint: Endpoint) -> Verdict:
        return db_link_failure(run, ctx, endpoint, db_interposer, mode, opts)

    return check(ctx, ep)


def db_link_failure(run: Run, ctx: Any, endpoint: Endpoint, db_interposer: Any, mode: str = "reset_peer",
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


def _db_link_attempt(run: Run, ctx: Any, endpoint: Endpoint, link: LinkFaults, mode: str, opts: NetworkOptions,
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
    answer_rule = http.record_answer(_match(ctx, case, key)) if http is not None else None

    def restore() -> None:
        if "rule" in failed:
            rule = failed.pop("rule")
            seen["cut"] = bool(link.cuts(rule)) if rule else None
            link.db_restore(rule)

    def between() -> None:
        if held and answer_rule is not None:
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
    rc = _retrying(ctx, history, between, opts)
    try:
        final = _mutate(rc, case, key, f"{endpoint.operation} (database link {mode})", timeout=30.0)
    except IdempotencyWindowExpired as exc:
        return run.inconclusive(f"the retrying client stopped: {exc}", "window expired", {"key": key}), None
    finally:
        restore()
        if http is not None:
            http.remove(answer_rule)
    cut = bool(seen.get("cut"))
    attempts = list(rc.last_attempts)
    details: dict[str, Any] = {"key": key, "mode": mode, "attempts": _statuses(attempts),
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
    hc = _history_check(history, key, total)
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
                          "; ".join(problems) + f"\nDB link {how}\nattempts: {_statuses(attempts)}"
                          f"\nhistory check: {hc}",
                          "5xx replayed" if final.status == first.status else f"final {describe(final)}",
                          details), None
    return run.ok(f"DB link {how}: {describe(first)}; retry {describe(final)}; executed once",
                  "executed once" if not seen["n1"] else "committed, replayed", details), None


def _front_interposer(ctx: Any) -> Any:
    """The interposer between the kit and the catalog, when the run has one (it sees the catalog's answers)."""
    faults = getattr(ctx, "faults", None)
    inner = getattr(faults, "inner", faults)
    return getattr(inner, "interposer", None)


def _why_earlier(earlier: dict | None) -> str:
    return str((earlier or {}).get("why", "")) or "no earlier measurement"


@check(requirement="REPLAY-04", behaviour=Behaviour.DB_COMMIT_CUT)
def check_db_commit_cut(ctx: Any, db_link: Any, endpoint: Endpoint | str,
                        options: NetworkOptions | None = None) -> list[Verdict]:
    """REPLAY-04 at the database: the database's answer to the catalog's COMMIT is cut (``cut_after`` on the
    database link: the commit lands, the catalog never hears the outcome). The catalog must not answer a
    success it cannot confirm (a success is allowed only with the effect in state), and the retry with the
    same key ends with success and one execution."""
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded("REPLAY-04", Behaviour.DB_COMMIT_CUT)
    def check(run: Run, ctx: Any, endpoint: Endpoint) -> Verdict:
        return db_commit_cut(run, ctx, endpoint, db_link, opts)

    return check(ctx, ep)


def db_commit_cut(run: Run, ctx: Any, endpoint: Endpoint, db_link: Any, opts: NetworkOptions | None = None) -> Verdict:
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
        if _execution_error(first):
            return broken(run, "a catalog that lost its database's answer to the commit does not run the change "
                          "again", f"it answered {describe(first)}, the error a second execution gives",
                          "re-executed", details)
        return run.inconclusive(f"the catalog answered {describe(first)} after the cut", describe(first), details)
    if n1 == 1:
        case.interfere()
    base = case.observe()
    c0 = _counters(ctx)
    retry = case.send(ctx.client, key=key, label="retry, same key, after the database's answer was cut")
    c1 = _counters(ctx)
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
    if n1 and (why := _invisible(case, counted)) is not None:
        return run.inconclusive(f"the retry was answered like a replay, but {why}", "not visible", details)
    how = ("committed before the cut, the catalog answered " + describe(first) if n1
           else "the cut came before anything was committed; the catalog answered " + describe(first))
    return run.ok(f"database answer to {opts.db_commit_pattern} cut: {how}; the retry got {describe(retry)}; "
                  "executed once", "committed, replayed" if n1 else "cut before commit, executed on retry", details)


def run_db_link_scenarios(ctx: Any, db_interposer: Any, endpoints: list[str] | None = None,
                          modes: tuple[str, ...] = ("reset_peer", "down"),
                          options: NetworkOptions | None = None) -> list[Verdict]:
    out: list[Verdict] = []
    for op in endpoints or ["updateTable"]:
        out += check_db_latency_inflight(ctx, db_interposer, op, options)
        for mode in modes:
            out += check_db_link_failure(ctx, db_interposer, op, mode, options)
    return out
