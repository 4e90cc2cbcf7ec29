"""A small, deliberately odd Iceberg REST catalog for the kit's own tests.

`OddServer` is an ASGI reverse proxy (Starlette-free, httpx to the upstream, uvicorn in a thread on
127.0.0.1) in front of the embedded reference catalog. Rules alter what a third-party catalog would do
differently; each rule is one of the oddities seen on real catalogs:

* `conflict_without_type`    a commit conflict (409) answered with an error body that lacks ``type``
* `nested_namespaces_unloadable`  creating a nested namespace answers 200, loading it answers 404
* `dot_joined_namespaces`    a nested namespace is created as ONE level, its levels joined by '.' (200); it is
                             listed, loaded and dropped under that name only (its levels answer 404)
* `drop_namespace_properties`  createNamespace stores no properties (the kit's run marker is lost)
* `refuse_nested_namespaces`   creating a namespace of two or more levels answers 400
* `undeletable_namespaces`   dropping a namespace whose path matches a pattern answers 403
* `drop_view_deletes_metadata`    dropView also deletes the view's metadata file (a later registerView of
                                  that file fails)
* `flaky_load_table`         every n-th loadTable answers 503
* `busy_at_first`            the first n GETs of a path (e.g. ``/_ctk``, ``/v1/config``) answer 503 (a busy runner)
* `not_routed`               a route answered 404 with no error model (e.g. POST .../transactions/commit)
* `refused_as_unserved`      a route answered 405 (or 501), with or without an error model
* `no_endpoints_listed`      /v1/config without `endpoints` (the spec's default set applies)
* `unlisted`                 /v1/config's `endpoints` without the entries matching a pattern
* `router_with_error_model`  a route not served, and every path the catalog does not know, answered 404 with an
                             error model of the router's own (SeaweedFS: type NotFound, "Path not found")
* `snake_case_metadata_location`  loadTable answers ``metadata_location`` instead of ``metadata-location``
* `delete_missing_namespace_ok`  dropping a namespace that does not exist answers 200 (not 404)
* `dot_path_namespaces`      '.' in a namespace's path segment (or ``parent``) separates levels, ``%1F`` does not
* `ignore_namespace_drops`   dropping a namespace whose path matches a pattern answers 200 and drops nothing
* `validate_requests`        changes nothing: records every request whose body the OpenAPI request schemas forbid,
                             with what the kit's ``X-Ctk-Invalid`` header says of it (None: invalid unannounced)

A rule is an object with ``before(req) -> Answer | None`` (answer without asking the upstream) and/or
``after(req, answer) -> Answer | None`` (replace the upstream's answer). ``hits`` counts what it changed,
so tests can assert that the oddity actually happened.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import uvicorn

HOP = {"content-length", "transfer-encoding", "connection", "keep-alive"}


@dataclass
class Req:
    method: str
    path: str                      # as sent, percent-encoded, without the query
    query: str
    headers: list[tuple[str, str]]
    body: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    def is_(self, method: str, pattern: str) -> bool:
        return self.method == method and re.search(pattern, self.path) is not None


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=lambda: [("content-type", "application/json")])
    body: bytes = b""

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    @classmethod
    def of(cls, status: int, payload: Any = None) -> "Answer":
        return cls(status, body=b"" if payload is None else json.dumps(payload).encode())


class Rule:
    def __init__(self) -> None:
        self.hits = 0
        self.lock = threading.Lock()

    def hit(self) -> None:
        with self.lock:
            self.hits += 1

    def before(self, req: Req) -> Answer | None:
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        return None


TABLE = r"/namespaces/[^/]+/tables/[^/]+$"
VIEW = r"/namespaces/[^/]+/views/[^/]+$"


class conflict_without_type(Rule):
    """A table commit answered 409: the error body keeps message and code, loses ``type``."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("POST", TABLE) and answer.status == 409:
            body = answer.json() or {}
            err = dict(body.get("error") or {})
            err.pop("type", None)
            self.hit()
            return Answer.of(409, {"error": err})
        return None


