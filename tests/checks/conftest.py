"""Fixtures for the check tests: an embedded reference catalog (control API on, lifetime PT4S) and a
CheckContext on it, optionally with a deviation profile."""

from __future__ import annotations

import pytest

from ctk.checks.context import CheckContext, CheckOptions
from ctk.client.transport import CatalogClient
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.client.config import TargetConfig

LIFETIME = "PT4S"


@pytest.fixture
def make_ctx(tmp_path):
    """make_ctx(deviation=None, interposer=False, **settings) -> CheckContext on a fresh reference catalog."""
    started: list = []

    def make(deviation: str | None = None, interposer: bool = False, control_api: bool = True,
             options: CheckOptions | None = None, **settings) -> CheckContext:
        settings.setdefault("idempotency_lifetime", LIFETIME)
        server = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / f"wh{len(started)}"),
                                                   control_api=control_api, deviation=deviation, **settings))
        server.start()
        started.append(server)
        url, ip = server.url, None
        if interposer:
            from ctk.interposer import Interposer

            host, port = url.rsplit("//", 1)[1].split(":")
            ip = Interposer(upstream=(host, int(port)))
            h, p = ip.start()
            started.append(ip)
            url = f"http://{h}:{p}"
        client = CatalogClient(TargetConfig(url, timeout=20.0))
        started.append(client)
        opts = options or CheckOptions(max_wait=8.0, inflight_hold=1.0, lose_modes=("503", "reset"))
        made = CheckContext.create(client, interposer=ip, options=opts)
        made.test_interposer = ip            # for tests that add toxics of their own
        return made

    yield make
    for thing in reversed(started):
        if isinstance(thing, CatalogClient):
            thing.close()
        else:
            thing.stop()


@pytest.fixture
def ctx(make_ctx):
    return make_ctx()
