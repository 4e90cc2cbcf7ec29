"""The kit validated against the upstream OpenAPI document (../shared/reference/), as CI runs it.

Expected there: no failure; the only SCHEMA-01 deviations are the 422 of a key reused with another payload
(the design document's rule, which the merged spec does not declare). Bare-ErrorModel view errors of the
upstream document are read as wrapped (ctk.openapi.normalize_error_responses), and its PrimitiveTypeValue
oneOf, which no integer or string satisfies, as anyOf (ctk.openapi.normalize_primitive_value): GEN-01 drives
the scan-planning mutations too, whose answers carry partition values and column bounds."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctk.openapi import load_spec

UPSTREAM = Path(os.environ.get("CTK_UPSTREAM_SPEC", Path(__file__).resolve().parents[3] / "shared" / "reference"
                               / "iceberg-rest-catalog-open-api.yaml"))
pytestmark = pytest.mark.skipif(not UPSTREAM.is_file(), reason=f"upstream spec not present at {UPSTREAM}")


def test_upstream_view_errors_read_as_wrapped():
    spec = load_spec(UPSTREAM)
    assert "POST /v1/{prefix}/namespaces/{namespace}/views 409" in spec.normalized


def test_upstream_primitive_value_read_as_any_of():
    spec = load_spec(UPSTREAM)
    assert any("PrimitiveTypeValue" in n for n in spec.normalized)
    node = spec.document["components"]["schemas"]["PrimitiveTypeValue"]
    assert "oneOf" not in node and len(node["anyOf"]) >= 10


def test_kit_against_upstream_spec(tmp_path):
    reports = tmp_path / "reports"
    proc = subprocess.run([sys.executable, "-m", "pytest", "--ctk", "-q", "-p", "no:cacheprovider",
                           "--openapi-spec", str(UPSTREAM), "--ctk-reports", str(reports),
                           "-k", "schema or generated"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    results = json.loads((reports / "conformance.json").read_text())["results"]
    assert {r["requirement"] for r in results} >= {"SCHEMA-01", "GEN-01", "GEN-02"}
    driven = {r.get("endpoint") for r in results if r["requirement"] == "GEN-01" and r["status"] == "pass"}
    assert driven >= {"planTableScan", "cancelPlanning", "fetchScanTasks"}, driven
    assert not [r for r in results if r["status"] == "fail"]
    for r in results:
        if r["status"] == "deviation":
            assert r["requirement"] == "SCHEMA-01", r["message"][:500]
            lines = [ln for ln in r["message"].splitlines() if " -> " in ln]
            assert lines and all("status 422 is not declared" in ln for ln in lines), r["message"][:1500]
