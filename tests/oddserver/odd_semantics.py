"""Odd-server rules of issue 28 (item 3, 8): catalogs whose PLAIN operations are broken, for showing that the
kit names the broken plain operation first and judges no retry on top of it. Used with `odd.OddServer`.

* `drop_table_keeps`         dropTable answers 204 and keeps the table
* `stale_load_after_commit`  a caching front: loadTable serves the table as it was before its last commit
* `update_lost`              a commit holding an update of one action is answered 200 with the table as it was (not
                             applied); `schema_change_lost` is it for ``add-schema``
* `commits_discarded`        every table commit is answered 200 with the table as it was, every multi-table
                             transaction 204: nothing is applied
* `first_update_only`        a commit (of a table, or each table of a transaction) applies only its first update and
                             answers as if it had applied them all (an append's add-snapshot lands, its
                             set-snapshot-ref main does not)
* `new_uuid_every_load`      every loadTable answers another table-uuid
* `metadata_location_snake_case`  every table answer (create, load, commit, register) names the field
                             ``metadata_location`` instead of ``metadata-location``
"""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import quote, unquote

import httpx
from odd import TABLE, Answer, Req, Rule

SKIP = {"host", "content-length", "transfer-encoding", "connection"}


def _headers(req: Req) -> dict[str, str]:
    return {k: v for k, v in req.headers if k.lower() not in SKIP and not k.startswith("x-odd-")}


def _load(upstream: str, req: Req, path: str | None = None) -> httpx.Response:
    return httpx.get(upstream + (path or req.path), headers=_headers(req), timeout=10)


def _updates(req: Req) -> list[dict]:
    body = req.json()
    ups = body.get("updates") if isinstance(body, dict) else None
    return [u for u in ups or [] if isinstance(u, dict)]


def _as_it_was(upstream: str, req: Req) -> Answer | None:
    """The table as it is now, as a commit's answer (None: the table does not load - a staged create's commit)."""
    r = _load(upstream, req)
    if r.status_code != 200:
        return None
    loaded = r.json()
    return Answer.of(200, {"metadata-location": loaded["metadata-location"], "metadata": loaded["metadata"]})


class drop_table_keeps(Rule):
    """dropTable (with or without purge) answers 204 and the table stays."""

    def before(self, req: Req) -> Answer | None:
        if req.is_("DELETE", TABLE):
            self.hit()
            return Answer(204, [], b"")
        return None


class stale_load_after_commit(Rule):
    """A caching front: a table commit (updateTable, or a table of a commitTransaction) answered 200/204 puts the
    table as it was before that commit in the cache, and loadTable answers from the cache from then on - always
    one commit behind."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream
        self.cache: dict[str, Answer] = {}
        self.pending: dict[str, list[tuple[str, Answer]]] = {}     # commit in flight -> the tables before it
        self.sent = 0

    @staticmethod
    def _key(path: str) -> str:
        return unquote(path).rstrip("/")

    def _tables(self, req: Req) -> list[str]:
        if req.is_("POST", TABLE):
            return [req.path]
        if req.is_("POST", r"/transactions/commit$"):
            prefix = req.path[: -len("transactions/commit")]
            body = req.json() if isinstance(req.json(), dict) else {}
            out = []
            for change in body.get("table-changes") or []:
                ident = (change or {}).get("identifier") or {}
                ns = "\x1f".join(ident.get("namespace") or [])
                out.append(f"{prefix}namespaces/{quote(ns, safe='')}/tables/{quote(str(ident.get('name')), safe='')}")
            return out
        return []

    def before(self, req: Req) -> Answer | None:
        if req.is_("GET", TABLE):
            cached = self.cache.get(self._key(req.path))
            if cached is not None:
                self.hit()
                return cached
            return None
        tables = self._tables(req)
        if tables:   # the table as it is before the commit, kept until the commit's answer is known
            seen = []
            for path in tables:
                r = _load(self.upstream, req, path)
                if r.status_code == 200:
                    seen.append((path, Answer(200, [("content-type", "application/json")], r.content)))
            with self.lock:
                self.sent += 1
                token = str(self.sent)
                self.pending[token] = seen
            req.headers.append(("x-odd-before", token))
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        token = dict(req.headers).get("x-odd-before")
        if token is not None:
            with self.lock:
                seen = self.pending.pop(token, [])
            if answer.status in (200, 204):
                for path, before in seen:
                    self.cache[self._key(path)] = before
        return None


class update_lost(Rule):
    """A table commit holding an update of ``action`` answers 200 with the table as it was: acknowledged, not
    applied (a staged create's commit, whose table does not load yet, goes through)."""

    def __init__(self, upstream: str, action: str) -> None:
        super().__init__()
        self.upstream, self.action = upstream, action

    def before(self, req: Req) -> Answer | None:
        if not req.is_("POST", TABLE) or not any(u.get("action") == self.action for u in _updates(req)):
            return None
        answer = _as_it_was(self.upstream, req)
        if answer is not None:
            self.hit()
        return answer


class schema_change_lost(update_lost):
    """``add-schema`` lost (`update_lost`)."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream, "add-schema")


class commits_discarded(Rule):
    """Every commit of an existing table answers 200 with the table as it was; every commitTransaction answers 204;
    nothing is applied."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", r"/transactions/commit$"):
            self.hit()
            return Answer(204, [], b"")
        if not req.is_("POST", TABLE):
            return None
        answer = _as_it_was(self.upstream, req)
        if answer is not None:
            self.hit()
        return answer


