"""Catalog semantics: create and replace transactions (TXN-01..TXN-04). Plain requests, judged by status, error type
and the table metadata read back.

Over REST, the Java client's transactions are:

- create (and create-or-replace of a table that does not exist): ``createTable`` with ``stage-create`` answers the
  metadata the table would have and creates nothing; the commit (updateTable with the one requirement
  ``assert-create``) carries the staged metadata as updates (assign-uuid, upgrade-format-version, add-schema,
  set-current-schema -1, add-spec, set-default-spec -1, add-sort-order, set-default-sort-order -1, set-location,
  set-properties) and the transaction's own updates after them;
- replace (and create-or-replace of a table that exists): updateTable on the table with ``assert-table-uuid``
  (and ``assert-last-assigned-field-id`` / ``-partition-id`` where it adds a schema / spec), main removed, the new
  schema, spec, order and properties made current (``TableMetadata.buildReplacement``).

Table defaults and overrides (``table-default.*`` / ``table-override.*`` in /v1/config) are applied by the client
to what it sends; the checks send them as the Java client would and judge that the catalog keeps them.
"""

from __future__ import annotations

from typing import Any

from ctk.catalog.bodies import create_table_body, set_properties_update
from ctk.catalog.capabilities import Capability
from ctk.client.transport import ns_path, table_path
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Status, Verdict
from ctk.checks.common import describe
from ctk.checks.semantics.evolution import (BASE_FIELDS, NO_TABLE, SHARD, add_order, add_schema, add_spec,
                                            columns, commit, current_schema, default_order, default_spec, field,
                                            judge, last_column_id, last_partition_id, load_result, location, main_of, meta, order, order_fields, refused, req,
                                            set_current_schema, set_default_order, set_default_spec, spec,
                                            spec_fields, stage, struct, tally, with_column)
from ctk.checks.semantics.harness import SemRun
from ctk.checks.semantics.registry import semantic

DEFAULT_PREFIX, OVERRIDE_PREFIX = "table-default.", "table-override."


def client_properties(t: SemRun, given: dict[str, str]) -> dict[str, str]:
    """The properties a Java client sends for a table created or replaced with ``given``: the catalog's
    ``table-default.*`` first, then ``given``, then ``table-override.*`` (from /v1/config)."""
    d = t.ctx.discovery
    config: dict[str, Any] = {**(d.defaults if d else {}), **(d.overrides if d else {})}
    defaults = {k[len(DEFAULT_PREFIX):]: str(v) for k, v in config.items() if k.startswith(DEFAULT_PREFIX)}
    overrides = {k[len(OVERRIDE_PREFIX):]: str(v) for k, v in config.items() if k.startswith(OVERRIDE_PREFIX)}
    return {**defaults, **given, **overrides}


def stage_create(t: SemRun, ns: tuple[str, ...], name: str, properties: dict[str, str],
                 label: str = "createTable (stage-create)") -> tuple[Exchange, dict]:
    body = {**create_table_body(name, properties), "stage-create": True}
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/tables", body, label=label)
    staged = ex.json() if ex.status == 200 else None
    return ex, meta(staged) if isinstance(staged, dict) else {}


def create_changes(m: dict) -> list[dict]:
    """The updates that carry staged metadata ``m`` into a create commit, as the Java client sends them."""
    out: list[dict] = [{"action": "assign-uuid", "uuid": m.get("table-uuid")},
                       {"action": "upgrade-format-version", "format-version": m.get("format-version", 2)}]
    schema = current_schema(m)
    if schema:
        out += [add_schema(schema, m.get("last-column-id")), set_current_schema()]
    if default_spec(m):
        out += [add_spec(default_spec(m)), set_default_spec()]
    if default_order(m):
        out += [add_order(default_order(m)), set_default_order()]
    if m.get("location"):
        out.append({"action": "set-location", "location": m["location"]})
    out.append(set_properties_update(dict(m.get("properties") or {})))
    return out


