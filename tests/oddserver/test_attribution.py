"""Verdicts on a deliberately odd catalog name the cause that was observed (issue 15, items 4 and 5).

Each test runs the kit's real checks against the reference catalog behind `odd.OddServer` with one oddity,
asserts that the oddity happened (the rule's hit counter), and asserts the verdict AND its stated cause."""

from __future__ import annotations

import odd
import pytest

from ctk.checks import concurrency
from ctk.core.verdicts import Status


def _by(verdicts, requirement):
    return [v for v in verdicts if v.requirement == requirement]


# (a) a commit conflict answered 409 without an error `type` -------------------------------------------------

def test_409_without_type_passes_occ_and_is_a_schema_finding(make_odd):
    rule = odd.conflict_without_type()
    ctx, _ = make_odd([rule])
    occ1 = concurrency.check_requirements(ctx)
    occ2 = concurrency.check_race(ctx, writers=4)
    assert rule.hits >= len(concurrency.REQUIREMENT_TYPES) + 3
    assert len(occ1) == len(concurrency.REQUIREMENT_TYPES)
    for v in occ1:
        assert v.status is Status.PASS, v.message
        assert "409 with an error body without `type`" in v.message
    [race] = occ2
    assert race.status is Status.PASS, race.message
    assert "3 got 409" in race.message

    # the missing `type` is what SCHEMA-01 reports (ErrorModel requires it), as a deviation of that SHOULD
    from ctk.openapi import load_spec
    from ctk.suites.test_schema import _verdict

    schema = _verdict(load_spec(None), list(ctx.client.exchanges), "the odd server's answers")
    assert schema.requirement == "SCHEMA-01" and schema.status is Status.DEVIATION
    assert "-> 409" in schema.message and "'type' is a required property" in schema.message


def test_conflict_answered_400_is_named(make_odd):
    class conflict_400(odd.Rule):
        def after(self, req, answer):
            if req.is_("POST", odd.TABLE) and answer.status == 409:
                self.hit()
                return odd.Answer.of(400, {"error": {"message": "Commit validation failed", "type":
                                                     "BadRequestException", "code": 400}})
            return None

    rule = conflict_400()
    ctx, _ = make_odd([rule])
    verdicts = concurrency.check_requirements(ctx)
    assert rule.hits
    for v in verdicts:
        assert v.status is Status.FAIL
        assert "a conflict answered 400" in v.message and "do not refresh and retry" in v.message


def test_error_with_200_status_is_named(make_odd):
    class error_200(odd.Rule):
        def after(self, req, answer):
            if req.is_("POST", odd.TABLE) and answer.status == 409:
                self.hit()
                return odd.Answer.of(200, answer.json())
            return None

    rule = error_200()
    ctx, _ = make_odd([rule])
    [v, *_] = concurrency.check_requirements(ctx)
    assert rule.hits
    assert v.status is Status.FAIL and "an error answered with status 200" in v.message


# (d) 5xx on some loadTable calls --------------------------------------------------------------------------

def test_5xx_on_every_state_read_is_state_unreadable_not_corrupt_or_lost(make_odd):
    """Appends are acknowledged, then every load of the table answers 503: nothing can be judged."""
    class loads_fail_after_commits(odd.Rule):
        def __init__(self):
            super().__init__()
            self.commits = 0

        def after(self, req, answer):
            if req.is_("POST", odd.TABLE) and answer.status == 200:
                self.commits += 1
            return None

        def before(self, req):
            if req.is_("GET", odd.TABLE) and self.commits >= 4:
                self.hit()
                return odd.Answer.of(503, {"error": {"message": "busy", "type": "ServiceUnavailable", "code": 503}})
            return None

    rule = loads_fail_after_commits()
    ctx, _ = make_odd([rule])
    # writers=1, appends=4: the 4 commits land before the loads start to fail, then every state read is 503
    verdicts = concurrency.check_serial_appends(ctx, writers=1, appends=4)
    assert rule.hits
    by = {v.requirement: v for v in verdicts}
    assert set(by) == {"OCC-03", "HIST-01", "HIST-02", "INTEG-01"}
    for v in by.values():
        assert v.status is Status.INCONCLUSIVE, (v.requirement, v.message)
        assert "state unreadable (503)" in v.message
        assert "CORRUPT" not in v.message and "missing" not in v.message
        assert any(e["status"] == 503 for e in v.exchanges)


def test_sporadic_5xx_on_loads_does_not_break_the_history_checks(make_odd):
    rule = odd.flaky_load_table(every=4)
    ctx, _ = make_odd([rule])
    verdicts = concurrency.check_serial_appends(ctx, writers=2, appends=3)
    assert rule.hits
    for v in verdicts:
        assert v.status is Status.PASS, (v.requirement, v.message)


