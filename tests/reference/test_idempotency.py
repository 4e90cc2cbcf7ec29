"""Idempotency rules of the reference pipeline, through a tiny app (test_idempotency_support)."""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest
from sqlalchemy import inspect, insert, select, update

from ctk.reference.idempotency import FINALIZED, IN_PROGRESS, canonical_hash, records
from test_idempotency_support import Served, bumps, exists, new_key, remove


@pytest.fixture
def make(tmp_path):
    made = []

    def factory(**settings):
        d = tmp_path / f"s{len(made)}"
        d.mkdir()
        s = Served(d, **settings)
        made.append(s)
        return s

    yield factory
    for s in made:
        s.close()


@pytest.fixture
def tiny(make):
    return make()


def record_rows(s):
    with s.engine.connect() as conn:
        return [r._mapping for r in conn.execute(select(records))]


# --- replay -------------------------------------------------------------------------------------------

def test_finalized_duplicate_replays_without_executing(tiny):
    key = new_key().upper()
    first = tiny.post("/items/a", {"value": 1}, key=key)
    assert first.status_code == 201
    remove(tiny.engine, "a")                      # interference: a re-execution would bring it back
    again = tiny.client.post("/items/a", json={"value": 1}, headers={"idempotency-key": key.lower()})
    assert again.status_code == 201 and again.json() == first.json()
    assert again.headers["location"] == "/items/a"
    assert again.headers["idempotent-replayed"] == "true"
    assert not exists(tiny.engine, "a")
    assert tiny.executions()["total"] == 1


def test_canonical_payload_whitespace_and_key_order_do_not_matter(tiny):
    key = new_key()
    assert tiny.client.post("/items/a", content=b'{"value": 1, "x": [1, 2]}', headers={"Idempotency-Key": key}
                            ).status_code == 201
    again = tiny.client.post("/items/a", content=b'{"x":[1,2],"value":1}', headers={"Idempotency-Key": key})
    assert again.status_code == 201
    assert tiny.executions()["total"] == 1
    assert canonical_hash(b'{"a":1,"b":2}') == canonical_hash(b'{ "b": 2,\n "a": 1 }')
    assert canonical_hash(b"not json") != canonical_hash(b"not  json")


@pytest.mark.parametrize("status", [400, 404, 409, 422])
def test_terminal_4xx_is_stored_and_replayed(tiny, status):
    key = new_key()
    if status == 409:
        assert tiny.post("/items/a", {"value": 1}).status_code == 201
        first = tiny.post("/items/a", {"value": 1}, key=key)
        remove(tiny.engine, "a")                  # a re-execution would now succeed
    elif status == 404:
        first = tiny.client.delete("/items/zz", headers={"Idempotency-Key": key})
        tiny.post("/items/zz", {})                # a re-execution of the drop would now succeed
    else:
        first = tiny.post("/items/a", {"fail": status}, key=key)
    assert first.status_code == status
    n = tiny.executions()["total"]
    again = (tiny.client.delete("/items/zz", headers={"Idempotency-Key": key}) if status == 404
             else tiny.post("/items/a", {"value": 1} if status == 409 else {"fail": status}, key=key))
    assert again.status_code == status and again.json() == first.json()
    assert tiny.executions()["total"] == n


def test_5xx_is_not_stored_so_the_retry_executes(tiny):
    key = new_key()
    assert tiny.post("/items/a", {"fail": 500}, key=key).status_code == 500
    assert tiny.post("/items/a", {"fail": 500}, key=key).status_code == 500
    assert tiny.executions()["total"] == 2
    assert record_rows(tiny) == []               # reservation released
    tiny.fault(action="fail-before", status=503)
    key2 = new_key()
    assert tiny.post("/items/b", {"value": 1}, key=key2).status_code == 503
    assert not exists(tiny.engine, "b")
    assert tiny.post("/items/b", {"value": 1}, key=key2).status_code == 201
    assert exists(tiny.engine, "b")


