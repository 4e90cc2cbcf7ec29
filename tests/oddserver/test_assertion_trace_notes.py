"""What no source states is not a finding (issue 34 item 3; docs/assertion-trace.md): each odd catalog below does
one thing that the catalog-semantics checks used to report as a deviation though neither the merged spec, nor
Iceberg's compatibility kit, nor a client's data says so. The check now passes, and says what it saw in the
verdict's ``details.notes``. Where a rule next to it does have a source, the same odd server shows it still fails.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

import pytest
from odd import Answer, Req, Rule

from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core.verdicts import Status

NS = r"/namespaces/[^/]+"


class rewrites_answer(Rule):
    """``method`` (any: "") on ``pattern``, when ``when(req, answer)``: the answer becomes ``change(req, answer)``."""

    def __init__(self, method: str, pattern: str, when: Callable[[Req, Answer], bool],
                 change: Callable[[Req, Answer], Answer]) -> None:
        super().__init__()
        self.method, self.pattern, self.when, self.change = method, pattern, when, change

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if (req.method == self.method or not self.method) and re.search(self.pattern, req.path) \
                and self.when(req, answer):
            self.hit()
            return self.change(req, answer)
        return None


def _body(answer: Answer, change: Callable[[dict], Any]) -> Answer:
    body = answer.json()
    return Answer(answer.status, answer.headers, json.dumps(change(body)).encode())


def _as_422(req: Req, answer: Answer) -> Answer:
    err = (answer.json() or {}).get("error") or {}
    return Answer.of(422, {"error": {"message": err.get("message", "refused"), "type": "UnprocessableEntityException",
                                     "code": 422}})


def _requirements(req: Req) -> list:
    return [r.get("type") for r in ((req.json() or {}).get("requirements") or []) if isinstance(r, dict)]


def _first_action(req: Req) -> Any:
    ups = (req.json() or {}).get("updates") or [{}]
    return ups[0].get("action") if isinstance(ups[0], dict) else None


def _log_names_a_ghost(req: Req, answer: Answer) -> Answer:
    def change(body: dict) -> dict:
        m = dict(body.get("metadata") or {})
        m["version-log"] = [*(m.get("version-log") or []), {"version-id": 999, "timestamp-ms": 1}]
        return {**body, "metadata": m}
    return _body(answer, change)


def _log_reversed(req: Req, answer: Answer) -> Answer:
    def change(body: dict) -> dict:
        m = dict(body.get("metadata") or {})
        m["metadata-log"] = list(reversed(m.get("metadata-log") or []))
        return {**body, "metadata": m}
    return _body(answer, change)


class rewrites_request(Rule):
    """``method`` on ``pattern``: the request body becomes ``change(body)`` before the catalog sees it (when it
    changes anything)."""

    def __init__(self, method: str, pattern: str, change: Callable[[dict], dict]) -> None:
        super().__init__()
        self.method, self.pattern, self.change = method, pattern, change

    def before(self, req: Req) -> Answer | None:
        body = req.json()
        if req.is_(self.method, self.pattern) and isinstance(body, dict) and (new := self.change(body)) != body:
            self.hit()
            req.body = json.dumps(new).encode()
        return None


def _spark_twice_made_hive(body: dict) -> dict:
    reps = ((body.get("view-version") or {}).get("representations")) or []
    if sorted(str(r.get("dialect")) for r in reps) != ["SPARK", "spark"]:
        return body
    fixed = [{**r, "dialect": "hive"} if r.get("dialect") == "SPARK" else r for r in reps]
    return {**body, "view-version": {**body["view-version"], "representations": fixed}}


CASES = [
    # updateProperties without `missing`: "Server's do not need to implement this."
    ("NS-04", "update-properties", lambda: rewrites_answer(
        "POST", NS + r"/properties$", lambda req, a: a.status == 200,
        lambda req, a: _body(a, lambda b: {k: v for k, v in b.items() if k != "missing"})), "missing"),
    # assert-create beside another requirement refused with 409, not 400: no source says it must stand alone
    ("TXN-02", "concurrent-create-transaction", lambda: rewrites_answer(
        "POST", NS + r"/tables/[^/]+$", lambda req, a: a.status == 400 and "assert-create" in _requirements(req)
        and len(_requirements(req)) > 1,
        lambda req, a: Answer.of(409, {"error": {"message": "refused", "type": "CommitFailedException",
                                                 "code": 409}})), "assert-create"),
    # versions not expired / a version-log naming more than the kept versions: no source of this family says
    ("VIEW-06", "view-version-history-limit", lambda: rewrites_answer(
        "GET", NS + r"/views/[^/]+$", lambda req, a: a.status == 200 and len(
            ((a.json() or {}).get("metadata") or {}).get("versions") or []) >= 2, _log_names_a_ghost),
     "version-log"),
    # the metadata log newest first: the compatibility kit counts the metadata files, no source orders them
    ("EVO-08", "metadata-log", lambda: rewrites_answer(
        "", NS + r"/tables/[^/]+$", lambda req, a: a.status == 200 and len(
            ((a.json() or {}).get("metadata") or {}).get("metadata-log") or []) >= 2, _log_reversed),
     "the log lists"),
    # queries for spark and SPARK accepted (as two dialects): no source says dialects compare case-insensitively
    ("VIEW-02", "create-view-errors", lambda: rewrites_request("POST", NS + r"/views$", _spark_twice_made_hive),
     "spark and SPARK"),
    # removing the current schema refused with 422, not 400: no source names the status
    ("EVO-02", "remove-unused-schemas", lambda: rewrites_answer(
        "POST", NS + r"/tables/[^/]+$", lambda req, a: a.status == 400 and _first_action(req) == "remove-schemas",
        _as_422), "422"),
    # a v2 table with a variant column refused with 422, not 400: the compatibility kit asserts a refusal
    ("V3-01", "variant-columns", lambda: rewrites_answer(
        "POST", NS + r"/tables$", lambda req, a: a.status == 400
        and ((req.json() or {}).get("properties") or {}).get("format-version") == "2", _as_422), None),
]


@pytest.mark.parametrize("requirement,check_name,rule,noted", CASES, ids=[c[1] for c in CASES])
def test_what_no_source_states_is_a_note_not_a_finding(make_odd, requirement, check_name, rule, noted):
    [check] = [c for c in semantic_checks() if c.name == check_name]
    ctx, server = make_odd(lambda up: [rule()])
    verdicts = run_semantic(ctx, check)
    [odd] = server.rules
    got = [(v.requirement, v.status.value, v.message[:300], v.details.get("notes")) for v in verdicts]
    assert odd.hits >= 1, f"the odd server never did what the case is about: {got}"
    assert [v.status for v in verdicts] == [Status.PASS], got
    assert verdicts[0].requirement == requirement
    if noted:
        assert any(noted in n for n in verdicts[0].details.get("notes") or []), got


def test_a_missing_list_naming_other_keys_is_still_a_deviation(make_odd):
    """`missing` where the catalog gives it is "List of properties requested for removal that were not found"."""
    [check] = [c for c in semantic_checks() if c.name == "update-properties"]
    ctx, server = make_odd(lambda up: [rewrites_answer(
        "POST", NS + r"/properties$", lambda req, a: a.status == 200 and bool((a.json() or {}).get("missing")),
        lambda req, a: _body(a, lambda b: {**b, "missing": ["a"]}))])
    [v] = run_semantic(ctx, check)
    assert server.rules[0].hits == 1
    assert v.status is Status.DEVIATION and "missing" in v.message, (v.status, v.message[:300])


def test_a_staged_create_visible_before_its_commit_is_a_deviation_not_a_fail(make_odd):
    """Acknowledged and done with an extra effect (grading.LENIENT): nothing acknowledged is missing, no client is
    told of a success that did not happen - the documents' level, as a create that makes the missing namespace."""
    [check] = [c for c in semantic_checks() if c.name == "create-transaction"]
    ctx, server = make_odd(lambda up: [rewrites_request(
        "POST", NS + r"/tables$", lambda b: {**b, "stage-create": False} if b.get("stage-create") else b)])
    [v] = run_semantic(ctx, check)
    assert server.rules[0].hits >= 1
    assert (v.status, v.classification) == (Status.DEVIATION, "staged create visible"), (v.status, v.message[:300])


