"""Table metadata as Iceberg Java's metadata builder makes it: new tables, updates, requirement checks.

pyiceberg applies the spec's table updates (`update_table_metadata`) but differs from Java's
`TableMetadata.Builder` where a REST catalog's answer shows it, so the reference applies these itself:

- ids: `add-schema`, `add-spec` and `add-sort-order` get the id of an equal schema / spec / order already in the
  metadata, else the next free one (schemas: above the current and every existing id; specs from 0, orders from 1;
  the unsorted order is 0), whatever id the client sent. `-1` in `set-current-schema`, `set-default-spec` and
  `set-default-sort-order` means the one the last `add-*` of this commit named (an equal one that was there
  before the commit is not "added": -1 then fails, as in Java);
- format version 3: `next-row-id` starts at 0 (a new table, a create transaction, an upgrade), a snapshot must
  carry `first-row-id` and `added-rows`, a `first-row-id` behind the table's `next-row-id` is a conflict (409,
  retryable), and the table's `next-row-id` grows by `added-rows`; fields' `initial-default` / `write-default`
  are kept (pyiceberg's fresh-id assignment drops them) and refused before v3;
- requirement failures are worded as Java's `UpdateRequirement` words them ("Requirement failed: current schema
  changed: expected id 1 != 2", ...), which clients and operators match on.

Every refusal is a CatalogError: 400 BadRequestException for an update Java's builder rejects, 409
CommitFailedException for a failed requirement.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from pyiceberg.partitioning import PARTITION_FIELD_ID_START, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil, new_table_metadata
from pyiceberg.table.sorting import SortOrder
from pyiceberg.table.update import (AddPartitionSpecUpdate, AddSchemaUpdate, AddSnapshotUpdate, AddSortOrderUpdate,
                                    AssertCreate, AssertCurrentSchemaId, AssertDefaultSortOrderId,
                                    AssertDefaultSpecId, AssertLastAssignedFieldId, AssertLastAssignedPartitionId,
                                    AssertRefSnapshotId, AssertTableUUID, RemovePartitionSpecsUpdate,
                                    RemovePartitionStatisticsUpdate, RemovePropertiesUpdate, RemoveSchemasUpdate,
                                    RemoveSnapshotsUpdate, RemoveStatisticsUpdate, SetCurrentSchemaUpdate,
                                    SetDefaultSortOrderUpdate, SetDefaultSpecUpdate, UpgradeFormatVersionUpdate,
                                    _apply_table_update, _TableMetadataUpdateContext, _update_table_metadata_log)
from pyiceberg.typedef import IcebergBaseModel
from pyiceberg.utils.datetime import datetime_to_millis

from ctk.reference import variant  # noqa: F401 - the v3 variant type, known to the parser before any schema
from ctk.reference.operations import CatalogError

ROW_LINEAGE_VERSION = 3          # the first format version with row lineage and default values
MAX_FORMAT_VERSION = 3           # Java's MAX_FORMAT_VERSION (pyiceberg's constant says 2: what it writes)
RETRY_PREFIX = "Validation failed, please retry:"
UNSORTED_ORDER_ID = 0


def bad(msg: str) -> CatalogError:
    return CatalogError(400, "BadRequestException", msg)


def conflict(msg: str) -> CatalogError:
    return CatalogError(409, "CommitFailedException", msg)


# ---------------------------------------------------------------------------------------------- requirements

def requirement_failure(requirement: Any, base: Any) -> str | None:
    """Java's message for a requirement that ``base`` (table metadata, or None: no table) fails, else None."""
    r = requirement
    if isinstance(r, AssertCreate):
        return "table already exists" if base is not None else None
    if base is None:
        return "current table metadata is missing"
    if isinstance(r, AssertTableUUID):
        return None if r.uuid == base.table_uuid else f"UUID does not match: expected {base.table_uuid} != {r.uuid}"
    if isinstance(r, AssertRefSnapshotId):
        ref = base.refs.get(r.ref)
        if ref is not None:
            kind = "branch" if str(ref.snapshot_ref_type) == "branch" else "tag"
            if r.snapshot_id is None:
                return f"{kind} {r.ref} was created concurrently"
            if r.snapshot_id != ref.snapshot_id:
                return f"{kind} {r.ref} has changed: expected id {r.snapshot_id} != {ref.snapshot_id}"
            return None
        return None if r.snapshot_id is None else f"branch or tag {r.ref} is missing, expected {r.snapshot_id}"
    checks = (
        (AssertLastAssignedFieldId, "last_assigned_field_id", "last_column_id", "last assigned field id changed"),
        (AssertCurrentSchemaId, "current_schema_id", "current_schema_id", "current schema changed"),
        (AssertLastAssignedPartitionId, "last_assigned_partition_id", "last_partition_id",
         "last assigned partition id changed"),
        (AssertDefaultSpecId, "default_spec_id", "default_spec_id", "default partition spec changed"),
        (AssertDefaultSortOrderId, "default_sort_order_id", "default_sort_order_id", "default sort order changed"),
    )
    for cls, wanted, actual, what in checks:
        if isinstance(r, cls):
            expected, found = getattr(r, wanted), getattr(base, actual)
            return None if expected == found else f"{what}: expected id {expected} != {found}"
    r.validate(base)          # a requirement type pyiceberg knows and this module does not: its own check
    return None