class first_update_only(Rule):
    """A table commit, and each table change of a commitTransaction, is applied with its FIRST update only (the
    rest dropped, the requirements kept); the answer is the upstream's. A staged create's commit (assert-create)
    goes through whole: the table it makes must exist for the oddity to show."""

    @staticmethod
    def _first(change: dict) -> bool:
        ups = change.get("updates")
        reqs = change.get("requirements") or []
        if not isinstance(ups, list) or len(ups) < 2 or any(isinstance(r, dict) and r.get("type") == "assert-create"
                                                            for r in reqs):
            return False
        change["updates"] = ups[:1]
        return True

    def before(self, req: Req) -> Answer | None:
        body = req.json()
        if not isinstance(body, dict):
            return None
        if req.is_("POST", TABLE):
            changed = self._first(body)
        elif req.is_("POST", r"/transactions/commit$"):
            changed = any([self._first(c) for c in body.get("table-changes") or [] if isinstance(c, dict)])
        else:
            return None
        if changed:
            req.body = json.dumps(body).encode()
            self.hit()
        return None


class new_uuid_every_load(Rule):
    """Every loadTable answered 200 carries a fresh table-uuid in its metadata."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("GET", TABLE) and answer.status == 200:
            body = answer.json()
            if isinstance(body, dict) and isinstance(body.get("metadata"), dict):
                body["metadata"]["table-uuid"] = str(uuid.uuid4())
                self.hit()
                return Answer.of(200, body)
        return None


class metadata_location_snake_case(Rule):
    """Every answer about a table - createTable, registerTable, loadTable, updateTable - names the field
    ``metadata_location`` (the commit's answer thereby lacks the field CommitTableResponse requires)."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if answer.status == 200 and (req.is_("GET", TABLE) or req.is_("POST", TABLE)
                                     or req.is_("POST", r"/namespaces/[^/]+/(tables|register)$")):
            body = answer.json()
            if isinstance(body, dict) and "metadata-location" in body:
                body["metadata_location"] = body.pop("metadata-location")
                self.hit()
                return Answer.of(200, body)
        return None


def statuses(verdicts: list[Any]) -> dict[tuple[str, str | None], set[str]]:
    """(requirement, endpoint) -> the statuses of the verdicts (for assertion messages)."""
    out: dict[tuple[str, str | None], set[str]] = {}
    for v in verdicts:
        out.setdefault((v.requirement, v.endpoint), set()).add(v.status.value)
    return out
