"""Root causes: under each deviation profile of the reference catalog, the first root cause the reports show is
the rule that profile breaks (ctk/reference/deviations.py: each breaks one rule).

Fast: the findings are those the whole-kit run of tests/checks/test_sensitivity.py gets under each profile,
recorded in data/root_cause_findings.json (requirement, status, endpoint, behaviour, classification and the
lines of the message the grouping reads). test_sensitivity.py asserts the same first root cause on its live
verdicts, so a change of the checks' wording that the grouping no longer reads fails there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctk.core.requirements import status_if_broken
from ctk.core.verdicts import Status, Verdict
from ctk.reference.deviations import PROFILES
from ctk.reporting.model import RunReport
from ctk.reporting.rootcause import root_causes

FINDINGS = json.loads((Path(__file__).parent / "data" / "root_cause_findings.json").read_text())

# the rule each profile breaks, as the first root cause shows it; None: the profile breaks only rules the merged
# spec leaves open (CLASSIFIED), so under the spec profile there is no finding at all
FIRST_ROOT_CAUSE: dict[str, str | None] = {
    "lifetime-in-overrides": "req:DISC-02", "lifetime-weeks": "req:DISC-03",
    "no-discovery-rejects-key": "req:DISC-04", "accept-malformed-key": "req:KEY-01",
    "accept-repeated-key": "req:KEY-02",
    "no-replay": "duplicate-executed-again", "keys-partial": "key-ignored",
    "replay-different-body": "replay-differs", "replay-purges": "duplicate-executed-again",
    "terminal-4xx-not-stored": "terminal-4xx-not-finalized", "store-5xx": "5xx-stored",
    "in-flight-reexecutes": "in-flight-executed-twice", "in-flight-plain-409": None,
    "no-payload-check": None, "scope-ignored": None, "reuse-5xx": "req:SCOPE-02",
    "short-lifetime": "key-forgotten-early", "replay-failed-reexecutes": "unreadable-record-reexecutes",
    "no-reconcile": "crash-record-reexecuted", "stale-requirement-accepted": "commit-requirements-unchecked",
    "no-atomic-swap": "concurrent-commits-not-serialized", "transaction-not-atomic": "transaction-not-atomic",
    "view-replace-keeps-old-version": "req:VIEW-06",
    "missing-metadata-5xx": "req:TBL-05",
    "replace-loses-snapshot-log": "req:TXN-03",
    "drop-namespace-not-empty": "req:NS-07",
    "list-pages-overlap": "req:LIST-02",
    "table-uuid-unchecked": "commit-requirements-unchecked",
}


def test_every_profile_names_its_rule():
    assert set(FIRST_ROOT_CAUSE) == set(PROFILES), "a new deviation profile needs the rule it breaks here"
    assert set(FINDINGS) == set(PROFILES), "record the new profile's findings (see the module docstring)"


@pytest.mark.parametrize("name", sorted(FIRST_ROOT_CAUSE))
def test_first_root_cause_is_the_rule_the_profile_breaks(name):
    causes = root_causes(FINDINGS[name])
    expected = FIRST_ROOT_CAUSE[name]
    if expected is None:
        assert all(status_if_broken(r) == "pass" for r in PROFILES[name].catches if r in ("INFLIGHT-02",
                                                                                         "PAYLOAD-01", "SCOPE-01"))
        assert causes == []
        return
    assert causes and causes[0].rule.id == expected, [(c.rule.id, c.requirements) for c in causes]
    # the first root cause explains most of the profile's findings, and every one of them belongs to one cause
    assert sum(len(c.findings) for c in causes) == len(FINDINGS[name])
    assert len(causes[0].findings) * 2 > len(FINDINGS[name]), [(c.rule.id, len(c.findings)) for c in causes]


def test_one_rule_broken_everywhere_is_one_root_cause():
    """no-replay: REPLAY-01, REPLAY-04, LIFE-01, RECON-01 and the generated checks on every endpoint are one
    rule, not a dozen findings to read one by one."""
    [first, *_] = root_causes(FINDINGS["no-replay"])
    assert {"REPLAY-01", "REPLAY-04", "LIFE-01", "RECON-01", "GEN-02"} <= set(first.requirements)
    assert first.status == "fail" and first.rule.requirement == "REPLAY-01"
    assert {"createTable", "updateTable"} <= set(first.endpoints)


def test_root_causes_in_json_junit_and_html(tmp_path):
    from ctk.reporting.conformance import write_conformance
    from ctk.reporting.junit import statistics

    rep = RunReport.begin("http://127.0.0.1:8181")
    for i, d in enumerate(FINDINGS["store-5xx"]):
        rep.add(Verdict(d["requirement"], Status(d["status"]), d["message"], endpoint=d["endpoint"],
                        behaviour=d["behaviour"], classification=d["classification"]), f"t{i}")
    rep.add(Verdict.ok("REPLAY-01", "replayed"), "t-pass")
    rep.finish()
    data = rep.to_dict()
    assert data["root_causes"][0]["rule"] == "5xx-stored" and data["root_causes"][0]["findings"] == 3
    props = dict(statistics(rep))
    assert props["ctk.root_cause.1.rule"] == "5xx-stored"
    # the finding first (what was seen, where), the rule after it
    line = props["ctk.root_cause.1"]
    assert line.startswith("FAIL REPLAY-03 (MUST) on "), line
    assert line.index(": ") < line.index("- rule: A 5xx is stored and replayed"), line
    html = Path(write_conformance(rep, str(tmp_path))["html"]).read_text()
    top = html.index('id="root-causes"')
    assert top < html.index("Needs attention") and top < html.index("Endpoint × behaviour matrix")
    assert 'data-rule="5xx-stored"' in html


def test_commit_state_unknown_under_contention_needs_attention(tmp_path):
    """5xx answers to concurrent commits were only an inconclusive result's words: they are listed under "Needs
    attention" with counts (conformance.html, conformance.json, the terminal)."""
    from ctk.reporting.conformance import write_conformance

    rep = RunReport.begin("http://127.0.0.1:8181")
    rep.add(Verdict.inconclusive("OCC-02", "every commit answered 5xx or nothing (commit state unknown): nothing "
                                 "to judge; 8 commit(s) answered 5xx or nothing (commit state unknown, counted "
                                 "neither as win nor as conflict; 0 of them landed)", behaviour="race",
                                 classification="0 won, 0 got 409, 8 commit state unknown (5xx)",
                                 details={"commit_state_unknown_count": 8}), "race")
    rep.add(Verdict.ok("OCC-03", "12 snapshots; 3 commit(s) answered 5xx or nothing (commit state unknown, recorded "
                       "as info; 3 found landed)", details={"commit_state_unknown_count": 3}), "appends")
    rep.add(Verdict.ok("OCC-04", "reworded: the count is read, not the words; 2 commit(s) answered 5xx or nothing"),
            "appends")
    rep.add(Verdict.ok("OCC-01", "409 for a stale requirement"), "occ1")
    rep.finish()
    [note] = rep.to_dict()["attention"]
    assert note["what"] == "commit state unknown under contention"
    assert note["count"] == 11 and note["requirements"] == {"OCC-02": 8, "OCC-03": 3}
    html = Path(write_conformance(rep, str(tmp_path))["html"]).read_text()
    needs = html.index("<h3>Needs attention</h3>")
    assert html.index("commit state unknown under contention", needs) < html.index("Target and discovery")