def missing_properties(m: dict, wanted: dict[str, str]) -> dict[str, Any]:
    props = m.get("properties") or {}
    return {k: props.get(k) for k, v in wanted.items() if props.get(k) != v}


# ------------------------------------------------------------------------------------------------ TXN-01

@semantic("TXN-01", "createTable", uses=("updateTable", "loadTable"))
def check_create_transaction(t: SemRun) -> Verdict:
    ns = t.namespace("txn_create")
    name = t.unique("t")
    props = client_properties(t, {"ctk.prop1": "val1", "default-key2": "catalog-overridden-key2"})
    ex, staged = stage_create(t, ns, name, props)
    if not staged:
        return t.not_acknowledged(ex, "createTable with stage-create")
    early = t.send("GET", table_path(ns, name), label="read: the staged table is not there yet")
    if early.status == 200:
        # acknowledged and done with an extra effect (the table visible before its commit): nothing acknowledged is
        # missing and no client is told of a success that did not happen - the documents' level (grading.LENIENT)
        return t.lenient("a staged create creates nothing until its commit",
                         f"after stage-create (answered {ex.status}) the table loads (200)", "staged create visible")
    extra = with_column(3, "extra", "string")
    updates = create_changes(staged) + [add_schema(extra, 3), set_current_schema(),
                                        add_spec(spec(SHARD)), set_default_spec(),
                                        set_properties_update({"ctk.txn": "committed"})]
    done = commit(t, ns, name, updates, [req("assert-create")], "updateTable (commit the create, assert-create)")
    if done.status != 200:
        return t.status_broken("the staged create committed with assert-create lands",
                        f"the commit answered {describe(done)}")
    got, loaded = load_result(t, ns, name, "read: the created table")
    m = meta(loaded)
    problems = []
    if loaded is None:
        return t.broken("the committed create transaction's table loads", f"loading it answered {describe(got)}")
    if m.get("table-uuid") != staged.get("table-uuid"):
        problems.append(f"table-uuid {m.get('table-uuid')} (staged {staged.get('table-uuid')})")
    if columns(current_schema(m)) != BASE_FIELDS + [(3, "extra", "string")] or len(m.get("schemas") or []) != 2:
        problems.append(f"current columns {columns(current_schema(m))}, {len(m.get('schemas') or [])} schemas")
    if spec_fields(default_spec(m)) != [SHARD]:
        problems.append(f"default spec {spec_fields(default_spec(m))}")
    missing = missing_properties(m, {**props, "ctk.txn": "committed"})
    if missing:
        problems.append(f"properties {missing} (sent {props} and ctk.txn=committed)")
    if problems:
        return t.broken("the table has the staged schema, properties (defaults, given, overrides) and the "
                        "transaction's updates (a second schema current, a bucket spec)", "; ".join(problems))
    return t.ok("stage-create created nothing; the commit with assert-create created the table with the staged "
                "uuid, both schemas (the second current), the spec and every property")


@semantic("TXN-01", "createTable", uses=("updateTable", "loadTable"))
def check_create_transaction_format_versions(t: SemRun) -> Verdict:
    ns = t.namespace("txn_versions")
    versions = [1, 2]
    v3 = t.capability(Capability.FORMAT_V3)
    if v3.supported:
        versions.append(3)
    problems, seen, refused = [], [], []
    for version in versions:
        name = t.unique(f"v{version}")
        ex, staged = stage_create(t, ns, name, {"format-version": str(version)},
                                  f"createTable (stage-create, format-version {version})")
        if not staged:
            return t.not_acknowledged(ex, f"stage-create of a v{version} table")
        done = commit(t, ns, name, create_changes(staged), [req("assert-create")],
                      f"updateTable (commit the v{version} create)")
        _, loaded = load_result(t, ns, name, f"read: the v{version} table")
        got = meta(loaded).get("format-version")
        accepted = done.status is not None and 200 <= done.status < 300
        if (accepted and got != version) or (not accepted and loaded is not None):
            problems.append(f"v{version}: the commit answered {describe(done)}, the table loads with format-version "
                            f"{got}")
        elif not accepted:      # refused, nothing made: a valid request not accepted, the documents' level
            refused.append(f"v{version}: the commit answered {describe(done)} and created nothing")
        seen.append(version)
    if problems:
        return t.broken("a create transaction with format-version N makes a table of format version N",
                        "; ".join(problems))
    if refused:
        return t.status_broken("a create transaction with format-version N is accepted", "; ".join(refused))
    note = "" if 3 in versions else f" (v3 not tried: {v3.why})"
    return t.ok(f"create transactions (also the create path of create-or-replace) with format-version "
                f"{', '.join(map(str, seen))} made tables of those versions{note}")


