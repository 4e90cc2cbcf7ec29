"""Catalog semantics: views (VIEW-01..VIEW-08). Plain requests, judged by status, error type and state read back.

Every check needs the capability ``views`` (the view endpoints advertised in /v1/config). What Iceberg's
``ViewCatalogTests`` checks in the Java client itself (a builder's preconditions, ``sqlFor`` lookups, catalog-level
``view-default.`` / ``view-override.`` properties) is judged here by what reaches the catalog: the request a client
sends when the precondition does not hold on its side, or the properties it then sends.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from ctk.catalog.capabilities import Capability
from ctk.catalog.cases import spec_operation
from ctk.client.placement import STRAY
from ctk.client.transport import ns_path, table_path, view_path
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.checks.common import describe
from ctk.checks.semantics.grading import Kind
from ctk.checks.semantics.harness import SemRun
from ctk.checks.semantics.reading import acknowledged, current_version, load_view, meta, result
from ctk.checks.semantics.registry import semantic
from ctk.checks.semantics.tables import Try, answer_of, missing_namespace_create, status_problems

VIEWS = (Capability.VIEWS,)
NO_VIEW = ("NoSuchViewException",)
NO_TABLE = ("NoSuchTableException",)
NO_NS = ("NoSuchNamespaceException",)
EXISTS = ("AlreadyExistsException",)
# a 400 an Iceberg Java client raises as IllegalArgumentException (the type named so) or BadRequestException
BAD_ARGUMENT = ("IllegalArgumentException", "BadRequestException", "ValidationException")

# The schemas of ViewCatalogTests: SCHEMA (id 5: a catalog assigns the view's first schema id 0) and OTHER_SCHEMA
SCHEMA = {"type": "struct", "schema-id": 5, "fields": [
    {"id": 3, "name": "id", "required": True, "type": "int", "doc": "unique ID"},
    {"id": 4, "name": "data", "required": True, "type": "string"}]}
OTHER_SCHEMA = {"type": "struct", "schema-id": 7, "fields": [
    {"id": 1, "name": "some_id", "required": True, "type": "int"}]}
SQL = "select * from ns.tbl"


# -- bodies ---------------------------------------------------------------------------------------------------
def rep(dialect: str | None, sql: str = SQL) -> dict:
    out = {"type": "sql", "sql": sql}
    if dialect is not None:
        out["dialect"] = dialect
    return out


def version(ns: tuple[str, ...] | None, reps: list[dict], version_id: int = 1, schema_id: int = 0,
            catalog: str | None = None, operation: str = "create") -> dict:
    v: dict[str, Any] = {"version-id": version_id, "schema-id": schema_id, "timestamp-ms": int(time.time() * 1000),
                         "summary": {"engine-name": "ctk", "operation": operation}, "representations": reps}
    if ns is not None:
        v["default-namespace"] = list(ns)
    if catalog is not None:
        v["default-catalog"] = catalog
    return v


def create_body(ns: tuple[str, ...], name: str, reps: list[dict] | None = None, schema: dict | None = None,
                properties: dict[str, str] | None = None, location: str | None = None,
                catalog: str | None = None) -> dict:
    s = dict(schema or SCHEMA)
    body: dict[str, Any] = {"name": name, "schema": s,
                            "view-version": version(ns, reps or [rep("spark")], schema_id=s["schema-id"],
                                                    catalog=catalog),
                            "properties": dict(properties or {})}
    if location is not None:
        body["location"] = location
    return body


def commit_body(ns: tuple[str, ...], name: str, uuid: str | None, updates: Sequence[Any]) -> dict:
    reqs = [{"type": "assert-view-uuid", "uuid": uuid}] if uuid else []
    return {"identifier": {"namespace": list(ns), "name": name}, "requirements": reqs, "updates": list(updates)}


def new_version_updates(ns: tuple[str, ...], reps: list[dict], schema: dict | None = None, version_id: int = 2,
                        catalog: str | None = None) -> list[dict]:
    """What a Java client's replaceVersion sends: add-schema when the schema is new (the version then names the
    last added one, -1), the version, and set-current-view-version -1 (the last added)."""
    ups: list[dict] = []
    if schema is not None:
        ups.append({"action": "add-schema", "schema": schema})
    ups.append({"action": "add-view-version", "view-version": version(
        ns, reps, version_id, -1 if schema is not None else 0, catalog, "replace")})
    ups.append({"action": "set-current-view-version", "view-version-id": -1})
    return ups


# -- reading --------------------------------------------------------------------------------------------------
def fields(schema: Any) -> list[tuple]:
    items = schema.get("fields") if isinstance(schema, dict) else None
    return [(f.get("id"), f.get("name"), f.get("type"), f.get("required")) for f in items or [] if isinstance(f, dict)]


def schema_of(m: dict, schema_id: Any) -> dict:
    return next((s for s in m.get("schemas") or [] if isinstance(s, dict) and s.get("schema-id") == schema_id), {})


def reps_of(v: dict) -> list[tuple]:
    return [(r.get("type"), r.get("dialect"), r.get("sql")) for r in v.get("representations") or []
            if isinstance(r, dict)]


def log_ids(m: dict) -> list:
    return [e.get("version-id") for e in m.get("version-log") or [] if isinstance(e, dict)]


def version_ids(m: dict) -> list:
    return sorted(v.get("version-id") for v in m.get("versions") or [] if isinstance(v, dict))


def same_view(a: dict, b: dict) -> list[str]:
    """The parts of view metadata that differ between two reads (empty: the same view, unchanged)."""
    keys = ("view-uuid", "current-version-id", "versions", "version-log", "schemas", "properties", "location")
    return [k for k in keys if a.get(k) != b.get(k)]


def make_view(t: SemRun, ns: tuple[str, ...], reps: list[dict] | None = None, schema: dict | None = None,
              properties: dict[str, str] | None = None, catalog: str | None = None) -> tuple[str, dict]:
    """A view created (with these, else the defaults of ``create_body``) and loaded back: (name, load result)."""
    name = t.unique("v")
    return t.view(ns, name, body=create_body(ns, name, reps, schema, properties, catalog=catalog))


def offers(t: SemRun, operation: str) -> bool:
    d = t.ctx.discovery
    if d is None:
        return True
    op = spec_operation(operation)
    return d.supports(op.method.upper(), op.template)


def commit(t: SemRun, ns: tuple[str, ...], name: str, uuid: str | None, updates: Sequence[Any],
           label: str = "replaceView", invalid: str | None = None) -> Exchange:
    """A replaceView; ``invalid`` names what the OpenAPI request schema forbids in a body sent so on purpose."""
    return t.send("POST", view_path(ns, name), commit_body(ns, name, uuid, updates), label=label, invalid=invalid)


def uuid_of(body: dict) -> str | None:
    u = meta(body).get("view-uuid")
    return u if isinstance(u, str) else None


# == VIEW-01: create ==========================================================================================
@semantic("VIEW-01", "createView", uses=("loadView", "viewExists"), needs=VIEWS, baseline=True)
def check_create_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_create")
    name, body, ex = t.create_valid("v", lambda n: (f"namespaces/{ns_path(ns)}/views",
                                                    create_body(ns, n, schema={**SCHEMA, "schema-id": 0})),
                                    "createView")
    if not acknowledged(ex):
        return t.not_acknowledged(ex, "createView")
    got = load_view(t, ns, name)
    lv = result(got)
    if lv is None:
        return t.broken("an acknowledged createView: the view loads back (200 with its metadata)",
                        f"createView answered {ex.status}; loadView answered {describe(got)}")
    m, answered = meta(lv), meta(ex.json())
    cur = current_version(m)
    problems = []
    if answered.get("view-uuid") and m.get("view-uuid") != answered.get("view-uuid"):
        problems.append(f"view-uuid {m.get('view-uuid')} (created {answered.get('view-uuid')})")
    if reps_of(cur) != reps_of(body["view-version"]):
        problems.append(f"current version's representations {reps_of(cur)}")
    if cur.get("default-namespace") != list(ns):
        problems.append(f"default-namespace {cur.get('default-namespace')!r}")
    if fields(schema_of(m, cur.get("schema-id"))) != fields(SCHEMA):
        problems.append(f"the current version's schema has fields {fields(schema_of(m, cur.get('schema-id')))}")
    if len(m.get("versions") or []) != 1 or log_ids(m) != [cur.get("version-id")]:
        problems.append(f"versions {version_ids(m)}, version-log {log_ids(m)} (one version, logged once)")
    if problems:
        return t.broken("the created view loads with the version, schema and SQL it was created with",
                        "; ".join(problems))
    head = t.send("HEAD", view_path(ns, name), label="read: viewExists") if offers(t, "viewExists") else None
    if head is not None and head.status != 204:
        return t.status_broken("viewExists answers 204 for a view that exists", f"HEAD answered {describe(head)}")
    if ex.status != 200:
        return t.status_broken("createView answers 200 (LoadViewResult)", f"it answered {ex.status}")
    return t.ok("createView answered 200; the view loads with its version, schema and SQL"
                + ("" if head is None else "; viewExists 204"))


@semantic("VIEW-01", "createView", uses=("loadView",), needs=VIEWS)
def check_complete_create_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_complete")
    _, sibling = t.view(ns)
    base = str(meta(sibling).get("location") or "").rstrip("/")
    location = f"{base}_complete" if base else None
    name = t.unique("v")
    props = {"prop1": "val1", "prop2": "val2"}
    reps = [rep("spark"), rep("trino", SQL + " using X")]
    body = create_body(ns, name, reps, SCHEMA, props, location, catalog="ctk_catalog")
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/views", body, label="createView (complete)")
    if ex.status != 200:
        return t.inconclusive(f"createView with two dialects, a location, properties and a default catalog "
                              f"answered {describe(ex)}")
    lv = result(load_view(t, ns, name))
    if lv is None:
        return t.broken("an acknowledged createView: the view loads back", "loadView did not answer 200")
    m = meta(lv)
    cur = current_version(m)
    problems = []
    wrong = {k: (m.get("properties") or {}).get(k) for k, v in props.items()
             if (m.get("properties") or {}).get(k) != v}
    if wrong:
        problems.append(f"properties {wrong} (given {props})")
    if sorted(reps_of(cur)) != sorted(reps_of({"representations": reps})):
        problems.append(f"the SQL per dialect is {reps_of(cur)} (given {reps_of({'representations': reps})})")
    if cur.get("default-catalog") != "ctk_catalog" or cur.get("default-namespace") != list(ns):
        problems.append(f"default-catalog {cur.get('default-catalog')!r}, default-namespace "
                        f"{cur.get('default-namespace')!r}")
    if fields(schema_of(m, cur.get("schema-id"))) != fields(SCHEMA):
        problems.append("the current version's schema is not the one given")
    if len(m.get("versions") or []) != 1 or len(log_ids(m)) != 1:
        problems.append(f"versions {version_ids(m)}, version-log {log_ids(m)}")
    if problems:
        return t.broken("a view created with two dialects, properties, a default catalog and a location loads "
                        "with all of them", "; ".join(problems))
    notes = []
    if location is not None and m.get("location") != location:
        notes.append(f"the catalog put the view at {m.get('location')!r}, not the requested {location!r} (a "
                     "catalog may override a requested location)")
    if cur.get("schema-id") != 0 or cur.get("version-id") != 1:
        return t.status_broken("the first version is version 1 on schema 0 (a catalog assigns the ids of a new "
                               "view, whatever schema-id the request carried)",
                               f"version {cur.get('version-id')} on schema {cur.get('schema-id')}")
    return t.ok("the view loads with both dialects' SQL, its properties, default catalog and namespace, as version "
                "1 on schema 0" + (f"; {notes[0]}" if notes else ""))


@semantic("VIEW-01", "createView", uses=("loadView",), needs=VIEWS)
def check_view_properties_at_create(t: SemRun) -> Verdict:
    ns = t.namespace("view_props")
    props = {"key2": "catalog-overridden-key2", "prop1": "val1", "key4": "catalog-overridden-key4"}
    _, lv = make_view(t, ns, properties=props)
    got = meta(lv).get("properties") or {}
    wrong = {k: got.get(k) for k, v in props.items() if got.get(k) != v}
    if wrong:
        return t.broken(f"the properties a view is created with load back: {props}", f"loadView shows {got!r}")
    config = [k for part in ("defaults", "overrides")
              for k in ((getattr(t.ctx.discovery, "config", None) or {}).get(part) or {})
              if str(k).startswith(("view-default.", "view-override."))]
    return t.ok("the properties given at createView load back; merging catalog-level view-default.* and "
                "view-override.* properties into them is the Java client's work before it sends the request"
                + (f" (this catalog advertises {sorted(config)})" if config else ""))


@semantic("VIEW-01", "createView", uses=("loadView",), needs=VIEWS)
def check_view_custom_metadata_location(t: SemRun) -> Verdict:
    ns = t.namespace("view_metapath")
    _, sibling = t.view(ns)
    base = str(meta(sibling).get("location") or "").rstrip("/")
    if not base:
        return t.inconclusive("the view created first has no location to place another beside")
    location, custom = f"{base}_custom", f"{base}_custom/custom-location"
    name = t.unique("v")
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/views",
                create_body(ns, name, properties={"write.metadata.path": custom}, location=location),
                label="createView with write.metadata.path")
    if ex.status != 200:
        return t.inconclusive(f"createView with write.metadata.path answered {describe(ex)}")
    lv = result(load_view(t, ns, name))
    if lv is None:
        return t.broken("an acknowledged createView: the view loads back", "loadView did not answer 200")
    if (meta(lv).get("properties") or {}).get("write.metadata.path") != custom:
        return t.broken("the view keeps its write.metadata.path property",
                        f"properties {meta(lv).get('properties')!r}")
    where = str(lv.get("metadata-location") or "")
    if not where.startswith(custom.rstrip("/") + "/"):
        return t.status_broken(f"the view's metadata file is written under write.metadata.path ({custom})",
                               f"metadata-location {where!r}")
    return t.ok(f"the metadata file went under write.metadata.path: {where}")


# == VIEW-02: create refused ==================================================================================
@semantic("VIEW-02", "createView", uses=("loadView",), needs=VIEWS)
def check_create_view_errors(t: SemRun) -> Verdict:
    ns = t.namespace("view_errors")
    name = t.unique("v")
    views = f"namespaces/{ns_path(ns)}/views"
    no_schema = create_body(ns, name)
    del no_schema["schema"]
    no_default_ns = create_body(ns, name)
    del no_default_ns["view-version"]["default-namespace"]
    # (what, body, what the OpenAPI request schema forbids in it: sent as X-Ctk-Invalid; None: a valid body that
    # only the view spec's rules refuse)
    cases: list[tuple[str, dict, str | None]] = [
        ("without a schema", no_schema, "createView without the required schema"),
        ("without a default namespace", no_default_ns, "view-version without the required default-namespace"),
        ("with two queries for dialect trino", create_body(ns, name, [rep("trino"), rep("trino")]), None),
        ("with a representation without a dialect", create_body(ns, name, [rep(None)]),
         "a SQL representation without the required dialect"),
    ]
    tries: list[Try] = [(f"createView {what}", t.send("POST", views, b, label=f"createView {what}", invalid=bad),
                         (400,), BAD_ARGUMENT) for what, b, bad in cases]
    # dialects spark and SPARK in one version: that they clash (compare case-insensitively) no source states (the
    # compatibility kit's testSqlForCaseInsensitive only looks SQL up case-insensitively); sent under a name of its
    # own and said in a note
    other = t.unique("v")
    cased = t.send("POST", views, create_body(ns, other, [rep("spark"), rep("SPARK", SQL + " using X")]),
                   label="createView with queries for dialects spark and SPARK")
    absent = t.absent_namespace()
    nowhere = t.send("POST", f"namespaces/{ns_path(absent)}/views", create_body(absent, STRAY),
                     label="createView in a missing namespace")
    tries.append(("createView in a namespace that does not exist", nowhere, (404,), NO_NS))
    after = load_view(t, ns, name, "read: nothing was created")
    accepted = [what for what, ex, _, _ in tries if ex.status is not None and 200 <= ex.status < 300]
    if after.status == 200 and not accepted:
        return t.judge(Kind.REFUSED_CHANGED, "refused creates create nothing",
                       f"every create was refused, yet {name} loads (200)")
    elsewhere = missing_namespace_create(t, nowhere, absent, STRAY, "view")
    if elsewhere is not None:
        return elsewhere
    problems = status_problems(t, tries)
    if problems:
        return t.status_broken("invalid creates answer 400 (IllegalArgumentException or BadRequestException), one "
                               "in a missing namespace 404 NoSuchNamespaceException",
                               "; ".join(problems) + (f"; afterwards {name} loads {after.status}" if accepted else ""))
    return t.ok(f"{len(tries)} invalid creates were refused (400, or 404 for the missing namespace); nothing was "
                "created", details={"notes": [f"a create with queries for dialects spark and SPARK answered "
                                              f"{describe(cased)}"]})


@semantic("VIEW-02", "createView", uses=("loadView",), needs=VIEWS)
def check_create_existing_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_exists")
    name, before = make_view(t, ns, [rep("trino")])
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/views",
                create_body(ns, name, [rep("spark")], OTHER_SCHEMA), label="createView (exists)")
    after = result(load_view(t, ns, name, "read: the existing view is unchanged"))
    if after is None:
        return t.broken("a second create leaves the existing view as it was", "the view no longer loads")
    changed = same_view(meta(before), meta(after))      # by content: a catalog may answer another file's path
    if changed:
        return t.broken("a second create leaves the existing view as it was",
                        f"create answered {ex.status}; changed: {changed}")
    if ex.status is not None and 200 <= ex.status < 300:
        # the client was told its create happened: the view it asked for (other schema, spark SQL) is not what
        # loads - the existing one is (a 200 with the old object)
        return t.broken("a create of an existing view is refused (409): a client told it succeeded expects its "
                        "schema and SQL", f"the second create answered {ex.status}; the view still loads as it "
                        f"was (view-uuid {meta(after).get('view-uuid')}, the first create's schema and SQL)")
    if (pr := t.expect(ex, (409,), EXISTS)):
        return t.status_broken("409 AlreadyExistsException for a view that exists", pr)
    return t.ok(f"creating a view that exists answered {answer_of(ex)} and changed nothing")


# == VIEW-03: one name space for tables and views ==============================================================
def _register_and_exists(t: SemRun, ns: tuple[str, ...], kind: str, name: str, location: Any) -> list[Try]:
    """The tries of VIEW-03 a catalog may not offer, of a ``kind`` ("view" or "table") onto ``name``, which the
    other kind holds: registering one there (409, with the ``location`` of one the check loaded; none: nothing
    valid to send) and asking whether one exists there (404)."""
    other = "table" if kind == "view" else "view"
    register, segment, path = (("registerView", "register-view", view_path) if kind == "view" else
                               ("registerTable", "register", table_path))
    out: list[Try] = []
    if offers(t, register) and location:
        out.append((f"{register} where a {other} exists",
                    t.send("POST", f"namespaces/{ns_path(ns)}/{segment}", {"name": name, "metadata-location": location},
                           label=f"{register} onto a {other}'s name"), (409,), EXISTS))
    if offers(t, f"{kind}Exists"):
        out.append((f"{kind}Exists of a {other}", t.send("HEAD", path(ns, name), label=f"{kind}Exists of a {other}"),
                    (404,), ()))
    return out


def _judge_clash(t: SemRun, tries: Sequence[Try], harm: list[str], unchanged: str, refused: str, done: str
                 ) -> Verdict:
    """VIEW-03's verdict: operations onto the other kind's name that changed something (``harm``) break
    ``unchanged``; then each try's status and type (``refused``)."""
    if harm:
        answered = ", ".join(f"{what} answered {ex.status}" for what, ex, _, _ in tries)
        return t.broken(unchanged, f"{answered}; {'; '.join(harm)}")
    problems = status_problems(t, tries)
    if problems:
        return t.status_broken(refused, "; ".join(problems))
    return t.ok(done)


