"""Sensitivity proof: every check passes on the reference catalog, and the whole kit run under each deviation
profile fails exactly the requirements its `catches` lists - each with the verdict its level calls for (fail
for a MUST, deviation for a SHOULD, a classified pass where the profile's sources are silent) - and no other.
The matrix is printed at the end of the run (tests/checks/conftest.py).

In process, "the whole kit" is the global and endpoint checks, the commit concurrency checks and the generated
checks (GEN-01, SCHEMA-01 on two operations, GEN-02 on a short model run). The requirements in INTERPOSER_ONLY
are caught only by checks that need the interposer between kit and catalog (the network's late copy, the
design document's example 1b); tests/checks/test_sensitivity_workers.py runs the kit as a user does (`ctk serve
--control-api`, `ctk run` with its default workers), where they run, and asserts the same exact catches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctk.catalog import ENDPOINTS
from ctk.checks import concurrency, run_endpoint_checks, run_global_checks
from ctk.checks.context import CheckContext
from ctk.core.requirements import PROFILES as PROFILE_NAMES
from ctk.core import requirements as _rq
from ctk.core.behaviours import registered
from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status
from ctk.fuzzing import StatefulOptions, run_openapi_checks, run_stateful_check
from ctk.reference.deviations import PROFILES
from ctk.reporting.behaviour import behaviour_profile
from user_path import level_status

# requirement -> the behaviour whose check judges it (the registry's global and per-endpoint checks: a check's
# own behaviour, also for the requirements it reports on beside its own); GLOBAL: those of the global checks
_RUN_BY_BEHAVIOUR = [c for c in registered() if c.area in ("idempotency", "discovery", "keys")]
BEHAVIOUR = {rid: c.behaviour.value for c in _RUN_BY_BEHAVIOUR for rid, _ in c.reports}
GLOBAL = {rid for c in _RUN_BY_BEHAVIOUR if c.area != "idempotency" for rid, _ in c.reports}
SENSITIVITY_ENDPOINTS = ("createTable", "updateTable")
# profiles that break a rule only one endpoint can show
PROFILE_ENDPOINTS = {"replay-purges": ("dropTable",), "keys-partial": ("createNamespace",)}
OURS = list(PROFILES.values())      # every profile: the whole kit runs under each
# The verdict each deviation profile gets, (under spec, under design): the merged spec is silent on the
# in-flight subtype, on 422 for another payload and on key scope (classified: a pass that names the behaviour),
# and states the lifetime as SHOULD where the design document says MUST.
F, D, P = "fail", "deviation", "pass"
BEHAVIOUR_ROW = {"keys-partial": ("endpoints", "NOT honoured on 1: createNamespace"),
                 "store-5xx": ("5xx", "stored and replayed"), "terminal-4xx-not-stored": ("terminal-4xx", "executed again"),
                 "scope-ignored": ("key-scope", "global (replays the first)"),
                 "in-flight-plain-409": ("in-flight", "409 without subtype"),
                 "no-payload-check": ("payload-mismatch", "replays the first")}
EXPECTED = {
    "lifetime-in-overrides": {"DISC-02": (D, D)}, "lifetime-weeks": {"DISC-03": (D, D)},
    "no-discovery-rejects-key": {"DISC-04": (D, D)}, "accept-malformed-key": {"KEY-01": (D, D)},
    "accept-repeated-key": {"KEY-02": (D, D)},
    "no-replay": {"REPLAY-01": (F, F), "REPLAY-02": (D, D), "REPLAY-04": (F, F), "LIFE-01": (D, F), "RECON-01": (F, F)},
    "replay-different-body": {"REPLAY-01": (F, F), "REPLAY-04": (F, F), "LIFE-01": (D, F)}, "replay-purges": {"REPLAY-01": (F, F), "REPLAY-04": (F, F), "LIFE-01": (D, F), "RECON-01": (F, F)},
    "terminal-4xx-not-stored": {"REPLAY-02": (D, D)}, "store-5xx": {"REPLAY-03": (F, F)},
    "in-flight-reexecutes": {"INFLIGHT-01": (F, F)}, "in-flight-plain-409": {"INFLIGHT-02": (P, D)},
    "no-payload-check": {"PAYLOAD-01": (P, D)}, "scope-ignored": {"SCOPE-01": (P, D)},
    "reuse-5xx": {"SCOPE-02": (D, D)},
    "keys-partial": {"REPLAY-01": (F, F), "REPLAY-02": (D, D), "REPLAY-04": (F, F), "INFLIGHT-01": (F, F),
                     "PAYLOAD-01": (P, D), "LIFE-01": (D, F), "RECON-01": (F, F), "RECON-02": (F, F)},
    "short-lifetime": {"LIFE-01": (D, F)}, "replay-failed-reexecutes": {"RECON-01": (F, F)},
    "no-reconcile": {"RECON-02": (F, F)},
    "stale-requirement-accepted": {"OCC-01": (F, F), "OCC-02": (F, F), "OCC-03": (F, F), "OCC-04": (F, F)},
    "no-atomic-swap": {"OCC-02": (F, F), "OCC-03": (F, F), "HIST-01": (F, F)},
    "transaction-not-atomic": {"OCC-04": (F, F)},
    "view-replace-keeps-old-version": {"VIEW-06": (F, F)},
    "missing-metadata-5xx": {"TBL-05": (D, D)},
    "replace-loses-snapshot-log": {"TXN-03": (F, F)},
    "drop-namespace-not-empty": {"NS-07": (D, D), "SEM-01": (D, D)},
    "list-pages-overlap": {"LIST-02": (D, D)},
    "table-uuid-unchecked": {"EVO-07": (D, D), "OCC-01": (F, F), "OCC-04": (F, F)},
}
# caught only through the interposer: the network's late copy of a mutation (HIST-02, network-duplicate) and the
# seed example 1b (INTEG-01); the matrix under workers (test_sensitivity_workers.py) asserts them
INTERPOSER_ONLY = {"HIST-02", "INTEG-01"}
for _name, _catches in {"no-replay": {"GEN-01": (F, F), "GEN-02": (F, F), "HIST-02": (F, F), "INTEG-01": (F, F)},
                        "keys-partial": {"GEN-01": (F, F), "GEN-02": (F, F), "HIST-02": (F, F)},
                        "replay-different-body": {"GEN-01": (F, F), "GEN-02": (F, F), "SCHEMA-01": (D, D)},
                        "terminal-4xx-not-stored": {"GEN-01": (F, F), "GEN-02": (F, F)},
                        "store-5xx": {"GEN-02": (F, F)}}.items():
    EXPECTED[_name].update(_catches)
# profile -> what the generated model run shows of its rule when it runs long enough to meet it (the user path,
# tests/checks/test_sensitivity_workers.py, asserts it); the short model run here may or may not
LONG_MODEL_RUN_ONLY = {"drop-namespace-not-empty": {"SEM-01"}}
# generated checks: operations whose generated cases reach a success and a terminal 4xx, and a short model run
GENERATED_OPERATIONS = ("createNamespace", "dropNamespace")
MATRIX: dict[str, dict[str, str]] = {}
UNRECORDED = object()


def _cell(verdicts) -> str:
    """Statuses (classification) under the active profile, and the other profile's where it differs."""
    cells = set()
    for v in verdicts:
        text = v.status.value + (f"({v.classification})" if v.classification else "")
        other = {p: s for p, s in (v.details.get("profiles") or {}).items() if s != v.status.value}
        cells.add(text + "".join(f" [{p}: {s}]" for p, s in other.items()))
    return ",".join(sorted(cells))


