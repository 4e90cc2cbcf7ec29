"""Catalog semantics: table evolution (EVO-01..EVO-08) and the v3 variant type (V3-01). Plain requests, judged by
status, error type and the table metadata read back.

What Iceberg's compatibility kit does through the Java client (``table.updateSchema().addColumn(...).commit()``)
arrives at a REST catalog as an updateTable request: the updates the client computed and the requirements that
pin its base (``UpdateRequirements.forUpdateTable``). The checks send those requests themselves:

- an update is the next load's current state (schema, spec, order, properties, refs), and reverting to an earlier
  id works;
- a requirement the table no longer meets (a concurrent commit changed the schema, spec, order or the ids they
  assign) answers 409 CommitFailedException and changes nothing;
- the kit's "server side retry" tests: a concurrent change that does not touch what the commit asserts leaves the
  commit landing on the new base, both changes kept (and a commit that asserted the whole base is refused first:
  the client's refresh-and-retry is then what lands).

The shared pieces (request shapes, reading the metadata back) are used by ``transactions.py`` too.
"""

from __future__ import annotations

from typing import Any, Callable

from ctk.catalog.bodies import create_table_body, ident, schema as kit_schema, set_properties_update
from ctk.catalog.capabilities import Capability
from ctk.client.transport import ns_path, table_path
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.checks.common import describe
from ctk.checks.semantics.harness import SemRun
from ctk.checks.semantics.reading import acknowledged, chosen, columns, current_schema, load_result, meta
from ctk.checks.semantics.registry import semantic
from ctk.checks.semantics.tables import drop

CONFLICT = ("CommitFailedException",)
NO_TABLE = ("NoSuchTableException",)
MARK = "ctk.evo"


# ------------------------------------------------------------------------------------------------ request shapes

def field(fid: int, name: str, kind: Any, required: bool = False) -> dict:
    return {"id": fid, "name": name, "type": kind, "required": required}


def struct(*fields: dict, schema_id: int = 0) -> dict:
    return {"type": "struct", "schema-id": schema_id, "fields": list(fields)}


BASE_FIELDS = [(f["id"], f["name"], f["type"]) for f in kit_schema()["fields"]]     # (1 id long), (2 data string)


def with_column(fid: int, name: str, kind: str = "long", schema_id: int = 1, drop: tuple[str, ...] = ()) -> dict:
    """The kit's schema with one more optional column (and without the ``drop`` columns)."""
    base = [f for f in kit_schema()["fields"] if f["name"] not in drop]
    return struct(*base, field(fid, name, kind), schema_id=schema_id)


def add_schema(schema: dict, last_column_id: int | None = None) -> dict:
    last = last_column_id if last_column_id is not None else max(_ids(schema), default=0)
    return {"action": "add-schema", "schema": schema, "last-column-id": last}


def _ids(node: Any) -> list[int]:
    """Every field id in a schema or type (nested too)."""
    out: list[int] = []
    if isinstance(node, dict):
        if node.get("type") == "struct":
            for f in node.get("fields") or []:
                if isinstance(f, dict) and isinstance(f.get("id"), int):
                    out.append(f["id"])
                    out += _ids(f.get("type"))
        elif node.get("type") == "list":
            out += [node["element-id"]] if isinstance(node.get("element-id"), int) else []
            out += _ids(node.get("element"))
        elif node.get("type") == "map":
            out += [i for i in (node.get("key-id"), node.get("value-id")) if isinstance(i, int)]
            out += _ids(node.get("key")) + _ids(node.get("value"))
    return out


def set_current_schema(schema_id: Any = -1) -> dict:
    return {"action": "set-current-schema", "schema-id": schema_id}


def spec(*fields: tuple[int, int, str, str], spec_id: int = 0) -> dict:
    """A partition spec of (source-id, field-id, name, transform) fields."""
    return {"spec-id": spec_id, "fields": [{"source-id": s, "field-id": f, "name": n, "transform": tr}
                                           for s, f, n, tr in fields]}


SHARD = (1, 1000, "shard", "bucket[16]")          # bucket(id, 16), as the kit's testUpdateTableSpec adds it


def add_spec(the_spec: dict) -> dict:
    return {"action": "add-spec", "spec": the_spec}


def set_default_spec(spec_id: Any = -1) -> dict:
    return {"action": "set-default-spec", "spec-id": spec_id}


def order(*fields: tuple[int, str], order_id: int = 1) -> dict:
    """A sort order of (source-id, transform) fields, ascending, nulls first."""
    return {"order-id": order_id, "fields": [{"source-id": s, "transform": tr, "direction": "asc",
                                              "null-order": "nulls-first"} for s, tr in fields]}


BUCKET_THEN_ID = ((1, "bucket[16]"), (1, "identity"))      # testUpdateTableSortOrder's order


def add_order(the_order: dict) -> dict:
    return {"action": "add-sort-order", "sort-order": the_order}


def set_default_order(order_id: Any = -1) -> dict:
    return {"action": "set-default-sort-order", "sort-order-id": order_id}


def req(kind: str, **values: Any) -> dict:
    """A requirement: ``req("assert-current-schema-id", current_schema_id=0)`` (keys with '-')."""
    return {"type": kind, **{k.replace("_", "-"): v for k, v in values.items()}}


# ------------------------------------------------------------------------------------------------ reading back

def commit(t: SemRun, ns: tuple[str, ...], name: str, updates: list[dict], requirements: list[dict] | None = None,
           label: str = "updateTable") -> Exchange:
    body = {"identifier": ident(ns, name), "requirements": list(requirements or []), "updates": updates}
    return t.send("POST", table_path(ns, name), body, label=label)


def default_spec(m: dict) -> dict:
    return chosen(m, "partition-specs", "spec-id", "default-spec-id")


def spec_fields(the_spec: dict) -> list[tuple[Any, ...]]:
    return columns(the_spec, ("source-id", "field-id", "name", "transform"))


def default_order(m: dict) -> dict:
    return chosen(m, "sort-orders", "order-id", "default-sort-order-id")


def order_fields(the_order: dict) -> list[tuple[Any, ...]]:
    return columns(the_order, ("source-id", "transform", "direction", "null-order"))


def state_id(loaded: dict | None, key: str, requirement: str) -> int:
    """The integer ``key`` of a table's metadata as it loaded, for a ``requirement`` built from the catalog's own
    state. A load without an integer one leaves nothing valid to assert: PrerequisiteError (inconclusive)."""
    value = meta(loaded).get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        from ctk.catalog import PrerequisiteError

        raise PrerequisiteError(f"the table's metadata has no integer {key} (got {value!r}): no valid {requirement} "
                                "can be built from it")
    return value


