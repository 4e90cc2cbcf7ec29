"""Issue 34 item 4: gates and root causes by dependency. A finding blocks only the verdicts that need what it broke;
a required field missing from an answer is named as that, with the field; a stale requirement answered as a success
fails OCC-01 whatever the updates did; one broken rule is one root cause across families.

Each test puts one odd catalog in front of the reference (`odd_semantics`, or a deviation profile of the reference
itself), runs the kit in process as `test_semantics_first` does and asserts the first root cause and the fails.

Before (the issue):
* every table answer naming the field `metadata_location`: "FAIL EVO-01: the commit answered None, the load shows
  None" first, the field never named; OCC-01..04, HIST-01/02, INTEG-01, CLIENT-01 inconclusive behind that gate;
  EVO-08 failed although the metadata log is right;
* every commit answered 200 and nothing applied: OCC-01 "decided once EVO-01 is fixed";
* a commit applying only its first update: OCC-01, OCC-02, OCC-03, REPLAY-04 and CLIENT-01 failed (their setup
  append left no main ref; the read-back checked only that a snapshot exists);
* a new table-uuid on every load: OCC-04 failed (its valid transaction asserted the uuid of the load), and RECON-02
  on registerTable (a new uuid read as a second execution: the case's sources were read back only for loading);
* requirements ignored, updates applied: EVO-02, EVO-03, EVO-04 and OCC-01 as root causes of their own."""

from __future__ import annotations

from odd_semantics import (commits_discarded, first_update_only, metadata_location_snake_case, new_uuid_every_load,
                           statuses)
from test_semantics_first import RETRY_FAMILIES, _causes, _kit

from ctk.core.verdicts import Status

DEPENDENT = ("OCC-", "REPLAY-", "CLIENT-", "HIST-", "INTEG-")


def _fails(verdicts, prefixes=DEPENDENT):
    return [(v.requirement, v.endpoint, v.behaviour.value if v.behaviour else None, v.message[:300])
            for v in verdicts if v.status in (Status.FAIL, Status.ERROR) and v.requirement.startswith(prefixes)]


def _show(verdicts):
    lines = [rc.line() for rc in _causes(verdicts)]
    print("\n".join(["root causes:"] + lines[:6]))
    print("fails:", sorted({(v.requirement, v.endpoint) for v in verdicts
                            if v.status in (Status.FAIL, Status.ERROR)}))
    return lines


def test_a_required_field_missing_is_named_first_and_occ_stays_decided(make_odd):
    rule = metadata_location_snake_case()
    ctx, _ = make_odd([rule], control_api=True)
    verdicts = _kit(ctx, ("evolution",), ("updateTable",), client=True)
    lines = _show(verdicts)
    assert rule.hits >= 3
    [first, *_] = _causes(verdicts)
    assert first.rule.id == "required-field-missing" and "`metadata-location`" in lines[0], lines
    assert "None" not in lines[0].split(":", 1)[1], lines[0]
    # the commits work (the change loads back): what rests on them is decided, not held behind the answer's shape
    for req in ("OCC-01", "OCC-02", "OCC-03", "OCC-04", "HIST-01", "HIST-02", "INTEG-01"):
        got = [v for v in verdicts if v.requirement == req]
        assert got and all(v.status in (Status.PASS, Status.FAIL, Status.DEVIATION) for v in got), \
            (req, statuses(got), [v.message[:200] for v in got])
    assert not [v for v in verdicts if v.requirement.startswith("OCC-") and v.status is not Status.PASS]
    # the metadata log is right: EVO-08 does not fail on locations the answers did not carry
    assert not [v for v in verdicts if v.requirement == "EVO-08" and v.status is Status.FAIL], lines


def test_a_stale_requirement_answered_200_fails_occ01_though_nothing_is_applied(make_odd):
    ctx, odd = make_odd(lambda up: [commits_discarded(up)], control_api=True)
    verdicts = _kit(ctx, ("evolution",), ("updateTable", "commitTransaction"))
    lines = _show(verdicts)
    assert odd.rules[0].hits >= 3
    occ01 = [v for v in verdicts if v.requirement == "OCC-01"]
    failed = [v for v in occ01 if v.status is Status.FAIL]
    assert failed and all("accepted" in v.message for v in failed), statuses(occ01)
    # EVO-01 is still the first root cause: nothing a commit says is applied
    assert _causes(verdicts)[0].rule.requirement == "EVO-01", lines


def test_a_commit_applying_its_first_update_only_fails_no_retry_check(make_odd):
    ctx, odd = make_odd(lambda up: [first_update_only()], control_api=True)
    verdicts = _kit(ctx, ("evolution",), ("updateTable", "commitTransaction"), client=True)
    lines = _show(verdicts)
    assert odd.rules[0].hits >= 3
    causes = _causes(verdicts)
    assert causes[0].status == "fail" and causes[0].rule.requirement.startswith("EVO-"), lines
    assert not _fails(verdicts, RETRY_FAMILIES), _fails(verdicts, RETRY_FAMILIES)


def test_a_new_table_uuid_on_every_load_fails_no_occ_check(make_odd):
    rule = new_uuid_every_load()
    ctx, _ = make_odd([rule], control_api=True)
    verdicts = _kit(ctx, ("tables",), ("updateTable", "commitTransaction", "registerTable"), client=True)
    lines = _show(verdicts)
    assert rule.hits >= 3
    assert _causes(verdicts)[0].rule.requirement == "TBL-01", lines
    assert not _fails(verdicts, RETRY_FAMILIES), _fails(verdicts, RETRY_FAMILIES)


def test_requirements_ignored_is_one_root_cause_across_families(make_odd):
    ctx, _ = make_odd([], control_api=True, deviation="stale-requirement-accepted")
    verdicts = _kit(ctx, ("evolution",), ("updateTable",))
    lines = _show(verdicts)
    causes = _causes(verdicts)
    assert causes[0].rule.id == "commit-requirements-unchecked", lines
    assert {"OCC-01", "EVO-02", "EVO-03", "EVO-04"} <= set(causes[0].requirements), lines
    assert not [c for c in causes[1:] if set(c.requirements) & {"EVO-02", "EVO-03", "EVO-04", "OCC-01"}], lines


def test_a_root_cause_line_leads_with_the_finding():
    """A drop answered 204 that keeps the table: the line says so (what broke, on which operation), then the rule
    - never the requirement's statement alone, which a reader takes for what was seen."""
    from ctk.reporting.rootcause import root_causes

    finding = {"requirement": "TBL-08", "status": "fail", "endpoint": "dropTable", "behaviour": "semantics",
               "message": "expected: the dropped table is gone\nhappened: dropTable answered 204; the table still "
                          "loads\n\nexchanges:\n--> DELETE ...", "details": {}}
    [rc] = root_causes([finding])
    line = rc.line()
    assert line.startswith("FAIL TBL-08 (MUST) on dropTable: dropTable answered 204; the table still loads"), line
    assert line.index("the table still loads") < line.index(rc.rule.title), line
