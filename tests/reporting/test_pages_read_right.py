"""The pages read right (issue 29 item 6), checked as Chromium lays conformance.html out: matrix cells keep their
text inside (long classifications wrap), a column heading says its name once, the advertised endpoints are
grouped by resource and collapsed, the counts of checks use the terminal's words with no result counted under
two names; the behaviour profile cites no unrelated exchange; a JUnit testcase reporting two requirements has
each property name once."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from browser import chromium, decode_png, measured
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Status, Verdict
from ctk.plugin.options import CtkOptions
from ctk.plugin.reports import VerdictCollector
from ctk.reporting.behaviour import behaviour_profile
from ctk.reporting.conformance import write_conformance
from ctk.reporting.html import endpoint_resource
from ctk.reporting.junit import attach_verdict

LONG = ("wait-and-replay (409 request_in_progress)", "per operation (one path for every resource)")
ADVERTISED = [f"{m} /v1/{{prefix}}/{p}" for m, p in (
    ("GET", "namespaces"), ("POST", "namespaces"), ("DELETE", "namespaces/{namespace}"),
    ("POST", "namespaces/{namespace}/properties"), ("GET", "namespaces/{namespace}/tables"),
    ("POST", "namespaces/{namespace}/tables"), ("POST", "namespaces/{namespace}/register"),
    ("POST", "namespaces/{namespace}/tables/{table}/plan"), ("POST", "tables/rename"),
    ("POST", "namespaces/{namespace}/register-view"), ("GET", "namespaces/{namespace}/views/{view}"),
    ("POST", "views/rename"), ("POST", "transactions/commit"), ("GET", "namespaces/{namespace}/functions"))]

MEASURE = """<script>
window.addEventListener("load", () => {
  const matrix = document.querySelector("#matrix-section");
  const folded = !matrix.open;
  matrix.open = true;                        // the matrix is folded: a reader opens it to read its cells
  const spill = [];
  for (const cell of document.querySelectorAll("table.matrix td, table.matrix thead th")) {
    const r = cell.getBoundingClientRect();
    for (const el of [cell, ...cell.querySelectorAll("*")]) {
      const e = el.getBoundingClientRect();
      if (e.right > r.right + 1 || e.left < r.left - 1 || el.scrollWidth > el.clientWidth + 1)
        spill.push(cell.textContent.slice(0, 80));
    }
  }
  const heads = [...document.querySelectorAll("table.matrix thead th[data-behaviour]")].map(
    h => [h.dataset.behaviour, h.innerText]);
  const eps = document.querySelector("#advertised-endpoints");
  const out = {spill, heads, folded, endpointsOpen: eps.open, endpointsHeight: eps.getBoundingClientRect().height,
               groups: [...eps.querySelectorAll("th")].map(t => t.textContent),
               checks: [...document.querySelectorAll("#check-counts .chip")].map(c => c.innerText)};
  const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _collector() -> VerdictCollector:
    c = VerdictCollector(CtkOptions())
    verdicts = []
    for i, b in enumerate(list(Behaviour)[:12]):
        for op in ("createNamespace", "createTable", "updateTable"):
            status = (Status.PASS, Status.FAIL, Status.DEVIATION)[i % 3]
            verdicts.append(Verdict("REPLAY-01", status, "x", endpoint=op, behaviour=b, classification=LONG[i % 2]))
    verdicts += [Verdict.unsupported("PAYLOAD-01", "the operation has no body", endpoint="dropTable"),
                 Verdict.unsupported("DISC-04", "idempotency is advertised")]
    c.results = [(v.to_dict(), f"t::{i}", 0.1, "passed") for i, v in enumerate(verdicts)]
    c.discovery = SimpleNamespace(lifetime=None, lifetime_raw=None, lifetime_error=None, misplaced_in=None,
                                  java_parseable=None, endpoints=ADVERTISED, idempotency_supported=True)
    c.build()
    return c


@pytest.mark.chromium
def test_conformance_page_as_chromium_lays_it_out(tmp_path):
    c = _collector()
    page = Path(write_conformance(c.report, str(tmp_path / "reports"))["html"])
    m = measured(tmp_path, page, MEASURE)
    # no cell's text runs into its neighbour ("409 request_in_progress" stayed on one line past the cell)
    assert m["folded"], "the endpoint x behaviour matrix is folded (issue 35 item 5)"
    assert m["spill"] == [], m["spill"][:5]
    # each heading says the behaviour's name once (the slug is its tooltip)
    assert m["heads"] and all(text.strip() == Behaviour(b).display for b, text in m["heads"]), m["heads"]
    # the advertised endpoints: collapsed, one row per resource
    assert not m["endpointsOpen"] and m["endpointsHeight"] < 60, m
    assert m["groups"] == ["functions (1)", "namespaces (4)", "tables (5)", "transactions (1)", "views (3)"], m
    # the counts of checks in the terminal's words: an unsupported result is counted once, as not applicable
    terminal = c.final_lines(0)[1][0]
    assert "2 not applicable" in terminal and m["checks"].count("NOT APPLICABLE: 2") == 1, (terminal, m["checks"])
    assert not any(chip.startswith("UNSUPPORTED") for chip in m["checks"]), m["checks"]
    for chip in m["checks"]:
        words, n = chip.rsplit(": ", 1)
        assert f"{n} {words.lower().removesuffix(' (pass)')}" in terminal, (chip, terminal)
    png = tmp_path / "page.png"
    shot = chromium(tmp_path, "--window-size=1400,1000", f"--screenshot={png}", "file://" + str(page))
    assert png.exists(), shot.stderr[-2000:]
    width, _height, rows = decode_png(png.read_bytes(), every=10)
    assert width == 1400 and len({px for row in rows for px in row}) > 20


def test_endpoint_resources():
    assert [endpoint_resource(e) for e in ("POST /v1/{prefix}/namespaces/{namespace}/register",
                                           "POST /v1/{prefix}/namespaces/{namespace}/register-view",
                                           "POST /v1/{prefix}/namespaces/{namespace}/properties",
                                           "GET /v1/config")] == ["tables", "views", "namespaces", "config"]


def test_behaviour_profile_cites_no_state_read_as_evidence():
    """A REPLAY-03 verdict that kept only the read-back of state (GET ... -> 404) shows no exchange for "5xx not
    stored"; one that kept the keyed retry is cited instead."""
    read = {"method": "GET", "url": "http://127.0.0.1:1/v1/namespaces/ns", "status": 404,
            "label": "observe: load namespace", "request_headers": {}}
    retry = {"method": "POST", "url": "http://127.0.0.1:1/v1/namespaces", "status": 200, "label": "retry, same key",
             "request_headers": {"Idempotency-Key": "0190f1e2-0000-7000-8000-000000000000"}}
    only_read = Verdict.ok("REPLAY-03", "executed", endpoint="createNamespace", behaviour="5xx-not-stored",
                           classification="executed", exchanges=[read]).to_dict()
    row = {r["id"]: r for r in behaviour_profile([only_read])["rows"]}["5xx"]
    assert row["observed"].startswith("not stored") and row["exchange"] == "", row
    with_retry = {**only_read, "endpoint": "createTable", "exchanges": [retry, read]}
    row = {r["id"]: r for r in behaviour_profile([only_read, with_retry])["rows"]}["5xx"]
    assert "[retry, same key] POST" in row["exchange"] and "GET" not in row["exchange"], row


def test_junit_testcase_of_two_requirements_has_each_property_once():
    item = SimpleNamespace(user_properties=[("other", "kept")])
    attach_verdict(item, Verdict.ok("REPLAY-01", "replayed", endpoint="createTable", behaviour="lost-answer"))
    attach_verdict(item, Verdict("REPLAY-04", Status.FAIL, "executed twice", endpoint="createTable",
                                 behaviour="lost-answer"))
    names = [n for n, _ in item.user_properties]
    assert len(names) == len(set(names)), names
    props = dict(item.user_properties)
    assert props["other"] == "kept" and props["ctk.requirement"] == "REPLAY-01, REPLAY-04"
    assert props["ctk.verdict"] == "fail" and props["ctk.endpoint"] == "createTable"
    assert (props["ctk.verdict.REPLAY-01"], props["ctk.verdict.REPLAY-04"]) == ("pass", "fail")
    one = SimpleNamespace(user_properties=[])
    attach_verdict(one, Verdict.ok("KEY-01", "rejected"))
    assert dict(one.user_properties) == {"ctk.requirement": "KEY-01", "ctk.level": "SHOULD", "ctk.verdict": "pass"}