def check_requirements(requirements: list, base: Any) -> None:
    """Raise pyiceberg's CommitFailedException, worded as Java's, for the first requirement ``base`` fails."""
    for requirement in requirements:
        problem = requirement_failure(requirement, base)
        if problem is not None:
            raise CommitFailedException(f"Requirement failed: {problem}")


# ---------------------------------------------------------------------------------------------- new tables

def _fresh_type(node: Any, next_id, ids: dict[int, int]) -> Any:
    """A type's JSON with fresh field ids in Java's order (a struct's fields first, then their types)."""
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind == "struct":
        fields = []
        for field in node.get("fields", []):
            new = dict(field)
            new["id"] = next_id()
            ids[field["id"]] = new["id"]
            fields.append(new)
        for new in fields:
            new["type"] = _fresh_type(new["type"], next_id, ids)
        return {**node, "fields": fields}
    if kind == "list":
        out = {**node, "element-id": next_id()}
        ids[node["element-id"]] = out["element-id"]
        out["element"] = _fresh_type(node["element"], next_id, ids)
        return out
    if kind == "map":
        out = {**node, "key-id": next_id(), "value-id": next_id()}
        ids[node["key-id"]], ids[node["value-id"]] = out["key-id"], out["value-id"]
        out["key"] = _fresh_type(node["key"], next_id, ids)
        out["value"] = _fresh_type(node["value"], next_id, ids)
        return out
    return node


def _with_defaults(requested: Schema, fresh: Schema) -> Schema:
    """``fresh`` (pyiceberg's fresh-id schema, which drops default values) with the requested schema's
    initial-default and write-default: the same fresh ids assigned on the JSON form, which keeps them."""
    counter = iter(range(1, 1 << 31))
    ids: dict[int, int] = {}
    doc = requested.model_dump(mode="json", by_alias=True, exclude_none=True)
    out = _fresh_type(doc, lambda: next(counter), ids)
    out["schema-id"] = fresh.schema_id
    out["identifier-field-ids"] = [ids.get(i, i) for i in doc.get("identifier-field-ids", [])]
    rebuilt = Schema.model_validate(out)
    if [f.field_id for f in rebuilt._lazy_id_to_field.values()] != [f.field_id for f in
                                                                     fresh._lazy_id_to_field.values()]:
        return fresh     # not the ids pyiceberg assigned: keep pyiceberg's (no defaults rather than wrong ids)
    return rebuilt


def has_defaults(schema: Schema) -> list[str]:
    return [schema.find_column_name(f.field_id) or f.name for f in schema._lazy_id_to_field.values()
            if f.initial_default is not None]


def check_schema_version(schema: Schema, format_version: int) -> None:
    """Java's Schema.checkCompatibility: default values need v3; pyiceberg's type checks (v3 types)."""
    if format_version < ROW_LINEAGE_VERSION:
        named = has_defaults(schema)
        if named:
            raise bad(f"Invalid schema for v{format_version}: "
                      + "; ".join(f"Invalid initial default for {n}: non-null default is not supported until "
                                  f"v{ROW_LINEAGE_VERSION}" for n in named))
    try:
        schema.check_format_version_compatibility(format_version)
    except ValueError as exc:
        raise bad(f"Invalid schema for v{format_version}: {exc}") from None


def format_version_of(properties: dict) -> int:
    raw = properties.get("format-version", "2")
    try:
        version = int(raw)
    except (TypeError, ValueError):
        raise bad(f"Invalid format-version property: {raw!r} (expected an integer)") from None
    if version < 1 or version > MAX_FORMAT_VERSION:
        raise bad(f"Unsupported format version: v{version} (supported: v{MAX_FORMAT_VERSION})")
    return version