def test_unexpected_exception_releases_the_reservation(tiny, monkeypatch):
    key = new_key()
    tiny.post("/items/a", {"value": 1})
    # a non-CatalogError crash inside execute: answer 500, release, so the retry executes
    original = tiny.pipeline.faults.count_execution
    calls = []

    def boom(op, res, *scope):       # count_execution(operation, resource, caller scope)
        calls.append(op)
        if len(calls) == 1:
            raise RuntimeError("boom")
        original(op, res, *scope)

    monkeypatch.setattr(tiny.pipeline.faults, "count_execution", boom)
    assert tiny.post("/items/a/bump", {}, key=key).status_code == 500
    assert record_rows(tiny) == []
    assert tiny.post("/items/a/bump", {}, key=key).status_code == 200
    assert bumps(tiny.engine, "a") == 1


# --- payload and scope --------------------------------------------------------------------------------

def test_same_key_other_payload_is_422_and_executes_nothing(tiny):
    key = new_key()
    tiny.post("/items/a", {"value": 1}, key=key)
    r = tiny.post("/items/a", {"value": 2}, key=key)
    assert r.status_code == 422
    assert r.json()["error"]["type"] == "IdempotencyKeyConflict"
    assert tiny.executions()["total"] == 1


def test_scope_is_operation_resource_and_principal(tiny):
    key = new_key()
    tiny.post("/items/a", {"value": 1})
    assert tiny.post("/items/a/bump", {}, key=key).json()["bumps"] == 1
    tiny.post("/items/b", {"value": 1})
    assert tiny.post("/items/b/bump", {}, key=key).json()["bumps"] == 1        # other resource
    assert tiny.post("/items/c", {}, key=key).status_code == 201               # other operation
    r = tiny.post("/items/a/bump", {}, key=key, headers={"X-Principal": "bob"})  # other principal
    assert r.json()["bumps"] == 2
    assert tiny.post("/items/a/bump", {}, key=key).json()["bumps"] == 1        # replay of the first
    assert bumps(tiny.engine, "a") == 2


# --- key format ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["abc", "550e8400-e29b-41d4-a716-44665544000", "550e8400e29b41d4a716446655440000",
                                 "550e8400-e29b-41d4-a716-44665544000g", "", "550e8400-e29b-41d4-a716-446655440000x"])
def test_malformed_key_is_400_naming_the_header(tiny, bad):
    r = tiny.post("/items/a", {"value": 1}, key=bad)
    assert r.status_code == 400
    assert "Idempotency-Key" in r.json()["error"]["message"]
    assert tiny.executions()["total"] == 0 and not exists(tiny.engine, "a")


def test_uuidv7_keys_accepted_in_either_case(tiny):
    for i, key in enumerate([new_key(), new_key().upper(), "0190f1e2-3a4b-7c5d-8e9f-0a1b2c3d4e5f"]):
        assert tiny.post(f"/items/v{i}", {}, key=key).status_code == 201
    key = new_key()
    assert tiny.post("/items/c", {}, key=key.upper()).status_code == 201
    r = tiny.post("/items/c", {}, key=key)      # the same key in lower case: a replay, not a second execution
    assert r.status_code == 201 and r.headers.get("Idempotent-Replayed") == "true"


# fixed values: keys made at collection would differ between xdist workers, which then refuse the run
@pytest.mark.parametrize("key", ["8d2b6f5e-2f4a-11ee-9c1a-0242ac120002", "3f1c9a52-7b1e-4d6a-9f0e-2c5b8a7d4e11",
                                 "3F1C9A52-7B1E-4D6A-9F0E-2C5B8A7D4E12"], ids=["uuid1", "uuid4", "uuid4-upper"])
def test_other_uuid_versions_rejected_by_default_and_accepted_by_the_any_uuid_variant(make, key):
    s = make()
    r = s.post("/items/a", {}, key=key)
    assert r.status_code == 400 and "UUIDv7" in r.json()["error"]["message"]
    assert s.executions()["total"] == 0
    assert make(variant="any-uuid").post("/items/a", {}, key=key).status_code == 201