class nested_namespaces_unloadable(Rule):
    """Creating a namespace of two or more levels answers 200; loading one answers 404."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.method == "GET" and re.search(r"/namespaces/[^/]+$", req.path):
            levels = unquote(req.path.rsplit("/", 1)[1]).split("\x1f")
            if len(levels) > 1:
                self.hit()
                return Answer.of(404, {"error": {"message": f"Namespace does not exist: {'.'.join(levels)}",
                                                 "type": "NoSuchNamespaceException", "code": 404}})
        return None


class dot_joined_namespaces(Rule):
    """createNamespace of levels [a, b] creates the one-level namespace "a.b" (answered 200, as some catalogs
    do that join levels with '.'); the levels themselves are then unknown (404) - the reference does the rest."""

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", r"/namespaces$"):
            body = req.json()
            levels = body.get("namespace") if isinstance(body, dict) else None
            if isinstance(levels, list) and len(levels) > 1:
                body["namespace"] = [".".join(levels)]
                req.body = json.dumps(body).encode()
                self.hit()
        return None


class drop_namespace_properties(Rule):
    """createNamespace keeps the namespace, drops every property it was given (and answers none); updateProperties
    still stores them. Allowed: "Properties stored on the namespace, if supported by the server"."""

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", r"/namespaces$"):
            body = req.json()
            if isinstance(body, dict) and body.get("properties"):
                body["properties"] = {}
                req.body = json.dumps(body).encode()
                self.hit()
        return None


class refuse_nested_namespaces(Rule):
    """createNamespace of two or more levels answers 400 (a catalog without nested namespaces)."""

    def before(self, req: Req) -> Answer | None:
        body = req.json() if req.is_("POST", r"/namespaces$") else None
        if isinstance(body, dict) and isinstance(body.get("namespace"), list) and len(body["namespace"]) > 1:
            self.hit()
            return Answer.of(400, {"error": {"message": "nested namespaces are not supported",
                                             "type": "BadRequestException", "code": 400}})
        return None


class undeletable_namespaces(Rule):
    """dropNamespace answers 403 for paths matching ``pattern`` (nothing is dropped)."""

    def __init__(self, pattern: str) -> None:
        super().__init__()
        self.pattern = pattern

    def before(self, req: Req) -> Answer | None:
        if req.method == "DELETE" and re.search(r"/namespaces/[^/]+$", req.path) and re.search(self.pattern, req.path):
            self.hit()
            return Answer.of(403, {"error": {"message": "not allowed", "type": "ForbiddenException", "code": 403}})
        return None


class drop_view_deletes_metadata(Rule):
    """A successful dropView also deletes the view's metadata file from the (local) warehouse."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream
        self.deleted: list[str] = []

    def before(self, req: Req) -> Answer | None:
        if req.is_("DELETE", VIEW):
            r = httpx.get(self.upstream + req.path, timeout=10)
            loc = (r.json() or {}).get("metadata-location") if r.status_code == 200 else None
            req.headers.append(("x-odd-view-metadata", loc or ""))
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("DELETE", VIEW) and answer.status in (200, 204):
            loc = dict(req.headers).get("x-odd-view-metadata")
            if loc:
                path = Path(urlsplit(loc).path) if loc.startswith("file:") else Path(loc)
                if path.exists():
                    path.unlink()
                    self.deleted.append(str(path))
                    self.hit()
        return None


class flaky_load_table(Rule):
    """Every ``every``-th loadTable (GET of a table) answers 503, up to ``limit`` times (None: no limit)."""

    def __init__(self, every: int = 3, limit: int | None = None, status: int = 503) -> None:
        super().__init__()
        self.every, self.limit, self.status, self.seen = every, limit, status, 0

    def before(self, req: Req) -> Answer | None:
        if not req.is_("GET", TABLE):
            return None
        with self.lock:
            self.seen += 1
            due = self.seen % self.every == 0 and (self.limit is None or self.hits < self.limit)
        if due:
            self.hit()
            return Answer.of(self.status, {"error": {"message": "backend busy", "type": "ServiceUnavailableException",
                                                     "code": self.status}})
        return None


class busy_at_first(Rule):
    """The first ``times`` GETs of paths matching ``pattern`` answer ``status`` (what a loaded catalog gives)."""

    def __init__(self, pattern: str, times: int = 2, status: int = 503) -> None:
        super().__init__()
        self.pattern, self.times, self.status = pattern, times, status

    def before(self, req: Req) -> Answer | None:
        if not req.is_("GET", self.pattern):
            return None
        with self.lock:
            due = self.hits < self.times
            if due:
                self.hits += 1
        if due:
            return Answer.of(self.status, {"error": {"message": "busy", "type": "ServiceUnavailableException",
                                                     "code": self.status}})
        return None


class not_routed(Rule):
    """``method`` on paths matching ``pattern`` answers 404 with a plain-text body (no error model)."""

    def __init__(self, method: str, pattern: str) -> None:
        super().__init__()
        self.method, self.pattern = method, pattern

    def before(self, req: Req) -> Answer | None:
        if req.is_(self.method, self.pattern):
            self.hit()
            return Answer(404, [("content-type", "text/plain")], b"Not Found")
        return None


