"""Issue 34 item 5: a capability probe that could not run because a plain operation is broken leaves its
capability undecided, naming that operation. A catalog whose createTable refused every request had NS-09 and
TBL-10 "not applicable" (the probes read the refusal of a dotted name or a v3 table as "not supported")."""

from __future__ import annotations


from odd import Answer, Req, Rule

from ctk.checks.semantics.probes import format_v3, names_with_dot_or_slash

CREATE_TABLE = r"/namespaces/[^/]+/tables$"


class refuse_creates(Rule):
    """createTable answers 400 to every request (``only``: to those whose body holds that text)."""

    def __init__(self, only: str | None = None) -> None:
        super().__init__()
        self.only = only

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", CREATE_TABLE) and (self.only is None or self.only in req.body.decode()):
            self.hit()
            return Answer.of(400, {"error": {"message": "no", "type": "BadRequestException", "code": 400}})
        return None


def test_probes_are_undecided_naming_create_table_when_every_create_is_refused(make_odd):
    rule = refuse_creates()
    ctx, _ = make_odd([rule])
    for probe in (names_with_dot_or_slash, format_v3):
        known = probe(ctx)
        assert known.supported is None, (probe.__name__, known)
        assert "createTable itself is broken" in known.why, (probe.__name__, known.why)
    assert rule.hits >= 4


def test_a_refusal_of_only_the_capability_is_not_supported(make_odd):
    names, v3 = refuse_creates('"ctk.dot"'), refuse_creates('"format-version"')
    ctx, _ = make_odd([names, v3])
    assert names_with_dot_or_slash(ctx).supported is False
    assert format_v3(ctx).supported is False
    assert names.hits == 1 and v3.hits == 1, (names.hits, v3.hits)
    plain = [e for e in ctx.client.exchanges if "plain name" in (e.label or "")]
    assert len(plain) == 2 and all(e.status == 200 for e in plain), [e.status for e in plain]
