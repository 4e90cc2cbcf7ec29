"""Load and validate scenario files (format: ctk/scenarios/schema.py). Errors name the file and the field."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from ctk.core.behaviours import Behaviour
from ctk.core.requirements import REQUIREMENTS
from ctk.core.yamlfile import read_yaml
from ctk.scenarios.schema import QUERIES, SCENARIO_SCHEMA, STEP_KINDS

_VALIDATOR = Draft202012Validator(SCENARIO_SCHEMA)


class ScenarioError(ValueError):
    """A scenario file is not valid: the message names the file and the offending field."""


@dataclass
class Step:
    kind: str                       # request | fault | wait | observe | clear_faults
    spec: Any                       # the value under the kind key
    args: dict[str, Any] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    save: str | None = None
    label: str | None = None
    index: int = 0
    phase: str = "steps"            # "setup" or "steps"

    @property
    def where(self) -> str:
        return f"{self.phase}[{self.index}]"


@dataclass
class Scenario:
    name: str
    requirement: str
    endpoint: str
    steps: list[Step]
    setup: list[Step] = field(default_factory=list)
    behaviour: Behaviour | None = None     # matrix column: a registered name (ctk.core.behaviours)
    description: str | None = None
    requires: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def test_name(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.name).strip("_") or "scenario"


def _field_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def load_file(path: str | Path) -> list[Scenario]:
    path = Path(path)
    data = read_yaml(path, ScenarioError, unreadable="{path}: cannot read: {exc}",
                     invalid="{path}: not valid YAML: {exc}")
    return load_data(data, str(path))


def load_data(data: Any, source: str = "<scenario>") -> list[Scenario]:
    if isinstance(data, dict) and set(data) == {"scenarios"}:
        items = data["scenarios"]
        if not isinstance(items, list) or not items:
            raise ScenarioError(f"{source}: field 'scenarios' must be a non-empty list of scenarios")
        prefix = lambda i: f"scenarios[{i}]."  # noqa: E731
    elif isinstance(data, dict):
        items = [data]
        prefix = lambda i: ""  # noqa: E731
    else:
        raise ScenarioError(f"{source}: a scenario file must hold a mapping (a scenario) or "
                            f"'scenarios: [...]', not {type(data).__name__}")
    out: list[Scenario] = []
    names: set[str] = set()
    for i, item in enumerate(items):
        sc = _load_one(item, source, prefix(i))
        if sc.test_name in names:
            raise ScenarioError(f"{source}: {prefix(i)}name: duplicate scenario name {sc.name!r}")
        names.add(sc.test_name)
        out.append(sc)
    return out


def _load_one(item: Any, source: str, prefix: str) -> Scenario:
    if not isinstance(item, dict):
        raise ScenarioError(f"{source}: {prefix or '(top level)'}: a scenario must be a mapping")
    errors = sorted(_VALIDATOR.iter_errors(item), key=lambda e: (len(list(e.absolute_path)), list(map(str, e.absolute_path))))
    if errors:
        e = _deepest(errors)
        where = prefix + _field_path(e.absolute_path)
        raise ScenarioError(f"{source}: {where}: {_message(e)}")
    name = item["name"]
    label = f"{source}: scenario {name!r}: "
    if item["requirement"] not in REQUIREMENTS:
        raise ScenarioError(f"{label}{prefix}requirement: unknown requirement id {item['requirement']!r} "
                            f"(known: {', '.join(REQUIREMENTS)})")
    behaviour = item.get("behaviour")
    if behaviour is not None:
        try:
            behaviour = Behaviour.parse(behaviour, f"{label}{prefix}behaviour")
        except ValueError as exc:
            raise ScenarioError(str(exc)) from None
    saved: set[str] = set()
    have_key = [False]
    setup = [_step(s, i, "setup", label + prefix, saved, have_key) for i, s in enumerate(item.get("setup") or [])]
    steps = [_step(s, i, "steps", label + prefix, saved, have_key) for i, s in enumerate(item["steps"])]
    pending = None
    for st in setup + steps:
        if st.kind == "fault":
            pending = st
        elif st.kind == "request":
            pending = None
    if pending is not None:
        raise ScenarioError(f"{label}{prefix}{pending.where}.fault: a fault applies to the next request step, "
                            "and none follows")
    return Scenario(name=name, requirement=item["requirement"], endpoint=item["endpoint"], steps=steps,
                    setup=setup, behaviour=behaviour, description=item.get("description"),
                    requires=list(item.get("requires") or []), source=source)


def _deepest(errors):
    # oneOf/anyOf errors: report the most specific sub-error
    best = errors[-1]
    while best.context:
        best = sorted(best.context, key=lambda e: len(list(e.absolute_path)))[-1]
    return best


def _message(e) -> str:
    if e.validator == "additionalProperties":
        return e.message.replace("Additional properties are not allowed", "unknown field(s)")
    if e.validator == "required":
        return e.message.replace("is a required property", "is missing (required)")
    return e.message


def _step(raw: dict[str, Any], index: int, phase: str, label: str, saved: set[str], have_key: list[bool]) -> Step:
    where = f"{label}{phase}[{index}]"
    kinds = [k for k in STEP_KINDS if k in raw]
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none"
        raise ScenarioError(f"{where}: a step needs exactly one of {', '.join(STEP_KINDS)} (found: {found})")
    kind = kinds[0]
    step = Step(kind=kind, spec=raw[kind], args=dict(raw.get("args") or {}), expect=dict(raw.get("expect") or {}),
                save=raw.get("save"), label=raw.get("label"), index=index, phase=phase)
    if kind == "request":
        key = step.spec.get("key", "none")
        if key == "same" and not have_key[0]:
            raise ScenarioError(f"{where}.request.key: 'same' needs an earlier request with key: new")
        if key not in ("none", "same"):
            have_key[0] = True
        for ref in ("same_body_as", "same_status_as"):
            if ref in step.expect and step.expect[ref] not in saved:
                raise ScenarioError(f"{where}.expect.{ref}: no earlier step saved as {step.expect[ref]!r}")
        bad = {"value", "value_in", "at_least", "at_most", "delta_from"} & set(step.expect)
        if bad:
            raise ScenarioError(f"{where}.expect: {', '.join(sorted(bad))} only apply to observe steps")
    elif kind == "observe":
        missing = [a for a in QUERIES[step.spec] if a not in step.args]
        if missing:
            raise ScenarioError(f"{where}.args: query {step.spec!r} needs {', '.join(missing)}")
        if step.spec == "property" and step.args.get("kind") == "table" and "table" not in step.args:
            raise ScenarioError(f"{where}.args: a table property needs table")
        bad = {"status", "body", "same_body_as", "same_status_as", "subtype"} & set(step.expect)
        if bad:
            raise ScenarioError(f"{where}.expect: {', '.join(sorted(bad))} only apply to request steps")
        if "delta_from" in step.expect and step.expect["delta_from"] not in saved:
            raise ScenarioError(f"{where}.expect.delta_from: no earlier step saved as {step.expect['delta_from']!r}")
    elif step.expect:
        raise ScenarioError(f"{where}.expect: a {kind} step has nothing to expect")
    if step.save:
        saved.add(step.save)
    return step


def load_dir(directory: str | Path) -> list[Scenario]:
    out: list[Scenario] = []
    for p in sorted(Path(directory).glob("*.y*ml")):
        out += load_file(p)
    return out