def new_table(schema: Schema, spec: PartitionSpec, order: SortOrder, location: str, properties: dict):
    """The metadata of a new table, as Java's TableMetadata.newTableMetadata makes it (ids fresh, the
    format-version property taken out, v3: next-row-id 0 and default values kept)."""
    properties = dict(properties)
    version = format_version_of(properties)
    check_schema_version(schema, version)
    try:
        metadata = new_table_metadata(schema, spec, order, location, properties)
    except (ValueError, TypeError, KeyError, IcebergValidationError) as exc:
        raise bad(f"Invalid table definition: {exc}") from None
    if version >= ROW_LINEAGE_VERSION:
        fresh = _with_defaults(schema, metadata.schemas[0])
        metadata = metadata.model_copy(update={"schemas": [fresh], "next_row_id": 0})
    return metadata


# ---------------------------------------------------------------------------------------------- updates

class _Last:
    """What the updates of one commit added of one kind (schema, spec or sort order): the id added last (Java's
    lastAdded*Id; None: none) and every id they added."""

    def __init__(self) -> None:
        self.id: int | None = None
        self.ids: set[int] = set()

    def add(self, new_id: int) -> None:
        self.id = new_id
        self.ids.add(new_id)

    def reused(self, found: int | None, asked: int | None) -> bool:
        """Whether an add found an equal entry (``found``, None: none): the found one is then the last added if
        the commit added ``asked`` (Java asks it of the found schema, and of the last added spec or order)."""
        if found is None:
            return False
        self.id = found if (self.id is not None and asked in self.ids) else None
        return True


class _Added:
    """Which schema, spec and order the updates of one commit added last, and all they added."""

    def __init__(self) -> None:
        self.schema, self.spec, self.order = _Last(), _Last(), _Last()


def _same_schema(a: Schema, b: Schema) -> bool:
    return a.as_struct() == b.as_struct() and sorted(a.identifier_field_ids) == sorted(b.identifier_field_ids)


def _compatible_spec(a: PartitionSpec, b: PartitionSpec) -> bool:
    """Java's PartitionSpec.compatibleWith: the same fields (source, transform, name) in order; ids aside."""
    if len(a.fields) != len(b.fields):
        return False
    return all(x.source_id == y.source_id and str(x.transform) == str(y.transform) and x.name == y.name
               for x, y in zip(a.fields, b.fields))


def _same_order(a: SortOrder, b: SortOrder) -> bool:
    if a.is_unsorted and b.is_unsorted:
        return True
    return list(a.fields) == list(b.fields)


def _reused_or_next(ids: list[tuple[int, bool]], start: int) -> tuple[int, int | None]:
    """Java's reuseOrCreateNew*Id over the existing entries' (id, the same as the one added): (the id a new entry
    gets, above every id before the first same one and at least ``start``; the same one's id, None if none)."""
    new_id = start
    for existing, same in ids:
        if same:
            return new_id, existing
        if existing >= new_id:
            new_id = existing + 1
    return new_id, None


def _add_schema(update: AddSchemaUpdate, meta, context, added: _Added):
    schema = update.schema_
    check_schema_version(schema, meta.format_version)
    last_column_id = meta.last_column_id if meta.last_column_id is not None else 0
    new_last = max(last_column_id, schema.highest_field_id)
    schemas = list(meta.schemas or [])
    new_id, found = _reused_or_next([(s.schema_id, _same_schema(s, schema)) for s in schemas],
                                    meta.current_schema_id if meta.current_schema_id is not None else 0)
    if found is not None and new_last == last_column_id:
        added.schema.reused(found, found)
        return meta
    new_id = found if found is not None else new_id
    changes: dict[str, Any] = {"last_column_id": new_last}
    new_schema = schema if schema.schema_id == new_id else schema.model_copy(update={"schema_id": new_id})
    if found is None:
        changes["schemas"] = schemas + [new_schema]
    context.add_update(AddSchemaUpdate(schema_=new_schema))
    added.schema.add(new_id)
    return meta.model_copy(update=changes)


