"""Duplicates sent by the interposer as bursts, and what their answers and timings show.

The interposer's ``duplicate_request`` toxic (``parallel``, ``copies``) writes the original request and its
copies upstream in one turn of its event loop and reports one ``duplicate_burst`` event: for every request
when it was forwarded to the server and when its answer began, its status and (copies) its body. Two requests
with the same key OVERLAPPED when the later one reached the server before the earlier one's answer began: that
is observed, not assumed. Only the requests observed in flight together are judged as in-flight duplicates: a
retry the client sends after the burst was answered meets a finalized key, and its success is a replay. The
in-flight checks send bursts (bounded in size and rounds, each burst in time) until a burst
overlaps and decides the question; only then is a verdict given on the in-flight behaviour, and when no burst
overlapped the verdict is inconclusive with the timings shown.

`judge_group` reads a burst's answers (the client's own and the copies' as the interposer saw them) together
with the executions visible in state:

=========================  ==================================================================================
second execution           state or counters show two executions, the successful answers name different
                           resources (another plan-id, table-uuid...), or an answer is the error a second
                           execution gives (AlreadyExists, NoSuch..., CommitFailed)
409 request_in_progress    one request executed, every other got 409 with that subtype (or waited/replayed)
plain 409                  as above, a 409 without the subtype
wait-and-replay            every request got the same success (same resource): the others waited and replayed
other: <answer>            an answer that is none of these (executed once: INFLIGHT-02's matter)
no success                 no request of the burst succeeded: the mutation itself fails on this target
=========================  ==================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctk.checks.common import describe, error_of
from ctk.core.exchange import Exchange
from ctk.core import needs
from ctk.checks.context import CheckContext
from ctk.catalog import Case, Endpoint

EXECUTION_ERRORS = ("alreadyexists", "nosuch", "notempty", "commitfailed")
REJECTED = ("409 request_in_progress", "plain 409")


@dataclass
class BurstOptions:
    size: int = 3            # requests per burst: the original and size-1 copies (2..4)
    rounds: int = 4          # at most this many bursts per check (twice as many, of 2, where a second
                             # execution would leave no trace: only an all-409 burst decides there); a count,
                             # never a time, so that a busy machine decides what a quiet one does
    search: int = 64         # past `rounds`, while bursts overlap at the interposer but none decided (INFLIGHT-02
                             # looks for an in-flight 409; a blind case for one rejected duplicate): at most this
                             # many bursts in all. A catalog that answers 409 in flight still replays a duplicate it
                             # took up only after the original committed, and the interposer cannot hold a request
                             # inside the server: on the reference about one burst in two shows the 409 on an idle
                             # machine, one in ten with two CPU hogs; 64 bursts miss it about once in 800
    wait: float = 15.0       # longest wait for a burst's event (the copies' answers)

    def copies(self) -> int:
        return max(1, min(3, self.size - 1))


def execution_error(ex: Any) -> bool:
    """An error an execution of the mutation itself would give (not an idempotency answer)."""
    t = str(error_of(ex).get("type", "")).lower()
    return any(s in t for s in EXECUTION_ERRORS)


def copy_exchanges(event: dict | None, like: Exchange | None) -> list[Exchange]:
    """The copies' answers as the interposer read them, as exchanges (request as the original's)."""
    out = []
    for i, r in enumerate((event or {}).get("requests") or []):
        if r.get("role") != "copy":
            continue
        out.append(Exchange(like.method if like else "?", like.url if like else "?",
                            dict(like.request_headers) if like else {}, like.request_body if like else None,
                            r.get("status"), {}, r.get("body"), r.get("error"),
                            label=f"copy {i} (sent by the interposer; answer read by it)"))
    return out


def timings(event: dict | None) -> str:
    """"original: forwarded 0.0 ms, answer began 12.3 ms (200); copy 1: ..." from a burst event."""
    if not event:
        return "no timings (the interposer reported no burst)"
    parts = []
    for i, r in enumerate(event.get("requests") or []):
        who = "original" if r.get("role") == "original" else f"copy {i}"
        ans = "no answer" if r.get("answer_ms") is None else f"answer began {r['answer_ms']:.1f} ms"
        sent = "not forwarded" if r.get("sent_ms") is None else f"forwarded {r['sent_ms']:.1f} ms"
        got = r.get("status") if r.get("status") is not None else (r.get("error") or "-")
        parts.append(f"{who}: {sent}, {ans} ({got})")
    text = "; ".join(parts)
    if event.get("overlapped"):
        i, j = event["pair"]
        lead = event.get("lead_ms")
        text += (f" -> overlap: request {j} reached the server "
                 + (f"{lead:.1f} ms before request {i}'s answer began" if lead is not None
                    else f"while request {i} had no answer yet"))
    else:
        text += " -> no overlap: every request went out after the earlier ones' answers began"
    return text


def brief_timings(event: dict | None) -> dict:
    """The event's figures for verdict details (no bodies)."""
    if not event:
        return {}
    return {"overlapped": bool(event.get("overlapped")), "pair": event.get("pair"), "lead_ms": event.get("lead_ms"),
            "requests": [{k: v for k, v in r.items() if k != "body"} for r in event.get("requests") or []]}


