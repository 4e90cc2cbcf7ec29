"""The endpoint catalog: every mutation the kit exercises, how to build it and how to count its effect.

One `Endpoint` per mutation operation (operationId of the OpenAPI spec). ``endpoint.prepare(ctx)`` creates
the prerequisites under the run namespace (fresh, unique names per case) and returns a `Case`:

``request``       the mutation (method, path relative to ``/v1/{prefix}``, JSON body)
``alternative``   same operation and resource, another payload (None when the operation has no payload)
``conflicting``   a variant answered with a deterministic terminal 4xx, and ``clear_conflict()`` that removes
                  the cause so that a re-execution of it would now succeed (``conflict_executed()`` tells
                  from state whether it was executed; meaningful after ``clear_conflict()``)
``observe()``     the relevant catalog state, read over HTTP (never from the mutation's responses)
``executions(before, after)``      how many times the request's effect became visible between two states
``alt_executions(before, after)``  the same for the alternative payload
``interfere()``   an intervening change that makes a re-execution visible in state (e.g. after a create the
                  resource is dropped again: a replay leaves it absent, a re-execution brings it back)
``identity(exchange)`` the identity fields of a response (table-uuid, view-uuid, namespace, plan-id...) used
                  to call two bodies equivalent
``blind``         None, or why a re-execution may leave no trace in state (cancelling a cancelled plan):
                  then only the target's execution counters can tell a replay from a re-execution, and
                  checks without them say so (inconclusive) instead of passing
``copy_blind``    None, or why an execution by a copy whose answer the kit never reads (the network sent
                  the request twice) leaves no trace the kit can see (a plan made by the copy, when the
                  target offers no plan listing); the network checks then need counters too
``reexecutable``  whether the request, sent again after ``interfere()``, succeeds and counts once more
                  (False when the effect cannot be undone: a cancelled plan, a fetched plan task)
``learned(ex)``   an answer the client never got but the interposer read (a lost answer, a network copy's):
                  what it names joins the observed state (planTableScan: its plan-id)

Scan planning (planTableScan, cancelPlanning, fetchScanTasks): a plan is addressable only by the plan-id its
answer carries. When the target has the reference control API, ``GET /_ctk/plans`` lists a table's plans
and is the state; otherwise the kit counts the plans whose ids it has seen in answers to its own requests
(``client.exchanges``) and confirms each with fetchPlanningResult - a plan made by an attempt whose answer
never reached the kit (lost, or a copy sent by the network) is then invisible, so such checks end
inconclusive ("not visible") rather than passing on the reference's say-so. fetchScanTasks is observed
through the plan tasks fetchPlanningResult still lists (a target that does not retire fetched plan tasks
leaves its effect invisible: inconclusive).

Prerequisite failures raise `PrerequisiteError` (checks turn it into an inconclusive verdict).
The context passed to ``prepare`` needs ``.client`` (a `CatalogClient`), ``.namespace`` (the run
namespace, a tuple) and ``.unique(stem)`` (a fresh name); `ctk.checks.context.CheckContext` provides them.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol
from urllib.parse import quote

from ctk.client.transport import CatalogClient, ns_path, table_path, view_path
from ctk.client.errors import PrerequisiteError
from ctk.core.exchange import Exchange

MARK = "ctk.mark"            # property the kit sets to make an update visible in state
REMOVED = "ctk.removed"      # property updateProperties removes (present before, and again after interfering)


class CaseContext(Protocol):
    """What a case builder takes (`ctk.checks.context.CheckContext` is one): the client every request of the
    case goes through (its target's URL, prefix and headers), the run namespace the case creates its resources
    under, and fresh names."""

    client: CatalogClient
    namespace: tuple[str, ...]

    def unique(self, stem: str) -> str: ...


class AdvertisedEndpoints(Protocol):
    """What an endpoint needs of discovery (`ctk.client.discovery.Discovery` is one): the endpoints the target
    advertised in /v1/config (None: none advertised, the spec's default set applies)."""

    endpoints: set[str] | None

    def supports(self, method: str, template: str) -> bool: ...


@dataclass
class Req:
    method: str
    path: str                              # relative to /v1/{prefix}
    json: Any = None
    params: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.method} {self.path}"


# --------------------------------------------------------------------------------------------------------
# Bodies (pyiceberg models where pyiceberg has them)
# --------------------------------------------------------------------------------------------------------

def _schema(extra: bool = False) -> dict:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    fields = [NestedField(1, "id", LongType(), required=False), NestedField(2, "data", StringType(), required=False)]
    if extra:
        fields.append(NestedField(3, "extra", StringType(), required=False))
    return Schema(*fields, schema_id=0).model_dump(mode="json", by_alias=True)


def create_table_body(name: str, properties: dict[str, str] | None = None) -> dict:
    """A CreateTableRequest as the Iceberg Java client sends it: no location (the catalog places the table),
    the schema with its id and identifier-field-ids, the unpartitioned spec, the unsorted order, stage-create
    false. Some catalogs require every one of these fields (they answered 500 to the short form)."""
    return {"name": name, "schema": _schema(), "partition-spec": {"spec-id": 0, "fields": []},
            "write-order": {"order-id": 0, "fields": []}, "stage-create": False,
            "properties": dict(properties or {})}


def set_properties_update(updates: dict[str, str]) -> dict:
    from pyiceberg.table.update import SetPropertiesUpdate

    return SetPropertiesUpdate(updates=updates).model_dump(mode="json", by_alias=True)


def view_version(namespace: tuple[str, ...], sql: str) -> dict:
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

    v = ViewVersion(**{"version-id": 1, "schema-id": 0, "timestamp-ms": int(time.time() * 1000),
                       "summary": {"engine-name": "ctk"}, "default-namespace": list(namespace),
                       "representations": [ViewRepresentation(SQLViewRepresentation(type="sql", sql=sql,
                                                                                    dialect="spark"))]})
    return v.model_dump(mode="json", by_alias=True, exclude_none=True)


def create_view_body(namespace: tuple[str, ...], name: str, sql: str = "SELECT 1 AS id",
                     properties: dict[str, str] | None = None) -> dict:
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, NestedField

    schema = Schema(NestedField(1, "id", IntegerType(), required=False), schema_id=0)
    return {"name": name, "schema": schema.model_dump(mode="json", by_alias=True),
            "view-version": view_version(namespace, sql), "properties": dict(properties or {})}


def ident(namespace: tuple[str, ...], name: str) -> dict:
    return {"namespace": list(namespace), "name": name}


# --------------------------------------------------------------------------------------------------------
# Catalog helper: prerequisites and state readers over plain HTTP (no idempotency keys)
# --------------------------------------------------------------------------------------------------------

class Catalog:
    def __init__(self, client: CatalogClient):
        self.client = client

    def _do(self, method: str, path: str, json: Any = None, ok: tuple[int, ...] = (200, 201, 204),
            label: str = "setup", params: dict | None = None) -> Exchange:
        ex = self.client.request(method, path, json=json, label=label, params=params)
        if ex.status not in ok:
            raise PrerequisiteError(f"{label}: {method} {path} answered "
                                    f"{ex.status if ex.status is not None else ex.error}", ex)
        return ex

    # namespaces
    def create_namespace(self, ns: tuple[str, ...], properties: dict | None = None) -> Exchange:
        return self._do("POST", "namespaces", {"namespace": list(ns), "properties": dict(properties or {})},
                        label=f"setup: create namespace {'.'.join(ns)}")

    def drop_namespace(self, ns: tuple[str, ...], label: str = "setup") -> Exchange:
        return self._do("DELETE", f"namespaces/{ns_path(ns)}", ok=(200, 204, 404),
                        label=f"{label}: drop namespace {'.'.join(ns)}")

    def set_namespace_property(self, ns: tuple[str, ...], key: str, value: str, label: str) -> Exchange:
        return self._do("POST", f"namespaces/{ns_path(ns)}/properties",
                        {"removals": [], "updates": {key: value}}, label=label)

    def namespace_state(self, ns: tuple[str, ...]) -> dict | None:
        ex = self.client.request("GET", f"namespaces/{ns_path(ns)}", label="observe: load namespace")
        if ex.status == 404:
            return None
        body = ex.json()
        if ex.status != 200 or not isinstance(body, dict):
            raise PrerequisiteError(f"observe: GET namespace answered {ex.status or ex.error}", ex)
        return {"properties": dict(body.get("properties") or {})}

    # tables
    def create_table(self, ns: tuple[str, ...], name: str, properties: dict | None = None) -> dict:
        try:
            ex = self._do("POST", f"namespaces/{ns_path(ns)}/tables", create_table_body(name, properties),
                          label=f"setup: create table {name}")
        except PrerequisiteError as exc:
            raise PrerequisiteError(str(exc) + self._placement_hint(ns, exc.exchange), exc.exchange) from None
        return ex.json() or {}

    def _placement_hint(self, ns: tuple[str, ...], ex: Exchange | None) -> str:
        """For a table refused (4xx other than 409) in a top-level run namespace: the option that places the
        run namespace where the catalog allows tables."""
        placement = getattr(self.client, "placement", None)
        if ex is None or ex.status is None or not 400 <= ex.status < 500 or ex.status == 409 or placement is None \
                or placement.parent or tuple(ns[:1]) != tuple(placement.run):
            return ""
        return (" (the run namespace is top level; if the catalog allows tables only inside certain namespaces, "
                "give one with --ctk-parent-namespace)")

    def drop_table(self, ns: tuple[str, ...], name: str, purge: bool, label: str = "setup") -> Exchange:
        return self._do("DELETE", table_path(ns, name), ok=(200, 204, 404), label=f"{label}: drop table {name}",
                        params={"purgeRequested": "true" if purge else "false"})

    def _commit_properties(self, path: str, ns: tuple[str, ...], name: str, updates: dict[str, str],
                           label: str) -> Exchange:
        """A table or view commit without requirements that sets properties."""
        return self._do("POST", path, {"identifier": ident(ns, name), "requirements": [],
                                       "updates": [set_properties_update(updates)]}, label=label)

    def _loaded(self, path: str, what: str, damaged_ok: bool = False) -> dict | None:
        """The load result of a table or view (None for 404); anything but a load result is a PrerequisiteError,
        except that with damaged_ok a 5xx reads as {"damaged": ...}: the catalog still lists the resource but
        cannot load it (its files are gone, say)."""
        ex = self.client.request("GET", path, label=f"observe: load {what}")
        if ex.status == 404:
            return None
        if damaged_ok and ex.status is not None and ex.status >= 500:
            return {"damaged": f"load {what} answered {ex.status}"}
        body = ex.json()
        if ex.status != 200 or not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
            raise PrerequisiteError(f"observe: load {what} answered {ex.status or ex.error}", ex)
        return body

    def commit_table(self, ns: tuple[str, ...], name: str, updates: dict[str, str], label: str) -> Exchange:
        return self._commit_properties(table_path(ns, name), ns, name, updates, label)

    def table_state(self, ns: tuple[str, ...], name: str, damaged_ok: bool = False) -> dict | None:
        body = self._loaded(table_path(ns, name), f"table {name}", damaged_ok)
        if body is None or "damaged" in body:
            return body
        md = body["metadata"]
        return {"uuid": md.get("table-uuid"), "properties": dict(md.get("properties") or {}),
                "metadata_log": len(md.get("metadata-log") or []),
                "metadata_location": body.get("metadata-location")}

    # views
    def create_view(self, ns: tuple[str, ...], name: str, properties: dict | None = None,
                    sql: str = "SELECT 1 AS id") -> dict:
        ex = self._do("POST", f"namespaces/{ns_path(ns)}/views", create_view_body(ns, name, sql, properties),
                      label=f"setup: create view {name}")
        return ex.json() or {}

    def drop_view(self, ns: tuple[str, ...], name: str, label: str = "setup") -> Exchange:
        return self._do("DELETE", view_path(ns, name), ok=(200, 204, 404), label=f"{label}: drop view {name}")

    def commit_view(self, ns: tuple[str, ...], name: str, updates: dict[str, str], label: str) -> Exchange:
        return self._commit_properties(view_path(ns, name), ns, name, updates, label)

    def view_state(self, ns: tuple[str, ...], name: str) -> dict | None:
        body = self._loaded(view_path(ns, name), f"view {name}")
        if body is None:
            return None
        md = body["metadata"]
        return {"uuid": md.get("view-uuid"), "properties": dict(md.get("properties") or {}),
                "versions": len(md.get("versions") or []),
                "metadata_location": body.get("metadata-location")}


# --------------------------------------------------------------------------------------------------------
# State deltas
# --------------------------------------------------------------------------------------------------------

def created(before: dict | None, after: dict | None, require: Callable[[dict], bool] | None = None) -> int:
    """1 when the resource appeared (or was replaced by a new incarnation) between the two states."""
    if after is None:
        return 0
    if require is not None and not require(after):
        return 0
    if before is None:
        return 1
    u = after.get("uuid")
    return 1 if (u is not None and u != before.get("uuid")) else 0


def removed(before: dict | None, after: dict | None) -> int:
    """1 when the resource is gone, or still listed but can no longer be loaded (its files were deleted)."""
    return 1 if (before is not None and "damaged" not in before and (after is None or "damaged" in after)) else 0


def marked(state: dict | None, value: str) -> bool:
    """The resource (a state of the Catalog's readers, None when absent) carries the kit's mark ``value``."""
    return (state or {}).get("properties", {}).get(MARK) == value


def prop_set(before: dict | None, after: dict | None, key: str, value: str) -> int:
    if after is None or after.get("properties", {}).get(key) != value:
        return 0
    if before is not None and before.get("properties", {}).get(key) == value:
        return 0
    return 1


def table_commits(before: dict | None, after: dict | None, key: str, value: str) -> int:
    """Commits visible between two table states: metadata-log growth, at least the property change."""
    seen = prop_set(before, after, key, value)
    if before is not None and after is not None and before.get("uuid") == after.get("uuid"):
        seen = max(seen, after.get("metadata_log", 0) - before.get("metadata_log", 0))
    return seen


def body_identity(ex: Exchange) -> Any:
    """Identity fields of a response: what must be equal for two bodies to count as equivalent."""
    body = ex.json()
    if ex.status is None:
        return ("no response", ex.error and ex.error.split(":", 1)[0])
    if not isinstance(body, dict):
        return (ex.status, None)
    if "error" in body and isinstance(body["error"], dict):
        e = body["error"]
        return (ex.status, "error", e.get("type"), e.get("code"))
    md = body.get("metadata") if isinstance(body.get("metadata"), dict) else None
    if md is not None:
        if "table-uuid" in md:
            return (ex.status, "table", md.get("table-uuid"))
        if "view-uuid" in md:
            return (ex.status, "view", md.get("view-uuid"))
    if "plan-id" in body:
        return (ex.status, "plan", body.get("status"), body.get("plan-id"))
    if "file-scan-tasks" in body or "plan-tasks" in body:
        tasks = body.get("file-scan-tasks") if isinstance(body.get("file-scan-tasks"), list) else []
        files = sorted(str((t.get("data-file") or {}).get("file-path")) for t in tasks if isinstance(t, dict))
        return (ex.status, "scan-tasks", body.get("status"), tuple(files),
                tuple(map(str, body.get("plan-tasks") or ())))
    if "namespace" in body:
        return (ex.status, "namespace", tuple(body.get("namespace") or ()))
    if "updated" in body or "removed" in body:
        return (ex.status, "properties", tuple(sorted(body.get("updated") or [])),
                tuple(sorted(body.get("removed") or [])), tuple(sorted(body.get("missing") or [])))
    return (ex.status, "body", tuple(sorted(body)))


# --------------------------------------------------------------------------------------------------------
# Case and Endpoint
# --------------------------------------------------------------------------------------------------------

@dataclass
class Conflict:
    request: Req
    expect: tuple[int, ...]                       # the 4xx it must get, e.g. (409,)
    clear: Callable[[], None]                     # remove the cause: a re-execution would now succeed
    executed: Callable[[], bool]                  # from state: was it executed (after clear)?
    why: str = ""


# What a case reads of the catalog: named resource states (None: absent), taken before and after a request.
Observed = dict[str, Any]


@dataclass
class Case:
    endpoint: "Endpoint"
    resource: str
    request: Req
    observe: Callable[[], Observed]
    executions: Callable[[Observed, Observed], int]     # (before, after) -> how often the request took effect
    interfere: Callable[[], None]
    alternative: Req | None = None
    alt_executions: Callable[[Observed, Observed], int] | None = None
    conflicting: Conflict | None = None
    identity: Callable[[Exchange], Any] = body_identity
    notes: dict[str, Any] = field(default_factory=dict)
    blind: str | None = None
    copy_blind: str | None = None
    reexecutable: bool = True
    learn: Callable[[Exchange], None] | None = None

    def learned(self, exchange: Exchange) -> None:
        """An answer to the request that the kit's client never got (the interposer read it: a lost answer, a
        copy sent by the network): what it names becomes part of the observed state (a plan-id)."""
        if self.learn is not None:
            self.learn(exchange)

    def clear_conflict(self) -> None:
        if self.conflicting is None:
            raise ValueError(f"{self.endpoint.operation} has no conflicting variant")
        self.conflicting.clear()

    def conflict_executed(self) -> bool:
        assert self.conflicting is not None
        return self.conflicting.executed()

    def send(self, client: CatalogClient, req: Req | None = None, key: str | None = None,
             header_name: str = "Idempotency-Key", label: str | None = None, timeout: float | None = None,
             raw_headers: list[tuple[str, str]] | None = None) -> Exchange:
        r = req or self.request
        return client.request(r.method, r.path, json=r.json, params=r.params, idempotency_key=key,
                              header_name=header_name, label=label or f"{self.endpoint.operation}",
                              timeout=timeout, raw_headers=raw_headers)


@dataclass
class Endpoint:
    operation: str                 # operationId
    method: str
    template: str                  # path template under /v1/{prefix}/
    spec_has_header: bool          # whether the merged spec lists the Idempotency-Key parameter
    success: tuple[int, ...]       # statuses of success
    builder: Callable[[CaseContext, "Endpoint"], Case]
    requires: tuple[tuple[str, str], ...] = ()   # other endpoints (method, template) the case needs
    has_payload: bool = True

    @property
    def entry(self) -> str:
        """The `/v1/config` endpoints-list entry that gates it."""
        return f"{self.method} /v1/{{prefix}}/{self.template}"

    def supported(self, discovery: AdvertisedEndpoints | None) -> tuple[bool, str]:
        """(True, "") or (False, reason) from the advertised endpoints (default set when none advertised)."""
        if discovery is None:
            return True, ""
        needed = [(self.method, self.template)] + list(self.requires)
        for m, t in needed:
            if not discovery.supports(m, t):
                what = "the endpoints list" if discovery.endpoints is not None else \
                    "the default endpoint set (the target advertises no endpoints list)"
                tail = "" if (m, t) == (self.method, self.template) else f" (needed by {self.operation})"
                return False, f"{m} /v1/{{prefix}}/{t} is not in {what}{tail}"
        return True, ""

    def prepare(self, ctx: CaseContext) -> Case:
        return self.builder(ctx, self)

    def __repr__(self) -> str:
        return f"Endpoint({self.operation}: {self.method} {self.template})"


# --------------------------------------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------------------------------------

def _child(ctx: CaseContext, stem: str) -> tuple[str, ...]:
    """A fresh namespace for a case: a child of the run namespace, or - on a target that does not nest
    namespaces (``client.placement.nested`` False) - a run-unique sibling registered for cleanup."""
    placement = getattr(ctx.client, "placement", None)
    if placement is not None and tuple(placement.run) == tuple(ctx.namespace):
        return placement.child(ctx.unique(stem))
    return tuple(ctx.namespace) + (ctx.unique(stem),)


def _create_namespace(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = _child(ctx, "ns")
    existing = _child(ctx, "nsx")
    cat.create_namespace(existing)

    def observe():
        return {"ns": cat.namespace_state(ns), "existing": cat.namespace_state(existing)}

    return Case(
        ep, f"namespace {'.'.join(ns)}",
        Req("POST", "namespaces", {"namespace": list(ns), "properties": {MARK: "first"}}),
        observe=observe,
        executions=lambda b, a: created(b["ns"], a["ns"], lambda s: s["properties"].get(MARK) == "first"),
        interfere=lambda: cat.drop_namespace(ns, "interfere"),
        alternative=Req("POST", "namespaces", {"namespace": list(ns), "properties": {MARK: "alternative"}}),
        alt_executions=lambda b, a: created(b["ns"], a["ns"],
                                            lambda s: s["properties"].get(MARK) == "alternative"),
        conflicting=Conflict(
            Req("POST", "namespaces", {"namespace": list(existing), "properties": {MARK: "conflicting"}}), (409,),
            clear=lambda: cat.drop_namespace(existing, "clear conflict"),
            executed=lambda: marked(cat.namespace_state(existing), "conflicting"),
            why="the namespace already exists"),
    )


def _drop_namespace(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = _child(ctx, "ns")
    missing = _child(ctx, "nsm")
    cat.create_namespace(ns)

    def observe():
        return {"ns": cat.namespace_state(ns)}

    return Case(
        ep, f"namespace {'.'.join(ns)}",
        Req("DELETE", f"namespaces/{ns_path(ns)}"),
        observe=observe,
        executions=lambda b, a: removed(b["ns"], a["ns"]),
        interfere=lambda: cat.create_namespace(ns),
        conflicting=Conflict(
            Req("DELETE", f"namespaces/{ns_path(missing)}"), (404,),
            clear=lambda: cat.create_namespace(missing),
            executed=lambda: cat.namespace_state(missing) is None,
            why="the namespace does not exist"),
    )


def _update_properties(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = _child(ctx, "ns")
    missing = _child(ctx, "nsm")
    cat.create_namespace(ns, {MARK: "initial", REMOVED: "present"})

    def body(v):
        # a removal too: its answer names the key under "removed" when it was there and under "missing" when
        # it was not, so a second execution shows in the answer (without an interfering change in between)
        return {"removals": [REMOVED], "updates": {MARK: v}}

    def interfere():
        # the kit's property changed and the removed one back: a re-execution sets the one, removes the other
        cat._do("POST", f"namespaces/{ns_path(ns)}/properties",
                {"removals": [], "updates": {MARK: "interfered", REMOVED: "present"}}, ok=(200,), label="interfere")

    return Case(
        ep, f"namespace {'.'.join(ns)}",
        Req("POST", f"namespaces/{ns_path(ns)}/properties", body("first")),
        observe=lambda: {"ns": cat.namespace_state(ns)},
        executions=lambda b, a: prop_set(b["ns"], a["ns"], MARK, "first"),
        interfere=interfere,
        alternative=Req("POST", f"namespaces/{ns_path(ns)}/properties", body("alternative")),
        alt_executions=lambda b, a: prop_set(b["ns"], a["ns"], MARK, "alternative"),
        conflicting=Conflict(
            Req("POST", f"namespaces/{ns_path(missing)}/properties", body("conflicting")), (404,),
            clear=lambda: cat.create_namespace(missing),
            executed=lambda: marked(cat.namespace_state(missing), "conflicting"),
            why="the namespace does not exist"),
    )


def _create_table(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, existing = ctx.unique("t"), ctx.unique("tx")
    cat.create_table(ns, existing)
    path = f"namespaces/{ns_path(ns)}/tables"

    def observe():
        return {"t": cat.table_state(ns, name), "existing": cat.table_state(ns, existing)}

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        Req("POST", path, create_table_body(name, {MARK: "first"})),
        observe=observe,
        executions=lambda b, a: created(b["t"], a["t"]),
        interfere=lambda: cat.drop_table(ns, name, purge=True, label="interfere"),
        alternative=Req("POST", path, create_table_body(name, {MARK: "alternative"})),
        alt_executions=lambda b, a: created(b["t"], a["t"], lambda s: s["properties"].get(MARK) == "alternative"),
        conflicting=Conflict(
            Req("POST", path, create_table_body(existing, {MARK: "conflicting"})), (409,),
            clear=lambda: cat.drop_table(ns, existing, purge=True, label="clear conflict"),
            executed=lambda: marked(cat.table_state(ns, existing), "conflicting"),
            why="the table already exists"),
    )


def _register_table(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    src1, src2, name, existing = ctx.unique("src"), ctx.unique("src"), ctx.unique("t"), ctx.unique("tx")
    loc1 = cat.create_table(ns, src1, {MARK: "source-1"}).get("metadata-location")
    loc2 = cat.create_table(ns, src2, {MARK: "source-2"}).get("metadata-location")
    if not loc1 or not loc2:
        raise PrerequisiteError("createTable answered no metadata-location to register")
    cat.drop_table(ns, src1, purge=False)
    cat.drop_table(ns, src2, purge=False)
    cat.create_table(ns, existing)
    path = f"namespaces/{ns_path(ns)}/register"

    def observe():
        return {"t": cat.table_state(ns, name), "existing": cat.table_state(ns, existing)}

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        Req("POST", path, {"name": name, "metadata-location": loc1}),
        observe=observe,
        executions=lambda b, a: created(b["t"], a["t"]),
        # drop without purge: the metadata file stays, so a re-execution would succeed and be visible
        interfere=lambda: cat.drop_table(ns, name, purge=False, label="interfere"),
        alternative=Req("POST", path, {"name": name, "metadata-location": loc2}),
        alt_executions=lambda b, a: created(b["t"], a["t"], lambda s: s["properties"].get(MARK) == "source-2"),
        conflicting=Conflict(
            Req("POST", path, {"name": existing, "metadata-location": loc1}), (409,),
            clear=lambda: cat.drop_table(ns, existing, purge=False, label="clear conflict"),
            executed=lambda: marked(cat.table_state(ns, existing), "source-1"),
            why="a table with that name already exists"),
        notes={"metadata-location": loc1},
    )


def _update_table(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("t"), ctx.unique("tm")
    cat.create_table(ns, name, {MARK: "initial"})

    def body(n, v):
        # no requirements: a re-execution applies again and shows as another commit
        return {"identifier": ident(ns, n), "requirements": [], "updates": [set_properties_update({MARK: v})]}

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        Req("POST", table_path(ns, name), body(name, "first")),
        observe=lambda: {"t": cat.table_state(ns, name)},
        executions=lambda b, a: table_commits(b["t"], a["t"], MARK, "first"),
        interfere=lambda: cat.commit_table(ns, name, {MARK: "interfered"}, "interfere"),
        alternative=Req("POST", table_path(ns, name), body(name, "alternative")),
        alt_executions=lambda b, a: prop_set(b["t"], a["t"], MARK, "alternative"),
        conflicting=Conflict(
            Req("POST", table_path(ns, missing), body(missing, "conflicting")), (404,),
            clear=lambda: cat.create_table(ns, missing),
            executed=lambda: marked(cat.table_state(ns, missing), "conflicting"),
            why="the table does not exist"),
    )


def _drop_like_table(ctx: CaseContext, ep: Endpoint, suffix: str, method: str, params: dict | None = None) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("t"), ctx.unique("tm")
    cat.create_table(ns, name)

    def req(n):
        return Req(method, table_path(ns, n) + suffix, params=params)

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        req(name),
        observe=lambda: {"t": cat.table_state(ns, name, damaged_ok=True)},
        executions=lambda b, a: removed(b["t"], a["t"]),
        # a table with the same name again: a re-execution would remove the new one, or (a purge run again)
        # delete its files, so that it is listed but cannot be loaded
        interfere=lambda: cat.create_table(ns, name),
        conflicting=Conflict(
            req(missing), (404,),
            clear=lambda: cat.create_table(ns, missing),
            executed=lambda: cat.table_state(ns, missing) is None,
            why="the table does not exist"),
    )


def _drop_table(ctx: CaseContext, ep: Endpoint) -> Case:
    # with purge: the drop whose side effects reach beyond the catalog's database, the harder one to replay
    return _drop_like_table(ctx, ep, "", "DELETE", {"purgeRequested": "true"})


def _unregister_table(ctx: CaseContext, ep: Endpoint) -> Case:
    return _drop_like_table(ctx, ep, "/unregister", "POST")


def _rename(ctx: CaseContext, ep: Endpoint, kind: str) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    src, dst, dst2, csrc, cdst = (ctx.unique(s) for s in ("src", "dst", "dsta", "csrc", "cdst"))
    if kind == "table":
        make, state, path = (lambda n: cat.create_table(ns, n)), (lambda n: cat.table_state(ns, n)), "tables/rename"
    else:
        make, state, path = (lambda n: cat.create_view(ns, n)), (lambda n: cat.view_state(ns, n)), "views/rename"
    for n in (src, csrc, cdst):
        make(n)

    def body(s, d):
        return {"source": ident(ns, s), "destination": ident(ns, d)}

    def rename_back():
        ex = ctx.client.request("POST", path, json=body(dst, src), label="interfere: rename back")
        if ex.status not in (200, 204):
            raise PrerequisiteError(f"interfere: rename back answered {ex.status or ex.error}", ex)

    def clear():
        (cat.drop_table(ns, cdst, purge=True, label="clear conflict") if kind == "table"
         else cat.drop_view(ns, cdst, label="clear conflict"))

    def moved(b, a, d):
        return 1 if (b[d] is None and a[d] is not None and a["src"] is None) else 0

    return Case(
        ep, f"{kind} {'.'.join(ns)}.{src}",
        Req("POST", path, body(src, dst)),
        observe=lambda: {"src": state(src), "dst": state(dst), "dst2": state(dst2)},
        executions=lambda b, a: moved(b, a, "dst"),
        interfere=rename_back,
        alternative=Req("POST", path, body(src, dst2)),
        alt_executions=lambda b, a: moved(b, a, "dst2"),
        conflicting=Conflict(
            Req("POST", path, body(csrc, cdst)), (409,), clear=clear,
            executed=lambda: state(csrc) is None and state(cdst) is not None,
            why=f"the destination {kind} already exists"),
    )


def _rename_table(ctx: CaseContext, ep: Endpoint) -> Case:
    return _rename(ctx, ep, "table")


def _rename_view(ctx: CaseContext, ep: Endpoint) -> Case:
    return _rename(ctx, ep, "view")


def _commit_transaction(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    t1, t2, missing = ctx.unique("t"), ctx.unique("t"), ctx.unique("tm")
    cat.create_table(ns, t1, {MARK: "initial"})
    cat.create_table(ns, t2, {MARK: "initial"})

    def change(n, v):
        return {"identifier": ident(ns, n), "requirements": [], "updates": [set_properties_update({MARK: v})]}

    def body(v, names=(t1, t2)):
        return {"table-changes": [change(n, v) for n in names]}

    def observe():
        return {"t1": cat.table_state(ns, t1), "t2": cat.table_state(ns, t2)}

    def count(b, a, v):
        return min(table_commits(b["t1"], a["t1"], MARK, v), table_commits(b["t2"], a["t2"], MARK, v)) \
            if v == "first" else min(prop_set(b["t1"], a["t1"], MARK, v), prop_set(b["t2"], a["t2"], MARK, v))

    def interfere():
        cat.commit_table(ns, t1, {MARK: "interfered"}, "interfere")
        cat.commit_table(ns, t2, {MARK: "interfered"}, "interfere")

    return Case(
        ep, f"tables {'.'.join(ns)}.{t1}, {t2}",
        Req("POST", "transactions/commit", body("first")),
        observe=observe,
        executions=lambda b, a: count(b, a, "first"),
        interfere=interfere,
        alternative=Req("POST", "transactions/commit", body("alternative")),
        alt_executions=lambda b, a: count(b, a, "alternative"),
        conflicting=Conflict(
            Req("POST", "transactions/commit", body("conflicting", (t1, missing))), (404,),
            clear=lambda: cat.create_table(ns, missing),
            executed=lambda: marked(cat.table_state(ns, t1), "conflicting"),
            why="one table of the transaction does not exist"),
    )


def _create_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, existing = ctx.unique("v"), ctx.unique("vx")
    cat.create_view(ns, existing)
    path = f"namespaces/{ns_path(ns)}/views"
    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("POST", path, create_view_body(ns, name, properties={MARK: "first"})),
        observe=lambda: {"v": cat.view_state(ns, name), "existing": cat.view_state(ns, existing)},
        executions=lambda b, a: created(b["v"], a["v"]),
        interfere=lambda: cat.drop_view(ns, name, "interfere"),
        alternative=Req("POST", path, create_view_body(ns, name, "SELECT 2 AS id", {MARK: "alternative"})),
        alt_executions=lambda b, a: created(b["v"], a["v"], lambda s: s["properties"].get(MARK) == "alternative"),
        conflicting=Conflict(
            Req("POST", path, create_view_body(ns, existing, properties={MARK: "conflicting"})), (409,),
            clear=lambda: cat.drop_view(ns, existing, "clear conflict"),
            executed=lambda: marked(cat.view_state(ns, existing), "conflicting"),
            why="the view already exists"),
    )


def _replace_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("v"), ctx.unique("vm")
    cat.create_view(ns, name, {MARK: "initial"})

    def body(n, v, sql):
        # a new view version made current, plus a property: a re-execution adds another version
        return {"identifier": ident(ns, n), "requirements": [],
                "updates": [{"action": "add-view-version", "view-version": view_version(ns, sql)},
                            {"action": "set-current-view-version", "view-version-id": -1},
                            set_properties_update({MARK: v})]}

    def count(b, a, v):
        seen = prop_set(b["v"], a["v"], MARK, v)
        if b["v"] is not None and a["v"] is not None and b["v"]["uuid"] == a["v"]["uuid"]:
            seen = max(seen, a["v"]["versions"] - b["v"]["versions"])
        return seen

    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("POST", view_path(ns, name), body(name, "first", "SELECT 10 AS id")),
        observe=lambda: {"v": cat.view_state(ns, name)},
        executions=lambda b, a: count(b, a, "first"),
        interfere=lambda: cat.commit_view(ns, name, {MARK: "interfered"}, "interfere"),
        alternative=Req("POST", view_path(ns, name), body(name, "alternative", "SELECT 20 AS id")),
        alt_executions=lambda b, a: prop_set(b["v"], a["v"], MARK, "alternative"),
        conflicting=Conflict(
            Req("POST", view_path(ns, missing), body(missing, "conflicting", "SELECT 30 AS id")), (404,),
            clear=lambda: cat.create_view(ns, missing),
            executed=lambda: marked(cat.view_state(ns, missing), "conflicting"),
            why="the view does not exist"),
    )


def _drop_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("v"), ctx.unique("vm")
    cat.create_view(ns, name)
    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("DELETE", view_path(ns, name)),
        observe=lambda: {"v": cat.view_state(ns, name)},
        executions=lambda b, a: removed(b["v"], a["v"]),
        interfere=lambda: cat.create_view(ns, name),
        conflicting=Conflict(
            Req("DELETE", view_path(ns, missing)), (404,),
            clear=lambda: cat.create_view(ns, missing),
            executed=lambda: cat.view_state(ns, missing) is None,
            why="the view does not exist"),
    )


def _register_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    src1, src2, name, existing = ctx.unique("vs"), ctx.unique("vs"), ctx.unique("v"), ctx.unique("vx")
    loc1 = cat.create_view(ns, src1, {MARK: "source-1"}).get("metadata-location")
    loc2 = cat.create_view(ns, src2, {MARK: "source-2"}, sql="SELECT 2 AS id").get("metadata-location")
    if not loc1 or not loc2:
        raise PrerequisiteError("createView answered no metadata-location to register")
    cat.drop_view(ns, src1)
    cat.drop_view(ns, src2)
    cat.create_view(ns, existing)
    path = f"namespaces/{ns_path(ns)}/register-view"
    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("POST", path, {"name": name, "metadata-location": loc1}),
        observe=lambda: {"v": cat.view_state(ns, name), "existing": cat.view_state(ns, existing)},
        executions=lambda b, a: created(b["v"], a["v"]),
        interfere=lambda: cat.drop_view(ns, name, "interfere"),
        alternative=Req("POST", path, {"name": name, "metadata-location": loc2}),
        alt_executions=lambda b, a: created(b["v"], a["v"], lambda s: s["properties"].get(MARK) == "source-2"),
        conflicting=Conflict(
            Req("POST", path, {"name": existing, "metadata-location": loc1}), (409,),
            clear=lambda: cat.drop_view(ns, existing, "clear conflict"),
            executed=lambda: marked(cat.view_state(ns, existing), "source-1"),
            why="a view with that name already exists"),
    )


