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


class RunNamespace(str):
    """The run namespace as the ``ctk_namespace`` fixture gives it. As a string: its levels joined by ``.``
    (what the fixture always returned; for a top-level run namespace, its one level). That string is for
    display only: under ``--ctk-parent-namespace a.b`` it is ``a.b.ctk_<run>_<worker>``, and a level may
    itself hold a dot. ``levels`` is the tuple of levels (what a request body's ``namespace`` takes),
    ``child(*names)`` the levels of a namespace below it, ``path`` the URL form for the client's paths
    (``namespaces/{ns.path}/tables``; the client puts an advertised ``namespace-separator`` in)."""

    levels: tuple[str, ...]

    def __new__(cls, levels: tuple[str, ...] | list[str]) -> "RunNamespace":
        levels = tuple(levels)
        if not levels or not all(isinstance(p, str) and p for p in levels):
            raise ValueError(f"a namespace needs one or more non-empty levels, not {levels!r}")
        obj = super().__new__(cls, ".".join(levels))
        obj.levels = levels
        return obj

    def child(self, *names: str) -> tuple[str, ...]:
        return self.levels + tuple(names)

    @property
    def path(self) -> str:
        from ctk.client.transport import ns_path

        return ns_path(self.levels)

    def __repr__(self) -> str:
        return f"RunNamespace({self.levels!r})"


@pytest.fixture(scope="session")
def ctk_namespace(ctk_session: CtkSession) -> RunNamespace | None:
    """This session's run namespace (a `RunNamespace`: a str of its levels joined by '.', with ``levels``,
    ``child()`` and ``path``); None when the target is unusable."""
    parts = ctk_session.namespace_parts or ((ctk_session.namespace,) if ctk_session.namespace else ())
    return RunNamespace(parts) if parts else None


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
    ctk_session.before_stop.append(batch.close)
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