def last_partition_id(loaded: dict | None) -> int:
    """``last-partition-id`` as the table loaded (Java starts an unpartitioned table at 999, other catalogs at 0:
    never assumed)."""
    return state_id(loaded, "last-partition-id", "assert-last-assigned-partition-id")


def last_column_id(loaded: dict | None) -> int:
    return state_id(loaded, "last-column-id", "assert-last-assigned-field-id")


def location(loaded: dict | None) -> Any:
    return (loaded or {}).get("metadata-location")


def refused(t: SemRun, ex: Exchange, before: dict | None, after: dict | None, what: str,
            statuses: tuple[int, ...] = (409,), types: tuple[str, ...] = CONFLICT) -> tuple[str | None, str | None]:
    """(effect problem, status problem) of a commit that must be refused and change nothing: the effect problem
    when it was accepted or the table changed, the status problem when it changed nothing but answered
    otherwise than ``statuses`` / ``types``. A table that cannot be read back afterwards leaves the check
    undecided (PrerequisiteError: inconclusive)."""
    if ex.status is not None and 200 <= ex.status < 300:
        if 409 in statuses:     # a requirement that did not hold, answered as a success: OCC-01's rule (root causes)
            t.stale_accepted.append(what)
        return f"{what}: answered {ex.status} (accepted)", None
    if after is None:     # nothing to judge the effect from: the check is inconclusive (the harness says so)
        from ctk.catalog import PrerequisiteError

        raise PrerequisiteError(f"reading the table back after {what} (answered {describe(ex)}) failed")
    if location(after) != location(before):
        return (f"{what}: answered {describe(ex)}, but the metadata-location moved from {location(before)} to "
                f"{location(after)}"), None
    return None, t.expect(ex, statuses, types)


def tally(effects: list[str], statuses: list[str | None], found: tuple[str | None, str | None]) -> str | None:
    """Add what `refused` found to the check's effect and status problems; the effect problem (None: none)."""
    effect, status = found
    if effect:
        effects.append(effect)
    statuses.append(status)
    return effect


def judge(t: SemRun, expected: str, effects: list[str], statuses: list[str | None], done: str,
          unreadable: list[str | None] | None = None) -> Verdict:
    """The verdict of a check that collected effect problems (MUST) and status problems (documents' level)."""
    if effects:
        return t.broken(expected, "; ".join(effects))
    gaps = [u for u in unreadable or [] if u]
    if gaps:
        return t.inconclusive("; ".join(gaps))
    wrong = [s for s in statuses if s]
    if wrong:
        return t.status_broken(expected, "; ".join(wrong))
    return t.ok(done)


def _misnamed(body: dict, key: str) -> str | None:
    """The key of ``body`` that spells ``key`` otherwise (``metadata_location``, ``metadataLocation``), if any."""
    return next((k for k in body if k != key and k.replace("_", "-").lower() in (key, key.replace("-", ""))
                 or k.lower() == key.replace("-", "")), None)


def lacks(m: dict, column: tuple[Any, Any, Any], spec_is: list | None = None, order_is: list | None = None
          ) -> str | None:
    """What the metadata ``m`` lacks of the kit's columns plus ``column`` and (where given) the default spec's or
    sort order's fields (None: it has them all)."""
    have = columns(current_schema(m))
    if have != BASE_FIELDS + [column]:
        return f"the current schema is {have}, without {column[1]}"
    if spec_is is not None and spec_fields(default_spec(m)) != spec_is:
        return f"the default spec is {spec_fields(default_spec(m))}, not {spec_is}"
    if order_is is not None and order_fields(default_order(m)) != order_is:
        return f"the default order is {order_fields(default_order(m))}, not {order_is}"
    return None


def _stale_bases(t: SemRun, ns: tuple[str, ...], noun: str, kept: str, updates: list[dict],
                 stale: list[tuple[Callable[[], tuple[str, Any, dict | None]], str, dict]],
                 stop_at_effect: bool = False) -> Verdict:
    """The compatibility kit's *Conflict tests of a ``noun`` update: for each (``base()``: a table, its uuid and
    its load after a concurrent change; a requirement ``kind``; its value the change made stale) ``updates``
    under that requirement answer 409 CommitFailedException and change nothing (``stop_at_effect``: the bases
    are one table, and one that changed ends the check)."""
    effects: list[str] = []
    statuses: list[str | None] = []
    for base, kind, value in stale:
        name, uuid, before = base()
        ex = commit(t, ns, name, updates, [req("assert-table-uuid", uuid=uuid), req(kind, **value)],
                    f"updateTable (stale {kind})")
        _, after = load_result(t, ns, name)
        if tally(effects, statuses, refused(t, ex, before, after, f"stale {kind}")) and stop_at_effect:
            break
    return judge(t, f"a {noun} update on a stale base answers 409 CommitFailedException and the table keeps the "
                    f"concurrent {kept}", effects, statuses,
                 "stale " + " and ".join(kind for _, kind, _ in stale) + " each answered 409 "
                 f"CommitFailedException; the concurrent {noun} stayed")


def _uuid(loaded: dict | None) -> Any:
    return meta(loaded).get("table-uuid")


def _stale_then_retry(t: SemRun, stem: str, concurrent: list[dict], stale: dict, own: list[dict],
                      own_requirements: list[dict] | Callable[[dict], list[dict]], landed: Any, what: str) -> Verdict:
    """The compatibility kit's "server side retry" tests: ``concurrent`` (an unrelated change) lands first; the
    commit of ``own`` asserting the whole base (``stale``) is refused and changes nothing; the same updates with
    the requirements of what they change only (``own_requirements``, which the concurrent change left true) land
    on the new base (given as a function of the created table's load where they carry its values).
    ``landed(meta) -> str | None`` names what is missing of both changes."""
    ns = t.namespace(stem)
    name, created = t.table(ns)
    if callable(own_requirements):
        own_requirements = own_requirements(created)
    uuid = _uuid(created)
    after_concurrent = t.commit_ok(ns, name, concurrent, [req("assert-table-uuid", uuid=uuid)],
                                   label="setup: a concurrent change")
    first = commit(t, ns, name, own, [req("assert-table-uuid", uuid=uuid), stale, *own_requirements],
                   label=f"{what} asserting the stale base")
    _, after_stale = load_result(t, ns, name, "read: the table after the stale commit")
    effect, status = refused(t, first, after_concurrent, after_stale, f"{what} with a stale `{stale['type']}`")
    if effect:
        return t.broken("a commit whose requirement no longer holds is refused (409) and changes nothing", effect)
    retry = commit(t, ns, name, own, [req("assert-table-uuid", uuid=uuid), *own_requirements],
                   label=f"{what} with the requirements it needs")
    if retry.status != 200:
        return t.status_broken(f"after a concurrent change that leaves its requirements true, {what} lands",
                        f"it answered {describe(retry)}")
    _, final = load_result(t, ns, name, "read: the table after the retried commit")
    if final is None:
        return t.inconclusive(f"{what} answered 200, but loading the table failed")
    if location(final) != (retry.json() or {}).get("metadata-location"):
        return t.broken("the next load shows the commit's metadata-location",
                        f"the commit answered {(retry.json() or {}).get('metadata-location')}, the load shows "
                        f"{location(final)}")
    missing = landed(meta(final))
    if missing:
        return t.broken(f"{what} on top of the concurrent change keeps both", missing)
    if status:
        return t.status_broken("409 CommitFailedException for a requirement that no longer holds", status)
    return t.ok(f"a stale `{stale['type']}` was refused (409) and changed nothing; with its own requirements "
                f"{what} landed on the concurrent change, both kept")


