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

The interposer between the catalog and its database (INFLIGHT-01, REPLAY-03, REPLAY-04 at the database) is
`ctk.checks.db_link`'s; the options and the driving of a mutation under a fault both use are in
`ctk.checks.faulted`.

Answers the client never got (lost, or a copy's) are read by the interposer and join the observed state
(``case.learned``: a plan-id). Limit: a re-execution that leaves neither state nor answer changed (cancelling
a cancelled plan, on a target that answers a cancel of a missing plan with 204) stays inconclusive without
counters.
"""

from __future__ import annotations

from typing import Any

from ctk.client.errors import EffectMissing
from ctk.checks.common import (Run, baseline_blocked, blocked_verdict, counter_delta, describe, effect_missing,
                               guarded, setup_failed,
                               single_execution_problems)
from ctk.checks.faulted import (NetworkOptions, attempt_statuses, effects_check, execution_counters,
                                execution_error, http_match, keys_problem, retrying_client, send_mutation,
                                why_invisible)
from ctk.checks.faults import FaultMatch
from ctk.core.behaviours import Behaviour, check
from ctk.core import needs
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.history.recorder import History
from ctk.history.writer import StageError
from ctk.catalog import ENDPOINTS, Endpoint, PrerequisiteError, get_endpoint, readback
from ctk.client.keys import new_key
from ctk.client.retrying import IdempotencyWindowExpired
from ctk.interposer.faults import HttpFaults, LinkFaults
from ctk.checks.context import CheckContext
from ctk.catalog import Case
from ctk.interposer.runtime import Interposer

LOST = ("lost-drop", "lost-503", "lost-reset", "lost-timeout", "slow-link")
DUPLICATES = ("network-duplicate", "network-duplicate-inflight")
SCENARIOS = LOST + DUPLICATES
REQUIREMENT = {**{s: "REPLAY-04" for s in LOST}, "network-duplicate": "HIST-02",
               "network-duplicate-inflight": "INFLIGHT-01"}


# ----------------------------------------------------------------------------------------------------------
# lost answers, timeout, slow link

def _learn_swallowed(faults: HttpFaults, case: Case, names: list[str], attempts: list | None = None) -> None:
    """The answers the faults kept from the client, as the interposer read them, join the observed state
    (planTableScan: the plan-id the first attempt made, which the client never saw)."""
    from ctk.core.exchange import Exchange

    like = attempts[0] if attempts else None
    for name in names:
        for e in faults.kept_answers(name):
            case.learned(Exchange(like.method if like else "?", like.url if like else "?", status=e["status"],
                                  response_body=e["body"], label=f"answer kept from the client by {name}"))


def _arm_lost(ctx: CheckContext, faults: HttpFaults, case: Case, key: str, scenario: str,
              opts: NetworkOptions) -> tuple[list[str], str | None, float | None]:
    """(rules to remove, the rule whose kept answer shows the catalog finished, the first attempt's timeout)."""
    m = http_match(ctx, case, key)
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


FAULT_TRIES = 3         # a lost-answer scenario whose fault was not injected is tried again, this often in all

FAULT_TEXT = {
    "lost-drop": "committed, connection closed without an answer",
    "lost-503": "committed, answer replaced by 503",
    "lost-reset": "committed, TCP reset mid-response",
    "lost-timeout": "committed, answer held past the client timeout",
    "slow-link": "committed, the slow link delivers the answer after the client timeout",
}


def _lost(run: Run, ctx: CheckContext, endpoint: Endpoint, ip: Interposer, scenario: str, opts: NetworkOptions) -> Verdict:
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
        seen["c0"] = execution_counters(ctx)

    rc = retrying_client(ctx, history, between, opts)
    try:
        final = send_mutation(rc, case, key, f"{endpoint.operation} ({FAULT_TEXT[scenario]})", first_timeout=first_timeout)
    except IdempotencyWindowExpired as exc:
        return run.inconclusive(f"the retrying client stopped: {exc}", "window expired", {"key": key})
    finally:
        faults.remove(*names)
    attempts = list(rc.last_attempts)
    c1 = execution_counters(ctx)
    details: dict[str, Any] = {"key": key, "scenario": scenario, "attempts": attempt_statuses(attempts),
                               "history": history.to_list(), "first_timeout": first_timeout,
                               "answer_reached_interposer": seen.get("answer_reached_interposer")}
    if "n1" not in seen:
        return run.inconclusive(f"the injected fault ({FAULT_TEXT[scenario]}) did not happen: the first attempt "
                                f"got {describe(attempts[0])} and the client did not retry", "fault missed",
                                details)
    if (kp := keys_problem(attempts)) is not None:
        return run.inconclusive(kp, "client", details)
    if seen["n1"] != 1:
        late = (f"; the catalog's answer to it did not reach the interposer within {opts.answer_wait:g} s"
                if seen.get("answer_reached_interposer") is False else "")
        return run.inconclusive(f"the fault did not leave {endpoint.operation} committed once (executions in "
                                f"state after the first attempt: {seen['n1']}{late})", "not committed", details)
    after = case.observe()
    extra = case.executions(seen["base"], after)
    counted = counter_delta(seen.get("c0"), c1, endpoint.operation)
    hc = effects_check(history, key, 1 + extra)
    details.update(executions=1 + extra, counter_delta=counted, history_check=hc.to_dict())
    problems = single_execution_problems(endpoint, final, extra, counted, "the client's final answer was")
    if problems:
        return run.broken(f"after {FAULT_TEXT[scenario]}, the retrying client's retry with the same key gets "
                          f"success and {endpoint.operation} ran exactly once",
                          "; ".join(problems) + f"\nattempts: {attempt_statuses(attempts)}\nhistory:\n{history.render(20)}"
                          + f"\nhistory check: {hc}",
                          "re-executed" if (extra or counted) else f"final {describe(final)}", details)
    if (why := why_invisible(case, counted)) is not None:
        return run.inconclusive(f"the retry was answered like a replay, but {why}; without the target's execution "
                                "counters the kit cannot tell a replay from a re-execution", "not visible", details,
                                needs=needs.EXECUTION_COUNTERS)
    return run.ok(f"{FAULT_TEXT[scenario]}; attempts {attempt_statuses(attempts)}; final {describe(final)}, executed once",
                  "recovered", details)


# ----------------------------------------------------------------------------------------------------------
# network duplicates

def _inflight_bursts(run: Run, ctx: CheckContext, endpoint: Endpoint, ip: Interposer, opts: NetworkOptions) -> Verdict:
    """network-duplicate-inflight: the network sends copies with the request, released together, in bursts
    until one overlaps at the server (observed from the interposer's forward/answer times); the retrying
    client must end with success and state must show one execution (ctk.checks.bursts)."""
    from ctk.checks.bursts import BurstOptions, inflight_verdicts, run_bursts

    bo = opts.bursts or BurstOptions()
    histories: list[History] = []
    faults = HttpFaults(ip)
    armed: dict[str, Any] = {}

    def hold(case: Case, key: str, copies: int) -> None:
        # the owner is held at the server (until its copies met it in flight, where the control API can tell):
        # the copies overlap for sure
        if ctx.faults.supports("delay:server"):
            ctx.faults.delay(FaultMatch.for_case(case, key), opts.hold, until_met=copies)

    db = ctx.db_link_faults
    link = LinkFaults(db.link) if db is not None else None
    hold_ms = db.hold_ms if db is not None else 0

    def arm(case: Case, key: str, copies: int) -> Any:
        held = None
        if link is not None:   # the database is held: the original is still in flight when the copies arrive
            held = link.db_hold(hold_ms)
        armed["rule"] = faults.duplicate_burst(http_match(ctx, case, key), copies=copies)
        return armed["rule"], held

    def remove(rule: Any) -> None:
        faults.remove(rule[0])
        if rule[1] is not None and link is not None:
            link.remove(rule[1])

    def send(case: Case, key: str) -> tuple[Exchange | None, list[Exchange], bool, Any]:
        history = History()
        histories.append(history)
        after: dict[str, Any] = {"retries": 0, "settled": 0, "seen": None}

        def settled(seconds: float) -> bool:
            # a retry (after a 409 in flight) waits for the burst to be answered whole, not a fixed Retry-After
            after["retries"] += 1
            done = faults.burst(armed["rule"], seconds) is not None
            after["settled"] += done
            if done and after["retries"] == 1:   # what the burst did, before the retry meets the finalized key
                after["seen"] = (case.observe(), execution_counters(ctx))
            return done

        rc = retrying_client(ctx, history, None, opts, settled=settled)
        try:
            final = send_mutation(rc, case, key, f"{case.endpoint.operation} (the network sends copies with it, at the "
                            "same time)")
        except IdempotencyWindowExpired:
            final = None
        late = after["settled"] == after["retries"]
        return final, list(rc.last_attempts), late, after["seen"] if late else None

    rounds = run_bursts(ctx, endpoint, bo, arm, send, lambda rule: faults.burst(rule[0], opts.copy_wait),
                        remove, lambda: execution_counters(ctx), hold, want_409=True)
    last = rounds[-1]
    if (kp := keys_problem(last.attempts)) is not None:
        return run.inconclusive(kp, "client", {"key": last.key})
    verdict = inflight_verdicts(run, None, rounds, client_final=True)[0]
    hc = effects_check(histories[-1], last.key, last.runs)
    verdict.details = {**(verdict.details or {}), "history": histories[-1].to_list(), "history_check": hc.to_dict(),
                       "held_at_server": ctx.faults.supports("delay:server")}
    return verdict


def _duplicate(run: Run, ctx: CheckContext, endpoint: Endpoint, ip: Interposer, parallel: bool, opts: NetworkOptions) -> Verdict:
    from ctk.checks.bursts import copy_exchanges, timings

    if parallel:
        return _inflight_bursts(run, ctx, endpoint, ip, opts)
    case = endpoint.prepare(ctx)
    key = new_key()
    history = History()
    before = case.observe()
    c0 = execution_counters(ctx)
    held = False
    # where a second execution leaves no trace as such (case.blind), the copy is held until the kit has made
    # one visible (interfere) and observed the state the copy meets
    hold = case.blind is not None
    faults = HttpFaults(ip)
    names = [faults.duplicate(http_match(ctx, case, key), parallel=parallel, hold_copy=hold)]
    rc = retrying_client(ctx, history, None, opts)
    try:
        final = send_mutation(rc, case, key, f"{endpoint.operation} (the network sends it twice"
                        f"{', at the same time' if parallel else ''})")
        if hold and final.status in endpoint.success and case.executions(before, case.observe()) == 1:
            case.interfere()
            before, c0 = case.observe(), execution_counters(ctx)   # the copy's execution is counted from here
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
    c1 = execution_counters(ctx)
    n = case.executions(before, after) + (1 if before_interfere else 0)
    counted = counter_delta(c0, c1, endpoint.operation)
    if before_interfere and counted is not None:
        counted += 1                                      # the first execution, counted before c0
    runs = max(n, counted or 0)
    hc = effects_check(history, key, runs)
    details: dict[str, Any] = {"key": key, "parallel": parallel, "copy_status": copy, "attempts": attempt_statuses(attempts),
                               "executions_state": n, "counter_delta": counted, "held_at_server": held,
                               "history": history.to_list(), "history_check": hc.to_dict(),
                               "timings": timings(event)}
    if copy is None:
        return run.inconclusive("the interposer did not report the duplicate copy's answer", "no copy", details)
    if (kp := keys_problem(attempts)) is not None:
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
                          and 200 <= copies[0].status < 300 and not execution_error(copies[0])
                          and why_invisible(case, counted, copy=True) is None)
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
    if not problems and (why := why_invisible(case, counted, copy=not read)) is not None:
        return run.inconclusive(f"{endpoint.operation} ran once as far as the kit can see, but {why}; without the "
                                "target's execution counters a second execution cannot be ruled out", "not visible",
                                details, needs=needs.EXECUTION_COUNTERS)
    if parallel:
        cls = "replayed or waited" if copy_ok else ("rejected in flight (409)" if copy == "409" else f"copy {copy}")
        expected = ("a copy of the request arriving while the original is in flight never executes a second time "
                    "(409 request_in_progress or wait-and-replay), and the client ends with success")
    else:
        cls = "replayed" if copy_ok else f"copy {copy}"
        expected = ("a copy of the request delivered by the network after the first answer is answered with the "
                    "stored result and executes nothing: the mutation is applied once")
    if problems:
        return run.broken(expected, "; ".join(problems) + f"\nattempts: {attempt_statuses(attempts)}; copy: {copy}"
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
def check_network_scenario(ctx: CheckContext, endpoint: Endpoint | str, interposer: Interposer, scenario: str,
                           options: NetworkOptions | None = None) -> list[Verdict]:
    """One scenario (see the module docstring) for one endpoint; always a list of one verdict."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown network scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    ep = endpoint if isinstance(endpoint, Endpoint) else get_endpoint(endpoint)
    opts = options or NetworkOptions()

    @guarded(REQUIREMENT[scenario], Behaviour(scenario))
    def check(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict:
        if interposer is None:
            return run.unsupported("network scenarios need the interposer between the kit and the target",
                                   needs=needs.INTERPOSER)
        if scenario in LOST:
            # a fault the interposer did not get to inject (on a loaded runner, once in a few hundred) is no
            # evidence either way: the scenario is tried again on a fresh case, at most FAULT_TRIES times in all
            for tries in range(1, FAULT_TRIES + 1):
                v = _lost(run, ctx, endpoint, interposer, scenario, opts)
                if v.classification != "fault missed":
                    break
            if tries > 1:
                v.details = {**(v.details or {}), "fault_tries": tries}
            return v
        return _duplicate(run, ctx, endpoint, interposer, scenario == "network-duplicate-inflight", opts)

    return check(ctx, ep)


def run_network_scenarios(ctx: CheckContext, interposer: Interposer, endpoints: list[str] | None = None,
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


def _seed_table(ctx: CheckContext) -> tuple[tuple[str, ...], str]:
    from ctk.client.transport import ns_path

    ns, name = tuple(ctx.namespace), ctx.unique("seed")
    ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables", json={"name": name, "schema": SEED_SCHEMA},
                            label=f"setup: create table {name}")
    if ex.status != 200:
        raise PrerequisiteError(f"setup: create table {name} answered {ex.status or ex.error}", ex)
    return ns, name


def _seed_run(ctx: CheckContext, interposer: Interposer, use_keys: bool, opts: NetworkOptions) -> dict[str, Any]:
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
    rc = retrying_client(ctx, history, None, opts, use_keys=use_keys)
    try:
        final = rc.mutate("POST", staged.path, json=staged.body, op="append", value=staged.snapshot_id, key=key,
                          label=f"append commit ({'same key' if use_keys else 'blind retry, no key'}; the "
                          "interposer replaces the committed answer by 503)")
    finally:
        faults.remove(*names)
    deleted = cleanup_staged(staged) if final.status == 409 else []  # the client believes the commit failed
    state = read_table_state(ctx.client, ns, name)
    acknowledged = 1 if final.status is not None and 200 <= final.status < 300 else 0
    if not state.unreadable and (partly := readback.append_in_part(state.metadata, acknowledged)) is not None:
        # the append landed in part (its snapshot, not main): a broken plain append, no retry verdict rests on it
        raise EffectMissing("EVO-06", f"the seed example's append: {partly}", state.exchange)
    integrity = check_integrity(state, count_rows=True, check_data_files=True)
    hist = check_table(history, state, op="append")
    return {"final": final, "attempts": list(rc.last_attempts), "staged": staged, "state": state,
            "integrity": integrity, "history": history, "history_check": hist, "deleted": deleted, "key": key}


@check(requirement="INTEG-01", behaviour=Behaviour.SEED_1A,
       also=(("INTEG-01", Behaviour.SEED_1B), ("REPLAY-04", Behaviour.SEED_1B)))
def run_seed_example(ctx: CheckContext, interposer: Interposer, variants: tuple[str, ...] = ("1a", "1b"),
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
        blocked = baseline_blocked(ctx, ("updateTable",))   # semantics first: the append rests on plain commits
        if blocked is not None:
            out.append(blocked_verdict(run, blocked))
            if keyed:
                out.append(blocked_verdict(Run(ctx, "REPLAY-04", ep, Behaviour.SEED_1B), blocked))
            continue
        try:
            r = _seed_run(ctx, interposer, keyed, opts)
        except EffectMissing as exc:
            out.append(effect_missing(run, exc))
            if keyed:
                out.append(effect_missing(Run(ctx, "REPLAY-04", ep, Behaviour.SEED_1B), exc))
            continue
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
        details = {"variant": variant, "attempts": attempt_statuses(r["attempts"]), "key": r["key"],
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
            out.append(run.inconclusive(f"example {variant}: attempts {attempt_statuses(r['attempts'])}; {why}",
                                        "nothing to check", details))
        elif integ.ok:
            out.append(run.ok(f"example {variant}: attempts {attempt_statuses(r['attempts'])}; table {integ}", "intact",
                              details))
        else:
            out.append(run.broken(
                "every snapshot of the table references a manifest list and manifests that exist",
                f"example {variant}: attempts {attempt_statuses(r['attempts'])}; the client took the final "
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