def _whole_kit(ctx, endpoints) -> list:
    """The global and endpoint checks on `endpoints`, the commit concurrency checks and the generated checks
    (small)."""
    out = run_global_checks(ctx)
    for op in endpoints:
        out += run_endpoint_checks(ctx, op)
    out += run_openapi_checks(ctx, examples=3, operations=GENERATED_OPERATIONS)
    out += run_stateful_check(ctx, options=StatefulOptions(examples=8, steps=8, shrinks=20))
    # the concurrency checks' own context (own run namespace, own control-API scope) on a client of its own
    return out + concurrency.run_all(CheckContext.create(ctx.client.sibling()), writers=3, appends=4,
                                     race_writers=6)


# A requirement whose check needs the one named to hold is undecided where that one is broken
# (tests/checks/test_reference_all_endpoints.py holds every endpoint to the same rule).
BUILDS_ON = {"REPLAY-05": "REPLAY-01", "INFLIGHT-02": "INFLIGHT-01", "LIFE-03": "LIFE-01", "RECON-03": "RECON-01",
             "SCOPE-01": "SCOPE-02"}
# profile -> requirements its rule leaves undecided beyond BUILDS_ON ("*": all), each for the reason given
EVERY = ("*",)
UNDECIDED_UNDER: dict[str, tuple[str, ...]] = {
    # support is not advertised where a client reads it (or not at all): every key check is unsupported
    "lifetime-in-overrides": EVERY, "no-discovery-rejects-key": EVERY,
    # a lifetime of a week: a retry at 90% of it is more than the checks may wait (max_wait)
    "lifetime-weeks": ("LIFE-01", "LIFE-03"),
    # the replayed purge-drop deletes the files of the table that has the name now, so the dropTable checks that
    # run after it find state they cannot read
    # (and SCOPE-01 there: its retry with the key executes again after the purge, read as a key without effect)
    "replay-purges": ("REPLAY-02", "REPLAY-03", "SCOPE-01"),
    # keys honoured only on createTable/updateTable: on the other endpoints the key has no effect, so no scope of
    # it can be observed there (SCOPE-01 inconclusive with that reason, issue 30 item 6c)
    "keys-partial": ("SCOPE-01",),
    # every duplicate executes again: the key has no effect on any operation, so no scope can be observed
    "no-replay": ("SCOPE-01",),
    # a replay answers another status than the first answer: the retry's answer cannot tell a replay of the key
    # from a new request, so no scope can be observed on createTable and updateTable
    "replay-different-body": ("SCOPE-01",),
}