# ------------------------------------------------------------------------------------------------ EVO-01

@semantic("EVO-01", "updateTable", uses=("createTable", "loadTable"), baseline=True)
def check_commit_read_back(t: SemRun) -> Verdict:
    ns = t.namespace("evo_rw")
    name, created = t.table(ns)
    mark = t.unique("m")
    ex = commit(t, ns, name, [set_properties_update({MARK: mark})], [req("assert-table-uuid", uuid=_uuid(created))],
                label="updateTable (set-properties)")
    if ex.status != 200:
        return t.not_acknowledged(ex, "a plain set-properties commit")
    answer = ex.json() if isinstance(ex.json(), dict) else {}
    answered = answer.get("metadata-location")
    got, loaded = load_result(t, ns, name, "read: load the committed table")
    if loaded is None:
        return t.broken("an acknowledged commit: the table loads with it", f"loading it answered {describe(got)}")
    shown = (meta(loaded).get("properties") or {}).get(MARK)
    if not answered:
        # CommitTableResponse requires `metadata-location`: a client cannot read the answer (Java's parser throws),
        # so it takes a commit that landed for one that failed. Named as that, with the field; where the change
        # is in the table the plain commit works, and what rests on it stays decided (details.effect_held)
        other = _misnamed(answer, "metadata-location")
        what = ("updateTable answered 200 without the required field `metadata-location` (CommitTableResponse)"
                + (f"; it names the field `{other}`" if other else ""))
        if shown == mark:
            return t.broken("a commit's answer carries the fields CommitTableResponse requires",
                            f"{what}; the committed change loads back", "required field missing",
                            details={"missing_field": "metadata-location", "schema": "CommitTableResponse",
                                     "effect_held": True})
        return t.broken("an acknowledged commit is in the next load",
                        f"{what}, and the next load shows {MARK}={shown!r}, not the committed {mark!r}")
    if answered and location(loaded) is None and shown == mark:
        # the change is in the table: the plain commit works (retries may rest on it); the load answer only lacks
        # the field (misnamed, say), which clients need to see that the metadata changed - a finding of its own
        other = _misnamed(loaded, "metadata-location")
        return t.status_broken("the next loadTable answers `metadata-location` (LoadTableResult)",
                               f"the committed change loads back, but the load answer has no `metadata-location`"
                               + (f" (it names the field `{other}`)" if other else ""))
    if not answered or location(loaded) != answered:
        return t.broken("the next loadTable shows the metadata-location the commit answered",
                        f"the commit answered {answered!r}, the load shows {location(loaded)!r}")
    if shown != mark:
        return t.broken(f"the committed property {MARK}={mark} is in the loaded metadata", f"it shows {shown!r}")
    return t.ok("a set-properties commit answered 200; the next load shows its metadata-location and the property")


@semantic("EVO-01", "commitTransaction", uses=("createTable", "loadTable"), baseline=True)
def check_transaction_read_back(t: SemRun) -> Verdict:
    ns = t.namespace("evo_txn")
    tables = [t.table(ns), t.table(ns)]
    mark = t.unique("m")
    changes = [{"identifier": ident(ns, name), "requirements": [req("assert-table-uuid", uuid=_uuid(loaded))],
                "updates": [set_properties_update({MARK: f"{mark}-{i}"})]} for i, (name, loaded) in enumerate(tables)]
    ex = t.send("POST", "transactions/commit", {"table-changes": changes}, label="commitTransaction (two tables)")
    if not acknowledged(ex):
        return t.not_acknowledged(ex, "a plain two-table commitTransaction")
    problems = []
    for i, (name, _) in enumerate(tables):
        got, loaded = load_result(t, ns, name, f"read: load table {i + 1} of the transaction")
        shown = (meta(loaded).get("properties") or {}).get(MARK) if loaded else None
        if shown != f"{mark}-{i}":
            problems.append(f"{name}: {MARK}={shown!r} ({describe(got)})")
    if problems:
        return t.broken("both tables of an acknowledged commitTransaction show their change",
                        f"answered {ex.status}; " + "; ".join(problems))
    if ex.status != 204:
        return t.status_broken("commitTransaction answers 204", f"it answered {ex.status}")
    return t.ok("a two-table commitTransaction answered 204; both tables load with their change")


# ------------------------------------------------------------------------------------------------ EVO-02 schema

NEW_COL = with_column(3, "new_col")


def _update_then_revert(t: SemRun, stem: str, key: str, set_current: Callable[[Any], dict], updates: list[dict],
                        requirements: Callable[[dict], list[dict]], label: str, what: str,
                        shown: Callable[[dict], Any], want: Any, committed: str, revert_label: str,
                        revert_expected: str,
                        reverted: Callable[[tuple[str, ...], str, Any, Any, dict | None], Verdict],
                        unread: str | None = None) -> Verdict:
    """The compatibility kit's update and *ThenRevert tests of a table's current schema, default spec or default
    sort order (the metadata's ``key``): ``updates`` under ``requirements`` (of the created table's load, beside
    its uuid) land and the next load ``shown`` is ``want``; ``set_current`` of the earlier id 0, asserting the new
    id, lands; ``reverted(ns, name, uuid, new id, the reverted load)`` judges the rest. ``unread``: what a load
    without metadata breaks (None: the comparison with ``want`` judges it)."""
    ns = t.namespace(stem)
    name, created = t.table(ns)
    uuid = _uuid(created)
    ex = commit(t, ns, name, updates, [req("assert-table-uuid", uuid=uuid), *requirements(created)], label)
    if ex.status != 200:
        return t.not_acknowledged(ex, what)
    _, loaded = load_result(t, ns, name)
    if loaded is None and unread is not None:
        return t.broken(unread, "loading the table failed")
    m = meta(loaded)
    if shown(m) != want:
        return t.broken(committed, f"it is {shown(m)}")
    new_id = m.get(key)
    revert = commit(t, ns, name, [set_current(0)],
                    [req("assert-table-uuid", uuid=uuid), req(f"assert-{key}", **{key.replace("-", "_"): new_id})],
                    revert_label)
    if revert.status != 200:
        return t.status_broken(revert_expected, f"it answered {describe(revert)}")
    _, back = load_result(t, ns, name, "read: the reverted table")
    return reverted(ns, name, uuid, new_id, back)


