"""PyIceberg against `ctk serve`: nested namespaces, a partitioned and sorted table written by appends, an overwrite
and a delete, schema and partition evolution, branches and tags, views. Each step reads back what it did."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from pyiceberg.exceptions import NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import SortField, SortOrder
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType, TimestampType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

pytestmark = pytest.mark.timeout(300)

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "category", StringType(), required=False),
                NestedField(3, "ts", TimestampType(), required=False),
                NestedField(4, "amount", DoubleType(), required=False))
DAY = dt.datetime(2024, 3, 1)


def rows(ids, category):
    return pa.table({"id": pa.array(list(ids), pa.int64()),
                     "category": pa.array([category] * len(ids), pa.string()),
                     "ts": pa.array([DAY + dt.timedelta(days=i % 3, hours=i) for i in ids], pa.timestamp("us")),
                     "amount": pa.array([float(i) * 1.5 for i in ids], pa.float64())})


def ids_of(table, **scan) -> list[int]:
    return sorted(table.scan(**scan).to_arrow().column("id").to_pylist())


def test_nested_namespaces(pyiceberg_catalog, served):
    cat = pyiceberg_catalog
    assert cat.properties.get("prefix") == served.prefix               # taken from /v1/config overrides
    cat.create_namespace("pyi", {"owner": "lane"})
    cat.create_namespace(("pyi", "a"))
    cat.create_namespace(("pyi", "a", "b"), {"level": "3"})
    cat.create_namespace(("pyi", "c"))
    assert ("pyi",) in cat.list_namespaces()
    assert sorted(cat.list_namespaces("pyi")) == [("pyi", "a"), ("pyi", "c")]
    assert cat.list_namespaces(("pyi", "a")) == [("pyi", "a", "b")]
    assert cat.load_namespace_properties(("pyi", "a", "b")) == {"level": "3"}
    summary = cat.update_namespace_properties(("pyi", "a", "b"), removals={"level", "absent"}, updates={"k": "v"})
    assert (summary.removed, summary.updated, summary.missing) == (["level"], ["k"], ["absent"])
    assert cat.load_namespace_properties(("pyi", "a", "b")) == {"k": "v"}
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace(("pyi", "a"))
    cat.drop_namespace(("pyi", "a", "b"))
    assert cat.list_namespaces(("pyi", "a")) == []
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties(("pyi", "a", "b"))


def test_partitioned_sorted_table_appends_overwrite_delete(pyiceberg_catalog, pyiceberg_transforms):
    cat = pyiceberg_catalog
    cat.create_namespace("pyw")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "category"),
                         PartitionField(3, 1001, DayTransform(), "ts_day"))
    order = SortOrder(SortField(source_id=1, transform=IdentityTransform()))
    table = cat.create_table(("pyw", "events"), schema=SCHEMA, partition_spec=spec, sort_order=order)
    assert [f.name for f in table.spec().fields] == ["category", "ts_day"]
    assert table.sort_order().order_id == 1 and table.sort_order().fields[0].source_id == 1

    table.append(rows(range(0, 6), "a"))
    table.append(rows(range(6, 10), "b"))
    table = cat.load_table(("pyw", "events"))
    assert ids_of(table) == list(range(10))
    assert [s.summary.operation.value for s in table.snapshots()] == ["append", "append"]
    partitions = {(p["category"], p["ts_day"]) for p in table.inspect.partitions().column("partition").to_pylist()}
    assert {c for c, _ in partitions} == {"a", "b"} and len(partitions) == 6     # 2 categories x 3 days
    assert ids_of(table, row_filter=EqualTo("category", "b")) == [6, 7, 8, 9]

    table.overwrite(rows(range(100, 103), "b"), overwrite_filter=EqualTo("category", "b"))
    table = cat.load_table(("pyw", "events"))
    assert ids_of(table) == [0, 1, 2, 3, 4, 5, 100, 101, 102]

    table.delete(delete_filter=GreaterThanOrEqual("id", 4))
    table = cat.load_table(("pyw", "events"))
    assert ids_of(table) == [0, 1, 2, 3]
    history = table.snapshots()
    assert len(history) >= 4 and history[-1].summary.operation.value in ("delete", "overwrite")
    # the catalog kept every snapshot: the first append is still readable by id
    assert ids_of(table, snapshot_id=history[0].snapshot_id) == [0, 1, 2, 3, 4, 5]


def test_schema_and_partition_evolution(pyiceberg_catalog, pyiceberg_transforms):
    cat = pyiceberg_catalog
    cat.create_namespace("pye")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "n", IntegerType(), required=False))
    table = cat.create_table(("pye", "evolving"), schema=schema)
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "n": pa.array([10, 20], pa.int32())}))

    with table.update_schema() as update:
        update.add_column("note", StringType())
        update.update_column("n", field_type=LongType())              # int -> long: an allowed promotion
        update.rename_column("n", "count")
    with table.update_spec() as update:
        update.add_field("id", BucketTransform(4), "id_bucket")
    table = cat.load_table(("pye", "evolving"))
    assert table.schema().schema_id == 1 and len(table.schemas()) == 2
    assert [(f.name, str(f.field_type)) for f in table.schema().fields] == [("id", "long"), ("count", "long"),
                                                                            ("note", "string")]
    assert table.spec().spec_id == 1 and [f.name for f in table.spec().fields] == ["id_bucket"]

    table.append(pa.table({"id": pa.array([3], pa.int64()), "count": pa.array([30], pa.int64()),
                           "note": pa.array(["new"], pa.string())}))
    got = sorted(cat.load_table(("pye", "evolving")).scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == [{"id": 1, "count": 10, "note": None}, {"id": 2, "count": 20, "note": None},
                   {"id": 3, "count": 30, "note": "new"}]
    specs = {f["spec_id"] for f in cat.load_table(("pye", "evolving")).inspect.files().to_pylist()}
    assert specs == {0, 1}        # old files keep the old spec, the new one has the new spec


def test_branches_and_tags(pyiceberg_catalog):
    cat = pyiceberg_catalog
    cat.create_namespace("pyb")
    table = cat.create_table(("pyb", "t"), schema=SCHEMA)
    table.append(rows([1, 2], "a"))
    first = cat.load_table(("pyb", "t")).current_snapshot().snapshot_id
    table = cat.load_table(("pyb", "t"))
    table.manage_snapshots().create_tag(first, "v1").create_branch(first, "dev").commit()
    table = cat.load_table(("pyb", "t"))
    assert table.metadata.refs["v1"].snapshot_ref_type.value == "tag"
    assert table.metadata.refs["dev"].snapshot_ref_type.value == "branch"

    table.append(rows([3], "a"), branch="dev")
    table.append(rows([4], "a"))
    table = cat.load_table(("pyb", "t"))
    assert ids_of(table) == [1, 2, 4]                                            # main
    assert ids_of(table, snapshot_id=table.metadata.refs["dev"].snapshot_id) == [1, 2, 3]
    assert ids_of(table, snapshot_id=table.metadata.refs["v1"].snapshot_id) == [1, 2]

    table.manage_snapshots().remove_tag("v1").commit()
    assert "v1" not in cat.load_table(("pyb", "t")).metadata.refs


def test_views(pyiceberg_catalog):
    cat = pyiceberg_catalog
    cat.create_namespace("pyv")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=1_700_000_000_000, summary={"engine": "lane"},
                          representations=[SQLViewRepresentation(type="sql", sql="SELECT id FROM pyw.events",
                                                                 dialect="spark")],
                          default_namespace=["pyv"])
    view = cat.create_view(("pyv", "recent"), schema=schema, view_version=version, properties={"comment": "lane"})
    assert view.current_version().representations[0].root.sql == "SELECT id FROM pyw.events"
    assert cat.view_exists(("pyv", "recent"))
    assert cat.list_views("pyv") == [("pyv", "recent")]
    loaded = cat.load_view(("pyv", "recent"))
    assert loaded.metadata.properties["comment"] == "lane"
    assert [f.name for f in loaded.schema().fields] == ["id"]
    assert [sc.schema_id for sc in loaded.metadata.schemas] == [0] and loaded.current_version().schema_id == 0
    assert loaded.metadata.view_uuid == view.metadata.view_uuid
    with pytest.raises(NoSuchTableError):
        cat.load_table(("pyv", "recent"))                                      # a view is not a table
    cat.drop_view(("pyv", "recent"))
    assert not cat.view_exists(("pyv", "recent"))
    with pytest.raises(NoSuchViewError):
        cat.load_view(("pyv", "recent"))