def _semantics_of(ctx, profile) -> list:
    """The catalog-semantics checks of the areas whose requirements the profile breaks (every semantic check runs
    under each area's profile in tests/checks/semantics/, which holds the rest of the family to no finding)."""
    from ctk.checks.semantics import run_semantic, semantic_checks
    from ctk.core.requirements import REQUIREMENTS

    areas = {REQUIREMENTS[r].area for r in profile.catches if r in REQUIREMENTS}
    return [v for c in semantic_checks() if c.area in areas for v in run_semantic(ctx, c)]


# CTK_RECORD_FINDINGS=tests/reporting/data/root_cause_findings.json: the profiles run write their findings there
# (what tests/reporting/test_root_causes.py groups), replacing those of the same profile
RECORD_FINDINGS = "CTK_RECORD_FINDINGS"
RECORDED_FIELDS = ("requirement", "status", "endpoint", "behaviour", "classification", "message")


def _record_findings(path: Path, profile: str, verdicts: list) -> None:
    import fcntl
    import json

    from ctk.reporting.rootcause import FINDING_STATUSES

    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        data[profile] = [{k: v.to_dict().get(k) for k in sorted(RECORDED_FIELDS)} for v in verdicts
                         if v.status.value in FINDING_STATUSES]
        path.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    path.with_suffix(".lock").unlink(missing_ok=True)


