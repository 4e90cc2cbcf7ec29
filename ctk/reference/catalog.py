"""Namespace and table operations of the reference catalog (views live in views.py).

Each read route answers directly. Each mutating route hands a `Mutation` to
`app.state.pipeline.handle()`; its `execute(conn)` (see `lazy`) first *prepares* - parses the body, reads
the current state through `conn`, validates commit requirements, applies updates with pyiceberg and writes
the new immutable metadata file - and then does the DB work (insert / compare-and-swap / delete) in the
same transaction. Every error, a malformed body included, is a CatalogError raised from execute, so the
idempotency pipeline sees and finalizes terminal 4xx like any other outcome.

The commit handling asks the catalog's CommitPolicy (ctk.reference.policies): only a policy without an
atomic swap (a deviation profile) prepares a commit before the pipeline, outside any transaction,
with a sleep between the check and the plain (unconditional) pointer write.
A replayed request never prepares. Canonical resources (Mutation.resource), namespace levels joined by 0x1F
as NS (`%` and `/` in levels and names percent-encoded: store.resource_ns): createNamespace "namespaces";
dropNamespace/updateProperties NS; createTable "NS/tables"; registerTable "NS/register";
updateTable/dropTable/unregisterTable "NS/tables/T"; renameTable "tables/rename"; commitTransaction
"transactions/commit"; views likewise with "views", "register-view", "NS/views/V", "views/rename".
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import uuid
from typing import Any, Callable

from pydantic import BaseModel, ValidationError
from pyiceberg.catalog import MetastoreCatalog, delete_data_files, delete_files
from pyiceberg.catalog.rest import CreateTableRequest, RegisterTableRequest
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.table import CommitTableRequest
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import AssertCreate
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ctk.reference import builder, store
from ctk.reference.operations import CatalogError, Mutation, OpResult, exists
from ctk.reference.policies import CommitPolicy

# ---------------------------------------------------------------------------------------------- errors


def bad_request(msg: str) -> CatalogError:
    return CatalogError(400, "BadRequestException", msg)


def no_namespace(ns) -> CatalogError:
    return CatalogError(404, "NoSuchNamespaceException", f"Namespace does not exist: {'.'.join(ns)}")


def take_name(conn, kind: str, ns, name: str, location: str | None, overwrite: bool = False) -> None:
    """A create or register of a table or view (``kind``) takes `name` in `ns` with its metadata ``location``:
    404 when the namespace is missing; 409 when a table or view has the name, unless it is a table of the same
    kind and ``overwrite`` (registerTable with overwrite: its pointer is replaced). ``location`` None (a staged
    create) checks the name and takes nothing."""
    if not store.namespace_exists(conn, ns):
        raise no_namespace(ns)
    taken = store.name_taken(conn, ns, name)
    if taken == kind and overwrite and location is not None:   # (a staged create takes nothing, see above)
        store.swap_pointer(conn, kind, ns, name, None, location)
    elif taken:
        other = "View" if kind == "table" else "Table"
        raise exists(kind.capitalize() if taken == kind else f"{other} with same name", ns, name)
    elif location is not None:
        store.insert_pointer(conn, kind, ns, name, location)


def no_table(ns, name) -> CatalogError:
    return CatalogError(404, "NoSuchTableException", f"Table does not exist: {'.'.join([*ns, name])}")


def no_view(ns, name) -> CatalogError:
    return CatalogError(404, "NoSuchViewException", f"View does not exist: {'.'.join([*ns, name])}")


def commit_failed(msg: str) -> CatalogError:
    return CatalogError(409, "CommitFailedException", msg)


def error_response(exc: CatalogError) -> Response:
    r = exc.result()
    return JSONResponse(r.body, status_code=r.status, headers=r.headers)


def raiser(exc: CatalogError) -> Callable:
    def execute(conn):
        raise exc
    return execute


# ---------------------------------------------------------------------------------------------- parsing

def parse_json(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8")) if body else None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise bad_request(f"Malformed request body: {exc}") from None


def parse_object(body: bytes) -> dict:
    data = parse_json(body)
    if not isinstance(data, dict):
        raise bad_request("Malformed request body: expected a JSON object")
    return data


def parse_model(model: type[BaseModel], data: Any):
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise bad_request(f"Invalid {model.__name__}: {exc.errors(include_url=False, include_input=False)}") from None
    except (ValueError, TypeError) as exc:
        raise bad_request(f"Invalid {model.__name__}: {exc}") from None


def namespace_param(text: str, separator: str = store.SEP) -> list[str]:
    """The levels of a namespace in a path or ``parent`` query (decoded): split on the unit separator 0x1F and
    on the ``separator`` the catalog advertises (the spec: servers use both when decoding)."""
    if separator and separator != store.SEP:
        text = text.replace(separator, store.SEP)
    parts = text.split(store.SEP)
    if not text or any(p == "" for p in parts):
        raise bad_request(f"Invalid namespace: {text!r}")
    return parts


def check_namespace_value(value: Any) -> list[str]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(p, str) and p and store.SEP not in p for p in value)):
        raise bad_request("Invalid namespace: expected a non-empty array of non-empty strings")
    return value


def check_name(value: Any, what: str = "table") -> str:
    if not isinstance(value, str) or not value or store.SEP in value:
        raise bad_request(f"Invalid {what} name: {value!r}")
    return value


def check_properties(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise bad_request("Invalid properties: expected an object of strings")
    if not all(isinstance(v, str) for v in value.values()):
        raise bad_request("Invalid properties: values must be strings")
    return dict(value)


def check_identifier(value: Any) -> tuple[list[str], str]:
    if not isinstance(value, dict):
        raise bad_request("Invalid identifier: expected an object with namespace and name")
    return check_namespace_value(value.get("namespace")), check_name(value.get("name"), "identifier")


def page(items: list, request: Request, policy: CommitPolicy | None = None) -> tuple[list, str | None]:
    """Offset paging: pageToken is the offset of the next item (where `policy` puts it)."""
    token, size = request.query_params.get("pageToken"), request.query_params.get("pageSize")
    start = 0
    if token:
        if not token.isdigit():
            raise bad_request(f"Invalid pageToken: {token!r}")
        start = int(token)
    if size is not None and size != "":
        if not size.isdigit() or int(size) < 1:
            raise bad_request(f"Invalid pageSize: {size!r}")
        end = start + int(size)
        following = policy.next_page_offset(end) if policy is not None else end
        return items[start:end], (str(following) if end < len(items) else None)
    return items[start:], None


def dump(model) -> dict:
    return store.json_of(model)


def metadata_json(location: str) -> dict:
    """The table metadata in a metadata file, as an answer carries it (replay of answers stored by reference)."""
    return dump(store.read_table_metadata(location))


def read_current(ctx: "Context", location: str):
    """The table metadata a pointer names; a file that is gone raises the catalog's CatalogError for it (404
    NotFoundException, as upstream answers: a 5xx would make a client retry what cannot succeed)."""
    try:
        return store.read_table_metadata(location)
    except FileNotFoundError:
        raise ctx.commits.missing_metadata(location) from None


def table_result(location: str | None, metadata, text: str | None = None) -> dict:
    """A LoadTableResult; ``text``: the metadata's JSON as just written to its file (not serialized again)."""
    out: dict[str, Any] = {"metadata": dump(metadata) if text is None else json.loads(text), "config": {}}
    if location is not None:
        out["metadata-location"] = location
    return out


