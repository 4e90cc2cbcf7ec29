"""Scenarios with the run namespace inside --ctk-parent-namespace: `{ns}` stands for every level, in paths and in
namespace lists, and nothing is created outside the run namespace."""

from __future__ import annotations

from pathlib import Path

import httpx

from ctk.core.verdicts import Status
from ctk.scenarios.loader import load_dir
from ctk.scenarios.runner import fill, placeholders

ROOT = Path(__file__).resolve().parents[2]


def test_ns_placeholder_expands_to_every_level():
    names = placeholders(("bronze", "ctk_r_main"))
    child = names["child"]
    got = fill({"namespace": ["{ns}", "{child}"], "path": "namespaces/{ns}%1F{child}/tables", "alone": "{ns}"}, names)
    assert got == {"namespace": ["bronze", "ctk_r_main", child],
                   "path": f"namespaces/bronze%1Fctk_r_main%1F{child}/tables", "alone": "bronze.ctk_r_main"}
    one = placeholders("ctk_r_main")
    assert fill(["{ns}", "x"], one) == ["ctk_r_main", "x"] and fill("namespaces/{ns}", one) == "namespaces/ctk_r_main"


def test_builtin_scenarios_pass_inside_a_parent_namespace():
    from ctk.plugin.options import CtkOptions
    from ctk.plugin.session import CtkSession
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings
    from ctk.scenarios.runner import run_scenario

    srv = ReferenceServer(ReferenceSettings(control_api=True, idempotency_lifetime="PT4S", idempotency_grace="PT2S"))
    url = srv.start().rstrip("/")
    try:
        assert httpx.post(f"{url}/v1/namespaces", json={"namespace": ["gold"]}, timeout=10).status_code == 200
        session = CtkSession(CtkOptions(catalog_url=url, timeout=5.0, max_wait=10.0, parent_namespace=("gold",)))
        session.start()
        try:
            assert session.error is None, session.error
            results = {s.name: run_scenario(s, session) for s in load_dir(ROOT / "scenarios")}
            bad = {n: (v.status, v.message[:300]) for n, v in results.items() if v.status is not Status.PASS}
            assert not bad, bad
            top = httpx.get(f"{url}/v1/namespaces", timeout=10).json()["namespaces"]
            assert top == [["gold"]], top              # nothing at top level besides the parent
        finally:
            session.stop()
        assert httpx.get(f"{url}/v1/namespaces", params={"parent": "gold"}, timeout=10).json()["namespaces"] == []
    finally:
        srv.stop()


def test_child_becomes_a_registered_sibling_without_nesting():
    from ctk.client.placement import Placement

    placement = Placement(("bronze", "run"), nested=False)
    names = placeholders(("bronze", "run"), placement)
    sib = f"run_{names['child']}"
    got = fill({"namespace": ["{ns}", "{child}"], "path": "namespaces/{ns}%1F{child}/properties",
                "tables": "namespaces/{ns}/tables"}, names)
    assert got == {"namespace": ["bronze", sib], "path": f"namespaces/bronze%1F{sib}/properties",
                   "tables": "namespaces/bronze%1Frun/tables"}
    assert placement.siblings == [("bronze", sib)]