def test_repeated_header_is_400(tiny):
    r = tiny.client.post("/items/a", json={}, headers=[("Idempotency-Key", new_key()),
                                                       ("Idempotency-Key", new_key())])
    assert r.status_code == 400 and "once" in r.json()["error"]["message"]
    k = new_key()
    r = tiny.client.post("/items/a", json={}, headers=[("Idempotency-Key", k), ("idempotency-key", k)])
    assert r.status_code == 400
    assert tiny.executions()["total"] == 0


def test_key_ignored_when_not_advertised(make):
    s = make(idempotency_lifetime=None)
    s.post("/items/a", {})
    key = new_key()
    assert s.post("/items/a/bump", {}, key=key).json()["bumps"] == 1
    assert s.post("/items/a/bump", {}, key=key).json()["bumps"] == 2
    assert s.post("/items/b", {}, key="not-a-uuid").status_code == 201   # not even validated
    assert record_rows(s) == []


# --- in flight ----------------------------------------------------------------------------------------

def _concurrent(s, path, body, key, delay=1.0, stagger=0.3, **rule):
    s.fault(action="delay", seconds=delay, **rule)
    out = {}

    def first():
        out["first"] = s.post(path, body, key=key)

    t = threading.Thread(target=first)
    t.start()
    time.sleep(stagger)
    out["second"] = s.post(path, body, key=key)
    t.join(timeout=20)
    return out["first"], out["second"]


def test_in_flight_duplicate_rejected_with_409_request_in_progress(tiny):
    key = new_key()
    first, second = _concurrent(tiny, "/items/a", {"value": 1}, key)
    assert first.status_code == 201
    assert second.status_code == 409
    err = second.json()["error"]
    assert err["subtype"] == "request_in_progress" and err["type"] == "RequestInProgressException"
    assert second.headers["retry-after"]
    assert tiny.executions()["total"] == 1
    again = tiny.post("/items/a", {"value": 1}, key=key)             # now finalized: replay
    assert again.status_code == 201 and again.json() == first.json()


def test_in_flight_duplicate_waits_and_replays(make):
    s = make(in_flight="wait", in_flight_wait_timeout=10)
    key = new_key()
    first, second = _concurrent(s, "/items/a", {"value": 1}, key)
    assert first.status_code == 201 and second.status_code == 201 and second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert s.executions()["total"] == 1


def test_in_flight_wait_times_out_with_409(make):
    s = make(in_flight="wait", in_flight_wait_timeout=0.3)
    key = new_key()
    t0 = time.monotonic()
    first, second = _concurrent(s, "/items/a", {"value": 1}, key, delay=2.0, stagger=0.2)
    assert second.status_code == 409 and second.json()["error"]["subtype"] == "request_in_progress"
    assert first.status_code == 201
    assert s.executions()["total"] == 1
    assert time.monotonic() - t0 < 10


