"""Catalog semantics: tables (TBL-01..TBL-11). Plain requests, judged by status, error type and state read back.

What the Java client does on its own side is not judged here: it merges the catalog's ``table-default.*`` and
``table-override.*`` properties into the properties it sends at create (``testDefaultTableProperties``,
``testOverrideTableProperties`` and their transaction forms), so what a catalog must do is keep the properties
a create (plain, staged, or a replace) gives - TBL-03. Metadata tables (``ns.t.snapshots``) are loaded by the
client too: the catalog answers 404 for the name, and the client then loads ``ns.t`` (TBL-04).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ctk.catalog.bodies import create_table_body, ident, schema
from ctk.catalog.capabilities import Capability
from ctk.catalog.facade import pages
from ctk.client.placement import STRAY
from ctk.client.transport import ns_path, table_path, view_path
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.checks.common import describe
from ctk.checks.semantics.grading import Kind
from ctk.checks.semantics.harness import NotApplicable, SemRun, error_type
from ctk.checks.semantics.reading import (NAME_TYPE_REQUIRED, acknowledged, body_of, columns, current_schema, load,
                                          meta)
from ctk.checks.semantics.registry import semantic

NO_TABLE = ("NoSuchTableException",)
EXISTS = ("AlreadyExistsException",)
NO_NS = ("NoSuchNamespaceException",)
# A 404 whose type makes Iceberg's Java client raise something other than NoSuchTableException on loadTable
# (ErrorHandlers.tableErrorHandler): it then neither reports a missing table nor falls back to a metadata table.
NOT_A_TABLE_404 = ("NoSuchNamespaceException", "NotFoundException")


# -- reading state -----------------------------------------------------------------------------------------------
def uuid_of(result: dict | None) -> Any:
    return meta(result).get("table-uuid")


def field_id(s: dict, name: str) -> Any:
    return next((f.get("id") for f in s.get("fields") or [] if isinstance(f, dict) and f.get("name") == name), None)


KIT_COLUMNS = columns(schema(), NAME_TYPE_REQUIRED)
WIDER_COLUMNS = columns(schema(extra=True), NAME_TYPE_REQUIRED)


def exists_status(t: SemRun, ns: tuple[str, ...], name: str) -> int | None:
    """tableExists' status, or None when the catalog does not advertise it."""
    d = t.ctx.discovery
    if d is not None and not d.supports("HEAD", "namespaces/{namespace}/tables/{table}"):
        return None
    status = t.send("HEAD", table_path(ns, name), label="read: table exists").status
    return None if status is None or status >= 500 else status


def listed(t: SemRun, ns: tuple[str, ...], kind: str = "tables") -> list[tuple[tuple[str, ...], str]] | None:
    """The identifiers listTables (``kind`` "views": listViews) gives for ``ns``, following its pages; None when
    a page could not be read."""
    items, problem = pages(t.client, f"namespaces/{ns_path(ns)}/{kind}", "identifiers", f"read: list {kind}")
    if problem:
        return None
    return [(tuple(str(p) for p in i.get("namespace") or []), str(i.get("name"))) for i in items
            if isinstance(i, dict)]


def listed_names(t: SemRun, ns: tuple[str, ...], kind: str = "tables") -> list[str] | None:
    items = listed(t, ns, kind)
    return None if items is None else [n for _, n in items]


def rename(t: SemRun, src: tuple[tuple[str, ...], str], dst: tuple[tuple[str, ...], str],
           label: str = "renameTable") -> Exchange:
    return t.send("POST", "tables/rename", {"source": ident(*src), "destination": ident(*dst)}, label=label)


def renamed_table(t: SemRun, stem: str) -> tuple[tuple[str, ...], str, dict, str, Exchange]:
    """A table created (and loaded back) in a fresh namespace, then renamed: (namespace, its first name, its load
    result, the name it was renamed to, the rename's exchange)."""
    ns = t.namespace(stem)
    src, loaded = t.table(ns)
    dst = t.unique("renamed")
    return ns, src, loaded, dst, rename(t, (ns, src), (ns, dst))


def drop(t: SemRun, ns: tuple[str, ...], name: str, purge: bool | None = None, label: str = "dropTable") -> Exchange:
    params = None if purge is None else {"purgeRequested": "true" if purge else "false"}
    return t.send("DELETE", table_path(ns, name), params=params, label=label)


Try = tuple[str, Exchange, tuple[int, ...], tuple[str, ...]]     # (what, its exchange, statuses, error types)


def status_problems(t: SemRun, tries: Sequence[Try]) -> list[str]:
    """What each try answered otherwise than its statuses and error types (`SemRun.expect`), named by what it
    was."""
    return [f"{what}: {pr}" for what, ex, statuses, types in tries if (pr := t.expect(ex, statuses, types))]


CREATED_LOADS = "an acknowledged createTable: the table loads (200)"


def loads_after(t: SemRun, ex: Exchange, what: str, ns: tuple[str, ...], name: str, expected: str,
                label: str = "read: load table",
                happened: Callable[[Exchange], str] = lambda got: f"loading it answered {describe(got)}"
                ) -> dict | Verdict:
    """The table's load answer (a JSON object) after ``ex``, the request under test (``what``), was acknowledged;
    or the verdict: `not_acknowledged`, or ``expected`` broken when the table then does not load (``happened``
    of the load)."""
    if not acknowledged(ex):
        return t.not_acknowledged(ex, what)
    got = load(t, ns, name, label)
    loaded = body_of(got)
    if loaded is None:
        return t.broken(expected, happened(got))
    return loaded