@semantic("EVO-02", "updateTable", uses=("createTable", "loadTable"))
def check_schema_update_and_revert(t: SemRun) -> Verdict:
    def reverted(ns: tuple[str, ...], name: str, uuid: Any, new_id: Any, back: dict | None) -> Verdict:
        mb = meta(back)
        if mb.get("current-schema-id") != 0 or columns(current_schema(mb)) != BASE_FIELDS:
            return t.broken("after the revert the earlier schema (id 0) is current",
                            f"current-schema-id {mb.get('current-schema-id')}, columns {columns(current_schema(mb))}")
        kept = {s.get("schema-id") for s in mb.get("schemas") or [] if isinstance(s, dict)}
        if new_id not in kept:
            return t.broken("the reverted-from schema stays in the table's schemas",
                            f"schema ids {sorted(kept, key=str)}")
        return t.ok(f"the added column loaded back with field id 3 (schema {new_id}); set-current-schema 0 reverted "
                    "to the original schema, both kept")

    want = BASE_FIELDS + [(3, "new_col", "long")]
    return _update_then_revert(
        t, "evo_schema", "current-schema-id", set_current_schema, [add_schema(NEW_COL, 3), set_current_schema(-1)],
        lambda _: [req("assert-current-schema-id", current_schema_id=0),
                   req("assert-last-assigned-field-id", last_assigned_field_id=2)],
        "updateTable (add a column)", "a schema update", lambda m: columns(current_schema(m)), want,
        f"the current schema is the one committed, with the field ids given {want}",
        "updateTable (revert to schema 0)", "set-current-schema back to the earlier schema id lands", reverted,
        unread="an acknowledged schema update loads back")


@semantic("EVO-02", "updateTable", uses=("createTable", "loadTable"))
def check_schema_conflicts(t: SemRun) -> Verdict:
    ns = t.namespace("evo_schema_cf")

    def concurrent(change: list[dict], label: str) -> Callable[[], tuple[str, Any, dict | None]]:
        def base() -> tuple[str, Any, dict | None]:     # a table of its own for each stale requirement
            name, created = t.table(ns)
            uuid = _uuid(created)
            return name, uuid, t.commit_ok(ns, name, change, [req("assert-table-uuid", uuid=uuid)], label=label)
        return base

    return _stale_bases(t, ns, "schema", "change", [add_schema(NEW_COL, 3), set_current_schema()], [
        # a concurrent change of the current schema (a column dropped): assert-current-schema-id no longer holds
        (concurrent([add_schema(struct(field(1, "id", "long"), schema_id=1), 2), set_current_schema()],
                    "setup: a concurrent schema change"), "assert-current-schema-id", {"current_schema_id": 0}),
        # a concurrent column added (field id 3 taken): assert-last-assigned-field-id no longer holds
        (concurrent([add_schema(with_column(3, "another_col", "string"), 3), set_current_schema()],
                    "setup: a concurrent column added"), "assert-last-assigned-field-id",
         {"last_assigned_field_id": 2})])


@semantic("EVO-02", "updateTable", uses=("createTable", "loadTable"))
def check_schema_server_side_retry(t: SemRun) -> Verdict:
    return _stale_then_retry(t, "evo_schema_retry", [add_spec(spec(SHARD, spec_id=1)), set_default_spec()],
                             req("assert-default-spec-id", default_spec_id=0),
                             [add_schema(NEW_COL, 3), set_current_schema()],
                             [req("assert-current-schema-id", current_schema_id=0),
                              req("assert-last-assigned-field-id", last_assigned_field_id=2)],
                             lambda m: lacks(m, (3, "new_col", "long"), spec_is=[SHARD]), "a schema update")


@semantic("EVO-02", "updateTable", uses=("createTable", "loadTable"))
def check_remove_unused_schemas(t: SemRun) -> Verdict:
    return _remove_unused(t, "evo_rm_schema", [add_schema(NEW_COL, 3), set_current_schema()],
                          "setup: a second schema, current", "remove-schemas", "schema-ids", "schema", "current",
                          "current-schema-id", "schemas", "schema-id",
                          lambda kept: req("assert-current-schema-id", current_schema_id=kept))

# ------------------------------------------------------------------------------------------------ EVO-03 spec

@semantic("EVO-03", "updateTable", uses=("createTable", "loadTable"))
def check_spec_update_and_revert(t: SemRun) -> Verdict:
    def reverted(ns: tuple[str, ...], name: str, uuid: Any, new_id: Any, back: dict | None) -> Verdict:
        mb = meta(back)
        if mb.get("default-spec-id") != 0 or spec_fields(default_spec(mb)):
            return t.broken("after the revert the unpartitioned spec 0 is the default",
                            f"default-spec-id {mb.get('default-spec-id')}, fields {spec_fields(default_spec(mb))}")
        return t.ok(f"the bucket spec loaded back as default (spec {new_id}); set-default-spec 0 reverted to "
                    "unpartitioned")

    return _update_then_revert(
        t, "evo_spec", "default-spec-id", set_default_spec, [add_spec(spec(SHARD, spec_id=1)), set_default_spec()],
        lambda created: [req("assert-default-spec-id", default_spec_id=0),
                         req("assert-last-assigned-partition-id",
                             last_assigned_partition_id=last_partition_id(created))],
        "updateTable (add a bucket partition field)", "a spec update", lambda m: spec_fields(default_spec(m)),
        [SHARD], f"the default spec is the one committed {[SHARD]}", "updateTable (revert to spec 0)",
        "set-default-spec back to the earlier spec id lands", reverted)


@semantic("EVO-03", "updateTable", uses=("createTable", "loadTable"))
def check_spec_conflicts(t: SemRun) -> Verdict:
    ns = t.namespace("evo_spec_cf")
    name, created = t.table(ns)
    uuid = _uuid(created)
    before = t.commit_ok(ns, name, [add_spec(spec((2, 1000, "data", "identity"), spec_id=1)), set_default_spec()],
                         [req("assert-table-uuid", uuid=uuid)], label="setup: a concurrent spec change")

    def base() -> tuple[str, Any, dict | None]:     # one table: the second stale commit if the first changed nothing
        return name, uuid, before

    return _stale_bases(t, ns, "spec", "spec", [add_spec(spec(SHARD, spec_id=1)), set_default_spec()],
                        [(base, "assert-default-spec-id", {"default_spec_id": 0}),
                         (base, "assert-last-assigned-partition-id",
                          {"last_assigned_partition_id": last_partition_id(created)})], stop_at_effect=True)


