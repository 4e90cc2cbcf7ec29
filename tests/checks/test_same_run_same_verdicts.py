"""Issue 29 item 1, the whole kit: the same catalog gives the same results run after run, on a busy machine too.

Four `ctk run`s (the runner's default workers) against one plain `ctk serve` of the reference, with two CPU hogs
running beside them on this machine's cores, give the same status for every result, a result named by its check
(pytest node id), requirement, endpoint and behaviour; and the same set of results. The in-flight checks, whose
outcome once depended on the server's timing, are held four times against a variant as well in
test_inflight_same_results.py; every allowed variant is held to the reference's verdicts once in
test_sensitivity_workers.py. The same four runs against `ctk serve --control-api` (the runner's workers) find the
control API in every worker of every run (issue 36).

Four whole runs under load take several minutes: the CI lane (CI=true, as .ci/run sets it) runs it, and
CTK_SENSITIVITY_WORKERS=all (`nox -s sensitivity`); elsewhere it skips saying so."""

from __future__ import annotations

import os

import pytest

from required import in_ci
from user_path import cpu_hogs, run_kit, serve, status_table, verdict_diff

RUNS = 4
HOGS = 2
LANE = in_ci() or os.environ.get("CTK_SENSITIVITY_WORKERS", "").strip() == "all"


def result_id(r: dict) -> tuple[str, str, str, str]:
    return (r.get("nodeid") or "", r.get("requirement") or "", r.get("endpoint") or "", r.get("behaviour") or "")


def differences(a: list[dict], b: list[dict]) -> list[str]:
    return verdict_diff(a, b, key=result_id)


def _result(nodeid: str, requirement: str, endpoint: str, behaviour: str, status: str) -> dict:
    return {"nodeid": nodeid, "requirement": requirement, "endpoint": endpoint, "behaviour": behaviour,
            "status": status}


def test_differences_name_each_result_that_moved():
    a = [_result("t::x", "INFLIGHT-02", "updateProperties", "in-flight", "pass"), _result("t::y", "NS-01", "", "",
                                                                                          "pass")]
    b = [_result("t::x", "INFLIGHT-02", "updateProperties", "in-flight", "unsupported")]
    assert differences(a, b) == ["t::x INFLIGHT-02 updateProperties in-flight: pass vs unsupported",
                                 "t::y NS-01  : pass vs (none)"]
    assert differences(a, list(a)) == []


def _four_runs_under_load(tmp_path, control_api: bool) -> list:
    with cpu_hogs(HOGS), serve(control_api=control_api) as url:
        runs = [run_kit(url, tmp_path / f"run-{i}") for i in range(RUNS)]
    first = status_table(runs[0].results, result_id)
    assert len(first) == len(runs[0].results), "two results under one id: the comparison would be ambiguous"
    assert len(first) > 500, f"the first run recorded {len(first)} results:\n{runs[0].log}"
    assert runs[0].report.get("overall") == "pass", runs[0].log[-3000:]
    for i, run in enumerate(runs[1:], 2):
        moved = differences(runs[0].results, run.results)
        assert not moved, (f"run {i} of {RUNS} differs from run 1 in {len(moved)} result(s) "
                           f"({', '.join(f'{r.seconds:.0f} s' for r in runs)}):\n" + "\n".join(moved))
    return runs


@pytest.mark.skipif(not LANE, reason="four runs of the whole kit beside two CPU hogs (several minutes): the CI lane "
                                     "(CI=true) or CTK_SENSITIVITY_WORKERS=all runs it")
@pytest.mark.timeout(2400)   # four whole kit runs beside two CPU hogs: 570 s seen, the suite's 600 s is too tight
def test_four_runs_of_the_reference_give_the_same_result_per_check_under_load(tmp_path):
    """A plain `ctk serve` (no control API) reached by URL, as any catalog is: headline PASS and exit 0 on a busy
    runner, every MUST decided but those its setup cannot decide (each names what would: ``needs``; issue 34)."""
    runs = _four_runs_under_load(tmp_path, control_api=False)
    # PASS, not INCONCLUSIVE: an undecided MUST that names nothing that would decide it makes the headline so
    assert all(r.exit_code == 0 for r in runs), [(r.exit_code, r.report.get("overall")) for r in runs]


@pytest.mark.skipif(not LANE, reason="four runs of the whole kit with workers beside two CPU hogs (several minutes): "
                                     "the CI lane (CI=true) or CTK_SENSITIVITY_WORKERS=all runs it")
@pytest.mark.timeout(2400)
def test_four_worker_runs_against_the_control_api_find_it_every_time_under_load(tmp_path):
    """`ctk serve --control-api` and `ctk run` with its default workers (3), four times beside two CPU hogs:
    identical verdicts, and no worker takes the control API for missing (issue 36: one unreadable GET /_ctk made
    one worker judge its 35 RECON/REPLAY-03 checks "needs the reference control API", exit 0)."""
    runs = _four_runs_under_load(tmp_path, control_api=True)
    for i, run in enumerate(runs, 1):
        assert len(run.workers) >= 2, f"run {i} did not spread over workers: {run.workers}"
        missing = [f"{r.get('nodeid')} {r.get('requirement')}: {r.get('message', '')[:160]}" for r in run.results
                   if "/_ctk" in (r.get("needs") or "") or (r.get("message") or "").startswith("probe failed")]
        assert not missing, f"run {i}: the control API taken for missing or unread:\n" + "\n".join(missing[:20])
