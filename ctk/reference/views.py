"""View operations of the reference catalog.

pyiceberg has view metadata models (ViewMetadata, ViewVersion, CreateViewRequest) but no view updates or
requirements; those (assert-view-uuid; assign-uuid, upgrade-format-version, add-schema, set-location,
set-properties, remove-properties, add-view-version, set-current-view-version) are applied here on the
JSON form of the metadata, which is validated with pyiceberg's ViewMetadata at the end.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from pyiceberg.catalog.rest import CreateViewRequest, RegisterViewRequest
from pyiceberg.view.metadata import ViewMetadata
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ctk.reference import store
from ctk.reference.catalog import (Context, CatalogError, bad_request, check_identifier, check_name, check_properties,
                                   commit_failed, dump, etag_of, lazy, load_pointer, no_view, not_modified, parse_model,
                                   parse_object, take_name)
from ctk.reference.operations import OpResult


def view_result(location: str, metadata: ViewMetadata) -> dict:
    return {"metadata-location": location, "metadata": dump(metadata), "config": {}}


def view_resource(ns, name) -> str:
    return f"{store.resource_ns(ns)}/views/{store.resource_name(name)}"


def validated(data: dict) -> ViewMetadata:
    try:
        return ViewMetadata.model_validate(data)
    except (ValueError, TypeError) as exc:
        raise bad_request(f"Invalid view metadata: {exc}") from None


def _now_ms() -> int:
    return int(time.time() * 1000)


def _same_schema(a: dict, b: dict) -> bool:
    return a.get("fields") == b.get("fields") and a.get("identifier-field-ids", []) == b.get("identifier-field-ids", [])


def invalid_argument(msg: str) -> CatalogError:
    """400 for an argument Java's view builder refuses with IllegalArgumentException (Preconditions.checkArgument):
    typed so, as Java's REST server answers it, a Java client raises IllegalArgumentException again (its
    ErrorHandlers map only that type to it; any other 400 type becomes BadRequestException)."""
    return CatalogError(400, "IllegalArgumentException", msg)


def validation_failed(msg: str) -> CatalogError:
    """400 for what Java's view builder refuses with ValidationException (ValidationException.check)."""
    return CatalogError(400, "ValidationException", msg)


HISTORY_SIZE = "version.history.num-entries"     # ViewProperties.VERSION_HISTORY_SIZE
HISTORY_SIZE_DEFAULT = 10
METADATA_PATH = "write.metadata.path"            # ViewProperties.WRITE_METADATA_LOCATION


def check_dialects(version: dict) -> None:
    """Java's view builder: one SQL representation per dialect (compared case-insensitively), else 400."""
    seen: set[str] = set()
    for rep in version.get("representations") or []:
        if isinstance(rep, dict) and rep.get("type") == "sql" and isinstance(rep.get("dialect"), str):
            dialect = rep["dialect"].lower()
            if dialect in seen:
                raise invalid_argument(f"Invalid view version: Cannot add multiple queries for dialect {dialect}")
            seen.add(dialect)


def history_size(properties: dict) -> int:
    """version.history.num-entries (default 10); not a positive number: 400, as Java's builder refuses it."""
    raw = properties.get(HISTORY_SIZE)
    if raw is None:
        return HISTORY_SIZE_DEFAULT
    try:
        size = int(str(raw).strip())
    except ValueError:
        raise invalid_argument(f"{HISTORY_SIZE} must be an integer but was {raw!r}") from None
    if size <= 0:
        raise invalid_argument(f"{HISTORY_SIZE} must be positive but was {size}")
    return size