def test_a_view_registered_from_a_missing_file_is_graded_as_a_table_is(make_odd):
    """registerView of a metadata file that does not exist answered 200: acknowledged and not done, the
    requirement's level (VIEW-08's K_EFFECT: a fail), as TBL-09 grades registerTable - not a status deviation."""
    [check] = [c for c in semantic_checks() if c.name == "register-existing-view"]
    ctx, server = make_odd(lambda up: [rewrites_answer(
        "POST", NS + r"/register-view$", lambda req, a: a.status >= 400 and "ctk-missing" in req.body.decode(),
        lambda req, a: Answer.of(200, None))])
    [v] = run_semantic(ctx, check)
    assert server.rules[0].hits == 1
    assert v.status is Status.FAIL and "does not exist" in v.message, (v.status, v.message[:300])


class refuses_v1_create_commits(Rule):
    """The commit of a v1 create transaction (assert-create, upgrade-format-version 1) refused with 400 before the
    catalog sees it: a valid request not accepted, nothing made."""

    def before(self, req: Req) -> Answer | None:
        body = req.json()
        if req.is_("POST", NS + r"/tables/[^/]+$") and isinstance(body, dict) and any(
                u.get("action") == "upgrade-format-version" and u.get("format-version") == 1
                for u in body.get("updates") or [] if isinstance(u, dict)):
            self.hit()
            return Answer.of(400, {"error": {"message": "format version 1 is not supported", "type":
                                             "BadRequestException", "code": 400}})
        return None


