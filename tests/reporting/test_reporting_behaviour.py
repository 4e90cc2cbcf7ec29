"""The behaviour profile (ctk.reporting.behaviour): rows computed from verdicts, the `behaviour_profile` object
of conformance.json, its section of conformance.html (rendered in headless Chromium, with a screenshot), and
its rows in `ctk report`."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ctk.checks import CheckContext, CheckOptions, run_endpoint_checks, run_global_checks
from ctk.core import requirements as rq
from ctk.core.verdicts import Verdict
from ctk.client.transport import CatalogClient
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.reporting.behaviour import ROWS, behaviour_profile, infer_profile, render_section
from ctk.reporting.compare import load_runs, render_matrix
from ctk.reporting.conformance import write_conformance
from ctk.reporting.html import page
from ctk.reporting.model import RunReport
from ctk.client.config import TargetConfig


def _v(rid, status, cls=None, ep="updateTable", details=None, exchanges=()):
    d = Verdict(rid, rq.Status if False else status, "m", endpoint=ep, behaviour="finalized-duplicate", classification=cls)
    out = {**Verdict.ok(rid).to_dict(), "status": status, "classification": cls, "endpoint": ep,
           "details": details or {}, "exchanges": list(exchanges)}
    return out if d else out


EX = {"method": "POST", "url": "http://127.0.0.1:1/v1/namespaces/db/tables/t", "status": 409,
      "request_headers": {"Idempotency-Key": "0190f1e2-3a4b-7c5d-8e9f-0a1b2c3d4e5f"},
      "response_body": '{"error":{"type":"RequestInProgressException","code":409}}',
      "label": "duplicate while the first is in flight"}


def test_rows_say_what_was_observed_with_the_exchange():
    results = [
        _v("INFLIGHT-01", "pass", "plain 409", exchanges=[{**EX, "label": "fault: delay"}, EX]),
        _v("PAYLOAD-01", "pass", "undetected", details={"rule_broken": True,
                                                        "profiles": {"spec": "pass", "design": "deviation"}}),
        _v("SCOPE-01", "pass", "per operation and resource"),
        _v("REPLAY-02", "pass", "replayed 409"), _v("REPLAY-03", "pass", "executed"),
        _v("REPLAY-05", "pass", "stored original"),
        _v("KEY-01", "pass", "400", ep="createNamespace", details={"accepted": "UUIDv7 only; upper-case hex accepted"}),
        _v("DISC-01", "pass", "advertised", ep=None, details={"lifetime_raw": "PT30M"}),
        _v("DISC-02", "pass", "top-level", ep=None), _v("DISC-03", "pass", "parseable", ep=None,
                                                         details={"lifetime_raw": "PT30M", "java_parseable": True}),
        _v("REPLAY-01", "pass", "replayed", ep="createTable", details={"replay_headers": {"idempotent-replayed": "true"}}),
        _v("REPLAY-01", "fail", "re-executed", ep="planTableScan"),
        _v("REPLAY-01", "unsupported", None, ep="dropView"),
    ]
    bp = behaviour_profile(results)
    rows = {r["id"]: r for r in bp["rows"]}
    assert [r["id"] for r in bp["rows"]] == [r for r, _, _ in ROWS]
    assert rows["in-flight"]["observed"] == "409 without subtype"
    assert "RequestInProgressException" in rows["in-flight"]["exchange"]
    assert "[duplicate while the first is in flight]" in rows["in-flight"]["exchange"]
    assert "Idempotency-Key 0190f1e2" in rows["in-flight"]["exchange"]
    assert rows["payload-mismatch"]["observed"] == "replays the first"
    assert rows["key-scope"]["observed"] == "per operation and resource"
    assert rows["terminal-4xx"]["observed"] == "replayed" and rows["5xx"]["observed"].startswith("not stored")
    assert rows["replay"]["observed"] == "the stored original answer"
    assert rows["key-formats"]["observed"] == "UUIDv7 only; upper-case hex accepted"
    assert rows["lifetime"]["observed"] == "lifetime PT30M; placement: top-level; a Java client parses it"
    assert rows["endpoints"]["observed"] == "honoured on 1: createTable; NOT honoured on 1: planTableScan"
    assert rows["replay-headers"]["observed"] == "idempotent-replayed: true"
    assert bp["profile"] == "spec" and bp["other_profile"] == "design"
    assert bp["differences"] == [{"requirement": "PAYLOAD-01", "endpoint": "updateTable", "behaviour": None,
                                  "status": "pass", "other_status": "deviation", "classification": "undetected"}]


def test_nothing_observed_is_said_so_and_mixed_answers_name_their_endpoints():
    bp = behaviour_profile([_v("INFLIGHT-01", "pass", "wait-and-replay", ep="createTable"),
                            _v("INFLIGHT-01", "pass", "plain 409", ep="updateTable"),
                            _v("PAYLOAD-01", "inconclusive", "x")])
    rows = {r["id"]: r for r in bp["rows"]}
    assert rows["in-flight"]["observed"] == "waits and replays (createTable); 409 without subtype (updateTable)"
    assert rows["payload-mismatch"]["observed"] == "not observed" and rows["payload-mismatch"]["exchange"] == ""


def test_the_profile_a_run_was_judged_by_is_read_back_from_its_verdicts():
    broken = {"rule_broken": True, "profiles": {"spec": "pass", "design": "deviation"}}
    assert infer_profile([_v("SCOPE-01", "deviation", details=broken)]) == "design"
    assert infer_profile([_v("SCOPE-01", "pass", details=broken)]) == "spec"
    assert infer_profile([_v("REPLAY-01", "fail", details={"profiles": {"spec": "fail", "design": "fail"}})]) is None
    assert behaviour_profile([_v("SCOPE-01", "deviation", details=broken)])["profile"] == "design"


def test_section_escapes_what_the_target_sent():
    bad = {**EX, "response_body": "<script>alert(1)</script>"}
    text = render_section(behaviour_profile([_v("INFLIGHT-01", "pass", "plain 409", exchanges=[bad])]))
    assert "<script>" not in text and "&lt;script&gt;" in text


# --- a real run: the kit against a variant of the reference catalog ----------------------------------------

@pytest.fixture(scope="module")
def variant_run(tmp_path_factory):
    """The kit's checks on updateTable against `ctk serve --variant inflight-409-plain` (plus the global ones)."""
    tmp = tmp_path_factory.mktemp("bp")
    with ReferenceServer(ReferenceSettings(warehouse=str(tmp / "wh"), control_api=True, variant="inflight-409-plain",
                                           idempotency_lifetime="PT3S", idempotency_grace="PT0S")) as srv:
        with CatalogClient(TargetConfig(srv.url, timeout=20)) as client:
            ctx = CheckContext.create(client, options=CheckOptions(max_wait=6, lose_modes=("503",)))
            verdicts = run_global_checks(ctx) + run_endpoint_checks(ctx, "updateTable")
    rep = RunReport.begin(srv.url, name="reference (variant: inflight-409-plain)")
    for v in verdicts:
        rep.add(v, f"suites/test_idempotency.py::test[{v.endpoint}-{v.behaviour}]", 0.1)
    rep.finish()
    paths = write_conformance(rep, str(tmp / "reports"))
    return tmp, rep, paths