@semantic("VIEW-03", "createView", uses=("createTable", "loadTable", "loadView", "replaceView", "renameView"),
          needs=VIEWS)
def check_view_onto_table_name(t: SemRun) -> Verdict:
    ns = t.namespace("view_clash")
    table, tbefore = t.table(ns)
    vname, vbefore = t.view(ns)
    tries: list[Try] = [
        ("createView (or createOrReplace) where a table exists",
         t.send("POST", f"namespaces/{ns_path(ns)}/views", create_body(ns, table, [rep("spark")], OTHER_SCHEMA),
                label="createView onto a table's name"), (409,), EXISTS),
        ("replaceView of a table's name",
         commit(t, ns, table, None, new_version_updates(ns, [rep("spark")], OTHER_SCHEMA),
                "replaceView of a table's name"), (404,), NO_VIEW),
        ("loadView of a table", load_view(t, ns, table, "loadView of a table", judged=True), (404,), NO_VIEW),
        ("renameView onto a table",
         t.send("POST", "views/rename", {"source": {"namespace": list(ns), "name": vname},
                                         "destination": {"namespace": list(ns), "name": table}},
                label="renameView onto a table"), (409,), EXISTS),
    ]
    tries += _register_and_exists(t, ns, "view", table, vbefore.get("metadata-location"))
    tafter = t.send("GET", table_path(ns, table), label="read: the table is unchanged")
    vafter = result(load_view(t, ns, vname, "read: the view is unchanged"))
    ghost = load_view(t, ns, table, "read: no view of the table's name")
    tbody = tafter.json() if tafter.status == 200 else None
    harm = []
    if ghost.status == 200:
        harm.append(f"a view named {table} now loads beside the table of that name")
    if not isinstance(tbody, dict) or tbody.get("metadata-location") != tbefore.get("metadata-location"):
        harm.append(f"the table now loads {describe(tafter)}"
                    + (f" with metadata-location {tbody.get('metadata-location')}" if isinstance(tbody, dict) else ""))
    if vafter is None or vafter.get("metadata-location") != vbefore.get("metadata-location"):
        harm.append("the view that was renamed onto the table no longer loads as it was")
    return _judge_clash(t, tries, harm, "a view operation onto a table's name changes neither the table nor the view",
                        "409 AlreadyExistsException for a view onto a table's name, 404 NoSuchViewException for "
                        "loading or replacing a table as a view",
                        f"{len(tries)} view operations onto a table's name were refused (409 / 404); the table and "
                        "the view are unchanged")