# ---------------------------------------------------------------------------------------------- context

class Context:
    """Per-app state shared by the route handlers."""

    def __init__(self, engine, settings, pipeline):
        self.engine, self.settings, self.pipeline = engine, settings, pipeline

    @property
    def commits(self):
        """The commit policy (ctk.reference.policies.CommitPolicy): swap, requirements, transactions, purges."""
        return self.pipeline.commit_policy

    def read(self, fn: Callable):
        with store.read_connection(self.engine) as conn:
            return fn(conn)

    async def aread(self, fn: Callable):
        return await run_in_threadpool(self.read, fn)

    async def submit(self, request: Request, operation: str, resource: str, body: bytes,
                     execute: Callable, reconcile: Callable | None = None,
                     on_commit: Callable[[], None] | None = None) -> Response:
        mutation = Mutation(operation=operation, resource=resource, principal=request.state.principal,
                            body=body, execute=execute, reconcile=reconcile, on_commit=on_commit)
        return await self.pipeline.handle(request, mutation)

    def default_location(self, conn, ns: list[str], name: str) -> str:
        props = store.namespace_properties(conn, ns) or {}
        if props.get("location"):
            location = props["location"].rstrip("/") + "/" + name
        else:
            location = store.warehouse_uri(self.settings) + "/" + "/".join(ns) + "/" + name
        return unique_location(location)


