"""Every endpoint check on every endpoint: all pass on the reference catalog, and under each deviation profile
each endpoint shows exactly the requirements the profile breaks there (`catches`, narrowed per endpoint by
`shown_on`), each with the verdict its level calls for; no check ends in error, and none that decides on the
reference is left inconclusive or unsupported unless the requirement it builds on is the one broken there
(BUILDS_ON). Part of the default run (under 3 minutes on a loaded 2-core machine): the endpoints of one
profile run side by side in threads, each on a reference catalog of its own, and a profile runs only the
behaviours that judge what it breaks (test_sensitivity.py runs every check under every profile on createTable
and updateTable, and the whole kit as a user runs it is test_sensitivity_workers.py)."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import pytest

from ctk.catalog import ENDPOINTS
from ctk.checks import ENDPOINT_CHECKS, run_endpoint_checks
from ctk.checks.context import CheckContext, CheckOptions
from ctk.client.config import TargetConfig
from ctk.client.transport import CatalogClient
from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status
from ctk.reference import deviations
from ctk.reference.deviations import PROFILES
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.reference.variants import VARIANTS

LIFETIME = "PT4S"
THREADS = 4               # endpoints of one profile at once: the checks mostly wait on the catalog's answers
# the behaviour whose check judges each endpoint-level requirement
BEHAVIOUR = {"REPLAY-01": "finalized-duplicate", "REPLAY-02": "terminal-4xx-replayed", "REPLAY-03": "5xx-not-stored",
             "REPLAY-04": "lost-answer", "INFLIGHT-01": "in-flight-duplicate", "INFLIGHT-02": "in-flight-duplicate",
             "PAYLOAD-01": "payload-mismatch", "SCOPE-01": "key-scope", "SCOPE-02": "key-scope",
             "LIFE-01": "lifetime", "RECON-01": "replay-failed", "RECON-02": "crash-reconciled"}
# The lifetime check waits most of the lifetime: it runs on the endpoints test_sensitivity.py runs, the two
# ends of the catalog's operations, and dropTable (replay-purges shows LIFE-01 there only).
LIFETIME_ENDPOINTS = ("createNamespace", "updateTable", "dropTable")
# A requirement whose check needs the one before it to hold (a replay to inspect, an in-flight 409, a key still
# honoured, a stored answer, keys scoped per operation) is undecided - inconclusive, never a verdict - where
# that one is broken on the same endpoint.
BUILDS_ON = {"REPLAY-05": "REPLAY-01", "INFLIGHT-02": "INFLIGHT-01", "LIFE-03": "LIFE-01", "RECON-03": "RECON-01",
             "SCOPE-01": "SCOPE-02"}
DECIDED = (Status.PASS, Status.FAIL, Status.DEVIATION)
# Their terminal 4xx: the plan's (or plan task's) table renamed away, 404 NoSuchTable; renaming it back clears it.
PLANNING_4XX = ("cancelPlanning", "fetchScanTasks")
OPTIONS = CheckOptions(max_wait=8.0, inflight_hold=1.0, lose_modes=("503", "reset"))


def _behaviours(op: str, wanted: set[str] | None = None) -> list[str]:
    every = [str(b) for b, _ in ENDPOINT_CHECKS if str(b) != "lifetime" or op in LIFETIME_ENDPOINTS]
    return [b for b in every if wanted is None or b in wanted]


def _run_every_endpoint(tmp_path, deviation: str | None, wanted: set[str] | None = None) -> dict[str, list]:
    """operationId -> the verdicts of `wanted` behaviours (all: None) on a fresh reference catalog each."""
    numbers = itertools.count()

    def one(op: str) -> tuple[str, list]:
        settings = ReferenceSettings(warehouse=str(tmp_path / f"wh-{op}-{next(numbers)}"), control_api=True,
                                     deviation=deviation, idempotency_lifetime=LIFETIME)
        with ReferenceServer(settings) as ref, CatalogClient(TargetConfig(ref.url, timeout=20.0)) as client:
            return op, run_endpoint_checks(CheckContext.create(client, options=OPTIONS), op, _behaviours(op, wanted))

    with ThreadPoolExecutor(THREADS) as pool:
        return dict(pool.map(one, sorted(ENDPOINTS)))


def _line(v) -> str:
    return f"{v.endpoint} {v.requirement} {v.behaviour}: {v.status.value} {v.classification or ''}: {v.message[:300]}"


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, list]:
    """Every endpoint check on every endpoint of the reference catalog, once for the module."""
    return _run_every_endpoint(tmp_path_factory.mktemp("reference"), None)


def _decided(verdicts) -> set[str]:
    return {v.requirement for v in verdicts if v.status is Status.PASS}


@pytest.mark.parametrize("op", sorted(ENDPOINTS))
def test_every_check_passes(reference, op):
    verdicts = reference[op]
    judged = {r for r in BEHAVIOUR if r != "LIFE-01" or op in LIFETIME_ENDPOINTS}
    assert judged <= {v.requirement for v in verdicts}, f"no verdict for {sorted(judged - {v.requirement for v in verdicts})}"
    for v in verdicts:
        if v.requirement == "PAYLOAD-01" and not ENDPOINTS[op].has_payload:
            assert v.status is Status.UNSUPPORTED
            continue
        assert v.status is Status.PASS, f"{v.requirement} {v.behaviour}: {v.status.value}\n{v.message}"


def test_per_endpoint_forms_name_known_endpoints_and_caught_requirements():
    assert set(deviations._ALL_ENDPOINTS) == set(ENDPOINTS)
    for profile in PROFILES.values():
        for requirement, ops in profile.shown_on.items():
            assert requirement in profile.catches and requirement in BEHAVIOUR, (profile.name, requirement)
            assert ops and set(ops) <= set(ENDPOINTS), (profile.name, requirement, ops)


ENDPOINT_PROFILES = sorted(n for n, p in PROFILES.items() if set(p.catches) & set(BEHAVIOUR))


def test_profiles_without_endpoint_catches_break_only_global_or_whole_kit_rules():
    """The profiles the per-endpoint matrix leaves out catch nothing an endpoint check judges (test_sensitivity.py
    covers them)."""
    left_out = sorted(set(PROFILES) - set(ENDPOINT_PROFILES))
    assert len(left_out) + len(ENDPOINT_PROFILES) == len(PROFILES) and len(ENDPOINT_PROFILES) >= 14
    for name in left_out:
        assert not set(PROFILES[name].catches) & set(BEHAVIOUR), name


@pytest.mark.parametrize("name", ENDPOINT_PROFILES)
def test_profile_is_caught_on_every_endpoint_it_affects(reference, tmp_path, name):
    profile = PROFILES[name]
    wanted = {BEHAVIOUR[r] for r in profile.catches if r in BEHAVIOUR}
    runs = _run_every_endpoint(tmp_path, name, wanted)
    problems: list[str] = []
    shown = 0
    for op, verdicts in sorted(runs.items()):
        decided = _decided(reference[op])
        expected = {r for r in profile.catches if r in BEHAVIOUR and r in decided and profile.shown_on_endpoint(r, op)}
        broken = {v.requirement for v in verdicts if v.status in (Status.FAIL, Status.DEVIATION)
                  or v.details.get("rule_broken")}
        shown += len(expected)
        if broken != expected:
            problems.append(f"{op}: expected broken {sorted(expected)}, got {sorted(broken)}:\n    "
                            + "\n    ".join(_line(v) for v in verdicts if v.requirement in broken ^ expected))
        for v in verdicts:
            if v.requirement in broken and v.status.value != status_if_broken(v.requirement):
                problems.append(f"{op}: {v.requirement} broken with {v.status.value}, its level calls for "
                                f"{status_if_broken(v.requirement)}: {_line(v)}")
            if v.status is Status.ERROR:
                problems.append(f"{op}: a check crashed: {_line(v)}")
            elif v.status not in DECIDED and v.requirement in decided and BUILDS_ON.get(v.requirement) not in broken:
                problems.append(f"{op}: undecided where the reference decides it: {_line(v)}")
    assert shown, f"{name}: no endpoint shows any of {profile.catches}"
    assert not problems, f"{name} ({profile.breaks}):\n" + "\n".join(problems)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_planning_4xx_replay_is_broken_exactly_by_its_profiles(make_ctx, profile):
    """Sensitivity of REPLAY-02 on the planning operations: the profiles that list REPLAY-02 (a terminal 404 not
    stored, no replay, keys honoured on one endpoint only) make the retry after the rename back re-execute - the
    plan cancelled, the task fetched - and the check says so; every other profile leaves it a pass (or
    unsupported where the key is not advertised)."""
    verdicts = run_endpoint_checks(make_ctx(deviation=profile), PLANNING_4XX[0], ["terminal-4xx-replayed"]) + \
        run_endpoint_checks(make_ctx(deviation=profile), PLANNING_4XX[1], ["terminal-4xx-replayed"])
    assert len(verdicts) == 2
    for v in verdicts:
        if "REPLAY-02" in PROFILES[profile].catches:
            assert v.status is Status.DEVIATION and v.classification == "re-executed", (v.endpoint, v.message)
            assert "the state shows the request was executed on the retry" in v.message, v.message
        else:
            assert v.status in (Status.PASS, Status.UNSUPPORTED), (v.endpoint, v.status, v.message)
            assert v.status is Status.UNSUPPORTED or v.classification == "replayed 404", (v.endpoint, v.message)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_planning_4xx_replay_passes_on_every_allowed_variant(make_ctx, variant):
    """Specificity: each allowed-variant profile replays the stored 404 NoSuchTable on both operations."""
    for op in PLANNING_4XX:
        [v] = run_endpoint_checks(make_ctx(variant=variant), op, ["terminal-4xx-replayed"])
        assert v.status is Status.PASS and v.classification == "replayed 404", (op, v.message)