# ---------------------------------------------------------------------------------------------- scan planning

class Plans:
    """The plans of one table, as far as the kit can see them (see the module docstring)."""

    def __init__(self, client: CatalogClient, ns: tuple[str, ...], name: str, listed: bool | None = None):
        self.client, self.ns, self.name = client, ns, name
        self.path = table_path(ns, name) + "/plan"
        self.mark = len(client.exchanges)
        self.listed = self._listing() is not None if listed is None else listed
        self.learned: list[str] = []       # plan-ids from answers the interposer read for the kit

    def learn(self, ex: Exchange) -> None:
        body = ex.json()
        pid = body.get("plan-id") if ex.status == 200 and isinstance(body, dict) else None
        if isinstance(pid, str) and pid not in self.learned:
            self.learned.append(pid)

    def _listing(self) -> dict[str, dict] | None:
        ex = self.client.request("GET", "/_ctk/plans", params={"namespace": "\x1f".join(self.ns), "table": self.name},
                                 label="observe: list plans (reference control API)")
        body = ex.json()
        if ex.status != 200 or not isinstance(body, dict) or not isinstance(body.get("plans"), list):
            return None
        return {p["plan-id"]: p for p in body["plans"] if isinstance(p, dict) and "plan-id" in p}

    def seen(self) -> list[str]:
        """Plan ids in answers to the kit's own planTableScan requests on this table."""
        out: list[str] = []
        for ex in self.client.exchanges[self.mark:]:
            if ex.method == "POST" and ex.status == 200 and ex.url.split("?", 1)[0].endswith("/" + self.path):
                body = ex.json()
                pid = body.get("plan-id") if isinstance(body, dict) else None
                if isinstance(pid, str) and pid not in out:
                    out.append(pid)
        return out + [p for p in self.learned if p not in out]

    def status(self, pid: str) -> str | None:
        """fetchPlanningResult's status of a plan, None for 404."""
        ex = self.client.request("GET", f"{self.path}/{quote(pid, safe='')}", label="observe: fetch planning result")
        body = ex.json()
        if ex.status == 404:
            return None
        if ex.status != 200 or not isinstance(body, dict):
            raise PrerequisiteError(f"observe: fetchPlanningResult answered {ex.status or ex.error}", ex)
        return body.get("status")

    def state(self) -> dict[str, str]:
        """plan-id -> status of every plan of the table the kit can see."""
        if self.listed:
            listing = self._listing()
            if listing is None:
                raise PrerequisiteError("observe: GET /_ctk/plans stopped answering")
            return {pid: p.get("status") for pid, p in listing.items()}
        out = {}
        for pid in self.seen():
            st = self.status(pid)
            if st is not None:
                out[pid] = st
        return out


