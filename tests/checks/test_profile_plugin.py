"""--ctk-profile through the plugin: the same behaviour of the same target (the reference catalog's
payload-unchecked variant: the same key with another payload replays the first answer) passes under the spec
profile, which does not state the rule, and is a deviation under the design profile (422 for another payload);
conformance.json says so in both runs and carries the behaviour profile."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def variant_url(tmp_path_factory):
    wh = tmp_path_factory.mktemp("wh")
    with ReferenceServer(ReferenceSettings(warehouse=str(wh), control_api=True, variant="payload-unchecked")) as srv:
        yield srv.url


@pytest.mark.parametrize("profile,status", [(None, "pass"), ("spec", "pass"), ("design", "deviation")])
def test_profile_decides_the_verdict_of_the_same_behaviour(variant_url, tmp_path, profile, status):
    reports = tmp_path / "rep"
    cmd = [sys.executable, "-m", "pytest", "--catalog-url", variant_url, "--ctk-reports", str(reports),
           "-p", "no:cacheprovider", "-p", "no:randomly", "-k", "updateTable-payload-mismatch", "-q"]
    if profile:
        cmd += ["--ctk-profile", profile]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    data = json.loads((reports / "conformance.json").read_text())
    [v] = [r for r in data["results"] if r["requirement"] == "PAYLOAD-01"]
    assert v["status"] == status, proc.stdout[-3000:]
    assert v["classification"] == "undetected" and v["level"] == ("SHOULD" if profile == "design" else "CLASSIFIED")
    assert v["details"]["profiles"] == {"spec": "pass", "design": "deviation"}
    row = {r["id"]: r for r in data["behaviour_profile"]["rows"]}["payload-mismatch"]
    assert row["observed"] == "replays the first" and "same key, other payload" in row["exchange"]
    assert data["behaviour_profile"]["profile"] == (profile or "spec")
    assert proc.returncode == 0, proc.stdout[-3000:]      # a deviation fails nothing without --ctk-strict