@semantic("EVO-03", "updateTable", uses=("createTable", "loadTable"))
def check_spec_server_side_retry(t: SemRun) -> Verdict:
    return _stale_then_retry(t, "evo_spec_retry",
                             [add_schema(with_column(3, "another_col", "string"), 3), set_current_schema()],
                             req("assert-current-schema-id", current_schema_id=0),
                             [add_spec(spec(SHARD, spec_id=1)), set_default_spec()],
                             lambda created: [req("assert-default-spec-id", default_spec_id=0),
                                              req("assert-last-assigned-partition-id",
                                                  last_assigned_partition_id=last_partition_id(created))],
                             lambda m: lacks(m, (3, "another_col", "string"), spec_is=[SHARD]),
                             "a spec update")


@semantic("EVO-03", "updateTable", uses=("createTable", "loadTable"))
def check_remove_unused_spec(t: SemRun) -> Verdict:
    return _remove_unused(t, "evo_rm_spec", [add_spec(spec(SHARD, spec_id=1)), set_default_spec()],
                          "setup: a second spec, default", "remove-partition-specs", "spec-ids", "spec", "default",
                          "default-spec-id", "partition-specs", "spec-id",
                          lambda kept: req("assert-default-spec-id", default_spec_id=kept))


def _remove_unused(t: SemRun, stem: str, setup: list[dict], setup_label: str, action: str, ids_key: str, noun: str,
                   role: str, kept_field: str, list_field: str, id_field: str,
                   asserts_kept: Callable[[Any], dict]) -> Verdict:
    """The compatibility kit's unused schema / spec removal: after ``setup`` makes a second one the ``role``
    (current schema, default spec), ``action`` of the first one lands and leaves only the kept one; ``action`` of
    the kept one is refused (400) and changes nothing."""
    ns = t.namespace(stem)
    name, created = t.table(ns)
    uuid = _uuid(created)
    before = t.commit_ok(ns, name, setup, [req("assert-table-uuid", uuid=uuid)], label=setup_label)
    kept = meta(before).get(kept_field)
    ex = commit(t, ns, name, [{"action": action, ids_key: [0]}],
                [req("assert-table-uuid", uuid=uuid), asserts_kept(kept)],
                f"updateTable ({action} of the unused {noun} 0)")
    if ex.status != 200:
        return t.status_broken(f"{action} of a {noun} no longer {role} lands", f"it answered {describe(ex)}")
    _, after = load_result(t, ns, name)
    ids = sorted((s.get(id_field) for s in meta(after).get(list_field) or [] if isinstance(s, dict)), key=str)
    if ids != [kept]:
        return t.broken(f"after {action} [0] only the {role} {noun} {kept} is left", f"{noun} ids {ids}")
    bad_ex = commit(t, ns, name, [{"action": action, ids_key: [kept]}],
                    [req("assert-table-uuid", uuid=uuid)], f"updateTable ({action} of the {role} {noun})")
    _, final = load_result(t, ns, name, f"read: the table after removing the {role} {noun} was tried")
    effect, status = refused(t, bad_ex, after, final, f"{action} of the {role} {noun}", (400,))
    # no source names the status of that refusal: a note, never a finding (docs/assertion-trace.md)
    verdict = judge(t, f"unused {noun}s are removed; removing the {role} {noun} is refused and changes nothing",
                    [effect] if effect else [], [],
                    f"{action} removed the unused {noun}; removing the {role} one answered {describe(bad_ex)} and "
                    f"changed nothing (which {noun}s a branch still needs is the client's choice)")
    if status:
        verdict.details = {**verdict.details, "notes": [status]}
    return verdict

# ------------------------------------------------------------------------------------------------ EVO-04 order

@semantic("EVO-04", "updateTable", uses=("createTable", "loadTable"))
def check_sort_order_update_and_revert(t: SemRun) -> Verdict:
    def reverted(ns: tuple[str, ...], name: str, uuid: Any, new_id: Any, back: dict | None) -> Verdict:
        if meta(back).get("default-sort-order-id") != 0:
            return t.broken("after the revert the unsorted order 0 is the default",
                            f"default-sort-order-id {meta(back).get('default-sort-order-id')}")
        stale = commit(t, ns, name, [set_default_order(new_id)],
                       [req("assert-table-uuid", uuid=uuid),
                        req("assert-default-sort-order-id", default_sort_order_id=new_id)],
                       "updateTable (stale assert-default-sort-order-id)")
        _, final = load_result(t, ns, name, "read: the table after the stale commit")
        effect, status = refused(t, stale, back, final, "stale assert-default-sort-order-id")
        return judge(t, "a sort order update loads back, reverting works, a stale assert-default-sort-order-id "
                        "answers 409 and changes nothing", [effect] if effect else [], [status],
                     f"the order loaded back as default (order {new_id}); reverting to 0 worked; a stale "
                     "assert-default-sort-order-id answered 409 and changed nothing")

    want = order_fields(order(*BUCKET_THEN_ID))
    return _update_then_revert(
        t, "evo_order", "default-sort-order-id", set_default_order,
        [add_order(order(*BUCKET_THEN_ID)), set_default_order()],
        lambda _: [req("assert-default-sort-order-id", default_sort_order_id=0)], "updateTable (a sort order)",
        "a sort order update", lambda m: order_fields(default_order(m)), want,
        f"the default sort order is the one committed {want}", "updateTable (revert to the unsorted order 0)",
        "set-default-sort-order back to the unsorted order lands", reverted)


@semantic("EVO-04", "updateTable", uses=("createTable", "loadTable"))
def check_sort_order_server_side_retry(t: SemRun) -> Verdict:
    want = order_fields(order(*BUCKET_THEN_ID))
    return _stale_then_retry(t, "evo_order_retry",
                             [add_schema(with_column(3, "another_col", "string"), 3), set_current_schema()],
                             req("assert-current-schema-id", current_schema_id=0),
                             [add_order(order(*BUCKET_THEN_ID)), set_default_order()],
                             [req("assert-default-sort-order-id", default_sort_order_id=0)],
                             lambda m: lacks(m, (3, "another_col", "string"), order_is=want),
                             "a sort order update")


# ------------------------------------------------------------------------------------------------ EVO-05

