"""Every catalog-semantics requirement can fail (issue 29 item 5): for the requirements no deviation profile breaks,
one odd server each that breaks exactly the rule, and the check of that requirement judging it broken - with the
verdict its level calls for, on the requirement it names. tests/core/test_every_requirement_can_fail.py lists
these tests as where each requirement is shown failing.

The odd catalogs, each one rule in front of the reference catalog:

* `lenient`: an answer the reference gives with one of ``when`` (a refusal: 404, 409) is replaced by a success
  (a catalog that accepts what it must refuse; the effect holds, so the verdict is the documents' level for a
  wrong status);
* `acknowledged_not_done`: the request is answered with a success and never reaches the catalog;
* `omits`: a listing leaves items out;
* `commit_not_applied`: a table commit holding one kind of update is answered with the table as it was;
* `rewrites_metadata`: every table answer carries altered metadata (a location, the metadata log, sort orders);
* `drops_property`: createNamespace keeps all properties but one;
* `drops_unknown`: a table commit's update actions and requirement types the document does not define are
  dropped before the catalog sees it (the rest applied, 200).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

import httpx
import pytest
from odd import Answer, Req, Rule

from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status

NS = r"/namespaces/[^/]+"
ONE_LOCATION = "file:///ctk-odd/one-location"       # every table answered as living there (never written to)


class lenient(Rule):
    """``method`` on a path matching ``pattern`` answered one of ``when`` by the catalog: answered ``status``
    (with ``body(req)``) instead."""

    def __init__(self, method: str, pattern: str, when: tuple[int, ...], status: int,
                 body: Callable[[Req], Any] = lambda req: None) -> None:
        super().__init__()
        self.method, self.pattern, self.when, self.status, self.body = method, pattern, when, status, body

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_(self.method, self.pattern) and answer.status in self.when:
            self.hit()
            return Answer.of(self.status, self.body(req))
        return None


class acknowledged_not_done(Rule):
    """``method`` on a path matching ``pattern`` answered ``status`` (with ``body(req)``) without reaching the
    catalog."""

    def __init__(self, method: str, pattern: str, status: int,
                 body: Callable[[Req], Any] = lambda req: None) -> None:
        super().__init__()
        self.method, self.pattern, self.status, self.body = method, pattern, status, body

    def before(self, req: Req) -> Answer | None:
        if req.is_(self.method, self.pattern):
            self.hit()
            return Answer.of(self.status, self.body(req))
        return None


class omits(Rule):
    """A listing (GET on a path matching ``pattern``) answered without the items of ``key`` that ``which`` picks
    (by default its last one)."""

    def __init__(self, pattern: str, key: str, which: Callable[[Any], bool] | None = None) -> None:
        super().__init__()
        self.pattern, self.key, self.which = pattern, key, which

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        items = body.get(self.key) if isinstance(body, dict) and answer.status == 200 else None
        if not req.is_("GET", self.pattern) or not items:
            return None
        kept = items[:-1] if self.which is None else [i for i in items if not self.which(i)]
        if len(kept) == len(items):
            return None
        self.hit()
        return Answer.of(200, {**body, self.key: kept})


class commit_not_applied(Rule):
    """A table commit holding an update of ``action`` answered 200 with the table as it is (nothing applied)."""

    def __init__(self, upstream: str, action: str) -> None:
        super().__init__()
        self.upstream, self.action = upstream.rstrip("/"), action

    def before(self, req: Req) -> Answer | None:
        body = req.json()
        actions = {u.get("action") for u in (body.get("updates") or []) if isinstance(u, dict)} \
            if isinstance(body, dict) else set()
        if not req.is_("POST", NS + r"/tables/[^/]+$") or self.action not in actions:
            return None
        headers = {k: v for k, v in req.headers if k.lower() not in ("host", "content-length", "connection")}
        got = httpx.get(self.upstream + req.path, headers=headers, timeout=10)
        if got.status_code != 200:
            return None
        self.hit()
        loaded = got.json()
        return Answer.of(200, {"metadata-location": loaded["metadata-location"], "metadata": loaded["metadata"]})


class rewrites_metadata(Rule):
    """Every table answer (load, create, commit) carries ``change(metadata)`` instead of its metadata."""

    def __init__(self, change: Callable[[dict], dict]) -> None:
        super().__init__()
        self.change = change

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        if (answer.status == 200 and re.search(NS + r"/tables(/[^/]+)?$", req.path) and isinstance(body, dict)
                and isinstance(body.get("metadata"), dict)):
            self.hit()
            return Answer.of(200, {**body, "metadata": self.change(dict(body["metadata"]))})
        return None


class drops_property(Rule):
    """createNamespace stores every property given but ``key`` (a catalog that keeps some properties)."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def before(self, req: Req) -> Answer | None:
        body = req.json()
        if req.is_("POST", r"/namespaces$") and isinstance(body, dict) and self.key in (body.get("properties") or {}):
            self.hit()
            body["properties"] = {k: v for k, v in body["properties"].items() if k != self.key}
            req.body = json.dumps(body).encode()
        return None


