"""conformance.html with a crashed check, rendered in headless Chromium: a reader sees the ERROR overall, the
crashed requirement, its exception and its last exchange."""

from __future__ import annotations

import pytest

from browser import render
from ctk.core.verdicts import Verdict
from ctk.reporting.conformance import write_conformance
from ctk.reporting.model import RunReport

pytestmark = pytest.mark.chromium   # skipped where there is no Chromium (tests/conftest.py)

LAST = {"method": "GET", "url": "http://127.0.0.1:8181/v1/namespaces/ns/tables/t", "request_headers": {},
        "request_body": None, "status": 503, "response_headers": {}, "response_body": '{"error":{}}',
        "error": None, "started_at": 0.0, "elapsed_ms": 2.0, "label": "state: load table"}


def test_error_verdict_is_what_the_page_leads_with(tmp_path):
    try:
        raise ZeroDivisionError("division by zero inside the race check")
    except ZeroDivisionError as exc:
        crashed = Verdict.crashed("OCC-02", exc, LAST, where="race", behaviour="race", endpoint="updateTable")
    report = RunReport.begin("http://127.0.0.1:8181")
    report.add(crashed, "ctk/suites/test_concurrency.py::test_concurrency[race]")
    report.add(Verdict.ok("OCC-01", "409 CommitFailedException, table unchanged"), "x::test_ok")
    report.finish()
    paths = write_conformance(report, str(tmp_path / "reports"))
    png, shot, dom = render(tmp_path, paths["html"])
    assert png.exists() and png.stat().st_size > 10_000, shot.stderr[-2000:]
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert "Overall: ERROR: a check crashed, so the run did not judge every requirement" in html
    assert 'id="finding-1"' in html and "ZeroDivisionError: division by zero inside the race check" in html
    assert "GET http://127.0.0.1:8181/v1/namespaces/ns/tables/t -&gt; 503 [state: load table]" in html
    assert html.index("ZeroDivisionError") < html.index("409 CommitFailedException")   # the crash comes first