# -- TBL-01 ------------------------------------------------------------------------------------------------------
@semantic("TBL-01", "createTable", uses=("loadTable",), baseline=True)
def check_create_table(t: SemRun) -> Verdict:
    """The baseline of createTable: what its retry checks rest on (the answer, the table loading back with it),
    a handful of requests. Whether listTables lists it is LIST-01's: a broken listing does not hold back the
    createTable retry checks, which never list."""
    ns = t.namespace("tcreate")
    name, _, ex = t.create_valid("t", lambda n: (f"namespaces/{ns_path(ns)}/tables", create_table_body(n)),
                              "createTable")
    answered = meta(ex.json() if isinstance(ex.json(), dict) else None)
    loaded = loads_after(t, ex, "createTable", ns, name, CREATED_LOADS, happened=lambda got: (
        f"createTable answered {ex.status}; loading {'.'.join(ns)}.{name} answered {describe(got)}"))
    if isinstance(loaded, Verdict):
        return loaded
    m = meta(loaded)
    problems = []
    if not m.get("table-uuid"):
        problems.append("the loaded metadata has no table-uuid")
    elif answered.get("table-uuid") not in (None, m.get("table-uuid")):
        problems.append(f"createTable answered table-uuid {answered.get('table-uuid')}, the load "
                        f"{m.get('table-uuid')}")
    if columns(current_schema(m), NAME_TYPE_REQUIRED) != KIT_COLUMNS:
        problems.append(f"the loaded schema has columns {columns(current_schema(m), NAME_TYPE_REQUIRED)}, "
                        f"requested {KIT_COLUMNS}")
    if not m.get("location"):
        problems.append("the loaded metadata has no location")
    if problems:
        return t.broken("the created table loads with a table-uuid, the requested schema and a location",
                        "; ".join(problems))
    head = exists_status(t, ns, name)
    wrong = []
    if not answered.get("table-uuid") or columns(current_schema(answered), NAME_TYPE_REQUIRED) != KIT_COLUMNS:
        wrong.append("the createTable answer lacks the table's metadata (table-uuid, schema)")
    if ex.status != 200:
        wrong.append(f"createTable answered {ex.status}, not 200 (LoadTableResult)")
    if head is not None and head != 204:
        wrong.append(f"tableExists (HEAD) answered {head}, not 204")
    if wrong:
        return t.status_broken("createTable answers 200 with the table's metadata; tableExists 204",
                               "; ".join(wrong))
    return t.ok(f"created {'.'.join(ns)}.{name}: it loads with the same table-uuid and schema"
                + ("" if head is None else " and exists (HEAD 204)"))


# -- TBL-02 ------------------------------------------------------------------------------------------------------
@semantic("TBL-02", "createTable", uses=("loadTable",))
def check_create_existing_table(t: SemRun) -> Verdict:
    ns = t.namespace("texists")
    name, first = t.table(ns, properties={"ctk.mark": "first"})
    again = dict(create_table_body(name, {"ctk.mark": "second"}), schema=schema(extra=True))
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/tables", again, label="createTable (exists)")
    missing_ns = t.absent_namespace()
    nowhere = t.send("POST", f"namespaces/{ns_path(missing_ns)}/tables", create_table_body(STRAY),
                     label="createTable in a missing namespace")
    got = load(t, ns, name, "read: the existing table")
    loaded = body_of(got)
    if loaded is None:
        return t.broken("a table that exists is left as it was by a second create",
                        f"after the second create (answered {ex.status}) loading it answered {describe(got)}")
    m = meta(loaded)
    changed = []
    if m.get("table-uuid") != uuid_of(first):
        changed.append(f"table-uuid {uuid_of(first)} -> {m.get('table-uuid')}")
    if columns(current_schema(m), NAME_TYPE_REQUIRED) != KIT_COLUMNS:
        changed.append(f"schema columns now {columns(current_schema(m), NAME_TYPE_REQUIRED)}")
    if (m.get("properties") or {}).get("ctk.mark") != "first":
        changed.append(f"property ctk.mark now {(m.get('properties') or {}).get('ctk.mark')!r}")
    if changed:
        return t.broken("a second create of an existing table is refused and leaves it as it was (uuid, schema, "
                        "properties)",
                        f"the second create answered {ex.status}; " + "; ".join(changed))
    if acknowledged(ex):
        # the client was told its create happened: the table it asked for (wider schema, ctk.mark=second) is not
        # what loads - the existing one is (a 200 with the old object)
        return t.broken("a create of an existing table is refused (409): a client told it succeeded expects its "
                        "schema and properties", f"the second create answered {ex.status}; the table still loads "
                        f"with table-uuid {m.get('table-uuid')}, the first create's schema and ctk.mark=first")
    elsewhere = missing_namespace_create(t, nowhere, missing_ns, STRAY)
    if elsewhere is not None:
        return elsewhere
    problems = [p for p in (t.expect(ex, (409,), EXISTS), t.expect(nowhere, (404,), NO_NS)) if p]
    if problems:
        return t.status_broken("409 AlreadyExistsException for an existing table; 404 NoSuchNamespaceException "
                               "for a missing namespace", "; ".join(problems))
    return t.ok(f"a second create answered {answer_of(ex)} and changed nothing; a create in a missing namespace "
                f"answered {answer_of(nowhere)}")


