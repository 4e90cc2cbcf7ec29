"""Fixtures for the reference catalog: `reference` is a started ReferenceServer (control API on), `client` an
httpx client on its `/v1` API, and `db` (used by `pytest.mark.usefixtures("db")`) creates namespace `db` first."""

from __future__ import annotations

import httpx
import pytest

from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings


@pytest.fixture
def reference(tmp_path):
    """A started ReferenceServer with control_api=True on a fresh warehouse in tmp_path; `.url` is its base URL."""
    settings = ReferenceSettings(warehouse=str(tmp_path / "warehouse"), control_api=True)
    with ReferenceServer(settings) as server:
        yield server


@pytest.fixture
def client(reference):
    """An httpx client on the reference's REST API (base URL ``<reference>/v1``)."""
    with httpx.Client(base_url=reference.url + "/v1", timeout=30) as c:
        yield c


@pytest.fixture
def db(client):
    """Namespace ``db`` created through `client`, for modules whose every test works in it."""
    assert client.post("/namespaces", json={"namespace": ["db"]}).status_code == 200


@pytest.fixture
def make_reference(tmp_path):
    """Factory: make_reference(**settings) -> started ReferenceServer (stopped at teardown)."""
    servers = []

    def make(**kwargs):
        kwargs.setdefault("warehouse", str(tmp_path / f"warehouse{len(servers)}"))
        server = ReferenceServer(ReferenceSettings(**kwargs))
        servers.append(server)
        server.start()
        return server

    yield make
    for server in servers:
        server.stop()
