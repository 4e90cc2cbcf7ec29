"""Issue 19, item 7 (a), (b): blame what was seen.

(b) CLIENT-01 on a catalog that acknowledges appends, records no snapshot and misspells `metadata-location`
    as `metadataLocation`: the rows are missing because nothing was recorded; the first cause named is the
    acknowledged appends with no snapshot, the misspelling comes after it.
(a) DISC-04 on a catalog (no idempotency advertised) that drops the properties given at createNamespace: the
    namespace exists, so the key was processed normally (pass, decided from existence); the dropped
    properties are a finding of their own (SEM-02, classified: the merged spec stores them "if supported by
    the server")."""

from __future__ import annotations

import pytest
from odd import drop_namespace_properties
from odd_lost_writes import acks_appends_records_nothing, camel_case_metadata_location

from ctk.core.verdicts import Status


def test_client01_names_the_unrecorded_appends_first(make_odd):
    pytest.importorskip("pyiceberg")
    from ctk.checks.real_client import check_pyiceberg

    ctx, odd = make_odd(lambda up: [acks_appends_records_nothing(up), camel_case_metadata_location()])
    [v] = check_pyiceberg(ctx)
    assert odd.rules[0].hits == 2, v.message                        # both appends acknowledged, not recorded
    assert v.status is Status.FAIL, v.message
    assert v.classification == "appends not recorded", v.message
    # before: "cause: the load answer ... names the field `metadataLocation`" was the only cause named
    msg = v.message
    assert "acknowledged 2 append(s)" in msg and "records no snapshot" in msg, msg
    assert msg.index("records no snapshot") < msg.index("`metadataLocation`")   # the misspelling still named, after
    assert v.details["appends_acknowledged"] == 2


def test_disc04_decided_from_existence_and_dropped_properties_are_their_own_finding(make_odd):
    from ctk.catalog import ENDPOINTS
    from ctk.checks.discovery import check_key_ignored_when_unsupported

    ctx, odd = make_odd([drop_namespace_properties()], idempotency_lifetime=None)
    got = check_key_ignored_when_unsupported(ctx, ENDPOINTS["createNamespace"])
    assert odd.rules[0].hits >= 1
    by = {v.requirement: v for v in got}
    v = by["DISC-04"]
    # before: inconclusive "... reading namespace ... back shows nothing" although the namespace exists
    assert v.status is Status.PASS, v.message
    assert "exists" in v.message and "shows nothing" not in v.message
    f = by["SEM-02"]
    assert f.status is Status.PASS and f.classification == "namespace properties not stored at create", f.message
    assert "if supported by the server" in f.message
    assert f.details["sent_properties"] and f.details["stored_properties"] == {"ns": {}}


def test_disc04_on_a_catalog_that_stores_properties_has_no_such_finding(make_odd):
    from ctk.catalog import ENDPOINTS
    from ctk.checks.discovery import check_key_ignored_when_unsupported

    ctx, _ = make_odd([], idempotency_lifetime=None)
    got = check_key_ignored_when_unsupported(ctx, ENDPOINTS["createNamespace"])
    assert [v.requirement for v in got] == ["DISC-04"] and got[0].status is Status.PASS, got[0].message


def test_payload_conflict_on_plan_table_scan_says_a_new_plan_id_came_back(make_odd):
    """(c) planTableScan, same key, other payload: the catalog answered 200 with a new plan-id. The message said
    "rejected with 200 ... (nothing executed)"; it now says what was observed."""
    from odd_lost_writes import plan_for_other_payload_unfetchable

    from ctk.catalog import ENDPOINTS
    from ctk.checks.idempotency import check_payload_mismatch

    rule = plan_for_other_payload_unfetchable()
    ctx, _ = make_odd([rule])
    [v] = check_payload_mismatch(ctx, ENDPOINTS["planTableScan"])
    assert rule.hits == 1
    # PAYLOAD-01 is classified under the spec profile (a pass naming it), a deviation under the design profile
    assert v.status in (Status.PASS, Status.DEVIATION), v.message
    assert "nothing executed" not in v.message and "rejected with 200" not in v.message, v.message
    assert "new plan-id 'odd-plan-1'" in v.message and v.details["new_plan_id"] == "odd-plan-1"
