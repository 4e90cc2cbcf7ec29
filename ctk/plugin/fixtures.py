"""Fixtures the suites and scenario items use. Registered through ctk/pytest_plugin.py.

None of them raises when the target is unusable: the plugin's call hook fails each ctk test with the
target's problem instead (a failure, not a setup error)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import pytest

from ctk.plugin.scheduling import LifetimeBatch
from ctk.plugin.state import get_session

if TYPE_CHECKING:  # pragma: no cover
    from ctk.checks.context import CheckContext
    from ctk.client.transport import CatalogClient
    from ctk.openapi import Spec
    from ctk.plugin.session import CtkSession
    from ctk.client.config import TargetConfig
    from ctk.client.discovery import Discovery


@pytest.fixture(scope="session")
def ctk_session(request: pytest.FixtureRequest) -> Iterator[CtkSession]:
    """The started ctk session (target, client, discovery, run namespace); cleaned up at session end."""
    session = get_session(request.config)
    if session is None:
        pytest.skip("the ctk plugin is not active (give --catalog-url or --ctk)")
    session.start()
    if session.skip_reason:
        pytest.skip(session.skip_reason)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def ctk_target(ctk_session: CtkSession) -> TargetConfig | None:
    """The TargetConfig of the catalog under test."""
    return ctk_session.target


@pytest.fixture(scope="session")
def ctk_client(ctk_session: CtkSession) -> CatalogClient | None:
    """A CatalogClient bound to the target (records redacted exchanges, bounded timeouts)."""
    return ctk_session.client


@pytest.fixture(scope="session")
def ctk_discovery(ctk_session: CtkSession) -> Discovery | None:
    """What /v1/config advertised (idempotency-key-lifetime etc.)."""
    return ctk_session.discovery


@pytest.fixture(scope="session")
def ctk_namespace(ctk_session: CtkSession) -> str | None:
    """Name of this session's run namespace (single level)."""
    return ctk_session.namespace


@pytest.fixture
def ctk_context(ctk_session: CtkSession) -> CheckContext | None:
    """The CheckContext the conformance checks take."""
    ctx = ctk_session.context
    if ctx is None and not ctk_session.error:
        pytest.skip("inconclusive: no CheckContext available (ctk.checks not built)")
    return ctx


@pytest.fixture(scope="session")
def lifetime_batch(ctk_session: CtkSession) -> Iterator[LifetimeBatch]:
    """The lifetime checks of every operation, run as one batch (ctk/plugin/scheduling.py)."""
    batch = LifetimeBatch(ctk_session)
    try:
        yield batch
    finally:
        batch.close()


@pytest.fixture(scope="session")
def ctk_openapi(request: pytest.FixtureRequest) -> Spec:
    """The OpenAPI document responses are validated against (--openapi-spec or the kit's own)."""
    from ctk.openapi import load_spec

    session = get_session(request.config)
    return load_spec(session.options.openapi_spec if session else None)