# ------------------------------------------------------------------------------------------------ TXN-02

@semantic("TXN-02", "createTable", uses=("updateTable", "loadTable"))
def check_concurrent_create_transaction(t: SemRun) -> Verdict:
    ns = t.namespace("txn_race")
    name = t.unique("t")
    ex, staged = stage_create(t, ns, name, {"ctk.who": "transaction"})
    if not staged:
        return t.not_acknowledged(ex, "createTable with stage-create")
    body = create_table_body(name, {"ctk.who": "other"})
    body["schema"] = with_column(3, "other", "string", schema_id=0)
    _, other = t.table(ns, name, body=body)
    late = commit(t, ns, name, create_changes(staged), [req("assert-create")],
                  "updateTable (commit the create after another client created the table)")
    _, after = load_result(t, ns, name, "read: the other client's table")
    effects: list[str] = []
    e, s = refused(t, late, other, after, "a create transaction committed after a concurrent create")
    effects += [e] if e else []
    if after is not None and meta(after).get("table-uuid") != meta(other).get("table-uuid"):
        effects.append(f"the table's uuid became {meta(after).get('table-uuid')}")
    mixed_name = t.unique("mixed")
    _, staged2 = stage_create(t, ns, mixed_name, {}, "createTable (stage-create, for a commit with other requirements)")
    mixed = commit(t, ns, mixed_name, create_changes(staged2) if staged2 else [],
                   [req("assert-create"), req("assert-current-schema-id", current_schema_id=0)],
                   "updateTable (assert-create with another requirement)")
    created = t.send("GET", table_path(ns, mixed_name), label="read: nothing was created")
    acknowledged = mixed.status is not None and 200 <= mixed.status < 300
    if created.status == 200 and not acknowledged:
        effects.append(f"a create commit with assert-create and another requirement answered {describe(mixed)}, "
                       f"yet the table exists")
    elif acknowledged and created.status == 404:
        effects.append(f"a create commit with assert-create and another requirement answered {describe(mixed)}, "
                       f"yet the table does not load (404)")
    # whether assert-create may stand beside other requirements no source states (the spec: it "is used to ensure
    # that the table was not created concurrently"; upstream's server refuses the mix with 400): what the catalog
    # did is a note, never a finding (docs/assertion-trace.md)
    mix = (f"a create commit with assert-create and another requirement answered {describe(mixed)}; the table "
           f"then loads {created.status}")
    verdict = judge(t, "a create transaction loses to a concurrent create with 409 and leaves the other table as it "
                       "was", effects, [s],
                    "the late create commit answered 409 and the other client's table stayed")
    if verdict.status is Status.PASS:
        verdict.details = {**verdict.details, "notes": [mix]}
    return verdict


# ------------------------------------------------------------------------------------------------ TXN-03

REPLACED = struct(field(1, "id", "long"), field(3, "replaced", "string"), schema_id=1)
REPLACED_COLUMNS = [(1, "id", "long"), (3, "replaced", "string")]
REPLACE_ORDER = order((1, "identity"))


def _equal_id(items: list, key: str, fields: list, shape: Any) -> Any:
    """The id of the item (schema, spec, order) whose fields have ``shape`` equal to ``fields``' (None: none)."""
    return next((i.get(key) for i in items if isinstance(i, dict) and shape(i) == fields), None)


