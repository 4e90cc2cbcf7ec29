"""Not applicable apart from not decided: an unsupported or inconclusive verdict whose reason names what would
decide it carries ``needs`` (the option or capability); one that does not apply carries none."""

from __future__ import annotations

import pytest

from ctk.checks.faults import FaultInjector
from ctk.checks.idempotency import NEEDS_CORRUPT_STORED, NEEDS_CRASH_BEFORE_FINALIZE, NEEDS_FAIL_BEFORE
from ctk.core.verdicts import Verdict, needs_of


@pytest.mark.parametrize("reason, needs", [
    (NEEDS_FAIL_BEFORE + "; this run injects faults via none", "--ctk-db-link"),
    (NEEDS_CORRUPT_STORED + "; this run injects faults via none", "reference control API"),
    (NEEDS_CRASH_BEFORE_FINALIZE + "; this run injects faults via none", "reference control API"),
    (str(FaultInjector()._unsupported("crash_before_finalize")), "reference control API"),
    (str(FaultInjector()._unsupported("lose_answer")), "or the interposer"),
    (str(FaultInjector()._unsupported("duplicate")), "the interposer"),
    ("network scenarios need the interposer between the kit and the target", "the interposer"),
    ("a retry at 90% of the advertised lifetime (PT30M) means waiting 1620 s, more than max_wait (60 s)",
     "--ctk-max-wait 1620"),
    ("the retry was answered like a replay, but cancelling leaves no trace; without the target's execution "
     "counters the kit cannot tell a replay from a re-execution", "execution counters"),
    ("Spark is not available: no jars", "--ctk-spark"),
])
def test_reasons_that_name_what_would_decide(reason, needs):
    v = Verdict.unsupported("REPLAY-03", reason)
    assert v.needs and needs in v.needs, v.needs
    assert v.to_dict()["needs"] == v.needs


@pytest.mark.parametrize("reason", [
    "createView not offered by the target: not in /v1/config endpoints",
    "the target does not advertise Idempotency-Key support (idempotency-key-lifetime: absent)",
    "cancelPlanning has no request body, so there is no other payload to send",
    "a setup step failed, so the requirement could not be exercised: table files live at s3://b/t; pass "
    "--catalog-property s3.endpoint=http://127.0.0.1:PORT",
])
def test_not_applicable_and_failed_setups_name_no_need(reason):
    assert needs_of(reason) is None
    assert Verdict.inconclusive("OCC-01", reason).needs is None


def test_the_reason_not_the_exchanges_is_read():
    text = "a setup step failed: 409\n\nexchanges:\n--> GET /x\n<-- 200\n{\"msg\": \"needs the interposer\"}"
    assert needs_of(text) is None
