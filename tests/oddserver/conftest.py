"""Fixtures for the odd-server tests: the reference catalog behind `odd.OddServer` (and optionally the
interposer in front of that), with a CheckContext on it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from odd import OddServer  # noqa: E402

from ctk.checks.context import CheckContext, CheckOptions  # noqa: E402
from ctk.client.transport import CatalogClient  # noqa: E402
from ctk.reference.server import ReferenceServer  # noqa: E402
from ctk.reference.settings import ReferenceSettings  # noqa: E402
from ctk.client.config import TargetConfig  # noqa: E402


@pytest.fixture
def make_odd(tmp_path):
    """make_odd(rules, interposer=False, **settings) -> (CheckContext, OddServer).

    ``rules`` is a list of `odd.Rule`s or a callable ``upstream_url -> list``. The reference catalog runs
    without its control API unless ``control_api=True`` is given: a third-party catalog has none.
    """
    started: list = []

    def make(rules, interposer: bool = False, **settings):
        settings.setdefault("control_api", False)
        settings.setdefault("idempotency_lifetime", "PT8S")
        ref = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / f"wh{len(started)}"), **settings))
        ref.start()
        started.append(ref)
        odd = OddServer(ref.url, rules(ref.url) if callable(rules) else rules)
        url = odd.start()
        started.append(odd)
        ip = None
        if interposer:
            from ctk.interposer import Interposer

            host, port = url.rsplit("//", 1)[1].split(":")
            ip = Interposer(upstream=(host, int(port)))
            h, p = ip.start()
            started.append(ip)
            url = f"http://{h}:{p}"
        client = CatalogClient(TargetConfig(url, timeout=20.0))
        started.append(client)
        ctx = CheckContext.create(client, interposer=ip, options=CheckOptions(max_wait=8.0, inflight_hold=0.5))
        ctx.test_interposer = ip
        return ctx, odd

    yield make
    for thing in reversed(started):
        if isinstance(thing, CatalogClient):
            thing.close()
        else:
            thing.stop()
