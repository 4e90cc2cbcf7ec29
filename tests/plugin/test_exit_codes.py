"""Exit codes: 0 no MUST broken, 1 a MUST broken or a status --ctk-fail-on names, 4 a bad option value; and
recorded exchanges name the user's URL, not the internal interposer's port."""

from __future__ import annotations

import json
import re

import pytest

from ctk.plugin.exits import EXIT_MUST_BROKEN, EXIT_OK, EXIT_USAGE

MIXED = """
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_deviation(ctk_client):
    ex = ctk_client.request("GET", "/v1/config", label="probe")
    return Verdict.broken("KEY-01", "accepted a malformed key", exchanges=[ex.to_dict()])

@pytest.mark.ctk
def test_inconclusive(ctk_client):
    return Verdict.inconclusive("INFLIGHT-01", "no overlap observed")

@pytest.mark.ctk
def test_pass(ctk_client):
    return Verdict.ok("KEY-01", "fine")
"""

MUST = """
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_must(ctk_client):
    return Verdict.broken("REPLAY-01", "a duplicate was executed twice")
"""


def _run(pytester, url, *extra):
    return pytester.runpytest("test_codes.py", "--catalog-url", url, "-p", "no:html", "--ctk-reports", "rep", *extra)


def test_deviation_and_inconclusive_exit_0(pytester: pytest.Pytester, reference_url):
    pytester.makepyfile(test_codes=MIXED)
    result = _run(pytester, reference_url)
    assert result.ret == EXIT_OK, result.stdout.str()
    result.assert_outcomes(passed=2, skipped=1, warnings=1)


@pytest.mark.parametrize("fail_on, code", [
    ("deviation", EXIT_MUST_BROKEN),
    ("inconclusive", EXIT_MUST_BROKEN),
    ("deviation,inconclusive,unsupported", EXIT_MUST_BROKEN),
    ("unsupported", EXIT_OK),
])
def test_fail_on(pytester: pytest.Pytester, reference_url, fail_on, code):
    pytester.makepyfile(test_codes=MIXED)
    result = _run(pytester, reference_url, "--ctk-fail-on", fail_on)
    assert result.ret == code, result.stdout.str()
    result.assert_outcomes(passed=2, skipped=1, warnings=1)        # outcomes unchanged, only the exit code
    if code:
        out = result.stdout.str()
        assert "exit 1 (--ctk-fail-on)" in out
        if "inconclusive" in fail_on:      # the reason is in the output, not only in the reports
            assert "INCONCLUSIVE INFLIGHT-01 test_codes.py::test_inconclusive: no overlap observed" in out


def test_fail_on_bad_value_is_a_usage_error(pytester: pytest.Pytester, reference_url):
    pytester.makepyfile(test_codes=MIXED)
    result = _run(pytester, reference_url, "--ctk-fail-on", "deviations")
    assert result.ret == EXIT_USAGE
    assert "--ctk-fail-on 'deviations'" in result.stderr.str()


def test_must_broken_exit_1(pytester: pytest.Pytester, reference_url):
    pytester.makepyfile(test_codes=MUST)
    result = _run(pytester, reference_url)
    assert result.ret == EXIT_MUST_BROKEN
    result.assert_outcomes(failed=1)


def test_exchanges_name_the_users_url(pytester: pytest.Pytester, reference_url):
    pytester.makepyfile(test_codes=MIXED)
    result = _run(pytester, reference_url, "-W", "default")
    data = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    urls = [ex["url"] for r in data["results"] for ex in r["exchanges"]]
    assert urls and all(u.startswith(reference_url + "/v1/config") for u in urls), urls
    port = reference_url.rsplit(":", 1)[1]
    assert set(re.findall(r"127\.0\.0\.1:(\d+)", result.stdout.str())) <= {port}
