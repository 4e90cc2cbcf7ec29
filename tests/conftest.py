"""Shared by all of the kit's own tests.

pytester drives inner pytest runs of the plugin (tests/plugin, tests/scenarios); pytest allows
`pytest_plugins` only in this top-level conftest. The reference-catalog and PostgreSQL fixtures used by
several test trees live here once."""

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def ref_server(tmp_path):
    """A started reference catalog (control API on) on a fresh warehouse; stopped at teardown."""
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "warehouse"), control_api=True)) as srv:
        yield srv


@pytest.fixture
def ref_client(ref_server):
    """A CatalogClient on `ref_server` (10 s timeout)."""
    from ctk.client.transport import CatalogClient
    from ctk.client.config import TargetConfig

    with CatalogClient(TargetConfig(ref_server.url, timeout=10)) as c:
        yield c


@pytest.fixture(scope="module")
def pg():
    """A throwaway PostgreSQL cluster from Debian's packages on 127.0.0.1 (ctk.interposer.postgres), one per
    test module (catalogs of different modules never share a database); skips with the reason where it cannot be started."""
    from ctk.interposer.postgres import PostgresUnavailable, TemporaryPostgres

    server = TemporaryPostgres()
    try:
        server.start()
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL cannot be started here: {exc}")
    yield server
    server.stop()