class refused_as_unserved(Rule):
    """``method`` on paths matching ``pattern`` answered ``status`` (405 or 501) with ``body`` (None: a plain-text
    body, no error model), never reaching the catalog: a route that refuses the method."""

    def __init__(self, method: str, pattern: str, status: int = 405, body: Any = None) -> None:
        super().__init__()
        self.method, self.pattern, self.status, self.body = method, pattern, status, body

    def before(self, req: Req) -> Answer | None:
        if req.is_(self.method, self.pattern):
            self.hit()
            if self.body is None:
                return Answer(self.status, [("content-type", "text/plain")], b"Method Not Allowed")
            return Answer.of(self.status, self.body)
        return None


class unlisted(Rule):
    """/v1/config's `endpoints` list without the entries matching ``pattern`` (e.g. "/register-view$"); with no
    pattern, without the list (as SeaweedFS and lakana answer): the spec's default set applies."""

    def __init__(self, pattern: str | None = None) -> None:
        super().__init__()
        self.pattern = pattern

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        if not (req.path.endswith("/v1/config") and isinstance(body, dict) and isinstance(body.get("endpoints"), list)):
            return None
        if self.pattern is None:
            self.hit()
            return Answer.of(answer.status, {k: v for k, v in body.items() if k != "endpoints"})
        kept = [e for e in body["endpoints"] if not re.search(self.pattern, str(e))]
        if len(kept) == len(body["endpoints"]):
            return None
        self.hit()
        return Answer.of(answer.status, {**body, "endpoints": kept})


def no_endpoints_listed() -> unlisted:
    """/v1/config without its `endpoints` list."""
    return unlisted()


class router_with_error_model(Rule):
    """``method`` on paths matching ``pattern`` is not served: like every path the upstream does not route (its
    404 without an error model), it is answered 404 with the router's own error model, as SeaweedFS does."""

    ANSWER = {"error": {"message": "Path not found", "type": "NotFound", "code": 404}}

    def __init__(self, method: str, pattern: str) -> None:
        super().__init__()
        self.method, self.pattern = method, pattern
        self.unknown = 0          # upstream 404s without an error model rewritten (paths nobody routes)

    def before(self, req: Req) -> Answer | None:
        if req.is_(self.method, self.pattern):
            self.hit()
            return Answer.of(404, self.ANSWER)
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        error = body.get("error") if isinstance(body, dict) else None
        # the upstream's router: a 404/405 without an error model, or the reference's "No route for ..."
        if answer.status in (404, 405) and not (isinstance(error, dict) and not str(
                error.get("message", "")).startswith("No route for")):
            self.unknown += 1
            return Answer.of(404, self.ANSWER)
        return None


class renamed_metadata_location(Rule):
    """loadTable answers name the field ``name`` instead of ``metadata-location``."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("GET", TABLE) and answer.status == 200:
            body = answer.json()
            if isinstance(body, dict) and "metadata-location" in body:
                body[self.name] = body.pop("metadata-location")
                self.hit()
                return Answer.of(200, body)
        return None


class snake_case_metadata_location(renamed_metadata_location):
    """loadTable answers name the field ``metadata_location`` instead of ``metadata-location``."""

    def __init__(self) -> None:
        super().__init__("metadata_location")


class delete_missing_namespace_ok(Rule):
    """dropNamespace of a namespace the catalog does not have answers 200 with an empty body, not 404 (as some
    catalogs answer a DELETE whose parent does not exist)."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.method == "DELETE" and re.search(r"/namespaces/[^/]+$", req.path) and answer.status == 404:
            self.hit()
            return Answer(200, [], b"")
        return None


class dot_path_namespaces(Rule):
    """A catalog that reads '.' in a namespace's path segment (and in the ``parent`` query) as its level
    separator without advertising it: ``a.b`` in a URL is the nested namespace [a, b], and ``a%1Fb`` is a
    one-level name it does not have. Nested namespaces created from the body's levels are stored nested (the
    reference does the rest: this rule only rewrites the URL: '.' -> %1F, %1F -> %1E)."""

    @staticmethod
    def _levels(text: str) -> str:
        return re.sub("%1f", "%1E", text, flags=re.I).replace(".", "%1F")

    def before(self, req: Req) -> Answer | None:
        m = re.search(r"/namespaces/([^/?]+)", req.path)
        if m:
            seg = self._levels(m.group(1))
            if seg != m.group(1):
                self.hit()
            req.path = req.path[:m.start(1)] + seg + req.path[m.end(1):]
        if "parent=" in req.query:
            req.query = re.sub(r"(^|&)parent=([^&]*)", lambda q: q.group(1) + "parent=" + self._levels(q.group(2)),
                               req.query)
        return None


