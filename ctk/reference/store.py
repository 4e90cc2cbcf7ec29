"""Storage of the reference catalog: pointers in a SQL database, metadata JSON files in the warehouse.

The database holds only names and metadata-file pointers:

- `ctk_namespaces(name, properties)`: `name` is the namespace levels joined by US (0x1F), `properties` JSON.
- `ctk_tables(namespace, name, metadata_location)` and `ctk_views(namespace, name, metadata_location)`.
- `ctk_plans` and `ctk_plan_tasks`: server-side scan plans (ctk.reference.planning): a plan's id, table,
  state (submitted / completed / cancelled / failed), request, pinned metadata file and result; its plan
  tasks (opaque tokens) with their file scan tasks and whether they were fetched. They live in the catalog
  database so that a planning mutation and its idempotency record commit in one transaction.

Metadata files are immutable, written (complete, never over an existing file) before the pointer changes:
local ones with the standard library's exclusive create, other schemes through pyiceberg's FileIO. A table commit
swaps its pointer with `UPDATE ... WHERE metadata_location = :expected` (compare-and-swap).

SQLite (the default, `<warehouse>/catalog.db`) runs in WAL mode with a busy timeout; write transactions
start with `BEGIN IMMEDIATE` so two writers never deadlock on a lock upgrade ("database is locked"), while
connections opened by `read_connection()` use a deferred `BEGIN` and never wait for writers.

Read helpers for the idempotency pipeline's reconcile step (all take an open SQLAlchemy Connection):
`namespace_exists`, `namespace_properties`, `table_pointer`, `view_pointer`, `load_table`, `load_view`.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, Iterator, TypeVar
from urllib.parse import urlsplit

from pyiceberg.io import FileIO, load_file_io
from pyiceberg.serializers import FromInputFile
from pyiceberg.table.metadata import TableMetadata, TableMetadataV3
from pyiceberg.typedef import IcebergBaseModel
from pyiceberg.view.metadata import ViewMetadata
from sqlalchemy import (Boolean, Column, Float, Index, Integer, MetaData, String, Table, Text, bindparam,
                        create_engine, delete, event, insert, select, update)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from ctk.reference import variant  # noqa: F401 - metadata holding the v3 variant type parses
from ctk.reference.operations import exists

SEP = "\x1f"

meta = MetaData()
namespaces_t = Table(
    "ctk_namespaces", meta,
    Column("name", String(1024), primary_key=True),
    Column("properties", Text, nullable=False, default="{}"),
)
tables_t = Table(
    "ctk_tables", meta,
    Column("namespace", String(1024), primary_key=True),
    Column("name", String(512), primary_key=True),
    Column("metadata_location", Text, nullable=False),
)
views_t = Table(
    "ctk_views", meta,
    Column("namespace", String(1024), primary_key=True),
    Column("name", String(512), primary_key=True),
    Column("metadata_location", Text, nullable=False),
)
unregistered_t = Table(
    # the last pointer of each unregistered table: what crash recovery answers a retried unregisterTable with
    "ctk_unregistered", meta,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("namespace", String(1024), nullable=False),
    Column("name", String(512), nullable=False),
    Column("metadata_location", Text, nullable=False),
    Column("at", Float, nullable=False),
    Index("ix_ctk_unregistered_name", "namespace", "name"),
)
plans_t = Table(
    "ctk_plans", meta,
    Column("plan_id", String(64), primary_key=True),
    Column("namespace", String(1024), nullable=False),
    Column("table_name", String(512), nullable=False),
    Column("table_uuid", String(64), nullable=False),
    Column("state", String(16), nullable=False),              # submitted / completed / cancelled / failed
    Column("metadata_location", Text, nullable=False),        # the table metadata the plan is pinned to
    Column("request", Text, nullable=False),                  # the PlanTableScanRequest (JSON)
    Column("request_key", String(64), nullable=True),         # digest of principal + Idempotency-Key, if any
    Column("result", Text, nullable=True),                    # completed: inline file scan tasks (JSON)
    Column("error", Text, nullable=True),                     # failed: the ErrorModel (JSON)
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)
plan_tasks_t = Table(
    "ctk_plan_tasks", meta,
    Column("task_id", String(128), primary_key=True),         # the opaque plan-task token
    Column("plan_id", String(64), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("tasks", Text, nullable=False),                    # ScanTasks document (JSON)
    Column("fetched", Boolean, nullable=False, default=False),
    Column("fetched_key", String(64), nullable=True),         # digest of principal + key of the fetch, if any
)


# ---------------------------------------------------------------------------------------------- engine

def warehouse_dir(settings) -> str:
    """The warehouse directory (created if missing); a temporary one when settings.warehouse is None.

    The chosen temporary directory is remembered in settings.extra["warehouse_dir"]."""
    path = settings.warehouse or settings.extra.get("warehouse_dir")
    if not path:
        path = tempfile.mkdtemp(prefix="ctk-ref-")
        settings.extra["warehouse_dir"] = path
    path = local_path(path)
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def warehouse_uri(settings) -> str:
    return "file://" + warehouse_dir(settings)


def local_path(location: str) -> str:
    """`file:/x`, `file:///x` or a plain path -> `/x`."""
    if location.startswith("file:"):
        rest = location[len("file:"):]
        if rest.startswith("//"):
            rest = rest[2:]
            if not rest.startswith("/"):  # file://host/path: drop the host
                rest = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
        return rest
    return location


def make_engine(settings) -> Engine:
    url = settings.database_url
    if not url:
        url = "sqlite:///" + os.path.join(warehouse_dir(settings), "catalog.db")
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False},
                               pool_size=16, max_overflow=16, pool_timeout=30)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            # straight to the sqlite3 connection: through exec_driver_sql it was 3 % of a keyed commit
            read = conn.get_execution_options().get("ctk_read")
            conn.connection.driver_connection.execute("BEGIN" if read else "BEGIN IMMEDIATE")
    else:
        engine = create_engine(url, pool_size=16, max_overflow=16, pool_timeout=30, pool_pre_ping=True,
                               connect_args={"connect_timeout": 10} if "psycopg" in url else {})
        from ctk.reference.retrying_pool import install

        install(engine, getattr(settings, "db_statement_retries", 0))   # a pool that retries a lost statement
    meta.create_all(engine)
    return engine


@contextmanager
def read_connection(engine: Engine) -> Iterator[Connection]:
    """A connection for reads only (deferred transaction on SQLite: never blocks on writers)."""
    with engine.connect() as conn:
        conn = conn.execution_options(ctk_read=True)
        with conn.begin():
            yield conn


# ---------------------------------------------------------------------------------------------- names

def ns_key(namespace: tuple[str, ...] | list[str]) -> str:
    return SEP.join(namespace)


def ns_tuple(key: str) -> list[str]:
    return key.split(SEP)


# Canonical resources of mutations ("NS/tables/T", see ctk.reference.catalog) name namespace levels and names
# with `%` and `/` percent-encoded, so that a `/` inside a level or a name (allowed: `new/db`, `tab/le`) does not
# split the resource. Names without either read as they are.

def _quote(part: str) -> str:
    return part.replace("%", "%25").replace("/", "%2F")


def _unquote(part: str) -> str:
    return part.replace("%2F", "/").replace("%25", "%")


def resource_ns(namespace) -> str:
    """A namespace in a canonical resource (levels joined by 0x1F, each encoded)."""
    return SEP.join(_quote(level) for level in namespace)


def resource_name(name: str) -> str:
    return _quote(name)


def resource_levels(key: str) -> list[str]:
    """The namespace levels of a canonical resource's namespace part."""
    return [_unquote(level) for level in key.split(SEP)]