def _level_status(v) -> str:
    """The status a broken rule gets: its requirement's level, or the documents' where the check judged it there
    (user_path.level_status)."""
    return level_status({"details": v.details}, status_if_broken(v.requirement))


def _level_statuses(v) -> dict[str, str]:
    """_level_status under each profile."""
    return {p: level_status({"details": v.details}, status_if_broken(v.requirement, p)) for p in PROFILE_NAMES}


def _undecided_on_reference(v) -> bool:
    return v.requirement == "DISC-04" or (v.requirement == "PAYLOAD-01" and (
        not v.endpoint or not ENDPOINTS[v.endpoint].has_payload))


def _rule_broken(v) -> bool:
    return bool(v.details.get("rule_broken")) or v.status in (Status.FAIL, Status.DEVIATION)


@pytest.mark.parametrize("profile", OURS, ids=[p.name for p in OURS])
def test_profile_fails_exactly_what_it_catches(make_ctx, profile):
    ctx = make_ctx(deviation=profile.name)
    everything = _whole_kit(ctx, PROFILE_ENDPOINTS.get(profile.name, SENSITIVITY_ENDPOINTS))
    everything += _semantics_of(ctx, profile)
    broken = {v.requirement for v in everything if _rule_broken(v)}
    catches = set(profile.catches) - INTERPOSER_ONLY
    # what only the user path's long model run shows may be missing from this short one: caught where it shows
    catches -= LONG_MODEL_RUN_ONLY.get(profile.name, set()) - broken
    for requirement in sorted(broken - catches):   # shown in the matrix too
        MATRIX.setdefault(profile.name, {})[requirement] = "UNLISTED " + _cell(
            [v for v in everything if v.requirement == requirement and _rule_broken(v)])
    # exactly: every requirement it lists is broken, and no other requirement fails or deviates
    assert broken == catches, (
        f"{profile.name} ({profile.breaks}) lists {sorted(catches)} (without {sorted(INTERPOSER_ONLY)}), the "
        f"kit found broken "
        f"{sorted(broken)}:\n" + "\n".join(f"{v.requirement} {v.endpoint} {v.behaviour}: {v.status.value}: "
                                           f"{v.message[:400]}" for v in everything
                                           if _rule_broken(v) and v.requirement not in catches))
    assert set(EXPECTED[profile.name]) == set(profile.catches), profile.name
    # no check crashes, and none that decides on the reference (all but DISC-04 and the global PAYLOAD-01) is
    # left undecided, unless the requirement it builds on is the one broken (or the profile says why)
    undecided = [v for v in everything if v.status is Status.ERROR or (
        v.status not in (Status.PASS, Status.FAIL, Status.DEVIATION) and not _undecided_on_reference(v)
        and BUILDS_ON.get(v.requirement) not in broken
        and not {v.requirement, "*"} & set(UNDECIDED_UNDER.get(profile.name, ())))]
    assert not undecided, f"{profile.name}: checks that decide on the reference did not here:\n" + "\n".join(
        f"{v.requirement} {v.endpoint} {v.behaviour}: {v.status.value}: {v.message[:400]}" for v in undecided)
    # the reports' first root cause is the rule the profile breaks (tests/reporting/test_root_causes.py)
    from ctk.reporting.rootcause import root_causes
    from tests.reporting.test_root_causes import FIRST_ROOT_CAUSE

    causes = root_causes([v.to_dict() for v in everything])
    if os.environ.get(RECORD_FINDINGS):
        _record_findings(Path(os.environ[RECORD_FINDINGS]), profile.name, everything)
    assert (causes[0].rule.id if causes else None) == FIRST_ROOT_CAUSE[profile.name], \
        [(c.rule.id, c.requirements) for c in causes]
    for v in everything:     # whatever is broken gets the verdict its level calls for
        if _rule_broken(v):
            assert v.status.value == _level_status(v), (v.requirement, v.status, v.message[:400])
    for requirement in sorted(catches):
        verdicts = [v for v in everything if v.requirement == requirement]
        assert verdicts, f"no verdict for {requirement}"
        # caught, with the verdict the requirement's level gives under the active profile (fail for a MUST,
        # deviation for a SHOULD, a pass that classifies it where the profile's sources are silent), and the
        # verdict the other profile gives recorded beside it
        # (the commit concurrency checks judge by level without recording the other profile's verdict)
        caught = [v for v in verdicts if _rule_broken(v) and v.status.value == _level_status(v)
                  and v.details.get("profiles", UNRECORDED) in (UNRECORDED, _level_statuses(v))]
        MATRIX.setdefault(profile.name, {})[requirement] = _cell(caught or verdicts)
        assert caught, (
            f"{requirement} not caught under {profile.name} ({profile.breaks}):\n"
            + "\n".join(f"{v.endpoint} {v.behaviour}: {v.status.value} {v.classification}: {v.message[:600]}"
                        for v in verdicts))
        expected = EXPECTED[profile.name][requirement]
        assert {tuple(v.details["profiles"][p] for p in PROFILE_NAMES) if "profiles" in v.details else
                expected for v in caught} == {expected}, f"{profile.name} {requirement}"
        assert {v.status.value for v in caught} == {expected[PROFILE_NAMES.index(_rq.active_profile())]}
        if requirement in BEHAVIOUR:   # the idempotency checks say what was expected and what happened
            for v in caught:
                assert "expected:" in v.message and "happened:" in v.message and v.exchanges
    if profile.name in BEHAVIOUR_ROW:          # the behaviour profile names what was broken
        row, text = BEHAVIOUR_ROW[profile.name]
        observed = {r["id"]: r["observed"] for r in behaviour_profile([v.to_dict() for v in everything])["rows"]}
        assert text in observed[row], observed[row]