def staged_commit_updates(m: dict) -> list[dict]:
    """The updates a client commits a staged create with: the staged metadata, assigned again."""
    ups: list[dict] = [{"action": "assign-uuid", "uuid": m.get("table-uuid")},
                       {"action": "upgrade-format-version", "format-version": m.get("format-version")}]
    schema = next((s for s in m.get("schemas") or [] if s.get("schema-id") == m.get("current-schema-id")), None)
    if schema is not None:
        ups += [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}]
    spec = next((s for s in m.get("partition-specs") or [] if s.get("spec-id") == m.get("default-spec-id")), None)
    if spec is not None:
        ups += [{"action": "add-spec", "spec": spec}, {"action": "set-default-spec", "spec-id": -1}]
    order = next((o for o in m.get("sort-orders") or [] if o.get("order-id") == m.get("default-sort-order-id")),
                 None)
    if order is not None:
        ups += [{"action": "add-sort-order", "sort-order": order},
                {"action": "set-default-sort-order", "sort-order-id": -1}]
    if m.get("location"):
        ups.append({"action": "set-location", "location": m["location"]})
    if m.get("properties"):
        ups.append({"action": "set-properties", "updates": m["properties"]})
    return ups


@semantic("VIEW-03", "createTable", uses=("createView", "loadView", "loadTable", "updateTable", "renameTable"),
          needs=VIEWS)