def test_5xx_under_concurrent_commits_is_commit_state_unknown(make_odd):
    """Some commits answer 500 after they landed: recorded as info, neither success nor failure."""
    class commit_500_after_landing(odd.Rule):
        def after(self, req, answer):
            # appends only: the plain commit of updateTable's baseline (the gate) is answered as it is
            if req.is_("POST", odd.TABLE) and answer.status == 200 and self.hits < 2 and b"add-snapshot" in req.body:
                self.hit()
                return odd.Answer.of(500, {"error": {"message": "oops", "type": "InternalServerError", "code": 500}})
            return None

    rule = commit_500_after_landing()
    ctx, _ = make_odd([rule])
    verdicts = {v.requirement: v for v in concurrency.check_serial_appends(ctx, writers=2, appends=3)}
    assert rule.hits == 2
    occ3 = verdicts["OCC-03"]
    assert occ3.status is Status.PASS, occ3.message
    assert "2 commit(s) answered 5xx or nothing (commit state unknown, recorded as info; 2 found landed)" in occ3.message
    assert occ3.details["commit_state_unknown_count"] == 2      # what the reports count (ctk.reporting.model)
    assert verdicts["HIST-02"].status is Status.PASS        # the kit looked before retrying: nothing applied twice
    assert verdicts["HIST-01"].status is Status.PASS
    assert len(occ3.details["commit_state_unknown"]) == 2


# no vacuous verdicts (item 5) ----------------------------------------------------------------------------------

def test_no_commit_sent_is_inconclusive_not_0_snapshots(make_odd):
    """Every load of a table fails after creation: the writers cannot stage, no commit is sent."""
    rule = odd.flaky_load_table(every=1)
    ctx, _ = make_odd([rule])
    verdicts = concurrency.check_serial_appends(ctx, writers=2, appends=2, max_attempts=2)
    assert rule.hits
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE, (v.requirement, v.message)
        assert "no commit was sent" in v.message and "staging failed" in v.message
        assert "snapshots instead of" not in v.message and "all 0" not in v.message


def test_writer_thread_crash_is_recorded_and_shown(make_odd, monkeypatch):
    ctx, _ = make_odd([])
    real = concurrency._commit
    calls = {"n": 0}

    def crashing(ctx_, staged, label):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("boom in writer")
        return real(ctx_, staged, label)

    monkeypatch.setattr(concurrency, "_commit", crashing)
    verdicts = {v.requirement: v for v in concurrency.check_serial_appends(ctx, writers=1, appends=3)}
    occ3 = verdicts["OCC-03"]
    assert occ3.status is Status.INCONCLUSIVE, occ3.message
    assert "writer 0 crashed: RuntimeError: boom in writer" in occ3.message
    assert any("worker crashed: RuntimeError: boom in writer" in e for e in occ3.details["history_errors"])
    assert verdicts["HIST-01"].status is Status.PASS and "boom in writer" in verdicts["HIST-01"].message


# OCC-04 on a catalog that does not route multi-table transactions -------------------------------------------

def test_unrouted_transactions_are_advertised_but_not_served(make_odd):
    """The reference lists commitTransaction in /v1/config; answered 404 without an error model (a router's), OCC-04
    is inconclusive resting on DISC-05 (issue 34: "an advertised transactions/commit answering 404 was 'not
    served' with nothing said about the contradiction")."""
    rule = odd.not_routed("POST", r"/transactions/commit$")
    ctx, _ = make_odd([rule])
    [v] = concurrency.check_transaction(ctx)
    assert rule.hits >= 1          # the check's own request (and the plain commitTransaction of its baseline)
    assert v.status is Status.INCONCLUSIVE and v.details["blocked_by"] == "DISC-05", v.message
    assert v.message.startswith("advertised but not served (DISC-05)") and "not served by the target" in v.message
    assert "404 without an error model" in v.message
    # nor is the router's plain 404 a SCHEMA-01 deviation: the operation is unsupported, not malformed
    from ctk.openapi import load_spec
    from ctk.suites.test_schema import _verdict

    assert any(e.status == 404 and "transactions/commit" in e.url for e in ctx.client.exchanges)
    schema = _verdict(load_spec(None), list(ctx.client.exchanges), "the odd server's answers")
    assert schema.status is Status.PASS, schema.message


# a failing setup step is inconclusive with that step's exchange ------------------------------------------------

