"""Fixtures for the catalog-layer tests: a case context (client, run namespace, fresh names) on an embedded
reference catalog, and a client answered by a function (httpx.MockTransport)."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Callable

import httpx
import pytest

from ctk.catalog import Catalog
from ctk.client.config import TargetConfig
from ctk.client.discovery import discover
from ctk.client.transport import CatalogClient


@dataclass
class CaseCtx:
    """What a case builder takes (`ctk.catalog.CaseContext`), and nothing more."""
    client: CatalogClient
    namespace: tuple[str, ...]
    counter: itertools.count = field(default_factory=itertools.count)

    def unique(self, stem: str) -> str:
        return f"{stem}_{next(self.counter)}"


@pytest.fixture
def ctx(ref_client):
    discover(ref_client)
    ns = (f"ctk_{uuid.uuid4().hex[:10]}",)
    Catalog(ref_client).create_namespace(ns)
    return CaseCtx(ref_client, ns)


@pytest.fixture
def mock_client():
    """mock_client(handler, prefix=None) -> a CatalogClient whose requests ``handler(httpx.Request)`` answers."""
    made: list[CatalogClient] = []

    def make(handler: Callable[[httpx.Request], httpx.Response], prefix: str | None = None) -> CatalogClient:
        c = CatalogClient(TargetConfig("http://127.0.0.1:1", prefix=prefix), transport=httpx.MockTransport(handler))
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