def check_table_onto_view_name(t: SemRun) -> Verdict:
    from ctk.catalog.bodies import create_table_body

    ns = t.namespace("table_clash")
    name = t.unique("v")
    tables = f"namespaces/{ns_path(ns)}/tables"
    # a create transaction begun before the view exists (its commit comes after)
    staged = t.send("POST", tables, {**create_table_body(name), "stage-create": True},
                    label="createTable stage-create (before the view)")
    _, vbefore = t.view(ns, name)
    table, tbefore = t.table(ns)
    tries: list[Try] = [
        ("createTable where a view exists",
         t.send("POST", tables, create_table_body(name), label="createTable onto a view's name"), (409,), EXISTS),
    ]
    notes = []
    staged_meta = meta(staged.json()) if staged.status == 200 else {}
    if staged_meta:
        tries.append(("committing a staged create (assert-create) where a view now exists",
                      t.send("POST", table_path(ns, name),
                             {"identifier": {"namespace": list(ns), "name": name},
                              "requirements": [{"type": "assert-create"}],
                              "updates": staged_commit_updates(staged_meta)},
                             label="commit the staged create onto a view's name"), (409,), ()))
    else:
        notes.append(f"stage-create answered {describe(staged)}: the create transaction was not tried")
    # a replace (or create-or-replace) transaction: the client finds the view; the table to replace is not there
    tries.append(("loadTable of a view (a replace transaction's read)",
                  t.send("GET", table_path(ns, name), label="loadTable of a view"), (404,), NO_TABLE))
    tries.append(("a replace commit (assert-table-uuid) to a view's name",
                  t.send("POST", table_path(ns, name),
                         {"identifier": {"namespace": list(ns), "name": name},
                          "requirements": [{"type": "assert-table-uuid",
                                            "uuid": (tbefore.get("metadata") or {}).get("table-uuid")}],
                          "updates": [{"action": "set-properties", "updates": {"ctk.replaced": "yes"}}]},
                         label="replace commit onto a view's name"), (404, 409), ()))
    tries.append(("renameTable onto a view",
                  t.send("POST", "tables/rename", {"source": {"namespace": list(ns), "name": table},
                                                   "destination": {"namespace": list(ns), "name": name}},
                         label="renameTable onto a view"), (409,), EXISTS))
    tries += _register_and_exists(t, ns, "table", name, tbefore.get("metadata-location"))
    vafter = result(load_view(t, ns, name, "read: the view is unchanged"))
    tload = t.send("GET", table_path(ns, name), label="read: still no table of the view's name")
    tkept = t.send("GET", table_path(ns, table), label="read: the other table is unchanged")
    harm = []
    if vafter is None or vafter.get("metadata-location") != vbefore.get("metadata-location"):
        harm.append("the view no longer loads as it was")
    if tload.status == 200:
        harm.append(f"a table named {name} now loads")
    kept = tkept.json() if tkept.status == 200 else None
    if not isinstance(kept, dict) or kept.get("metadata-location") != tbefore.get("metadata-location"):
        harm.append(f"the table renamed onto the view now loads {describe(tkept)}")
    return _judge_clash(t, tries, harm, "table operations onto a view's name change neither the view nor any table",
                        "409 (AlreadyExistsException) for a table onto a view's name, 404 NoSuchTableException for "
                        "loading a view as a table",
                        f"{len(tries)} table operations onto a view's name were refused (409 / 404); the view and "
                        "the table are unchanged" + (f"; {notes[0]}" if notes else ""))


# == VIEW-04: rename ==========================================================================================
def _rename(t: SemRun, src_ns: tuple[str, ...], src: str, dst_ns: tuple[str, ...], dst: str,
            label: str = "renameView") -> Exchange:
    return t.send("POST", "views/rename", {"source": {"namespace": list(src_ns), "name": src},
                                           "destination": {"namespace": list(dst_ns), "name": dst}}, label=label)