def test_conformance_json_carries_the_behaviour_profile(variant_run):
    _, _, paths = variant_run
    doc = json.loads(open(paths["json"], encoding="utf-8").read())
    bp = doc["behaviour_profile"]
    rows = {r["id"]: r for r in bp["rows"]}
    assert rows["in-flight"]["observed"] == "409 without subtype" and "409" in rows["in-flight"]["exchange"]
    assert rows["payload-mismatch"]["observed"] == "rejects with 422"
    assert rows["lifetime"]["observed"].endswith("expires at the lifetime")
    assert {(d["requirement"], d["status"], d["other_status"]) for d in bp["differences"]} >= {
        ("INFLIGHT-02", "pass", "deviation"), ("LIFE-03", "pass", "deviation")}
    assert doc["counts"]["fail"] == 0 and doc["counts"]["deviation"] == 0


def test_ctk_report_has_behaviour_rows_per_run(variant_run, tmp_path):
    tmp, rep, paths = variant_run
    other = tmp_path / "again" / "conformance.json"
    other.parent.mkdir()
    other.write_text(open(paths["json"], encoding="utf-8").read())
    text = render_matrix(load_runs([paths["json"], str(other)]), str(tmp_path))
    assert "<h2>Behaviour profile</h2>" in text and text.count("409 without subtype") >= 2


@pytest.mark.chromium   # skipped where there is no Chromium (tests/conftest.py)
def test_behaviour_section_in_headless_chromium(variant_run):
    from browser import chromium, decode_png

    tmp, rep, paths = variant_run
    # the section alone, with the report's styles, for the screenshot; the full page for the DOM
    alone = tmp / "behaviour.html"
    alone.write_text(page("Behaviour profile", render_section(behaviour_profile(rep.results))), encoding="utf-8")
    png = tmp / "behaviour.png"
    shot = chromium(tmp, f"--screenshot={png}", "file://" + str(alone))
    assert png.exists(), shot.stderr[-2000:]
    width, height, rows = decode_png(png.read_bytes(), every=4)
    assert (width, height) == (1400, 2000)
    dark = [y for y, row in enumerate(rows) if sum(1 for px in row if max(px) < 100) > 3]
    assert len(dark) > 40, "the screenshot shows (nearly) no text"
    shutil.copy(png, os.path.join(os.path.dirname(paths["html"]), "behaviour.png"))
    dom = chromium(tmp, "--dump-dom", "file://" + os.path.abspath(paths["html"]))
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'id="behaviour-profile"' in html and "Behaviour profile" in html
    for row_id, title, _ in ROWS:
        assert f'id="bp-{row_id}"' in html, row_id
    assert "409 without subtype" in html and "Where the design profile differs" in html
    assert "<script>" not in html