def test_all_checks_pass_on_the_reference(make_ctx):
    ctx = make_ctx()
    out = _whole_kit(ctx, SENSITIVITY_ENDPOINTS)
    by_req: dict[str, list] = {}
    for v in out:
        by_req.setdefault(v.requirement, []).append(v)
    MATRIX["(reference)"] = {r: _cell(vs) for r, vs in by_req.items()}
    for v in out:
        if v.requirement == "DISC-04" or (v.requirement == "PAYLOAD-01" and not v.endpoint):
            assert v.status is Status.UNSUPPORTED          # not applicable: the reference advertises support
            continue
        assert v.status is Status.PASS, f"{v.requirement} {v.endpoint} {v.behaviour}: {v.status.value}\n{v.message}"
    assert set(BEHAVIOUR) <= set(by_req)


def test_reference_without_discovery_ignores_keys(make_ctx):
    ctx = make_ctx(idempotency_lifetime=None)
    [v] = run_global_checks(ctx, ["key-ignored-when-unsupported"])
    assert v.status is Status.PASS, v.message
    [v] = run_global_checks(ctx, ["discovery"])
    assert v.status is Status.UNSUPPORTED and "absent" in v.message
    MATRIX["(reference, no lifetime)"] = {"DISC-04": "pass", "DISC-01": "unsupported"}


# --- specificity: every allowed variant passes under the spec profile ------------------------------------
from ctk.reference.variants import VARIANTS                    # noqa: E402

VARIANT_ENDPOINTS = ("updateTable",)     # every endpoint behaviour applies to it; bounded runtime
VARIANT_BEHAVIOUR = BEHAVIOUR
VARIANT_TABLE: dict[str, dict[str, str]] = {}
NO_GRACE = "PT0S"        # so that only the lifetime-grace variant honours keys past the lifetime


def _all_checks(ctx) -> list:
    out = run_global_checks(ctx)
    for op in VARIANT_ENDPOINTS:
        out += run_endpoint_checks(ctx, op)
    return out