def _echo(req: Req) -> Any:
    return req.json()


def _empty(req: Req) -> dict:
    return {}


def _updated(req: Req) -> dict:
    body = req.json() or {}
    return {"updated": sorted((body.get("updates") or {})), "removed": [], "missing": []}


class drops_unknown(Rule):
    """A table commit loses the update actions and requirement types the catalog does not know (the reference
    then applies the rest and answers 200), as a catalog that skips what it cannot parse."""

    KNOWN_PREFIX = "ctk-unknown"

    def before(self, req: Req) -> Answer | None:
        if not req.is_("POST", NS + r"/tables/[^/]+$"):
            return None
        body = req.json()
        if not isinstance(body, dict):
            return None
        updates = [u for u in body.get("updates") or [] if not str(u.get("action", "")).startswith(self.KNOWN_PREFIX)]
        reqs = [r for r in body.get("requirements") or [] if not str(r.get("type", "")).startswith(self.KNOWN_PREFIX)]
        if len(updates) != len(body.get("updates") or []) or len(reqs) != len(body.get("requirements") or []):
            self.hit()
            req.body = json.dumps({**body, "updates": updates, "requirements": reqs}).encode()
        return None


@dataclass(frozen=True)
class Odd:
    requirement: str
    check: str                      # the semantic check's name
    rule: Callable[[str], Rule]     # upstream URL -> the rule
    status_only: bool = False       # the effect held, the answer is wrong: judged at the documents' level

    def __str__(self) -> str:
        return f"{self.requirement}-{self.check}"


