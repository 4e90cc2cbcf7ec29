"""Control API of the reference pipeline: fault rules, counters, reset and bad input."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from ctk.reference.faults import ControlError, parse_rule
from test_idempotency_support import Served, exists, new_key, remove


@pytest.fixture
def tiny(tmp_path):
    s = Served(tmp_path)
    yield s
    s.close()


def test_info(tiny):
    r = tiny.client.get("/_ctk")
    assert r.status_code == 200
    assert r.json() == {"control": True, "deviation": None, "variant": None, "scope-header": "X-Ctk-Scope",
                        "hold-until-met": True}


def test_control_api_absent_unless_enabled(tmp_path):
    s = Served(tmp_path, control_api=False)
    try:
        assert s.client.get("/_ctk").status_code == 404
        assert s.client.post("/_ctk/faults", json={"action": "delay"}).status_code == 404
        assert s.post("/items/a", {}).status_code == 201
    finally:
        s.close()


@pytest.mark.parametrize("body, words", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"action": "explode"}', "'action'"),
    (b'{}', "'action'"),
    (b'{"action": "delay", "seconds": -1}', "'seconds'"),
    (b'{"action": "delay", "seconds": "1"}', "'seconds'"),
    (b'{"action": "fail-before", "status": 42}', "'status'"),
    (b'{"action": "fail-before", "status": true}', "'status'"),
    (b'{"action": "fail-before", "times": 0}', "'times'"),
    (b'{"action": "fail-before", "path": "("}', "'path'"),
    (b'{"action": "fail-before", "method": 5}', "'method'"),
    (b'{"action": "fail-before", "colour": "red"}', "unknown field"),
    (b'{"action": "delay", "until-met": 0}', "'until-met'"),
    (b'{"action": "delay", "until-met": true}', "'until-met'"),
    (b'{"action": "delay", "until-met": "1"}', "'until-met'"),
    (b'{"action": "fail-before", "until-met": 1}', "only with action 'delay'"),
])
def test_bad_control_input_is_400_with_a_clear_message(tiny, body, words):
    r = tiny.client.post("/_ctk/faults", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert words in r.json()["error"]["message"]
    assert tiny.client.get("/_ctk/faults").json()["faults"] == []


def test_parse_rule_defaults():
    assert parse_rule({"action": "fail-before"}).status == 503
    assert parse_rule({"action": "crash-before-finalize"}).status == 500
    assert parse_rule({"action": "delay"}).seconds == 1.0
    assert parse_rule({"action": "delay", "times": None}).times is None
    with pytest.raises(ControlError):
        parse_rule({"action": "delay", "seconds": 10_000})


def test_fail_before_times_bound_and_clear(tiny):
    tiny.fault(action="fail-before", status=502, times=2)
    assert tiny.post("/items/a", {}).status_code == 502
    assert tiny.post("/items/a", {}).status_code == 502
    assert not exists(tiny.engine, "a")
    assert tiny.post("/items/a", {}).status_code == 201
    tiny.fault(action="fail-before", times=None)
    for name in "bcd":
        assert tiny.post(f"/items/{name}", {}).status_code == 503
    assert tiny.client.delete("/_ctk/faults").status_code == 200
    assert tiny.client.get("/_ctk/faults").json()["faults"] == []
    assert tiny.post("/items/b", {}).status_code == 201
    assert tiny.executions()["total"] == 2


def test_matching_by_operation_method_and_path(tiny):
    tiny.fault(action="fail-before", operation="dropItem", times=None)
    tiny.fault(action="fail-before", status=418, method="post", path=r"/bump$", times=None)
    tiny.fault(action="fail-before", status=599, path=r"^/nothing", times=None)
    assert tiny.post("/items/a", {}).status_code == 201
    assert tiny.client.delete("/items/a").status_code == 503
    assert tiny.post("/items/a/bump", {}).status_code == 418
    assert exists(tiny.engine, "a")


def test_scoped_rules_and_counters_concern_only_their_callers_requests(tiny):
    """Two callers (the kit's xdist workers) share one catalog: each one's rules, counters and clears."""
    a, b = {"X-Ctk-Scope": "run_gw0"}, {"X-Ctk-Scope": "run_gw1"}
    rule = tiny.fault(action="fail-before", status=502, scope="run_gw0")
    assert tiny.post("/items/b1", {}, headers=b).status_code == 201     # another scope: untouched
    assert tiny.post("/items/x", {}).status_code == 201                 # no scope: untouched
    assert [r["id"] for r in tiny.client.get("/_ctk/faults", params={"scope": "run_gw0"}).json()["faults"]] == [rule]
    assert tiny.client.get("/_ctk/faults", params={"scope": "run_gw1"}).json()["faults"] == []
    assert tiny.post("/items/a1", {}, headers=a).status_code == 502     # its own scope: taken
    tiny.post("/items/a2", {}, headers=a)
    tiny.post("/items/b2", {}, headers=b)
    assert tiny.client.get("/_ctk/executions", params={"scope": "run_gw0"}).json()["total"] == 1
    assert tiny.client.get("/_ctk/executions", params={"scope": "run_gw1"}).json()["total"] == 2
    assert tiny.client.get("/_ctk/executions", params={"scope": "nobody"}).json()["total"] == 0
    assert tiny.executions()["total"] == 4                              # unscoped: everything
    tiny.fault(action="fail-before", scope="run_gw0", times=None)
    keep = tiny.fault(action="fail-before", scope="run_gw1", times=None)
    assert tiny.client.delete("/_ctk/faults", params={"scope": "run_gw0"}).status_code == 200
    assert [r["id"] for r in tiny.client.get("/_ctk/faults").json()["faults"]] == [keep]


def test_fail_after_commit_persists_then_fails_and_replays(tiny):
    key = new_key()
    tiny.fault(action="fail-after-commit", status=503)
    r = tiny.post("/items/a", {"value": 3}, key=key)
    assert r.status_code == 503
    assert exists(tiny.engine, "a")
    remove(tiny.engine, "a")
    again = tiny.post("/items/a", {"value": 3}, key=key)
    assert again.status_code == 201 and again.json() == {"name": "a", "value": 3}
    assert not exists(tiny.engine, "a")
    assert tiny.executions()["total"] == 1


def test_drop_after_commit_closes_the_connection_without_an_answer(tiny):
    key = new_key()
    tiny.fault(action="drop-after-commit")
    with pytest.raises(httpx.TransportError):
        tiny.post("/items/a", {"value": 1}, key=key)
    assert exists(tiny.engine, "a")
    again = tiny.post("/items/a", {"value": 1}, key=key)
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    # without a key too
    tiny.fault(action="drop-after-commit")
    with pytest.raises(httpx.TransportError):
        tiny.post("/items/b", {})
    assert exists(tiny.engine, "b")
    assert tiny.client.get("/_ctk").status_code == 200     # the server survives


def test_crash_before_finalize_without_key_persists_and_answers_500(tiny):
    tiny.fault(action="crash-before-finalize")
    assert tiny.post("/items/a", {}).status_code == 500
    assert exists(tiny.engine, "a")


def test_corrupt_stored_response_only_applies_to_keyed_requests(tiny):
    tiny.fault(action="corrupt-stored-response")
    assert tiny.post("/items/a", {}).status_code == 201                  # no key: rule not used
    assert len(tiny.client.get("/_ctk/faults").json()["faults"]) == 1
    key = new_key()
    assert tiny.post("/items/b", {}, key=key).status_code == 201
    assert tiny.post("/items/b", {}, key=key).json()["error"]["subtype"] == "idempotency_replay_failed"


def test_delay_holds_the_request(tiny):
    import time
    tiny.fault(action="delay", seconds=2.0)
    t0 = time.monotonic()
    assert tiny.post("/items/a", {}).status_code == 201
    assert time.monotonic() - t0 >= 2.0
    t0 = time.monotonic()
    assert tiny.post("/items/b", {}).status_code == 201
    # the fault applies once: a second delay would take 2 s; half of it leaves a loaded machine room
    assert time.monotonic() - t0 < 1.0


def test_executions_and_reset(tiny):
    key = new_key()
    tiny.post("/items/a", {}, key=key)
    tiny.post("/items/a", {}, key=key)           # replay: not an execution
    tiny.post("/items/a/bump", {})
    tiny.post("/items/a", {}, key="bad")         # rejected: not an execution
    e = tiny.executions()
    assert e == {"total": 2, "by_operation": {"createItem": 1, "bumpItem": 1}, "by_resource": {"items/a": 2}}
    tiny.fault(action="fail-before", times=None)
    assert tiny.client.post("/_ctk/reset").status_code == 200
    assert tiny.executions() == {"total": 0, "by_operation": {}, "by_resource": {}}
    assert tiny.client.get("/_ctk/faults").json()["faults"] == []
    assert tiny.post("/items/c", {}).status_code == 201


# --- a hold that ends when duplicates met it (`until-met`) ----------------------------------------------

def _held_first(s: Served, key: str, until_met: int, seconds: float = 120.0):
    """Send a keyed first request held by a delay rule of `seconds` with `until-met`; return once the rule
    was taken (the request is held inside the catalog): (thread, answers dict)."""
    rid = s.fault(action="delay", seconds=seconds, **{"until-met": until_met})
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("first", s.post("/items/a", {"value": 1}, key=key)),
                         daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while any(r["id"] == rid for r in s.client.get("/_ctk/faults").json()["faults"]):
        assert time.monotonic() < deadline, "the held request never reached the catalog"
        time.sleep(0.01)
    return t, out


def test_hold_until_met_ends_when_the_duplicate_meets_it(tiny):
    key = new_key()
    t, out = _held_first(tiny, key, until_met=1)
    dup = tiny.post("/items/a", {"value": 1}, key=key)
    assert dup.status_code == 409 and dup.json()["error"]["subtype"] == "request_in_progress"
    t.join(timeout=60)          # the rule would hold it 120 s: only the duplicate's meeting ends it sooner
    assert not t.is_alive(), "the held request was not released when its duplicate met it"
    assert out["first"].status_code == 201
    assert tiny.executions()["total"] == 1


def test_hold_until_met_counts_each_duplicate_once(tiny):
    key = new_key()
    t, out = _held_first(tiny, key, until_met=2)
    assert tiny.post("/items/a", {"value": 1}, key=key).status_code == 409
    assert t.is_alive(), "released after one duplicate where the rule asked for two"
    assert tiny.post("/items/a", {"value": 1}, key=key).status_code == 409
    t.join(timeout=60)
    assert not t.is_alive() and out["first"].status_code == 201


def test_hold_until_met_releases_a_waiting_duplicate(tmp_path):
    s = Served(tmp_path, in_flight="wait", in_flight_wait_timeout=100)
    try:
        key = new_key()
        t, out = _held_first(s, key, until_met=1)
        dup = s.post("/items/a", {"value": 1}, key=key)   # waits for the first, which its meeting released
        t.join(timeout=60)
        assert not t.is_alive()
        assert out["first"].status_code == 201 and dup.status_code == 201 and dup.json() == out["first"].json()
        assert dup.headers["idempotent-replayed"] == "true" and s.executions()["total"] == 1
    finally:
        s.close()


def test_hold_until_met_still_ends_after_seconds(tiny):
    key = new_key()
    t, out = _held_first(tiny, key, until_met=1, seconds=0.2)   # nobody meets it: the seconds end it
    t.join(timeout=60)
    assert not t.is_alive() and out["first"].status_code == 201
    assert tiny.client.get("/_ctk/faults").json()["faults"] == []