def _rows(verdicts) -> dict[str, str]:
    return {r["id"]: r["observed"] for r in behaviour_profile([v.to_dict() for v in verdicts])["rows"]}


@pytest.mark.parametrize("name", [None] + list(VARIANTS), ids=["(reference)"] + list(VARIANTS))
def test_variant_passes_under_spec_and_gets_the_design_verdict(make_ctx, name):
    """Under spec: no fail, no deviation, and the behaviour profile names the variant's path. Under design (the
    variant's requirements run again with --ctk-profile design): the verdict the design document gives."""
    ctx = make_ctx(variant=name, idempotency_grace=NO_GRACE)
    out = _all_checks(ctx)
    bad = [v for v in out if v.status in (Status.FAIL, Status.DEVIATION)]
    assert not bad, "\n\n".join(f"{v.requirement} {v.endpoint} {v.behaviour}: {v.status.value} "
                                 f"{v.classification}\n{v.message[:700]}" for v in bad)
    rows = _rows(out)
    variant = VARIANTS.get(name)
    for row, path in (variant.shows if variant else {}).items():
        assert path in rows[row], f"behaviour profile row {row!r}: {rows[row]!r}, expected {path!r}"
    spec_cells = {v.requirement: v.status.value for v in out if variant and v.requirement in variant.design}
    design_cells: dict[str, set[str]] = {}
    if variant:
        previous = _rq.set_profile("design")
        try:
            ctx2 = make_ctx(variant=name, idempotency_grace=NO_GRACE)
            behaviours = sorted({VARIANT_BEHAVIOUR[r] for r in variant.design})
            global_b = [b for b in behaviours if b in {BEHAVIOUR[g] for g in GLOBAL}]
            design_out = run_global_checks(ctx2, global_b) if global_b else []
            for op in VARIANT_ENDPOINTS:
                design_out += run_endpoint_checks(ctx2, op, [b for b in behaviours if b not in global_b])
        finally:
            _rq.set_profile(previous)
        for v in design_out:
            if v.requirement in variant.design:
                design_cells.setdefault(v.requirement, set()).add(v.status.value)
        assert {r: {s} for r, s in variant.design.items()} == design_cells, design_cells
    VARIANT_TABLE[name or "(reference, no grace)"] = {
        "path": "; ".join(f"{r}: {rows[r]}" for r in (variant.shows if variant else ("in-flight", "payload-mismatch",
                                                                                      "key-scope", "replay",
                                                                                      "lifetime", "key-formats"))),
        "spec": ", ".join(f"{r}: {s}" for r, s in sorted(spec_cells.items())) or
                f"{sum(v.status is Status.PASS for v in out)} pass, 0 fail, 0 deviation",
        "design": ", ".join(f"{r}: {'/'.join(sorted(s))}" for r, s in sorted(design_cells.items())),
    }


def summary() -> str:
    """The matrix of this session (tests/checks/conftest.py prints it at the end of the run): what each profile
    did to each requirement, and each variant's verdicts."""
    if not MATRIX and not VARIANT_TABLE:
        return ""
    reqs = sorted({r for row in MATRIX.values() for r in row})
    lines = ["profile".ljust(28) + " | requirement -> verdict"]
    for name, row in MATRIX.items():
        lines.append(name.ljust(28) + " | " + "; ".join(f"{r}: {row[r]}" for r in reqs if r in row))
    text = "SENSITIVITY MATRIX\n" + "\n".join(lines)
    if VARIANT_TABLE:
        out = [f"{'variant':<22} | {'spec profile (the variant requirements)':<44} | {'design profile':<40} | "
               "behaviour profile"]
        for name, row in VARIANT_TABLE.items():
            out.append(f"{name:<22} | {row['spec']:<44} | {row['design']:<40} | {row['path']}")
        text += "\n\nVARIANT x PROFILE (specificity: no fail, no deviation under spec)\n" + "\n".join(out)
    return text
