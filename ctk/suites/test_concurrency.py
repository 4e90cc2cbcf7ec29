"""Commit concurrency: OCC-01..04 (requirements, races, serial history, transactions), HIST-01/02, INTEG-01."""

import pytest

concurrency = pytest.importorskip("ctk.checks.concurrency", reason="commit concurrency checks not available")

CHECKS = [
    ("requirements", "check_requirements"),
    ("race", "check_race"),
    ("serial-appends", "check_serial_appends"),
    ("transaction", "check_transaction"),
]


@pytest.mark.parametrize("behaviour,name", CHECKS, ids=[b for b, _ in CHECKS])
def test_concurrency(ctk_context, behaviour, name):
    check = getattr(concurrency, name, None)
    if check is None:
        pytest.skip(f"unsupported: ctk.checks.concurrency has no {name}")
    return check(ctk_context)
