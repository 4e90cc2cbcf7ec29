"""Server-side scan planning of the reference catalog: planTableScan, fetchPlanningResult, cancelPlanning,
fetchScanTasks.

Planning is pyiceberg's own: the table's metadata file (the one the catalog points at when the plan is made)
is loaded as a pyiceberg `StaticTable` and ``scan(...).plan_files()`` (or ``incremental_append_scan`` for
start-snapshot-id / end-snapshot-id) lists the file scan tasks. They are answered in the spec's shapes:
`FileScanTask` (``data-file``, ``delete-file-references``), `DataFile` / `DeleteFile` (``content``,
``file-path``, ``file-format``, ``spec-id``, ``partition``, ``file-size-in-bytes``, ``record-count`` ...,
column statistics only for the request's ``stats-fields``), with ``delete-files`` next to the tasks. The
optional ``residual-filter`` is not sent (the spec then has the client apply the original filter).

Request filters (the spec's Expression JSON, in both the current ``left``/``right``/``child`` form with
``{"type": "reference", "name"|"id": ...}`` and the deprecated ``term``/``value`` form) are turned into
pyiceberg expressions: ``true``/``false`` (bare booleans too), and, or, not, eq, not-eq, lt, lt-eq, gt, gt-eq,
starts-with, not-starts-with, is-null, not-null, is-nan, not-nan, in, not-in. Transforms (``transform`` terms
and ``apply``) and anything else answer 400 BadRequestException, as do filters or selections that do not
bind to the table's schema. Equality deletes (pyiceberg cannot plan them) answer 406.

Settings (`ReferenceSettings`): ``planning_mode`` "sync" answers ``completed`` (with a ``plan-id``, which the
spec's CompletedPlanningWithIDResult requires); "async" answers ``submitted`` with a plan-id, and the plan is
made (against the table metadata pinned at submission) by the first fetchPlanningResult. ``plan_task_size``
(default 1): the file scan tasks are handed out in plan tasks of that many each, fetched with fetchScanTasks
(0: all of them inline in the planning result).

Plans and plan tasks live in the catalog database (`store.plans_t`, `store.plan_tasks_t`), so a planning
mutation and its idempotency record commit in one transaction. A plan is bound to its table by name and
table-uuid; a plan task is consumed by fetchScanTasks (fetching it again answers 404
NoSuchPlanTaskException, and fetchPlanningResult lists only the plan tasks not yet fetched): the effect an
Idempotency-Key makes safe to retry. A cancelled plan keeps its row (fetchPlanningResult answers
``cancelled``; cancelling again answers 204) and drops its tasks. Plans older than ``plan_ttl`` (at least a
key's lifetime + grace) are removed by the next planTableScan.

Mutations (canonical resources, NS = namespace levels joined by 0x1F): planTableScan "NS/tables/T/plan",
cancelPlanning "NS/tables/T/plan/ID", fetchScanTasks "NS/tables/T/tasks". Each has its own reconcile step
for crash recovery: the plan (or the fetch) made under the same principal and Idempotency-Key is found by the
key's digest stored with it; a cancelled plan is a cancellation applied.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import delete, insert, select, update
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ctk.reference import store
from ctk.reference.catalog import (Context, bad_request, no_namespace, no_table, parse_object, table_resource)
from ctk.reference.operations import CatalogError, OpResult

log = logging.getLogger("ctk.reference.planning")

SUBMITTED, COMPLETED, CANCELLED, FAILED = "submitted", "completed", "cancelled", "failed"


# ---------------------------------------------------------------------------------------------- errors

def no_plan(plan_id: str) -> CatalogError:
    return CatalogError(404, "NoSuchPlanIdException", f"The plan id does not exist: {plan_id}")


def no_plan_task(task: str, why: str = "does not exist") -> CatalogError:
    return CatalogError(404, "NoSuchPlanTaskException", f"The plan task {why}: {task}")


def unsupported(msg: str) -> CatalogError:
    return CatalogError(406, "UnsupportedOperationException", msg)


# ---------------------------------------------------------------------------------------------- expressions

_COMPARISONS = {"eq": "EqualTo", "not-eq": "NotEqualTo", "lt": "LessThan", "lt-eq": "LessThanOrEqual",
                "gt": "GreaterThan", "gt-eq": "GreaterThanOrEqual", "starts-with": "StartsWith",
                "not-starts-with": "NotStartsWith"}
_FLIPPED = {"eq": "eq", "not-eq": "not-eq", "lt": "gt", "lt-eq": "gt-eq", "gt": "lt", "gt-eq": "lt-eq"}
_UNARY = {"is-null": "IsNull", "not-null": "NotNull", "is-nan": "IsNaN", "not-nan": "NotNaN"}
_SETS = {"in": "In", "not-in": "NotIn"}


class _Unsupported(Exception):
    pass


def _is_reference(term: Any) -> bool:
    return isinstance(term, str) or (isinstance(term, dict) and term.get("type") in ("reference", "transform",
                                                                                       "apply"))


def _reference(term: Any, schema) -> str:
    """A field name from a TermReference string or a Reference object (by name, or by id on `schema`)."""
    if isinstance(term, str) and term:
        return term
    if isinstance(term, dict):
        kind = term.get("type")
        if kind == "reference":
            if isinstance(term.get("name"), str) and term["name"]:
                return term["name"]
            if isinstance(term.get("id"), int) and not isinstance(term.get("id"), bool):
                try:
                    return schema.find_column_name(term["id"]) or _missing_id(term["id"])
                except ValueError:
                    _missing_id(term["id"])
        if kind in ("transform", "apply"):
            raise _Unsupported(f"{kind} terms are not supported by the reference catalog's planner")
    raise ValueError(f"not a field reference: {json.dumps(term)[:200]}")


def _missing_id(field_id: int):
    raise ValueError(f"no field with id {field_id} in the table schema")


def _literal(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("type") != "literal" or "value" not in value:
            raise ValueError(f"not a literal: {json.dumps(value)[:200]}")
        value = value["value"]
    if value is None or isinstance(value, (dict, list)):
        raise ValueError(f"not a primitive literal: {json.dumps(value)[:200]}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("non-finite literals are not supported")
    return value


def _literals(values: Any) -> list:
    if isinstance(values, dict) and values.get("type") == "literals" and isinstance(values.get("values"), list):
        values = values["values"]
    if not isinstance(values, list):
        raise ValueError("'values' must be an array of literals")
    return [_literal(v) for v in values]


def to_expression(doc: Any, schema):
    """The spec's Expression JSON -> an unbound pyiceberg BooleanExpression; CatalogError 400 otherwise."""
    try:
        return _expr(doc, schema, 0)
    except _Unsupported as exc:
        raise bad_request(f"Unsupported filter: {exc}") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise bad_request(f"Invalid filter: {exc}") from None