def unique_location(location: str) -> str:
    """``location``, or (where a table or view already left files there: one renamed away from the name, or
    dropped without its directory) ``location-<uuid>``, as Iceberg's catalogs do with `unique-table-location`:
    a new table never shares the directory of another, whose purge would then delete files under it."""
    if (location.startswith("file:") or location.startswith("/")) and os.path.exists(store.local_path(location)):
        return f"{location}-{uuid.uuid4().hex}"
    return location


def lazy(prepare: Callable) -> Callable:
    """execute(conn) = prepare(conn)(conn): parse, read the base, write the metadata file, then the DB work.

    Preparing inside execute means it runs after the pipeline reserved the idempotency key (so a metadata
    file's modification time is evidence for reconciliation), never runs for a replay, and reads the base
    the DB transaction sees (on SQLite the write lock is held from BEGIN IMMEDIATE)."""
    def execute(conn):
        return prepare(conn)(conn)
    return execute


async def prepared(ctx: Context, fn: Callable[[], Callable]) -> Callable:
    """Run a preparation in the thread pool; a CatalogError becomes an execute() that raises it."""
    def run():
        try:
            return fn()
        except CatalogError as exc:
            return raiser(exc)
    return await run_in_threadpool(run)


# ---------------------------------------------------------------------------------------------- namespaces

async def list_namespaces(ctx: Context, request: Request) -> Response:
    parent_raw = request.query_params.get("parent")
    parent = namespace_param(parent_raw, ctx.commits.namespace_separator()) if parent_raw else []

    def read(conn):
        if parent and not store.namespace_exists(conn, parent):
            raise no_namespace(parent)
        return store.list_namespaces(conn, parent)

    items, nxt = page(await ctx.aread(read), request, ctx.commits)
    out: dict[str, Any] = {"namespaces": items}
    if nxt:
        out["next-page-token"] = nxt
    return JSONResponse(out)


async def create_namespace(ctx: Context, request: Request, body: bytes) -> Response:
    try:
        data = parse_object(body)
        ns = check_namespace_value(data.get("namespace"))
        props = check_properties(data.get("properties"))
    except CatalogError as exc:
        return await ctx.submit(request, "createNamespace", "namespaces", body, raiser(exc))

    def execute(conn):
        if store.namespace_exists(conn, ns):
            raise exists("Namespace", ns)
        if len(ns) > 1 and not store.namespace_exists(conn, ns[:-1]):
            raise no_namespace(ns[:-1])
        store.insert_namespace(conn, ns, props)
        return OpResult(200, {"namespace": ns, "properties": props})

    def reconcile(conn):
        found = store.namespace_properties(conn, ns)
        return OpResult(200, {"namespace": ns, "properties": found}) if found == props else None

    return await ctx.submit(request, "createNamespace", "namespaces", body, execute, reconcile)


async def load_namespace(ctx: Context, request: Request, ns: list[str]) -> Response:
    props = await ctx.aread(lambda conn: store.namespace_properties(conn, ns))
    if request.method == "HEAD":
        return Response(status_code=204 if props is not None else 404)
    if props is None:
        raise no_namespace(ns)
    return JSONResponse({"namespace": ns, "properties": props})


