"""Test hooks of the reference catalog: the control API, fault rules and execution counters.

Mounted only when ReferenceSettings.control_api is true (never by default).

```
GET    /_ctk                -> {"control": true, "deviation": name|null, "variant": name|null,
                                "scope-header": "X-Ctk-Scope", "hold-until-met": true}
POST   /_ctk/faults         {"action": A, "operation": opId|null, "method": M|null, "path": regex|null,
                             "scope": S|null, "status": 503, "seconds": 1.0, "times": 1,
                             "until-met": n|null}  -> {"id": "..."}
GET    /_ctk/faults[?scope=S]      -> {"faults": [rule, ...]}   (active rules with their remaining times)
DELETE /_ctk/faults[?scope=S]      -> clear the rules (of that scope only, when given)
GET    /_ctk/executions[?scope=S]  -> {"total": n, "by_operation": {...}, "by_resource": {...}}
POST   /_ctk/reset          -> clear rules and counters
```

Scopes keep callers that share one catalog apart (the kit's xdist workers, each in its own run namespace): a
caller names itself with the request header `X-Ctk-Scope: S` on its catalog requests. A rule with a `scope`
applies only to requests carrying that header value, and `?scope=S` counts only the executions of such
requests; without a scope, rules match every request and counters count everything.

Actions (a rule matches a mutation when every given selector matches: `operation` equals the operationId,
`method` equals the HTTP method, `path` is a regular expression searched in the URL path; `times` is how
many matching requests it applies to, null for unlimited):

- `delay`: hold the request in flight for `seconds` (after reserving its key), then run it normally. With
  `until-met: n` (keyed requests; advertised by `"hold-until-met": true` in `GET /_ctk`) the hold ends as soon
  as n further requests carrying the same key have met it in flight (the point where the catalog decides to
  answer 409, wait or run them), `seconds` being then the longest hold: a check that sends a duplicate into a
  held request waits for that event, not for a fixed time.
- `fail-before`: answer `status` (default 503) before persisting anything; the key is not finalized.
- `fail-after-commit`: persist and finalize, then answer `status` (default 503) instead of the result.
- `drop-after-commit`: persist and finalize, then close the connection without a complete answer.
- `crash-before-finalize`: persist the mutation but leave the idempotency record IN_PROGRESS (as a crash
  between commit and finalization would), answer `status` (default 500).
- `corrupt-stored-response`: finalize, then make the stored response unreadable (requests with a key only).

Executions count every real run of an operation's `execute` (not replays, not rejected requests).
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

ACTIONS = ("delay", "fail-before", "fail-after-commit", "drop-after-commit", "crash-before-finalize",
           "corrupt-stored-response")
DEFAULT_STATUS = {"fail-before": 503, "fail-after-commit": 503, "drop-after-commit": 200,
                  "crash-before-finalize": 500, "delay": 200, "corrupt-stored-response": 200}
FIELDS = {"action", "operation", "method", "path", "scope", "status", "seconds", "times", "until-met"}
SCOPE_HEADER = "X-Ctk-Scope"
MAX_DELAY = 600.0


class ControlError(ValueError):
    """Bad control input (answered 400)."""


@dataclass
class FaultRule:
    id: str
    action: str
    operation: str | None = None
    method: str | None = None
    path: str | None = None
    scope: str | None = None
    status: int = 503
    seconds: float = 0.0
    times: int | None = 1
    until_met: int | None = None   # delay: end the hold once this many same-key requests met it in flight
    applied: int = 0
    _regex: Any = field(default=None, repr=False)

    def matches(self, operation: str, method: str, path: str, scope: str | None = None) -> bool:
        if self.scope is not None and self.scope != scope:
            return False
        if self.operation is not None and self.operation != operation:
            return False
        if self.method is not None and self.method != method.upper():
            return False
        if self._regex is not None and not self._regex.search(path):
            return False
        return True

    def to_dict(self) -> dict:
        return {"id": self.id, "action": self.action, "operation": self.operation, "method": self.method,
                "path": self.path, "scope": self.scope, "status": self.status, "seconds": self.seconds, "times": self.times,
                "until-met": self.until_met, "applied": self.applied}


def parse_rule(doc: Any) -> FaultRule:
    """Validate a POST /_ctk/faults body; raises ControlError with a message naming the bad field."""
    if not isinstance(doc, dict):
        raise ControlError("fault rule must be a JSON object")
    unknown = set(doc) - FIELDS
    if unknown:
        raise ControlError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(FIELDS)}")
    action = doc.get("action")
    if action not in ACTIONS:
        raise ControlError(f"'action' must be one of {list(ACTIONS)}, not {action!r}")
    for name in ("operation", "method", "path", "scope"):
        if doc.get(name) is not None and (not isinstance(doc[name], str) or not doc[name]):
            raise ControlError(f"'{name}' must be a non-empty string or null")
    regex = None
    if doc.get("path") is not None:
        try:
            regex = re.compile(doc["path"])
        except re.error as exc:
            raise ControlError(f"'path' is not a valid regular expression: {exc}") from None
    status = doc.get("status", DEFAULT_STATUS[action])
    if status is None:
        status = DEFAULT_STATUS[action]
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise ControlError(f"'status' must be an integer HTTP status (100-599), not {status!r}")
    seconds = doc.get("seconds", 0.0 if action != "delay" else 1.0)
    if seconds is None:
        seconds = 0.0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_DELAY:
        raise ControlError(f"'seconds' must be a number between 0 and {MAX_DELAY:g}, not {seconds!r}")
    times = doc.get("times", 1)
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise ControlError(f"'times' must be a positive integer or null (unlimited), not {times!r}")
    until_met = doc.get("until-met")
    if until_met is not None and (action != "delay" or isinstance(until_met, bool) or not isinstance(until_met, int)
                                  or until_met < 1):
        raise ControlError(f"'until-met' must be a positive integer or null, and only with action 'delay', not "
                           f"{until_met!r}" + ("" if action == "delay" else f" (action {action!r})"))
    return FaultRule(id=uuid.uuid4().hex[:12], action=action, operation=doc.get("operation"),
                     method=doc["method"].upper() if doc.get("method") else None, path=doc.get("path"),
                     scope=doc.get("scope"), status=status, seconds=float(seconds), times=times,
                     until_met=until_met, _regex=regex)


class Faults:
    """Thread-safe fault rules and execution counters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rules: list[FaultRule] = []
        self.by_operation: Counter = Counter()
        self.by_resource: Counter = Counter()
        self.total = 0
        self.scoped: dict[str, Counter] = {}     # scope -> Counter of (operation, resource)

    # -- rules --------------------------------------------------------------------------------------
    def add(self, doc: Any) -> FaultRule:
        rule = parse_rule(doc)
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear(self, scope: str | None = None) -> None:
        with self._lock:
            self.rules[:] = [] if scope is None else [r for r in self.rules if r.scope != scope]

    def take(self, operation: str, method: str, path: str, keyed: bool,
             scope: str | None = None) -> dict[str, FaultRule]:
        """The rules applying to this request, by action (first matching rule of each action wins);
        each taken rule uses up one of its `times`."""
        taken: dict[str, FaultRule] = {}
        with self._lock:
            for rule in list(self.rules):
                if rule.action in taken or not rule.matches(operation, method, path, scope):
                    continue
                if rule.action == "corrupt-stored-response" and not keyed:
                    continue
                taken[rule.action] = rule
                rule.applied += 1
                if rule.times is not None and rule.applied >= rule.times:
                    self.rules.remove(rule)
        return taken

    # -- counters -----------------------------------------------------------------------------------
    def count_execution(self, operation: str, resource: str, scope: str | None = None) -> None:
        with self._lock:
            self.total += 1
            self.by_operation[operation] += 1
            self.by_resource[resource] += 1
            if scope is not None:
                self.scoped.setdefault(scope, Counter())[(operation, resource)] += 1

    def executions(self, scope: str | None = None) -> dict:
        with self._lock:
            if scope is None:
                return {"total": self.total, "by_operation": dict(self.by_operation),
                        "by_resource": dict(self.by_resource)}
            pairs = self.scoped.get(scope, Counter())
            by_operation: Counter = Counter()
            by_resource: Counter = Counter()
            for (operation, resource), n in pairs.items():
                by_operation[operation] += n
                by_resource[resource] += n
            return {"scope": scope, "total": sum(pairs.values()), "by_operation": dict(by_operation),
                    "by_resource": dict(by_resource)}

    def reset(self) -> None:
        with self._lock:
            self.rules.clear()
            self.by_operation.clear()
            self.by_resource.clear()
            self.scoped.clear()
            self.total = 0

    # -- control API --------------------------------------------------------------------------------
    def routes(self, settings) -> list:
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        def bad(message: str) -> JSONResponse:
            return JSONResponse({"error": {"message": message, "type": "BadRequestException", "code": 400}},
                                status_code=400)

        async def info(request: Request) -> Response:
            return JSONResponse({"control": True, "deviation": settings.deviation,
                                 "variant": getattr(settings, "variant", None), "scope-header": SCOPE_HEADER, "hold-until-met": True})

        async def post_fault(request: Request) -> Response:
            raw = await request.body()
            try:
                doc = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                return bad(f"fault rule body is not valid JSON: {exc}")
            try:
                rule = self.add(doc)
            except ControlError as exc:
                return bad(str(exc))
            return JSONResponse({"id": rule.id, "rule": rule.to_dict()})

        async def list_faults(request: Request) -> Response:
            scope = request.query_params.get("scope")
            with self._lock:
                return JSONResponse({"faults": [r.to_dict() for r in self.rules
                                                if scope is None or r.scope == scope]})

        async def clear_faults(request: Request) -> Response:
            self.clear(request.query_params.get("scope"))
            return JSONResponse({"cleared": True})

        async def executions(request: Request) -> Response:
            return JSONResponse(self.executions(request.query_params.get("scope")))

        async def reset(request: Request) -> Response:
            self.reset()
            return JSONResponse({"reset": True})

        return [
            Route("/_ctk", info, methods=["GET"]),
            Route("/_ctk/faults", post_fault, methods=["POST"]),
            Route("/_ctk/faults", list_faults, methods=["GET"]),
            Route("/_ctk/faults", clear_faults, methods=["DELETE"]),
            Route("/_ctk/executions", executions, methods=["GET"]),
            Route("/_ctk/reset", reset, methods=["POST"]),
        ]
