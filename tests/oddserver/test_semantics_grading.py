"""One grade per kind of behaviour (issue 34 items 2 and 7, `ctk/checks/semantics/grading.py`): parallel checks of
tables, views and namespaces meet the same kind on an odd catalog and are held to the same status and
classification; and the cases real catalogs showed, each reproduced by one rule in front of the reference:

* `creates_missing_namespace`  a create in a namespace that does not exist answers 200 and makes the namespace too
                               (upstream's non-strict JdbcCatalog): lenient, a deviation wherever it is judged;
* `answers_old_object`         a second create of an existing table or view answers 200 with the OLD object
                               (SeaweedFS): the client was told its create happened - the requirement's MUST;
* `not_found_type`             createTable in a missing namespace answers 404 of type NotFoundError (lakana): a Java
                               client raises NoSuchTableException there, so NS-05 and TBL-02 do not pass;
* `top_lists_nested`           listNamespaces without a parent also lists a nested namespace (lakana): NS-08;
* `purge_fails`                a purge-drop answers 500 every time (SeaweedFS after a rename): TBL-06 loads the old
                               name anyway and reports the 500 of a valid request as a finding;
* `rewrites_view_summary`      every view answer carries version summaries the catalog wrote itself (no
                               ``operation`` key: the view spec defines none): VIEW-01 passes;
* `view_copy_location`         loadView answers another metadata-location on every read, the view unchanged: a
                               correct refusal (409; 404/404/409 for renames) passes VIEW-02 and VIEW-04.
"""

from __future__ import annotations

import itertools
import json
import re
from urllib.parse import unquote

import httpx
import pytest
from odd import TABLE, VIEW, Answer, Req, Rule

from ctk.checks.semantics import run_semantic, semantic_checks
from ctk.core.verdicts import Status

NS = r"/namespaces/[^/]+"
CREATE = NS + r"/(?:tables|views)$"
SKIP = {"host", "content-length", "transfer-encoding", "connection"}


def _headers(req: Req) -> dict[str, str]:
    return {k: v for k, v in req.headers if k.lower() not in SKIP}


def _ns_of(path: str) -> tuple[str, str]:
    """(the path up to /namespaces, the namespace segment) of a namespace-scoped path."""
    head, rest = path.split("/namespaces/", 1)
    return head, rest.split("/", 1)[0]


class creates_missing_namespace(Rule):
    """createTable / createView in a namespace that does not exist creates the namespace first (200)."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream.rstrip("/")

    def before(self, req: Req) -> Answer | None:
        if not req.is_("POST", CREATE):
            return None
        head, seg = _ns_of(req.path)
        if httpx.get(f"{self.upstream}{head}/namespaces/{seg}", headers=_headers(req), timeout=10).status_code == 404:
            self.hit()
            levels = unquote(seg).split("\x1f")
            httpx.post(f"{self.upstream}{head}/namespaces", json={"namespace": levels, "properties": {}},
                       headers=_headers(req), timeout=10)
        return None


class answers_old_object(Rule):
    """A create refused 409 (the name exists) answered 200 with the existing table or view as it loads."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream.rstrip("/")

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = req.json()
        if not req.is_("POST", CREATE) or answer.status != 409 or not isinstance(body, dict):
            return None
        got = httpx.get(f"{self.upstream}{req.path}/{body.get('name')}", headers=_headers(req), timeout=10)
        if got.status_code != 200:
            return None
        self.hit()
        return Answer(200, body=got.content)


class not_found_type(Rule):
    """createTable's 404 carries the error type ``NotFoundError`` (the status and message kept)."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("POST", NS + r"/tables$") and answer.status == 404:
            err = dict((answer.json() or {}).get("error") or {})
            self.hit()
            return Answer.of(404, {"error": {**err, "type": "NotFoundError"}})
        return None


class top_lists_nested(Rule):
    """listNamespaces without ``parent`` lists a namespace of two levels too."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        if not req.is_("GET", r"/namespaces$") or "parent=" in req.query or answer.status != 200 \
                or not isinstance(body, dict) or not body.get("namespaces"):
            return None
        self.hit()
        first = body["namespaces"][0]
        return Answer.of(200, {**body, "namespaces": [*body["namespaces"], [first[0], "hand1"]]})


class purge_fails(Rule):
    """dropTable with purgeRequested=true answers 500 without reaching the catalog."""

    def before(self, req: Req) -> Answer | None:
        if req.is_("DELETE", TABLE) and "purgeRequested=true" in req.query:
            self.hit()
            return Answer.of(500, {"error": {"message": "purge failed", "type": "InternalServerError", "code": 500}})
        return None


class view_copy_location(Rule):
    """Every loadView answers the view's metadata at another metadata-location (a catalog serving a copy)."""

    def __init__(self) -> None:
        super().__init__()
        self.counter = itertools.count()

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        if not req.is_("GET", VIEW) or answer.status != 200 or not isinstance(body, dict):
            return None
        self.hit()
        return Answer.of(200, {**body, "metadata-location": f"{body.get('metadata-location')}.copy{next(self.counter)}"})


