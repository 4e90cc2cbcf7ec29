"""Fault injection for checks: one interface, two ways to do it.

`FaultInjector` methods arm a fault for the NEXT request matching a `FaultMatch` (``times=1``):

- ``lose_answer(match, mode)``   the target commits, the client does not hear it: mode ``"503"``/``"500"``
                                 (an error status instead of the answer) or ``"reset"``/``"drop"``
                                 (the connection closes without an answer)
- ``fail_before(match, status)`` the target answers a 5xx before persisting anything
- ``delay(match, seconds, until_met=n)``  hold the request in flight (at the server, after its key is
                                 reserved); with ``until_met`` (control API that offers it) the hold ends once n
                                 same-key requests met it in flight, ``seconds`` being the longest
- ``crash_before_finalize(match)``  persist, leave the idempotency record IN_PROGRESS, answer 500
- ``corrupt_stored_response(match)`` finalize, then make the stored response unreadable
- ``duplicate(match, copies=n)`` send the request and n copies to the target at the same time (interposer
                                 only); ``burst(rule)`` then gives their forward/answer times and answers
- ``executions()``               the target's execution counters, or None

Implementations:

- `ControlFaults`: the reference catalog's control API (``/_ctk/faults``; detected by ``GET /_ctk``).
  Everything but ``duplicate``. Given a scope (the run namespace) and a control API that offers scopes
  (``GET /_ctk`` names its ``scope-header``), its rules, counters and clears concern only the requests that
  carry that header (``request_headers()``; `ctk.checks.context.CheckContext.create` puts it on the client):
  workers sharing one catalog do not see each other's faults or executions.
- `InterposerFaults`: an in-process `ctk.interposer.Interposer` between the client and any target:
  ``lose_answer``, ``delay`` (of the answer only: the server is not held) and ``duplicate``, through
  `ctk.interposer.faults.HttpFaults` (the only place that knows the interposer's toxic names).
- `NoFaults`: nothing; every method raises `FaultUnsupported`.
- `DbLinkFaults`: one of these plus the catalog's database link (``--ctk-db-link``): failing, holding and
  cutting the database under any catalog (checks reach it as ``ctx.db_link_faults``, None without a link).

`detect_injector(client, interposer=None)` picks the control API when the target has one, else the
interposer when one is given, else `NoFaults`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from ctk.client.probing import probe_read, unread
from ctk.core import needs
from ctk.interposer.faults import LOSE_MODES, DbLink, HttpFaults, LinkFaults
from ctk.catalog import Case
from ctk.interposer.runtime import Interposer


class FaultUnsupported(RuntimeError):
    """The injector cannot produce this fault; the message says why (checks turn it into unsupported) and
    ``needs`` what would produce it (``Verdict.needs``; None: nothing the user could add)."""

    def __init__(self, message: str, needs: str | None = None):
        super().__init__(message)
        self.needs = needs


@dataclass(frozen=True)
class FaultMatch:
    """Which request a fault applies to."""

    operation: str                 # operationId, e.g. "createTable"
    method: str
    path: str                      # as the kit sends it, relative to /v1/{prefix} (percent-encoded)
    key: str | None = None         # the Idempotency-Key value the request carries, when known

    @classmethod
    def for_case(cls, case: Case, key: str | None = None, req: Any = None) -> "FaultMatch":
        r = req or case.request
        return cls(case.endpoint.operation, r.method.upper(), r.path, key)

    def path_regex(self, client: Any = None) -> str:
        """Regular expression for the URL path (searched), anchored at the end or at the query. With the
        ``client`` that sends the request, the path as that client puts it on the wire (``client.url_path``: its
        prefix and the namespace separator the catalog advertised), so the rule matches what is sent."""
        path = client.url_path(self.path) if client is not None else "/" + self.path.lstrip("/")
        return re.escape(path) + r"(?:\?|$)"


class FaultInjector:
    name = "none"
    capabilities: frozenset[str] = frozenset()
    probe: "ControlProbe | None" = None    # the GET /_ctk that chose this injector, when it could not choose better

    def supports(self, capability: str) -> bool:
        return capability in self.capabilities

    def _unsupported(self, what: str) -> FaultUnsupported:
        return FaultUnsupported(f"{what} needs {self._needs(what)}; this run injects faults via {self.name}",
                                needs=self._needs_option(what))

    @staticmethod
    def _needs(what: str) -> str:
        if what in ("fail_before", "crash_before_finalize", "corrupt_stored_response", "executions"):
            return "the reference catalog's control API (/_ctk)"
        if what == "duplicate":
            return "the interposer"
        return "the control API or the interposer"

    @staticmethod
    def _needs_option(what: str) -> str:
        """``Verdict.needs`` of a fault this injector cannot produce (what `_needs` says in the reason)."""
        if what in ("fail_before", "crash_before_finalize", "corrupt_stored_response", "executions"):
            return needs.CONTROL_API
        if what == "duplicate":
            return needs.INTERPOSER
        return needs.CONTROL_API_OR_INTERPOSER

    def lose_answer(self, match: FaultMatch, mode: str = "503") -> Any:
        raise self._unsupported("lose_answer")

    def fail_before(self, match: FaultMatch, status: int = 503) -> Any:
        raise self._unsupported("fail_before")

    def delay(self, match: FaultMatch, seconds: float, until_met: int | None = None) -> Any:
        """Hold the matching request `seconds`; `until_met`: end the hold early once that many requests with
        the same key met it in flight (an injector that cannot tell holds the whole time)."""
        raise self._unsupported("delay")

    def crash_before_finalize(self, match: FaultMatch) -> Any:
        raise self._unsupported("crash_before_finalize")

    def corrupt_stored_response(self, match: FaultMatch) -> Any:
        raise self._unsupported("corrupt_stored_response")

    def duplicate(self, match: FaultMatch, parallel: bool = True, copies: int = 1) -> Any:
        raise self._unsupported("duplicate")

    def burst(self, rule_id: Any, timeout: float) -> dict | None:
        """The interposer's ``duplicate_burst`` event of a `duplicate` rule (forward and answer times of the
        original and its copies, the copies' answers, whether they overlapped); None when unknown."""
        return None

    def swallowed(self, rule_id: Any) -> list[dict]:
        """The answers a `lose_answer` rule kept from the client, as the interposer read them (``status``,
        ``body``); [] when this injector cannot tell."""
        return []

    def executions(self) -> dict | None:
        return None

    def watch_arrivals(self, match: FaultMatch) -> Any:
        """Start noting when each request matching `match` reached the catalog (the interposer forwarded it
        whole); a handle for `arrivals`, or None when this injector cannot see requests arrive."""
        return None

    def arrivals(self, handle: Any) -> list[float] | None:
        """Wall-clock times (time.time()) at which the requests a `watch_arrivals` handle selects reached the
        catalog, oldest first; None when unknown."""
        return None

    def unwatch(self, handle: Any) -> None:
        """Stop a `watch_arrivals` handle (None: nothing)."""

    def wait_applied(self, rule_id: Any, timeout: float) -> bool | None:
        """Wait until a rule added with times=1 has been taken by a request. True: taken; False: not within
        `timeout`; None: this injector cannot tell."""
        return None

    def remove(self, rule_id: Any) -> None:
        """Remove one rule this injector armed (used up or not); an injector without removable rules does
        nothing."""

    def clear(self) -> None:
        pass

    def request_headers(self) -> dict[str, str]:
        """Headers the client's catalog requests must carry for this injector's rules and counters to concern
        them (the control API's scope); the context sets them on the client."""
        return {}


