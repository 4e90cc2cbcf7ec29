"""Allowed-variant profiles of the reference catalog (ctk.reference.variants): selection, errors, and each
variant's path seen over HTTP. The kit's verdicts under each variant are in tests/checks/test_specificity.py."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import uuid

import httpx
import pytest
import uuid6

from ctk.reference.deviations import PROFILES
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.reference.policies import KeyPolicy
from ctk.reference.policies import CommitPolicy
from ctk.reference.profiles import for_settings
from ctk.reference.variants import VARIANTS, KeysGlobal, get_variant

pytestmark = pytest.mark.timeout(120)
NAMES = ["inflight-wait", "inflight-409-plain", "payload-unchecked", "payload-400", "keys-global", "replies-rebuilt",
         "lifetime-grace", "any-uuid"]


def key():
    return str(uuid6.uuid7())


def test_the_issue_variants_exist_and_say_their_path():
    assert set(NAMES) <= set(VARIANTS)
    for v in VARIANTS.values():
        assert v.path and issubclass(v.policy, KeyPolicy)
        # a variant of the key handling shows in the behaviour profile and has a design verdict; one of the
        # catalog's own choices (namespace separator, what a drop deletes) changes no key verdict
        assert (v.shows and v.design) or (v.policy is KeyPolicy and v.commits is not CommitPolicy), v.name
        assert v.name not in PROFILES            # a variant is not a deviation


def test_unknown_variant_and_variant_with_deviation_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown variant profile 'wait'; known: inflight-wait"):
        ReferenceSettings(warehouse=str(tmp_path), variant="wait")
    with pytest.raises(ValueError, match="not both"):
        ReferenceSettings(warehouse=str(tmp_path), variant="keys-global", deviation="no-replay")
    with pytest.raises(ValueError, match="unknown variant"):
        get_variant("nope")


def test_deviations_that_are_a_variant_behaviour_share_its_strategy(tmp_path):
    assert isinstance(for_settings(ReferenceSettings(warehouse=str(tmp_path), deviation="scope-ignored")), KeysGlobal)
    assert type(for_settings(ReferenceSettings(warehouse=str(tmp_path)))) is KeyPolicy


def test_serve_help_lists_every_variant_and_rejects_an_unknown_one():
    out = subprocess.run([sys.executable, "-m", "ctk", "serve", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    flat = re.sub(r"-\s+", "-", " ".join(out.split()))     # argparse wraps after a hyphen
    for name in VARIANTS:
        assert name in flat
    assert "--variant NAME[+NAME]" in flat
    for wrong, said in (("bogus", "unknown variant profile 'bogus'; known: inflight-wait"),
                        ("inflight-wait+inflight-503", "inflight-wait and inflight-503 both choose the in-flight row")):
        bad = subprocess.run([sys.executable, "-m", "ctk", "serve", "--variant", wrong], capture_output=True,
                             text=True, timeout=60)
        assert bad.returncode == 2 and said in bad.stderr, bad.stderr


def test_variants_combine_when_they_choose_different_hooks(tmp_path):
    """A catalog takes several allowed paths at once: the combination's policy is each part's, its design
    verdicts and profile rows the union; two answers to one choice are refused, naming both."""
    both = get_variant("inflight-503+replies-rebuilt+separator-dot")
    policy = for_settings(ReferenceSettings(warehouse=str(tmp_path), variant=both.name))
    assert policy.in_flight_answer().status == 503            # inflight-503's hook
    assert type(policy).replay is VARIANTS["replies-rebuilt"].policy.replay
    assert both.commits is VARIANTS["separator-dot"].commits
    assert both.design == {"INFLIGHT-01": "pass", "INFLIGHT-02": "deviation", "REPLAY-01": "pass",
                           "REPLAY-05": "deviation"}
    assert set(both.shows) == {"in-flight", "replay"}
    assert get_variant("any-uuid") is VARIANTS["any-uuid"]
    for wrong, said in (("payload-400+payload-400", "names a variant twice"),
                        ("inflight-409-plain+inflight-503", "inflight-409-plain and inflight-503 both choose "
                                                            "in_flight_answer"),
                        ("payload-unchecked+payload-400", "both choose the payload-mismatch row"),
                        ("keys-global+nope", "unknown variant profile 'nope'")):
        with pytest.raises(ValueError, match=said):
            get_variant(wrong)


@pytest.fixture
def serve(tmp_path):
    servers = []

    def start(**settings):
        settings.setdefault("idempotency_lifetime", "PT30M")
        srv = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / f"wh{len(servers)}"), **settings))
        srv.start()
        servers.append(srv)
        c = httpx.Client(base_url=srv.url + "/v1", timeout=20)
        c.root = srv.url
        assert c.post("/namespaces", json={"namespace": ["db"]}).status_code == 200
        return c

    yield start
    for s in servers:
        s.stop()


def _table(c, name="t"):
    r = c.post("/namespaces/db/tables", json={"name": name, "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False}]}})
    assert r.status_code == 200, r.text
    return r.json()


def _commit(c, value, k=None, name="t"):
    body = {"identifier": {"namespace": ["db"], "name": name}, "requirements": [],
            "updates": [{"action": "set-properties", "updates": {"v": value}}]}
    return c.post(f"/namespaces/db/tables/{name}", json=body, headers={"Idempotency-Key": k} if k else {})


def test_payload_unchecked_replays_the_first_for_another_payload(serve):
    for variant, status in ((None, 422), ("payload-unchecked", 200), ("payload-400", 400)):
        c = serve(variant=variant)
        _table(c)
        k = key()
        first = _commit(c, "1", k)
        other = _commit(c, "2", k)
        assert other.status_code == status, (variant, other.text)
        if status == 200:
            assert other.json()["metadata-location"] == first.json()["metadata-location"]
        else:   # refused: the error model of that status, and the other payload not executed
            assert other.json()["error"]["code"] == status, other.text
            assert other.json()["error"]["type"] == ("IdempotencyKeyConflict" if status == 422 else
                                                     "BadRequestException")
            loaded = c.get("/namespaces/db/tables/t").json()
            assert loaded["metadata-location"] == first.json()["metadata-location"], variant
            assert loaded["metadata"]["properties"].get("v") == "1", variant


def test_keys_global_replays_another_operation_for_a_reused_key(serve):
    for variant, replayed in ((None, False), ("keys-global", True)):
        c = serve(variant=variant)
        k = key()
        r1 = c.post("/namespaces", json={"namespace": ["n1"]}, headers={"Idempotency-Key": k})
        r2 = c.post("/namespaces/db/tables", headers={"Idempotency-Key": k}, json={"name": "t", "schema": {
            "type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}})
        # keyed by the key alone, createTable with the key of a createNamespace gets that answer replayed
        assert (r2.json() == r1.json()) is replayed, (variant, r2.text)
        assert (c.get("/namespaces/db/tables/t").status_code == 200) is not replayed


def test_replies_rebuilt_show_the_current_state_with_the_original_in_its_log(serve):
    for variant in (None, "replies-rebuilt"):
        c = serve(variant=variant)
        _table(c)
        k = key()
        first = _commit(c, "1", k).json()
        later = _commit(c, "2").json()
        again = _commit(c, "1", k)
        assert again.status_code == 200 and again.headers.get("Idempotent-Replayed") == "true"
        body = again.json()
        if variant is None:
            assert body == first
        else:
            assert body["metadata-location"] == later["metadata-location"]
            assert first["metadata-location"] in [e["metadata-file"] for e in body["metadata"]["metadata-log"]]
            assert body["metadata"]["table-uuid"] == first["metadata"]["table-uuid"]


def test_inflight_variants_answer_a_held_duplicate(serve):
    for variant, expect in (("inflight-wait", 200), ("inflight-409-plain", 409), (None, 409)):
        c = serve(variant=variant, control_api=True)
        _table(c)
        assert c.post(c.root + "/_ctk/faults", json={"action": "delay", "operation": "updateTable", "seconds": 1.0,
                                            "times": 1}).status_code in (200, 201)
        k = key()
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("first", _commit(c, "1", k)))
        t.start()
        for _ in range(2000):     # the duplicate goes once the first holds the rule (bounded poll of the state)
            if not c.get(c.root + "/_ctk/faults").json().get("faults"):
                break
        dup = _commit(c, "1", k)
        t.join(30)
        assert dup.status_code == expect, (variant, dup.text)
        if expect == 409:
            sub = dup.json()["error"].get("subtype")
            assert sub == (None if variant else "request_in_progress")
        else:
            assert dup.json() == out["first"].json()


def test_control_api_names_the_variant(serve):
    c = serve(variant="keys-global", control_api=True)
    body = c.get(c.root + "/_ctk").json()
    assert body["variant"] == "keys-global" and body["deviation"] is None


def test_any_uuid_accepts_other_versions(serve):
    for variant, status in ((None, 400), ("any-uuid", 200)):
        c = serve(variant=variant)
        r = c.post("/namespaces", json={"namespace": ["v4"]}, headers={"Idempotency-Key": str(uuid.uuid4())})
        assert r.status_code == status, (variant, r.text)
