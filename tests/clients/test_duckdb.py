"""DuckDB 1.5.5 and its iceberg extension against `ctk serve`: ATTACH, read PyIceberg's tables (a nested namespace
too), CREATE TABLE AS, CREATE + INSERT in one transaction, INSERT / UPDATE / DELETE / MERGE on a PyIceberg table, a
format-version 3 table, schemas; each read back with PyIceberg. DuckDB 1.5.5 cannot create views in an Iceberg
catalog ("Not implemented Error: Create View"), so there is no view step. The extensions come from PyPI packages and
are LOADed from their files; DuckDB's extension download is switched off (autoinstall off, a repository that does
not exist), so it never looks for a host."""

from __future__ import annotations

import importlib
import os

import pyarrow as pa
import pytest
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType
from required import require

pytestmark = pytest.mark.timeout(300)

DUCKDB_VERSION = "1.5.5"
# extension -> the PyPI package that ships its binary; httpfs is the HTTP client the REST catalog is reached by,
# avro reads and writes manifests
EXTENSIONS = {"httpfs": "duckdb_extension_httpfs", "avro": "duckdb_extension_avro",
              "iceberg": "duckdb_extension_iceberg"}
NS = "duck"


def extension_file(name: str) -> str:
    module = importlib.import_module(EXTENSIONS[name])
    return os.path.join(os.path.dirname(module.__file__), "extensions", f"v{DUCKDB_VERSION}",
                        f"{name}.duckdb_extension")


@pytest.fixture(scope="module")
def duck(served, tmp_path_factory):
    """A DuckDB connection with the catalog ATTACHed as `lake`."""
    try:
        import duckdb
        files = {name: extension_file(name) for name in EXTENSIONS}
    except ImportError as exc:
        require("DuckDB", f"DuckDB or its extension packages are not installed ({exc}): "
                          "pip install 'iceberg-rest-ctk[clients]'")
    if duckdb.__version__ != DUCKDB_VERSION:
        require("DuckDB", f"duckdb {duckdb.__version__} is installed; the extension packages are built for "
                          f"{DUCKDB_VERSION}: pip install 'iceberg-rest-ctk[clients]'")
    missing = [f for f in files.values() if not os.path.isfile(f)]
    if missing:
        require("DuckDB", f"extension files missing: {missing}")
    con = duckdb.connect(config={
        "autoinstall_known_extensions": False, "autoload_known_extensions": False,
        "custom_extension_repository": str(tmp_path_factory.mktemp("no-extension-repository") / "none"),
        "extension_directory": str(tmp_path_factory.mktemp("duckdb-extensions")),
    })
    for name in EXTENSIONS:
        con.execute(f"LOAD '{files[name]}'")
    loaded = {r[0]: r[1] for r in con.execute("SELECT extension_name, loaded FROM duckdb_extensions()").fetchall()}
    assert all(loaded.get(name) for name in EXTENSIONS), loaded
    # DuckDB's default sign-in: OAuth2 client credentials at the catalog's token endpoint; the prefix comes from
    # /v1/config
    con.execute(f"CREATE SECRET lane_secret (TYPE iceberg, CLIENT_ID '{served.client_id}', "
                f"CLIENT_SECRET '{served.secret}', OAUTH2_SERVER_URI '{served.url}/v1/oauth/tokens')")
    con.execute(f"ATTACH 'lane' AS lake (TYPE iceberg, ENDPOINT '{served.url}', SECRET lane_secret)")
    yield con
    con.close()


@pytest.fixture(scope="module")
def source(pyiceberg_catalog):
    """duck.src: PyIceberg's table, partitioned by category, written by two appends."""
    cat = pyiceberg_catalog
    cat.create_namespace(NS)
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "category", StringType(), required=False),
                    NestedField(3, "name", StringType(), required=False))
    table = cat.create_table((NS, "src"), schema=schema,
                             partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "category")))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "category": ["a", "a", "b"],
                           "name": ["one", "two", "three"]}))
    table.append(pa.table({"id": pa.array([4], pa.int64()), "category": ["b"], "name": ["four"]}))
    cat.create_namespace((NS, "inner"))
    deep = cat.create_table((NS, "inner", "deep"), schema=schema)
    deep.append(pa.table({"id": pa.array([9], pa.int64()), "category": ["z"], "name": ["nine"]}))
    return (NS, "src")


def read_back(cat, ident) -> list[tuple]:
    """The rows as PyIceberg reads them from the catalog's current metadata, sorted."""
    table = cat.load_table(ident)
    return sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist())


def q(con, sql) -> list[tuple]:
    return con.execute(sql).fetchall()


