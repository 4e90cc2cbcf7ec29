"""Verdict -> pytest outcome, with and without --ctk-strict, and the failure text."""

from __future__ import annotations

import warnings

import pytest

from ctk.core.verdicts import Status, Verdict, VerdictError
from ctk.plugin import outcomes

CHECKS = """
import pytest
from ctk.core.verdicts import Verdict

EX = {"method": "POST", "url": "http://127.0.0.1:1/v1/namespaces", "request_headers": {"Authorization": "Bearer s3cret"},
      "request_body": '{"namespace":["a"]}', "status": 500, "response_headers": {}, "response_body": '{"error":{}}',
      "error": None, "started_at": 0.0, "elapsed_ms": 3.0, "label": "first attempt"}

@pytest.mark.ctk
def test_pass():
    return Verdict.ok("REPLAY-01", "replayed", endpoint="createNamespace", behaviour="finalized-duplicate")

@pytest.mark.ctk
def test_fail():
    return Verdict.broken("REPLAY-01", "re-executed twice", endpoint="createNamespace",
                          behaviour="finalized-duplicate", classification="re-executed", exchanges=[EX])

@pytest.mark.ctk
def test_deviation():
    return Verdict.broken("KEY-01", "accepted a malformed key", classification="accepted")

@pytest.mark.ctk
def test_unsupported():
    return Verdict.unsupported("RECON-01", "no control API")

@pytest.mark.ctk
def test_inconclusive():
    return Verdict.inconclusive("INFLIGHT-01", "no overlap observed")

@pytest.mark.ctk
def test_mixed_pass_and_unsupported():
    return [Verdict.ok("REPLAY-04", "503 ok"), Verdict.unsupported("REPLAY-04", "no reset mode")]
"""


def _run(pytester, *args):
    pytester.makepyfile(test_checks=CHECKS)
    return pytester.runpytest("test_checks.py", "-rsw", "-p", "no:html", *args)


def test_outcomes_default(pytester: pytest.Pytester):
    result = _run(pytester)
    result.assert_outcomes(passed=3, failed=1, skipped=2, warnings=1)
    out = result.stdout.str()
    # the failure names the requirement (id, level, statement, source), the message and the exchanges
    assert "REPLAY-01 (MUST) FAIL [createNamespace, finalized-duplicate]" in out
    assert "A finalized duplicate (same key, same payload" in out
    assert "source: Iceberg REST OpenAPI" in out
    assert "message: re-executed twice" in out
    assert "--> POST http://127.0.0.1:1/v1/namespaces   [first attempt]" in out
    assert "<-- 500" in out
    assert "s3cret" not in out  # exchanges are redacted
    assert "unsupported: RECON-01: no control API" in out
    assert "inconclusive: INFLIGHT-01: no overlap observed" in out
    assert "CtkDeviationWarning" in out and "KEY-01 (SHOULD) DEVIATION" in out


def test_outcomes_strict(pytester: pytest.Pytester):
    result = _run(pytester, "--ctk-strict")
    result.assert_outcomes(passed=2, failed=2, skipped=2)
    out = result.stdout.str()
    assert "KEY-01 (SHOULD) DEVIATION" in out and "--ctk-strict" in out


def test_junit_properties(pytester: pytest.Pytester):
    _run(pytester, "--junitxml=out.xml")
    xml = (pytester.path / "out.xml").read_text()
    assert '<property name="ctk.requirement" value="REPLAY-01" />' in xml
    assert '<property name="ctk.level" value="MUST" />' in xml
    assert '<property name="ctk.verdict" value="fail" />' in xml
    assert '<property name="ctk.classification" value="re-executed" />' in xml


def test_apply_unit():
    outcomes.apply([Verdict.ok("KEY-01", "fine")], strict=True)
    with pytest.raises(VerdictError) as info:
        outcomes.apply([Verdict.ok("KEY-01", "fine"), Verdict.broken("REPLAY-03", "stored a 5xx")], strict=False)
    assert info.value.verdict.requirement == "REPLAY-03"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcomes.apply([Verdict.broken("KEY-01", "accepted")], strict=False)
    assert any(issubclass(w.category, outcomes.CtkDeviationWarning) for w in caught)
    with pytest.raises(VerdictError):
        outcomes.apply([Verdict.broken("KEY-01", "accepted")], strict=True)
    with pytest.raises(pytest.skip.Exception, match="^inconclusive: LIFE-01"):
        outcomes.apply([Verdict.unsupported("RECON-01", "x"), Verdict.inconclusive("LIFE-01", "y")], strict=False)
    with pytest.raises(AssertionError):
        outcomes.apply([], strict=False)


def test_worst_order():
    vs = [Verdict("KEY-01", Status.PASS, ""), Verdict("KEY-01", Status.UNSUPPORTED, ""),
          Verdict("KEY-01", Status.INCONCLUSIVE, "")]
    assert outcomes.worst(vs).status is Status.INCONCLUSIVE
    assert outcomes.as_verdicts(vs) == vs and outcomes.as_verdicts(None) is None and outcomes.as_verdicts([1]) is None