def _add_spec(update: AddPartitionSpecUpdate, meta, context, added: _Added):
    spec = update.spec
    specs = list(meta.partition_specs or [])
    new_id, found = _reused_or_next([(s.spec_id, _compatible_spec(spec, s)) for s in specs], 0)
    if added.spec.reused(found, added.spec.id):
        return meta
    new_spec = spec if spec.spec_id == new_id else PartitionSpec(*spec.fields, spec_id=new_id)
    new_spec.check_compatible(meta.schema())      # Java binds it to the current schema: unknown sources fail
    start = PARTITION_FIELD_ID_START - 1
    last = meta.last_partition_id if meta.last_partition_id is not None else start
    last = max(last, max((f.field_id for f in new_spec.fields), default=start))
    context.add_update(AddPartitionSpecUpdate(spec=new_spec))
    added.spec.add(new_id)
    return meta.model_copy(update={"partition_specs": specs + [new_spec], "last_partition_id": last})


def _add_sort_order(update: AddSortOrderUpdate, meta, context, added: _Added):
    order = update.sort_order
    orders = list(meta.sort_orders or [])
    if order.is_unsorted:
        new_id, found = UNSORTED_ORDER_ID, next((o.order_id for o in orders if o.is_unsorted), None)
    else:
        new_id, found = _reused_or_next([(o.order_id, _same_order(order, o)) for o in orders], 1)
    if added.order.reused(found, added.order.id):
        return meta
    new_order = order if order.order_id == new_id else SortOrder(*order.fields, order_id=new_id)
    new_order.check_compatible(meta.schema())
    context.add_update(AddSortOrderUpdate(sort_order=new_order))
    added.order.add(new_id)
    return meta.model_copy(update={"sort_orders": orders + [new_order]})


def _upgrade(update: UpgradeFormatVersionUpdate, meta, context, added: _Added):
    if update.format_version > MAX_FORMAT_VERSION:
        raise bad(f"Cannot upgrade table to unsupported format version: v{update.format_version} "
                  f"(supported: v{MAX_FORMAT_VERSION})")
    if meta.format_version is not None and update.format_version < meta.format_version:
        raise bad(f"Cannot downgrade v{meta.format_version} table to v{update.format_version}")
    if update.format_version == meta.format_version:
        return meta
    context.add_update(update)
    meta = TableMetadataUtil._construct_without_validation(
        meta.model_copy(update={"format_version": update.format_version}))
    if meta.format_version >= ROW_LINEAGE_VERSION and getattr(meta, "next_row_id", None) is None:
        meta = meta.model_copy(update={"next_row_id": 0})
    return meta


def _add_snapshot(update: AddSnapshotUpdate, meta, context, added: _Added):
    if meta.format_version < ROW_LINEAGE_VERSION:
        return _apply_table_update(update, meta, context)
    snapshot = update.snapshot
    next_row_id = getattr(meta, "next_row_id", None) or 0
    if snapshot.first_row_id is None:
        raise bad("Cannot add a snapshot: first-row-id is null")
    if snapshot.added_rows is None:
        raise bad("Cannot add a snapshot: added-rows is null")
    if snapshot.first_row_id < next_row_id:
        raise conflict(f"{RETRY_PREFIX} Cannot add a snapshot, first-row-id is behind table next-row-id: "
                       f"{snapshot.first_row_id} < {next_row_id}")
    meta = _apply_table_update(update, meta.model_copy(update={"next_row_id": next_row_id}), context)
    return meta.model_copy(update={"next_row_id": next_row_id + snapshot.added_rows})


def _remove_properties(update: RemovePropertiesUpdate, meta, context, added: _Added):
    """Java removes the named keys that are there; pyiceberg fails on a missing one (KeyError)."""
    if not update.removals:
        return meta
    context.add_update(update)
    return meta.model_copy(update={"properties": {k: v for k, v in meta.properties.items()
                                                  if k not in set(update.removals)}})


def _lenient_removal(field: str, known: Callable[[Any], set]):
    """A remove-* of ids: Java's builder drops the ids it has and ignores the others (a concurrent expiry may
    have removed them); pyiceberg fails on an unknown id."""
    def handler(update, meta, context, added: _Added):
        ids = [i for i in getattr(update, field) if i in known(meta)]
        if not ids:
            return meta
        return _apply_table_update(update.model_copy(update={field: ids}), meta, context)
    return handler


def _lenient_statistics(field: str):
    """remove-statistics / remove-partition-statistics of a snapshot without any: nothing to do (Java)."""
    def handler(update, meta, context, added: _Added):
        if not any(stat.snapshot_id == update.snapshot_id for stat in getattr(meta, field) or []):
            return meta
        return _apply_table_update(update, meta, context)
    return handler


