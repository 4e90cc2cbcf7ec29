"""Scenario runner against the reference catalog: the built-in scenarios pass on it and fail under the
deviation profile that breaks their requirement; missing capabilities give unsupported."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status
from ctk.scenarios.loader import load_data, load_dir
from ctk.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = {s.name: s for s in load_dir(ROOT / "scenarios")}


def test_builtin_scenarios_pass_on_reference(make_session):
    session = make_session()
    results = {name: run_scenario(sc, session) for name, sc in BUILTIN.items()}
    bad = {n: (v.status, v.message) for n, v in results.items() if v.status is not Status.PASS}
    assert not bad, bad
    # executions really happened in the run namespace, nothing outside it
    assert all(v.exchanges for v in results.values())


@pytest.mark.parametrize("deviation,requirement", [
    ("no-replay", "REPLAY-01"),
    ("terminal-4xx-not-stored", "REPLAY-02"),
    ("no-replay", "REPLAY-04"),
])
def test_builtin_scenarios_catch_deviations(make_session, deviation, requirement):
    session = make_session(deviation=deviation)
    chosen = [sc for sc in BUILTIN.values() if sc.requirement == requirement]
    assert chosen
    for sc in chosen:
        v = run_scenario(sc, session)
        # caught with the level's verdict (REPLAY-02 is SHOULD: the finalization rules carry no RFC 2119 word)
        assert v.status.value == status_if_broken(requirement) != "pass", (sc.name, v.status, v.message)
        assert v.requirement == requirement and v.endpoint == sc.endpoint
        assert v.exchanges  # the failure carries its HTTP exchanges


def test_unsupported_without_idempotency(make_session):
    session = make_session(lifetime=None, control_api=False)
    sc = BUILTIN["createNamespace committed but the answer was lost"]
    v = run_scenario(sc, session)
    assert v.status is Status.UNSUPPORTED and "idempotency-key-lifetime" in v.message


def test_setup_mismatch_is_inconclusive_and_check_mismatch_breaks(make_session):
    session = make_session()
    [setup_bad] = load_data({
        "name": "s", "requirement": "KEY-01", "endpoint": "createNamespace",
        "setup": [{"request": {"method": "GET", "path": "namespaces/{ns}%1Fmissing_{uid}"}, "expect": {"status": 200}}],
        "steps": [{"wait": 0}],
    })
    v = run_scenario(setup_bad, session)
    assert v.status is Status.INCONCLUSIVE and "expected status 200, got 404" in v.message
    [check_bad] = load_data({
        "name": "c", "requirement": "KEY-01", "endpoint": "createNamespace",
        "steps": [{"request": {"method": "POST", "path": "namespaces", "body": {"namespace": ["{ns}", "{child}"]}},
                   "expect": {"status": 200, "body": {"namespace": ["{ns}", "wrong"]}}}],
    })
    v = run_scenario(check_bad, session)
    assert v.status is Status.DEVIATION  # KEY-01 is a SHOULD
    assert "expected body field namespace" in v.message


def test_wait_longer_than_max_wait_is_unsupported(make_session):
    session = make_session()
    [sc] = load_data({"name": "w", "requirement": "LIFE-01", "endpoint": "createNamespace", "steps": [{"wait": 99}]})
    v = run_scenario(sc, session)
    assert v.status is Status.UNSUPPORTED and "--ctk-max-wait" in v.message


def test_observe_delta_and_metadata_log(make_session):
    session = make_session()
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    [sc] = load_data({
        "name": "d", "requirement": "REPLAY-01", "endpoint": "updateTable",
        "setup": [{"request": {"method": "POST", "path": "namespaces/{ns}/tables",
                               "body": {"name": "{table}", "schema": schema}}, "expect": {"status": 200}}],
        "steps": [
            {"observe": "metadata_log_length", "args": {"namespace": ["{ns}"], "table": "{table}"}, "save": "before"},
            {"request": {"method": "POST", "path": "namespaces/{ns}/tables/{table}",
                         "body": {"requirements": [], "updates": [{"action": "set-properties",
                                                                   "updates": {"k": "v"}}]}},
             "expect": {"status": 200}},
            {"observe": "metadata_log_length", "args": {"namespace": ["{ns}"], "table": "{table}"},
             "expect": {"delta_from": "before", "value": 1}},
            {"observe": "property", "args": {"kind": "table", "namespace": ["{ns}"], "table": "{table}", "key": "k"},
             "expect": {"value": "v"}},
        ],
    })
    v = run_scenario(sc, session)
    assert v.status is Status.PASS, v.message