def expire_versions(meta: dict, added: set[int]) -> dict:
    """Java's ViewMetadata.Builder.build: keep max(history size, |versions added by this commit and the current|)
    versions - the current one and the newest by id - and the version-log entries after the last one naming an
    expired version."""
    keep = max(history_size(meta.get("properties") or {}), len(added | {meta.get("current-version-id")}))
    versions = meta.get("versions") or []
    if len(versions) <= keep:
        return meta
    cur = meta.get("current-version-id")
    retained = [v for v in versions if v.get("version-id") == cur]
    for v in sorted(versions, key=lambda v: v.get("version-id", 0), reverse=True):
        if len(retained) >= keep:
            break
        if v.get("version-id") != cur:
            retained.append(v)
    ids = {v.get("version-id") for v in retained}
    log: list[dict] = []
    for entry in meta.get("version-log") or []:
        if entry.get("version-id") in ids:
            log.append(entry)
        else:
            log.clear()          # history past an expired version is cleared
    return {**meta, "versions": [v for v in versions if v.get("version-id") in ids], "version-log": log}


def metadata_file_location(metadata: ViewMetadata, previous: str | None) -> str:
    """Where a view's next metadata file goes: under write.metadata.path when the view sets it (as Java's
    BaseViewOperations), else under ``<location>/metadata``."""
    custom = (metadata.properties or {}).get(METADATA_PATH)
    if custom:
        name = store.new_metadata_location("", previous).rsplit("/", 1)[-1]
        return f"{custom.rstrip('/')}/{name}"
    return store.new_metadata_location(metadata.location, previous)


def apply_view_updates(meta: dict, updates: list, make_current: bool = True) -> dict:
    """Apply ViewUpdate objects (JSON) to view metadata (JSON) as Iceberg Java's ViewMetadata.Builder does: an
    added schema equal to one there gets its id (and is not "last added"), else the next free id from 0; an added
    version keeps its id or takes the next free one (an equal version is added again, not reused as in Java: a
    re-execution must show); -1 is the last added schema or version; one SQL representation per dialect; versions
    beyond version.history.num-entries expire. Raises CatalogError 400 on a bad update (IllegalArgumentException
    where Java's builder raises it). ``make_current`` False (a deviation profile) leaves set-current-view-version
    without effect."""
    meta = {**meta, "schemas": list(meta.get("schemas", [])), "versions": list(meta.get("versions", [])),
            "version-log": list(meta.get("version-log", [])), "properties": dict(meta.get("properties", {}))}
    last_schema: int | None = None
    last_version: int | None = None
    added: set[int] = set()
    for upd in updates:
        if not isinstance(upd, dict) or not isinstance(upd.get("action"), str):
            raise bad_request("Invalid view update: expected an object with an action")
        action = upd["action"]
        if action == "assign-uuid":
            if upd.get("uuid") != meta.get("view-uuid"):
                raise invalid_argument("Cannot reassign uuid")
        elif action == "upgrade-format-version":
            if upd.get("format-version") != 1:
                raise bad_request(f"Unsupported view format version: {upd.get('format-version')!r}")
        elif action == "add-schema":
            schema = upd.get("schema")
            if not isinstance(schema, dict):
                raise bad_request("add-schema needs a schema")
            same = next((s for s in meta["schemas"] if _same_schema(s, schema)), None)
            if same is None:
                last_schema = max((s["schema-id"] for s in meta["schemas"]), default=-1) + 1
                meta["schemas"].append({**schema, "schema-id": last_schema})
        elif action == "set-location":
            if not isinstance(upd.get("location"), str) or not upd["location"]:
                raise invalid_argument(f"Invalid location: {upd.get('location')!r}")
            meta["location"] = upd["location"]
        elif action == "set-properties":
            if not isinstance(upd.get("updates"), dict):
                raise bad_request("set-properties needs updates")
            bad = next((k for k, v in upd["updates"].items() if not isinstance(v, str)), None)
            if bad is not None:
                raise invalid_argument(f"Invalid value of property {bad}: {upd['updates'][bad]!r}")
            meta["properties"].update(upd["updates"])
        elif action == "remove-properties":
            if not isinstance(upd.get("removals"), list):
                raise bad_request("remove-properties needs removals")
            if not all(isinstance(k, str) for k in upd["removals"]):
                raise invalid_argument(f"Invalid key: {next(k for k in upd['removals'] if not isinstance(k, str))!r}")
            for k in upd["removals"]:
                meta["properties"].pop(k, None)
        elif action == "add-view-version":
            version = upd.get("view-version")
            if not isinstance(version, dict):
                raise bad_request("add-view-version needs a view-version")
            version = dict(version)
            given = version.get("version-id")
            new_id = given if isinstance(given, int) else 1
            # Java reuses an equal version (sameViewVersion); the reference adds one on every execution, so
            # that a re-executed replaceView shows in the versions the kit reads
            for existing in meta["versions"]:
                if existing["version-id"] >= new_id:
                    new_id = existing["version-id"] + 1
            if version.get("schema-id") == -1:
                if last_schema is None:
                    raise validation_failed("Cannot set last added schema: no schema has been added")
                version["schema-id"] = last_schema
            if not any(s["schema-id"] == version.get("schema-id") for s in meta["schemas"]):
                raise invalid_argument(f"Cannot add version with unknown schema: {version.get('schema-id')!r}")
            check_dialects(version)
            last_version = new_id
            added.add(new_id)
            version["version-id"] = new_id
            version.setdefault("timestamp-ms", _now_ms())
            meta["versions"].append(version)
        elif action == "set-current-view-version":
            vid = upd.get("view-version-id")
            if vid == -1:
                if last_version is None:
                    raise validation_failed("Cannot set last version id: no current version id has been set")
                vid = last_version
            version = next((v for v in meta["versions"] if v["version-id"] == vid), None)
            if version is None:
                raise invalid_argument(f"Cannot set current version to unknown version: {vid!r}")
            if meta.get("current-version-id") != vid and make_current:
                meta["current-version-id"] = vid
                meta["version-log"].append({"timestamp-ms": version.get("timestamp-ms", _now_ms()), "version-id": vid})
        else:
            raise bad_request(f"Unknown view update action: {action!r}")
    return expire_versions(meta, added)


