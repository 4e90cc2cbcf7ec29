"""What the plugin collects when active: its built-in suites (ctk/suites) and scenario files (*.yaml)."""

from __future__ import annotations

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
