"""Replays compared by meaning, not bytes (ctk.checks.idempotency.replay_differences): same status, same error
type, same resource (table-uuid, view-uuid, namespace), the original's effect present; a newer state allowed."""

from __future__ import annotations

import json
from types import SimpleNamespace

from ctk.checks.idempotency import _newer_state, replay_differences
from ctk.catalog import body_identity
from ctk.core.exchange import Exchange

CASE = SimpleNamespace(identity=body_identity)


def ex(status, body):
    return Exchange("POST", "http://127.0.0.1/v1/x", status=status, response_body=json.dumps(body))


def table(uuid="u1", loc="m2.json", log=("m1.json",), snaps=(), current=None, updated=2):
    return {"metadata-location": loc, "metadata": {
        "table-uuid": uuid, "current-schema-id": 0, "schemas": [{"schema-id": 0}],
        "current-snapshot-id": current, "snapshots": [{"snapshot-id": s} for s in snaps],
        "last-updated-ms": updated, "metadata-log": [{"metadata-file": f} for f in log]}}


FIRST = ex(200, table(snaps=(7,), current=7))


def test_the_same_answer_byte_for_byte_is_a_replay():
    assert replay_differences(CASE, FIRST, ex(200, table(snaps=(7,), current=7))) == []
    assert _newer_state(FIRST, ex(200, table(snaps=(7,), current=7))) is None


def test_a_newer_state_that_carries_the_original_effect_is_a_replay():
    newer = ex(200, table(loc="m3.json", log=("m1.json", "m2.json"), snaps=(7, 8), current=8, updated=3))
    assert replay_differences(CASE, FIRST, newer) == []
    assert "m3.json" in _newer_state(FIRST, newer)


def test_key_order_and_whitespace_do_not_matter():
    text = json.dumps(table(snaps=(7,), current=7), indent=4, sort_keys=True)
    assert replay_differences(CASE, FIRST, Exchange("POST", "u", status=200, response_body=text)) == []


def test_another_status_fails():
    [why] = replay_differences(CASE, FIRST, ex(201, table(snaps=(7,), current=7)))
    assert "201" in why and "instead of the original 200" in why


def test_another_resource_fails():
    [why] = replay_differences(CASE, FIRST, ex(200, table(uuid="u2", snaps=(7,), current=7)))
    assert "another resource" in why and "u2" in why


def test_another_kind_of_body_fails():
    [why] = replay_differences(CASE, FIRST, ex(200, {"replayed": True}))
    assert "another kind of body" in why


def test_the_original_effect_missing_fails():
    [why] = replay_differences(CASE, FIRST, ex(200, table(loc="m3.json", log=("m1.json",), snaps=(8,), current=8)))
    assert "m2.json" in why and "metadata-log" in why
    [why] = replay_differences(CASE, FIRST, ex(200, table(loc="m3.json", log=("m2.json",), snaps=(8,), current=8)))
    assert "snapshot 7" in why


def test_error_answers_compare_by_type():
    a = ex(409, {"error": {"type": "AlreadyExistsException", "code": 409, "message": "exists"}})
    same = ex(409, {"error": {"type": "AlreadyExistsException", "code": 409, "message": "other words"}})
    other = ex(409, {"error": {"type": "CommitFailedException", "code": 409, "message": "exists"}})
    assert replay_differences(CASE, a, same) == []
    [why] = replay_differences(CASE, a, other)
    assert "CommitFailedException" in why


def test_views_compare_by_version():
    def view(version, versions):
        return {"metadata-location": f"v{version}.json", "metadata": {
            "view-uuid": "v1", "current-version-id": version, "versions": [{"version-id": v} for v in versions]}}

    first = ex(200, view(1, (1,)))
    assert replay_differences(CASE, first, ex(200, view(2, (1, 2)))) == []
    assert "view version 1" in replay_differences(CASE, first, ex(200, view(2, (2,))))[0]
