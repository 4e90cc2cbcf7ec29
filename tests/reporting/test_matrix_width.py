"""The endpoint x behaviour matrix fits a 1400 px window: the page never gets wider than the window, the matrix
scrolls sideways inside its own box, and its first column (the endpoint) stays in view while it does. Checked in
headless Chromium on a full matrix (every endpoint of the kit, a column for each of many behaviours)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from browser import chromium, decode_png
from ctk.catalog import ENDPOINTS
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Status, Verdict
from ctk.reporting.conformance import write_conformance
from ctk.reporting.model import RunReport

pytestmark = pytest.mark.chromium   # skipped where there is no Chromium (tests/conftest.py)

COLUMNS = 40

MEASURE = """<script>
window.addEventListener("load", () => {
  const box = document.querySelector(".scroll"), table = box.querySelector("table.matrix");
  const rows = table.querySelectorAll("tbody th.row"), first = rows[rows.length - 1];
  const boxRight0 = box.getBoundingClientRect().right;
  const heads = [...table.querySelectorAll("thead th")];
  const before = {page: document.documentElement.scrollWidth, window: window.innerWidth,
                  height: box.getBoundingClientRect().height, windowHeight: window.innerHeight,
                  firstColumn: heads[0].getBoundingClientRect().width,
                  visible: heads.slice(1).filter(h => h.getBoundingClientRect().right <= boxRight0).length,
                  box: box.getBoundingClientRect().right, boxWidth: box.clientWidth, table: table.scrollWidth};
  box.scrollLeft = 100000;
  const left = box.getBoundingClientRect().left, cells = first.parentElement.querySelectorAll("td");
  const last = cells[cells.length - 1].getBoundingClientRect();
  const out = {...before, scrolled: box.scrollLeft, rowLeft: first.getBoundingClientRect().left, boxLeft: left,
               lastRight: last.right, boxRight: box.getBoundingClientRect().right};
  const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _full_matrix(tmp_path: Path) -> Path:
    rep = RunReport.begin("http://127.0.0.1:8181")
    behaviours = list(Behaviour)[:COLUMNS]
    for op in ENDPOINTS:
        for i, b in enumerate(behaviours):
            status = (Status.PASS, Status.FAIL, Status.INCONCLUSIVE, Status.UNSUPPORTED)[i % 4]
            rep.add(Verdict("REPLAY-01", status, "x", endpoint=op, behaviour=b,
                            classification="wait-and-replay (409 request_in_progress)"), f"t::{op}-{b}")
    rep.finish()
    return Path(write_conformance(rep, str(tmp_path / "reports"))["html"])


def test_matrix_fits_1400px_with_a_sticky_first_column(tmp_path):
    page = _full_matrix(tmp_path)
    html = page.read_text()
    assert html.count('<th class="row">') >= len(ENDPOINTS)
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", MEASURE + "</body>"))
    dom = chromium(tmp_path, "--window-size=1400,1000", "--dump-dom", "file://" + str(probe))
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = json.loads(re.search(r'<pre id="measure">(.*?)</pre>', dom.stdout, re.S).group(1).replace("&quot;", '"'))
    assert m["window"] == 1400, m
    assert m["page"] <= m["window"], f"the page is wider than the window: {m}"     # nothing cut off at 1400 px
    assert m["box"] <= m["window"], m
    assert m["table"] > m["boxWidth"] and m["scrolled"] > 0, m                      # the matrix scrolls sideways
    assert abs(m["rowLeft"] - m["boxLeft"]) <= 2, f"the endpoint column scrolled away: {m}"   # sticky
    assert m["lastRight"] <= m["boxRight"] + 1, m                                   # the last column reachable
    assert m["height"] <= m["windowHeight"], m               # its sideways scrollbar is on the same screen as its top
    # the endpoint column does not eat the window (a path on one line made it 408 px, 9 behaviours in view)
    assert m["firstColumn"] <= 220 and m["visible"] >= 12, m

    # the screenshot at 1400 px: a real page (and what a reader sees, for a person to look at)
    png = tmp_path / "matrix.png"
    shot = chromium(tmp_path, "--window-size=1400,1000", f"--screenshot={png}", "file://" + str(page))
    assert png.exists(), shot.stderr[-2000:]
    width, _height, rows = decode_png(png.read_bytes(), every=10)
    assert width == 1400 and len({px for row in rows for px in row}) > 20
