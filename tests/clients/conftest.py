"""The real-client lane (issue 21 item 8): clients nobody here wrote do their everyday round trip against the
reference catalog started as a user starts it, `ctk serve` (port 0, it says where: tests/procs.py), on a local
file warehouse. Each asserts what it reads back, not only that nothing raised.

- PyIceberg: the installed one (pyproject.toml pins the range; 0.12.0 is the newest there is).
- DuckDB 1.5.5 with its iceberg extension from the package index: the `clients` extra installs `duckdb` and the
  PyPI packages that ship the extension binaries (duckdb-extension-iceberg, -avro, -httpfs); each is LOADed from
  its file, with DuckDB's own extension download switched off (its host is not reachable, and never contacted).
- iceberg-js 1.0.0 from npm, installed into a cache directory (``$CTK_CLIENTS_CACHE``, default
  ``~/.cache/ctk-clients``) by `node_client.ensure_iceberg_js`, run with node.
- Spark 3.5 with Iceberg 1.10.2 (`ctk spark-jars`) through PySpark (ctk.spark.session): few statements, it is slow.

One catalog serves the lane, as deployed ones are: it advertises a prefix (`--prefix lane`, each client finds it in
/v1/config) and asks for credentials (`--token`: PyIceberg, DuckDB and Spark sign in with OAuth2 client credentials
at its token endpoint, iceberg-js sends the bearer token). Every client works in namespaces of its own. A client that cannot be had skips with
the reason on a developer's machine and fails under CI (tests/required.py). Only loopback is contacted: the
catalog is on 127.0.0.1 and every table lives in the warehouse directory.

    python -m pytest tests/clients -q -p no:cacheprovider -rs --durations=0
"""

from __future__ import annotations

import contextlib
import importlib.util
import secrets
from dataclasses import dataclass
from pathlib import Path

import procs
import pytest
from required import require


@dataclass(frozen=True)
class Served:
    url: str              # base URL, without /v1
    warehouse: Path
    prefix: str           # advertised in /v1/config overrides; each client finds it there
    client_id: str        # OAuth2 client_credentials: the catalog's token endpoint gives a bearer token for
    secret: str           # this secret (the clients that speak OAuth2 get their token there)


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """`ctk serve --port 0 --warehouse DIR --prefix lane --token SECRET`, one for the lane: a catalog that asks
    for credentials and advertises a prefix, as deployed ones do."""
    warehouse = tmp_path_factory.mktemp("clients-warehouse")
    secret = secrets.token_hex(12)
    with procs.serve("--warehouse", str(warehouse), "--prefix", "lane", "--token", secret) as started:
        yield Served(started.url, warehouse, "lane", "lane-client", secret)


@pytest.fixture(scope="session")
def pyiceberg_catalog(served):
    """PyIceberg's RestCatalog on the lane's catalog, signed in with OAuth2 client credentials."""
    from pyiceberg.catalog import load_catalog

    catalog = load_catalog("clients", type="rest", uri=served.url, credential=f"{served.client_id}:{served.secret}",
                           **{"oauth2-server-uri": f"{served.url}/v1/oauth/tokens"})
    yield catalog
    with contextlib.suppress(Exception):
        catalog._session.close()  # noqa: SLF001 - requests.Session, closed so no socket outlives the lane


@pytest.fixture(scope="session")
def pyiceberg_transforms():
    """PyIceberg writes day and bucket partitions through pyiceberg-core (its Rust transforms)."""
    if importlib.util.find_spec("pyiceberg_core") is None:
        require("pyiceberg-core", "PyIceberg needs pyiceberg-core to write day/bucket partitions, and it is not "
                                  "installed: pip install 'iceberg-rest-ctk[clients]'")