def test_setup_failure_is_inconclusive_with_its_exchange(make_odd):
    class create_table_fails(odd.Rule):
        def before(self, req):
            if req.is_("POST", r"/namespaces/[^/]+/tables$"):
                self.hit()
                return odd.Answer.of(500, {"error": {"message": "no", "type": "ServerError", "code": 500}})
            return None

    rule = create_table_fails()
    ctx, _ = make_odd([rule])
    verdicts = (concurrency.check_requirements(ctx) + concurrency.check_race(ctx, 3)
                + concurrency.check_serial_appends(ctx, 1, 1) + concurrency.check_transaction(ctx))
    assert rule.hits >= 4
    assert {v.requirement for v in verdicts} == {"OCC-01", "OCC-02", "OCC-03", "OCC-04", "HIST-01", "HIST-02",
                                                 "INTEG-01"}
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE, (v.requirement, v.message)
        assert "setup" in v.message and "create table" in v.message and "500" in v.message
        assert any(e["status"] == 500 for e in v.exchanges)


# (c) a network duplicate whose first attempt failed -----------------------------------------------------------

def test_network_duplicate_of_a_failed_first_attempt_is_not_executed_again(make_odd):
    """registerView refuses the metadata file the kit registers (400), so the request fails: its network copy
    is judged as the copy of a failed request, not as a second execution. (This used to come from a dropView
    that deletes the metadata file; the kit now keeps a copy of it: tests/checks/test_register_kept_metadata.py.)"""
    from ctk.checks.network import check_network_scenario

    class register_view_refused(odd.Rule):
        def before(self, req):
            if req.is_("POST", r"/namespaces/[^/]+/register-view$"):
                self.hit()
                return odd.Answer.of(400, {"error": {"message": "Cannot read view metadata", "code": 400,
                                                     "type": "BadRequestException"}})
            return None

    rule = register_view_refused()
    ctx, _ = make_odd([rule], interposer=True)
    [v] = check_network_scenario(ctx, "registerView", ctx.test_interposer, "network-duplicate")
    assert rule.hits >= 2                               # the request and its network copy were both refused
    assert v.requirement == "HIST-02"
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "first attempt, the one the network copied, got 4" in v.message
    assert "executed again" not in v.message
    assert v.details["first_attempt"].split()[0] == str(v.details["attempts"][0])


def test_network_duplicate_still_passes_without_the_oddity(make_odd):
    from ctk.checks.network import check_network_scenario

    ctx, _ = make_odd([], interposer=True)
    [v] = check_network_scenario(ctx, "registerView", ctx.test_interposer, "network-duplicate")
    assert v.status in (Status.PASS, Status.INCONCLUSIVE), v.message
    assert "first attempt" not in v.message


# (b) nested namespaces created with 200 but answered 404 on load -----------------------------------------------

def test_unloadable_nested_namespace_is_not_a_key_handling_failure(make_odd):
    from ctk.checks.discovery import check_key_ignored_when_unsupported

    rule = odd.nested_namespaces_unloadable()
    ctx, _ = make_odd([rule], idempotency_lifetime=None)
    [v] = check_key_ignored_when_unsupported(ctx)
    assert rule.hits
    assert v.requirement == "DISC-04"
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "neither effect is visible in state" in v.message and "key handling cannot be judged" in v.message
    assert v.details["status"] == 200 and v.details["control_status"] == 200


def test_key_ignored_check_still_catches_a_server_that_drops_keyed_mutations(make_odd):
    """The control keeps DISC-04 sensitive: a server that answers 200 to a keyed create but does nothing."""
    class keyed_create_ignored(odd.Rule):
        def before(self, req):
            if req.is_("POST", r"/namespaces$") and any(k.lower() == "idempotency-key" for k, _ in req.headers):
                self.hit()
                return odd.Answer.of(200, {"namespace": req.json()["namespace"], "properties": {}})
            return None

    from ctk.checks.discovery import check_key_ignored_when_unsupported

    rule = keyed_create_ignored()
    ctx, _ = make_odd([rule], idempotency_lifetime=None)
    [v] = check_key_ignored_when_unsupported(ctx)
    assert rule.hits == 1
    assert v.status in (Status.FAIL, Status.DEVIATION), v.message     # the level is the registry's
    assert "executions visible in state: 0" in v.message


# (f) `metadata_location` instead of `metadata-location` ----------------------------------------------------

def test_snake_case_metadata_location_is_named_as_the_cause(make_odd):
    """The field is optional in LoadTableResult, so the schema alone passes it; the real-client check names it."""
    real_client = pytest.importorskip("ctk.checks.real_client", reason="the real-client check is not built yet")
    rule = odd.snake_case_metadata_location()
    ctx, _ = make_odd([rule])
    verdicts = real_client.check_pyiceberg(ctx)
    assert rule.hits
    [v] = [v for v in verdicts if v.requirement == real_client.REQ]
    assert v.status in (Status.FAIL, Status.DEVIATION), v.message
    assert "metadata_location" in v.message and "`metadata-location`" in v.message


