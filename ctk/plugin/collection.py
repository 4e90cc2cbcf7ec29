"""What the plugin collects when active: its built-in suites (ctk/suites) and scenario files (*.yaml)."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any, Iterator

import pytest

from ctk.plugin.options import CtkOptions, default_scenarios_dir

SUITES_DIR = Path(__file__).resolve().parent.parent / "suites"
SCENARIO_SUFFIXES = (".yaml", ".yml")


def default_args(options: CtkOptions) -> list[str]:
    """The paths the kit runs when the user named none: suites + scenario directory."""
    args = [str(SUITES_DIR)]
    scen = Path(options.scenarios) if options.scenarios else default_scenarios_dir()
    if scen is not None and scen.is_dir():
        args.append(str(scen.resolve()))
    return args


def is_scenario_path(path: Path, options: CtkOptions) -> bool:
    if path.suffix not in SCENARIO_SUFFIXES or path.name.startswith((".", "_")):
        return False
    dirs = [Path(options.scenarios).resolve()] if options.scenarios else []
    default = default_scenarios_dir()
    if default is not None:
        dirs.append(default.resolve())
    resolved = path.resolve()
    if any(d == resolved.parent or d in resolved.parents for d in dirs):
        return True
    return resolved.parent.name == "scenarios"


class ScenarioFile(pytest.File):
    """One scenario file -> one pytest item per scenario in it (a file holds one mapping or a list)."""

    def collect(self) -> Iterator[pytest.Item]:
        from ctk.scenarios.loader import load_file

        scenarios = load_file(self.path)           # raises ScenarioError naming the file and field
        for sc in scenarios:
            yield pytest.Function.from_parent(self, name=sc.test_name, callobj=_make_test(sc),
                                              keywords={"ctk": True})

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        from ctk.scenarios.loader import ScenarioError

        if isinstance(excinfo.value, ScenarioError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


def _make_test(scenario: Any):
    def scenario_test(ctk_session):
        from ctk.scenarios.runner import run_scenario

        return run_scenario(scenario, ctk_session)

    scenario_test.__doc__ = scenario.description or scenario.name
    # what the plugin reads off a test function: the requirement (for a crash's verdict) and its marks
    setattr(scenario_test, "requirement", getattr(scenario, "requirement", None))
    setattr(scenario_test, "pytestmark", [pytest.mark.ctk])
    return scenario_test


def is_suite_item(item: pytest.Item) -> bool:
    try:
        return SUITES_DIR in Path(str(item.path)).resolve().parents
    except (OSError, ValueError):
        return False


# -- selection: requirement ids, endpoints and behaviours as -k keywords, and --ctk-requirement -------------------
def _ids_of(value: Any, modules: list[Any]) -> list[str]:
    """The requirement ids a parameter value names: a registered check (``ctk_check``: its requirement and the
    ones it also judges), an object with ``requirement``/``requirements``/``id``, a check named by a string."""
    from ctk.core.requirements import REQUIREMENTS

    out: list[str] = []
    candidates = [value]
    if isinstance(value, str):     # e.g. ("race", "check_race"): the check itself, looked up in the module's imports
        candidates += [getattr(m, value, None) for m in modules]
    for c in candidates:
        if c is None:
            continue
        reg = getattr(c, "ctk_check", None)
        if reg is not None:
            out += [reg.requirement, *(r for r, _ in getattr(reg, "also", ()))]
        for name in ("requirement", "requirements", "id"):
            got = getattr(c, name, None)
            for rid in [got] if isinstance(got, str) else list(got) if isinstance(got, (list, tuple)) else []:
                if isinstance(rid, str) and rid in REQUIREMENTS:
                    out.append(rid)
    return out


def _called_checks(item: pytest.Item, params: dict[str, Any]) -> list[str]:
    """The requirements of the registered checks an item's function calls (or names by a string parameter, e.g.
    ``check_row_level``); where a parameter is one of their behaviours (``lost-503``), only that behaviour's."""
    from ctk.core.behaviours import CHECKS

    fn = getattr(item, "obj", None)
    code = getattr(fn, "__code__", None)
    scope = getattr(fn, "__globals__", {}) or {}
    names = code.co_names if code is not None else ()
    regs = [getattr(scope.get(n), "ctk_check", None) for n in names]
    for m in {id(v): v for n in names if isinstance(v := scope.get(n), types.ModuleType)}.values():
        regs += [getattr(getattr(m, n, None), "ctk_check", None) for n in names]   # module.check_x(...)
    strings = {str(getattr(v, "value", v)) for v in params.values() if isinstance(v, str)}
    regs += [c for c in CHECKS if getattr(c.fn, "__name__", None) in strings]
    pairs = [(r.requirement, r.behaviour) for r in regs if r is not None]
    pairs += [p for r in regs if r is not None for p in r.also]
    named = [rid for rid, b in pairs if str(getattr(b, "value", b)) in strings]
    return named or [rid for rid, _ in pairs]


