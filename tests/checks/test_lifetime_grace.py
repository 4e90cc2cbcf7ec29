"""LIFE-01 and LIFE-03 together: the probe just past the lifetime works on every kind of case (creates, drops,
renames, commits) without losing the LIFE-01 verdict, and tells a grace from a key that expires at the lifetime."""

from __future__ import annotations

import pytest

from ctk.checks import run_endpoint_checks
from ctk.core.verdicts import Status

OPS = ("createNamespace", "dropTable", "renameTable", "updateTable")


def _by_req(verdicts):
    return {v.requirement: v for v in verdicts}


@pytest.mark.parametrize("grace,cls,design", [("PT5M", "grace after the lifetime", None),
                                              ("PT0S", "expires at the lifetime", "deviation")])
def test_grace_probe_on_every_kind_of_case(make_ctx, grace, cls, design):
    ctx = make_ctx(idempotency_lifetime="PT2S", idempotency_grace=grace)
    for op in OPS:
        got = _by_req(run_endpoint_checks(ctx, op, ["lifetime"]))
        assert got["LIFE-01"].status is Status.PASS, f"{op}: {got['LIFE-01'].message}"
        v = got["LIFE-03"]
        assert v.status is Status.PASS and v.classification == cls, f"{op}: {v.classification}: {v.message}"
        assert (v.details.get("profiles") or {}).get("design") == design, (op, v.details)
        assert v.details["late_seconds"] > 2.0