class NoFaults(FaultInjector):
    name = "nothing (no control API, no interposer)"


class ControlFaults(FaultInjector):
    """Faults through the reference catalog's control API; requests go through the check client."""

    name = "the reference control API"
    capabilities = frozenset({"lose_answer", "lose_answer:503", "lose_answer:500", "lose_answer:reset",
                              "lose_answer:drop", "fail_before", "delay", "delay:server",
                              "crash_before_finalize", "corrupt_stored_response", "executions"})

    def __init__(self, client: Any, scope: str | None = None, scope_header: str | None = None,
                 hold_until_met: bool = False):
        self.client = client
        self.hold_until_met = hold_until_met   # GET /_ctk offers `until-met` on delay rules
        self.scope = scope if scope_header else None
        self.scope_header = scope_header
        self.params = {"scope": self.scope} if self.scope else None
        if not self.scope:
            self.name = "the reference control API (unscoped: every caller's requests match and count)"

    def request_headers(self) -> dict[str, str]:
        # every request of the client names its scope, so rules and counters can tell it apart
        return {self.scope_header: self.scope} if self.scope and self.scope_header else {}

    def for_client(self, client: Any) -> "ControlFaults":
        """The same control API and scope, through another client (e.g. one per thread)."""
        return ControlFaults(client, scope=self.scope, scope_header=self.scope_header,
                             hold_until_met=self.hold_until_met)

    def _add(self, action: str, match: FaultMatch, **extra: Any) -> str:
        doc = {"action": action, "operation": match.operation, "method": match.method, "times": 1, **extra}
        if self.scope:
            doc["scope"] = self.scope
        ex = self.client.request("POST", "/_ctk/faults", json=doc, label=f"fault: {action} on {match.operation}")
        if ex.status not in (200, 201):
            raise FaultUnsupported(f"the control API refused fault {doc}: {ex.status or ex.error} "
                                   f"{(ex.response_body or '')[:200]}")
        return (ex.json() or {}).get("id", "")

    def lose_answer(self, match: FaultMatch, mode: str = "503") -> str:
        if mode in ("503", "500"):
            return self._add("fail-after-commit", match, status=int(mode))
        if mode in ("reset", "drop"):
            return self._add("drop-after-commit", match)
        raise ValueError(f"mode must be one of {LOSE_MODES}, not {mode!r}")

    def fail_before(self, match: FaultMatch, status: int = 503) -> str:
        return self._add("fail-before", match, status=status)

    def delay(self, match: FaultMatch, seconds: float, until_met: int | None = None) -> str:
        if until_met is not None and self.hold_until_met:
            return self._add("delay", match, seconds=float(seconds), **{"until-met": int(until_met)})
        return self._add("delay", match, seconds=float(seconds))

    def crash_before_finalize(self, match: FaultMatch) -> str:
        return self._add("crash-before-finalize", match, status=500)

    def corrupt_stored_response(self, match: FaultMatch) -> str:
        return self._add("corrupt-stored-response", match)

    def wait_applied(self, rule_id: Any, timeout: float) -> bool | None:
        """A used-up rule leaves the control API's list; polled every 25 ms, bounded by `timeout`."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            ex = self.client.request("GET", "/_ctk/faults", params=self.params,
                                     label="fault: has the held request arrived?")
            body = ex.json()
            if ex.status != 200 or not isinstance(body, dict):
                return None
            if all(r.get("id") != rule_id for r in body.get("faults") or []):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.025)

    def executions(self) -> dict | None:
        ex = self.client.request("GET", "/_ctk/executions", params=self.params, label="fault: read execution counters")
        body = ex.json()
        return body if ex.status == 200 and isinstance(body, dict) else None

    def clear(self) -> None:
        self.client.request("DELETE", "/_ctk/faults", params=self.params, label="fault: clear rules")


class CountersOnly(FaultInjector):
    """Only the execution counters of another injector: for checks that run side by side (the lifetime
    batch), where fault rules would hit the wrong request but each operation's counter is still its own."""

    name = "execution counters only"

    def __init__(self, inner: FaultInjector, arrivals: FaultInjector | None = None):
        self.inner = inner
        self.watcher = arrivals        # an injector that sees requests arrive (the interposer), when there is one
        self.capabilities = frozenset(inner.capabilities & {"executions"})

    def executions(self) -> dict | None:
        return self.inner.executions()

    def watch_arrivals(self, match: FaultMatch) -> Any:
        return self.watcher.watch_arrivals(match) if self.watcher is not None else None

    def arrivals(self, handle: Any) -> list[float] | None:
        return self.watcher.arrivals(handle) if self.watcher is not None else None

    def unwatch(self, handle: Any) -> None:
        if self.watcher is not None:
            self.watcher.unwatch(handle)