class rewrites_view_summary(Rule):
    """Every view answer's versions carry a summary of the catalog's own (``engine-name`` only)."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        meta = body.get("metadata") if isinstance(body, dict) else None
        if not re.search(NS + r"/views(/[^/]+)?$", req.path) or answer.status != 200 or not isinstance(meta, dict):
            return None
        self.hit()
        versions = [{**v, "summary": {"engine-name": "odd-catalog"}} for v in meta.get("versions") or []]
        return Answer.of(200, {**body, "metadata": {**meta, "versions": versions}})


def _run(make_odd, rule, *names: str, **settings):
    ctx, server = make_odd(lambda up: [rule(up)], **settings)
    checks = {c.name: c for c in semantic_checks()}
    out = {name: run_semantic(ctx, checks[name]) for name in names}
    assert server.rules[0].hits >= 1, "the odd server never broke the rule"
    assert all(len(vs) == 1 for vs in out.values()), {n: [(v.requirement, v.status) for v in vs] for n, vs in out.items()}
    return {name: vs[0] for name, vs in out.items()}


def _grades(verdicts) -> dict:
    return {n: (v.status.value, v.classification, (v.details or {}).get("kind")) for n, v in verdicts.items()}


def test_a_create_that_makes_the_missing_namespace_is_one_deviation_wherever_judged(make_odd):
    got = _run(make_odd, creates_missing_namespace, "create-existing-table", "create-view-errors",
               "missing-namespace")
    grades = _grades(got)
    assert set(grades.values()) == {("deviation", "created in a missing namespace", "LENIENT")}, grades


def test_a_duplicate_create_answered_with_the_old_object_fails_tables_and_views_alike(make_odd):
    got = _run(make_odd, answers_old_object, "create-existing-table", "create-existing-view")
    grades = _grades(got)
    assert set(grades.values()) == {("fail", None, "NOT_DONE")}, grades
    assert "still loads" in got["create-existing-table"].message


@pytest.mark.parametrize("name", ["create-existing-table", "missing-namespace"])
def test_create_table_404_not_found_type_is_read_as_a_java_client_reads_it(make_odd, name):
    [v] = _run(make_odd, lambda up: not_found_type(), name).values()
    assert v.status is Status.DEVIATION and v.classification == "wrong status", (v.status, v.message[:600])
    assert "NoSuchTableException" in v.message and "'NotFoundError'" in v.message, v.message[:600]


def test_the_top_level_listing_shows_no_nested_namespace(make_odd):
    [v] = _run(make_odd, lambda up: top_lists_nested(), "list-namespaces").values()
    assert v.status is Status.DEVIATION and "hand1" in v.message, (v.status, v.message[:600])


def test_a_purge_drop_answered_500_is_a_finding_and_the_old_name_is_loaded(make_odd):
    [v] = _run(make_odd, lambda up: purge_fails(), "drop-after-rename").values()
    assert (v.status, v.classification, v.details.get("kind")) == (Status.DEVIATION, "server error", "SERVER_ERROR"), \
        (v.status, v.message[:600])
    assert "still loads" in v.message
    loads = [e for e in v.exchanges if e["label"] == "read: the table created under the old name"]
    assert loads, "the table created under the old name was not loaded"


def test_correct_view_refusals_pass_on_a_catalog_answering_another_metadata_location(make_odd):
    got = _run(make_odd, lambda up: view_copy_location(), "create-existing-view", "rename-view-errors")
    assert {n: v.status for n, v in got.items()} == {n: Status.PASS for n in got}, \
        {n: v.message[:600] for n, v in got.items()}


def test_a_view_summary_the_catalog_wrote_itself_passes_view_01_and_06(make_odd):
    got = _run(make_odd, lambda up: rewrites_view_summary(), "create-view", "complete-create-view",
               "create-or-replace-view")
    assert {n: v.status for n, v in got.items()} == {n: Status.PASS for n in got}, \
        {n: v.message[:600] for n, v in got.items()}


class no_table_uuid(Rule):
    """Every table answer's metadata lacks ``table-uuid`` (a required field): nothing to tell two tables apart by."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        meta = body.get("metadata") if isinstance(body, dict) else None
        if not re.search(NS + r"/tables(/[^/]+)?$", req.path) or not isinstance(meta, dict) or "table-uuid" not in meta:
            return None
        self.hit()
        return Answer.of(answer.status, {**body, "metadata": {k: v for k, v in meta.items() if k != "table-uuid"}})


def test_two_missing_table_uuids_compared_are_no_pass(make_odd):
    """Issue 34 item 5: a rename or drop-after-rename check "passed" comparing two missing table-uuids (None ==
    None). The setup now stops at the missing field, naming it."""
    got = _run(make_odd, lambda up: no_table_uuid(), "rename-table", "drop-after-rename")
    for name, v in got.items():
        assert v.status is not Status.PASS, (name, v.message[:400])
        assert "no table-uuid" in v.message, (name, v.status, v.message[:400])