ODD = [
    Odd("NS-01", "create-namespace", lambda up: acknowledged_not_done("POST", r"/namespaces$", 200, _echo)),
    Odd("NS-02", "create-existing-namespace", lambda up: lenient("POST", r"/namespaces$", (409,), 200, _echo)),
    Odd("NS-03", "namespace-properties-at-create", lambda up: drops_property("owner")),
    Odd("NS-04", "update-properties", lambda up: acknowledged_not_done("POST", NS + r"/properties$", 200, _updated)),
    Odd("NS-05", "missing-namespace", lambda up: lenient("GET", NS + "$", (404,), 200,
                                                      lambda req: {"namespace": ["x"], "properties": {}})),
    Odd("NS-06", "drop-empty-namespace", lambda up: acknowledged_not_done("DELETE", NS + "$", 204)),
    Odd("NS-07", "drop-non-empty-namespace", lambda up: lenient("DELETE", NS + "$", (409,), 204), True),
    Odd("NS-08", "list-namespaces", lambda up: omits(r"/namespaces$", "namespaces")),
    Odd("NS-09", "namespace-names-with-dot-or-slash", lambda up: omits(r"/namespaces$", "namespaces",
                                                                       lambda ns: "dot.level" in ns[-1])),
    Odd("TBL-01", "create-table", lambda up: acknowledged_not_done("POST", NS + r"/tables$", 200, _empty)),
    # a second create answered 200 (the client told its create happened) and not done: the requirement's MUST
    Odd("TBL-02", "create-existing-table", lambda up: lenient("POST", NS + r"/tables$", (409,), 200, _empty)),
    Odd("TBL-03", "complete-create-table", lambda up: rewrites_metadata(
        lambda m: {**m, "sort-orders": [{"order-id": 0, "fields": []}], "default-sort-order-id": 0})),
    Odd("TBL-04", "load-missing-table", lambda up: lenient("GET", NS + r"/tables/[^/]+$", (404,), 200, _empty)),
    Odd("TBL-06", "rename-table", lambda up: acknowledged_not_done("POST", r"/tables/rename$", 204)),
    Odd("TBL-07", "rename-refused", lambda up: lenient("POST", r"/tables/rename$", (404, 409), 204), True),
    Odd("TBL-09", "register-refused", lambda up: lenient("POST", NS + r"/register$", (404, 409), 200, _empty), True),
    Odd("TBL-10", "table-names-with-dot-or-slash", lambda up: omits(NS + r"/tables$", "identifiers",
                                                                    lambda i: "ta.ble" in i["name"])),
    Odd("TBL-11", "unique-location", lambda up: rewrites_metadata(lambda m: {**m, "location": ONE_LOCATION})),
    Odd("LIST-03", "list-views", lambda up: omits(NS + r"/views$", "identifiers")),
    Odd("EVO-03", "spec-update-and-revert", lambda up: commit_not_applied(up, "add-spec")),
    Odd("EVO-04", "sort-order-update-and-revert", lambda up: commit_not_applied(up, "add-sort-order")),
    Odd("EVO-05", "update-transaction", lambda up: commit_not_applied(up, "remove-properties")),
    Odd("EVO-06", "appends-and-refs", lambda up: commit_not_applied(up, "add-snapshot")),
    Odd("EVO-07", "uuid-validation", lambda up: lenient("POST", NS + r"/tables/[^/]+$", (409,), 200, _empty)),
    Odd("EVO-08", "metadata-log", lambda up: rewrites_metadata(lambda m: {**m, "metadata-log": []})),
    Odd("EVO-09", "unknown-update-or-requirement", lambda up: drops_unknown()),
    Odd("TXN-01", "create-transaction", lambda up: acknowledged_not_done("POST", NS + r"/tables/[^/]+$", 200,
                                                                               _empty)),
    Odd("TXN-02", "concurrent-create-transaction", lambda up: lenient("POST", NS + r"/tables/[^/]+$", (409,), 200,
                                                                      _empty)),
    Odd("TXN-04", "replace-missing-table", lambda up: lenient("POST", NS + r"/tables/[^/]+$", (404,), 200,
                                                           _empty)),
    Odd("VIEW-01", "create-view", lambda up: acknowledged_not_done("POST", NS + r"/views$", 200, _empty)),
    Odd("VIEW-02", "create-existing-view", lambda up: lenient("POST", NS + r"/views$", (409,), 200, _empty)),
    Odd("VIEW-04", "rename-view", lambda up: acknowledged_not_done("POST", r"/views/rename$", 204)),
    Odd("VIEW-05", "drop-view", lambda up: acknowledged_not_done("DELETE", NS + r"/views/[^/]+$", 204)),
    Odd("VIEW-07", "replace-dropped-view", lambda up: lenient("POST", NS + r"/views/[^/]+$", (404,), 200,
                                                           _empty), True),
    Odd("VIEW-08", "register-existing-view", lambda up: lenient("POST", NS + r"/register-view$", (409,), 200,
                                                             _empty), True),
]


@pytest.mark.parametrize("odd", ODD, ids=str)
def test_the_rule_broken_fails_its_requirement(make_odd, odd):
    [check] = [c for c in semantic_checks() if c.name == odd.check]
    assert check.requirement == odd.requirement
    ctx, server = make_odd(lambda up: [odd.rule(up)])
    [rule] = server.rules
    verdicts = run_semantic(ctx, check)
    assert rule.hits >= 1, "the odd server never broke the rule: the check did not send what it judges"
    got = [(v.requirement, v.status.value, v.message[:400]) for v in verdicts]
    assert [v.requirement for v in verdicts] == [odd.requirement], got
    if odd.status_only:     # a wrong status while the effect held: the documents' level (none says MUST here)
        assert verdicts[0].status is Status.DEVIATION and verdicts[0].classification == "wrong status", got
    else:                   # the effect is wrong: the requirement's level
        assert verdicts[0].status.value == status_if_broken(odd.requirement) != Status.PASS.value, got