def test_racing_duplicates_execute_once(tiny):
    tiny.post("/items/a", {})
    key = new_key()
    results = []
    threads = [threading.Thread(target=lambda: results.append(tiny.post("/items/a/bump", {}, key=key)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(results) == 8
    assert {r.status_code for r in results} <= {200, 409}
    assert all(r.json() == {"name": "a", "bumps": 1} for r in results if r.status_code == 200)
    assert bumps(tiny.engine, "a") == 1


def _concurrent_slow(s, path, body, key, second_body=None, stagger=0.3):
    """The first request holds itself in flight (sleep inside its transaction): no fault rule, fast path."""
    out = {}
    t = threading.Thread(target=lambda: out.update(first=s.post(path, body, key=key)))
    t.start()
    time.sleep(stagger)
    out["second"] = s.post(path, body if second_body is None else second_body, key=key)
    t.join(timeout=20)
    return out["first"], out["second"]


def test_fast_path_in_flight_duplicate_is_409_before_its_record_commits(make):
    s = make(control_api=False)
    key = new_key()
    first, second = _concurrent_slow(s, "/items/a", {"value": 1, "sleep": 1.0}, key)
    assert first.status_code == 201
    assert second.status_code == 409 and second.json()["error"]["subtype"] == "request_in_progress"
    assert record_rows(s)[0]["status"] == FINALIZED
    again = s.post("/items/a", {"value": 1, "sleep": 1.0}, key=key)
    assert again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"


def test_fast_path_in_flight_duplicate_with_another_payload_is_422(make):
    s = make(control_api=False)
    key = new_key()
    first, second = _concurrent_slow(s, "/items/a", {"value": 1, "sleep": 1.0}, key, second_body={"value": 2})
    assert first.status_code == 201 and second.status_code == 422
    assert second.json()["error"]["type"] == "IdempotencyKeyConflict"


def test_fast_path_in_flight_duplicate_waits_and_replays(make):
    s = make(control_api=False, in_flight="wait", in_flight_wait_timeout=10)
    key = new_key()
    first, second = _concurrent_slow(s, "/items/a", {"value": 1, "sleep": 1.0}, key)
    assert first.status_code == 201 and second.status_code == 201 and second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert len(record_rows(s)) == 1


def test_fast_path_failure_inside_the_transaction_leaves_no_record(make, monkeypatch):
    """The reservation is part of the mutation's transaction: an unexpected error rolls both back."""
    s = make(control_api=False)
    key = new_key()
    r = s.post("/items/a", {"value": "not-an-int", "sleep": "x"}, key=key)
    assert r.status_code == 500
    assert record_rows(s) == [] and not exists(s.engine, "a")
    assert s.post("/items/a", {"value": 1}, key=new_key()).status_code == 201


def test_duplicate_from_another_process_replays_the_first_answer(tmp_path):
    """Two servers on one database (two catalog processes): the second runs while the first holds the key in
    flight; its transaction rolls back on the record's unique index and it replays the first answer."""
    a = Served(tmp_path, control_api=False)
    b = Served(tmp_path, control_api=False)
    try:
        key = new_key()
        body = {"value": 1, "sleep": 1.0}
        out = {}
        t = threading.Thread(target=lambda: out.update(first=a.post("/items/x", body, key=key)))
        t.start()
        time.sleep(0.3)
        second = b.post("/items/x", body, key=key)
        t.join(timeout=20)
        first = out["first"]
        assert first.status_code == 201 and second.status_code == 201
        assert second.json() == first.json() and second.headers["idempotent-replayed"] == "true"
        with a.engine.connect() as conn:
            assert len(list(conn.execute(select(records)))) == 1
    finally:
        a.close()
        b.close()


# --- lifetime -----------------------------------------------------------------------------------------

def test_key_honoured_within_lifetime_then_new(make):
    s = make(idempotency_lifetime="PT1S", idempotency_grace="PT0.5S", sweep_interval=3600)
    s.post("/items/a", {})
    key = new_key()
    assert s.post("/items/a/bump", {}, key=key).json()["bumps"] == 1
    time.sleep(0.8)
    assert s.post("/items/a/bump", {}, key=key).json()["bumps"] == 1     # within lifetime: replay
    time.sleep(1.0)
    assert s.post("/items/a/bump", {}, key=key).json()["bumps"] == 2     # expired: a new request
    rows = record_rows(s)
    assert len(rows) == 1 and rows[0]["expires_at"] - rows[0]["created_at"] == pytest.approx(1.5, abs=0.01)


def test_sweep_deletes_expired_records(make):
    s = make(idempotency_lifetime="PT0.3S", idempotency_grace="PT0S", sweep_interval=0.2)
    s.post("/items/a", {}, key=new_key())
    s.post("/items/b", {}, key=new_key())
    assert len(record_rows(s)) == 2
    deadline = time.monotonic() + 5
    while record_rows(s) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert record_rows(s) == []


def test_records_are_indexed_by_scope(tiny):
    insp = inspect(tiny.engine)
    uniques = insp.get_unique_constraints("ctk_idempotency_records")
    indexes = insp.get_indexes("ctk_idempotency_records")
    cols = [u["column_names"] for u in uniques] + [i["column_names"] for i in indexes]
    assert ["idem_key", "operation", "resource", "principal"] in cols
    assert ["expires_at"] in cols


# --- replay failure and crash recovery ----------------------------------------------------------------

def test_unreadable_stored_response_is_500_replay_failed_without_executing(tiny):
    key = new_key()
    tiny.fault(action="corrupt-stored-response")
    assert tiny.post("/items/a", {"value": 1}, key=key).status_code == 201
    remove(tiny.engine, "a")
    r = tiny.post("/items/a", {"value": 1}, key=key)
    assert r.status_code == 500 and r.json()["error"]["subtype"] == "idempotency_replay_failed"
    assert not exists(tiny.engine, "a") and tiny.executions()["total"] == 1


def test_tampered_digest_is_replay_failed(tiny):
    key = new_key()
    tiny.post("/items/a", {"value": 1}, key=key)
    with tiny.engine.begin() as conn:
        row = conn.execute(select(records)).first()
        doc = json.loads(row.response)
        doc["status"] = 200
        conn.execute(update(records).values(response=json.dumps(doc)))
    r = tiny.post("/items/a", {"value": 1}, key=key)
    assert r.status_code == 500 and r.json()["error"]["subtype"] == "idempotency_replay_failed"


def test_crash_before_finalize_is_reconciled_from_state(tiny):
    key = new_key()
    tiny.fault(action="crash-before-finalize")
    r = tiny.post("/items/a", {"value": 1}, key=key)
    assert r.status_code == 500
    assert exists(tiny.engine, "a")                               # the mutation was persisted
    (row,) = record_rows(tiny)
    assert row["status"] == IN_PROGRESS and row["crashed"]
    again = tiny.post("/items/a", {"value": 1}, key=key)
    assert again.status_code == 201 and again.json()["reconciled"] is True
    assert tiny.executions()["total"] == 1
    (row,) = record_rows(tiny)
    assert row["status"] == FINALIZED
    assert tiny.post("/items/a", {"value": 1}, key=key).json()["reconciled"] is True   # replayed


def test_crash_left_record_whose_change_is_absent_executes(tiny):
    key = new_key()
    tiny.fault(action="crash-before-finalize")
    tiny.post("/items/a", {"value": 1}, key=key)
    remove(tiny.engine, "a")
    again = tiny.post("/items/a", {"value": 1}, key=key)
    assert again.status_code == 201 and "reconciled" not in again.json()
    assert tiny.executions()["total"] == 2 and exists(tiny.engine, "a")


def test_stale_in_progress_record_without_crash_mark_is_reconciled(make):
    s = make(extra={"stale_after": 0.5})
    key = new_key()
    s.post("/items/a", {"value": 1})
    now = time.time()
    with s.engine.begin() as conn:          # as if a process died after committing, before finalizing
        conn.execute(insert(records).values(
            idem_key=key, operation="createItem", resource="items/a", principal="anonymous", status=IN_PROGRESS,
            request_hash=canonical_hash(json.dumps({"value": 1}).encode()), origin="[]", owner="dead" * 8,
            crashed=False, created_at=now, updated_at=now, expires_at=now + 3600))
    r = s.post("/items/a", {"value": 1}, key=key)
    assert r.status_code == 409 and r.json()["error"]["subtype"] == "request_in_progress"   # not stale yet
    time.sleep(0.7)
    r = s.post("/items/a", {"value": 1}, key=key)
    assert r.status_code == 201 and r.json()["reconciled"] is True
    assert s.executions()["total"] == 1


def test_mutation_without_reconcile_uses_default_rules(tiny):
    # dropItem has no reconcile of its own and no default rule: the pipeline must not guess
    tiny.post("/items/a", {})
    key = new_key()
    tiny.fault(action="crash-before-finalize")
    assert tiny.client.delete("/items/a", headers={"Idempotency-Key": key}).status_code == 500
    r = tiny.client.delete("/items/a", headers={"Idempotency-Key": key})
    assert r.status_code == 500 and r.json()["error"]["type"] == "CommitStateUnknownException"
    assert tiny.executions()["total"] == 2      # create + the first drop; never a second drop