@semantic("EVO-05", "updateTable", uses=("createTable", "loadTable"))
def check_update_transaction(t: SemRun) -> Verdict:
    ns = t.namespace("evo_multi")
    name, created = t.table(ns, properties={"ctk.gone": "x", "ctk.kept": "y"})
    ex = commit(t, ns, name, [add_schema(NEW_COL, 3), set_current_schema(), add_spec(spec(SHARD, spec_id=1)),
                              set_default_spec(), set_properties_update({"ctk.a": "1", "ctk.kept": "z"}),
                              {"action": "remove-properties", "removals": ["ctk.gone"]}],
                [req("assert-table-uuid", uuid=_uuid(created)), req("assert-current-schema-id", current_schema_id=0),
                 req("assert-default-spec-id", default_spec_id=0)], "updateTable (schema, spec and properties)")
    if ex.status != 200:
        return t.not_acknowledged(ex, "a commit of several updates")
    _, loaded = load_result(t, ns, name)
    m = meta(loaded)
    props = m.get("properties") or {}
    missing = []
    if columns(current_schema(m)) != BASE_FIELDS + [(3, "new_col", "long")]:
        missing.append(f"schema {columns(current_schema(m))}")
    if spec_fields(default_spec(m)) != [SHARD]:
        missing.append(f"spec {spec_fields(default_spec(m))}")
    if props.get("ctk.a") != "1" or props.get("ctk.kept") != "z" or "ctk.gone" in props:
        missing.append(f"properties {({k: v for k, v in props.items() if k.startswith('ctk.')})}")
    if missing:
        return t.broken("every update of one commit is loaded back (new column, bucket spec, ctk.a=1, ctk.kept=z, "
                        "ctk.gone removed)", "; ".join(missing))
    return t.ok("one commit's schema, spec, set and removed properties all loaded back")


# ------------------------------------------------------------------------------------------------ EVO-06

def rows(marker: str) -> Any:
    import pyarrow as pa

    schema = pa.schema([pa.field("id", pa.int64(), nullable=True), pa.field("data", pa.string(), nullable=True)])
    return pa.Table.from_pylist([{"id": 1, "data": marker}], schema=schema)


def stage(t: SemRun, ns: tuple[str, ...], name: str, loaded: dict, marker: str) -> Any:
    """An append's files written (the kit's staged append) on ``loaded``; a failure to write is a setup step's."""
    return stage_with(t.client, ns, name, loaded, marker)


def stage_with(client: Any, ns: tuple[str, ...], name: str, loaded: dict, marker: str) -> Any:
    """`stage` with a client of the kit's (``ctk.history.writer.stage_append``, one row)."""
    from ctk.catalog import PrerequisiteError
    from ctk.history.writer import StageError, stage_append

    try:
        return stage_append(client, ns, name, data=rows(marker), marker=marker, loaded=loaded)
    except PrerequisiteError:
        raise
    except StageError as exc:
        raise PrerequisiteError(f"setup: staging an append to {name} failed: {exc}") from exc


def snapshots(m: dict) -> dict[Any, dict]:
    return {s.get("snapshot-id"): s for s in m.get("snapshots") or [] if isinstance(s, dict)}


def main_of(m: dict) -> Any:
    return ((m.get("refs") or {}).get("main") or {}).get("snapshot-id")


@semantic("EVO-06", "updateTable", uses=("createTable", "loadTable"), needs=(Capability.STORAGE,))
def check_appends_and_refs(t: SemRun) -> Verdict:
    ns = t.namespace("evo_append")
    name, empty = t.table(ns)
    a, b = stage(t, ns, name, empty, "a"), stage(t, ns, name, empty, "b")
    first = t.send("POST", a.path, a.body, label="updateTable (append A on the empty table)")
    if first.status != 200:
        return t.not_acknowledged(first, "an append")
    _, one = load_result(t, ns, name, "read: the table after append A")
    m1 = meta(one)
    logged = [e.get("snapshot-id") for e in m1.get("snapshot-log") or [] if isinstance(e, dict)]
    if m1.get("current-snapshot-id") != a.snapshot_id or main_of(m1) != a.snapshot_id or a.snapshot_id not in logged:
        return t.broken("an acknowledged append is the current snapshot, main points at it, and it is logged",
                        f"current-snapshot-id {m1.get('current-snapshot-id')}, main {main_of(m1)}, snapshot-log "
                        f"{logged} (appended {a.snapshot_id})")
    effects: list[str] = []
    statuses: list[str | None] = []
    stale = t.send("POST", b.path, b.body, label="updateTable (append B on the stale empty base)")
    _, after_b = load_result(t, ns, name, "read: the table after the stale append")
    e = tally(effects, statuses, refused(t, stale, one, after_b,
                                         "an append asserting main is absent, on a table whose main exists"))
    if after_b is None or e:
        return judge(t, "a concurrent append on a stale base is refused (409)", effects, statuses, "")
    c, d = stage(t, ns, name, after_b, "c"), stage(t, ns, name, after_b, "d")
    second = t.send("POST", c.path, c.body, label="updateTable (append C, retried on the fresh base)")
    if second.status != 200:
        return t.status_broken("an append on the fresh base lands", f"it answered {describe(second)}")
    _, two = load_result(t, ns, name, "read: the table after append C")
    m2 = meta(two)
    parent = snapshots(m2).get(c.snapshot_id, {}).get("parent-snapshot-id")
    if main_of(m2) != c.snapshot_id or parent != a.snapshot_id:
        return t.broken("the retried append is current with the first as its parent",
                        f"main {main_of(m2)} (appended {c.snapshot_id}), its parent {parent} (first {a.snapshot_id})")
    stale2 = t.send("POST", d.path, d.body, label="updateTable (append D on the stale non-empty base)")
    _, after_d = load_result(t, ns, name, "read: the table after the second stale append")
    e = tally(effects, statuses, refused(t, stale2, two, after_d, "an append on a stale non-empty base"))
    if e or after_d is None:
        return judge(t, "a concurrent append on a stale base is refused (409)", effects, statuses, "")
    refs = commit(t, ns, name, [{"action": "set-snapshot-ref", "ref-name": "ctk_tag", "type": "tag",
                                 "snapshot-id": a.snapshot_id},
                                {"action": "set-snapshot-ref", "ref-name": "ctk_branch", "type": "branch",
                                 "snapshot-id": c.snapshot_id}],
                  [req("assert-ref-snapshot-id", ref="ctk_tag", snapshot_id=None),
                   req("assert-ref-snapshot-id", ref="ctk_branch", snapshot_id=None)], "updateTable (a tag and a branch)")
    _, with_refs = load_result(t, ns, name, "read: the table's refs")
    shown = {k: (v.get("type"), v.get("snapshot-id")) for k, v in (meta(with_refs).get("refs") or {}).items()
             if isinstance(v, dict)}
    # acknowledged and not shown (or refused and shown): the effect is wrong; refused with the refs untouched: a
    # valid request not accepted, the documents' level (as not_acknowledged grades it)
    if refs.status != 200 and not {"ctk_tag", "ctk_branch"} & set(shown):
        statuses.append(f"set-snapshot-ref of a tag and a branch answered {describe(refs)}; no ref was set")
    elif refs.status != 200 or shown.get("ctk_tag") != ("tag", a.snapshot_id) \
            or shown.get("ctk_branch") != ("branch", c.snapshot_id):
        effects.append(f"set-snapshot-ref answered {describe(refs)}; the refs are {shown}")
    else:
        drop = commit(t, ns, name, [{"action": "remove-snapshot-ref", "ref-name": "ctk_tag"}], [],
                      "updateTable (remove the tag)")
        _, without = load_result(t, ns, name, "read: the refs after removing the tag")
        left = set((meta(without).get("refs") or {}))
        if drop.status != 200 and {"ctk_tag", "ctk_branch"} <= left:
            statuses.append(f"remove-snapshot-ref ctk_tag answered {describe(drop)}; the refs are unchanged")
        elif drop.status != 200 or "ctk_tag" in left or "ctk_branch" not in left:
            effects.append(f"remove-snapshot-ref ctk_tag answered {describe(drop)}; the refs are {sorted(left)}")
    return judge(t, "appends land as the current snapshot of main, logged; stale appends are refused (409); refs "
                    "set and removed load back", effects, statuses,
                 "an append landed (current, main, logged); appends on a stale empty and non-empty base answered "
                 "409 and changed nothing; the retried append landed on top; a tag and a branch were set and the "
                 "tag removed")


