"""Every requirement can fail (issue 29 item 5): for each requirement of the registry, a test of the kit's own
shows its check judging it broken, or a listed reason says why no catalog can break it.

Where it is shown, in this order:

1. a deviation profile whose ``catches`` name it (ctk/reference/deviations.py; tests/checks/test_sensitivity.py
   runs the kit under each profile and holds it to exactly ``catches``);
2. an allowed variant whose design-profile verdict for it is a deviation or a fail (ctk/reference/variants.py,
   ``Variant.design``; the same module's variant test);
3. another test listed in ``SHOWN_FAILING`` below (an odd server in tests/oddserver/, a unit test against a broken
   answer), named ``path::function`` or ``path::function[param-id]``; this test checks that the function exists
   and that it names the requirement (its id, the name of a semantic check of it, or the check function
   registered under it).

``NONE_CAN`` lists a requirement no catalog can break, with the reason: only one that no check judges on a
catalog (a requirement on the kit's own client). ``NOT_YET`` lists the requirements whose failing test is still
to be written: the run warns with the list, and an entry that has gained a way to fail must leave it.

Adding a requirement: give it a deviation profile that catches it, or a test that makes its check fail, and
list that test here (docs/architecture.md, "Adding a check").
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import lru_cache
from pathlib import Path

from ctk.core.behaviours import checks_for
from ctk.core.requirements import REQUIREMENTS

ROOT = Path(__file__).resolve().parents[2]
SENSITIVITY = "tests/checks/test_sensitivity.py::test_profile_fails_exactly_what_it_catches"
VARIANT_DESIGN = "tests/checks/test_sensitivity.py::test_variant_passes_under_spec_and_gets_the_design_verdict"
_ODD = "tests/oddserver/test_semantics_can_fail.py::test_the_rule_broken_fails_its_requirement"


def _odd(requirement: str, check: str) -> str:
    return f"{_ODD}[{requirement}-{check}]"


# requirement -> the tests (besides deviation profiles and variants) in which its check judges it broken
SHOWN_FAILING: dict[str, tuple[str, ...]] = {
    "DISC-01": ("tests/checks/test_discovery_invalid_lifetime.py"
                "::test_an_invalid_top_level_lifetime_breaks_disc01",),
    "DISC-05": ("tests/oddserver/test_advertised_not_served.py"
                "::test_a_listed_operation_answered_by_a_router_is_advertised_but_not_served",
                "tests/oddserver/test_advertised_not_served.py"
                "::test_createtable_refused_on_the_default_set_is_a_finding_not_not_applicable"),
    # CLASSIFIED under spec: the verdict passes carrying the broken rule; a deviation under the design profile
    "LIFE-03": ("tests/checks/test_lifetime_grace.py::test_no_grace_is_still_caught_by_arrival",),
    "RECON-03": ("tests/oddserver/test_replay_failed_subtype.py"
                 "::test_a_replay_failure_without_its_subtype_breaks_recon03",),
    "CLIENT-01": ("tests/oddserver/test_blame_what_was_seen.py::test_client01_names_the_unrecorded_appends_first",),
    "SEM-01": ("tests/oddserver/test_model_semantics.py::test_create_table_in_missing_namespace_is_sem01_not_gen02",
               "tests/oddserver/test_model_replay_of_lenient_create.py"
               "::test_the_whole_run_blames_sem01_and_decides_gen02"),
    "SEM-02": ("tests/oddserver/test_leftovers.py::test_nested_namespace_created_but_not_loadable_is_a_finding",
               "tests/oddserver/test_model_semantics.py::test_a_state_mismatch_with_no_retry_is_sem02"),
    "NS-01": (_odd("NS-01", "create-namespace"),),
    "NS-02": (_odd("NS-02", "create-existing-namespace"),),
    "NS-03": (_odd("NS-03", "namespace-properties-at-create"),),
    "NS-04": (_odd("NS-04", "update-properties"),),
    "NS-05": (_odd("NS-05", "missing-namespace"),),
    "NS-06": (_odd("NS-06", "drop-empty-namespace"),),
    "NS-07": (_odd("NS-07", "drop-non-empty-namespace"),),
    "NS-08": (_odd("NS-08", "list-namespaces"),),
    "NS-09": (_odd("NS-09", "namespace-names-with-dot-or-slash"),),
    "TBL-01": (_odd("TBL-01", "create-table"),),
    "TBL-02": (_odd("TBL-02", "create-existing-table"),),
    "TBL-03": (_odd("TBL-03", "complete-create-table"),),
    "TBL-04": (_odd("TBL-04", "load-missing-table"),),
    "TBL-06": (_odd("TBL-06", "rename-table"),),
    "TBL-07": (_odd("TBL-07", "rename-refused"),),
    "TBL-08": ("tests/checks/semantics/test_tables.py::test_drop_that_keeps_the_table_fails",),
    "TBL-09": (_odd("TBL-09", "register-refused"),),
    "TBL-10": (_odd("TBL-10", "table-names-with-dot-or-slash"),),
    "TBL-11": (_odd("TBL-11", "unique-location"),),
    "LIST-01": ("tests/checks/semantics/test_tables.py::test_listing_that_omits_a_table_fails",),
    "LIST-02": ("tests/checks/semantics/test_tables.py::test_pages_longer_than_page_size_fail",),
    "LIST-03": (_odd("LIST-03", "list-views"),),
    "EVO-01": ("tests/checks/semantics/test_evolution.py"
               "::test_a_commit_the_next_load_does_not_show_fails_the_baseline",),
    "EVO-02": ("tests/checks/semantics/test_evolution.py"
               "::test_a_stale_requirement_accepted_fails_the_conflict_checks",),
    "EVO-03": (_odd("EVO-03", "spec-update-and-revert"),),
    "EVO-04": (_odd("EVO-04", "sort-order-update-and-revert"),),
    "EVO-05": (_odd("EVO-05", "update-transaction"),),
    "EVO-06": (_odd("EVO-06", "appends-and-refs"),),
    "EVO-07": (_odd("EVO-07", "uuid-validation"),),
    "EVO-08": (_odd("EVO-08", "metadata-log"),),
    "EVO-09": (_odd("EVO-09", "unknown-update-or-requirement"),),
    "TXN-01": (_odd("TXN-01", "create-transaction"),),
    "TXN-02": (_odd("TXN-02", "concurrent-create-transaction"),),
    "TXN-04": (_odd("TXN-04", "replace-missing-table"),),
    "VIEW-01": (_odd("VIEW-01", "create-view"),),
    "VIEW-02": (_odd("VIEW-02", "create-existing-view"),),
    "VIEW-03": ("tests/checks/semantics/test_views.py::test_a_view_taking_a_tables_name_fails",),
    "VIEW-04": (_odd("VIEW-04", "rename-view"),),
    "VIEW-05": (_odd("VIEW-05", "drop-view"),),
    "VIEW-07": (_odd("VIEW-07", "replace-dropped-view"),),
    "VIEW-08": (_odd("VIEW-08", "register-existing-view"),),
    "V3-01": ("tests/checks/semantics/test_evolution.py::test_a_v2_table_with_a_variant_column_created_fails_v3_01",),
    "SPARK-01": ("tests/spark/test_spark_workloads.py::test_no_atomic_swap_is_caught",),
}

# requirement -> why no catalog can make its check fail (only where no check judges a catalog on it)
NONE_CAN: dict[str, str] = {
    "LIFE-02": "a requirement on the kit's own retrying client (subject: client), judged on no catalog; the client "
               "is tested in tests/client/test_http_retrying.py",
}

# requirement -> why no test makes it fail yet (each is a test still to write; the run warns with this list)
NOT_YET: dict[str, str] = {
    "SPARK-02": "a Spark workload against a catalog that breaks row-level conflicts: minutes of Spark per run",
    "SPARK-03": "a Spark compaction race against a catalog that loses the race: minutes of Spark per run",
    "SPARK-04": "Spark's lost commit answers against a catalog that re-executes them: minutes of Spark per run",
}


def _profiles() -> dict[str, list[str]]:
    from ctk.reference.deviations import PROFILES
    from ctk.reference.variants import VARIANTS

    out: dict[str, list[str]] = {}
    for name, profile in PROFILES.items():
        for rid in profile.catches:
            out.setdefault(rid, []).append(f"deviation profile {name} ({SENSITIVITY})")
    for name, variant in VARIANTS.items():
        for rid, verdict in variant.design.items():
            if verdict in ("fail", "deviation"):
                out.setdefault(rid, []).append(f"variant {name} under the design profile ({VARIANT_DESIGN})")
    return out


def shown_failing(requirement: str) -> list[str]:
    """Every way the kit's tests show ``requirement`` failing."""
    return _profiles().get(requirement, []) + list(SHOWN_FAILING.get(requirement, ()))


