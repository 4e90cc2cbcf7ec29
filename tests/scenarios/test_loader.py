"""Scenario files: the built-in ones load; bad ones give errors naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ctk.scenarios.loader import ScenarioError, load_data, load_dir, load_file

ROOT = Path(__file__).resolve().parents[2]

GOOD = {
    "name": "ok",
    "requirement": "REPLAY-01",
    "endpoint": "createNamespace",
    "steps": [
        {"request": {"method": "POST", "path": "namespaces", "body": {"namespace": ["{ns}", "{child}"]}, "key": "new"},
         "save": "first", "expect": {"status": [200]}},
        {"request": {"method": "POST", "path": "namespaces", "key": "same"}, "expect": {"same_body_as": "first"}},
        {"observe": "namespace_exists", "args": {"namespace": ["{ns}", "{child}"]}, "expect": {"value": True}},
    ],
}


def test_builtin_scenarios_load():
    scenarios = load_dir(ROOT / "scenarios")
    assert len(scenarios) >= 6
    assert {s.requirement for s in scenarios} >= {"REPLAY-01", "REPLAY-02", "REPLAY-04"}
    assert {s.endpoint for s in scenarios} >= {"createNamespace", "updateProperties", "createTable"}


def test_good_loads():
    [sc] = load_data(GOOD, "good.yaml")
    assert sc.name == "ok" and [s.kind for s in sc.steps] == ["request", "request", "observe"]
    assert sc.steps[0].spec["key"] == "new" and sc.steps[0].save == "first"


def _bad(mutate):
    import copy

    data = copy.deepcopy(GOOD)
    mutate(data)
    return data


@pytest.mark.parametrize("mutate,needle", [
    (lambda d: d.pop("name"), "(top level): 'name' is missing"),
    (lambda d: d.update(requirement="NOPE-1"), "requirement: unknown requirement id 'NOPE-1'"),
    (lambda d: d["steps"][0]["request"].update(method="FETCH"), "steps[0].request.method: 'FETCH'"),
    (lambda d: d["steps"][0].update(bogus=1), "steps[0]: unknown field(s) ('bogus' was unexpected)"),
    (lambda d: d["steps"][0]["request"].update(key="same"), "steps[0].request.key: 'same' needs an earlier"),
    (lambda d: d["steps"][2].pop("args"), "steps[2].args: query 'namespace_exists' needs namespace"),
    (lambda d: d["steps"][1]["expect"].update(same_body_as="nothing"), "steps[1].expect.same_body_as: no earlier"),
    (lambda d: d["steps"][0]["expect"].update(status=[999]), "steps[0].expect.status"),
    (lambda d: d["steps"].append({"fault": {"action": "lose_answer"}}), "steps[3].fault: a fault applies to the next"),
    (lambda d: d["steps"].append({"wait": 1, "observe": "table_exists"}), "steps[3]: a step needs exactly one"),
    (lambda d: d["steps"].append({"observe": "no_such_query", "args": {}}), "steps[3].observe"),
    (lambda d: d.update(steps=[]), "steps: [] should be non-empty"),
])
def test_bad_scenarios_name_the_field(mutate, needle):
    with pytest.raises(ScenarioError) as info:
        load_data(_bad(mutate), "scenarios/bad.yaml")
    msg = str(info.value)
    assert msg.startswith("scenarios/bad.yaml"), msg
    assert needle in msg, msg


def test_bad_yaml_and_shapes(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(ScenarioError, match=r"broken.yaml: not valid YAML"):
        load_file(p)
    p.write_text("- just\n- a list\n")
    with pytest.raises(ScenarioError, match=r"broken.yaml: a scenario file must hold a mapping"):
        load_file(p)
    p.write_text(yaml.safe_dump({"scenarios": [GOOD, GOOD]}))
    with pytest.raises(ScenarioError, match=r"scenarios\[1\]\.name: duplicate scenario name 'ok'"):
        load_file(p)


def test_bad_file_is_a_collection_error(pytester: pytest.Pytester):
    d = pytester.mkdir("scen")
    (d / "good.yaml").write_text(yaml.safe_dump(GOOD))
    (d / "bad.yaml").write_text(yaml.safe_dump(_bad(lambda x: x["steps"][0]["request"].update(method="FETCH"))))
    result = pytester.runpytest("--ctk", "--ctk-scenarios", str(d), "scen", "--collect-only", "-p", "no:html")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "ERROR collecting scen/bad.yaml" in out
    assert "bad.yaml: steps[0].request.method: 'FETCH' is not one of" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("field,value,needle,known", [
    ("behaviour", "committed-lost", "behaviour: unknown behaviour 'committed-lost'", "lost-answer-drop"),
    ("behaviour", "terminal-4xx", "behaviour: unknown behaviour 'terminal-4xx'", "terminal-4xx-replayed"),
    ("requirement", "REPLAY-99", "requirement: unknown requirement id 'REPLAY-99'", "REPLAY-04"),
])
def test_unknown_vocabulary_names_file_field_and_known_names(tmp_path, field, value, needle, known):
    """A behaviour or requirement the registry does not know: the error names the file, the scenario and the
    field, and lists every known name (ctk.core.behaviours / ctk.core.requirements)."""
    from ctk.core.behaviours import known_names
    from ctk.core.requirements import REQUIREMENTS

    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"scenarios": [{**GOOD, "name": "a"}, {**GOOD, "name": "b", field: value}]}))
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    text = str(info.value)
    assert text.startswith(f"{path}: scenario 'b': scenarios[1].{needle}"), text
    names = known_names() if field == "behaviour" else list(REQUIREMENTS)
    assert f"(known: {', '.join(names)})" in text and known in names


def test_scenario_behaviour_is_the_registered_member():
    from ctk.core.behaviours import Behaviour

    [sc] = load_data({**GOOD, "behaviour": "finalized-duplicate"}, "good.yaml")
    assert sc.behaviour is Behaviour.FINALIZED_DUPLICATE
    [sc] = load_data(GOOD, "good.yaml")
    assert sc.behaviour is None


def test_builtin_scenarios_use_registered_behaviours():
    from ctk.core.behaviours import Behaviour

    scenarios = load_dir(ROOT / "scenarios")
    assert all(isinstance(s.behaviour, Behaviour) for s in scenarios)
    lost = [s for s in scenarios if s.requirement == "REPLAY-04"]
    assert lost and {s.behaviour for s in lost} == {Behaviour.LOST_ANSWER_DROP}
