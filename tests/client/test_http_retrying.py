import random
from datetime import timedelta

import httpx
import pytest

from ctk.history.recorder import History
from ctk.client.transport import CatalogClient
from ctk.client.keys import is_valid_key
from ctk.client.retrying import IdempotencyWindowExpired, RetryingClient
from ctk.client.config import TargetConfig
from ctk.client.discovery import Discovery

WITH = Discovery.from_config({"idempotency-key-lifetime": "PT30M"})
WITHOUT = Discovery.from_config({})


class Script:
    """A mock catalog answering a scripted list of statuses (or exceptions), recording what it received."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests = []

    def __call__(self, req):
        self.requests.append(req)
        a = self.answers.pop(0) if self.answers else 200
        if isinstance(a, Exception):
            raise a
        if isinstance(a, tuple):
            return httpx.Response(a[0], json=a[1], headers=a[2] if len(a) > 2 else None)
        return httpx.Response(a, json={"status": a})

    def keys(self):
        return [r.headers.get("Idempotency-Key") for r in self.requests]


def make(answers, discovery=WITH, **kw):
    script = Script(answers)
    client = CatalogClient(TargetConfig("http://127.0.0.1:9"), transport=httpx.MockTransport(script))
    sleeps = []
    kw.setdefault("history", History())
    rc = RetryingClient(client, discovery, sleep=sleeps.append, rng=random.Random(1), **kw)
    return rc, script, sleeps


def test_same_key_on_every_retry_and_new_key_per_mutation():
    rc, script, sleeps = make([503, httpx.ReadTimeout("t"), httpx.RemoteProtocolError("Server disconnected"), 200, 200])
    ex = rc.mutate("POST", "namespaces/db/tables/t", json={"x": 1})
    assert ex.status == 200 and len(rc.last_attempts) == 4
    keys = script.keys()
    assert len(set(keys[:4])) == 1 and is_valid_key(keys[0], require_v7=True)
    assert len(sleeps) == 3 and all(0 < s <= rc.max_delay for s in sleeps)
    rc.mutate("POST", "namespaces/db/tables/t", json={"x": 2})
    assert script.keys()[4] != keys[0]
    ops = rc.history.operations()
    assert [o.outcome for o in ops] == ["ok", "ok"]
    assert [c.type for _, c in ops[0].attempts] == ["info", "info", "info", "ok"]
    assert ops[0].ambiguous and not ops[1].ambiguous


@pytest.mark.parametrize("status", [400, 404, 409, 422])
def test_no_retry_on_4xx(status):
    rc, script, _ = make([status, 200])
    assert rc.mutate("POST", "namespaces", json={}).status == status
    assert len(script.requests) == 1
    assert rc.history.operations()[0].outcome == "fail"


def test_retries_on_409_request_in_progress_honouring_retry_after():
    busy = (409, {"error": {"message": "busy", "type": "RequestInProgressException", "code": 409,
                            "subtype": "request_in_progress"}}, {"Retry-After": "2"})
    rc, script, sleeps = make([busy, 200])
    assert rc.mutate("POST", "namespaces", json={}).status == 200
    assert sleeps == [2.0] and len(set(script.keys())) == 1


def test_bounded_attempts():
    rc, script, sleeps = make([503] * 10, max_attempts=3)
    ex = rc.mutate("POST", "namespaces", json={})
    assert ex.status == 503 and len(script.requests) == 3
    assert rc.history.operations()[0].outcome == "info"


def test_backoff_capped_and_jittered():
    rc, _, _ = make([], base_delay=0.1, max_delay=0.5)
    delays = [rc.backoff(n) for n in range(1, 12)]
    assert all(0 < d <= 0.5 for d in delays)
    assert max(delays) > 0.25 and len(set(delays)) > 5


def test_no_key_and_no_retry_without_advertised_lifetime():
    rc, script, _ = make([503, 200], discovery=WITHOUT)
    assert rc.mutate("POST", "namespaces", json={}).status == 503
    assert script.keys() == [None] and len(script.requests) == 1


def test_invalid_lifetime_also_disables():
    rc, script, _ = make([503, 200], discovery=Discovery.from_config({"idempotency-key-lifetime": "30m"}))
    rc.mutate("POST", "namespaces", json={})
    assert script.keys() == [None] and len(script.requests) == 1


def test_window_expired_raises_with_elapsed():
    now = [1000.0]
    d = Discovery.from_config({"idempotency-key-lifetime": "PT10S"})
    script = Script([503, 503, 200])
    client = CatalogClient(TargetConfig("http://127.0.0.1:9"), transport=httpx.MockTransport(script))

    def sleep(s):
        now[0] += 6.0  # each wait moves the clock 6 s

    rc = RetryingClient(client, d, clock=lambda: now[0], sleep=sleep)
    with pytest.raises(IdempotencyWindowExpired) as e:
        rc.mutate("POST", "namespaces/db/tables/t", json={})
    assert e.value.elapsed == timedelta(seconds=12) and e.value.lifetime == timedelta(seconds=10)
    assert len(script.requests) == 2 and len(e.value.attempts) == 2  # the retry at 6 s went, the one at 12 s not
    assert "12.000s" in str(e.value)


def test_blind_mode_retries_without_keys_on_502_503_504_only():
    rc, script, _ = make([503, 502, 504, 200], discovery=WITH, use_keys=False)
    assert rc.mutate("POST", "namespaces", json={}).status == 200
    assert script.keys() == [None] * 4
    rc, script, _ = make([500, 200], discovery=WITHOUT, use_keys=False)
    assert rc.mutate("POST", "namespaces", json={}).status == 500 and len(script.requests) == 1
    rc, script, _ = make([503, 409], discovery=WITHOUT, use_keys=False)
    assert rc.mutate("POST", "namespaces", json={}).status == 409
    op = rc.history.operations()[0]
    assert op.outcome == "fail" and op.ambiguous


def test_explicit_key_must_be_valid():
    rc, script, _ = make([200])
    with pytest.raises(ValueError):
        rc.mutate("POST", "namespaces", json={}, key="abc123")


def test_history_is_shared_and_has_process():
    h = History()
    rc, _, _ = make([503, 200], history=h, process="w1")
    rc.mutate("POST", "namespaces", json={}, op="createNamespace", value="db")
    assert [e.type for e in h.events] == ["invoke", "info", "invoke", "ok"]
    assert {e.process for e in h.events} == {"w1"} and {e.op for e in h.events} == {"createNamespace"}
    assert h.events[1].exchange.status == 503 and "createNamespace" in h.render()


def test_first_timeout_applies_to_the_first_attempt_only():
    """A check that makes the first attempt time out on purpose must not give its retries that short timeout."""
    rc, script, _ = make([httpx.ReadTimeout("t"), 503, 200])
    ex = rc.mutate("POST", "namespaces/db/tables/t", json={"x": 1}, timeout=30.0, first_timeout=0.25)
    assert ex.status == 200
    reads = [r.extensions["timeout"]["read"] for r in script.requests]
    assert reads == [0.25, 30.0, 30.0]
    rc.mutate("POST", "namespaces/db/tables/t", json={"x": 2}, timeout=7.0)
    assert script.requests[-1].extensions["timeout"]["read"] == 7.0
