import httpcore  # noqa: F401 - keep one copy across pytester inline runs
import pytest

import ctk.checks  # noqa: F401
import ctk.pytest_plugin  # noqa: F401



@pytest.fixture(scope="module")
def make_session():
    """CtkSession factory on a fresh reference catalog with an optional deviation profile."""
    from ctk.plugin.options import CtkOptions
    from ctk.plugin.session import CtkSession
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    made = []

    def make(deviation=None, control_api=True, lifetime="PT4S"):
        srv = ReferenceServer(ReferenceSettings(control_api=control_api, idempotency_lifetime=lifetime,
                                                idempotency_grace="PT2S", deviation=deviation))
        url = srv.start().rstrip("/")
        session = CtkSession(CtkOptions(catalog_url=url, timeout=5.0, max_wait=10.0))
        session.start()
        assert session.error is None, session.error
        made.append((srv, session))
        return session

    yield make
    for srv, session in made:
        session.stop()
        srv.stop()