class one_level_nested(dot_joined_namespaces):
    """Levels [a, b] become the one-level name "a.b" everywhere: createNamespace stores it so (as
    `dot_joined_namespaces`), and a path segment ``a%1Fb`` is read as "a.b", so the nested namespace loads (200) -
    naming itself ["a.b"]."""

    def before(self, req: Req) -> Answer | None:
        super().before(req)
        m = re.search(r"/namespaces/([^/?]+)", req.path)
        if m and re.search("%1f", m.group(1), flags=re.I):
            req.path = req.path[:m.start(1)] + re.sub("%1f", ".", m.group(1), flags=re.I) + req.path[m.end(1):]
        return None


class ignore_namespace_drops(Rule):
    """dropNamespace of a path matching ``pattern`` answers 200 and drops nothing."""

    def __init__(self, pattern: str) -> None:
        super().__init__()
        self.pattern = pattern

    def before(self, req: Req) -> Answer | None:
        if req.method == "DELETE" and re.search(r"/namespaces/[^/]+$", req.path) and re.search(self.pattern, req.path):
            self.hit()
            return Answer(200, [], b"")
        return None


class ignore_table_drops(Rule):
    """dropTable answers 204 and drops nothing."""

    def before(self, req: Req) -> Answer | None:
        if req.method == "DELETE" and re.search(r"/namespaces/[^/]+/tables/[^/]+$", req.path):
            self.hit()
            return Answer(204, [], b"")
        return None


class validate_requests(Rule):
    """Answers nothing itself: every request body is held to the request schemas of ``validator``
    (`ctk.openapi.RequestValidator`); ``invalid`` lists each body that fails as (method, path, problems, what its
    ``X-Ctk-Invalid`` header says or None), ``checked`` counts the bodies validated."""

    def __init__(self, validator: Any) -> None:
        super().__init__()
        self.validator = validator
        self.checked = 0
        self.invalid: list[tuple[str, str, list[str], str | None]] = []

    def before(self, req: Req) -> Answer | None:
        from ctk.openapi import invalid_on_purpose

        url = "http://catalog" + req.path
        problems = self.validator.problems(req.method, url, req.body) if req.body or req.method == "POST" else []
        with self.lock:
            self.checked += bool(req.body)
            if problems:
                self.invalid.append((req.method, req.path, problems, invalid_on_purpose(req.headers)))
                self.hits += 1
        return None

    def unannounced(self) -> list[tuple[str, str, list[str], str | None]]:
        """The invalid bodies the kit sent without saying so (no X-Ctk-Invalid)."""
        with self.lock:
            return [x for x in self.invalid if x[3] is None]


class OddServer:
    """`with OddServer(upstream_url, rules) as odd: odd.url` - the proxy, on 127.0.0.1."""

    def __init__(self, upstream: str, rules: list[Rule]):
        self.upstream = upstream.rstrip("/")
        self.rules = list(rules)
        self.url: str | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._client: httpx.AsyncClient | None = None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    self._client = httpx.AsyncClient(timeout=30)
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    if self._client is not None:
                        await self._client.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        raw_path = scope.get("raw_path") or scope["path"].encode()
        req = Req(scope["method"], raw_path.decode("latin-1"), scope.get("query_string", b"").decode("latin-1"),
                  [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]], body)
        answer = None
        for rule in self.rules:
            answer = await asyncio.to_thread(rule.before, req)
            if answer is not None:
                break
        if answer is None:
            answer = await self._forward(req)
            for rule in self.rules:
                changed = await asyncio.to_thread(rule.after, req, answer)
                if changed is not None:
                    answer = changed
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers if k.lower() not in HOP]
        headers.append((b"content-length", str(len(answer.body)).encode()))
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": answer.body})

    async def _forward(self, req: Req) -> Answer:
        assert self._client is not None
        url = self.upstream + req.path + (f"?{req.query}" if req.query else "")
        headers = [(k, v) for k, v in req.headers if k.lower() not in HOP | {"host"} and not k.startswith("x-odd-")]
        r = await self._client.request(req.method, url, headers=headers, content=req.body)
        return Answer(r.status_code, [(k, v) for k, v in r.headers.items() if k.lower() not in HOP], r.content)

    def start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        self._sock = sock
        config = uvicorn.Config(self, log_level="warning", lifespan="on", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name=f"odd-server-{port}")
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the odd server did not start")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        if getattr(self, "_sock", None) is not None:
            self._sock.close()
        self._server = self._thread = None
        self.url = None

    def __enter__(self) -> "OddServer":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