def _expr(doc: Any, schema, depth: int):
    import pyiceberg.expressions as E

    if depth > 100:
        raise ValueError("expression nested too deeply")
    if isinstance(doc, bool):
        return E.AlwaysTrue() if doc else E.AlwaysFalse()
    if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
        raise ValueError(f"expected a boolean or an object with a 'type': {json.dumps(doc)[:200]}")
    kind = doc["type"]
    if kind == "true":
        return E.AlwaysTrue()
    if kind == "false":
        return E.AlwaysFalse()
    if kind in ("and", "or"):
        left, right = _expr(doc["left"], schema, depth + 1), _expr(doc["right"], schema, depth + 1)
        return E.And(left, right) if kind == "and" else E.Or(left, right)
    if kind == "not":
        return E.Not(_expr(doc["child"], schema, depth + 1))
    if kind in _UNARY:
        term = doc.get("child", doc.get("term"))
        return getattr(E, _UNARY[kind])(_reference(term, schema))
    if kind in _SETS:
        term = doc.get("child", doc.get("term"))
        return getattr(E, _SETS[kind])(_reference(term, schema), _literals(doc.get("values")))
    if kind in _COMPARISONS:
        left = doc["left"] if "left" in doc else doc.get("term")
        right = doc["right"] if "right" in doc else doc.get("value")
        if "right" not in doc and "value" not in doc:
            raise ValueError(f"{kind} needs a 'right' (or 'value') operand")
        if not _is_reference(left) and _is_reference(right) and kind in _FLIPPED:
            left, right, kind = right, left, _FLIPPED[kind]      # 5 < id  ->  id > 5
        return getattr(E, _COMPARISONS[kind])(_reference(left, schema), _literal(right))
    raise _Unsupported(f"expression type {kind!r}")