def test_reads_pyiceberg_tables(duck, source):
    assert (NS,) in [tuple(r[0].split(".")) for r in q(duck, "SELECT schema_name FROM information_schema.schemata "
                                                        "WHERE catalog_name = 'lake'")]
    assert q(duck, f"SELECT id, category, name FROM lake.{NS}.src ORDER BY id") == [
        (1, "a", "one"), (2, "a", "two"), (3, "b", "three"), (4, "b", "four")]
    assert q(duck, f"SELECT count(*) FROM lake.{NS}.src WHERE category = 'b'") == [(2,)]
    assert q(duck, f"SELECT count(*) FROM iceberg_snapshots(lake.{NS}.src)") == [(2,)]
    # a nested namespace is one schema to DuckDB, named by its levels joined with '.'
    assert q(duck, f'SELECT id, name FROM lake."{NS}.inner".deep') == [(9, "nine")]


def test_create_table_as_select(duck, source, pyiceberg_catalog):
    """DuckDB's default CTAS stages the create and commits it with the first snapshot."""
    q(duck, f"CREATE TABLE lake.{NS}.ctas AS SELECT id, name FROM lake.{NS}.src WHERE category = 'a'")
    assert q(duck, f"SELECT id, name FROM lake.{NS}.ctas ORDER BY id") == [(1, "one"), (2, "two")]
    assert read_back(pyiceberg_catalog, (NS, "ctas")) == [(1, "one"), (2, "two")]
    assert len(pyiceberg_catalog.load_table((NS, "ctas")).snapshots()) == 1


def test_create_and_insert_in_one_transaction(duck, source, pyiceberg_catalog):
    q(duck, "BEGIN")
    q(duck, f"CREATE TABLE lake.{NS}.tx (id BIGINT, v VARCHAR)")
    q(duck, f"INSERT INTO lake.{NS}.tx VALUES (1, 'x'), (2, 'y')")
    assert not pyiceberg_catalog.table_exists((NS, "tx"))        # nothing is committed before COMMIT
    q(duck, "COMMIT")
    assert read_back(pyiceberg_catalog, (NS, "tx")) == [(1, "x"), (2, "y")]


def test_insert_update_delete_merge(duck, source, pyiceberg_catalog):
    cat = pyiceberg_catalog
    snapshots = len(cat.load_table(source).snapshots())
    q(duck, f"INSERT INTO lake.{NS}.src VALUES (5, 'c', 'five')")
    assert read_back(cat, source)[-1] == (5, "c", "five")
    q(duck, f"UPDATE lake.{NS}.src SET name = 'TWO' WHERE id = 2")
    q(duck, f"DELETE FROM lake.{NS}.src WHERE id = 1")
    assert read_back(cat, source) == [(2, "a", "TWO"), (3, "b", "three"), (4, "b", "four"), (5, "c", "five")]
    merged = q(duck, f"""MERGE INTO lake.{NS}.src AS t
                         USING (SELECT 3 AS id, 'b' AS category, 'THREE' AS name
                                UNION ALL SELECT 6, 'c', 'six') AS s
                         ON t.id = s.id
                         WHEN MATCHED THEN UPDATE SET name = s.name
                         WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.category, s.name)""")
    assert merged == [(2,)]
    want = [(2, "a", "TWO"), (3, "b", "THREE"), (4, "b", "four"), (5, "c", "five"), (6, "c", "six")]
    assert read_back(cat, source) == want
    assert q(duck, f"SELECT id, category, name FROM lake.{NS}.src ORDER BY id") == want
    assert len(cat.load_table(source).snapshots()) >= snapshots + 4      # one commit per statement at least


def test_format_version_3_table(duck, source, pyiceberg_catalog):
    """A v3 table created by DuckDB, written with row-level changes (deletion vectors), read back by PyIceberg."""
    q(duck, f"CREATE TABLE lake.{NS}.v3 (id BIGINT, s VARCHAR) WITH ('format-version' = '3')")
    q(duck, f"INSERT INTO lake.{NS}.v3 VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    q(duck, f"UPDATE lake.{NS}.v3 SET s = 'B' WHERE id = 2")
    q(duck, f"DELETE FROM lake.{NS}.v3 WHERE id = 1")
    assert q(duck, f"SELECT id, s FROM lake.{NS}.v3 ORDER BY id") == [(2, "B"), (3, "c")]
    table = pyiceberg_catalog.load_table((NS, "v3"))
    assert table.format_version == 3
    assert table.metadata.next_row_id >= 3              # the inserted rows were given row ids
    assert read_back(pyiceberg_catalog, (NS, "v3")) == [(2, "B"), (3, "c")]


def test_schemas_and_drops(duck, source, pyiceberg_catalog):
    cat = pyiceberg_catalog
    q(duck, f"CREATE SCHEMA lake.{NS}_made")
    assert (f"{NS}_made",) in cat.list_namespaces()
    q(duck, f"CREATE TABLE lake.{NS}_made.t (id BIGINT)")
    q(duck, f"INSERT INTO lake.{NS}_made.t VALUES (7)")
    assert read_back(cat, (f"{NS}_made", "t")) == [(7,)]
    q(duck, f"DROP TABLE lake.{NS}_made.t")
    with pytest.raises(NoSuchTableError):
        cat.load_table((f"{NS}_made", "t"))
    q(duck, f"DROP SCHEMA lake.{NS}_made")
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties(f"{NS}_made")