def _judge_rename(t: SemRun, ex: Exchange, ns: tuple[str, ...], name: str, dst_ns: tuple[str, ...], dst: str,
                  before: dict) -> Verdict:
    if not acknowledged(ex):
        return t.not_acknowledged(ex, "renameView")
    src = load_view(t, ns, name, "read: the source is gone")
    got = result(load_view(t, dst_ns, dst, "read: the target has the view"))
    if got is None or src.status != 404:
        return t.broken("an acknowledged renameView: the source is gone (404) and the target loads",
                        f"renameView answered {ex.status}; source loads {src.status}, target "
                        f"{'loads' if got is not None else 'does not load'}")
    changed = same_view(meta(before), meta(got))
    if changed:
        return t.broken("the renamed view is the same view (uuid, versions, schemas, properties)",
                        f"after the rename these differ: {changed}")
    if ex.status != 204:
        return t.status_broken("renameView answers 204", f"it answered {ex.status}")
    return t.ok("renameView answered 204; the source is gone and the target loads the same view metadata")


@semantic("VIEW-04", "renameView", uses=("createView", "loadView"), needs=VIEWS, baseline=True)
def check_rename_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_rename")
    name, before = t.view(ns)
    dst = t.unique("renamed")
    return _judge_rename(t, _rename(t, ns, name, ns, dst), ns, name, ns, dst, before)


@semantic("VIEW-04", "renameView", uses=("createView", "loadView"), needs=VIEWS)
def check_rename_view_across_namespaces(t: SemRun) -> Verdict:
    ns, other = t.namespace("view_rename_a"), t.namespace("view_rename_b")
    name, before = t.view(ns)
    dst = t.unique("renamed")
    return _judge_rename(t, _rename(t, ns, name, other, dst, "renameView to another namespace"), ns, name, other,
                         dst, before)


@semantic("VIEW-04", "renameView", uses=("createView", "loadView"), needs=VIEWS)
def check_rename_view_errors(t: SemRun) -> Verdict:
    ns = t.namespace("view_rename_err")
    one, b1 = t.view(ns)
    two, b2 = t.view(ns)
    absent_ns = t.absent_namespace()
    gone = t.unique("absent")
    tries: list[Try] = [
        ("to a namespace that does not exist", _rename(t, ns, one, absent_ns, STRAY,
                                                       "renameView to a missing namespace"), (404,), NO_NS),
        ("of a view that does not exist", _rename(t, ns, gone, ns, t.unique("x"), "renameView of a missing view"),
         (404,), NO_VIEW),
        ("onto a view that exists", _rename(t, ns, one, ns, two, "renameView onto another view"), (409,), EXISTS),
    ]
    a1 = result(load_view(t, ns, one, "read: the source is unchanged"))
    a2 = result(load_view(t, ns, two, "read: the other view is unchanged"))
    harm = []
    for label, b, a in (("the source", b1, a1), ("the target", b2, a2)):
        if a is None:
            harm.append(f"{label} no longer loads")
        elif (changed := same_view(meta(b), meta(a))):
            harm.append(f"{label} loads changed ({', '.join(changed)})")
    if harm:
        return t.broken("refused renames change nothing", "; ".join(harm) + "; renames answered "
                        + ", ".join(f"{w}: {ex.status}" for w, ex, _, _ in tries))
    problems = [f"renameView {p}" for p in status_problems(t, tries)]
    if problems:
        return t.status_broken("404 NoSuchNamespaceException (target namespace missing), 404 NoSuchViewException "
                               "(source missing), 409 AlreadyExistsException (target exists)", "; ".join(problems))
    return t.ok("renames to a missing namespace, of a missing view and onto an existing view were refused "
                "(404, 404, 409); both views are unchanged")


# == VIEW-05: drop ============================================================================================
@semantic("VIEW-05", "dropView", uses=("createView", "loadView"), needs=VIEWS, baseline=True)
def check_drop_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_drop")
    name, _ = t.view(ns)
    ex = t.send("DELETE", view_path(ns, name), label="dropView")
    if not acknowledged(ex):
        return t.inconclusive(f"dropView answered {describe(ex)}: nothing acknowledged")
    got = load_view(t, ns, name, "read: load the dropped view")
    if got.status != 404:
        return t.broken("an acknowledged dropView: the view is gone (loadView 404)",
                        f"dropView answered {ex.status}; loadView then answered {describe(got)}")
    again = t.send("DELETE", view_path(ns, name), label="dropView again (missing)")
    problems = status_problems(t, [("loadView of the dropped view", got, (404,), NO_VIEW),
                                   ("dropView of a missing view", again, (404,), NO_VIEW)])
    if offers(t, "viewExists"):
        head = t.send("HEAD", view_path(ns, name), label="read: viewExists of the dropped view")
        if head.status != 404:
            problems.append(f"viewExists answered {describe(head)}")
    if ex.status != 204:
        problems.append(f"dropView answered {ex.status}, not 204")
    if problems:
        return t.status_broken("dropView 204; afterwards loadView and dropView 404 NoSuchViewException, HEAD 404",
                               "; ".join(problems))
    return t.ok("dropView answered 204; the view is gone (load 404), dropping it again 404 NoSuchViewException")


@semantic("VIEW-05", "loadView", uses=("viewExists",), needs=VIEWS)
def check_load_view_missing_namespace(t: SemRun) -> Verdict:
    ns = t.absent_namespace()
    got = load_view(t, ns, STRAY, "loadView in a namespace that does not exist", judged=True)
    tries: list[Try] = [("loadView", got, (404,), NO_VIEW)]
    if offers(t, "viewExists"):
        tries.append(("viewExists", t.send("HEAD", view_path(ns, STRAY), label="viewExists in a missing namespace"),
                      (404,), ()))
    if got.status == 200:
        return t.broken("a view in a namespace that does not exist does not load", "loadView answered 200")
    problems = status_problems(t, tries)
    if problems:
        return t.status_broken("404 NoSuchViewException (a Java client raises NoSuchNamespaceException for that "
                               "type, where its kit expects NoSuchViewException)", "; ".join(problems))
    return t.ok("loading a view in a missing namespace answered 404 NoSuchViewException")


# == VIEW-06: replace =========================================================================================
def _replaced(t: SemRun, ex: Exchange, ns: tuple[str, ...], name: str, what: str) -> dict | Verdict:
    """The view loaded after an acknowledged commit (its answer's metadata-location), else the verdict."""
    if ex.status != 200:
        return t.not_acknowledged(ex, what)
    got = load_view(t, ns, name, f"read: after {what}")
    lv = result(got)
    answered = (ex.json() or {}).get("metadata-location") if isinstance(ex.json(), dict) else None
    if lv is None:
        return t.broken(f"an acknowledged {what}: the view loads back", f"loadView answered {describe(got)}")
    if answered and lv.get("metadata-location") != answered:
        return t.broken(f"an acknowledged {what}: the next load shows the metadata it answered",
                        f"{what} answered metadata-location {answered}; loadView shows {lv.get('metadata-location')}")
    return lv


