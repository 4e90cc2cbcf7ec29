"""The "catalog semantics and capabilities" section of conformance.html as a reader sees it in Chromium: near the
top (above the endpoint matrix), each area with its outcome, each capability with where the kit learnt it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from browser import chromium, decode_png, measured
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Status, Verdict
from ctk.plugin.options import CtkOptions
from ctk.plugin.reports import VerdictCollector
from ctk.reporting.conformance import write_conformance

MEASURE = """<script>
window.addEventListener("load", () => {
  const sec = document.querySelector("#catalog-capabilities");
  const matrix = document.querySelector("table.matrix");
  const rows = sel => [...sec.querySelectorAll(sel + " tr")].slice(1).map(
    tr => [...tr.querySelectorAll("td")].map(td => td.innerText.trim()));
  const r = sec.getBoundingClientRect();
  const out = {top: r.top, height: r.height, matrixTop: matrix ? matrix.getBoundingClientRect().top : null,
               areas: rows("table.areas"), caps: rows("table.capabilities")};
  const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _collector() -> VerdictCollector:
    known = {"views": {"supported": False, "source": "config", "why": "createView is not in the endpoints list"},
             "pagination": {"supported": True, "source": "probe", "why": "pageSize 1 answered one of two tables"}}
    verdicts = [
        Verdict.ok("NS-06", "dropped and gone", endpoint="dropNamespace", behaviour=Behaviour.CATALOG_NAMESPACES),
        Verdict("TBL-08", Status.FAIL, "dropTable answered 204; the table still loads", endpoint="dropTable",
                behaviour=Behaviour.CATALOG_TABLES),
        Verdict.ok("LIST-02", "every item once", endpoint="listTables", behaviour=Behaviour.CATALOG_LISTING,
                   details={"capabilities": {"pagination": known["pagination"]}}),
        Verdict.unsupported("VIEW-01", "the catalog does not support views", endpoint="createView",
                            behaviour=Behaviour.CATALOG_VIEWS, details={"capabilities": {"views": known["views"]}}),
        Verdict.ok("REPLAY-01", "replayed", endpoint="createNamespace", behaviour=Behaviour.FINALIZED_DUPLICATE),
    ]
    c = VerdictCollector(CtkOptions())
    c.results = [(v.to_dict(), f"t::{i}", 0.1, "passed") for i, v in enumerate(verdicts)]
    c.discovery = SimpleNamespace(lifetime=None, lifetime_raw=None, lifetime_error=None, misplaced_in=None,
                                  java_parseable=None, endpoints=None, idempotency_supported=True)
    c.build()
    return c


@pytest.mark.chromium
def test_the_capabilities_section_reads_right_in_chromium(tmp_path):
    c = _collector()
    page = Path(write_conformance(c.report, str(tmp_path / "reports"))["html"])
    m = measured(tmp_path, page, MEASURE)
    assert m["height"] > 50 and (m["matrixTop"] is None or m["top"] < m["matrixTop"]), m
    assert [row[:2] for row in m["areas"]] == [["namespaces", "pass"], ["tables", "fail"], ["listing", "pass"],
                                              ["views", "not applicable"]], m["areas"]
    assert ["pagination", "yes", "probe", "pageSize 1 answered one of two tables"] in m["caps"], m["caps"]
    assert ["views", "no", "config", "createView is not in the endpoints list"] in m["caps"], m["caps"]
    terminal = [text for text, _ in c.final_lines(1)]
    assert "catalog semantics: namespaces pass, tables fail, listing pass, views not applicable" in terminal
    png = tmp_path / "page.png"
    shot = chromium(tmp_path, "--window-size=1400,1000", f"--screenshot={png}", "file://" + str(page))
    assert png.exists(), shot.stderr[-2000:]
    width, _height, rows = decode_png(png.read_bytes(), every=10)
    assert width == 1400 and len({px for row in rows for px in row}) > 20