async def drop_namespace(ctx: Context, request: Request, ns: list[str], body: bytes) -> Response:
    def execute(conn):
        if not store.namespace_exists(conn, ns):
            raise no_namespace(ns)
        if ctx.commits.drop_needs_empty_namespace() and store.namespace_has_children(conn, ns):
            raise CatalogError(409, "NamespaceNotEmptyException", f"Namespace is not empty: {'.'.join(ns)}")
        store.delete_namespace(conn, ns)
        return OpResult(204)

    return await ctx.submit(request, "dropNamespace", store.resource_ns(ns), body, execute)


async def update_properties(ctx: Context, request: Request, ns: list[str], body: bytes) -> Response:
    resource = store.resource_ns(ns)
    try:
        data = parse_object(body)
        updates = check_properties(data.get("updates"))
        removals = data.get("removals") or []
        if not isinstance(removals, list) or not all(isinstance(k, str) for k in removals):
            raise bad_request("Invalid removals: expected an array of strings")
        overlap = set(updates) & set(removals)
        if overlap:
            raise CatalogError(422, "UnprocessableEntityException",
                               f"Keys in both updates and removals: {sorted(overlap)}")
    except CatalogError as exc:
        return await ctx.submit(request, "updateProperties", resource, body, raiser(exc))

    def execute(conn):
        props = store.namespace_properties(conn, ns)
        if props is None:
            raise no_namespace(ns)
        removed = [k for k in removals if k in props]
        missing = [k for k in removals if k not in props]
        for k in removed:
            del props[k]
        props.update(updates)
        store.set_namespace_properties(conn, ns, props)
        return OpResult(200, {"updated": sorted(updates), "removed": removed, "missing": missing})

    return await ctx.submit(request, "updateProperties", resource, body, execute)


# ---------------------------------------------------------------------------------------------- tables

def table_resource(ns, name) -> str:
    return f"{store.resource_ns(ns)}/tables/{store.resource_name(name)}"


async def list_tables(ctx: Context, request: Request, ns: list[str], kind: str = "table") -> Response:
    def read(conn):
        if not store.namespace_exists(conn, ns):
            raise no_namespace(ns)
        return store.list_names(conn, kind, ns)

    names, nxt = page(await ctx.aread(read), request, ctx.commits)
    out: dict[str, Any] = {"identifiers": [{"namespace": ns, "name": n} for n in names]}
    if nxt:
        out["next-page-token"] = nxt
    return JSONResponse(out)


def create_table_request(body: bytes) -> CreateTableRequest:
    data = parse_object(body)
    for key in ("location", "partition-spec", "write-order"):
        data.setdefault(key, None)
    check_properties(data.get("properties"))
    req = parse_model(CreateTableRequest, data)
    check_name(req.name)
    return req


def make_local_metadata_dir(location: str) -> None:
    """A staged create on a local warehouse: make `<location>/metadata` (and so `<location>`), as a table
    created at once has. Writers that put the first commit's manifests there without creating directories
    (DuckDB's iceberg extension, for CREATE TABLE AS and CREATE+INSERT in one transaction) need it. A location
    in an object store (any other scheme) has no directories to make."""
    if location.startswith("file:") or location.startswith("/"):
        os.makedirs(os.path.join(store.local_path(location), "metadata"), exist_ok=True)


