"""The Starlette application of the reference catalog: routing, discovery, auth, error mapping.

Routes exist without a prefix and, when settings.prefix is set, also under /v1/<prefix>/ (advertised in
/v1/config overrides.prefix). Every mutating route goes through app.state.pipeline.handle() (see catalog.py;
scan planning in planning.py). Every route of ROUTES is advertised in /v1/config `endpoints`.

Served beyond namespaces, tables and views: server-side scan planning (planning.py), loadCredentials (a
local-file warehouse needs no credentials: an empty `storage-credentials` list for an existing table) and
functions (the catalog holds none: listFunctions answers an empty, paged list for an existing namespace,
loadFunction 404 NoSuchFunctionException).

Not served and not advertised: signRequest (`POST .../tables/{table}/sign`). Remote signing signs S3
requests for clients that the catalog told to sign remotely (`s3.remote-signing-enabled`); the warehouse is
a local directory, no client is ever told to sign, and a signature made up for a request to no object store
would be a fake. A client that calls it anyway gets the catalog's 404 NotFoundException for an unknown route.
With `control_api`, `GET /_ctk/plans?namespace=NS&table=T` (NS levels joined by %1F) lists a table's plans
(id, status, plan tasks not yet fetched): a test hook the kit reads plan state from, like the execution
counters.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
from contextlib import asynccontextmanager
from typing import Awaitable, Callable
from urllib.parse import parse_qs, unquote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.middleware import Middleware
from starlette.routing import Route

from ctk.openapi import request_validator
from ctk.reference import catalog, planning, store, views
from ctk.reference.catalog import CatalogError, Context, error_response, namespace_param
from ctk.reference.pipeline import Pipeline
from ctk.reference.policies import CommitPolicy, KeyPolicy
from ctk.reference.profiles import policies_for

log = logging.getLogger("ctk.reference")

NOT_FOUND_TYPES = {404: "NotFoundException", 405: "MethodNotAllowedException", 413: "RequestTooLargeException"}

async def report_metrics(ctx, request, ns, table, body):  # noqa: ARG001 - accepted and discarded
    catalog.parse_object(body)
    return Response(status_code=204)


async def load_credentials(ctx, request, ns, name):  # noqa: ARG001 - planId accepted, nothing to vend
    if await ctx.aread(lambda conn: store.table_pointer(conn, ns, name)) is None:
        raise catalog.no_table(ns, name)
    return JSONResponse({"storage-credentials": []})


async def list_functions(ctx, request, ns):
    if not await ctx.aread(lambda conn: store.namespace_exists(conn, ns)):
        raise catalog.no_namespace(ns)
    items, nxt = catalog.page([], request)
    out: dict = {"identifiers": items}
    if nxt:
        out["next-page-token"] = nxt
    return JSONResponse(out)


async def load_function(ctx, request, ns, function):  # noqa: ARG001
    if not await ctx.aread(lambda conn: store.namespace_exists(conn, ns)):
        raise catalog.no_namespace(ns)
    raise CatalogError(404, "NoSuchFunctionException",
                       f"Function does not exist: {'.'.join([*ns, function])} (this catalog holds no functions)")


async def rename_table(ctx, request, body):
    return await catalog.rename(ctx, request, body, "table")


async def rename_view(ctx, request, body):
    return await catalog.rename(ctx, request, body, "view")


Handler = Callable[..., Awaitable[Response]]

# Routing runs on the raw path's segments: a `/` inside a namespace level or a table or view name arrives as %2F
# (`new%2Fdb`), which the server has already decoded into `scope["path"]`, where it would split the segment and
# miss every route. RawSegments decodes each raw segment on its own and stands SLASH in for a `/` within one while
# routing; the route wrapper turns it back into `/` in the path parameters. A path with %00 is left as it is.
SLASH = "\x00"


class RawSegments:
    """ASGI middleware: scope["path"] rebuilt from the raw path's segments (see SLASH)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw and b"%2f" in raw.lower() and b"%00" not in raw:
            text = raw.decode("latin-1").split("?", 1)[0]
            scope = {**scope, "path": "/".join(unquote(seg).replace("/", SLASH) for seg in text.split("/"))}
        await self.app(scope, receive, send)