@semantic("VIEW-06", "replaceView", uses=("createView", "loadView"), needs=VIEWS, baseline=True)
def check_replace_view_version(t: SemRun) -> Verdict:
    ns = t.namespace("view_replace")
    name, before = make_view(t, ns, [rep("trino"), rep("spark")],
                                               properties={"replace.drop-dialect.allowed": "true"})
    b = meta(before)
    ex = commit(t, ns, name, uuid_of(before), new_version_updates(ns, [rep("trino")], OTHER_SCHEMA,
                                                                   catalog="default"))
    lv = _replaced(t, ex, ns, name, "replaceView")
    if isinstance(lv, Verdict):
        return lv
    m = meta(lv)
    cur, first = current_version(m), current_version(b)
    problems = []
    if cur.get("version-id") == first.get("version-id"):
        problems.append(f"the current version is still {cur.get('version-id')}")
    else:
        if reps_of(cur) != [("sql", "trino", SQL)] or cur.get("default-catalog") != "default":
            problems.append(f"the current version has SQL {reps_of(cur)}, default-catalog "
                            f"{cur.get('default-catalog')!r}")
        if fields(schema_of(m, cur.get("schema-id"))) != fields(OTHER_SCHEMA) or cur.get("schema-id") == \
                first.get("schema-id"):
            problems.append(f"the current version is on schema {cur.get('schema-id')}, not the added one")
    kept = next((v for v in m.get("versions") or [] if v.get("version-id") == first.get("version-id")), None)
    if kept != first:
        problems.append("the first version is no longer kept as it was")
    if log_ids(m) != [first.get("version-id"), cur.get("version-id")]:
        problems.append(f"version-log {log_ids(m)}")
    if problems:
        return t.broken("replaceView makes the new version current on the added schema; the old version and the "
                        "version-log are kept", "; ".join(problems))
    if cur.get("version-id") != 2 or cur.get("schema-id") != 1 or len(m.get("schemas") or []) != 2:
        return t.status_broken("the new version is 2 on schema 1 (ids assigned in sequence)",
                               f"version {cur.get('version-id')} on schema {cur.get('schema-id')}, "
                               f"{len(m.get('schemas') or [])} schemas")
    return t.ok("replaceView made version 2 (schema 1, trino only) current; version 1 and the log [1, 2] are kept")


@semantic("VIEW-06", "replaceView", uses=("createView", "loadView"), needs=VIEWS)
def check_replace_view_sql_for_dialect(t: SemRun) -> Verdict:
    ns = t.namespace("view_sql")
    name, before = make_view(t, ns, [rep("spark")], {**SCHEMA, "schema-id": 0})
    b = meta(before)
    first = current_version(b)
    updated = "select * from ns.updated_tbl"
    ups = [{"action": "add-view-version", "view-version": version(ns, [rep("spark", updated)], 2,
                                                                  first.get("schema-id", 0), operation="replace")},
           {"action": "set-current-view-version", "view-version-id": -1}]
    lv = _replaced(t, commit(t, ns, name, uuid_of(before), ups, "replaceView (new SQL for spark)"), ns, name,
                   "replaceView")
    if isinstance(lv, Verdict):
        return lv
    m = meta(lv)
    cur = current_version(m)
    if reps_of(cur) != [("sql", "spark", updated)] or len(m.get("versions") or []) != 2 \
            or log_ids(m) != [first.get("version-id"), cur.get("version-id")]:
        return t.broken("the new version with the updated spark SQL is current; two versions, both logged",
                        f"current SQL {reps_of(cur)}, versions {version_ids(m)}, version-log {log_ids(m)}")
    return t.ok("the updated SQL for spark is the current version; the first one is kept and both are logged")


@semantic("VIEW-06", "replaceView", uses=("createView", "loadView"), needs=VIEWS)
def check_create_or_replace_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_cor")
    name, before = make_view(t, ns, [rep("spark")],
                                               properties={"prop1": "val1", "prop2": "val2"})
    b = meta(before)
    moved = str(b.get("location") or "").rstrip("/") + "_updated"
    props = {"replacedProp1": "val1", "replacedProp2": "val2", "replace.drop-dialect.allowed": "true"}
    ups = [{"action": "set-properties", "updates": props},
           *new_version_updates(ns, [rep("trino", "select count(*) from ns.tbl")], OTHER_SCHEMA),
           {"action": "set-location", "location": moved}]
    lv = _replaced(t, commit(t, ns, name, uuid_of(before), ups, "replaceView (create or replace)"), ns, name,
                   "replaceView")
    if isinstance(lv, Verdict):
        return lv
    m = meta(lv)
    cur, first = current_version(m), current_version(b)
    problems = []
    want = {"prop1": "val1", "prop2": "val2", **props}
    got = m.get("properties") or {}
    if any(got.get(k) != v for k, v in want.items()):
        problems.append(f"properties {got!r} (expected to include {want})")
    if reps_of(cur) != [("sql", "trino", "select count(*) from ns.tbl")] or \
            fields(schema_of(m, cur.get("schema-id"))) != fields(OTHER_SCHEMA):
        problems.append(f"current version SQL {reps_of(cur)} on schema {cur.get('schema-id')}")
    if log_ids(m) != [first.get("version-id"), cur.get("version-id")] or len(m.get("schemas") or []) != 2:
        problems.append(f"version-log {log_ids(m)}, {len(m.get('schemas') or [])} schemas")
    # the version's summary is the catalog's to write (no `operation` key is required of it; Java's
    # ViewVersion.operation() is "replace" for any version id but 1): the new version is 2, judged above
    if problems:
        return t.broken("a replace keeps the earlier properties, adds the new ones, makes the new version on the "
                        "new schema current and logs both", "; ".join(problems))
    note = "" if m.get("location") == moved else \
        f"; the location is {m.get('location')!r}, not the requested {moved!r} (a catalog may override it)"
    return t.ok("the replaced view has both property sets, version 2 on the new schema current, the log [1, 2]"
                + (", and the new location" if not note else note))


@semantic("VIEW-06", "replaceView", uses=("createView", "loadView"), needs=VIEWS)
def check_update_view_properties_and_location(t: SemRun) -> Verdict:
    ns = t.namespace("view_update")
    name, before = t.view(ns)
    b = meta(before)
    ups = [{"action": "set-properties", "updates": {"key1": "val1", "key2": "val2"}},
           {"action": "remove-properties", "removals": ["non-existing"]}]
    lv = _replaced(t, commit(t, ns, name, uuid_of(before), ups, "replaceView (properties)"), ns, name,
                   "a properties update")
    if isinstance(lv, Verdict):
        return lv
    m = meta(lv)
    props = m.get("properties") or {}
    if props.get("key1") != "val1" or props.get("key2") != "val2":
        return t.broken("set-properties is loaded back", f"properties {props!r}")
    if m.get("versions") != b.get("versions") or m.get("version-log") != b.get("version-log"):
        return t.broken("a properties update leaves the versions and the version-log as they were",
                        f"versions {version_ids(m)}, version-log {log_ids(m)}")
    moved = str(b.get("location") or "").rstrip("/") + "_moved"
    lv2 = _replaced(t, commit(t, ns, name, uuid_of(before), [{"action": "set-location", "location": moved}],
                              "replaceView (location)"), ns, name, "a location update")
    if isinstance(lv2, Verdict):
        return lv2
    m2 = meta(lv2)
    if m2.get("versions") != b.get("versions") or m2.get("version-log") != b.get("version-log"):
        return t.broken("a location update leaves the versions and the version-log as they were",
                        f"versions {version_ids(m2)}, version-log {log_ids(m2)}")
    note = "" if m2.get("location") == moved else \
        f"; the location is {m2.get('location')!r}, not the requested {moved!r} (a catalog may override it)"
    return t.ok("properties and location updates were loaded back, versions and log untouched" + note)