def _setting_current(id_field: str, kind: str, noun: str, unknown: str, current: str,
                     ids: Callable[[Any], set[int]]):
    """set-current-schema / set-default-spec / set-default-sort-order: the update's ``id_field`` (-1: the ``noun``
    the commit added last, ``kind`` of `_Added`) becomes the metadata's ``current``; an id not among ``ids(meta)``
    is refused with Java's message ``unknown``."""
    def handler(update, meta, context, added: _Added):
        chosen = getattr(update, id_field)
        if chosen == -1:
            last = getattr(added, kind).id
            if last is None:
                raise bad(f"Cannot set last added {noun}: no {noun} has been added")
            chosen = last
        if chosen == getattr(meta, current):
            return meta
        if chosen not in ids(meta):
            raise bad(f"{unknown}: {chosen}")
        context.add_update(type(update)(**{id_field: chosen}))
        return meta.model_copy(update={current: chosen})
    return handler


# a handler gets an update of the class it is registered for (apply_updates looks it up by type(update)); that
# pairing is beyond a dict's type, so the update parameter is Any here and precise in each handler
_Handler = Callable[[Any, TableMetadata, _TableMetadataUpdateContext, _Added], TableMetadata]

HANDLERS: dict[type[IcebergBaseModel], _Handler] = {
    RemovePropertiesUpdate: _remove_properties,
    RemoveSnapshotsUpdate: _lenient_removal("snapshot_ids", lambda m: {s.snapshot_id for s in m.snapshots or []}),
    RemovePartitionSpecsUpdate: _lenient_removal("spec_ids", lambda m: {s.spec_id for s in m.partition_specs or []}),
    RemoveSchemasUpdate: _lenient_removal("schema_ids", lambda m: {s.schema_id for s in m.schemas or []}),
    RemoveStatisticsUpdate: _lenient_statistics("statistics"),
    RemovePartitionStatisticsUpdate: _lenient_statistics("partition_statistics"),
    AddSchemaUpdate: _add_schema,
    SetCurrentSchemaUpdate: _setting_current("schema_id", "schema", "schema",
                                             "Cannot set current schema to unknown schema", "current_schema_id",
                                             lambda m: {s.schema_id for s in m.schemas or []}),
    AddPartitionSpecUpdate: _add_spec,
    SetDefaultSpecUpdate: _setting_current("spec_id", "spec", "spec", "Cannot set default partition spec to unknown "
                                           "spec", "default_spec_id",
                                           lambda m: {s.spec_id for s in m.partition_specs or []}),
    AddSortOrderUpdate: _add_sort_order,
    SetDefaultSortOrderUpdate: _setting_current("sort_order_id", "order", "sort order",
                                                "Cannot set default sort order to unknown sort order",
                                                "default_sort_order_id",
                                                lambda m: {o.order_id for o in m.sort_orders or []}),
    UpgradeFormatVersionUpdate: _upgrade, AddSnapshotUpdate: _add_snapshot,
}


def apply_updates(base, updates, creating: bool = False, metadata_location: str | None = None) -> tuple[Any, bool]:
    """(metadata, changed): ``base`` with the table ``updates`` applied as Java's metadata builder applies them (the module's
    docstring); ``creating``: base is the empty metadata of a create transaction (validated in full at the end).
    Raises CatalogError (400 for an update the builder rejects, 409 for a retryable conflict)."""
    context = _TableMetadataUpdateContext()
    added = _Added()
    meta = base
    try:
        for update in updates:
            handler = HANDLERS.get(type(update))
            meta = handler(update, meta, context, added) if handler else _apply_table_update(update, meta, context)
        if context.has_changes():
            if metadata_location:
                meta = _update_table_metadata_log(meta, metadata_location, base.last_updated_ms)
            if base.last_updated_ms == meta.last_updated_ms:
                meta = meta.model_copy(update={"last_updated_ms": datetime_to_millis(datetime.now().astimezone())})
        meta.spec().check_compatible(meta.schema())
        meta.sort_order().check_compatible(meta.schema())
        if creating:
            return TableMetadataUtil.parse_obj(meta.model_dump()), True
        # no deep copy (it took a seventh of a commit's time): `base` is read from its file for this commit only,
        # so the sub-objects the result shares with it are seen by nothing else, and nothing updates them in place
        return meta, context.has_changes()
    except CatalogError:
        raise
    except CommitFailedException as exc:
        raise conflict(str(exc)) from None
    except (ValueError, TypeError, KeyError, AttributeError, IcebergValidationError) as exc:
        raise bad(f"Cannot apply updates: {exc}") from None