def judge_group(case: Case, answers: list[Exchange], runs: int) -> tuple[str, str]:
    """(classification, why) for the answers to one burst (see the module docstring); `runs` = executions
    visible in state or counted by the target."""
    ep = case.endpoint
    shown = ", ".join(describe(a) for a in answers)
    if runs >= 2:
        return "second execution", f"{ep.operation} executed {runs} times (answers: {shown})"
    ok = [a for a in answers if a.status in ep.success]
    if not ok:
        return "no success", f"no request of the burst succeeded (answers: {shown})"
    ids = []
    for a in ok:
        if case.identity(a) not in ids:
            ids.append(case.identity(a))
    if len(ids) > 1:
        return "second execution", (f"the successful answers differ in what they name or report (identities "
                                    f"{ids}): a duplicate executed again")
    failed = [a for a in answers if execution_error(a)]
    if failed:
        return "second execution", (f"{describe(failed[0])} is the error a second execution of {ep.operation} "
                                    f"gives (answers: {shown})")
    others = [a for a in answers if a.status not in ep.success]
    odd = [a for a in others if a.status != 409]
    if odd:
        return f"other: {describe(odd[0])}", f"answers: {shown}"
    if others:
        sub = all(error_of(a).get("subtype") == "request_in_progress" for a in others)
        return ("409 request_in_progress" if sub else "plain 409"), f"answers: {shown}"
    return "wait-and-replay", f"answers: {shown}"


def decisive(case: Case, cls: str, counted: int | None, answers: list[Exchange],
             in_flight: list[Exchange] | None = None) -> bool:
    """Whether a burst that overlapped decides the in-flight question for this case: always, unless a second
    execution would leave no trace (``case.blind``) and no counters tell; then only a burst in which exactly
    one of the requests observed IN FLIGHT together (`in_flight`; default: every answer) succeeded and every
    other of them was rejected shows that none ran twice. Requests that reached the server after the burst
    had been answered (the client's retries) meet a finalized key: their success is the replay INFLIGHT-01
    does not judge."""
    if cls in ("second execution", "no success"):
        return True
    if case.blind is None or counted is not None:
        return True
    group = answers if in_flight is None else in_flight
    return cls != "wait-and-replay" and sum(1 for a in group if a.status in case.endpoint.success) == 1


def retries_executed(case: Case, in_flight: list[Exchange], retries: list[Exchange]) -> list[Exchange]:
    """The `retries` (sent after the burst was answered) whose answers show their own execution: an error a
    second execution gives, or a success whose identity differs from the in-flight success's."""
    ok = [case.identity(a) for a in in_flight if a.status in case.endpoint.success]
    return [a for a in retries if execution_error(a)
            or (a.status in case.endpoint.success and ok and case.identity(a) not in ok)]


def overlapping(requests: list[dict]) -> list[int]:
    """Indexes of the burst event's requests that were in flight together with another one: each reached the
    server before the other's answer began (no answer: still in flight), by the interposer's clock."""
    def span(r: dict) -> tuple[float, float]:
        end = r.get("answer_ms")
        return r["sent_ms"], float("inf") if end is None else end

    sent = [i for i, r in enumerate(requests) if r.get("sent_ms") is not None]
    out = []
    for i in sent:
        a0, a1 = span(requests[i])
        if any(j != i and a0 < span(requests[j])[1] and span(requests[j])[0] < a1 for j in sent):
            out.append(i)
    return out


