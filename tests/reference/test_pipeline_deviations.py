"""Each deviation profile of the pipeline breaks its rule (and the same scenario holds without it)."""

from __future__ import annotations

import threading
import time

import pytest

from test_idempotency_support import Served, bumps, exists, new_key, remove


@pytest.fixture
def make(tmp_path):
    made = []

    def factory(deviation=None, **settings):
        d = tmp_path / f"s{len(made)}"
        d.mkdir()
        s = Served(d, deviation=deviation, **settings)
        made.append(s)
        return s

    yield factory
    for s in made:
        s.close()


def both(make, deviation, **settings):
    return make(None, **settings), make(deviation, **settings)


def test_no_discovery_rejects_key(make):
    good, bad = both(make, "no-discovery-rejects-key", idempotency_lifetime=None)
    assert good.post("/items/a", {}, key=new_key()).status_code == 201
    assert bad.post("/items/a", {}, key=new_key()).status_code == 400
    assert bad.post("/items/a", {}).status_code == 201


def test_accept_malformed_key(make):
    good, bad = both(make, "accept-malformed-key")
    assert good.post("/items/a", {}, key="not-a-uuid").status_code == 400
    assert bad.post("/items/a", {}, key="not-a-uuid").status_code == 201
    assert bad.post("/items/a", {}, key="not-a-uuid").status_code == 201     # and honours it
    assert bad.executions()["total"] == 1


def test_accept_repeated_key(make):
    good, bad = both(make, "accept-repeated-key")
    headers = [("Idempotency-Key", new_key()), ("Idempotency-Key", new_key())]
    assert good.client.post("/items/a", json={}, headers=headers).status_code == 400
    assert bad.client.post("/items/a", json={}, headers=headers).status_code == 201


def _replay_scenario(s):
    key = new_key()
    first = s.post("/items/a", {"value": 1}, key=key)
    remove(s.engine, "a")
    again = s.post("/items/a", {"value": 1}, key=key)
    return first, again


def test_no_replay(make):
    good, bad = both(make, "no-replay")
    for s in (good, bad):
        _replay_scenario(s)
    assert good.executions()["total"] == 1 and not exists(good.engine, "a")
    assert bad.executions()["total"] == 2 and exists(bad.engine, "a")


def test_replay_different_body(make):
    good, bad = both(make, "replay-different-body")
    f, a = _replay_scenario(good)
    assert (a.status_code, a.json()) == (f.status_code, f.json())
    f, a = _replay_scenario(bad)
    assert (a.status_code, a.json()) != (f.status_code, f.json())
    assert bad.executions()["total"] == 1


def test_terminal_4xx_not_stored(make):
    good, bad = both(make, "terminal-4xx-not-stored")
    for s in (good, bad):
        key = new_key()
        s.post("/items/a", {})
        assert s.post("/items/a", {}, key=key).status_code == 409
        remove(s.engine, "a")
        s.last = s.post("/items/a", {}, key=key).status_code
    assert good.last == 409 and bad.last == 201


def test_store_5xx(make):
    good, bad = both(make, "store-5xx")
    for s in (good, bad):
        key = new_key()
        s.fault(action="fail-before", status=503)
        assert s.post("/items/a", {}, key=key).status_code == 503
        s.last = s.post("/items/a", {}, key=key).status_code
    assert good.last == 201 and bad.last == 503


def _in_flight(s):
    s.post("/items/a", {})
    key = new_key()
    s.fault(action="delay", seconds=1.0, operation="bumpItem")
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("first", s.post("/items/a/bump", {}, key=key)))
    t.start()
    time.sleep(0.3)
    second = s.post("/items/a/bump", {}, key=key)
    t.join(timeout=20)
    return out["first"], second


def test_in_flight_reexecutes(make):
    good, bad = both(make, "in-flight-reexecutes")
    _, second = _in_flight(good)
    assert second.status_code == 409 and bumps(good.engine, "a") == 1
    _, second = _in_flight(bad)
    assert second.status_code == 200 and bumps(bad.engine, "a") == 2


def test_in_flight_plain_409(make):
    good, bad = both(make, "in-flight-plain-409")
    _, second = _in_flight(good)
    assert second.json()["error"]["subtype"] == "request_in_progress"
    _, second = _in_flight(bad)
    assert second.status_code == 409 and "subtype" not in second.json()["error"]
    assert bumps(bad.engine, "a") == 1


def test_no_payload_check(make):
    good, bad = both(make, "no-payload-check")
    for s in (good, bad):
        key = new_key()
        s.post("/items/a", {"value": 1}, key=key)
        s.last = s.post("/items/a", {"value": 2}, key=key)
    assert good.last.status_code == 422
    assert bad.last.status_code == 201 and bad.last.json()["value"] == 1
    # scope still holds under no-payload-check
    key = new_key()
    assert bad.post("/items/x", {}, key=key).status_code == 201
    assert bad.post("/items/y", {}, key=key).json()["name"] == "y"


def test_scope_ignored(make):
    good, bad = both(make, "scope-ignored")
    for s in (good, bad):
        key = new_key()
        s.post("/items/a", {"value": 1}, key=key)
        s.last = s.post("/items/b", {"value": 1}, key=key)
    assert good.last.status_code == 201 and exists(good.engine, "b")
    assert bad.last.json() == {"name": "a", "value": 1} and not exists(bad.engine, "b")
    # payload binding still holds within one scope under scope-ignored
    key = new_key()
    bad.post("/items/c", {"value": 1}, key=key)
    assert bad.post("/items/c", {"value": 2}, key=key).status_code == 422


def test_short_lifetime(make):
    good, bad = both(make, "short-lifetime", idempotency_lifetime="PT2S", sweep_interval=3600)
    key = new_key()
    for s in (good, bad):
        s.post("/items/a", {})
        assert s.post("/items/a/bump", {}, key=key).json()["bumps"] == 1
    time.sleep(1.3)                                      # > half of 2 s, within the lifetime
    for s in (good, bad):
        s.post("/items/a/bump", {}, key=key)
    assert bumps(good.engine, "a") == 1
    assert bumps(bad.engine, "a") == 2


def test_replay_failed_reexecutes(make):
    good, bad = both(make, "replay-failed-reexecutes")
    for s in (good, bad):
        key = new_key()
        s.fault(action="corrupt-stored-response")
        s.post("/items/a", {"value": 1}, key=key)
        remove(s.engine, "a")
        s.last = s.post("/items/a", {"value": 1}, key=key)
    assert good.last.status_code == 500 and not exists(good.engine, "a")
    assert bad.last.status_code == 201 and exists(bad.engine, "a") and bad.executions()["total"] == 2


def test_no_reconcile(make):
    good, bad = both(make, "no-reconcile")
    for s in (good, bad):
        key = new_key()
        s.fault(action="crash-before-finalize")
        assert s.post("/items/a", {"value": 1}, key=key).status_code == 500
        s.last = s.post("/items/a", {"value": 1}, key=key)
    assert good.last.status_code == 201 and good.executions()["total"] == 1
    assert bad.last.status_code == 409 and bad.executions()["total"] == 2     # blind re-execution


def test_info_names_the_deviation(make):
    s = make("no-replay")
    assert s.client.get("/_ctk").json() == {"control": True, "deviation": "no-replay", "variant": None,
                                            "scope-header": "X-Ctk-Scope", "hold-until-met": True}