# ------------------------------------------------------------------------------------------------ EVO-07

@semantic("EVO-07", "updateTable", uses=("createTable", "loadTable", "dropTable"))
def check_uuid_validation(t: SemRun) -> Verdict:
    ns = t.namespace("evo_uuid")
    name, first = t.table(ns)
    dropped = drop(t, ns, name, label="setup: drop the table")
    if not acknowledged(dropped):
        return t.inconclusive(f"dropping the table answered {describe(dropped)}")
    body = create_table_body(name)
    body["schema"] = with_column(3, "other", "string", schema_id=0)
    _, second = t.table(ns, name, body=body)
    ex = commit(t, ns, name, [add_schema(with_column(3, "new_col", schema_id=1), 3), set_current_schema()],
                [req("assert-table-uuid", uuid=_uuid(first))], "updateTable (the dropped table's uuid)")
    _, after = load_result(t, ns, name)
    effects: list[str] = []
    e, s = refused(t, ex, second, after, "a commit asserting the dropped table's uuid")
    effects += [e] if e else []
    missing_name = t.unique("missing")
    ex2 = commit(t, ns, missing_name, [set_properties_update({MARK: "x"})], [], "updateTable (a table that does not "
                                                                                "exist)")
    gone = t.send("GET", table_path(ns, missing_name), label="read: the missing table is still missing")
    if gone.status == 200:
        effects.append(f"a commit to a table that does not exist answered {describe(ex2)} and created it")
    return judge(t, "a commit based on a dropped table answers 409 and leaves the new table unchanged; a commit to a "
                    "missing table answers 404 NoSuchTableException", effects,
                 [s, t.expect(ex2, (404,), NO_TABLE)],
                 "a commit asserting the dropped table's uuid answered 409 and the new table kept its schema; a "
                 "commit to a missing table answered 404 NoSuchTableException")


# ------------------------------------------------------------------------------------------------ EVO-08

@semantic("EVO-08", "updateTable", uses=("createTable", "loadTable"))
def check_metadata_log(t: SemRun) -> Verdict:
    ns = t.namespace("evo_log")
    name, created = t.table(ns)
    files = [location(created)]
    loaded: dict | None = created
    for i in range(3):
        added = [field(3 + j, c, "long") for j, c in enumerate("abc"[:i + 1])]
        loaded = t.commit_ok(ns, name, [add_schema(struct(*kit_schema()["fields"], *added, schema_id=i + 1), 3 + i),
                                        set_current_schema()], label=f"setup: add column {'abc'[i]}")
        files.append(location(loaded))

    def logged(loaded: dict | None) -> list[Any]:
        return [e.get("metadata-file") for e in meta(loaded).get("metadata-log") or [] if isinstance(e, dict)]

    notes: list[str] = []

    def counted(loaded: dict | None, previous: list[Any], expected: str, when: str) -> Verdict | None:
        """What the compatibility kit asserts: the metadata files a client reaches (the log and the current one)
        are the current one and ``previous``, counted; the log's order and which files it names beyond the count
        no source states (a note)."""
        shown = logged(loaded)
        reachable = set(shown) | {location(loaded)}
        if len(reachable) != len(previous) + 1:
            return t.broken(expected, f"{when} the log lists {shown}: {len(reachable)} metadata files with the "
                                      f"current one, not {len(previous) + 1} (the current one and {previous})")
        if shown != previous:
            notes.append(f"{when} the log lists {shown}; the previous files were {previous}")
        return None

    if (v := counted(loaded, files[:-1], "the metadata log lists each previous metadata file of the table",
                     "after 3 commits")) is not None:
        return v
    capped = t.commit_ok(ns, name, [set_properties_update({"write.metadata.previous-versions-max": "2",
                                                           "write.metadata.delete-after-commit.enabled": "true"})],
                         label="setup: keep 2 previous versions")
    files.append(location(capped))
    if (v := counted(capped, files[-3:-1], "with write.metadata.previous-versions-max 2 the log keeps 2 previous "
                     "files", "with previous-versions-max 2")) is not None:
        return v
    schema = struct(*kit_schema()["fields"], *[field(3 + i, c, "long") for i, c in enumerate("abcd")], schema_id=4)
    again = t.commit_ok(ns, name, [add_schema(schema, 6), set_current_schema()], label="setup: add column d")
    files.append(location(again))
    if (v := counted(again, files[-3:-1], "every later commit keeps the log at 2 previous files",
                     "after one more commit")) is not None:
        return v
    if notes:
        return t.ok("the metadata files a client reaches (the log and the current one) were as many as the "
                    "compatibility kit counts: 4, then 3 with write.metadata.previous-versions-max 2; which files "
                    "the log names and their order: details.notes", details={"notes": notes})
    return t.ok("the metadata log listed every previous metadata file, and was trimmed to "
                "write.metadata.previous-versions-max (2) from then on")


# ------------------------------------------------------------------------------------------------ EVO-09

UNKNOWN_ACTION = "ctk-unknown-action"
UNKNOWN_REQUIREMENT = "ctk-unknown-requirement"
BAD_REQUEST = ("BadRequestException",)


