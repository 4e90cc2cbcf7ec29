"""Issue 30 items 6(c) and 6(d): decide more on plain catalogs.

(c) SCOPE-01 passed "per operation" on endpoints where the key has no effect at all (the reference's
`keys-partial` deviation honours keys only on createTable and updateTable, as Polaris does): that the same key on
another operation ran as a new request shows no scope when a retry of the first operation itself is not replayed.
Now: inconclusive, with the reason.

(d) DISC-04 said "ignored" on a catalog that honours keys without advertising them (an odd server that hides
the lifetime /v1/config advertises, in front of a reference that honours keys). Now a duplicate with the same
key is sent: replayed, it is a classified observation - clients cannot rely on it."""

from __future__ import annotations

from odd import Answer, Req, Rule

from ctk.catalog import ENDPOINTS
from ctk.checks.discovery import check_key_ignored_when_unsupported
from ctk.checks.idempotency import check_scope
from ctk.core.verdicts import Status


def by_req(verdicts):
    return {v.requirement: v for v in (verdicts if isinstance(verdicts, list) else [verdicts])}


def test_scope_is_inconclusive_where_the_key_has_no_effect(start_catalog):
    ctx = start_catalog(deviation="keys-partial", control_api=False)
    v = by_req(check_scope(ctx, ENDPOINTS["createNamespace"]))["SCOPE-01"]
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "has no effect on createNamespace" in v.message and v.classification == "key has no effect", v.message
    assert v.details["key_effect"]


def test_scope_still_decided_where_keys_are_honoured(start_catalog):
    ctx = start_catalog(control_api=False)
    v = by_req(check_scope(ctx, ENDPOINTS["createNamespace"]))["SCOPE-01"]
    assert v.status is Status.PASS and "per operation" in (v.classification or ""), v.message


class hide_key_support(Rule):
    """/v1/config advertises no idempotency-key-lifetime (the catalog behind still honours keys)."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json() if req.is_("GET", r"/v1/config$") and answer.status == 200 else None
        if isinstance(body, dict) and "idempotency-key-lifetime" in body:
            body.pop("idempotency-key-lifetime")
            self.hit()
            return Answer.of(200, body)
        return None


def test_keys_honoured_without_advertising_are_said(make_odd):
    rule = hide_key_support()
    ctx, _ = make_odd([rule])
    assert rule.hits >= 1 and not ctx.idempotency_supported
    v = by_req(check_key_ignored_when_unsupported(ctx))["DISC-04"]
    assert v.status is Status.PASS and v.classification == "honoured without advertising", v.message
    assert "cannot rely on it" in v.message and v.details["duplicate_status"] == v.details["status"]


def test_keys_ignored_without_advertising_stay_ignored(make_odd):
    ctx, _ = make_odd([], idempotency_lifetime=None)
    v = by_req(check_key_ignored_when_unsupported(ctx))["DISC-04"]
    assert v.status is Status.PASS and v.classification == "ignored", v.message