@dataclass
class BurstRound:
    """One burst: its case, key, the answers (the client's attempts, then the copies'), what state showed."""

    case: Case
    key: str
    attempts: list[Exchange]
    copies: list[Exchange]
    event: dict | None
    executions_state: int
    counter_delta: int | None
    cls: str
    why: str
    final: Exchange | None = None
    retries_after_burst: bool | None = None   # every retry of the client was sent after the burst's event came
    settled_runs: int | None = None    # executions seen when the burst was answered whole, before a late retry

    @property
    def in_flight(self) -> list[Exchange]:
        """The answers of the requests observed in flight together: those of the burst that overlapped (the
        original is the client's first attempt, the copies in the event's order), and the client's retries
        unless each was sent after the burst had been answered whole."""
        reqs = (self.event or {}).get("requests") or []
        by_index: dict[int, Exchange] = {}
        copies = iter(self.copies)
        for i, r in enumerate(reqs):
            if r.get("role") == "original":
                if self.attempts:
                    by_index[i] = self.attempts[0]
            else:
                c = next(copies, None)
                if c is not None:
                    by_index[i] = c
        group = [by_index[i] for i in overlapping(reqs) if i in by_index]
        if not self.retries_after_burst:
            group += self.attempts[1:]
        return group

    @property
    def answers(self) -> list[Exchange]:
        return self.attempts + self.copies

    @property
    def late_retries(self) -> list[Exchange]:
        """The client's retries sent after the burst had been answered whole (they meet a finalized key)."""
        return self.attempts[1:] if self.retries_after_burst else []

    @property
    def retry_executions(self) -> int:
        """Executions the late retries' own answers show: an error of a second execution, or a success naming
        or reporting something else than the in-flight success. Those belong to the replay of a finalized key
        (REPLAY-01), not to the in-flight question."""
        return len(retries_executed(self.case, self.in_flight, self.late_retries))

    @property
    def overlapped(self) -> bool:
        return bool(self.event and self.event.get("overlapped"))

    @property
    def runs(self) -> int:
        return max(self.executions_state, self.counter_delta or 0)


def judge_round(r: BurstRound) -> tuple[str, str]:
    """(classification, why) of a burst for the in-flight question. When the client's retries went out after
    the burst was answered, only the requests observed in flight together are judged, and executions that the
    late retries' own answers show are not counted: a finalized key re-executed is a replay failure."""
    if not r.late_retries:
        return judge_group(r.case, r.answers, r.runs)
    late = retries_executed(r.case, r.in_flight, r.late_retries)
    runs = max(0, r.runs - len(late)) if r.settled_runs is None else r.settled_runs
    cls, why = judge_group(r.case, r.in_flight, runs)
    if late or runs < r.runs:
        last = (late or r.late_retries)[-1]
        why += (f"; the client's retry after the burst was answered got {describe(last)} and state shows "
                f"{r.runs} execution(s) after it, {runs} when the burst was answered: a finalized key executed "
                "again (not replayed) is not an in-flight duplicate")
    return cls, why


