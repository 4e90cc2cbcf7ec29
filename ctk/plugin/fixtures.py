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
    from ctk.openapi import Spec
    from ctk.plugin.session import CtkSession


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


def _session_part(part: str, doc: str):
    """The session fixture ``ctk_<part>``: that attribute of the started ctk session."""

    def fixture(ctk_session: CtkSession):
        return getattr(ctk_session, part)

    fixture.__name__ = fixture.__qualname__ = f"ctk_{part}"
    fixture.__doc__ = doc
    return pytest.fixture(scope="session", name=f"ctk_{part}")(fixture)


ctk_target = _session_part("target", "The TargetConfig of the catalog under test.")
ctk_client = _session_part("client", "A CatalogClient bound to the target (records redacted exchanges, bounded "
                                     "timeouts).")
ctk_discovery = _session_part("discovery", "What /v1/config advertised (idempotency-key-lifetime etc.).")
ctk_namespace = _session_part("namespace", "Name of this session's run namespace (single level).")


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