async def list_views(ctx: Context, request: Request, ns: list[str]) -> Response:
    from ctk.reference.catalog import list_tables
    return await list_tables(ctx, request, ns, kind="view")


async def create_view(ctx: Context, request: Request, ns: list[str], body: bytes) -> Response:
    def prepare(rconn):
        data = parse_object(body)
        data.setdefault("location", None)
        check_properties(data.get("properties"))
        req = parse_model(CreateViewRequest, data)
        check_name(req.name, "view")
        location = req.location.rstrip("/") if req.location else ctx.default_location(rconn, ns, req.name)
        # as Java's view builder: the first schema is 0 and the version names it, one query per dialect
        schema = {**dump(req.view_schema), "schema-id": 0}
        version = dump(req.view_version)
        check_dialects(version)
        history_size(dict(req.properties or {}))
        version.update({"version-id": 1, "schema-id": 0})
        version.setdefault("timestamp-ms", _now_ms())
        metadata = validated({
            "view-uuid": str(uuid.uuid4()), "format-version": 1, "location": location, "schemas": [schema],
            "current-version-id": 1, "versions": [version],
            "version-log": [{"timestamp-ms": version["timestamp-ms"], "version-id": 1}],
            "properties": dict(req.properties or {}),
        })
        meta_loc = metadata_file_location(metadata, None)
        store.write_view_metadata(metadata, meta_loc)

        def execute(conn):
            take_name(conn, "view", ns, req.name, meta_loc)
            return OpResult(200, view_result(meta_loc, metadata))
        return execute

    return await ctx.submit(request, "createView", f"{store.resource_ns(ns)}/views", body, lazy(prepare))


async def load_view(ctx: Context, request: Request, ns: list[str], name: str) -> Response:
    loc = await load_pointer(ctx, request, "view", ns, name)
    if isinstance(loc, Response):
        return loc
    etag = etag_of(loc)
    if (unchanged := not_modified(request, etag)) is not None:
        return unchanged
    return JSONResponse(view_result(loc, await run_in_threadpool(store.read_view_metadata, loc)),
                        headers={"ETag": etag})