class InterposerFaults(FaultInjector):
    """Faults through an in-process Interposer that the check client talks to."""

    name = "the interposer"
    capabilities = frozenset({"lose_answer", "lose_answer:503", "lose_answer:500", "lose_answer:reset",
                              "lose_answer:drop", "delay", "duplicate"})

    def __init__(self, interposer: Interposer, client: Any = None):
        self.interposer = interposer
        self.client = client           # the client whose requests the rules select: it builds their paths
        self.http = HttpFaults(interposer)
        self.names: list[str] = []

    def _match(self, match: FaultMatch) -> Any:
        from ctk.interposer import HttpMatch

        path = match.path_regex(self.client)
        if match.key:
            return HttpMatch(method=match.method, path=path, header="Idempotency-Key", header_value=match.key)
        return HttpMatch(method=match.method, path=path, header="Idempotency-Key")

    def _kept(self, name: str) -> str:
        self.names.append(name)
        return name

    def lose_answer(self, match: FaultMatch, mode: str = "503") -> str:
        if mode not in LOSE_MODES:
            raise ValueError(f"mode must be one of {LOSE_MODES}, not {mode!r}")
        return self._kept(self.http.lose_answer(self._match(match), mode))

    def delay(self, match: FaultMatch, seconds: float, until_met: int | None = None) -> str:
        # the interposer cannot hold a request inside the server: it holds the answer (the whole time)
        return self._kept(self.http.delay_answer(self._match(match), seconds))

    def duplicate(self, match: FaultMatch, parallel: bool = True, copies: int = 1) -> str:
        return self._kept(self.http.duplicate(self._match(match), copies=copies, parallel=parallel))

    def burst(self, rule_id: Any, timeout: float) -> dict | None:
        return self.http.burst(rule_id, timeout)

    def swallowed(self, rule_id: Any) -> list[dict]:
        return self.http.kept_answers(rule_id)

    def watch_arrivals(self, match: FaultMatch) -> Any:
        return self.http.count_matching(self._match(match))

    def arrivals(self, handle: Any) -> list[float] | None:
        return None if handle is None else self.http.arrivals(handle)

    def unwatch(self, handle: Any) -> None:
        self.http.remove(handle)

    def remove(self, rule_id: str) -> None:
        """Remove one rule (used up or not)."""
        self.http.remove(rule_id)
        if rule_id in self.names:
            self.names.remove(rule_id)

    def clear(self) -> None:
        self.http.remove(*self.names)
        self.names.clear()