async def create_table(ctx: Context, request: Request, ns: list[str], body: bytes) -> Response:
    resource = f"{store.resource_ns(ns)}/tables"

    def prepare(rconn):
        req = create_table_request(body)
        location = req.location.rstrip("/") if req.location else ctx.default_location(rconn, ns, req.name)
        metadata = builder.new_table(req.table_schema, req.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                                     req.write_order or UNSORTED_SORT_ORDER, location, dict(req.properties))
        meta_loc, text = None, None
        if not req.stage_create:
            meta_loc = store.new_metadata_location(location, None, store.metadata_path_of(metadata.properties))
            text = store.write_table_metadata(metadata, meta_loc)

        def execute(conn):
            take_name(conn, "table", ns, req.name, meta_loc)   # meta_loc None: staged, nothing to take
            if meta_loc is None:
                make_local_metadata_dir(location)
                return OpResult(200, table_result(None, metadata))
            return OpResult(200, table_result(meta_loc, metadata, text), {"ETag": etag_of(meta_loc, "snapshots=all")},
                            ref=meta_loc, metadata_text=text)
        return execute

    return await ctx.submit(request, "createTable", resource, body, lazy(prepare))


async def load_pointer(ctx: Context, request: Request, kind: str, ns: list[str], name: str) -> str | Response:
    """The metadata location of the table or view (``kind``) a load names, 404 when there is none; for HEAD
    the answer itself (204 when it exists, a bodiless 404 when not)."""
    read = store.table_pointer if kind == "table" else store.view_pointer
    loc = await ctx.aread(lambda conn: read(conn, ns, name))
    if request.method == "HEAD":
        return Response(status_code=204 if loc is not None else 404)
    if loc is None:
        raise (no_table if kind == "table" else no_view)(ns, name)
    return loc


def etag_of(location: str, representation: str = "") -> str:
    """The ETag of a load answer: a strong tag naming one version of the metadata (its file location: every
    commit writes a new file) in one representation (``snapshots=refs`` gives other content than ``all``, so
    another tag, as the spec asks)."""
    return '"' + hashlib.sha256(f"{location}\x1f{representation}".encode()).hexdigest()[:40] + '"'


def not_modified(request: Request, etag: str) -> Response | None:
    """304 Not Modified (with the ETag, no body) when the request's If-None-Match names ``etag`` (weak
    comparison, as RFC 9110 has for If-None-Match; ``*`` matches any current version), else None."""
    header = request.headers.get("if-none-match")
    if not header:
        return None
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    if "*" in tags or etag in tags:
        return Response(status_code=304, headers={"ETag": etag})
    return None


async def load_table(ctx: Context, request: Request, ns: list[str], name: str) -> Response:
    loaded = await load_pointer(ctx, request, "table", ns, name)
    if isinstance(loaded, Response):
        return loaded
    refs_only = request.query_params.get("snapshots") == "refs"
    etag = etag_of(loaded, "snapshots=refs" if refs_only else "snapshots=all")
    if (unchanged := not_modified(request, etag)) is not None:
        return unchanged
    metadata = await run_in_threadpool(read_current, ctx, loaded)
    result = table_result(loaded, metadata)
    if refs_only:
        keep = {ref.snapshot_id for ref in metadata.refs.values()}
        result["metadata"]["snapshots"] = [s for s in result["metadata"].get("snapshots", [])
                                           if s.get("snapshot-id") in keep]
    return JSONResponse(result, headers={"ETag": etag})


class PreparedCommit:
    """A prepared table commit: base pointer, new metadata file written (or the error to raise in apply)."""

    def __init__(self, ns, name, base_location, new_location, metadata, error: CatalogError | None = None):
        self.ns, self.name = ns, name
        self.base_location, self.new_location, self.metadata, self.error = base_location, new_location, metadata, error
        self.text: str | None = None     # the new metadata file's JSON, once apply wrote it

    def apply(self, conn, policy) -> dict:
        """Write the new metadata file, then the DB part: insert (create), compare-and-swap, or (a policy
        without atomic swap) a plain update. The file is written here, inside the request's execute, also when
        the commit was prepared before the pipeline: so it is always written after the key's reservation (the
        evidence crash recovery reads) and never for a replay."""
        if self.error is not None:
            raise self.error
        ns, name = self.ns, self.name
        if self.new_location != self.base_location:
            self.text = store.write_table_metadata(self.metadata, self.new_location)
        if self.base_location is None:
            if not store.namespace_exists(conn, ns):
                raise no_namespace(ns)
            taken = store.name_taken(conn, ns, name)
            if taken == "view":      # as Java's catalogs: the name is a view's, not a failed requirement
                raise exists("View with same name", ns, name)
            if taken:
                raise commit_failed(f"Requirement failed: table already exists: {'.'.join([*ns, name])}")
            store.insert_pointer(conn, "table", ns, name, self.new_location)
        elif self.new_location != self.base_location:
            expected = self.base_location if policy.atomic_swap() else None
            if not store.swap_pointer(conn, "table", ns, name, expected, self.new_location):
                current = store.table_pointer(conn, ns, name)
                if current is None:
                    raise no_table(ns, name)
                raise commit_failed("Requirement failed: concurrent commit: metadata location changed from "
                                    f"{self.base_location} to {current}")
        return table_result(self.new_location, self.metadata, self.text)