def run_bursts(ctx: CheckContext, endpoint: Endpoint, options: BurstOptions, arm: Any, send: Any, event: Any, remove: Any,
               counters: Any, hold: Any = None, want_409: bool = False) -> list[BurstRound]:
    """Bursts until one overlaps and decides (`decisive`), at most ``options.rounds`` of them, or
    ``options.search`` while bursts overlap and none decided where a single burst may not show the answer looked
    for (``want_409``, a blind case): counts, not a time, so the same bursts on a busy machine as on a quiet one. Each round prepares a fresh case and key; ``arm(case, key, copies) -> rule``,
    ``send(case, key) -> (final, attempts[, retries_after_burst[, (state, counters)]])`` (the third: every
    retry of the client went out after the burst's event had come; the fourth: observed then, before them), ``event(rule) -> dict | None``, ``remove(rule)``, ``counters()
    -> dict | None``; ``hold(case, key, copies)`` (optional) holds the original at the server first, until its
    copies met it in flight where the target can tell. ``want_409``: a
    burst whose duplicates were all replayed does not end the search (INFLIGHT-02 needs an in-flight 409 to
    inspect; a replay may come from a duplicate the server took up only after the first had finished)."""
    from ctk.checks.common import counter_delta
    from ctk.client.keys import new_key

    out: list[BurstRound] = []
    n, limit, search = 0, max(1, options.rounds), max(1, options.rounds)
    while n < limit or (n < search and any(r.overlapped for r in out)):
        case = endpoint.prepare(ctx)
        key = new_key()
        before = case.observe()
        c0 = counters()
        blind = case.blind is not None and c0 is None
        if blind and n == 0:
            limit *= 2
        if n == 0 and (blind or want_409):
            search = max(limit, options.search)
        # the first burst's original held at the server until its copies met it in flight (the control API): the
        # overlap at the server is made, so duplicates that were replayed waited for it; nothing to search for
        made = n == 0 and hold is not None and ctx.faults.supports("delay:server")
        n_copies = 1 if blind else options.copies()
        if hold is not None and n == 0:
            hold(case, key, n_copies)
        n += 1
        rule = arm(case, key, n_copies)
        try:
            sent = send(case, key)
        finally:
            ev = event(rule)
            remove(rule)
        final, attempts = sent[0], sent[1]
        copies = copy_exchanges(ev, attempts[0] if attempts else None)
        for c in copies:
            case.learned(c)
        after = case.observe()
        counted = counter_delta(c0, counters(), endpoint.operation)
        runs = case.executions(before, after)
        r = BurstRound(case, key, list(attempts), copies, ev, runs, counted, "", "", final,
                       sent[2] if len(sent) > 2 else None)
        if len(sent) > 3 and sent[3] is not None:   # (state, counters) when the burst was answered whole
            mid, c_mid = sent[3]
            r.settled_runs = max(case.executions(before, mid), counter_delta(c0, c_mid, endpoint.operation) or 0)
        r.cls, r.why = judge_round(r)
        out.append(r)
        if (r.overlapped and decisive(case, r.cls, counted, r.answers, r.in_flight)
                and not (want_409 and r.cls == "wait-and-replay" and not made)):
            break
        if r.cls == "no success":
            break
    return out


def rounds_details(rounds: list[BurstRound]) -> list[dict]:
    return [{"key": r.key, "class": r.cls, "answers": [describe(a) for a in r.answers],
             "in_flight": [describe(a) for a in r.in_flight], "retries_after_burst": r.retries_after_burst,
             "executions_state": r.executions_state, "counter_delta": r.counter_delta, **brief_timings(r.event)}
            for r in rounds]


EXPECTED_01 = ("a duplicate that reaches the server while the first is in flight never executes a second time: it "
               "gets 409 (request_in_progress) or waits and replays the first's result")


def deciding(rounds: list[BurstRound]) -> BurstRound:
    """The burst the verdicts are judged on: the last one that overlapped (the search stops at the one that
    decides), else the last one. A burst that did not overlap never classifies the in-flight behaviour."""
    return next((r for r in reversed(rounds) if r.overlapped), rounds[-1])