class DbLinkFaults(FaultInjector):
    """Another injector (control API, interposer or nothing) plus the link between the catalog and its database:
    a ``ctk interposer`` in TCP mode in front of the catalog's database, driven through its control API
    (``--ctk-db-link http://HOST:PORT/proxies/NAME``; `ctk.interposer.client.ProxyLink`). It works on any
    catalog: the database write fails (``fail_db``: REPLAY-03 without the control API), the database is held
    while duplicates arrive (``duplicate``: a real in-flight window for INFLIGHT-01/02), and the database's
    answer to the commit is cut (``cut_commit``: the catalog cannot know the outcome). Everything else goes to
    the inner injector."""

    def __init__(self, inner: FaultInjector, link: DbLink, hold_ms: int = 150):
        self.inner = inner
        self.link = link
        self.db = LinkFaults(link)
        self.hold_ms = hold_ms
        self.capabilities = frozenset(inner.capabilities | {"db_link"})
        self.name = f"{inner.name}, and the catalog's database link ({link.describe()})"

    def lose_answer(self, match: FaultMatch, mode: str = "503") -> Any:
        return self.inner.lose_answer(match, mode)

    def fail_before(self, match: FaultMatch, status: int = 503) -> Any:
        return self.inner.fail_before(match, status)

    def delay(self, match: FaultMatch, seconds: float, until_met: int | None = None) -> Any:
        return self.inner.delay(match, seconds, until_met)

    def crash_before_finalize(self, match: FaultMatch) -> Any:
        return self.inner.crash_before_finalize(match)

    def corrupt_stored_response(self, match: FaultMatch) -> Any:
        return self.inner.corrupt_stored_response(match)

    def duplicate(self, match: FaultMatch, parallel: bool = True, copies: int = 1) -> Any:
        """The inner injector's duplicate, with the database held (latency on its answers) while the burst
        runs, so that the original is still in flight at the catalog when the copies arrive."""
        held = self.db.db_hold(self.hold_ms) if parallel else None
        try:
            return ("db-held", self.inner.duplicate(match, parallel, copies), held)
        except BaseException:
            if held is not None:
                self._drop(held)
            raise

    def burst(self, rule_id: Any, timeout: float) -> dict | None:
        return self.inner.burst(self._inner_rule(rule_id), timeout)

    def swallowed(self, rule_id: Any) -> list[dict]:
        return self.inner.swallowed(rule_id)

    def remove(self, rule_id: Any) -> None:
        if isinstance(rule_id, tuple) and rule_id and rule_id[0] == "db-held":
            if rule_id[2] is not None:
                self._drop(rule_id[2])
            rule_id = rule_id[1]
        self.inner.remove(rule_id)

    @staticmethod
    def _inner_rule(rule_id: Any) -> Any:
        return rule_id[1] if isinstance(rule_id, tuple) and rule_id and rule_id[0] == "db-held" else rule_id

    def _drop(self, name: str) -> None:
        self.db.remove(name)

    def executions(self) -> dict | None:
        return self.inner.executions()

    def watch_arrivals(self, match: FaultMatch) -> Any:
        return self.inner.watch_arrivals(match)

    def arrivals(self, handle: Any) -> list[float] | None:
        return self.inner.arrivals(handle)

    def unwatch(self, handle: Any) -> None:
        self.inner.unwatch(handle)

    def wait_applied(self, rule_id: Any, timeout: float) -> bool | None:
        return self.inner.wait_applied(rule_id, timeout)

    def clear(self) -> None:
        self.inner.clear()

    def request_headers(self) -> dict[str, str]:
        return self.inner.request_headers()