def replace_commit(t: SemRun, ns: tuple[str, ...], name: str, base: dict, schema: dict,
                   the_spec: dict | None, the_order: dict | None, properties: dict[str, str],
                   label: str = "updateTable (replace transaction)") -> Exchange:
    """A replace transaction on ``base`` (a LoadTableResult) as the Java client sends it: a schema, spec or order
    equal to one the table has is made current by its id, a new one is added (and asserts the id assignment it
    rests on); main is removed."""
    m = meta(base)
    updates: list[dict] = []
    requirements = [req("assert-table-uuid", uuid=m.get("table-uuid"))]
    if main_of(m) is not None:
        updates.append({"action": "remove-snapshot-ref", "ref-name": "main"})
    have = _equal_id(m.get("schemas") or [], "schema-id", columns(schema), columns)
    if have is None:
        last = max(int(m.get("last-column-id") or 0), *[f["id"] for f in schema["fields"]])
        updates += [add_schema(schema, last), set_current_schema()]
        requirements.append(req("assert-last-assigned-field-id", last_assigned_field_id=last_column_id(base)))
    elif have != m.get("current-schema-id"):
        updates.append(set_current_schema(have))
    wanted_spec = the_spec if the_spec is not None else spec()
    have = _equal_id(m.get("partition-specs") or [], "spec-id", spec_fields(wanted_spec), spec_fields)
    if have is None:
        updates += [add_spec(wanted_spec), set_default_spec()]
        requirements.append(req("assert-last-assigned-partition-id", last_assigned_partition_id=last_partition_id(base)))
    elif have != m.get("default-spec-id"):
        updates.append(set_default_spec(have))
    if the_order is not None:
        have = _equal_id(m.get("sort-orders") or [], "order-id", order_fields(the_order), order_fields)
        if have is None:
            updates += [add_order(the_order), set_default_order()]
        elif have != m.get("default-sort-order-id"):
            updates.append(set_default_order(have))
    updates.append(set_properties_update(properties))
    return commit(t, ns, name, updates, requirements, label)


def replaced_problems(m: dict, uuid: Any, props: dict[str, str]) -> list[str]:
    problems = []
    if m.get("table-uuid") != uuid:
        problems.append(f"table-uuid {m.get('table-uuid')} (was {uuid})")
    if columns(current_schema(m)) != REPLACED_COLUMNS:
        problems.append(f"current columns {columns(current_schema(m))}")
    if 0 not in {s.get("schema-id") for s in m.get("schemas") or [] if isinstance(s, dict)}:
        problems.append("the earlier schema 0 is gone")
    if spec_fields(default_spec(m)) != [SHARD]:
        problems.append(f"default spec {spec_fields(default_spec(m))}")
    if order_fields(default_order(m)) != order_fields(REPLACE_ORDER):
        problems.append(f"default order {order_fields(default_order(m))}")
    missing = missing_properties(m, props)
    if missing:
        problems.append(f"properties {missing}")
    return problems


@semantic("TXN-03", "updateTable", uses=("createTable", "loadTable"))
def check_replace_transaction(t: SemRun) -> Verdict:
    ns = t.namespace("txn_replace")
    name, base = t.table(ns, properties={"ctk.before": "kept"})
    uuid = meta(base).get("table-uuid")
    props = client_properties(t, {"ctk.prop1": "val1", "default-key2": "catalog-overridden-key2"})
    ex = replace_commit(t, ns, name, base, REPLACED, spec(SHARD, spec_id=1), REPLACE_ORDER, props)
    if ex.status != 200:
        return t.not_acknowledged(ex, "a replace transaction")
    got, loaded = load_result(t, ns, name, "read: the replaced table")
    if loaded is None:
        return t.broken("the replaced table loads", f"loading it answered {describe(got)}")
    problems = replaced_problems(meta(loaded), uuid, props)
    if problems:
        return t.broken("a replace keeps the table-uuid and earlier schemas, and makes the new schema, spec, order "
                        "and properties current", "; ".join(problems))
    return t.ok("the replace kept the table-uuid and schema 0; the new schema, spec, order and properties "
                "(defaults, given, overrides) are current")


