"""The one vocabulary of behaviours and the check registry (ctk.core.behaviours)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ctk
from ctk.core.behaviours import Behaviour, check, checks_for, column_order, display_name, registered
from ctk.core.requirements import REQUIREMENTS
from ctk.core.verdicts import Status, Verdict

PACKAGE = Path(ctk.__file__).parent


def _literal_behaviours() -> list[tuple[str, str]]:
    """Every behaviour name the package spells as a string literal: ``behaviour="x"`` keywords and
    ``"behaviour": "x"`` dict entries (anything else goes through the enum)."""
    out = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "behaviour" and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str):
                    out.append((f"{path.relative_to(PACKAGE)}:{node.value.lineno}", node.value.value))
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if (isinstance(k, ast.Constant) and k.value == "behaviour" and isinstance(v, ast.Constant)
                            and isinstance(v.value, str)):
                        out.append((f"{path.relative_to(PACKAGE)}:{v.lineno}", v.value))
    return out


def test_every_literal_behaviour_in_the_package_is_registered():
    found = _literal_behaviours()
    assert found, "the scan found nothing: it no longer sees how the package spells behaviours"
    unknown = [(where, name) for where, name in found if name not in Behaviour.__members__.values()]
    assert not unknown, f"behaviour names outside the registry: {unknown}"


def test_behaviour_families_built_at_run_time_are_registered():
    from ctk.checks import db_link, network, spark
    from ctk.checks.concurrency import REQUIREMENT_TYPES
    from ctk.checks.context import CheckOptions
    from ctk.checks.faults import LOSE_MODES

    names = [f"lost-answer-{m}" for m in (*LOSE_MODES, *CheckOptions().lose_modes)]
    names += [f"requirement:{k}" for k in REQUIREMENT_TYPES]
    names += [f"{i}/{m}" for i, m in spark.COMBOS]
    names += [f"db-link-{m.replace('_', '-')}" for m in db_link.DB_FAILURES]
    names += list(network.SCENARIOS) + ["seed-1a", "seed-1b"]
    for name in names:
        assert Behaviour(name).value == name


def test_verdict_takes_only_registered_behaviours():
    v = Verdict("REPLAY-01", Status.PASS, "", behaviour="finalized-duplicate")
    assert v.behaviour is Behaviour.FINALIZED_DUPLICATE
    assert v.to_dict()["behaviour"] == "finalized-duplicate" and type(v.to_dict()["behaviour"]) is str
    with pytest.raises(ValueError, match=r"unknown behaviour 'committed-but-lost' \(known: .*lost-answer-503"):
        Verdict.ok("REPLAY-04", behaviour="committed-but-lost")


def test_members_have_display_names_areas_and_column_order():
    members = list(Behaviour)
    assert [b.order for b in members] == list(range(len(members)))
    assert len({b.display for b in members}) == len(members), "two columns would read the same"
    assert all(b.display and b.area for b in members)
    assert column_order(["crash-reconciled", "zzz-old", "finalized-duplicate", "aaa-old"]) == [
        "finalized-duplicate", "crash-reconciled", "aaa-old", "zzz-old"]
    assert display_name("lost-answer-503") == Behaviour.LOST_ANSWER_503.display
    assert display_name("not-registered") == "not-registered"


def test_registry_names_known_requirements_and_is_in_column_order():
    import ctk.checks  # noqa: F401 - registers the checks
    import ctk.checks.concurrency  # noqa: F401
    import ctk.checks.real_client  # noqa: F401
    from ctk.checks import ENDPOINT_CHECKS, GLOBAL_CHECKS

    regs = registered()
    assert regs
    for reg in regs:
        for rid, beh in reg.reports:
            assert rid in REQUIREMENTS and isinstance(beh, Behaviour)
    # what ctk.checks runs per endpoint and once per target is every registered check of those areas, each once,
    # in column order (derived from the registry: a new check is run without editing a list here)
    for runs, areas in ((ENDPOINT_CHECKS, {"idempotency"}), (GLOBAL_CHECKS, {"discovery", "keys"})):
        wanted = [c for c in regs if c.area in areas]
        assert wanted, areas
        # area by area (discovery, then keys), each in column order
        assert [fn for _, fn in runs] == [c.fn for c in sorted(wanted, key=lambda c: (sorted(areas).index(c.area),
                                                                                      c.behaviour.order))], areas
        assert [b for b, _ in runs] == [fn.ctk_check.behaviour for _, fn in runs]
        assert len({b for b, _ in runs}) == len(runs), f"a behaviour run twice: {[b for b, _ in runs]}"
    # the matrix leads with the Idempotency-Key behaviours every mutation endpoint is checked for
    first = [b.area for b in Behaviour][:len([b for b in Behaviour if b.area == "idempotency"])]
    assert set(first) == {"idempotency"} and list(Behaviour)[0] is Behaviour.FINALIZED_DUPLICATE
    orders = [r.behaviour.order for r in registered("idempotency")]
    assert orders == sorted(orders)
    assert {c.behaviour for c in checks_for("REPLAY-05")} == {Behaviour.FINALIZED_DUPLICATE}


def test_check_decorator_rejects_unknown_names_and_a_second_check_for_a_behaviour():
    def fn():
        pass

    with pytest.raises(ValueError, match=r"unknown requirement 'NOPE-01' \(known: .*REPLAY-01"):
        check(requirement="NOPE-01", behaviour=Behaviour.LIFETIME)(fn)
    with pytest.raises(ValueError, match=r"unknown behaviour 'terminal-4xx'"):
        check(requirement="REPLAY-02", behaviour="terminal-4xx")(fn)
    with pytest.raises(ValueError, match=r"unknown requirement 'X-1'"):
        check(requirement="REPLAY-01", behaviour=Behaviour.LIFETIME, also=(("X-1", Behaviour.LIFETIME),))(fn)
    import ctk.checks  # noqa: F401
    with pytest.raises(ValueError, match="already registered by ctk.checks.idempotency.check_lifetime"):
        check(requirement="LIFE-01", behaviour=Behaviour.LIFETIME)(fn)
    assert not any(c.fn is fn for c in registered())


def test_every_deviation_profile_catches_registered_requirements_with_a_registered_check():
    """A profile's ``catches`` names requirements of the registry, each with a check registered under it (so
    the sensitivity matrix can be read off the registry: requirement -> behaviours)."""
    import ctk.checks  # noqa: F401
    import ctk.checks.concurrency  # noqa: F401
    import ctk.checks.real_client  # noqa: F401
    import ctk.fuzzing  # noqa: F401 - GEN-01, SCHEMA-01 (generated) and GEN-02 (model-based)
    from ctk.reference.deviations import PROFILES

    assert PROFILES
    for name, profile in PROFILES.items():
        catches = profile.catches if hasattr(profile, "catches") else profile["catches"]
        assert catches, f"profile {name} catches nothing"
        unknown = [r for r in catches if r not in REQUIREMENTS]
        assert not unknown, f"profile {name} catches unknown requirements {unknown}"
        unchecked = [r for r in catches if not checks_for(r)]
        assert not unchecked, f"profile {name} catches {unchecked}, which no registered check reports on"


def test_network_scenarios_are_registered_under_their_requirement():
    from ctk.checks import network

    reg = {b.value: rid for c in registered("network") for rid, b in c.reports}
    assert {s: reg.get(s) for s in network.SCENARIOS} == network.REQUIREMENT


def test_database_link_scenarios_are_registered_once_under_their_requirement():
    from ctk.checks import db_link, idempotency  # noqa: F401 - idempotency imports db_link's checks lazily

    reg = [(b.value, rid) for c in registered("database") for rid, b in c.reports]
    assert sorted(reg) == sorted({("db-latency-in-flight", "INFLIGHT-01"), ("db-commit-cut", "REPLAY-04"),
                                  *((f"db-link-{m.replace('_', '-')}", "REPLAY-03") for m in db_link.DB_FAILURES)})
    assert all(c.fn.__module__ == "ctk.checks.db_link" for c in registered("database"))


def test_a_module_imported_again_replaces_its_checks_instead_of_clashing():
    """A test that drops a check module from sys.modules and imports it again (the plugin's tests do) registers
    the same checks anew: one entry per behaviour, the new function, no "already registered" error."""
    import importlib
    import sys

    import ctk.checks.concurrency  # noqa: F401
    before = [c for c in registered() if c.fn.__module__ == "ctk.checks.concurrency"]
    saved = sys.modules.pop("ctk.checks.concurrency")
    try:
        again = importlib.import_module("ctk.checks.concurrency")
        after = [c for c in registered() if c.fn.__module__ == "ctk.checks.concurrency"]
        assert [c.behaviour for c in after] == [c.behaviour for c in before]
        assert all(c.fn is getattr(again, c.fn.__name__) for c in after)
    finally:
        sys.modules["ctk.checks.concurrency"] = saved
        importlib.reload(saved)
