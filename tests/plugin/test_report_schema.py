"""Issue 29 item 8: conformance.json is a contract. Its JSON schema ships in the package (ctk/data/) and in docs/,
the kit's own reports validate against it, and a report that breaks it is named where it breaks. (Every
conformance.json a test leaves in its tmp_path is validated too: tests/conftest.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from ctk.core.verdicts import Status, Verdict
from ctk.reporting.model import FORMAT, RunReport
from ctk.reporting.report_schema import SCHEMA_PATH, problems, schema

DOCS = Path(__file__).resolve().parents[2] / "docs" / "conformance.schema.json"


def _report() -> dict:
    rep = RunReport.begin("http://127.0.0.1:8181", options={"catalog_url": "http://127.0.0.1:8181"})
    rep.add(Verdict("REPLAY-01", Status.PASS, "replayed", endpoint="createTable", behaviour="finalized-duplicate",
                    classification="replayed"), "test_idempotency.py::test_idempotency[createTable-x]", 0.2)
    rep.add(Verdict("INFLIGHT-02", Status.UNSUPPORTED, "no 409 to inspect", endpoint="createTable"), "t::b", 0.1)
    rep.add(Verdict("KEY-01", Status.FAIL, "accepted a malformed key"), "t::c", 0.1)
    rep.finished_at = rep.started_at
    return json.loads(rep.to_json())


def test_the_schema_is_published_in_the_package_and_docs():
    jsonschema.Draft202012Validator.check_schema(schema())
    assert SCHEMA_PATH.read_bytes() == DOCS.read_bytes()
    assert schema()["properties"]["format"] == {"const": FORMAT}


def test_a_report_of_the_kit_validates():
    data = _report()
    assert data["format"] == "ctk-conformance/1"
    assert problems(data) == []


def test_a_report_that_breaks_the_contract_is_named_where():
    data = _report()
    data["results"][0]["status"] = "passed"            # pytest's word, not a verdict status
    del data["format"]
    data["results"][1]["duration"] = "fast"
    found = problems(data)
    assert any(p.startswith("results/0/status") for p in found), found
    assert any("'format' is a required property" in p for p in found), found
    assert any(p.startswith("results/1/duration") for p in found), found
    other = _report()
    other["format"] = "ctk-conformance/2"
    assert any(p.startswith("format") for p in problems(other))
