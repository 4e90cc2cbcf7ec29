"""Fixtures for the generated checks: a reference catalog (control API on) per test, with a deviation profile."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from ctk.checks.context import CheckContext, CheckOptions
from ctk.client.transport import CatalogClient
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.client.config import TargetConfig


@pytest.fixture
def gen_ctx(tmp_path):
    """gen_ctx(deviation=None, control_api=True) -> CheckContext on a fresh reference catalog."""
    started: list = []

    def make(deviation: str | None = None, control_api: bool = True) -> CheckContext:
        srv = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / f"wh{len(started)}"), control_api=control_api,
                                                deviation=deviation))
        srv.start()
        started.append(srv)
        client = CatalogClient(TargetConfig(srv.url, timeout=20.0))
        started.append(client)
        return CheckContext.create(client, options=CheckOptions(max_wait=5.0))

    yield make
    for thing in reversed(started):
        if isinstance(thing, CatalogClient):
            thing.close()
        else:
            thing.stop()


def session_for(ctx: CheckContext) -> SimpleNamespace:
    """What ctk.scenarios.runner.run_scenario needs from a session."""
    return SimpleNamespace(client=ctx.client, namespace=ctx.namespace[0], context=ctx, discovery=ctx.discovery,
                           options=ctx.options)


@pytest.fixture
def timed():
    t0 = time.monotonic()
    yield
    print(f"\n[{time.monotonic() - t0:.1f} s]")