# ---------------------------------------------------------------------------------------------- requests

@dataclass
class PlanRequest:
    doc: dict                                  # the request as sent (canonical JSON is stored with the plan)
    snapshot_id: int | None = None
    select: list[str] | None = None
    filter: Any = None
    case_sensitive: bool = True
    use_snapshot_schema: bool = False
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    stats_fields: list[str] | None = None

    @property
    def incremental(self) -> bool:
        return self.start_snapshot_id is not None or self.end_snapshot_id is not None


def _opt_int(data: dict, key: str) -> int | None:
    v = data.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise bad_request(f"Invalid PlanTableScanRequest: {key} must be an integer")
    return v


def _opt_names(data: dict, key: str) -> list[str] | None:
    v = data.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise bad_request(f"Invalid PlanTableScanRequest: {key} must be an array of field names")
    return list(v)


def _opt_bool(data: dict, key: str, default: bool) -> bool:
    v = data.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise bad_request(f"Invalid PlanTableScanRequest: {key} must be a boolean")
    return v


def parse_plan_request(body: bytes) -> PlanRequest:
    data = parse_object(body) if body and body.strip() else {}
    req = PlanRequest(doc=data, snapshot_id=_opt_int(data, "snapshot-id"), select=_opt_names(data, "select"),
                      filter=data.get("filter"), case_sensitive=_opt_bool(data, "case-sensitive", True),
                      use_snapshot_schema=_opt_bool(data, "use-snapshot-schema", False),
                      start_snapshot_id=_opt_int(data, "start-snapshot-id"),
                      end_snapshot_id=_opt_int(data, "end-snapshot-id"),
                      stats_fields=_opt_names(data, "stats-fields"))
    _opt_int(data, "min-rows-requested")          # a hint; checked, not used
    if req.snapshot_id is not None and req.incremental:
        raise bad_request("Invalid PlanTableScanRequest: snapshot-id cannot be combined with "
                          "start-snapshot-id / end-snapshot-id")
    if req.start_snapshot_id is not None and req.end_snapshot_id is None:
        raise bad_request("Invalid PlanTableScanRequest: end-snapshot-id is required with start-snapshot-id")
    return req


# ---------------------------------------------------------------------------------------------- planning

@dataclass
class Planned:
    """The outcome of planning: inline part and plan-task parts (ScanTasks documents)."""

    inline: dict
    parts: list[dict] = field(default_factory=list)


class Scan:
    """A validated scan of a table as of one metadata file (all request errors raised as CatalogError)."""

    def __init__(self, metadata_location: str, metadata, req: PlanRequest):
        self.metadata_location, self.metadata, self.req = metadata_location, metadata, req
        snapshot = None
        for sid in (req.snapshot_id, req.start_snapshot_id, req.end_snapshot_id):
            if sid is not None and metadata.snapshot_by_id(sid) is None:
                raise bad_request(f"Cannot find snapshot with id {sid} in table {metadata.table_uuid}")
        if req.snapshot_id is not None:
            snapshot = metadata.snapshot_by_id(req.snapshot_id)
        elif req.end_snapshot_id is not None:
            snapshot = metadata.snapshot_by_id(req.end_snapshot_id)
        schema = metadata.schema()
        if req.use_snapshot_schema and snapshot is not None and snapshot.schema_id is not None:
            schema = next((s for s in metadata.schemas if s.schema_id == snapshot.schema_id), schema)
        self.schema = schema
        self.filter = None if req.filter is None else to_expression(req.filter, schema)
        try:
            if self.filter is not None:
                from pyiceberg.expressions.visitors import bind
                bind(schema, self.filter, req.case_sensitive)
            for name in (req.select or []):
                if name != "*":
                    schema.find_field(name, req.case_sensitive)
            self.stats_ids = None if req.stats_fields is None else {
                schema.find_field(n, req.case_sensitive).field_id for n in req.stats_fields}
        except CatalogError:
            raise
        except Exception as exc:  # noqa: BLE001 - pyiceberg raises ValueError, TypeError, ResolveError...
            raise bad_request(f"Cannot bind the request to the table schema: {exc}") from None

    def plan(self, task_size: int) -> Planned:
        from pyiceberg.expressions import AlwaysTrue
        from pyiceberg.table import DataScan, IncrementalAppendScan, StaticTable

        table = StaticTable.from_metadata(self.metadata_location)
        req = self.req
        selected = tuple(req.select) if req.select else ("*",)
        row_filter = self.filter if self.filter is not None else AlwaysTrue()
        scan: DataScan | IncrementalAppendScan
        if req.incremental:
            scan = table.incremental_append_scan(from_snapshot_id_exclusive=req.start_snapshot_id,
                                                 to_snapshot_id_inclusive=req.end_snapshot_id, row_filter=row_filter,
                                                 selected_fields=selected, case_sensitive=req.case_sensitive)
        else:
            scan = table.scan(row_filter=row_filter, selected_fields=selected, case_sensitive=req.case_sensitive,
                              snapshot_id=req.snapshot_id)
        try:
            tasks = list(scan.plan_files())
        except ValueError as exc:
            if "equality delete" in str(exc).lower():
                raise unsupported(f"Cannot plan this scan: {exc}") from None
            raise
        entries = [task_entry(t, self.metadata, self.schema, self.stats_ids) for t in tasks]
        entries.sort(key=lambda e: e["data-file"]["file-path"])
        if task_size and entries:
            parts = [scan_tasks(entries[i:i + task_size]) for i in range(0, len(entries), task_size)]
            return Planned(scan_tasks([]), parts)
        return Planned(scan_tasks(entries))