@dataclass
class ControlProbe:
    """What ``GET /_ctk`` told: ``info`` (the answer, when the target has the reference control API), or
    ``failed`` (why it could not be read after `PROBE_TRIES` tries: then nobody knows whether the target has it),
    and every attempt's exchange."""

    info: dict | None
    failed: str | None
    exchanges: list[Any]

    def to_dict(self) -> dict:
        return {"control-api": self.info is not None, "probe-failed": self.failed,
                "exchanges": [e.to_dict() for e in self.exchanges]}


def probe_control_api(client: Any) -> ControlProbe:
    """``GET /_ctk``, read again on a 5xx, a timeout or a dropped connection (`ctk.client.probing`)."""
    attempts = probe_read(client, "/_ctk", "fault: detect control API")
    ex = attempts[-1]
    body = ex.json()
    info = body if ex.status == 200 and isinstance(body, dict) and body.get("control") is True else None
    return ControlProbe(info, unread(attempts), attempts)


def control_api(client: Any) -> dict | None:
    """The target's ``GET /_ctk`` answer when it has the reference control API, else None."""
    return probe_control_api(client).info


def has_control_api(client: Any) -> bool:
    return control_api(client) is not None


def unread_probe(faults: Any) -> ControlProbe | None:
    """The control-API probe behind ``faults`` (or the injector it wraps) when it could not be read, else None."""
    for _ in range(4):
        if faults is None:
            return None
        probe = getattr(faults, "probe", None)
        if probe is not None:
            return probe if probe.failed else None
        faults = getattr(faults, "inner", None)
    return None


def detect_injector(client: Any, interposer: Interposer | None = None, scope: str | None = None,
                    probe: ControlProbe | None = None) -> FaultInjector:
    """The control API when the target has one (scoped to `scope` where it offers scopes), else the
    interposer when one is given, else nothing. ``probe``: the ``GET /_ctk`` already read (once per process);
    an injector chosen because that probe could not be read carries it (`probe_failed`), so the checks that
    need the control API say "probe failed", not "absent"."""
    probe = probe if probe is not None else probe_control_api(client)
    info = probe.info
    chosen: FaultInjector
    if info is not None:
        chosen = ControlFaults(client, scope=scope, scope_header=info.get("scope-header"),
                               hold_until_met=info.get("hold-until-met") is True)
    else:
        chosen = InterposerFaults(interposer, client) if interposer is not None else NoFaults()
    chosen.probe = probe
    return chosen