@semantic("VIEW-06", "replaceView", uses=("createView", "loadView"), needs=VIEWS)
def check_concurrent_replace_view_version(t: SemRun) -> Verdict:
    """Two replaces on the same base, each with only assert-view-uuid (what a REST client sends): the second
    either applies on top of the first (3 versions, its own current: a catalog that applies updates to its
    current metadata) or is refused 409 (2 versions, the first's current). Either way the first is never lost."""
    ns = t.namespace("view_concurrent")
    name, before = make_view(t, ns, [rep("trino")], {**SCHEMA, "schema-id": 0},
                                               properties={"replace.drop-dialect.allowed": "true"})
    u = uuid_of(before)
    spark_sql, trino_sql = "select count(some_id) from ns.tbl", "select count(id) from ns.tbl"
    one = commit(t, ns, name, u, new_version_updates(ns, [rep("spark", spark_sql)], OTHER_SCHEMA),
                 "replaceView (first of two on the same base)")
    if one.status != 200:
        return t.inconclusive(f"the first replace answered {describe(one)}")
    ups = [{"action": "add-view-version", "view-version": version(ns, [rep("trino", trino_sql)], 2, 0,
                                                                  operation="replace")},
           {"action": "set-current-view-version", "view-version-id": -1}]
    two = commit(t, ns, name, u, ups, "replaceView (second, on the same base)")
    lv = result(load_view(t, ns, name, "read: the view after both replaces"))
    if lv is None:
        return t.broken("the view loads after two acknowledged or refused replaces", "loadView did not answer 200")
    m = meta(lv)
    cur = current_version(m)
    by_sql = {reps_of(v)[0][2] if reps_of(v) else None: v for v in m.get("versions") or []}
    if spark_sql not in by_sql:
        return t.broken("the first acknowledged replace is kept", f"versions hold {sorted(map(str, by_sql))}; "
                        f"the second answered {two.status}")
    if two.status == 200:
        if reps_of(cur) != [("sql", "trino", trino_sql)] or len(m.get("versions") or []) != 3:
            return t.broken("a second replace answered 200 is applied on top of the first: 3 versions, its own "
                            "current", f"current SQL {reps_of(cur)}, versions {version_ids(m)}")
        return t.ok("the second replace (same base, only assert-view-uuid) was applied on top of the first: 3 "
                    "versions, the second's current")
    if two.status == 409:
        if reps_of(cur) != [("sql", "spark", spark_sql)] or len(m.get("versions") or []) != 2:
            return t.broken("a refused second replace changes nothing: 2 versions, the first's current",
                            f"current SQL {reps_of(cur)}, versions {version_ids(m)}")
        return t.ok("the second replace on the same base was refused 409; the first's version is current")
    return t.status_broken("the second replace answers 200 (applied on top) or 409 (refused)",
                           f"it answered {describe(two)}")


@semantic("VIEW-06", "replaceView", uses=("createView", "loadView"), needs=VIEWS)
def check_view_version_history_limit(t: SemRun) -> Verdict:
    ns = t.namespace("view_history")
    name, before = make_view(t, ns, [rep("spark")], {**SCHEMA, "schema-id": 0},
                                               properties={"version.history.num-entries": "2"})
    u = uuid_of(before)
    for i in (2, 3):
        ups = [{"action": "add-view-version", "view-version": version(ns, [rep("spark", f"select {i}")], i, 0,
                                                                      operation="replace")},
               {"action": "set-current-view-version", "view-version-id": -1}]
        ex = commit(t, ns, name, u, ups, f"replaceView (version {i})")
        if ex.status != 200:
            return t.inconclusive(f"replace {i - 1} of 2 answered {describe(ex)}")
    lv = result(load_view(t, ns, name, "read: the kept versions"))
    if lv is None:
        return t.broken("the view loads after two acknowledged replaces", "loadView did not answer 200")
    m = meta(lv)
    cur = current_version(m)
    if reps_of(cur) != [("sql", "spark", "select 3")]:
        return t.broken("the last replace's version is current", f"current SQL {reps_of(cur)}")
    kept = [reps_of(v)[0][2] for v in m.get("versions") or [] if reps_of(v)]
    ids = {v.get("version-id") for v in m.get("versions") or []}
    # version expiry (version.history.num-entries) is stated by neither the REST spec nor the compatibility kit:
    # what the catalog kept is a note, never a finding (docs/assertion-trace.md)
    expired = sorted(kept) == ["select 2", "select 3"] and set(log_ids(m)) <= ids
    seen = (f"with version.history.num-entries=2 the versions kept hold {sorted(kept)}, the version-log names "
            f"{log_ids(m)}" + ("" if expired else " (not expired as the view spec describes; no source of this "
                                                  "family states it)"))
    return t.ok("the last replace's version is current", details={"notes": [seen]})


# == VIEW-07: replace refused =================================================================================
@semantic("VIEW-07", "replaceView", uses=("createView", "loadView"), needs=VIEWS)
def check_replace_view_errors(t: SemRun) -> Verdict:
    ns = t.namespace("view_replace_err")
    name, before = make_view(t, ns, [rep("trino")], {**SCHEMA, "schema-id": 0})
    u = uuid_of(before)
    set_current = {"action": "set-current-view-version", "view-version-id": -1}
    no_default_ns = version(None, [rep("trino")], 2, 0, operation="replace")
    # (what, updates, what the OpenAPI request schema forbids in them: sent as X-Ctk-Invalid; None: a valid body
    # that only the view's state or the view spec's rules refuse)
    cases: list[tuple[str, list[dict], str | None]] = [
        ("a version on a schema that does not exist",
         [{"action": "add-view-version", "view-version": version(ns, [rep("trino")], 2, 99)}, set_current], None),
        ("a version without a default namespace",
         [{"action": "add-view-version", "view-version": no_default_ns}, set_current],
         "view-version without the required default-namespace"),
        ("a version with two queries for dialect trino",
         [{"action": "add-view-version", "view-version": version(ns, [rep("trino"), rep("trino")], 2, 0)},
          set_current], None),
        ("set-properties with a null value", [{"action": "set-properties", "updates": {"key1": None}}],
         "set-properties with a null value (values are strings)"),
        ("remove-properties of a null key", [{"action": "remove-properties", "removals": [None]}],
         "remove-properties of a null key (keys are strings)"),
        ("set-location to null", [{"action": "set-location", "location": None}],
         "set-location to null (a location is a string)"),
    ]
    tries: list[Try] = [(f"replaceView with {what}", commit(t, ns, name, u, ups, f"replaceView with {what}", bad),
                         (400,), BAD_ARGUMENT) for what, ups, bad in cases]
    gone = t.unique("absent")
    tries.append(("replaceView of a view that does not exist",
                  commit(t, ns, gone, None, new_version_updates(ns, [rep("trino")]), "replaceView of a missing view"),
                  (404,), NO_VIEW))
    after = result(load_view(t, ns, name, "read: the view is unchanged"))
    created = load_view(t, ns, gone, "read: the missing view is still missing")
    accepted = [what for what, ex, _, _ in tries if ex.status is not None and 200 <= ex.status < 300]
    changed = after is None or after.get("metadata-location") != before.get("metadata-location")
    if (changed or created.status == 200) and not accepted:
        return t.broken("refused replaces change nothing",
                        "every replace was refused, yet " + ("the view changed" if changed else f"{gone} loads"))
    problems = status_problems(t, tries)
    if problems:
        return t.status_broken("invalid view updates answer 400 (IllegalArgumentException or BadRequestException), "
                               "replacing a missing view 404 NoSuchViewException", "; ".join(problems))
    return t.ok(f"{len(tries)} invalid replaces were refused (400, 404 for the missing view); the view is unchanged")