# ---------------------------------------------------------------------------------------------- serialization

def json_value(ftype, value: Any) -> Any:
    """A value of an Iceberg primitive type (pyiceberg's internal form) as the spec's PrimitiveTypeValue JSON
    (as Java's SingleValueParser writes it); None when it has no JSON form (NaN, unknown types)."""
    from decimal import Decimal

    from pyiceberg import types as T
    from pyiceberg.utils.datetime import micros_to_time

    if value is None:
        return None
    if isinstance(ftype, T.BooleanType):
        return bool(value)
    if isinstance(ftype, (T.IntegerType, T.LongType)):
        return int(value)
    if isinstance(ftype, (T.FloatType, T.DoubleType)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(ftype, T.DecimalType):
        return str(value if isinstance(value, Decimal) else Decimal(value))
    if isinstance(ftype, T.StringType):
        return str(value)
    if isinstance(ftype, T.UUIDType):
        if isinstance(value, (bytes, bytearray)):
            return str(uuid.UUID(bytes=bytes(value)))
        return str(value)
    if isinstance(ftype, T.DateType):
        if isinstance(value, int):
            value = date(1970, 1, 1) + timedelta(days=value)
        return value.isoformat()
    if isinstance(ftype, T.TimeType):
        return (micros_to_time(value) if isinstance(value, int) else value).isoformat()
    if isinstance(ftype, (T.TimestampType, T.TimestamptzType)):
        tz = isinstance(ftype, T.TimestamptzType)
        if isinstance(value, int):
            value = datetime(1970, 1, 1) + timedelta(microseconds=value)
        if isinstance(value, datetime):
            naive = value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo else value
            text = naive.isoformat(timespec="microseconds")
            return text + "+00:00" if tz else text
        return str(value)
    if isinstance(ftype, (T.FixedType, T.BinaryType)):
        return bytes(value).hex().upper()
    nanos = getattr(T, "TimestampNanoType", None), getattr(T, "TimestamptzNanoType", None)
    if any(n is not None and isinstance(ftype, n) for n in nanos) and isinstance(value, int):
        seconds, ns = divmod(value, 1_000_000_000)
        text = (datetime(1970, 1, 1) + timedelta(seconds=seconds)).isoformat(timespec="seconds") + f".{ns:09d}"
        return text + ("+00:00" if nanos[1] is not None and isinstance(ftype, nanos[1]) else "")
    if isinstance(value, (bool, int, str)):
        return value
    return None


def _count_map(values: dict[int, int] | None, ids: set[int] | None) -> dict | None:
    if not values or ids is None:
        return None
    keys = sorted(k for k in values if k in ids)
    return {"keys": keys, "values": [int(values[k]) for k in keys]} if keys else None


def _value_map(values: dict[int, bytes] | None, ids: set[int] | None, schema) -> dict | None:
    from pyiceberg.conversions import from_bytes

    if not values or ids is None:
        return None
    keys, out = [], []
    for k in sorted(values):
        if k not in ids:
            continue
        try:
            ftype = schema.find_type(k)
            v = json_value(ftype, from_bytes(ftype, values[k]))
        except Exception:  # noqa: BLE001 - a bound that does not decode is left out
            continue
        if v is not None:
            keys.append(k)
            out.append(v)
    return {"keys": keys, "values": out} if keys else None


CONTENT = {0: "data", 1: "position-deletes", 2: "equality-deletes"}


def content_file(df, metadata, schema, stats_ids: set[int] | None = None) -> dict:
    """A pyiceberg DataFile (data or delete) as the spec's DataFile / PositionDeleteFile / EqualityDeleteFile."""
    content = CONTENT[int(getattr(df.content, "value", df.content) or 0)]
    spec_id = df.spec_id if getattr(df, "spec_id", None) is not None else metadata.default_spec_id
    partition: list = []
    spec = metadata.specs().get(spec_id)
    if spec is not None and spec.fields:
        ptype = spec.partition_type(metadata.schema())
        for i, pf in enumerate(ptype.fields):
            partition.append(json_value(pf.field_type, df.partition[i] if i < len(df.partition) else None))
    fmt = getattr(df.file_format, "value", df.file_format)
    out: dict[str, Any] = {"content": content, "file-path": df.file_path, "file-format": str(fmt).lower(),
                           "spec-id": spec_id, "partition": partition,
                           "file-size-in-bytes": int(df.file_size_in_bytes), "record-count": int(df.record_count)}
    if df.key_metadata:
        out["key-metadata"] = bytes(df.key_metadata).hex().upper()
    if df.split_offsets:
        out["split-offsets"] = [int(x) for x in df.split_offsets]
    if df.sort_order_id is not None:
        out["sort-order-id"] = int(df.sort_order_id)
    if content == "data":
        if getattr(df, "first_row_id", None) is not None:
            out["first-row-id"] = int(df.first_row_id)
        for key, attr in (("column-sizes", "column_sizes"), ("value-counts", "value_counts"),
                          ("null-value-counts", "null_value_counts"), ("nan-value-counts", "nan_value_counts")):
            m = _count_map(getattr(df, attr, None), stats_ids)
            if m is not None:
                out[key] = m
        for key, attr in (("lower-bounds", "lower_bounds"), ("upper-bounds", "upper_bounds")):
            m = _value_map(getattr(df, attr, None), stats_ids, schema)
            if m is not None:
                out[key] = m
    elif content == "position-deletes":
        for key, attr in (("content-offset", "content_offset"), ("content-size-in-bytes", "content_size_in_bytes")):
            if getattr(df, attr, None) is not None:
                out[key] = int(getattr(df, attr))
    elif df.equality_ids:
        out["equality-ids"] = [int(x) for x in df.equality_ids]
    return out


def task_entry(task, metadata, schema, stats_ids: set[int] | None) -> dict:
    """One pyiceberg FileScanTask: its data file and its delete files (resolved to references later)."""
    deletes = sorted((content_file(d, metadata, schema) for d in task.delete_files), key=lambda d: d["file-path"])
    return {"data-file": content_file(task.file, metadata, schema, stats_ids), "deletes": deletes}


def scan_tasks(entries: list[dict]) -> dict:
    """A ScanTasks document for some task entries: file-scan-tasks, and delete-files when any is referenced."""
    delete_files: list[dict] = []
    index: dict[str, int] = {}
    tasks = []
    for e in entries:
        task: dict[str, Any] = {"data-file": e["data-file"]}
        refs = []
        for d in e["deletes"]:
            if d["file-path"] not in index:
                index[d["file-path"]] = len(delete_files)
                delete_files.append(d)
            refs.append(index[d["file-path"]])
        if refs:
            task["delete-file-references"] = refs
        tasks.append(task)
    out: dict[str, Any] = {"file-scan-tasks": tasks}
    if delete_files:
        out["delete-files"] = delete_files
    return out


# ---------------------------------------------------------------------------------------------- plans in the DB

@dataclass
class Plan:
    plan_id: str
    namespace: list[str]
    table_name: str
    table_uuid: str
    state: str
    metadata_location: str
    request: dict                    # {"request": PlanTableScanRequest, "mode": "sync" | "async"}
    request_key: str | None
    result: dict | None
    error: dict | None

    @classmethod
    def from_row(cls, row) -> "Plan":
        m = row._mapping
        return cls(m["plan_id"], store.ns_tuple(m["namespace"]), m["table_name"], m["table_uuid"], m["state"],
                   m["metadata_location"], json.loads(m["request"]), m["request_key"],
                   None if m["result"] is None else json.loads(m["result"]),
                   None if m["error"] is None else json.loads(m["error"]))


def get_plan(conn, plan_id: str) -> Plan | None:
    row = conn.execute(select(store.plans_t).where(store.plans_t.c.plan_id == plan_id)).first()
    return None if row is None else Plan.from_row(row)


def plan_tasks(conn, plan_id: str, pending_only: bool) -> list[str]:
    t = store.plan_tasks_t
    stmt = select(t.c.task_id).where(t.c.plan_id == plan_id)
    if pending_only:
        stmt = stmt.where(t.c.fetched == False)  # noqa: E712 - SQL expression
    return [r[0] for r in conn.execute(stmt.order_by(t.c.position))]


def insert_plan(conn, plan_id: str, ns, name: str, table_uuid: str, state: str, metadata_location: str,
                request_doc: dict, request_key: str | None, planned: Planned | None, error: dict | None,
                now: float) -> None:
    conn.execute(insert(store.plans_t).values(
        plan_id=plan_id, namespace=store.ns_key(ns), table_name=name, table_uuid=table_uuid, state=state,
        metadata_location=metadata_location, request=json.dumps(request_doc, sort_keys=True),
        request_key=request_key, result=None if planned is None else json.dumps(planned.inline),
        error=None if error is None else json.dumps(error), created_at=now, updated_at=now))
    if planned is not None:
        _insert_tasks(conn, plan_id, planned)


def _insert_tasks(conn, plan_id: str, planned: Planned) -> None:
    rows = [dict(task_id=f"{plan_id}-{i}", plan_id=plan_id, position=i, tasks=json.dumps(part), fetched=False,
                 fetched_key=None) for i, part in enumerate(planned.parts)]
    if rows:
        conn.execute(insert(store.plan_tasks_t), rows)


def finish_plan(conn, plan_id: str, planned: Planned | None, error: dict | None) -> bool:
    """submitted -> completed (or failed); False if the plan is no longer submitted."""
    n = conn.execute(update(store.plans_t).where(store.plans_t.c.plan_id == plan_id,
                                                 store.plans_t.c.state == SUBMITTED).values(
        state=COMPLETED if error is None else FAILED, updated_at=time.time(),
        result=None if planned is None else json.dumps(planned.inline),
        error=None if error is None else json.dumps(error))).rowcount
    if n == 1 and planned is not None:
        _insert_tasks(conn, plan_id, planned)
    return n == 1


def cancel_plan(conn, plan_id: str) -> None:
    conn.execute(update(store.plans_t).where(store.plans_t.c.plan_id == plan_id).values(
        state=CANCELLED, result=None, error=None, updated_at=time.time()))
    conn.execute(delete(store.plan_tasks_t).where(store.plan_tasks_t.c.plan_id == plan_id))


def sweep_plans(conn, older_than: float) -> None:
    old = [r[0] for r in conn.execute(select(store.plans_t.c.plan_id).where(store.plans_t.c.created_at < older_than))]
    for i in range(0, len(old), 500):
        chunk = old[i:i + 500]
        conn.execute(delete(store.plan_tasks_t).where(store.plan_tasks_t.c.plan_id.in_(chunk)))
        conn.execute(delete(store.plans_t).where(store.plans_t.c.plan_id.in_(chunk)))


def list_plans(conn, ns, name: str) -> list[dict]:
    """Test hook (control API): the plans of a table with their state and pending plan tasks."""
    rows = conn.execute(select(store.plans_t.c.plan_id, store.plans_t.c.state)
                        .where(store.plans_t.c.namespace == store.ns_key(ns), store.plans_t.c.table_name == name)
                        .order_by(store.plans_t.c.created_at)).all()
    return [{"plan-id": pid, "status": state, "pending-plan-tasks": plan_tasks(conn, pid, True)}
            for pid, state in rows]


# ---------------------------------------------------------------------------------------------- responses

def completed_body(plan: Plan, tasks: list[str], with_plan_id: bool) -> dict:
    out: dict[str, Any] = {"status": COMPLETED}
    if with_plan_id:
        out["plan-id"] = plan.plan_id
    out.update(plan.result or {"file-scan-tasks": []})
    if tasks:
        out["plan-tasks"] = tasks
    return out


def planned_response(conn, plan: Plan) -> OpResult:
    """What planTableScan answered when it made `plan` (rebuilt the same way on reconciliation)."""
    if plan.request.get("mode") == "async":
        return OpResult(200, {"status": SUBMITTED, "plan-id": plan.plan_id})
    if plan.error is not None:
        return OpResult(200, {"status": FAILED, "error": plan.error})
    return OpResult(200, completed_body(plan, plan_tasks(conn, plan.plan_id, False), True))


# ---------------------------------------------------------------------------------------------- helpers

def key_digest(ctx: Context, request: Request) -> str | None:
    """Digest of principal + Idempotency-Key (as the pipeline normalizes it) when the request has exactly one."""
    values = request.headers.getlist("idempotency-key")
    if len(values) != 1 or ctx.settings.idempotency_lifetime is None:
        return None
    key = values[0].strip().lower()
    return hashlib.sha256(f"{request.state.principal}\n{key}".encode()).hexdigest()


def current_table(conn, ns, name: str):
    """(metadata location, metadata) of the table; 404 NoSuchTable / NoSuchNamespace."""
    location = store.table_pointer(conn, ns, name)
    if location is None:
        if not store.namespace_exists(conn, ns):
            raise no_namespace(ns)
        raise no_table(ns, name)
    return location, store.read_table_metadata(location)


def bound_plan(conn, ns, name: str, plan_id: str) -> Plan:
    """The plan, which must belong to this table (name and table-uuid); 404 otherwise."""
    _location, metadata = current_table(conn, ns, name)
    plan = get_plan(conn, plan_id)
    if plan is None or plan.namespace != list(ns) or plan.table_name != name or \
            plan.table_uuid != str(metadata.table_uuid):
        raise no_plan(plan_id)
    return plan


def plan_ttl(settings) -> float:
    """Seconds a plan is kept: settings.plan_ttl, but never less than a key's lifetime + grace (a replayed
    planTableScan must not hand out a plan-id that is gone)."""
    ttl = float(settings.plan_ttl)
    if settings.lifetime is not None:
        ttl = max(ttl, (settings.lifetime + settings.grace).total_seconds())
    return ttl


def error_doc(exc: Exception) -> dict:
    if isinstance(exc, CatalogError):
        return {"message": exc.message, "type": exc.type, "code": exc.status}
    return {"message": f"Planning failed: {type(exc).__name__}: {exc}", "type": "ServiceFailureException",
            "code": 500}


# ---------------------------------------------------------------------------------------------- routes

async def plan_table_scan(ctx: Context, request: Request, ns: list[str], name: str, body: bytes) -> Response:
    digest = key_digest(ctx, request)
    mode, task_size = ctx.settings.planning_mode, ctx.settings.plan_task_size

    def execute(conn):
        req = parse_plan_request(body)
        location, metadata = current_table(conn, ns, name)
        scan = Scan(location, metadata, req)
        planned = scan.plan(task_size) if mode == "sync" else None
        now = time.time()
        sweep_plans(conn, now - plan_ttl(ctx.settings))
        plan_id = str(uuid.uuid4())
        insert_plan(conn, plan_id, ns, name, str(metadata.table_uuid), COMPLETED if planned is not None else SUBMITTED,
                    location, {"request": req.doc, "mode": mode}, digest, planned, None, now)
        plan = get_plan(conn, plan_id)
        if plan is None:   # inserted just above, in this transaction
            raise RuntimeError(f"plan {plan_id} is not there right after it was inserted")
        return planned_response(conn, plan)

    def reconcile(conn):
        if digest is None:
            return None
        row = conn.execute(select(store.plans_t).where(
            store.plans_t.c.request_key == digest, store.plans_t.c.namespace == store.ns_key(ns),
            store.plans_t.c.table_name == name)).first()
        return None if row is None else planned_response(conn, Plan.from_row(row))

    return await ctx.submit(request, "planTableScan", table_resource(ns, name) + "/plan", body, execute, reconcile)


def _complete(ctx: Context, ns, name: str, plan: Plan) -> None:
    """Make a submitted plan (async mode) against its pinned metadata; store completed or failed."""
    planned, error = None, None
    try:
        metadata = store.read_table_metadata(plan.metadata_location)
        planned = Scan(plan.metadata_location, metadata,
                       parse_plan_request(json.dumps(plan.request.get("request") or {}).encode())
                       ).plan(ctx.settings.plan_task_size)
    except Exception as exc:  # noqa: BLE001 - a plan that cannot be made is a failed plan
        if not isinstance(exc, CatalogError):
            log.exception("planning %s failed", plan.plan_id)
        error = error_doc(exc)
    with ctx.engine.begin() as conn:
        finish_plan(conn, plan.plan_id, planned, error)


async def fetch_planning_result(ctx: Context, request: Request, ns: list[str], name: str, plan_id: str) -> Response:
    plan = await ctx.aread(lambda conn: bound_plan(conn, ns, name, plan_id))
    if plan.state == SUBMITTED:
        await run_in_threadpool(_complete, ctx, ns, name, plan)

    def read(conn):
        p = bound_plan(conn, ns, name, plan_id)
        if p.state == COMPLETED:
            return completed_body(p, plan_tasks(conn, plan_id, True), False)
        if p.state == FAILED:
            return {"status": FAILED, "error": p.error}
        return {"status": p.state}

    return JSONResponse(await ctx.aread(read))


async def cancel_planning(ctx: Context, request: Request, ns: list[str], name: str, plan_id: str,
                          body: bytes) -> Response:
    def execute(conn):
        plan = bound_plan(conn, ns, name, plan_id)
        if plan.state != CANCELLED:
            cancel_plan(conn, plan_id)
        return OpResult(204)

    def reconcile(conn):
        plan = get_plan(conn, plan_id)
        return OpResult(204) if plan is not None and plan.state == CANCELLED else None

    return await ctx.submit(request, "cancelPlanning", f"{table_resource(ns, name)}/plan/{plan_id}", body, execute,
                            reconcile)


def _plan_task_of(body: bytes) -> str:
    data = parse_object(body)
    token = data.get("plan-task")
    if not isinstance(token, str) or not token:
        raise bad_request("Invalid FetchScanTasksRequest: plan-task must be a non-empty string")
    return token


async def fetch_scan_tasks(ctx: Context, request: Request, ns: list[str], name: str, body: bytes) -> Response:
    digest = key_digest(ctx, request)
    t = store.plan_tasks_t

    def execute(conn):
        token = _plan_task_of(body)
        _location, metadata = current_table(conn, ns, name)
        row = conn.execute(select(t.c.plan_id, t.c.tasks, t.c.fetched).where(t.c.task_id == token)).first()
        plan = None if row is None else get_plan(conn, row[0])
        if plan is None or plan.namespace != list(ns) or plan.table_name != name or \
                plan.table_uuid != str(metadata.table_uuid) or plan.state != COMPLETED:
            raise no_plan_task(token)
        if row[2]:
            raise no_plan_task(token, "was already fetched")
        if conn.execute(update(t).where(t.c.task_id == token, t.c.fetched == False)  # noqa: E712
                        .values(fetched=True, fetched_key=digest)).rowcount != 1:
            raise no_plan_task(token, "was already fetched")
        return OpResult(200, json.loads(row[1]))

    def reconcile(conn):
        try:
            token = _plan_task_of(body)
        except CatalogError:
            return None
        row = conn.execute(select(t.c.tasks, t.c.fetched, t.c.fetched_key).where(t.c.task_id == token)).first()
        if digest is not None and row is not None and row[1] and row[2] == digest:
            return OpResult(200, json.loads(row[0]))
        return None

    return await ctx.submit(request, "fetchScanTasks", table_resource(ns, name) + "/tasks", body, execute, reconcile)