# path below /v1/{prefix} -> {methods: handler}: the routes, each advertised in /v1/config `endpoints`. A request
# by any method but GET and HEAD has its body read (up to settings.max_body_bytes) and passed as ``body``.
ROUTES: dict[str, dict[tuple[str, ...], Handler]] = {
    "/namespaces": {("GET",): catalog.list_namespaces, ("POST",): catalog.create_namespace},
    "/namespaces/{namespace}": {("GET", "HEAD"): catalog.load_namespace, ("DELETE",): catalog.drop_namespace},
    "/namespaces/{namespace}/properties": {("POST",): catalog.update_properties},
    "/namespaces/{namespace}/tables": {("GET",): catalog.list_tables, ("POST",): catalog.create_table},
    "/namespaces/{namespace}/register": {("POST",): catalog.register_table},
    "/namespaces/{namespace}/tables/{table}": {("GET", "HEAD"): catalog.load_table, ("POST",): catalog.commit_table,
                                               ("DELETE",): catalog.drop_table},
    "/namespaces/{namespace}/tables/{table}/unregister": {("POST",): catalog.unregister_table},
    "/namespaces/{namespace}/tables/{table}/metrics": {("POST",): report_metrics},
    "/namespaces/{namespace}/tables/{table}/credentials": {("GET",): load_credentials},
    "/namespaces/{namespace}/tables/{table}/plan": {("POST",): planning.plan_table_scan},
    "/namespaces/{namespace}/tables/{table}/plan/{plan-id}": {("GET",): planning.fetch_planning_result,
                                                              ("DELETE",): planning.cancel_planning},
    "/namespaces/{namespace}/tables/{table}/tasks": {("POST",): planning.fetch_scan_tasks},
    "/tables/rename": {("POST",): rename_table},
    "/transactions/commit": {("POST",): catalog.commit_transaction},
    "/namespaces/{namespace}/views": {("GET",): views.list_views, ("POST",): views.create_view},
    "/namespaces/{namespace}/views/{view}": {("GET", "HEAD"): views.load_view, ("POST",): views.replace_view,
                                             ("DELETE",): views.drop_view},
    "/views/rename": {("POST",): rename_view},
    "/namespaces/{namespace}/register-view": {("POST",): views.register_view},
    "/namespaces/{namespace}/functions": {("GET",): list_functions},
    "/namespaces/{namespace}/functions/{function}": {("GET",): load_function},
}


def advertised_endpoints() -> list[str]:
    return [f"{method} /v1/{{prefix}}{path}" for path, handlers in ROUTES.items() for methods in handlers
            for method in methods]