def answer_of(ex: Exchange) -> str:
    """A refusal as seen: its status and error type."""
    kind = error_type(ex)
    return f"{ex.status}" + (f" {kind}" if kind else "")


def missing_namespace_create(t: SemRun, ex: Exchange, ns: tuple[str, ...], name: str,
                             kind: str = "table") -> Verdict | None:
    """The verdict on a create of ``name`` in the namespace ``ns`` that did not exist (answered ``ex``) when it
    made something (None: it made nothing). Acknowledged and the namespace (or the table) made: lenient, the
    documents' level (the catalog made what was asked and more); acknowledged and nothing loads: not done;
    refused and the namespace made: refused yet changed."""
    path = table_path(ns, name) if kind == "table" else view_path(ns, name)
    ns_now = t.send("GET", f"namespaces/{ns_path(ns)}", label="read: the missing namespace")
    made = t.send("GET", path, label=f"read: the {kind} created in the missing namespace")
    seen = f"afterwards the namespace {'.'.join(ns)} loads {ns_now.status} and the {kind} {made.status}"
    op = "createTable" if kind == "table" else "createView"
    if acknowledged(ex) and 200 in (ns_now.status, made.status):
        return t.lenient(f"{op} in a namespace that does not exist is refused (404 NoSuchNamespaceException)",
                         f"it answered {ex.status}; {seen}", "created in a missing namespace")
    if acknowledged(ex):
        return t.broken(f"an acknowledged {op}: the {kind} loads", f"it answered {ex.status}; {seen}")
    if ns_now.status == 200:
        return t.judge(Kind.REFUSED_CHANGED, f"a refused {op} in a namespace that does not exist creates nothing",
                       f"it answered {describe(ex)}; {seen}")
    return None


# -- TBL-03 ------------------------------------------------------------------------------------------------------
# What the Java client sends after merging `table-default.*` (default-key1/2) and `table-override.*`
# (override-key3/4) catalog properties with the ones a test gives: the catalog keeps every one.
CREATE_PROPERTIES = {"user": "someone", "created-at": "2022-02-25T00:38:19", "default-key1": "catalog-default-key1",
                     "default-key2": "catalog-overridden-key2", "override-key3": "catalog-override-key3",
                     "override-key4": "catalog-override-key4", "prop1": "val1"}
BUCKET = "bucket[16]"


