"""A real client end to end (CLIENT-01): pyiceberg creates a table in the run namespace, appends twice, reloads
it and reads every row back, with the kit's target settings and storage settings (behind the loopback guard)."""

import pytest

real_client = pytest.importorskip("ctk.checks.real_client", reason="real-client checks not available")


def test_real_client_pyiceberg(ctk_context):
    return real_client.check_pyiceberg(ctk_context)