async def replace_view(ctx: Context, request: Request, ns: list[str], name: str, body: bytes) -> Response:
    def prepare(rconn):
        data = parse_object(body)
        if data.get("identifier") is not None:
            check_identifier(data["identifier"])
        requirements: Any = data.get("requirements") or []
        updates: Any = data.get("updates")
        if not isinstance(requirements, list) or not isinstance(updates, list):
            raise bad_request("Invalid CommitViewRequest: requirements and updates must be arrays")
        base_loc = store.view_pointer(rconn, ns, name)
        if base_loc is None:
            raise no_view(ns, name)
        base = store.read_view_metadata(base_loc)
        for req in requirements:
            if not isinstance(req, dict) or req.get("type") != "assert-view-uuid":
                raise bad_request(f"Unknown view requirement: {req!r}")
            if str(req.get("uuid")).lower() != str(base.view_uuid).lower():
                raise commit_failed(f"Requirement failed: view UUID does not match: expected {base.view_uuid} "
                                    f"!= {req.get('uuid')}")
        metadata = validated(apply_view_updates(dump(base), updates, ctx.commits.view_version_made_current()))
        new_loc = metadata_file_location(metadata, base_loc)
        store.write_view_metadata(metadata, new_loc)

        def execute(conn):
            if not store.swap_pointer(conn, "view", ns, name, base_loc, new_loc):
                current = store.view_pointer(conn, ns, name)
                if current is None:
                    raise no_view(ns, name)
                raise commit_failed(f"Requirement failed: concurrent commit: view metadata changed to {current}")
            return OpResult(200, view_result(new_loc, metadata))
        return execute

    return await ctx.submit(request, "replaceView", view_resource(ns, name), body, lazy(prepare))


async def drop_view(ctx: Context, request: Request, ns: list[str], name: str, body: bytes) -> Response:
    dropped: dict[str, str] = {}

    def execute(conn):
        location = store.view_pointer(conn, ns, name)
        if location is None or not store.delete_pointer(conn, "view", ns, name):
            raise no_view(ns, name)
        dropped["location"] = location
        return OpResult(204)

    def committed():
        dropped["committed"] = dropped["location"]

    response = await ctx.submit(request, "dropView", view_resource(ns, name), body, execute, on_commit=committed)
    if dropped.get("committed") and ctx.commits.drop_deletes_metadata():   # as Iceberg's own catalogs do
        await run_in_threadpool(_delete_quietly, dropped["committed"])
    return response


def _delete_quietly(location: str) -> None:
    """Delete a dropped view's metadata file unless the view sets gc.enabled=false (Java's
    CatalogUtil.dropViewMetadata keeps it then, so it can be registered again)."""
    try:
        properties = store.read_view_metadata(location).properties or {}
        if str(properties.get("gc.enabled", "true")).strip().lower() == "false":
            return
        store.file_io(location).delete(location)
    except Exception:  # noqa: BLE001 - already gone
        pass


async def register_view(ctx: Context, request: Request, ns: list[str], body: bytes) -> Response:
    def prepare(_conn):
        req = parse_model(RegisterViewRequest, parse_object(body))
        check_name(req.name, "view")
        try:
            metadata = store.read_view_metadata(req.metadata_location)
        except Exception as exc:  # noqa: BLE001
            raise bad_request(f"Cannot read view metadata at {req.metadata_location}: {exc}") from None

        def execute(conn):
            take_name(conn, "view", ns, req.name, req.metadata_location)
            return OpResult(200, view_result(req.metadata_location, metadata))
        return execute

    return await ctx.submit(request, "registerView", f"{store.resource_ns(ns)}/register-view", body,
                            lazy(prepare))


__all__ = ["CatalogError", "create_view", "load_view", "replace_view", "drop_view", "register_view", "list_views"]
