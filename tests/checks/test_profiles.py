"""Levels per source and the judging profile (ctk.core.requirements): which level each profile gives, what a
broken rule becomes under it (Verdict.broken, checks' Run.broken), and the --ctk-profile option."""

from __future__ import annotations

import pytest

from ctk.core import requirements as rq
from ctk.core.requirements import Level, get
from ctk.core.verdicts import Status, Verdict

# The kit holds these MUST under every profile (the list: no additional effect for a duplicate,
# 5xx never stored, optimistic concurrency, history, integrity).
MUST_BOTH = ["REPLAY-01", "REPLAY-03", "REPLAY-04", "INFLIGHT-01", "RECON-01", "RECON-02", "GEN-01",
             "OCC-01", "OCC-02", "OCC-03", "OCC-04", "HIST-01", "HIST-02", "INTEG-01"]


@pytest.fixture
def profile():
    previous = rq.active_profile()
    yield rq.set_profile
    rq.set_profile(previous)


def test_default_profile_is_spec():
    assert rq.DEFAULT_PROFILE == "spec" and rq.active_profile() == "spec"


@pytest.mark.parametrize("rid", MUST_BOTH)
def test_must_under_both_profiles(rid):
    assert get(rid).levels == {"spec": Level.MUST, "design": Level.MUST}


@pytest.mark.parametrize("rid,spec,design", [
    ("INFLIGHT-02", Level.CLASSIFIED, Level.SHOULD),     # the spec has no request_in_progress
    ("PAYLOAD-01", Level.CLASSIFIED, Level.SHOULD),      # nor 422 for a reused key
    ("SCOPE-01", Level.CLASSIFIED, Level.SHOULD),        # keys are globally unique: keyed by key alone is fine
    ("REPLAY-05", Level.CLASSIFIED, Level.SHOULD),       # "may reflect a newer state"
    ("RECON-03", Level.CLASSIFIED, Level.SHOULD),        # no idempotency_replay_failed in the spec
    ("LIFE-01", Level.SHOULD, Level.MUST),               # SHOULD NOT expire / MUST apply for the lifetime
    ("REPLAY-02", Level.SHOULD, Level.SHOULD),           # finalization rules carry no RFC 2119 word
])
def test_levels_where_the_sources_differ(rid, spec, design):
    assert get(rid).levels == {"spec": spec, "design": design}


def test_every_requirement_names_its_sentences():
    for r in rq.REQUIREMENTS.values():
        if not r.said:      # an entry in the old form: one level under every profile
            assert r.level_under("spec") == r.level_under("design") == r.base_level
            continue
        for s in r.said:
            assert s.quote and s.where and s.source in rq.SOURCE_NAMES, r.id
        for p in rq.PROFILES:
            assert r.rests_on(p)
    # a rule stated without an RFC 2119 word counts as SHOULD, and says so
    said = get("REPLAY-02").saying("spec")
    assert said.level is None and said.effective is Level.SHOULD and "no RFC 2119 word" in said.word


def test_old_form_entries_keep_working():
    r = rq.Requirement("X-01", "x", Level.MUST, "somewhere", "a statement", subject="client")
    assert r.level is Level.MUST and r.source == "somewhere" and r.statement == "a statement"
    assert r.levels == {"spec": Level.MUST, "design": Level.MUST}


def test_verdict_broken_uses_the_active_profile(profile):
    assert Verdict.broken("LIFE-01", "forgotten").status is Status.DEVIATION
    v = Verdict.broken("PAYLOAD-01", "replayed the first")       # the spec does not state it: classified
    assert v.status is Status.PASS and v.message == "classified, not judged under the spec profile: replayed the first"
    profile("design")
    assert Verdict.broken("LIFE-01", "forgotten").status is Status.FAIL
    assert get("LIFE-01").level is Level.MUST and "seeds/001" in get("LIFE-01").rests_on()
    assert Verdict.broken("LIFE-01", "x").to_dict()["level"] == "MUST"
    assert Verdict.broken("PAYLOAD-01", "replayed the first").status is Status.DEVIATION


def test_status_if_broken():
    assert rq.status_if_broken("PAYLOAD-01", "spec") == "pass"
    assert rq.status_if_broken("PAYLOAD-01", "design") == "deviation"
    assert rq.status_if_broken("REPLAY-01", "spec") == rq.status_if_broken("REPLAY-01", "design") == "fail"


def test_unknown_profile_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown profile 'strict'; known: spec, design"):
        rq.set_profile("strict")
    assert rq.active_profile() == "spec"
    with pytest.raises(ValueError, match="unknown profile"):
        get("LIFE-01").level_under("strict")


class _Client:
    exchanges: list = []


class _Ctx:
    client = _Client()


def test_a_broken_classified_rule_passes_with_its_classification_and_the_other_verdict(profile):
    from ctk.checks.common import Run
    from ctk.checks.judging import broken

    v = broken(Run(_Ctx(), "PAYLOAD-01", None, "payload-mismatch"), "422", "replayed the first", "undetected")
    assert v.status is Status.PASS and v.classification == "undetected"
    assert v.message.startswith("classified, not judged under the spec profile")
    assert "under the design profile: deviation" in v.message
    assert v.details["profiles"] == {"spec": "pass", "design": "deviation"} and v.details["rule_broken"]
    profile("design")
    v = broken(Run(_Ctx(), "PAYLOAD-01", None, "payload-mismatch"), "422", "replayed the first", "undetected")
    assert v.status is Status.DEVIATION and "expected: 422" in v.message
    assert "Different payload -> 422" in v.details["rests_on"]


def test_plugin_option(pytester):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--ctk", "--ctk-profile", "lenient", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--ctk-profile: unknown profile 'lenient'; known: spec, design*"])


def test_the_kits_openapi_document_takes_a_plain_in_flight_409():
    """SCHEMA-01 judges shapes, not the design document's subtype: a 409 without it is allowed by the merged spec."""
    from ctk.core.exchange import Exchange
    from ctk.openapi import load_spec

    def ex(sub):
        err = {"message": "busy", "type": "RequestInProgressException", "code": 409, **({"subtype": sub} if sub else {})}
        import json
        return Exchange("POST", "http://127.0.0.1:1/v1/namespaces/db/tables/t/plan", status=409,
                        response_headers={"content-type": "application/json"}, response_body=json.dumps({"error": err}))

    spec = load_spec()
    assert spec.validate(ex(None)) == [] and spec.validate(ex("request_in_progress")) == []
    assert spec.validate(ex("something_else"))


def test_schema_01_does_not_judge_the_answer_to_a_deliberately_reused_key():
    """Keyed by the key alone (allowed by the spec), a server replays createTable's answer to the kit's
    createNamespace that reuses the key on purpose (SCOPE-01's probe): not a schema deviation."""
    import json

    from ctk.core.exchange import Exchange
    from ctk.openapi import load_spec
    from ctk.suites.test_schema import _verdict

    def ex(label):
        return Exchange("POST", "http://127.0.0.1:1/v1/namespaces", status=200, label=label,
                        response_headers={"content-type": "application/json"},
                        response_body=json.dumps({"metadata-location": "m.json", "metadata": {}}))

    good = Exchange("POST", "http://127.0.0.1:1/v1/namespaces", status=200, label="first attempt",
                    response_headers={"content-type": "application/json"},
                    response_body=json.dumps({"namespace": ["a"], "properties": {}}))
    spec = load_spec()
    assert _verdict(spec, [good, ex("reused key: the same key on createNamespace")], "t").status.value == "pass"
    assert _verdict(spec, [good, ex("retry")], "t").status.value == "deviation"