def unaccounted(ids) -> list[str]:
    """The requirements of ``ids`` with no way to fail, no reason why none can and no entry in NOT_YET."""
    return [r for r in ids if not shown_failing(r) and r not in NONE_CAN and r not in NOT_YET]


@lru_cache(maxsize=None)
def _functions(path: str) -> dict[str, str]:
    """Top-level function name -> its source with its decorators, of the test file ``path``."""
    text = (ROOT / path).read_text(encoding="utf-8")
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts = [ast.get_source_segment(text, d) or "" for d in node.decorator_list]
            out[node.name] = "\n".join(parts + [ast.get_source_segment(text, node) or ""])
    return out


def _names_of(requirement: str) -> set[str]:
    """What a test may name a requirement by: its id, its semantic checks' names, its check functions' names."""
    import ctk.checks  # noqa: F401 - registers the checks
    import ctk.checks.concurrency  # noqa: F401
    import ctk.checks.real_client  # noqa: F401
    import ctk.checks.spark  # noqa: F401
    import ctk.fuzzing  # noqa: F401
    from ctk.checks.semantics import semantic_checks

    names = {requirement} | {c.name for c in semantic_checks() if c.requirement == requirement}
    return names | {c.fn.__name__ for c in checks_for(requirement)}


def problem_with(requirement: str, nodeid: str) -> str | None:
    """Why ``nodeid`` is not a test that can show ``requirement`` failing (None: it can)."""
    m = re.fullmatch(r"(?P<path>tests/[\w/]+\.py)::(?P<fn>test_\w+)(\[(?P<param>[^\]]+)\])?", nodeid)
    if not m:
        return f"{nodeid!r} is not 'tests/...py::test_name' or 'tests/...py::test_name[param-id]'"
    if not (ROOT / m["path"]).is_file():
        return f"{m['path']} does not exist"
    source = _functions(m["path"]).get(m["fn"])
    if source is None:
        return f"{m['path']} has no test function {m['fn']}"
    if m["param"]:      # a case of a parametrized test: named by its id (test_a_listed_parameter_is_one_the_test_runs)
        return None if m["param"].startswith(requirement + "-") else \
            f"its parameter {m['param']!r} is not one of {requirement}"
    if not any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", source) for n in _names_of(requirement)):
        return f"{m['fn']} names neither {requirement} nor a check of it"
    return None


