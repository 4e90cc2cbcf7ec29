"""conformance.html in headless Chromium, for what a reader of a partial or broken run needs: the unusable
target's reason in a red banner; an interrupted subset run that says so and claims no PASS; the matrix with a
sticky header row and first column (measured after scrolling its box) and FAIL cells linking to their finding;
"Needs attention" saying what happened; each exchange printed once, long bodies cut with a note."""

from __future__ import annotations

import os
import re

import pytest

from reporting_sample import build_sample
from browser import chromium, decode_png
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Verdict
from ctk.reporting.conformance import write_conformance
from ctk.reporting.model import FINDING_BODY, RunReport

pytestmark = pytest.mark.chromium   # skipped where there is no Chromium (tests/conftest.py)

# Injected into a COPY of the page only (the kit's pages carry no scripts): scroll the matrix box and write where
# its first header cell and first row header ended up into the DOM, for --dump-dom to read.
PROBE = """<script>
window.addEventListener('load', () => {
  const box = document.querySelector('.scroll');
  box.scrollTop = 200; box.scrollLeft = 400;
  {
    const b = box.getBoundingClientRect();
    const head = box.querySelector('thead th:nth-child(3)').getBoundingClientRect();
    const row = box.querySelector('tbody tr:nth-child(8) th.row').getBoundingClientRect();
    const out = document.createElement('pre');
    out.id = 'probe';
    out.textContent = `box ${Math.round(b.top)} ${Math.round(b.left)} head ${Math.round(head.top)} `
      + `row ${Math.round(row.left)} scrolled ${box.scrollTop} ${box.scrollLeft}`;
    document.body.appendChild(out);
  }
});
</script>"""

ENDPOINTS = [f"operation{i:02d}" for i in range(30)]
BEHAVIOURS = [b.value for b in list(Behaviour)[:30]]   # a wide matrix: 30 registered columns


def _wide_partial_run() -> RunReport:
    rep = RunReport.begin("http://127.0.0.1:8181", name="partial", started_at="2026-01-01T10:00:00+00:00")
    for ep in ENDPOINTS:
        for bh in BEHAVIOURS:
            rep.add(Verdict.ok("REPLAY-01", "replayed", endpoint=ep, behaviour=bh, classification="replayed 200"),
                    f"suites/test_x.py::test[{ep}-{bh}]", 0.1)
    big = "x" * (FINDING_BODY * 3)
    ex = {"method": "POST", "url": "http://127.0.0.1:8181/v1/namespaces/n/tables/t", "request_headers": {},
          "request_body": '{"updates": []}', "status": 200, "response_headers": {}, "response_body": big,
          "error": None, "started_at": 0.0, "elapsed_ms": 3.0, "label": "retry, same key"}
    message = ("expected: one execution of the commit\nhappened: the retry executed it again (2 snapshots)\n\n"
               "exchanges:\n--> POST http://127.0.0.1:8181/v1/namespaces/n/tables/t   [retry, same key]")
    rep.add(Verdict.broken("REPLAY-04", message, endpoint="operation07", behaviour="lost-answer-503",
                           classification="re-executed", exchanges=[ex, dict(ex)]),
            "suites/test_x.py::test_lost[operation07]", 1.0)
    rep.state = "interrupted"
    rep.selection = {"keyword": "operation"}
    rep.cleanup_problems = ["namespace ctk_1_gw0: 503"]
    rep.finish()
    return rep


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("partial")
    paths = write_conformance(_wide_partial_run(), str(tmp / "reports"))
    page = open(paths["html"], encoding="utf-8").read()
    probe = tmp / "probe.html"
    probe.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium(tmp, "--window-size=1000,800", "--virtual-time-budget=3000", "--dump-dom",
                   "file://" + str(probe))
    plain = chromium(tmp, "--dump-dom", "file://" + os.path.abspath(paths["html"]))
    return page, dom, plain


def test_matrix_header_and_first_column_stay_in_view(partial):
    _, dom, _ = partial
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = re.search(r"box (-?\d+) (-?\d+) head (-?\d+) row (-?\d+) scrolled (\d+) (\d+)", dom.stdout)
    assert m, dom.stdout[-2000:]
    box_top, box_left, head_top, row_left, st, sl = map(int, m.groups())
    assert st == 200 and sl == 400, "the matrix box did not scroll: the matrix is not in a scroll box"
    assert abs(head_top - box_top) <= 2, (head_top, box_top)        # header row stuck to the box's top
    assert abs(row_left - box_left) <= 2, (row_left, box_left)      # first column stuck to the box's left


def test_partial_run_says_so_and_claims_no_pass(partial):
    _, _, plain = partial
    html = plain.stdout
    # the FAIL it found stands; passes of the checks that ran do not become an overall PASS
    assert "Overall: FAIL: at least one MUST requirement is broken (in the checks of this interrupted run)" in html
    rep = _wide_partial_run()
    rep.results = [r for r in rep.results if r.status == "pass"]
    assert rep.overall() == "pass" and rep.overall_claim() is None and rep.to_dict()["overall"] is None
    from ctk.reporting.html import overall_text

    assert overall_text(rep).startswith("NO OVERALL VERDICT: interrupted run, 1 of ")
    assert 'id="interrupted"' in html and 'id="subset"' in html and "keyword: operation" in html
    assert "namespace ctk_1_gw0: 503" in html


def test_fail_cells_link_to_their_finding_and_attention_says_what_happened(partial):
    _, _, plain = partial
    html = plain.stdout
    row = re.search(r'<th class="row">operation07</th>(.*?)</tr>', html, re.S).group(1)
    assert re.search(r'class="s s-fail".*?<a class="cls" href="#finding-1">', row, re.S), row[:2000]
    attention = re.search(r"<h3>Needs attention</h3>(.*?)</ul>", html, re.S).group(1)
    assert "happened:</b> the retry executed it again (2 snapshots)" in attention
    assert "expected: one execution of the commit" in attention


def test_each_exchange_once_and_bodies_cut(partial):
    page, _, _ = partial
    finding = re.search(r'<section class="finding s-fail" id="finding-1">(.*?)</section>', page, re.S).group(1)
    assert finding.count("--&gt; POST http://127.0.0.1:8181/v1/namespaces/n/tables/t") == 1
    assert "characters not kept in the report" in finding


def test_unusable_target_banner_on_screen(tmp_path):
    rep = RunReport.begin("http://127.0.0.1:9", started_at="2026-01-01T10:00:00+00:00")
    rep.state = "unusable-target"
    rep.problem = "catalog at http://127.0.0.1:9 is unreachable: connection refused, nothing listening?"
    rep.finish()
    paths = write_conformance(rep, str(tmp_path / "reports"))
    url = "file://" + os.path.abspath(paths["html"])
    png = tmp_path / "unusable.png"
    shot = chromium(tmp_path, "--window-size=1200,700", f"--screenshot={png}", url)
    assert png.exists(), shot.stderr[-2000:]
    _, _, rows = decode_png(png.read_bytes(), every=4)
    red = sum(1 for row in rows for px in row if abs(px[0] - 0xFF) < 10 and abs(px[1] - 0xCE) < 12
              and abs(px[2] - 0xCB) < 12)
    assert red > 500, red          # the red banner and overall box are above the fold
    html = chromium(tmp_path, "--dump-dom", url).stdout
    assert "UNUSABLE TARGET" in html and "connection refused, nothing listening?" in html
    assert "2026-01-01T10:00:00+00:00" in html          # the real start time, not the end
