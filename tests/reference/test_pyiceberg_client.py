"""pyiceberg's RestCatalog (a real client) against the reference catalog."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError

pytestmark = pytest.mark.timeout(120)


def rows(n0, n):
    return pa.table({"id": pa.array(range(n0, n0 + n), pa.int64()),
                     "name": pa.array([f"r{i}" for i in range(n0, n0 + n)], pa.string())})


@pytest.mark.parametrize("prefix", ["", "cat1"])
def test_pyiceberg_round_trip(make_reference, tmp_path, prefix):
    server = make_reference(prefix=prefix)
    cat = load_catalog("t", type="rest", uri=server.url, warehouse=str(tmp_path / "warehouse0"))
    cat.create_namespace("db", {"owner": "ctk"})
    cat.create_namespace(("db", "sub"))
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace("db")
    assert ("db",) in cat.list_namespaces()
    assert cat.list_namespaces("db") == [("db", "sub")]
    assert cat.load_namespace_properties("db")["owner"] == "ctk"

    data = rows(0, 3)
    table = cat.create_table(("db", "sub", "events"), schema=data.schema)
    assert table.metadata_location.endswith(".metadata.json")
    assert "/metadata/00001-" in table.metadata_location
    table.append(data)
    table.append(rows(3, 2))

    again = cat.load_table(("db", "sub", "events"))
    assert len(again.metadata.snapshots) == 2
    assert again.current_snapshot().snapshot_id == again.metadata.snapshots[-1].snapshot_id
    got = again.scan().to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == [0, 1, 2, 3, 4]
    assert got.column("name").to_pylist() == ["r0", "r1", "r2", "r3", "r4"]
    assert "/metadata/00003-" in again.metadata_location

    assert cat.list_tables(("db", "sub")) == [("db", "sub", "events")]
    assert cat.table_exists(("db", "sub", "events"))
    cat.rename_table(("db", "sub", "events"), ("db", "events2"))
    assert not cat.table_exists(("db", "sub", "events"))
    assert cat.load_table(("db", "events2")).scan().to_arrow().num_rows == 5

    # schema evolution goes through the same commit route
    t2 = cat.load_table(("db", "events2"))
    with t2.update_schema() as upd:
        upd.add_column("extra", pa.string() and __import__("pyiceberg.types", fromlist=["StringType"]).StringType())
    assert "extra" in cat.load_table(("db", "events2")).schema().column_names

    cat.drop_table(("db", "events2"))
    with pytest.raises(NoSuchTableError):
        cat.load_table(("db", "events2"))


def test_pyiceberg_create_table_transaction(reference, tmp_path):
    """Stage-create, then a commit with assert-create creates the table."""
    cat = load_catalog("t", type="rest", uri=reference.url)
    cat.create_namespace("db")
    data = rows(0, 4)
    with cat.create_table_transaction(("db", "staged"), schema=data.schema) as txn:
        assert not cat.table_exists(("db", "staged"))
        txn.append(data)
    table = cat.load_table(("db", "staged"))
    assert table.scan().to_arrow().num_rows == 4
    assert len(table.metadata.snapshots) == 1
