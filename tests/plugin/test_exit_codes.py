"""Exit codes: 0 no MUST broken, 1 a MUST broken or a status --ctk-fail-on names, 4 a bad option value, 7 a MUST
left undecided that the setup could decide; the kit's summary is the end of the output; and recorded exchanges
name the user's URL, not the internal interposer's port."""

from __future__ import annotations

import json
import re

import pytest

from ctk.plugin.exits import EXIT_MUST_BROKEN, EXIT_MUST_UNDECIDED, EXIT_OK, EXIT_USAGE

MIXED = """
import pytest
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_deviation(ctk_client):
    ex = ctk_client.request("GET", "/v1/config", label="probe")
    return Verdict.broken("KEY-01", "accepted a malformed key", exchanges=[ex.to_dict()])

@pytest.mark.ctk
def test_inconclusive(ctk_client):
    return Verdict.inconclusive("INFLIGHT-02", "no overlap observed")

@pytest.mark.ctk
def test_pass(ctk_client):
    return Verdict.ok("KEY-01", "fine")
"""

UNDECIDED = """
import pytest
from ctk.core import needs
from ctk.core.verdicts import Verdict

@pytest.mark.ctk
def test_setup_failed(ctk_client):
    return Verdict.inconclusive("OCC-01", "a setup step failed, so the requirement could not be exercised: table "
                                "files live at s3://bucket/t; no s3.endpoint is set, so pyiceberg would contact the "
                                "public AWS endpoint; pass --catalog-property s3.endpoint=http://127.0.0.1:PORT")

@pytest.mark.ctk
def test_not_decidable_here(ctk_client):
    return Verdict.unsupported("REPLAY-03", "a 5xx before anything is persisted needs one of: the catalog's "
                               "database link (--ctk-db-link http://HOST:PORT/proxies/NAME: ...)",
                               needs=needs.DB_LINK_OR_CONTROL_API)

@pytest.mark.ctk
def test_pass(ctk_client):
    return Verdict.ok("REPLAY-01", "fine")
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
    ("ci", EXIT_MUST_BROKEN),
    ("unsupported", EXIT_OK),
])
def test_fail_on(pytester: pytest.Pytester, reference_url, fail_on, code):
    pytester.makepyfile(test_codes=MIXED)
    result = _run(pytester, reference_url, "--ctk-fail-on", fail_on)
    assert result.ret == code, result.stdout.str()
    result.assert_outcomes(passed=2, skipped=1, warnings=1)        # outcomes unchanged, only the exit code
    if code:
        out = result.stdout.str()
        assert "--ctk-fail-on counted:" in out
        assert out.rstrip().splitlines()[-1].startswith("exit 1: ")
        if "inconclusive" in fail_on or fail_on == "ci":   # the reason is in the output, not only in the reports
            assert "INCONCLUSIVE INFLIGHT-02 test_codes.py::test_inconclusive: no overlap observed" in out


def test_undecided_must_exit_7_and_what_would_decide_it(pytester: pytest.Pytester, reference_url):
    """A MUST left inconclusive by a setup that failed (here: a storage setting missing) is not a green build:
    exit 7; a MUST this setup cannot decide (REPLAY-03 without --ctk-db-link) is listed with what would decide
    it, and alone keeps exit 0. The kit's lines end the output, after pytest's statistics line."""
    pytester.makepyfile(test_codes=UNDECIDED)
    result = _run(pytester, reference_url)
    out = result.stdout.str()
    assert result.ret == EXIT_MUST_UNDECIDED, out
    tail = out[out.rindex("ctk verdict"):]
    assert "passed" not in tail and "skipped" not in tail, tail          # pytest's statistics line is above
    assert "1x OCC-01 (a MUST): inconclusive: a setup step failed" in tail
    assert "--catalog-property s3.endpoint" in tail
    assert "1x REPLAY-03 (a MUST): needs --ctk-db-link" in tail
    assert "MUSTs left undecided: OCC-01" in tail
    assert tail.rstrip().splitlines()[-1].startswith("exit 7: no MUST broken, but a MUST was left undecided")
    report = json.loads((pytester.path / "rep" / "conformance.json").read_text())
    assert report["kinds"]["needs"] == 1 and report["kinds"]["inconclusive"] == 1
    assert [g["requirements"] for g in report["undecided"]] == [{"OCC-01": 1}, {"REPLAY-03": 1}]

    pytester.makepyfile(test_codes=UNDECIDED.replace('Verdict.inconclusive("OCC-01"', 'Verdict.ok("OCC-01"'))
    result = _run(pytester, reference_url)
    assert result.ret == EXIT_OK, result.stdout.str()
    assert result.stdout.str().rstrip().splitlines()[-1].startswith("exit 0: ")


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