def test_every_requirement_has_a_test_that_makes_it_fail_or_a_reason_why_none_can():
    missing = unaccounted(REQUIREMENTS)
    assert not missing, (f"no test shows {', '.join(missing)} failing: add a deviation profile that catches it "
                         f"(ctk/reference/deviations.py) or a test that makes its check fail, and list that test in "
                         f"SHOWN_FAILING of {Path(__file__).name}")
    if NOT_YET:
        warnings.warn(UserWarning(f"no test shows these requirements failing yet: {', '.join(NOT_YET)}"))


def test_each_listed_test_exists_and_names_its_requirement():
    problems = [f"{rid}: {problem}" for rid, nodeids in SHOWN_FAILING.items() for nodeid in nodeids
                if (problem := problem_with(rid, nodeid))]
    assert not problems, "\n".join(problems)


def test_the_lists_name_registered_requirements_and_do_not_contradict_each_other():
    for table in (SHOWN_FAILING, NONE_CAN, NOT_YET):
        assert set(table) <= set(REQUIREMENTS), set(table) - set(REQUIREMENTS)
    stale = [r for r in NOT_YET if shown_failing(r)]
    assert not stale, f"{stale} can fail now: take them out of NOT_YET"
    # a reason why none can is only for a requirement no check judges on a catalog
    wrong = [r for r in NONE_CAN if shown_failing(r) or checks_for(r) or REQUIREMENTS[r].subject != "client"]
    assert not wrong, f"{wrong}: a check judges them on a catalog, so a catalog can break them"


def test_the_accounting_itself_can_fail(monkeypatch):
    """A requirement nobody shows failing is named; a listed test that is not there, or does not name the
    requirement, is refused."""
    assert unaccounted(["X-1", "REPLAY-01", "LIFE-02"]) == ["X-1"]
    assert "no test function" in (problem_with("TBL-08", "tests/checks/semantics/test_tables.py::test_nope") or "")
    assert "names neither" in (problem_with("NS-06", SHOWN_FAILING["TBL-08"][0]) or "")
    assert "does not exist" in (problem_with("NS-06", "tests/nowhere.py::test_x") or "")
    assert "not one of" in (problem_with("NS-06", _odd("NS-07", "drop-non-empty-namespace")) or "")
    assert problem_with("TBL-08", SHOWN_FAILING["TBL-08"][0]) is None


def test_a_listed_parameter_is_one_the_test_runs():
    """A ``[param-id]`` is a case the parametrized odd-server test has (its ``ODD`` list)."""
    missing = []
    for rid, nodeids in SHOWN_FAILING.items():
        for nodeid in nodeids:
            param = re.search(r"\[([^\]]+)\]$", nodeid)
            if param:
                text = (ROOT / nodeid.split("::", 1)[0]).read_text(encoding="utf-8")
                if f'Odd("{rid}", "{param.group(1).removeprefix(rid + "-")}"' not in text:
                    missing.append(nodeid)
    assert not missing, f"no such case: {missing}"