def prepare_commit(ctx: Context, ns: list[str], name: str, req: CommitTableRequest, conn=None) -> PreparedCommit:
    """Read the base (through conn, or a read connection when None), check requirements, apply updates and
    write the new metadata file."""
    try:
        if conn is None:
            base_location = ctx.read(lambda c: store.table_pointer(c, ns, name))
        else:
            base_location = store.table_pointer(conn, ns, name)
        others = [r for r in req.requirements if not isinstance(r, AssertCreate)]
        if others and len(others) < len(req.requirements):
            raise bad_request(f"Invalid create requirements: {[r.type for r in others]}")
        creating = base_location is None and any(isinstance(r, AssertCreate) for r in req.requirements)
        if base_location is None and not creating:
            raise no_table(ns, name)
        base = None if base_location is None else read_current(ctx, base_location)
        try:
            ctx.commits.validate(req.requirements, base)
        except CommitFailedException as exc:
            msg = str(exc)
            raise commit_failed(msg if msg.startswith("Requirement failed") else f"Requirement failed: {msg}")
        if base is not None and not req.updates:
            return PreparedCommit(ns, name, base_location, base_location, base)
        metadata, changed = builder.apply_updates(
            base if base is not None else MetastoreCatalog._empty_table_metadata(), req.updates,
            creating=base is None, metadata_location=base_location)
        metadata = ctx.commits.replaced_metadata(req.updates, metadata)
        if base is not None and not changed:     # as Java: updates that change nothing write no new metadata
            return PreparedCommit(ns, name, base_location, base_location, base)
        new_location = store.new_metadata_location(metadata.location, base_location,
                                                   store.metadata_path_of(metadata.properties))
        if not ctx.commits.atomic_swap() and conn is None:
            time.sleep(0.2)  # the window between check and write that this deviation leaves open
        return PreparedCommit(ns, name, base_location, new_location, metadata)
    except CatalogError as exc:
        return PreparedCommit(ns, name, None, None, None, exc)


def commit_request(data: Any, ns: list[str] | None = None, name: str | None = None) -> CommitTableRequest:
    if not isinstance(data, dict):
        raise bad_request("Invalid CommitTableRequest: expected an object")
    if data.get("identifier") is None:
        if ns is None:
            raise bad_request("Invalid CommitTableRequest: identifier is required in a transaction")
        data = {**data, "identifier": {"namespace": ns, "name": name}}
    else:
        check_identifier(data["identifier"])
    for key in ("requirements", "updates"):
        if key in data and not isinstance(data[key], list):
            raise bad_request(f"Invalid CommitTableRequest: {key} must be an array")
    return parse_model(CommitTableRequest, data)


async def commit_table(ctx: Context, request: Request, ns: list[str], name: str, body: bytes) -> Response:
    def prepare(conn):
        req = commit_request(parse_object(body), ns, name)
        prep = prepare_commit(ctx, ns, name, req, conn)

        def execute(c):
            body = prep.apply(c, ctx.commits)
            return OpResult(200, body, {"ETag": etag_of(prep.new_location, "snapshots=all")}, ref=prep.new_location,
                            metadata_text=prep.text)
        return execute

    if not ctx.commits.atomic_swap():  # check outside the transaction, then a plain write: racy on purpose
        execute = await prepared(ctx, lambda: prepare(None))
    else:
        execute = lazy(prepare)
    return await ctx.submit(request, "updateTable", table_resource(ns, name), body, execute)