class Auth:
    """Bearer-token check (only when settings.token is set) and the client_credentials token endpoint."""

    def __init__(self, settings):
        self.settings = settings
        self.issued: set[str] = set()
        self.lock = threading.Lock()

    def principal(self, request: Request) -> str:
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else None
        if self.settings.token:
            with self.lock:
                ok = token is not None and (token == self.settings.token or token in self.issued)
            if not ok:
                raise CatalogError(401, "NotAuthorizedException", "Not authorized: missing or invalid bearer token",
                                   headers={"WWW-Authenticate": "Bearer"})
        return "anonymous" if not token else "token:" + hashlib.sha256(token.encode()).hexdigest()[:16]

    async def tokens(self, request: Request) -> Response:
        body = await request.body()
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        header = request.headers.get("authorization", "")
        if not form.get("client_secret") and header.lower().startswith("basic "):
            import base64
            try:
                cid, _, secret = base64.b64decode(header[6:]).decode().partition(":")
                form.setdefault("client_id", cid)
                form["client_secret"] = secret
            except Exception:  # noqa: BLE001
                pass
        if form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type",
                                 "error_description": "only client_credentials is supported"}, status_code=400)
        if self.settings.token and form.get("client_secret") != self.settings.token:
            return JSONResponse({"error": "invalid_client", "error_description": "bad client credentials"},
                                status_code=401)
        token = "ctk-" + secrets.token_hex(16)
        with self.lock:
            self.issued.add(token)
        return JSONResponse({"access_token": token, "token_type": "bearer", "expires_in": 3600,
                             "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})


async def read_body(request: Request, limit: int) -> bytes:
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        raise CatalogError(413, "RequestTooLargeException", f"Request body exceeds {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise CatalogError(413, "RequestTooLargeException", f"Request body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def config_body(settings, policy: KeyPolicy | None = None, commits: CommitPolicy | None = None) -> dict:
    overrides: dict[str, str] = {}
    if settings.prefix:
        overrides["prefix"] = settings.prefix
    separator = (commits if commits is not None else policies_for(settings)[1]).namespace_separator()
    if separator != store.SEP:     # advertised URL-encoded, as the spec asks (".": "%2E")
        overrides["namespace-separator"] = "".join(f"%{b:02X}" for b in separator.encode())
    out: dict = {"defaults": {}, "overrides": overrides, "endpoints": advertised_endpoints()}
    key_policy = policy if policy is not None else policies_for(settings)[0]
    key_policy.advertise(out)      # the lifetime (ctk.reference.policies.KeyPolicy.advertise)
    return out


def create_app(settings) -> Starlette:
    engine = store.make_engine(settings)
    pipeline = Pipeline(engine, settings)
    pipeline.resolve_ref = catalog.metadata_json
    ctx = Context(engine, settings, pipeline)
    auth = Auth(settings)
    # a null optional member is absent to a receiving catalog: Iceberg's Java client sends them (createTable's
    # "location": null, "write-order": null), and the catalogs it talks to accept them
    requests = request_validator([settings.request_spec] if settings.request_spec else [], nulls_absent=True)

    def wrap(handler: Handler, reads_body: bool):
        async def endpoint(request: Request) -> Response:
            try:
                request.state.principal = auth.principal(request)
                params = {k: v.replace(SLASH, "/") if k != "namespace" else v
                          for k, v in request.path_params.items()}
                if "namespace" in params:
                    params["ns"] = [level.replace(SLASH, "/") for level in
                                    namespace_param(params.pop("namespace"), ctx.commits.namespace_separator())]
                if "view" in params:
                    params["name"] = params.pop("view")
                elif "table" in params and handler is not report_metrics:
                    params["name"] = params.pop("table")
                if reads_body:
                    params["body"] = await read_body(request, settings.max_body_bytes)
                    forbidden = requests.problems(request.method, str(request.url), params["body"])
                    if forbidden:      # as strict catalogs do: a body the spec forbids is refused, nothing done
                        raise CatalogError(400, "BadRequestException",
                                           "Invalid request body: " + "; ".join(forbidden[:3]))
                return await handler(ctx, request, **params)
            except CatalogError as exc:
                return error_response(exc)
            except Exception as exc:  # noqa: BLE001 - never leak a traceback as a non-JSON 500
                log.exception("internal error on %s %s", request.method, request.url.path)
                return error_response(CatalogError(500, "InternalServerError", f"{type(exc).__name__}: {exc}"))
        return endpoint

    async def get_config(request: Request) -> Response:
        try:
            auth.principal(request)
        except CatalogError as exc:
            return error_response(exc)
        return JSONResponse(config_body(settings, pipeline.policy, pipeline.commit_policy))

    routes = [Route("/v1/config", get_config, methods=["GET"]),
              Route("/v1/oauth/tokens", auth.tokens, methods=["POST"])]
    prefixes = [""] + ([f"/{settings.prefix.strip('/')}"] if settings.prefix.strip("/") else [])
    for prefix in prefixes:
        for path, handlers in ROUTES.items():
            for methods, handler in handlers.items():
                routes.append(Route(f"/v1{prefix}{path}".replace("{plan-id}", "{plan_id}"),
                                    wrap(handler, not set(methods) <= {"GET", "HEAD"}), methods=list(methods),
                                    name=f"{handler.__name__}{prefix}:{','.join(methods)}"))
    if settings.control_api:
        routes.extend(pipeline.routes())

        async def list_plans(request: Request) -> Response:
            ns_raw, table = request.query_params.get("namespace"), request.query_params.get("table")
            if not ns_raw or not table:
                return JSONResponse({"error": "namespace and table are required"}, status_code=400)
            ns = namespace_param(ns_raw, ctx.commits.namespace_separator())
            plans = await ctx.aread(lambda conn: planning.list_plans(conn, ns, table))
            return JSONResponse({"plans": plans})

        routes.append(Route("/_ctk/plans", list_plans, methods=["GET"]))

    async def http_error(request: Request, error: Exception) -> Response:
        # registered for HTTPException only (Starlette types a handler by the base class)
        exc = error if isinstance(error, HTTPException) else HTTPException(500, str(error))
        kind = NOT_FOUND_TYPES.get(exc.status_code, "HTTPException")
        path = request.url.path.replace(SLASH, "%2F")
        message = {404: f"No route for {request.method} {path}",
                   405: f"Method {request.method} not allowed on {path}"}.get(exc.status_code, exc.detail)
        return error_response(CatalogError(exc.status_code, kind, message, headers=dict(exc.headers or {})))

    @asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            try:
                pipeline.close()
            finally:
                engine.dispose()

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error}, lifespan=lifespan,
                    middleware=[Middleware(RawSegments)])
    app.state.settings, app.state.engine, app.state.pipeline, app.state.ctx = settings, engine, pipeline, ctx
    return app