def complete_body(name: str, location: str | None) -> dict:
    """createTable with CatalogTests' SPEC (bucket[16] of id) and WRITE_ORDER (bucket[16](id), id; ascending,
    nulls first), properties and (when given) a location."""
    body = create_table_body(name, CREATE_PROPERTIES)
    body["partition-spec"] = {"spec-id": 0, "fields": [
        {"source-id": 1, "field-id": 1000, "name": "id_bucket", "transform": BUCKET}]}
    body["write-order"] = {"order-id": 1, "fields": [
        {"source-id": 1, "transform": BUCKET, "direction": "asc", "null-order": "nulls-first"},
        {"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}
    if location:
        body["location"] = location
    return body


def missing_properties(m: dict, wanted: dict[str, str]) -> dict[str, Any]:
    props = m.get("properties") or {}
    return {k: props.get(k) for k, v in wanted.items() if props.get(k) != v}


def spec_and_order_problems(m: dict) -> list[str]:
    """What of CatalogTests' spec and order the metadata lacks, bound to its own schema's field id of ``id``."""
    problems = []
    source = field_id(current_schema(m), "id")
    spec = next((s for s in m.get("partition-specs") or [] if isinstance(s, dict)
                 and s.get("spec-id") == m.get("default-spec-id")), {})
    shape = [(f.get("source-id"), f.get("transform"), f.get("name")) for f in spec.get("fields") or []
             if isinstance(f, dict)]
    if shape != [(source, BUCKET, "id_bucket")]:
        problems.append(f"default partition spec {shape} (source-id, transform, name), expected "
                        f"[({source}, {BUCKET!r}, 'id_bucket')]")
    order = next((o for o in m.get("sort-orders") or [] if isinstance(o, dict)
                  and o.get("order-id") == m.get("default-sort-order-id")), {})
    fields = [(f.get("source-id"), f.get("transform"), f.get("direction"), f.get("null-order"))
              for f in order.get("fields") or [] if isinstance(f, dict)]
    want = [(source, BUCKET, "asc", "nulls-first"), (source, "identity", "asc", "nulls-first")]
    if fields != want:
        problems.append(f"default sort order {fields}, expected {want}")
    return problems


@semantic("TBL-03", "createTable", uses=("loadTable",))
def check_complete_create_table(t: SemRun) -> Verdict:
    """A create with spec, order, properties and a location, as ``buildTable(...).withLocation(...)
    .withPartitionSpec(...).withSortOrder(...).withProperties(...)`` sends it. The requested location is a
    sibling of one the catalog chose itself; a catalog that places tables itself may refuse it or put the table
    elsewhere (the compatibility kit asserts only that the table has a location)."""
    ns = t.namespace("tcomplete")
    _, placed = t.table(ns)
    base = str(meta(placed).get("location") or "").rstrip("/")
    name = t.unique("t")
    wanted = f"{base.rsplit('/', 1)[0]}/{name}_custom" if "/" in base else None
    path = f"namespaces/{ns_path(ns)}/tables"
    ex = t.send("POST", path, complete_body(name, wanted), label="createTable (spec, order, properties, location)")
    note = ""
    if wanted and ex.status is not None and 400 <= ex.status < 500 and ex.status != 409:
        note = f"; the requested location was refused ({describe(ex)}), the catalog places tables itself"
        ex = t.send("POST", path, complete_body(name, None), label="createTable (spec, order, properties)")
    loaded = loads_after(t, ex, "createTable with a spec, an order and properties", ns, name, CREATED_LOADS)
    if isinstance(loaded, Verdict):
        return loaded
    m = meta(loaded)
    problems = spec_and_order_problems(m)
    if columns(current_schema(m), NAME_TYPE_REQUIRED) != KIT_COLUMNS:
        problems.append(f"schema columns {columns(current_schema(m), NAME_TYPE_REQUIRED)}")
    if lost := missing_properties(m, CREATE_PROPERTIES):
        problems.append(f"properties given at create not kept: {lost}")
    if not m.get("location"):
        problems.append("no location")
    if problems:
        return t.broken("the table loads with the requested schema, partition spec, sort order (bound to its "
                        "schema's field ids), properties and a location", "; ".join(problems))
    where = m.get("location")
    if wanted and not note:
        note = "; at the requested location" if str(where).rstrip("/") == wanted else \
            f"; the catalog placed it at {where}, not at the requested {wanted}"
    return t.ok("the created table loads with the requested spec (bucket[16] of id), order, the properties given "
                "at create (as the Java client sends them after merging table-default.* / table-override.*)"
                + note)


def _create_updates(m: dict) -> list[dict]:
    """The updates a Java create transaction commits for staged metadata ``m`` (its requirement: assert-create)."""
    spec = next((s for s in m.get("partition-specs") or [] if s.get("spec-id") == m.get("default-spec-id")),
                {"spec-id": 0, "fields": []})
    order = next((o for o in m.get("sort-orders") or [] if o.get("order-id") == m.get("default-sort-order-id")),
                 {"order-id": 0, "fields": []})
    out: list[dict[str, Any]] = [{"action": "assign-uuid", "uuid": m.get("table-uuid")},
           {"action": "upgrade-format-version", "format-version": m.get("format-version")},
           {"action": "add-schema", "schema": current_schema(m)},
           {"action": "set-current-schema", "schema-id": -1},
           {"action": "add-spec", "spec": spec}, {"action": "set-default-spec", "spec-id": -1},
           {"action": "add-sort-order", "sort-order": order},
           {"action": "set-default-sort-order", "sort-order-id": -1},
           {"action": "set-location", "location": m.get("location")},
           {"action": "set-properties", "updates": dict(m.get("properties") or {})}]
    return [u for u in out if all(v is not None for v in u.values())]


@semantic("TBL-03", "createTable", uses=("loadTable", "updateTable"))
def check_transaction_properties(t: SemRun) -> Verdict:
    """Properties given to a create transaction (a staged createTable, then its commit with assert-create and the
    staged metadata as updates) and to a replace transaction (a commit with assert-table-uuid, a new schema and
    set-properties) are in the table afterwards. The merge of the catalog's default and override properties
    is the Java client's: the catalog keeps what it is sent."""
    ns = t.namespace("ttxnprops")
    name = t.unique("t")
    staged_props = {"default-key1": "catalog-default-key1", "default-key2": "catalog-overridden-key2",
                    "prop1": "val1"}
    body = dict(create_table_body(name, staged_props), **{"stage-create": True})
    staged = t.send("POST", f"namespaces/{ns_path(ns)}/tables", body, label="createTable (stage-create)")
    sm = meta(body_of(staged))
    if not sm.get("table-uuid"):
        return t.not_acknowledged(staged, "a staged createTable")
    commit = {"identifier": ident(ns, name), "requirements": [{"type": "assert-create"}],
              "updates": _create_updates(sm)}
    created = t.send("POST", table_path(ns, name), commit, label="commit the create transaction (assert-create)")
    got = loads_after(t, created, "committing the create transaction", ns, name,
                      "an acknowledged create transaction: the table loads", "read: the table the transaction created",
                      lambda _: "loading it did not answer 200")
    if isinstance(got, Verdict):
        return got
    if lost := missing_properties(meta(got), staged_props):
        return t.broken("the properties of a create transaction are in the created table",
                        f"after the commit (answered {created.status}) missing or changed: {lost}")
    replace_props = {"override-key3": "catalog-override-key3", "override-key4": "catalog-override-key4",
                     "prop1": "val2"}
    wider = dict(schema(extra=True), **{"schema-id": 1})
    replace = {"identifier": ident(ns, name), "requirements": [{"type": "assert-table-uuid",
                                                                "uuid": uuid_of(got)}],
               "updates": [{"action": "add-schema", "schema": wider}, {"action": "set-current-schema",
                                                                      "schema-id": -1},
                           {"action": "set-properties", "updates": replace_props}]}
    replaced = t.send("POST", table_path(ns, name), replace, label="commit a replace transaction")
    after = loads_after(t, replaced, "the replace transaction", ns, name, "an acknowledged replace: the table loads",
                        "read: the replaced table", lambda _: "loading it did not answer 200")
    if isinstance(after, Verdict):
        return after
    problems = []
    if lost := missing_properties(meta(after), replace_props):
        problems.append(f"properties of the replace missing or changed: {lost}")
    if uuid_of(after) != uuid_of(got):
        problems.append(f"table-uuid {uuid_of(got)} -> {uuid_of(after)}")
    if columns(current_schema(meta(after)), NAME_TYPE_REQUIRED) != WIDER_COLUMNS:
        problems.append(f"current schema columns {columns(current_schema(meta(after)), NAME_TYPE_REQUIRED)}")
    if problems:
        return t.broken("a replace transaction's schema and properties are in the table, with its table-uuid",
                        "; ".join(problems))
    return t.ok("the properties given to a create transaction and to a replace transaction are in the table")


@semantic("TBL-03", "createTable", uses=("loadTable",), needs=(Capability.FORMAT_V3,))
def check_create_table_default_values(t: SemRun) -> Verdict:
    """A v3 schema's column defaults (initial-default 12, write-default 10) are kept at create."""
    ns = t.namespace("tdefaults")
    name = t.unique("t")
    column = {"id": 1, "name": "colWithDefault", "type": "int", "required": True, "initial-default": 12,
              "write-default": 10}
    body = dict(create_table_body(name, {"format-version": "3"}),
                schema={"type": "struct", "schema-id": 0, "fields": [column]})
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/tables", body, label="createTable (v3, default values)")
    loaded = loads_after(t, ex, "createTable of a v3 table with column defaults", ns, name, CREATED_LOADS)
    if isinstance(loaded, Verdict):
        return loaded
    fields = [f for f in current_schema(meta(loaded)).get("fields") or [] if isinstance(f, dict)]
    shown = [(f.get("name"), f.get("type"), f.get("required"), f.get("initial-default"), f.get("write-default"))
             for f in fields]
    if shown != [("colWithDefault", "int", True, 12, 10)]:
        return t.broken("the loaded schema keeps the column's initial-default 12 and write-default 10",
                        f"it has (name, type, required, initial-default, write-default) {shown}")
    return t.ok("a v3 column's initial-default and write-default load back as given")


# -- TBL-04 ------------------------------------------------------------------------------------------------------
@semantic("TBL-04", "loadTable", uses=("createTable",))
def check_load_missing_table(t: SemRun) -> Verdict:
    ns = t.namespace("tmissing")
    base, _ = t.table(ns)
    missing = load(t, ns, t.unique("absent"), "loadTable of a missing table", judged=True)
    head = exists_status(t, ns, t.unique("absent"))
    nowhere = load(t, t.absent_namespace(), STRAY, "loadTable in a missing namespace", judged=True)
    metadata_table = load(t, ns + (base,), "snapshots", "loadTable of a metadata-table name (base.snapshots)",
                          judged=True)
    fallback = load(t, ns, base, "read: the base table a client falls back to")
    if any(ex.status is not None and 200 <= ex.status < 300 for ex in (missing, nowhere, metadata_table)):
        return t.broken("loadTable of a table that does not exist finds nothing",
                        f"missing table {describe(missing)}, missing namespace {describe(nowhere)}, "
                        f"{base}.snapshots {describe(metadata_table)}")
    problems = [p for p in (t.expect(missing, (404,), NO_TABLE), t.expect(nowhere, (404,), NO_TABLE)) if p]
    if metadata_table.status != 404 or error_type(metadata_table) in NOT_A_TABLE_404:
        problems.append(f"metadata-table name: {describe(metadata_table)} (a Java client falls back to the base "
                        "table only on 404 that is not NoSuchNamespaceException or NotFoundException)")
    if fallback.status != 200:
        problems.append(f"the base table {base} then loads {describe(fallback)}")
    if head is not None and head != 404:
        problems.append(f"tableExists (HEAD) of a missing table answered {head}")
    if problems:
        return t.status_broken("404 NoSuchTableException for a missing table, also in a missing namespace and for "
                               "a metadata-table name (then the base table loads)", "; ".join(problems))
    return t.ok("missing table, missing namespace and a metadata-table name each answered 404 "
                "NoSuchTableException; the base table loads" + ("" if head is None else "; HEAD 404"))


# -- TBL-05 ------------------------------------------------------------------------------------------------------
@semantic("TBL-05", "loadTable", uses=("createTable",), needs=(Capability.STORAGE,))
def check_load_missing_metadata_file(t: SemRun) -> Verdict:
    """The table's current metadata file is deleted through the kit's own storage (the catalog's FileIO
    settings, behind the loopback guard), the table loaded, and the file written back."""
    ns = t.namespace("tnometa")
    name, loaded = t.table(ns)
    location = loaded.get("metadata-location")
    if not isinstance(location, str) or not location:
        raise NotApplicable("the load answer carries no metadata-location: no metadata file to remove")
    try:
        io = t.client.storage_settings(loaded).file_io(str(meta(loaded).get("location") or location))
        with io.new_input(location).open() as f:
            content = f.read()
        io.delete(location)
        gone = not io.new_input(location).exists()
    except Exception as exc:  # noqa: BLE001 - storage out of reach: the check cannot set up the state
        return t.inconclusive(f"the kit could not remove the metadata file {location}: {type(exc).__name__}: "
                              f"{exc}")
    try:
        if not gone:
            return t.inconclusive(f"the metadata file {location} still exists after the kit deleted it")
        ex = load(t, ns, name, "loadTable (current metadata file deleted)", judged=True)
    finally:
        try:
            with io.new_output(location).create(overwrite=True) as f:
                f.write(content)
        except Exception:  # noqa: BLE001 - best effort: the check's namespace is removed anyway
            pass
    if ex.status is None or ex.status >= 500:
        return t.broken("loadTable of a table whose metadata file is gone answers 404 (or another 4xx), not 5xx "
                        "(a client retries a 5xx for a request that cannot succeed)", describe(ex))
    if ex.status == 200:
        return t.ok("the table loaded (200) without its metadata file: the catalog serves the metadata from a "
                    "copy of its own", classification="metadata served without the file")
    if ex.status != 404 or error_type(ex) not in ("NotFoundException",) + NO_TABLE:
        return t.status_broken("404 (NotFoundException or NoSuchTableException) for a table whose metadata file is "
                               "gone", describe(ex))
    return t.ok(f"with its metadata file deleted, loadTable answered {describe(ex)}")


# -- TBL-06 ------------------------------------------------------------------------------------------------------
@semantic("TBL-06", "renameTable", uses=("createTable", "loadTable"), baseline=True)
def check_rename_table(t: SemRun) -> Verdict:
    ns, src, loaded, dst, ex = renamed_table(t, "trename")
    if not acknowledged(ex):
        return t.not_acknowledged(ex, "renameTable")
    old = load(t, ns, src, "read: the source after the rename")
    new = load(t, ns, dst, "read: the destination after the rename")
    moved = body_of(new)
    if moved is None or uuid_of(moved) != uuid_of(loaded):
        return t.broken("after an acknowledged rename the destination loads the same table (table-uuid)",
                        f"renameTable answered {ex.status}; the destination answered {describe(new)}"
                        + ("" if moved is None else f" with table-uuid {uuid_of(moved)}, not {uuid_of(loaded)}"))
    if old.status != 404:
        return t.broken("after an acknowledged rename the source identifier is gone (404)",
                        f"loading {src} answered {describe(old)}")
    if ex.status != 204:
        return t.status_broken("renameTable answers 204", f"it answered {ex.status}")
    return t.ok("renameTable answered 204; the source is gone and the destination loads the same table-uuid")


@semantic("TBL-06", "renameTable", uses=("createTable", "loadTable", "dropTable"))
def check_drop_after_rename(t: SemRun) -> Verdict:
    """Table a renamed to b, a new table created as a, then b dropped with purge: a still loads, and (where the
    kit reaches the storage) its metadata file is still there."""
    ns, first, _, moved, ex = renamed_table(t, "tdropren")
    if not acknowledged(ex):
        return t.inconclusive(f"renameTable answered {describe(ex)}: nothing to build on")
    _, again = t.table(ns, first)
    purged = t.send_valid("DELETE", table_path(ns, moved), params={"purgeRequested": "true"},
                          label="dropTable (purge) of the renamed table")
    got = load(t, ns, first, "read: the table created under the old name")
    after = body_of(got)
    if after is None or uuid_of(after) is None or uuid_of(after) != uuid_of(again):
        return t.broken("purging a renamed table leaves the table created under its old name intact",
                        f"dropTable (purge) of {moved} answered {describe(purged)}; loading {first} answered "
                        f"{describe(got)}" + ("" if after is None else
                                              f" with table-uuid {uuid_of(after)}, created as {uuid_of(again)}"))
    if purged.status is not None and purged.status >= 500:
        return t.server_error(purged, "dropTable (purge) of the renamed table",
                              f"{first} (created under the old name) still loads with its table-uuid")
    if not acknowledged(purged):
        return t.not_acknowledged(purged, "dropTable (purge) of the renamed table")
    note = ""
    if t.capability(Capability.STORAGE).supported:
        location = str(after.get("metadata-location") or "")
        try:
            there = bool(location) and t.client.storage_settings(after).file_io(location).new_input(location).exists()
        except Exception as exc:  # noqa: BLE001 - storage unreadable here: judged by the load alone
            note, there = f"; its metadata file could not be checked ({type(exc).__name__})", True
        if not there:
            return t.broken("purging a renamed table leaves the files of the table created under its old name",
                            f"the metadata file {location} of {first} is gone")
        note = note or "; its metadata file is still there"
    return t.ok(f"after purging the renamed table, the table created under the old name still loads{note}")


# -- TBL-07 ------------------------------------------------------------------------------------------------------
@semantic("TBL-07", "renameTable", uses=("createTable", "loadTable"))
def check_rename_refused(t: SemRun) -> Verdict:
    ns = t.namespace("trenamebad")
    a, la = t.table(ns)
    b, lb = t.table(ns)
    ghost, target = t.unique("absent"), t.unique("target")
    no_source = rename(t, (ns, ghost), (ns, target), "renameTable (missing source)")
    missing_ns = t.absent_namespace()
    no_ns = rename(t, (ns, a), (missing_ns, STRAY), "renameTable (to a missing namespace)")
    taken = rename(t, (ns, a), (ns, b), "renameTable (onto an existing table)")
    changed = []
    for name, before in ((a, la), (b, lb)):
        got = body_of(load(t, ns, name, f"read: {name} after the refused renames"))
        if got is None or uuid_of(got) != uuid_of(before):
            changed.append(f"{name} no longer loads with table-uuid {uuid_of(before)}")
    if load(t, ns, target, "read: the target of the missing source").status == 200:
        changed.append(f"{target} (the target of the missing source) now exists")
    if t.send("GET", f"namespaces/{ns_path(missing_ns)}", label="read: the missing namespace").status == 200:
        changed.append(f"the namespace {'.'.join(missing_ns)} now exists")
    if changed:
        return t.broken("a refused rename changes nothing",
                        f"answers {no_source.status}, {no_ns.status}, {taken.status}; " + "; ".join(changed))
    problems = status_problems(t, [("missing source", no_source, (404,), NO_TABLE),
                                   ("missing target namespace", no_ns, (404,), NO_NS),
                                   ("existing target", taken, (409,), EXISTS)])
    if problems:
        return t.status_broken("404 NoSuchTableException (missing source), 404 NoSuchNamespaceException (missing "
                               "target namespace), 409 AlreadyExistsException (existing target)", "; ".join(problems))
    return t.ok("renames of a missing source (404), to a missing namespace (404) and onto an existing table (409) "
                "were refused and changed nothing")


# -- TBL-08 ------------------------------------------------------------------------------------------------------
def _gone(t: SemRun, ns: tuple[str, ...], name: str, ex: Exchange, what: str) -> Verdict | None:
    """The verdict when an acknowledged drop left the table (None: it is gone)."""
    got = load(t, ns, name, f"read: the table after {what}")
    if got.status != 404:
        return t.broken(f"an acknowledged {what}: the table is gone (load 404)",
                        f"{what} answered {ex.status}; loading it then answered {describe(got)}")
    names = listed_names(t, ns)
    if names is not None and name in names:
        return t.broken(f"after {what} the table is no longer listed", f"listTables still lists {name!r}")
    head = exists_status(t, ns, name)
    if head is not None and head != 404:
        return t.status_broken("tableExists answers 404 for a dropped table", f"HEAD answered {head}")
    return None


@semantic("TBL-08", "dropTable", uses=("createTable", "loadTable", "listTables"), baseline=True)
def check_drop_table(t: SemRun) -> Verdict:
    ns = t.namespace("tdrop")
    name, _ = t.table(ns)
    ex = drop(t, ns, name)
    if not acknowledged(ex):
        return t.not_acknowledged(ex, "dropTable")
    if (v := _gone(t, ns, name, ex, "dropTable")) is not None:
        return v
    if ex.status != 204:
        return t.status_broken("dropTable answers 204", f"it answered {ex.status}")
    return t.ok("dropTable answered 204; the table is gone (load 404, not listed)")


@semantic("TBL-08", "dropTable", uses=("createTable", "loadTable", "listTables"))
def check_drop_purge_and_missing(t: SemRun) -> Verdict:
    ns = t.namespace("tpurge")
    name, _ = t.table(ns)
    ex = drop(t, ns, name, purge=True, label="dropTable (purgeRequested)")
    if not acknowledged(ex):
        return t.not_acknowledged(ex, "dropTable with purgeRequested")
    if (v := _gone(t, ns, name, ex, "dropTable with purgeRequested")) is not None:
        return v
    missing = drop(t, ns, t.unique("absent"), label="dropTable of a missing table")
    problems = [p for p in (t.expect(ex, (204,)), t.expect(missing, (404,), NO_TABLE)) if p]
    if problems:
        return t.status_broken("204 for a purge-drop; 404 NoSuchTableException for a missing table",
                               "; ".join(problems))
    return t.ok("a purge-drop answered 204 and the table is gone; dropping a missing table answered 404 "
                "NoSuchTableException")


# -- TBL-09 ------------------------------------------------------------------------------------------------------
@semantic("TBL-09", "registerTable", uses=("createTable", "loadTable", "dropTable"), baseline=True)
def check_register_table(t: SemRun) -> Verdict:
    """As the compatibility kit does: create, drop without purge, register the metadata file under the same
    name. The kit keeps a copy of the file through its own storage and writes it back after the drop, for
    catalogs that delete a dropped table's metadata (the spec leaves that open)."""
    from ctk.catalog.tables import KeptMetadata

    ns = t.namespace("tregister")
    props = {"user": "someone", "created-at": "2023-01-15T00:00:01"}
    name, original = t.table(ns, properties=props)
    location = original.get("metadata-location")
    if not isinstance(location, str) or not location:
        raise NotApplicable("the load answer carries no metadata-location to register")
    kept = KeptMetadata(t.client, [original])
    dropped = drop(t, ns, name, purge=False, label="setup: dropTable (no purge)")
    if not acknowledged(dropped) or load(t, ns, name, "setup: dropped?").status != 404:
        return t.inconclusive(f"dropping the table to register again answered {describe(dropped)}, and it did not "
                              "load 404 afterwards")
    try:
        kept.restore()
    except Exception as exc:  # noqa: BLE001 - PrerequisiteError naming the file
        return t.inconclusive(str(exc))
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/register", {"name": name, "metadata-location": location},
                label="registerTable")
    if not acknowledged(ex):
        why = f" (the catalog deleted it on drop; the kit kept no copy: {kept.problem})" if kept.problem else ""
        return t.inconclusive(f"registerTable of {location} answered {describe(ex)}{why}: nothing acknowledged")
    got = load(t, ns, name, "read: the registered table")
    loaded = body_of(got)
    if loaded is None:
        return t.broken("an acknowledged registerTable: the table loads", f"loading it answered {describe(got)}")
    m, o = meta(loaded), meta(original)
    problems = []
    if m.get("table-uuid") != o.get("table-uuid"):
        problems.append(f"table-uuid {m.get('table-uuid')}, registered {o.get('table-uuid')}")
    if columns(current_schema(m), NAME_TYPE_REQUIRED) != columns(current_schema(o), NAME_TYPE_REQUIRED):
        problems.append(f"schema columns {columns(current_schema(m), NAME_TYPE_REQUIRED)}")
    if lost := missing_properties(m, props):
        problems.append(f"properties missing or changed: {lost}")
    if [s.get("snapshot-id") for s in m.get("snapshots") or []] != \
            [s.get("snapshot-id") for s in o.get("snapshots") or []]:
        problems.append("other snapshots than the registered metadata's")
    if problems:
        return t.broken("the registered table loads with the registered metadata (table-uuid, schema, properties, "
                        "snapshots)", "; ".join(problems))
    if ex.status != 200:
        return t.status_broken("registerTable answers 200 (LoadTableResult)", f"it answered {ex.status}")
    return t.ok("registerTable of a dropped table's metadata file answered 200; the table loads with that metadata"
                + (f" (the kit wrote back {len(kept.restored)} deleted metadata file)" if kept.restored else ""))


@semantic("TBL-09", "registerTable", uses=("createTable", "loadTable"))
def check_register_refused(t: SemRun) -> Verdict:
    ns = t.namespace("tregbad")
    name, original = t.table(ns)
    location = original.get("metadata-location")
    if not isinstance(location, str) or not location:
        raise NotApplicable("the load answer carries no metadata-location to register")
    path = f"namespaces/{ns_path(ns)}/register"
    taken = t.send("POST", path, {"name": name, "metadata-location": location},
                   label="registerTable (the name is taken)")
    other = t.unique("t")
    ghost_location = location.rsplit("/", 1)[0] + "/99999-ctk-absent.metadata.json"
    nothing = t.send("POST", path, {"name": other, "metadata-location": ghost_location},
                     label="registerTable (no such metadata file)")
    after = body_of(load(t, ns, name, "read: the existing table"))
    problems = []
    if after is None or uuid_of(after) != uuid_of(original) or \
            after.get("metadata-location") != location:
        problems.append("the existing table no longer loads with its table-uuid and metadata-location")
    ghost = load(t, ns, other, "read: the name registered to a missing file")
    if ghost.status == 200:
        problems.append(f"{other} (registered to a missing metadata file) loads")
    if problems:
        return t.broken("a refused registration registers nothing and changes nothing",
                        f"answers {taken.status}, {nothing.status}; " + "; ".join(problems))
    if acknowledged(nothing):
        return t.broken("a registration of a metadata file that does not exist is refused (4xx)",
                        f"it answered {nothing.status} (and the name does not load: {describe(ghost)})")
    wrong = []
    if (p := t.expect(taken, (409,), EXISTS)):
        wrong.append(f"name taken: {p}")
    if nothing.status is None or not 400 <= nothing.status < 500:
        wrong.append(f"missing metadata file: {describe(nothing)}")
    if wrong:
        return t.status_broken("409 AlreadyExistsException for a name that is taken; a 4xx for a metadata file that "
                               "does not exist", "; ".join(wrong))
    return t.ok(f"registering a taken name answered 409 AlreadyExistsException, a missing metadata file "
                f"{describe(nothing)}; nothing changed")


# -- TBL-10 ------------------------------------------------------------------------------------------------------
@semantic("TBL-10", "createTable", uses=("loadTable", "listTables", "dropTable"),
          needs=(Capability.NAMES_WITH_DOT_OR_SLASH,))
def check_table_names_with_dot_or_slash(t: SemRun) -> Verdict:
    ns = t.namespace("tnames")
    problems = []
    for stem in ("ta.ble", "tab/le"):
        name = t.unique(stem)
        ex = t.send("POST", f"namespaces/{ns_path(ns)}/tables", create_table_body(name),
                    label=f"createTable {name!r}")
        if ex.status != 200:
            problems.append(f"create {name!r}: {describe(ex)}")
            continue
        got = body_of(load(t, ns, name, f"read: load {name!r}"))
        names = listed_names(t, ns) or []
        dropped = drop(t, ns, name, label=f"dropTable {name!r}")
        gone = load(t, ns, name, "read: dropped?")
        if got is None or columns(current_schema(meta(got)), NAME_TYPE_REQUIRED) != KIT_COLUMNS or name not in names \
                or not acknowledged(dropped) or gone.status != 404:
            problems.append(f"{name!r}: load {'200' if got is not None else 'failed'}, listed {name in names}, "
                            f"drop {dropped.status}, load after drop {gone.status}")
    if problems:
        return t.broken("a table name holding '.' or '/' round-trips (create, load, list, drop)", "; ".join(problems))
    return t.ok("tables named with '.' and '/' were created, loaded, listed and dropped by their exact names")


# -- TBL-11 ------------------------------------------------------------------------------------------------------
@semantic("TBL-11", "createTable", uses=("renameTable", "loadTable"))
def check_unique_location(t: SemRun) -> Verdict:
    ns, first, _, moved, ex = renamed_table(t, "tunique")
    if not acknowledged(ex):
        return t.inconclusive(f"renameTable answered {describe(ex)}: nothing to build on")
    _, again = t.table(ns, first)
    renamed = body_of(load(t, ns, moved, "read: the renamed table"))
    if renamed is None:
        return t.inconclusive("the renamed table did not load: its location cannot be compared")
    old, new = meta(renamed).get("location"), meta(again).get("location")
    if not old or not new:
        return t.inconclusive("a load answer carries no location to compare")
    if str(old).rstrip("/") == str(new).rstrip("/"):
        return t.broken("a table created under a name another table was renamed away from gets a location of its "
                        "own", f"both {first} and {moved} are at {old}")
    return t.ok(f"the new {first} is at {new}, the renamed table stays at {old}")