def resource_unquote(part: str) -> str:
    return _unquote(part)


# ---------------------------------------------------------------------------------------------- namespaces

def namespace_exists(conn: Connection, namespace) -> bool:
    """True if the namespace (tuple of levels) exists."""
    return conn.execute(select(namespaces_t.c.name).where(namespaces_t.c.name == ns_key(namespace))).first() is not None


def namespace_properties(conn: Connection, namespace) -> dict[str, str] | None:
    """The namespace's properties, or None if it does not exist."""
    row = conn.execute(select(namespaces_t.c.properties).where(namespaces_t.c.name == ns_key(namespace))).first()
    return None if row is None else json.loads(row[0])


def list_namespaces(conn: Connection, parent) -> list[list[str]]:
    names = [r[0] for r in conn.execute(select(namespaces_t.c.name).order_by(namespaces_t.c.name))]
    depth = len(parent) + 1
    out = []
    for name in names:
        parts = ns_tuple(name)
        if len(parts) == depth and parts[: len(parent)] == list(parent):
            out.append(parts)
    return out


def insert_namespace(conn: Connection, namespace, properties: dict) -> None:
    try:
        conn.execute(insert(namespaces_t).values(name=ns_key(namespace), properties=json.dumps(properties)))
    except IntegrityError:  # a concurrent creation won on the unique index (PostgreSQL): the same 409, not a 500
        raise exists("Namespace", namespace) from None


def set_namespace_properties(conn: Connection, namespace, properties: dict) -> None:
    conn.execute(update(namespaces_t).where(namespaces_t.c.name == ns_key(namespace))
                 .values(properties=json.dumps(properties)))