def item_requirements(item: pytest.Item) -> list[str]:
    """The requirement ids an item judges, derived from the item (never a list kept here): its function's
    ``requirement`` (a scenario), its parameters' registered checks, the registered checks its function calls,
    its module's ``REQ``/``REQUIREMENT``, else the ids its node id names (e.g. a semantics check ``NS-06``)."""
    from ctk.core.requirements import REQUIREMENTS

    found: list[str] = []
    rid = getattr(getattr(item, "obj", None), "requirement", None)
    if isinstance(rid, str) and rid in REQUIREMENTS:
        found.append(rid)
    module = getattr(item, "module", None)
    modules = [m for m in vars(module).values() if isinstance(m, types.ModuleType)] if module else []
    params = getattr(getattr(item, "callspec", None), "params", {}) or {}
    for value in params.values():
        found += _ids_of(value, modules)
    if not found:
        found += _called_checks(item, params)
    if not found:
        for name in ("REQ", "REQUIREMENT", "REQUIREMENTS"):
            got = getattr(module, name, None)
            found += [r for r in ([got] if isinstance(got, str) else list(got or []) if isinstance(got, (list, tuple))
                                  else []) if isinstance(r, str) and r in REQUIREMENTS]
    if not found:
        text = item.nodeid.upper().replace("_", "-")
        found = [r for r in REQUIREMENTS if re.search(rf"(?<![A-Z0-9]){re.escape(r)}(?![0-9])", text)]
    return list(dict.fromkeys(found))


def item_endpoint_behaviour(item: pytest.Item) -> tuple[str | None, str | None]:
    """The endpoint (operationId) and behaviour an item exercises: its ``operation`` and ``behaviour`` (or
    ``scenario``, ``kind``) parameters, else those of the check a parameter is (a semantic check judges one
    operation, in its area's column)."""
    params: dict[str, Any] = getattr(getattr(item, "callspec", None), "params", {}) or {}
    op = params.get("operation")
    beh = params.get("behaviour") or params.get("scenario") or params.get("kind")
    for value in params.values():
        if op is None and isinstance(getattr(value, "operation", None), str):
            op = value.operation
        if beh is None and getattr(value, "behaviour", None) is not None:
            beh = value.behaviour
    beh = getattr(beh, "value", beh)
    return (str(op) if op else None), (str(beh) if beh else None)


def item_keywords(item: pytest.Item) -> list[str]:
    """What -k matches beside pytest's own names: each requirement id (also with '_' for '-': REPLAY_01), the
    endpoint (operationId) and the behaviour the item exercises."""
    words: list[str] = []
    for rid in item_requirements(item):
        words += [rid, rid.replace("-", "_")]
    params = getattr(getattr(item, "callspec", None), "params", {}) or {}
    words += [w for w in item_endpoint_behaviour(item) if w]
    for value in params.values():
        reg = getattr(value, "ctk_check", None)
        if reg is not None:
            words.append(str(getattr(reg.behaviour, "value", reg.behaviour)))
    return list(dict.fromkeys(words))


def add_keywords(item: pytest.Item) -> None:
    item.extra_keyword_matches.update(item_keywords(item))


def select_requirements(config: pytest.Config, items: list[pytest.Item], wanted: list[str]) -> None:
    """Keep the items that judge one of `wanted` (in place); the others are deselected as -k deselects."""
    if not wanted:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (keep if set(item_requirements(item)) & set(wanted) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
