"""Fixtures for the plugin's own tests: pytester, a reference catalog reachable by URL, a hanging socket."""

from __future__ import annotations

import socket
import threading

import httpcore  # noqa: F401 - imported here so pytester's inline runs never re-import it (class identity)
import httpx
import pytest

import ctk.checks  # noqa: F401 - same reason: keep one copy of the modules the inline runs use
import ctk.pytest_plugin  # noqa: F401



@pytest.fixture(scope="module")
def reference_url():
    """A reference catalog with the control API, as an external target (--catalog-url)."""
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    srv = ReferenceServer(ReferenceSettings(control_api=True, idempotency_lifetime="PT4S", idempotency_grace="PT2S"))
    url = srv.start()
    try:
        yield url.rstrip("/")
    finally:
        srv.stop()


def _namespaces(url: str) -> list[list[str]]:
    r = httpx.get(f"{url}/v1/namespaces", timeout=10)
    r.raise_for_status()
    return r.json()["namespaces"]


@pytest.fixture
def namespaces():
    """namespaces(url) -> the top-level namespaces of the catalog at url."""
    return _namespaces


@pytest.fixture
def hanging_url():
    """A socket that accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    conns: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
                conns.append(c)
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        stop.set()
        t.join(timeout=2)
        for c in conns:
            c.close()
        srv.close()
