"""Fixtures for the network scenario tests: an embedded reference catalog (control API on) behind an
in-process interposer, and a CheckContext whose client talks to the interposer."""

from __future__ import annotations

import pytest

from ctk.checks.context import CheckContext, CheckOptions
from ctk.client.transport import CatalogClient
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.client.config import TargetConfig

LIFETIME = "PT8S"



class Stack:
    """Reference catalog -> interposer -> client; stop() tears everything down in reverse."""

    def __init__(self, warehouse: str, deviation: str | None = None, **settings):
        from ctk.interposer import Interposer

        settings.setdefault("idempotency_lifetime", LIFETIME)
        settings.setdefault("control_api", True)
        self.server = ReferenceServer(ReferenceSettings(warehouse=warehouse, deviation=deviation, **settings))
        self.server.start()
        host, port = self.server.url.rsplit("//", 1)[1].split(":")
        self.ip = Interposer(upstream=(host, int(port)))
        h, p = self.ip.start()
        self.client = CatalogClient(TargetConfig(f"http://{h}:{p}", timeout=20.0))
        self.ctx = CheckContext.create(self.client, interposer=self.ip,
                                       options=CheckOptions(max_wait=8.0, inflight_hold=0.5))

    def stop(self) -> None:
        self.client.close()
        self.ip.stop()
        self.server.stop()


@pytest.fixture
def make_net(tmp_path):
    """make_net(deviation=None, **settings) -> (CheckContext through the interposer, interposer)."""
    stacks: list[Stack] = []

    def make(deviation: str | None = None, **settings):
        s = Stack(str(tmp_path / f"wh{len(stacks)}"), deviation, **settings)
        stacks.append(s)
        return s.ctx, s.ip

    yield make
    for s in reversed(stacks):
        s.stop()


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """One conforming stack shared by a module: (ctx, interposer)."""
    s = Stack(str(tmp_path_factory.mktemp("wh")))
    yield s.ctx, s.ip
    s.stop()