@semantic("TXN-03", "updateTable", uses=("createTable", "loadTable"), needs=(Capability.STORAGE,))
def check_replace_keeps_snapshot_log(t: SemRun) -> Verdict:
    ns = t.namespace("txn_replace_log")
    name, empty = t.table(ns)
    uuid = meta(empty).get("table-uuid")
    appended = stage(t, ns, name, empty, "before-replace")
    first = t.send("POST", appended.path, appended.body, label="setup: an append before the replace")
    if first.status != 200:
        return t.inconclusive(f"the append before the replace answered {describe(first)}")
    _, base = load_result(t, ns, name, "read: the table before the replace")
    if base is None or main_of(meta(base)) != appended.snapshot_id:
        return t.inconclusive("the append before the replace did not load back as main")
    ex = replace_commit(t, ns, name, base, REPLACED, spec(SHARD, spec_id=1), REPLACE_ORDER, {"ctk.replaced": "1"})
    if ex.status != 200:
        return t.not_acknowledged(ex, "a replace transaction")
    _, loaded = load_result(t, ns, name, "read: the replaced table")
    m = meta(loaded)
    logged = [e.get("snapshot-id") for e in m.get("snapshot-log") or [] if isinstance(e, dict)]
    problems = replaced_problems(m, uuid, {"ctk.replaced": "1"})
    if appended.snapshot_id not in logged:
        problems.append(f"the snapshot log {logged} lost snapshot {appended.snapshot_id}")
    if main_of(m) is not None or m.get("current-snapshot-id") not in (None, -1):
        problems.append(f"a current snapshot is left (main {main_of(m)}, current-snapshot-id "
                        f"{m.get('current-snapshot-id')})")
    if problems:
        return t.broken("a replace keeps the table-uuid and the snapshot log and leaves no current snapshot",
                        "; ".join(problems))
    return t.ok("the replace kept the table-uuid and the snapshot log, removed main, made the new schema, spec and "
                "order current")


# ------------------------------------------------------------------------------------------------ TXN-04

@semantic("TXN-04", "updateTable", uses=("createTable", "loadTable"))
def check_replace_missing_table(t: SemRun) -> Verdict:
    ns = t.namespace("txn_replace_missing")
    name = t.unique("missing")
    got = t.send("GET", table_path(ns, name), label="loadTable (the table to replace does not exist)")
    # the replace a client would send on a table as this catalog makes it (a sibling's metadata: its uuid, its
    # last-column-id and last-partition-id), so that the request is valid and only the missing table is wrong
    _, sibling = t.table(ns)
    ex = replace_commit(t, ns, name, sibling, REPLACED, None, None, {}, "updateTable (replace a missing table)")
    after = t.send("GET", table_path(ns, name), label="read: nothing was created")
    if after.status == 200:
        return t.broken("a replace of a table that does not exist creates nothing",
                        f"the replace answered {describe(ex)} and the table then loads (200)")
    wrong = [p for p in (t.expect(got, (404,), NO_TABLE), t.expect(ex, (404,), NO_TABLE)) if p]
    if wrong:
        return t.status_broken("404 NoSuchTableException for loading and replacing a table that does not exist",
                               "; ".join(wrong))
    return t.ok("loading and replacing a missing table answered 404 NoSuchTableException; nothing was created")


