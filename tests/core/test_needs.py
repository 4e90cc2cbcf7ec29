"""Not applicable apart from not decided: an unsupported or inconclusive verdict that an option or capability would
decide carries ``needs``, given by the check that makes it (ctk.core.needs); the reason's words decide nothing, so
a reworded reason cannot move a verdict from "not decided: needs X" to "not applicable"."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ctk
from ctk.checks.faults import FaultInjector
from ctk.core import needs
from ctk.core.verdicts import Verdict


@pytest.mark.parametrize("what, expected", [
    ("fail_before", needs.CONTROL_API),
    ("crash_before_finalize", needs.CONTROL_API),
    ("corrupt_stored_response", needs.CONTROL_API),
    ("lose_answer", needs.CONTROL_API_OR_INTERPOSER),
    ("delay", needs.CONTROL_API_OR_INTERPOSER),
    ("duplicate", needs.INTERPOSER),
])
def test_a_fault_the_injector_cannot_produce_says_what_would(what, expected):
    exc = FaultInjector()._unsupported(what)
    assert exc.needs == expected
    assert f"this run injects faults via {FaultInjector.name}" in str(exc)


def test_the_reason_text_is_not_read():
    """A reason that happens to say "needs the interposer" makes no ``needs``: only the check's ``needs=`` does."""
    assert Verdict.unsupported("REPLAY-03", "network scenarios need the interposer").needs is None
    assert Verdict.inconclusive("OCC-01", "Spark is not available: no jars").needs is None
    v = Verdict.unsupported("REPLAY-03", "reworded", needs=needs.INTERPOSER)
    assert v.needs == needs.INTERPOSER and v.to_dict()["needs"] == needs.INTERPOSER


def test_max_wait_names_the_seconds():
    assert needs.max_wait(1620) == "--ctk-max-wait 1620"
    assert needs.max_wait(89.6) == "--ctk-max-wait 90"


# --- the producers: an undecided verdict whose reason names an option (--ctk-...) gives needs= ---------------------

PRODUCERS = ("checks", "fuzzing", "scenarios")
UNDECIDED = {"unsupported", "inconclusive", "_Unsupported", "FaultUnsupported"}


def _strings(node: ast.AST, constants: dict[str, str]) -> str:
    """The literal text of an argument: string constants, f-string parts and module-level string constants."""
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
        elif isinstance(n, ast.Name) and n.id in constants:
            out.append(constants[n.id])
    return " ".join(out)


def _module_constants(tree: ast.Module) -> dict[str, str]:
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                value = ast.literal_eval(stmt.value)
            except ValueError:
                continue
            if isinstance(value, str):
                out[stmt.targets[0].id] = value
    return out


def undecided_without_needs(source: str, name: str = "<source>") -> list[str]:
    """Calls making an unsupported/inconclusive verdict (or the exceptions the checks turn into one) whose reason
    names a --ctk- option but which pass no ``needs``."""
    tree = ast.parse(source)
    constants = _module_constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if called not in UNDECIDED:
            continue
        if any(k.arg == "needs" for k in node.keywords):
            continue
        if "--ctk-" in _strings(ast.Module(body=[ast.Expr(a) for a in node.args], type_ignores=[]), constants):
            found.append(f"{name}:{node.lineno}")
    return found


def test_the_consistency_check_can_fail():
    assert undecided_without_needs('run.unsupported(f"waiting {s} s: raise --ctk-max-wait")')
    assert undecided_without_needs('X = "set --ctk-db-link"\nVerdict.inconclusive("R", X + "!")')
    assert undecided_without_needs('raise _Unsupported("longer than --ctk-max-wait")')
    assert not undecided_without_needs('run.unsupported("raise --ctk-max-wait", needs=needs.max_wait(9))')
    assert not undecided_without_needs('run.unsupported("not offered by the target")')


def test_every_undecided_verdict_naming_an_option_says_what_it_needs():
    root = Path(ctk.__file__).parent
    files = [p for d in PRODUCERS for p in sorted((root / d).rglob("*.py"))]
    assert len(files) > 10
    missing = [m for p in files for m in undecided_without_needs(p.read_text(), str(p.relative_to(root)))]
    assert not missing, f"undecided verdicts naming a --ctk- option without needs=: {missing}"