class refuses_tags(Rule):
    """A commit setting a tag refused with 400 before the catalog sees it (a catalog without tags)."""

    def before(self, req: Req) -> Answer | None:
        body = req.json()
        if req.is_("POST", NS + r"/tables/[^/]+$") and isinstance(body, dict) and any(
                u.get("action") == "set-snapshot-ref" and u.get("type") == "tag"
                for u in body.get("updates") or [] if isinstance(u, dict)):
            self.hit()
            return Answer.of(400, {"error": {"message": "tags are not supported", "type": "BadRequestException",
                                             "code": 400}})
        return None


REFUSED_VALID = [
    # a create transaction's commit refused (400) and nothing made: not a fail of TXN-01's MUST
    ("create-transaction-format-versions", lambda: refuses_v1_create_commits(), "v1"),
    # set-snapshot-ref refused (400) with the refs untouched: not a fail of EVO-06's MUST
    ("appends-and-refs", lambda: refuses_tags(), "no ref was set"),
]


@pytest.mark.parametrize("check_name,rule,said", REFUSED_VALID, ids=[c[0] for c in REFUSED_VALID])
def test_a_refused_valid_commit_is_the_documents_level_not_a_lost_write(make_odd, check_name, rule, said):
    """A valid request refused with nothing changed is not accepted, as `not_acknowledged` grades every refusal:
    a deviation, not a fail of the requirement's MUST (nothing acknowledged went missing)."""
    [check] = [c for c in semantic_checks() if c.name == check_name]
    ctx, server = make_odd(lambda up: [rule()])
    [v] = run_semantic(ctx, check)
    assert server.rules[0].hits == 1
    assert v.status is Status.DEVIATION and said in v.message, (v.status, v.message[:300])


class properties_unsupported(Rule):
    """updateProperties answers 406 UnsupportedOperationException, the spec's answer of a server without namespace
    properties, and changes nothing."""

    def before(self, req: Req) -> Answer | None:
        if req.method == "POST" and re.search(NS + r"/properties$", req.path):
            self.hit()
            return Answer.of(406, {"error": {"message": "namespace properties are not supported",
                                             "type": "UnsupportedOperationException", "code": 406}})
        return None


def test_update_properties_answered_406_is_not_applicable(make_odd):
    """updateProperties: "Server implementations are not required to support namespace properties" (406
    UnsupportedOperationResponse): a 406 is the spec's own answer, so NS-04 is not applicable, not a deviation."""
    [check] = [c for c in semantic_checks() if c.name == "update-properties"]
    ctx, server = make_odd(lambda up: [properties_unsupported()])
    verdicts = run_semantic(ctx, check)
    [rule] = server.rules
    got = [(v.requirement, v.status.value, v.message[:300]) for v in verdicts]
    assert rule.hits == 1, (rule.hits, got)        # the 406 decides: no second updateProperties is sent
    assert [v.status for v in verdicts] == [Status.UNSUPPORTED], got
    assert "406" in verdicts[0].message and "not required to support namespace properties" in verdicts[0].message, got
