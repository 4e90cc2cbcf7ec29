"""What the network and the database-link scenarios share: their options (`NetworkOptions`) and driving one
mutation of a `Case` under a fault: the interposer's match for its request, the kit's `RetryingClient` whose
first backoff runs the step between the attempts, the target's execution counters, and the readings of the
attempts (one key on every attempt, statuses, an error a second execution gives, the history checker).

The scenarios themselves: `ctk.checks.network` (between the kit and the catalog) and `ctk.checks.db_link`
(between the catalog and its database).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from ctk.checks.common import error_of
from ctk.checks.faults import FaultMatch
from ctk.history.checkers import check_effects
from ctk.history.recorder import History
from ctk.client.retrying import RetryingClient
from ctk.interposer.faults import DB_WRITE_PATTERN
from ctk.checks.context import CheckContext
from ctk.catalog import Case

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
    db_write_pattern: str = DB_WRITE_PATTERN   # fail_write: a write statement


def http_match(ctx: CheckContext, case: Case, key: str | None) -> Any:
    """The interposer's match for the case's request, its path as the context's client sends it."""
    from ctk.interposer import HttpMatch

    fm = FaultMatch.for_case(case, key)
    path = fm.path_regex(ctx.client)
    if key is None:
        return HttpMatch(method=fm.method, path=path)
    return HttpMatch(method=fm.method, path=path, header="Idempotency-Key", header_value=key)


def execution_counters(ctx: CheckContext) -> dict | None:
    faults = getattr(ctx, "faults", None)
    return faults.executions() if faults is not None and faults.supports("executions") else None


def execution_error(ex: Any) -> bool:
    t = str(error_of(ex).get("type", "")).lower()
    return any(s in t for s in EXECUTION_ERRORS)


def retrying_client(ctx: CheckContext, history: History, between: Callable[[], None] | None, opts: NetworkOptions,
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


def send_mutation(rc: RetryingClient, case: Case, key: str | None, label: str, timeout: float | None = None,
            first_timeout: float | None = None) -> Any:
    r = case.request
    return rc.mutate(r.method, r.path, json=r.json, params=r.params, op=case.endpoint.operation, value=key,
                     key=key, label=label, timeout=timeout, first_timeout=first_timeout)


def keys_problem(attempts: list) -> str | None:
    keys = {a.request_headers.get("Idempotency-Key") for a in attempts}
    if len(keys) != 1 or None in keys:
        return f"the retrying client did not send one key on every attempt (keys: {sorted(map(str, keys))})"
    return None


def why_invisible(case: Case, counted: int | None, copy: bool = False) -> str | None:
    """Why a second execution could go unseen here (``case.blind``, or ``case.copy_blind`` for a network
    copy) when the target has no execution counters; None when state or counters can tell."""
    if counted is not None:
        return None
    return case.blind or (case.copy_blind if copy else None)


def effects_check(history: History, key: str, executions: int) -> Any:
    """The history checker on the operation: value = key, observed = the key once per execution in state."""
    return check_effects(history, [key] * max(0, executions))


def attempt_statuses(attempts: list) -> list:
    return [a.status if a.status is not None else (a.error or "error").split(":", 1)[0] for a in attempts]