async def commit_transaction(ctx: Context, request: Request, body: bytes) -> Response:
    def prepare(conn):
        data = parse_object(body)
        changes = data.get("table-changes")
        if not isinstance(changes, list) or not changes:
            raise bad_request("Invalid CommitTransactionRequest: table-changes must be a non-empty array")
        reqs = [commit_request(c) for c in changes]
        idents = [(tuple(r.identifier.namespace.root), r.identifier.name) for r in reqs]
        if len(set(idents)) != len(idents):
            raise bad_request("Invalid CommitTransactionRequest: a table appears more than once")
        preps = [prepare_commit(ctx, list(i[0]), i[1], r, conn) for i, r in zip(idents, reqs)]

        def execute(conn):
            for index, prep in enumerate(preps):
                try:
                    prep.apply(conn, ctx.commits)
                except CatalogError as exc:
                    if not ctx.commits.atomic_transaction():
                        return exc.result()  # returned, not raised: the earlier tables stay committed
                    raise
            return OpResult(204)
        return execute

    if not ctx.commits.atomic_swap():
        execute = await prepared(ctx, lambda: prepare(None))
    else:
        execute = lazy(prepare)
    return await ctx.submit(request, "commitTransaction", "transactions/commit", body, execute)


async def drop_table(ctx: Context, request: Request, ns: list[str], name: str, body: bytes) -> Response:
    purge = request.query_params.get("purgeRequested", "false").lower() == "true"
    dropped: dict[str, str] = {}

    def execute(conn):
        location = store.table_pointer(conn, ns, name)
        if location is None:
            raise no_table(ns, name)
        store.delete_pointer(conn, "table", ns, name)
        dropped["location"] = location
        return OpResult(204)

    def committed():
        dropped["committed"] = dropped["location"]

    # Purge only after this request's own drop committed: a replay, or a drop rolled back because the key
    # turned out to be taken, must not delete the files of whatever table now has this name.
    response = await ctx.submit(request, "dropTable", table_resource(ns, name), body, execute,
                                on_commit=committed)
    if purge:       # also when a fault hook replaced the answer: the drop is done
        target = await run_in_threadpool(ctx.commits.purge_target, dropped.get("committed"),
                                         lambda: ctx.read(lambda c: store.table_pointer(c, ns, name)))
        if target is not None:
            await run_in_threadpool(purge_table, target, ctx.pipeline.records)
    elif dropped.get("committed") and ctx.commits.drop_deletes_metadata():   # a catalog that cleans up on drop
        await run_in_threadpool(delete_table_metadata, dropped["committed"], ctx.pipeline.records)
    return response


def _releasable_metadata(metadata_location: str, records, kept: str):
    """The table metadata at ``metadata_location`` and its metadata files (the current one and its log), once
    stored answers that refer to them are copied into their records; None when it is gone or the copy failed
    (then nothing may be deleted: ``kept`` says what was kept in the log line)."""
    try:
        metadata = store.read_table_metadata(metadata_location)
    except Exception:  # noqa: BLE001 - already gone
        return None
    metadata_files = {e.metadata_file for e in metadata.metadata_log} | {metadata_location}
    try:
        records.materialize(metadata_files, metadata_json)
    except Exception:  # noqa: BLE001 - keep every file rather than break a replay
        logging.getLogger("ctk.reference.catalog").exception(
            "%s %s kept: stored answers referring to its metadata could not be copied", kept, metadata_location)
        return None
    return metadata, metadata_files


def delete_table_metadata(metadata_location: str, records) -> None:
    """Delete the metadata files (the current one and its log) of a table dropped without purge, as catalogs that
    clean up on drop do; data files stay. Stored answers that refer to them are copied into their records first
    (nothing is deleted when that fails)."""
    if (found := _releasable_metadata(metadata_location, records, "metadata of")) is not None:
        delete_files(store.file_io(metadata_location), found[1], "metadata")