def test_seed_example_with_unreadable_state_is_not_corrupt(make_odd):
    """Example 1b through the interposer; after the append every load answers 503: inconclusive, not CORRUPT."""
    from ctk.checks.network import run_seed_example

    class loads_fail_after_a_commit(odd.Rule):
        def __init__(self):
            super().__init__()
            self.committed = False

        def after(self, req, answer):
            # the append: the plain set-properties commit of updateTable's baseline (the gate) leaves loads alone
            if req.is_("POST", odd.TABLE) and answer.status == 200 and b"add-snapshot" in req.body:
                self.committed = True
            return None

        def before(self, req):
            if req.is_("GET", odd.TABLE) and self.committed:
                self.hit()
                return odd.Answer.of(503, {"error": {"message": "busy", "type": "Unavailable", "code": 503}})
            return None

    rule = loads_fail_after_a_commit()
    ctx, _ = make_odd([rule], interposer=True)
    verdicts = run_seed_example(ctx, ctx.test_interposer, variants=("1b",))
    assert rule.hits
    assert {v.requirement for v in verdicts} == {"INTEG-01", "REPLAY-04"}
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE, v.message
        assert "state unreadable (503)" in v.message and "CORRUPT" not in v.message


def test_5xx_while_observing_an_endpoint_case_is_state_unreadable(make_odd):
    """The idempotency checks observe state through loads; a 503 there is named, never a failure."""
    from ctk.checks import run_endpoint_checks

    rule = odd.flaky_load_table(every=1)
    ctx, _ = make_odd([rule])
    verdicts = run_endpoint_checks(ctx, "updateTable", ["finalized-duplicate"])
    assert rule.hits and verdicts
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE, v.message
        assert v.message.startswith("state unreadable (503)"), v.message
        assert any(e["status"] == 503 for e in v.exchanges)


def test_operation_the_target_does_not_route_is_not_failed(make_odd):
    """registerView, listed in /v1/config, answered 404 without an error model (a router's answer): the idempotency
    checks of it are not failed but inconclusive, naming the route and DISC-05 (advertised but not served)."""
    from ctk.checks import run_endpoint_checks

    rule = odd.not_routed("POST", r"/register-view$")
    ctx, _ = make_odd([rule])
    verdicts = run_endpoint_checks(ctx, "registerView", ["finalized-duplicate", "terminal-4xx-replayed"])
    assert rule.hits and verdicts
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE and v.details["blocked_by"] == "DISC-05", v.message
        assert "registerView is not served by the target" in v.message
        assert "404 without an error model" in v.message


def test_unrouted_prerequisite_operation_rests_on_disc05(make_odd):
    """The registerView case needs createView, which /v1/config lists; a target that does not route it leaves the
    checks inconclusive, naming the operation they need and DISC-05 (advertised but not served)."""
    from ctk.checks import run_endpoint_checks

    rule = odd.not_routed("POST", r"/views$")
    ctx, _ = make_odd([rule])
    verdicts = run_endpoint_checks(ctx, "registerView", ["finalized-duplicate"])
    assert rule.hits and verdicts
    for v in verdicts:
        assert v.status is Status.INCONCLUSIVE and v.details["blocked_by"] == "DISC-05", v.message
        assert v.details["advertised_unserved"]["operation"] == "createView", v.details
        assert "an operation the check needs is not served by the target" in v.message and "create view" in v.message


def test_race_winner_answered_500_is_commit_state_unknown_not_a_failure(make_odd):
    """The winning commit lands but is answered 500: OCC-02 still sees one snapshot land and 409s for the rest;
    the 500 is reported as commit state unknown, counted neither as a win nor as a conflict."""
    class winner_500(odd.Rule):
        def after(self, req, answer):
            if req.is_("POST", odd.TABLE) and answer.status == 200 and b"race-" in req.body and not self.hits:
                self.hit()
                return odd.Answer.of(500, {"error": {"message": "lost", "type": "InternalServerError", "code": 500}})
            return None

    rule = winner_500()
    ctx, _ = make_odd([rule])
    [v] = concurrency.check_race(ctx, writers=4)
    assert rule.hits == 1
    assert v.status is Status.PASS, v.message
    assert "1 commit(s) answered 5xx or nothing (commit state unknown, counted neither as win nor as conflict; " \
           "1 of them landed)" in v.message
    assert v.details["commit_state_unknown"]["landed"] == v.details["commit_state_unknown"]["writers"]
    assert v.details["commit_state_unknown_count"] == 1          # what the reports count (ctk.reporting.model)