def test_scenario_files_and_seed_1b_findings_join_the_rule():
    """A `ctk run` also runs the scenario files and seed example 1b: their findings under no-replay are the same
    rule (a re-execution), not root causes of their own."""
    def v(req, msg, ep, cls=None):
        scenario = msg.split("'")[1] if msg.startswith("scenario ") else None
        return {"requirement": req, "status": "fail", "endpoint": ep, "behaviour": None, "classification": cls,
                "message": msg, "details": {"from_scenario": scenario} if scenario else {}}

    findings = [
        v("REPLAY-01", "expected: ...\nhappened: the state shows the mutation executed again on the retry",
          "createTable", "re-executed"),
        v("REPLAY-01", "scenario 'createNamespace finalized duplicate', steps[1] (a replay leaves the dropped "
          "namespace absent, a re-execution brings it back): namespace_exists(namespace=['n']): expected false, "
          "observed true", "createNamespace", "status 200"),
        v("REPLAY-04", "scenario 'createNamespace committed but the answer was lost', steps[0] (retry with the same "
          "key (a re-execution would answer 409 AlreadyExists)): expected status 200, got 409", "createNamespace"),
        v("REPLAY-04", "expected: ...\nhappened: the retry got 409 CommitFailedException, not 200; history check: "
          "INVALID", "updateTable", "409 CommitFailedException"),
        v("INTEG-01", "expected: ...\nhappened: example 1b: attempts [503, 409]; the client took the final 409 "
          "CommitFailedException for a failed commit and deleted 2 staged file(s); table CORRUPT", "updateTable"),
    ]
    [only] = root_causes(findings)
    assert only.rule.id == "duplicate-executed-again" and len(only.findings) == 5


def test_a_scenario_finding_is_known_by_its_field_not_its_words():
    """The scenario origin is ``details.from_scenario`` (ctk.scenarios.runner): a check's message that happens to
    start with "scenario " is no scenario step, and a scenario step's message may say anything."""
    from ctk.reporting.rootcause import _symptom

    step = ("scenario 'x', steps[1] (a replay leaves it absent, a re-execution brings it back): expected false, "
            "observed true")
    assert _symptom({"requirement": "REPLAY-01", "message": step, "details": {"from_scenario": "x"}}) \
        == "executed-again"
    assert _symptom({"requirement": "REPLAY-01", "message": step, "details": {}}) is None


def test_a_classified_pass_is_known_by_its_field():
    """Verdict.broken under a profile that does not state the rule marks it (details.rule_broken); the reports read
    the mark, not the message's first words."""
    from ctk.core.requirements import REQUIREMENTS, active_profile
    from ctk.reporting.model import is_classified

    classified = [r for r in REQUIREMENTS if status_if_broken(r, active_profile()) == "pass"]
    v = Verdict.broken(classified[0], "x")
    assert v.status is Status.PASS and v.details.get("rule_broken") and is_classified(v)
    assert not is_classified(Verdict.ok("REPLAY-01", "classified, not judged under the spec profile: reworded"))