def delete_namespace(conn: Connection, namespace) -> int:
    return conn.execute(delete(namespaces_t).where(namespaces_t.c.name == ns_key(namespace))).rowcount


def namespace_has_children(conn: Connection, namespace) -> bool:
    key = ns_key(namespace)
    for t in (tables_t, views_t):
        if conn.execute(select(t.c.name).where(t.c.namespace == key).limit(1)).first() is not None:
            return True
    prefix = key + SEP
    for (name,) in conn.execute(select(namespaces_t.c.name)):
        if name.startswith(prefix):
            return True
    return False


# ---------------------------------------------------------------------------------------------- pointers

# The statements of a commit's pointer read and swap, built once: building them again for every commit took
# about a twentieth of a commit's time. Their parameters: the pointer row (p_ns, p_name), the expected and the
# new location.
def _pointer_statements(t: Table):
    row = (t.c.namespace == bindparam("p_ns")) & (t.c.name == bindparam("p_name"))
    swap = update(t).where(row).values(metadata_location=bindparam("p_new"))
    return (select(t.c.metadata_location).where(row), swap,
            swap.where(t.c.metadata_location == bindparam("p_expected")))


_POINTER_SQL = {tables_t: _pointer_statements(tables_t), views_t: _pointer_statements(views_t)}


def _pointer(conn: Connection, t: Table, namespace, name: str) -> str | None:
    row = conn.execute(_POINTER_SQL[t][0], {"p_ns": ns_key(namespace), "p_name": name}).first()
    return None if row is None else row[0]


def table_pointer(conn: Connection, namespace, name: str) -> str | None:
    """The table's current metadata location, or None if there is no such table."""
    return _pointer(conn, tables_t, namespace, name)


def view_pointer(conn: Connection, namespace, name: str) -> str | None:
    """The view's current metadata location, or None if there is no such view."""
    return _pointer(conn, views_t, namespace, name)


def list_names(conn: Connection, kind: str, namespace) -> list[str]:
    t = tables_t if kind == "table" else views_t
    return [r[0] for r in conn.execute(select(t.c.name).where(t.c.namespace == ns_key(namespace)).order_by(t.c.name))]


def insert_pointer(conn: Connection, kind: str, namespace, name: str, location: str) -> None:
    t = tables_t if kind == "table" else views_t
    try:
        conn.execute(insert(t).values(namespace=ns_key(namespace), name=name, metadata_location=location))
    except IntegrityError:
        raise exists(kind.capitalize(), namespace, name) from None


def swap_pointer(conn: Connection, kind: str, namespace, name: str, expected: str | None, new: str) -> bool:
    """Compare-and-swap the pointer; with expected=None a plain (unconditional) update. True if a row changed."""
    _read, plain, compare = _POINTER_SQL[tables_t if kind == "table" else views_t]
    params = {"p_ns": ns_key(namespace), "p_name": name, "p_new": new}
    if expected is None:
        return conn.execute(plain, params).rowcount == 1
    return conn.execute(compare, {**params, "p_expected": expected}).rowcount == 1


def delete_pointer(conn: Connection, kind: str, namespace, name: str) -> bool:
    t = tables_t if kind == "table" else views_t
    return conn.execute(delete(t).where(t.c.namespace == ns_key(namespace), t.c.name == name)).rowcount == 1


def note_unregistered(conn: Connection, namespace, name: str, location: str, at: float) -> None:
    conn.execute(insert(unregistered_t).values(namespace=ns_key(namespace), name=name, metadata_location=location,
                                               at=at))


def last_unregistered(conn: Connection, namespace, name: str, since: float) -> str | None:
    """The metadata location the table had when it was last unregistered at or after `since`, or None."""
    row = conn.execute(select(unregistered_t.c.metadata_location)
                       .where(unregistered_t.c.namespace == ns_key(namespace), unregistered_t.c.name == name,
                              unregistered_t.c.at >= since)
                       .order_by(unregistered_t.c.id.desc()).limit(1)).first()
    return None if row is None else row[0]


def rename_pointer(conn: Connection, kind: str, src_ns, src: str, dst_ns, dst: str) -> bool:
    t = tables_t if kind == "table" else views_t
    return conn.execute(update(t).where(t.c.namespace == ns_key(src_ns), t.c.name == src)
                        .values(namespace=ns_key(dst_ns), name=dst)).rowcount == 1


def name_taken(conn: Connection, namespace, name: str) -> str | None:
    """'table' or 'view' if that identifier is in use, else None."""
    if table_pointer(conn, namespace, name) is not None:
        return "table"
    if view_pointer(conn, namespace, name) is not None:
        return "view"
    return None