def inflight_verdicts(run01: Any, run02: Any | None, rounds: list[BurstRound], client_final: bool = False) -> list:
    """INFLIGHT-01 (and INFLIGHT-02 when `run02` is given) from the bursts of `run_bursts`. Judged on the
    burst that overlapped and decided (`deciding`: else the last that overlapped, else the last tried); every
    burst's timings are in the details.
    ``client_final``: the original went through a retrying client, whose final answer must be a success."""
    from ctk.checks.judging import broken

    last = deciding(rounds)
    overlapped = sum(1 for r in rounds if r.overlapped)
    case, op = last.case, last.case.endpoint.operation
    details = {"key": last.key, "executions_state": last.executions_state, "counter_delta": last.counter_delta,
               "mode": "interposer burst", "burst_size": 1 + len(last.copies), "rounds": rounds_details(rounds),
               "timings": timings(last.event)}
    details.update(brief_timings(last.event))

    def both(v1, text2=None, cls2=None, needs2=None):
        if run02 is None:
            return [v1]
        return [v1, run02.inconclusive(text2 or v1.message.split("\n\n")[0], cls2 or v1.classification, details,
                                       needs=needs2 if text2 else v1.needs)]

    if last.event is None:
        return both(run01.inconclusive("the interposer reported no burst (no copy was sent or answered)",
                                       "no burst", details))
    if last.cls == "no success":
        return both(run01.inconclusive(f"{op} did not succeed in the burst: {last.why}; the mutation itself fails "
                                       "on this target, so its duplicates cannot be judged", "first failed", details))
    if not last.overlapped:
        what = (f"; meanwhile the copies showed: {last.why}" if last.cls == "second execution" else "")
        return both(run01.inconclusive(
            f"no burst overlapped at the server in {len(rounds)} burst(s) of {1 + len(last.copies)} requests: "
            f"{timings(last.event)}{what}", "no overlap observed", details))
    seen = f"overlap observed: {timings(last.event)}"
    if last.cls == "second execution":
        v1 = broken(run01, EXPECTED_01, f"{last.why}; {seen}", last.cls, details)
        return both(v1, "a duplicate executed; no in-flight 409 to inspect", last.cls)
    # the client's final answer came to a retry sent after the burst was answered: a finalized key that ran
    # again or was replayed with another success is REPLAY-01's finding, not an in-flight one
    late_final = (last.final is not None and any(last.final is a for a in last.late_retries)
                  and (last.retry_executions > 0 or 200 <= (last.final.status or 0) < 300))
    if client_final and (last.final is None or last.final.status not in case.endpoint.success) \
            and not late_final:
        got = describe(last.final) if last.final is not None else "no answer"
        v1 = broken(run01, EXPECTED_01 + ", and the client ends with success",
                    f"the retrying client's final answer was {got}; {seen}", f"final {got}", details)
        return both(v1)
    if last.executions_state == 0 and last.counter_delta is None:
        return both(run01.inconclusive(f"{op} succeeded but its effect is not visible in state; {seen}",
                                       "not visible", details))
    if not decisive(case, last.cls, last.counter_delta, last.answers, last.in_flight):
        group = ", ".join(describe(a) for a in last.in_flight)
        reason = (f"more than one of the requests observed in flight together succeeded ({group}; all answers: "
                  f"{last.why}), but {case.blind}; without the target's execution counters the kit cannot tell "
                  f"a wait-and-replay from a second execution, and no burst of {overlapped} that overlapped had "
                  f"every in-flight duplicate rejected; {seen}")
        return both(run01.inconclusive(reason, "not visible", details, needs=needs.EXECUTION_COUNTERS), reason,
                    "not visible", needs.EXECUTION_COUNTERS)
    retries = len(last.attempts) - 1 if last.retries_after_burst else 0
    split = (f"; in flight together: {', '.join(describe(a) for a in last.in_flight)}; the client's {retries} "
             "retry(ies) went out after the burst was answered (a finalized key: replays)" if retries else "")
    if late_final and last.final is not None and last.final.status not in case.endpoint.success:
        split += (f"; the client's final answer, to its retry after the burst, was {describe(last.final)} "
                  "(the replay checks judge it)")
    v1 = run01.ok(f"in-flight duplicates: {last.cls}; executed once ({last.why}){split}; {seen}", last.cls, details)
    if run02 is None:
        return [v1]
    if last.cls == "409 request_in_progress":
        v2 = run02.ok(f"409 with subtype request_in_progress ({last.why}); {seen}", last.cls, details)
    elif last.cls == "plain 409":
        v2 = broken(run02, "the in-flight 409 carries the error subtype `request_in_progress`",
                    f"a duplicate got 409 without that subtype ({last.why}); {seen}", last.cls, details)
    elif last.cls.startswith("other"):
        # executed once (INFLIGHT-01 holds); the answer is neither the design document's 409 nor a replay
        v2 = broken(run02, "an in-flight duplicate gets 409 with the subtype `request_in_progress` (or waits and "
                    "replays the first's result)", f"a duplicate got neither ({last.why}); {seen}", last.cls,
                    details)
    else:
        v2 = run02.unsupported(f"in {overlapped} overlapping burst(s) no duplicate was answered 409: the target "
                               f"waits and replays (or took the duplicates up after the first had finished); there "
                               f"is no in-flight 409 to inspect ({seen})", details)
        v2.classification = last.cls
    return [v1, v2]