def purge_table(metadata_location: str, records) -> None:
    """Delete the data, manifest, manifest-list and metadata files of a dropped table (best effort). Stored
    answers that refer to the metadata files are copied into their records (a RecordStore) first."""
    if (found := _releasable_metadata(metadata_location, records, "every file of")) is None:
        return
    metadata, metadata_files = found
    io = store.file_io(metadata_location)
    manifest_lists, manifests = set(), {}
    for snapshot in metadata.snapshots:
        manifest_lists.add(snapshot.manifest_list)
        try:
            for m in snapshot.manifests(io):
                manifests[m.manifest_path] = m
        except Exception:  # noqa: BLE001
            pass
    delete_data_files(io, list(manifests.values()))
    delete_files(io, set(manifests), "manifest")
    delete_files(io, manifest_lists, "manifest list")
    delete_files(io, metadata_files, "metadata")


async def unregister_table(ctx: Context, request: Request, ns: list[str], name: str, body: bytes) -> Response:
    def execute(conn):
        location = store.table_pointer(conn, ns, name)
        if location is None:
            raise no_table(ns, name)
        store.delete_pointer(conn, "table", ns, name)
        store.note_unregistered(conn, ns, name, location, time.time())
        return OpResult(200, table_result(location, store.read_table_metadata(location)))

    return await ctx.submit(request, "unregisterTable", table_resource(ns, name), body, execute)


async def rename(ctx: Context, request: Request, body: bytes, kind: str) -> Response:
    operation = "renameTable" if kind == "table" else "renameView"
    resource = "tables/rename" if kind == "table" else "views/rename"
    try:
        data = parse_object(body)
        src_ns, src = check_identifier(data.get("source"))
        dst_ns, dst = check_identifier(data.get("destination"))
    except CatalogError as exc:
        return await ctx.submit(request, operation, resource, body, raiser(exc))

    def execute(conn):
        pointer = store.table_pointer if kind == "table" else store.view_pointer
        if pointer(conn, src_ns, src) is None:
            raise (no_table if kind == "table" else no_view)(src_ns, src)
        if not store.namespace_exists(conn, dst_ns):
            raise no_namespace(dst_ns)
        if (src_ns, src) != (dst_ns, dst):
            taken = store.name_taken(conn, dst_ns, dst)
            if taken:      # Java's wording: "Cannot rename ns.a to ns.b. View already exists"
                raise CatalogError(409, "AlreadyExistsException",
                                   f"Cannot rename {'.'.join([*src_ns, src])} to {'.'.join([*dst_ns, dst])}. "
                                   f"{taken.capitalize()} already exists")
            store.rename_pointer(conn, kind, src_ns, src, dst_ns, dst)
        return OpResult(204)

    return await ctx.submit(request, operation, resource, body, execute)


async def register_table(ctx: Context, request: Request, ns: list[str], body: bytes) -> Response:
    def prepare(_conn):
        data = parse_object(body)
        data.setdefault("overwrite", False)
        req = parse_model(RegisterTableRequest, data)
        check_name(req.name)
        try:
            metadata = store.read_table_metadata(req.metadata_location)
        except Exception as exc:  # noqa: BLE001 - unreadable or invalid file
            raise bad_request(f"Cannot read table metadata at {req.metadata_location}: {exc}") from None

        def execute(conn):
            take_name(conn, "table", ns, req.name, req.metadata_location, overwrite=req.overwrite)
            return OpResult(200, table_result(req.metadata_location, metadata),
                            {"ETag": etag_of(req.metadata_location, "snapshots=all")})
        return execute

    return await ctx.submit(request, "registerTable", f"{store.resource_ns(ns)}/register", body, lazy(prepare))


def principal_of(token: str | None) -> str:
    return "anonymous" if not token else "token:" + hashlib.sha256(token.encode()).hexdigest()[:16]