class namespaces_as_objects(Rule):
    """listNamespaces answers each namespace as an object ({"namespace": [...]}) instead of an array of strings."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        if not req.is_("GET", r"/namespaces$") or answer.status != 200 or not isinstance(body, dict):
            return None
        self.hit()
        return Answer.of(200, {**body, "namespaces": [{"namespace": n} for n in body.get("namespaces") or []]})


def test_namespaces_listed_as_objects_are_a_listing_finding_not_an_empty_list(make_odd):
    """Issue 34 item 5: namespaces listed as objects read as "lists 0 namespaces" and failed NS-09 on the
    unreadable listing. Now NS-01 and NS-08 name the shape; a check that only reads the listing is blocked."""
    got = _run(make_odd, lambda up: namespaces_as_objects(), "create-namespace", "list-namespaces",
               "namespace-names-with-dot-or-slash")
    for name in ("create-namespace", "list-namespaces"):
        v = got[name]
        assert v.status in (Status.FAIL, Status.DEVIATION), (name, v.status, v.message[:400])   # by its level
        assert "not namespaces (arrays of strings)" in v.message and "lists 0" not in v.message, v.message[:400]
    ns09 = got["namespace-names-with-dot-or-slash"]
    assert ns09.status in (Status.INCONCLUSIVE, Status.UNSUPPORTED), (ns09.status, ns09.message[:400])
    if ns09.status is Status.INCONCLUSIVE:
        assert ns09.details.get("blocked_by") == "NS-01", ns09.details


class creates_fail(Rule):
    """createTable / createView / createNamespace answer 500 to every request (nothing made)."""

    def __init__(self, pattern: str) -> None:
        super().__init__()
        self.pattern = pattern

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", self.pattern) and b"ctk_absent" not in req.body:
            self.hit()
            return Answer.of(500, {"error": {"message": "boom", "type": "InternalError", "code": 500}})
        return None


@pytest.mark.parametrize("check, pattern", [("create-table", NS + r"/tables$"), ("create-view", NS + r"/views$")])
def test_a_valid_create_answered_500_every_time_is_a_finding_not_only_inconclusive(make_odd, check, pattern):
    """Issue 34 item 5: a catalog whose createTable answered 500 to every valid request had no root cause at all.
    The baseline now sends it three times, a fresh name each time, and the last 500 is the finding."""
    [v] = _run(make_odd, lambda up: creates_fail(pattern), check).values()
    assert (v.status, v.classification, v.details.get("kind")) == (Status.DEVIATION, "server error", "SERVER_ERROR"), \
        (v.status, v.message[:600])
    names = {e["request_body"] for e in v.exchanges if e["method"] == "POST" and re.search(pattern, e["url"])}
    assert len(names) == 3, names         # three tries, each under a name of its own


class partition_ids_from_zero(Rule):
    """An unpartitioned table's last-partition-id reads 0, not Java's 999 (a small JavaScript catalog), and the
    catalog holds commits to that: assert-last-assigned-partition-id 0 holds (sent on as the reference's 999), and
    999 does not (sent on as a value the reference refuses, 409)."""

    REFERENCE, OWN = 999, 0

    def before(self, req: Req) -> Answer | None:
        body = req.json() if req.method == "POST" else None
        changes = (body.get("table-changes") or [body]) if isinstance(body, dict) else []
        touched = False
        for change in changes:
            for r in (change.get("requirements") or []) if isinstance(change, dict) else []:
                if isinstance(r, dict) and r.get("type") == "assert-last-assigned-partition-id":
                    v = r.get("last-assigned-partition-id")
                    r["last-assigned-partition-id"] = self.REFERENCE if v == self.OWN else (
                        -1 if v == self.REFERENCE else v)
                    touched = True
        if touched:
            self.hit()
            req.body = json.dumps(body).encode()
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        meta = body.get("metadata") if isinstance(body, dict) else None
        if isinstance(meta, dict) and meta.get("last-partition-id") == self.REFERENCE:
            return Answer.of(answer.status, {**body, "metadata": {**meta, "last-partition-id": self.OWN}})
        return None


def test_partition_ids_are_read_from_the_catalogs_state_not_assumed(make_odd):
    """Issue 34 item 1 (a small JavaScript catalog): EVO-03 failed twice because the kit sent
    assert-last-assigned-partition-id 999 where that table says 0 - its 409 was right by its own state. Read from
    the table, the value holds on such a catalog as on the reference."""
    got = _run(make_odd, lambda up: partition_ids_from_zero(), "spec-update-and-revert", "spec-conflicts",
               "spec-server-side-retry", "replace-missing-table")
    assert {n: v.status for n, v in got.items()} == {n: Status.PASS for n in got}, \
        {n: v.message[:500] for n, v in got.items()}