# ---------------------------------------------------------------------------------------------- files

def file_io(location: str) -> FileIO:
    """The FileIO of the location's scheme: one per scheme for the process (made without properties, so one
    serves every location of that scheme; making it took about as long as writing a metadata file)."""
    return _file_io_of(urlsplit(location).scheme)


@functools.lru_cache(maxsize=16)
def _file_io_of(scheme: str) -> FileIO:
    return load_file_io({}, f"{scheme}://" if scheme else "/")


def read_table_metadata(location: str) -> TableMetadata:
    return FromInputFile.table_metadata(file_io(location).new_input(location))


def json_text(model) -> str:
    """The JSON form of table or view metadata, as the files and answers carry it. pyiceberg models format
    version 3 but refuses to write it (TableMetadataV3.model_dump_json raises); its fields (next-row-id, the
    snapshots' first-row-id and added-rows, the fields' initial-default and write-default) serialize as the
    spec names them through the base model's serializer."""
    if isinstance(model, TableMetadataV3):
        return IcebergBaseModel.model_dump_json(model, by_alias=True, exclude_none=True)
    return model.model_dump_json(by_alias=True, exclude_none=True)


def json_of(model) -> dict:
    return json.loads(json_text(model))


def write_table_metadata(metadata: TableMetadata, location: str) -> str:
    """Write a new metadata file (never over an existing one); returns its JSON text, so that an answer
    carrying the same metadata need not serialize it again."""
    text = json_text(metadata)
    _write_new(location, text.encode())
    return text


def _write_new(location: str, data: bytes) -> None:
    """A new file, complete (written and closed) before this returns, so before any pointer can name it; an
    existing file is never overwritten (FileExistsError). A local file is created with O_EXCL by the
    standard library: through pyiceberg's FileIO (pyarrow's local file system: make the directory, check
    that the file is absent, open a stream) its creation took three times as long as serializing the
    metadata, and the check-then-open could truncate a file created in between. Other schemes go through
    FileIO."""
    scheme = urlsplit(location).scheme
    if scheme not in ("", "file"):
        with file_io(location).new_output(location).create(overwrite=False) as f:
            f.write(data)
        return
    path = local_path(location)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, "xb") as out:
            out.write(data)
    except FileExistsError:
        raise FileExistsError(f"Cannot create file, already exists: {location}") from None


def read_view_metadata(location: str) -> ViewMetadata:
    with file_io(location).new_input(location).open() as f:
        return ViewMetadata.model_validate_json(f.read())


def write_view_metadata(metadata: ViewMetadata, location: str) -> None:
    _write_new(location, json_text(metadata).encode())


def metadata_version(location: str | None) -> int:
    """The leading number of a metadata file name (00003-uuid.metadata.json -> 3), -1 if none."""
    if not location:
        return -1
    head = location.rsplit("/", 1)[-1].split("-", 1)[0]
    return int(head) if head.isdigit() else -1


def new_metadata_location(base_location: str, previous: str | None, metadata_path: str | None = None) -> str:
    """`<location>/metadata/<NNNNN>-<uuid>.metadata.json`, numbered after the previous file (first: 00001);
    under ``metadata_path`` instead of `<location>/metadata` when given (a table's `write.metadata.path`)."""
    version = max(metadata_version(previous) + 1, 1)
    folder = metadata_path.rstrip("/") if metadata_path else f"{base_location.rstrip('/')}/metadata"
    return f"{folder}/{version:05d}-{uuid.uuid4()}.metadata.json"


WRITE_METADATA_PATH = "write.metadata.path"


def metadata_path_of(properties: dict[str, str] | None) -> str | None:
    """A table's `write.metadata.path` (where its metadata files go), None when not set."""
    value = (properties or {}).get(WRITE_METADATA_PATH)
    return value if isinstance(value, str) and value.strip() else None


M = TypeVar("M", TableMetadata, ViewMetadata)


@dataclass
class Loaded(Generic[M]):
    """The pointer of a table or a view and the metadata file it points at."""
    metadata_location: str
    metadata: M


def load_table(conn: Connection, namespace, name: str) -> Loaded[TableMetadata] | None:
    """Pointer and parsed TableMetadata of a table, or None if there is no such table."""
    loc = table_pointer(conn, namespace, name)
    return None if loc is None else Loaded(loc, read_table_metadata(loc))


def load_view(conn: Connection, namespace, name: str) -> Loaded[ViewMetadata] | None:
    """Pointer and parsed ViewMetadata of a view, or None if there is no such view."""
    loc = view_pointer(conn, namespace, name)
    return None if loc is None else Loaded(loc, read_view_metadata(loc))
