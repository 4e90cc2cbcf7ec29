"""The reference knows the v3 `variant` type (Iceberg Java accepts it in format-version 3 schemas, at any depth, and
refuses it before v3 with 400); pyiceberg 0.12 alone refused every schema naming it."""

from __future__ import annotations

import json

import pytest

from ctk.reference import builder, store
from ctk.reference.operations import CatalogError


def _schema():
    from pyiceberg.schema import Schema

    return Schema.model_validate({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "data", "type": "variant", "required": False},
        {"id": 3, "name": "list_data", "required": False,
         "type": {"type": "list", "element-id": 4, "element": "variant", "element-required": False}},
        {"id": 5, "name": "map_data", "required": False,
         "type": {"type": "map", "key-id": 6, "key": "string", "value-id": 7, "value": "variant",
                  "value-required": False}}]})


def test_a_v3_table_holds_variant_columns_and_its_metadata_round_trips():
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.table.metadata import TableMetadataUtil
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

    metadata = builder.new_table(_schema(), UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, "file:///tmp/t",
                                 {"format-version": "3"})
    doc = json.loads(store.json_text(metadata))
    fields = doc["schemas"][0]["fields"]
    assert [f["type"] for f in fields][:2] == ["long", "variant"]
    assert fields[2]["type"]["element"] == "variant" and fields[3]["type"]["value"] == "variant"
    again = TableMetadataUtil.parse_obj(doc)
    assert json.loads(store.json_text(again))["schemas"] == doc["schemas"]


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_variant_column_before_v3_is_refused_with_400(version):
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

    with pytest.raises(CatalogError) as caught:
        builder.new_table(_schema(), UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, "file:///tmp/t",
                          {"format-version": version})
    assert caught.value.status == 400 and "variant" in str(caught.value)


def test_other_type_names_still_go_to_pyiceberg():
    from pyiceberg.types import IcebergType, LongType

    assert IcebergType.handle_primitive_type("long", None) == LongType()
    with pytest.raises(ValueError, match="not recognized"):
        IcebergType.handle_primitive_type("variantx", None)
