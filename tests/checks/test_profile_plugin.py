"""--ctk-profile through the plugin: the same behaviour of the same target (the reference catalog's
payload-unchecked variant: the same key with another payload replays the first answer; payload-400: it is
refused with 400, as Lakekeeper does, nothing executed) passes under the spec profile, which does not state the
rule, and is a deviation under the design profile (422 for another payload); conformance.json says so in both
runs and carries the behaviour profile."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings

pytestmark = pytest.mark.timeout(300)


# variant -> (PAYLOAD-01's classification, the behaviour profile's payload-mismatch row)
SEEN = {"payload-unchecked": ("undetected", "replays the first"), "payload-400": ("400", "rejects with 400")}


@pytest.fixture(scope="module", params=list(SEEN))
def variant_url(request, tmp_path_factory):
    wh = tmp_path_factory.mktemp("wh")
    with ReferenceServer(ReferenceSettings(warehouse=str(wh), control_api=True, variant=request.param)) as srv:
        srv.variant = request.param
        yield srv


@pytest.mark.parametrize("profile,status", [(None, "pass"), ("spec", "pass"), ("design", "deviation")])
def test_profile_decides_the_verdict_of_the_same_behaviour(variant_url, tmp_path, profile, status):
    classification, observed = SEEN[variant_url.variant]
    variant_url = variant_url.url
    reports = tmp_path / "rep"
    cmd = [sys.executable, "-m", "pytest", "--catalog-url", variant_url, "--ctk-reports", str(reports),
           "-p", "no:cacheprovider", "-p", "no:randomly", "-k", "updateTable-payload-mismatch", "-q"]
    if profile:
        cmd += ["--ctk-profile", profile]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    data = json.loads((reports / "conformance.json").read_text())
    [v] = [r for r in data["results"] if r["requirement"] == "PAYLOAD-01"]
    assert v["status"] == status, proc.stdout[-3000:]
    assert v["classification"] == classification and v["level"] == ("SHOULD" if profile == "design" else "CLASSIFIED")
    assert v["details"]["profiles"] == {"spec": "pass", "design": "deviation"}
    row = {r["id"]: r for r in data["behaviour_profile"]["rows"]}["payload-mismatch"]
    assert row["observed"] == observed and "same key, other payload" in row["exchange"]
    assert data["behaviour_profile"]["profile"] == (profile or "spec")
    assert proc.returncode == 0, proc.stdout[-3000:]      # a deviation fails nothing without --ctk-strict
