"""Request bodies the kit sends, built with pyiceberg's models where pyiceberg has them: the kit's table schema,
CreateTableRequest, CreateViewRequest, view versions, set-properties updates and table identifiers."""

from __future__ import annotations

import time


def schema(extra: bool = False) -> dict:
    """The kit's table schema (``id`` long, ``data`` string; with ``extra`` also ``extra`` string), schema id 0."""
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
    return {"name": name, "schema": schema(), "partition-spec": {"spec-id": 0, "fields": []},
            "write-order": {"order-id": 0, "fields": []}, "stage-create": False,
            "properties": dict(properties or {})}


def set_properties_update(updates: dict[str, str]) -> dict:
    from pyiceberg.table.update import SetPropertiesUpdate

    return SetPropertiesUpdate(updates=updates).model_dump(mode="json", by_alias=True)


def view_version(namespace: tuple[str, ...], sql: str) -> dict:
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

    v = ViewVersion.model_validate({"version-id": 1, "schema-id": 0, "timestamp-ms": int(time.time() * 1000),
                                    "summary": {"engine-name": "ctk"}, "default-namespace": list(namespace),
                                    "representations": [ViewRepresentation(SQLViewRepresentation(
                                        type="sql", sql=sql, dialect="spark"))]})
    return v.model_dump(mode="json", by_alias=True, exclude_none=True)


def create_view_body(namespace: tuple[str, ...], name: str, sql: str = "SELECT 1 AS id",
                     properties: dict[str, str] | None = None) -> dict:
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, NestedField

    view_schema = Schema(NestedField(1, "id", IntegerType(), required=False), schema_id=0)
    return {"name": name, "schema": view_schema.model_dump(mode="json", by_alias=True),
            "view-version": view_version(namespace, sql), "properties": dict(properties or {})}


def ident(namespace: tuple[str, ...], name: str) -> dict:
    return {"namespace": list(namespace), "name": name}


def set_properties_commit(namespace: tuple[str, ...], name: str, updates: dict[str, str]) -> dict:
    """A table or view commit without requirements whose one update sets ``updates``: applied again, it shows
    as another commit."""
    return {"identifier": ident(namespace, name), "requirements": [], "updates": [set_properties_update(updates)]}