def new_plans(before: dict[str, str], after: dict[str, str]) -> int:
    return len(set(after) - set(before))


def _plan(cat: Catalog, ns: tuple[str, ...], name: str, body: dict | None = None) -> dict:
    """planTableScan (no key) -> its answer, polled with fetchPlanningResult until it is no longer submitted."""
    path = table_path(ns, name) + "/plan"
    doc = cat._do("POST", path, body if body is not None else {}, ok=(200,),
                  label=f"setup: plan a scan of {name}").json()
    if not isinstance(doc, dict) or not isinstance(doc.get("plan-id"), str):
        raise PrerequisiteError(f"setup: planTableScan of {name} answered no plan-id ({str(doc)[:200]}), so the "
                                "plan cannot be addressed")
    deadline = time.monotonic() + 10
    while doc.get("status") == "submitted" and time.monotonic() < deadline:
        time.sleep(0.05)
        got = cat._do("GET", f"{path}/{quote(doc['plan-id'], safe='')}", ok=(200,),
                      label="setup: fetch planning result").json() or {}
        doc = {**got, "plan-id": doc["plan-id"]}
    return doc


def _append_file(client: CatalogClient, ns: tuple[str, ...], name: str, ids: list[int]) -> None:
    """Append one data file (rows of the kit's schema) with pyiceberg, committed over HTTP by the kit."""
    import pyarrow as pa
    from pyiceberg.catalog.noop import NoopCatalog
    from pyiceberg.table import CommitTableRequest, Table, TableIdentifier
    from pyiceberg.table.metadata import TableMetadataUtil

    from ctk.client.storage import StorageGuardError, settings_for

    loaded = Catalog(client)._loaded(table_path(ns, name), f"table {name}")
    if loaded is None:
        raise PrerequisiteError(f"setup: table {name} vanished before its data was written")
    try:
        metadata = TableMetadataUtil.parse_obj(loaded["metadata"])
        io = settings_for(client, loaded, metadata.location).file_io(metadata.location, f"table {name}'s files")
        table = Table((*ns, name), metadata, loaded.get("metadata-location") or "", io, NoopCatalog("ctk-noop"))
        txn = table.transaction()
        txn.append(pa.table({"id": pa.array(ids, pa.int64()), "data": pa.array([f"r{i}" for i in ids])}))
        body = CommitTableRequest(identifier=TableIdentifier(namespace=list(ns), name=name),
                                  requirements=txn._requirements, updates=txn._updates).model_dump(mode="json",
                                                                                                   by_alias=True)
    except StorageGuardError:
        raise
    except Exception as exc:  # noqa: BLE001 - storage the kit cannot write to, or a schema it did not expect
        raise PrerequisiteError(f"setup: cannot write a data file to table {name} with pyiceberg: "
                                f"{type(exc).__name__}: {exc}") from None
    Catalog(client)._do("POST", table_path(ns, name), body, ok=(200,), label=f"setup: append a data file to {name}")