@semantic("TXN-04", "updateTable", uses=("createTable", "loadTable"))
def check_concurrent_replaces(t: SemRun) -> Verdict:
    ns = t.namespace("txn_replaces")
    name, base = t.table(ns)
    uuid = meta(base).get("table-uuid")
    effects: list[str] = []
    statuses: list[str | None] = []
    # schema: two replaces on one base, each adding a column of its own: the second's field id assignment is stale
    first = replace_commit(t, ns, name, base, REPLACED, None, None, {}, "updateTable (first replace: a new column)")
    if first.status != 200:
        return t.inconclusive(f"the first replace answered {describe(first)}: nothing acknowledged to build on")
    _, after_first = load_result(t, ns, name, "read: the table after the first replace")
    other = struct(field(1, "id", "long"), field(3, "second", "long"), schema_id=1)
    second = replace_commit(t, ns, name, base, other, None, None, {}, "updateTable (second replace, stale base)")
    _, after_second = load_result(t, ns, name, "read: the table after the stale replace")
    e = tally(effects, statuses, refused(t, second, after_first or {}, after_second,
                                         "a replace whose assert-last-assigned-field-id no longer holds"))
    if e or after_second is None:
        return judge(t, "of two replaces on one base the stale one is refused (409)", effects, statuses, "")
    other = struct(field(1, "id", "long"), field(4, "second", "long"), schema_id=1)     # the id a client assigns
    retried = replace_commit(t, ns, name, after_second, other, None, None, {},
                             "updateTable (second replace, retried on the fresh base)")
    _, after_retry = load_result(t, ns, name, "read: the table after the retried replace")
    m = meta(after_retry)
    want = [(1, "id", "long"), (4, "second", "long")]
    if retried.status != 200 or columns(current_schema(m)) != want or m.get("table-uuid") != uuid:
        effects.append(f"the retried replace answered {describe(retried)}; the table's columns are "
                       f"{columns(current_schema(m))} (expected {want}), uuid {m.get('table-uuid')}")
    # spec: two replaces adding a partition field each on one base: the second's partition id assignment is stale
    base2 = after_retry or {}
    spec_first = replace_commit(t, ns, name, base2, REPLACED, spec(SHARD, spec_id=1), None, {},
                                "updateTable (replace with a bucket spec)")
    _, after_spec = load_result(t, ns, name, "read: the table after the spec replace")
    spec_second = replace_commit(t, ns, name, base2, REPLACED, spec((3, 1000, "replaced", "identity"), spec_id=1),
                                 None, {}, "updateTable (replace with another spec, stale base)")
    _, after_spec2 = load_result(t, ns, name, "read: the table after the stale spec replace")
    if spec_first.status != 200:
        effects.append(f"a replace with a new spec answered {describe(spec_first)}")
    else:
        tally(effects, statuses, refused(t, spec_second, after_spec or {}, after_spec2,
                       "a replace whose assert-last-assigned-partition-id no longer holds"))
    # sort order: replaces assert nothing of the order, so the later one wins
    base3 = after_spec2 or {}
    by_id, by_name = order((1, "identity")), order((3, "identity"))
    o1 = replace_commit(t, ns, name, base3, REPLACED, spec(SHARD, spec_id=1), by_id, {}, "updateTable (replace, "
                                                                                         "order by id)")
    o2 = replace_commit(t, ns, name, base3, REPLACED, spec(SHARD, spec_id=1), by_name, {},
                        "updateTable (replace on the same base, order by the new column)")
    _, final = load_result(t, ns, name, "read: the table after both order replaces")
    if o1.status != 200 or o2.status != 200 or order_fields(default_order(meta(final))) != order_fields(by_name):
        effects.append(f"two replaces changing only the order answered {o1.status} and {o2.status}; the default "
                       f"order is {order_fields(default_order(meta(final)))} (the later one: "
                       f"{order_fields(by_name)})")
    return judge(t, "concurrent replaces: a stale field or partition id assignment answers 409 and changes nothing, "
                    "the retried replace lands; replaces that assert nothing the other changed both land, the later "
                    "one current", effects, statuses,
                 "the stale schema and spec replaces answered 409 and changed nothing; the retried replace landed "
                 "(uuid kept); two order-only replaces on one base both landed, the later order current")