@semantic("EVO-09", "updateTable", uses=("createTable", "loadTable"))
def check_unknown_update_or_requirement(t: SemRun) -> Verdict:
    """Two commits, each invalid on purpose (X-Ctk-Invalid): a set-properties beside an update action the
    document does not define, and one under a requirement type it does not define. Each must be refused and
    leave the table as it was; a 200 means the catalog dropped what it did not know and said "done"."""
    ns = t.namespace("evo_unknown")
    name, before = t.table(ns)
    effects: list[str] = []
    statuses: list[str | None] = []
    sent: tuple[tuple[str, list[dict], list[dict], str], ...] = (
        ("an update action it does not define",
         [set_properties_update({MARK: "action"}), {"action": UNKNOWN_ACTION, "ctk": "x"}], [],
         f"update action {UNKNOWN_ACTION!r} is not defined (sent to be refused)"),
        ("a requirement type it does not define",
         [set_properties_update({MARK: "requirement"})], [{"type": UNKNOWN_REQUIREMENT}],
         f"requirement type {UNKNOWN_REQUIREMENT!r} is not defined (sent to be refused)"),
    )
    current = before
    for what, updates, requirements, invalid in sent:
        body = {"identifier": ident(ns, name), "requirements": requirements, "updates": updates}
        ex = t.send("POST", table_path(ns, name), body, label=f"updateTable with {what}", invalid=invalid)
        _, after = load_result(t, ns, name, f"read: the table after the commit with {what}")
        effect, status = refused(t, ex, current, after, f"a commit with {what}", (400,), BAD_REQUEST)
        marked = (meta(after).get("properties") or {}).get(MARK)
        if effect is None and marked:
            effect = f"a commit with {what}: answered {describe(ex)}, but the table has {MARK}={marked}"
        effects += [effect] if effect else []
        statuses.append(status)
        current = after or current
    return judge(t, "a commit with an update action or requirement type the document does not define is refused "
                    "(400 BadRequestException) and changes nothing", effects, statuses,
                 "both commits (an undefined update action, an undefined requirement type) were refused with 400 "
                 "and the table was unchanged")


# ------------------------------------------------------------------------------------------------ V3-01

VARIANT_REQUESTED = struct(
    field(10, "id", "long", True), field(11, "data", "variant"),
    field(12, "list_data", {"type": "list", "element-id": 13, "element": "variant", "element-required": False}),
    field(14, "map_data", {"type": "map", "key-id": 15, "key": "string", "value-id": 16, "value": "variant",
                           "value-required": False}),
    field(17, "struct_data", {"type": "struct", "fields": [field(18, "v", "variant")]}))


def _shape(node: Any) -> Any:
    """A type's JSON without what does not make it another type (docs, defaults, schema ids)."""
    if isinstance(node, dict):
        keep = ("type", "id", "name", "required", "fields", "element-id", "element", "element-required", "key-id",
                "key", "value-id", "value", "value-required")
        return {k: _shape(v) for k, v in node.items() if k in keep}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return node


_ID_KEYS = ("id", "element-id", "key-id", "value-id")


def _without_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_ids(v) for k, v in node.items() if k not in _ID_KEYS}
    if isinstance(node, list):
        return [_without_ids(v) for v in node]
    return node


def _all_ids(node: Any) -> list[Any]:
    """Every id of a type's JSON: field, element, key and value ids."""
    if isinstance(node, dict):
        return [node[k] for k in _ID_KEYS if k in node] + [i for v in node.values() for i in _all_ids(v)]
    if isinstance(node, list):
        return [i for v in node for i in _all_ids(v)]
    return []


@semantic("V3-01", "createTable", uses=("loadTable", "updateTable"), needs=(Capability.FORMAT_V3,))
def check_variant_columns(t: SemRun) -> Verdict:
    ns = t.namespace("v3_variant")
    effects: list[str] = []
    statuses: list[str | None] = []
    v3 = t.unique("v3")
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/tables",
                {**create_table_body(v3, {"format-version": "3"}), "schema": VARIANT_REQUESTED},
                label="createTable (v3, variant columns)")
    if ex.status != 200:
        effects.append(f"a v3 table with variant columns: createTable answered {describe(ex)}")
    else:
        _, loaded = load_result(t, ns, v3)
        m = meta(loaded)
        got = _shape({"type": "struct", "fields": current_schema(m).get("fields")})
        ids = _all_ids(got)
        # the order a catalog assigns fresh ids in is its own (the spec names none; Java goes level by level):
        # the columns, their types and nesting are judged, and that the ids are distinct
        if m.get("format-version") != 3 or _without_ids(got) != _without_ids(
                _shape({"type": "struct", "fields": VARIANT_REQUESTED["fields"]})) or len(ids) != len(set(ids)):
            effects.append(f"the v3 table loads with format-version {m.get('format-version')} and columns "
                           f"{columns(current_schema(m))}, not the requested variant columns (distinct ids)")
    v2 = t.unique("v2")
    ex2 = t.send("POST", f"namespaces/{ns_path(ns)}/tables",
                 {**create_table_body(v2, {"format-version": "2"}),
                  "schema": struct(field(1, "id", "long", True), field(2, "data", "variant"))},
                 label="createTable (v2, a variant column)")
    exists = t.send("GET", table_path(ns, v2), label="read: the v2 table was not created")
    if (ex2.status is not None and 200 <= ex2.status < 300) or exists.status == 200:
        effects.append(f"a v2 table with a variant column: createTable answered {describe(ex2)}, then loading it "
                       f"answered {exists.status}")
    elif (note := t.expect(ex2, range(400, 500))) is not None:
        statuses.append(note)       # refused, but not with a 4xx (the compatibility kit asserts a refusal)
    add_name = t.unique("add")
    name, created = t.table(ns, add_name, body={**create_table_body(add_name, {"format-version": "3"}),
                                                "schema": struct(field(1, "id", "long", True))})
    add = commit(t, ns, name, [add_schema(struct(field(1, "id", "long", True), field(2, "data", "variant"),
                                                 schema_id=1), 2), set_current_schema()],
                 [req("assert-table-uuid", uuid=_uuid(created)), req("assert-current-schema-id", current_schema_id=0)],
                 "updateTable (add a variant column)")
    _, after = load_result(t, ns, name)
    if add.status != 200 or columns(current_schema(meta(after))) != [(1, "id", "long"), (2, "data", "variant")]:
        effects.append(f"adding a variant column to a v3 table answered {describe(add)}; its columns are "
                       f"{columns(current_schema(meta(after)))}")
    return judge(t, "a v3 table holds variant columns (created or added) and loads back with them; a v2 table with "
                    "a variant column is refused (a 4xx)", effects, statuses,
                 "a v3 table with variant columns (nested too) loaded back with fresh ids; a variant column was "
                 "added to a v3 table; a v2 table with one was refused (a 4xx) and not created")