def _plan_table_scan(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("t"), ctx.unique("tm")
    cat.create_table(ns, name)
    plans = Plans(ctx.client, ns, name)
    absent = Plans(ctx.client, ns, missing, listed=plans.listed)
    path, mpath = table_path(ns, name) + "/plan", table_path(ns, missing) + "/plan"
    return Case(
        ep, f"plans of table {'.'.join(ns)}.{name}",
        # each execution makes a new plan (a new plan-id): no interference is needed to see a second one
        Req("POST", path, {"select": ["id", "data"]}),
        observe=lambda: {"plans": plans.state()},
        executions=lambda b, a: new_plans(b["plans"], a["plans"]),
        interfere=lambda: None,
        alternative=Req("POST", path, {"select": ["id"]}),
        alt_executions=lambda b, a: new_plans(b["plans"], a["plans"]),
        conflicting=Conflict(
            Req("POST", mpath, {"select": ["id", "data"]}), (404,),
            clear=lambda: cat.create_table(ns, missing),
            executed=lambda: bool(absent.state()),
            why="the table does not exist"),
        copy_blind=None if plans.listed else ("plans are read from the plan-ids in the kit's own answers, so a "
                                              "plan made by a copy whose answer the kit never reads is invisible"),
        learn=plans.learn,
        notes={"plan-state": "control API listing" if plans.listed else "plan-ids seen in answers"},
    )


def _cancel_planning(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name = ctx.unique("t")
    cat.create_table(ns, name)
    pid = _plan(cat, ns, name)["plan-id"]
    plans = Plans(ctx.client, ns, name, listed=False)

    path = f"{table_path(ns, name)}/plan/{quote(pid, safe='')}"

    def cancelled(b, a):
        return 1 if b["p"] not in (None, "cancelled") and a["p"] in (None, "cancelled") else 0

    def interfere():
        # Cancelling a cancelled plan changes nothing, so a re-execution cannot show in state. It can show in
        # the answer: the plan's table is dropped, and a control cancel WITHOUT a key (a re-execution by
        # definition) shows what a re-execution answers now. When that is not a success (404), a keyed retry
        # answered with the original success was replayed, and a re-executed one gets the control's answer.
        cat.drop_table(ns, name, purge=True, label="interfere: drop the plan's table")
        control = ctx.client.request("DELETE", path, label="interfere: control - cancel again without a key "
                                     "(what a re-execution answers now)")
        case.notes["re-execution answers"] = control.status if control.status is not None else control.error
        if control.status is not None and control.status not in ep.success:
            case.blind = None
        else:
            case.blind = (f"cancelling a plan that is already cancelled leaves no trace in state, and on this "
                          f"target a re-execution (a cancel without a key after the plan's table was dropped) "
                          f"answers {control.status or control.error} like the original")

    case = Case(
        ep, f"plan {pid} of table {'.'.join(ns)}.{name}",
        Req("DELETE", path),
        observe=lambda: {"p": plans.status(pid)},
        executions=cancelled,
        interfere=interfere,
        blind="cancelling a plan that is already cancelled leaves no trace in state",
        reexecutable=False,
        notes={"plan-id": pid},
    )
    return case


def _fetch_scan_tasks(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name = ctx.unique("t")
    cat.create_table(ns, name)
    _append_file(ctx.client, ns, name, [1, 2])
    first, second = _plan(cat, ns, name), _plan(cat, ns, name)   # two plans, each with its own plan task
    tokens = [(d.get("plan-tasks") or [None])[0] for d in (first, second)]
    if first.get("status") != "completed" or not all(isinstance(t, str) for t in tokens):
        raise PrerequisiteError(f"the target's plans of a table with a data file carry no plan-tasks (status "
                                f"{first.get('status')!r}, plan-tasks {first.get('plan-tasks')!r}); fetchScanTasks "
                                "cannot be exercised with them")
    plans = Plans(ctx.client, ns, name, listed=False)
    path = table_path(ns, name) + "/tasks"

    def pending(pid):
        ex = ctx.client.request("GET", f"{plans.path}/{quote(pid, safe='')}", label="observe: plan tasks not fetched")
        body = ex.json()
        if ex.status != 200 or not isinstance(body, dict):
            raise PrerequisiteError(f"observe: fetchPlanningResult answered {ex.status or ex.error}", ex)
        return list(body.get("plan-tasks") or [])

    def fetched(b, a, key, token):
        return 1 if token in b[key] and token not in a[key] else 0

    return Case(
        ep, f"plan task {tokens[0]} of table {'.'.join(ns)}.{name}",
        Req("POST", path, {"plan-task": tokens[0]}),
        observe=lambda: {"p1": pending(first["plan-id"]), "p2": pending(second["plan-id"])},
        executions=lambda b, a: fetched(b, a, "p1", tokens[0]),
        interfere=lambda: None,
        alternative=Req("POST", path, {"plan-task": tokens[1]}),
        alt_executions=lambda b, a: fetched(b, a, "p2", tokens[1]),
        reexecutable=False,
        notes={"plan-ids": [first["plan-id"], second["plan-id"]]},
    )


NS = "namespaces"
NS_ONE = "namespaces/{namespace}"
TABLES = "namespaces/{namespace}/tables"
TABLE = "namespaces/{namespace}/tables/{table}"
VIEWS = "namespaces/{namespace}/views"
VIEW = "namespaces/{namespace}/views/{view}"
PLAN = TABLE + "/plan"
PLAN_ONE = TABLE + "/plan/{plan-id}"

_T = (("POST", TABLES), ("GET", TABLE))
_V = (("POST", VIEWS), ("GET", VIEW))

ENDPOINTS: dict[str, Endpoint] = {e.operation: e for e in [
    Endpoint("createNamespace", "POST", NS, True, (200,), _create_namespace,
             (("GET", NS_ONE), ("DELETE", NS_ONE))),
    Endpoint("dropNamespace", "DELETE", NS_ONE, True, (204, 200), _drop_namespace,
             (("POST", NS), ("GET", NS_ONE)), has_payload=False),
    Endpoint("updateProperties", "POST", NS_ONE + "/properties", True, (200,), _update_properties,
             (("POST", NS), ("GET", NS_ONE))),
    Endpoint("createTable", "POST", TABLES, True, (200,), _create_table, (("GET", TABLE), ("DELETE", TABLE))),
    Endpoint("registerTable", "POST", "namespaces/{namespace}/register", True, (200,), _register_table,
             _T + (("DELETE", TABLE),)),
    Endpoint("updateTable", "POST", TABLE, True, (200,), _update_table, _T),
    Endpoint("dropTable", "DELETE", TABLE, True, (204, 200), _drop_table, _T, has_payload=False),
    Endpoint("unregisterTable", "POST", TABLE + "/unregister", True, (200, 204), _unregister_table, _T,
             has_payload=False),
    Endpoint("renameTable", "POST", "tables/rename", True, (204, 200), _rename_table, _T + (("DELETE", TABLE),)),
    Endpoint("commitTransaction", "POST", "transactions/commit", True, (204, 200), _commit_transaction,
             _T + (("POST", TABLE),)),
    Endpoint("createView", "POST", VIEWS, False, (200,), _create_view, (("GET", VIEW), ("DELETE", VIEW))),
    Endpoint("replaceView", "POST", VIEW, True, (200,), _replace_view, _V),
    Endpoint("dropView", "DELETE", VIEW, True, (204, 200), _drop_view, _V, has_payload=False),
    Endpoint("renameView", "POST", "views/rename", True, (204, 200), _rename_view, _V + (("DELETE", VIEW),)),
    Endpoint("registerView", "POST", "namespaces/{namespace}/register-view", True, (200,), _register_view,
             _V + (("DELETE", VIEW),)),
    Endpoint("planTableScan", "POST", PLAN, True, (200,), _plan_table_scan, (("POST", TABLES), ("GET", PLAN_ONE))),
    Endpoint("cancelPlanning", "DELETE", PLAN_ONE, True, (204, 200), _cancel_planning,
             (("POST", TABLES), ("POST", PLAN), ("GET", PLAN_ONE)), has_payload=False),
    Endpoint("fetchScanTasks", "POST", TABLE + "/tasks", True, (200,), _fetch_scan_tasks,
             _T + (("POST", TABLE), ("POST", PLAN), ("GET", PLAN_ONE))),
]}


def get_endpoint(operation: str) -> Endpoint:
    try:
        return ENDPOINTS[operation]
    except KeyError:
        raise KeyError(f"unknown operation {operation!r}; known: {', '.join(ENDPOINTS)}") from None


def new_suffix() -> str:
    return uuid.uuid4().hex[:10]