@semantic("VIEW-07", "replaceView", uses=("createView", "loadView", "dropView"), needs=VIEWS)
def check_replace_dropped_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_dropped")
    name, before = make_view(t, ns, [rep("trino")], {**SCHEMA, "schema-id": 0})
    u = uuid_of(before)
    drop = t.send("DELETE", view_path(ns, name), label="setup: drop the view")
    if not acknowledged(drop):
        return t.inconclusive(f"dropping the view answered {describe(drop)}")
    moved = str(meta(before).get("location") or "").rstrip("/") + "_moved"
    cases = [("a properties update", [{"action": "set-properties", "updates": {"key1": "val1"}}]),
             ("a new version", new_version_updates(ns, [rep("trino")])),
             ("a location update", [{"action": "set-location", "location": moved}])]
    tries: list[Try] = [(f"{what} of the dropped view",
                         commit(t, ns, name, u, ups, f"replaceView ({what}) of a dropped view"), (404,), NO_VIEW)
                        for what, ups in cases]
    back = load_view(t, ns, name, "read: the dropped view stays dropped")
    if back.status == 200:
        return t.broken("commits to a dropped view bring nothing back",
                        "after them the view loads (200): " + ", ".join(f"{w} {ex.status}" for w, ex, _, _ in tries))
    # created again under the same name: a commit based on the dropped one (its uuid) must not apply
    _, again = t.view(ns, name, body=create_body(ns, name, [rep("spark")], {**SCHEMA, "schema-id": 0}))
    stale = commit(t, ns, name, u, [{"action": "set-properties", "updates": {"ctk.stale": "yes"}}],
                   "replaceView with the dropped view's uuid")
    after = result(load_view(t, ns, name, "read: the new view is unchanged"))
    if after is None or after.get("metadata-location") != again.get("metadata-location"):
        return t.broken("a commit asserting the dropped view's uuid leaves the new view unchanged",
                        f"it answered {stale.status}; the new view changed")
    tries.append(("a commit asserting the dropped view's uuid to the view created again", stale, (409,), ()))
    problems = status_problems(t, tries)
    if problems:
        return t.status_broken("404 NoSuchViewException for commits to a dropped view; 409 for a stale "
                               "assert-view-uuid", "; ".join(problems))
    return t.ok("updates of a dropped view answered 404 NoSuchViewException; a stale assert-view-uuid 409; nothing "
                "changed")


# == VIEW-08: register ========================================================================================
@semantic("VIEW-08", "registerView", uses=("createView", "dropView", "loadView"), needs=VIEWS, baseline=True)
def check_register_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_register")
    name, before = make_view(t, ns, catalog="ctk_catalog",
                                               properties={"gc.enabled": "false"})
    location = before.get("metadata-location")
    drop = t.send("DELETE", view_path(ns, name), label="setup: drop the view (gc.enabled=false keeps its file)")
    if not acknowledged(drop):
        return t.inconclusive(f"dropping the view answered {describe(drop)}")
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/register-view", {"name": name, "metadata-location": location},
                label="registerView")
    if not acknowledged(ex):
        return t.status_broken("registerView of a dropped view's metadata file (gc.enabled=false) answers 200",
                               f"it answered {describe(ex)}")
    lv = result(load_view(t, ns, name, "read: the registered view"))
    if lv is None:
        return t.broken("an acknowledged registerView: the view loads", "loadView did not answer 200")
    changed = same_view(meta(before), meta(lv))
    if changed or lv.get("metadata-location") != location:
        return t.broken("the registered view is the one in the metadata file (same uuid, versions, schemas)",
                        f"differs: {changed or ['metadata-location ' + str(lv.get('metadata-location'))]}")
    if ex.status != 200:
        return t.status_broken("registerView answers 200", f"it answered {ex.status}")
    return t.ok("the dropped view's metadata file registered again: the view loads with its uuid and versions")


@semantic("VIEW-08", "registerView", uses=("createView", "loadView"), needs=VIEWS)
def check_register_existing_view(t: SemRun) -> Verdict:
    ns = t.namespace("view_register_exists")
    name, before = t.view(ns)
    location = before.get("metadata-location")
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/register-view", {"name": name, "metadata-location": location},
                label="registerView (the view exists)")
    missing_name = t.unique("nofile")
    nofile = t.send("POST", f"namespaces/{ns_path(ns)}/register-view",
                    {"name": missing_name, "metadata-location": str(location).rsplit("/", 1)[0]
                     + "/00009-ctk-missing.metadata.json"}, label="registerView of a file that does not exist")
    after = result(load_view(t, ns, name, "read: the view is unchanged"))
    ghost = load_view(t, ns, missing_name, "read: nothing registered")
    if after is None or after.get("metadata-location") != location:
        return t.broken("registering onto an existing view leaves it as it was",
                        f"registerView answered {ex.status}; the view changed")
    if ghost.status == 200 and not (nofile.status is not None and 200 <= nofile.status < 300):
        return t.broken("a refused registerView registers nothing", f"{missing_name} loads (200)")
    if nofile.status is not None and 200 <= nofile.status < 300:
        # the client is told a view was registered from a file that holds none: graded as registerTable's
        # (TBL-09) - acknowledged and not done, the requirement's level
        return t.broken("a registration of a metadata file that does not exist is refused (4xx)",
                        f"it answered {nofile.status} (and the name then loads: {describe(ghost)})")
    problems = status_problems(t, [("registerView where the view exists", ex, (409,), EXISTS)])
    if nofile.status is None or not 400 <= nofile.status < 500:
        problems.append(f"registerView of a missing metadata file: {describe(nofile)} (expected a 4xx)")
    if problems:
        return t.status_broken("409 AlreadyExistsException for an existing view; a 4xx for a missing file",
                               "; ".join(problems))
    return t.ok("registering onto an existing view answered 409 AlreadyExistsException, a missing file "
                f"{nofile.status}; nothing changed")
