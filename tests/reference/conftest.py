"""Fixtures for the reference catalog: `reference` is a started ReferenceServer (control API on)."""

from __future__ import annotations

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
