"""Issue 30 item 3: GEN-02 blames replay only for what the replay changed, not for the catalog's semantics.

A catalog that accepts createView in a namespace that does not exist (it creates the namespace on the fly; the
merged spec documents 404 NoSuchNamespace) answers 200. When that create's answer is lost and the kit retries with
the same key, the catalog rightly replays the stored 200: what it did the first time. The model's expectation of a
step comes from what the catalog does without a retry, so the sequence without its retry and fault (the same
create sent once) shows the 404 the model expected answered 200: SEM-01, not a GEN-02 failure of the replay."""

from __future__ import annotations

import httpx
from odd import Answer, Req, Rule
from test_model_semantics import _split

from ctk.fuzzing import StatefulOptions
from ctk.fuzzing.backstop import Progress
from ctk.fuzzing.stateful import _Found, _Shared, _without_replays, build_machine

CREATE_VIEW = r"/namespaces/[^/]+/views$"


class create_view_in_missing_namespace(Rule):
    """createView in a namespace that does not exist: the namespace is created on the fly, the view with it."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", CREATE_VIEW):
            base, levels = _split(req)
            ns = req.path.rsplit("/views", 1)[0]
            if httpx.get(self.upstream + ns, timeout=10).status_code == 404:
                httpx.post(self.upstream + base + "/namespaces", json={"namespace": levels}, timeout=10)
                self.hit()
        return None


class Draws:
    """Stands for hypothesis' ``data`` of a rule: the values drawn, in order."""

    def __init__(self, *values: object) -> None:
        self.values = list(values)

    def draw(self, strategy: object, label: str | None = None) -> object:
        return self.values.pop(0)


def test_a_replayed_lenient_create_is_sem01_not_gen02(make_odd):
    rules: list = []
    ctx, _ = make_odd(lambda up: rules.append(create_view_in_missing_namespace(up)) or rules, interposer=True)
    shared = _Shared(ctx, StatefulOptions(), progress=Progress(ctx.client, float("inf")), lifetime=None, can_lose=True,
                     can_fail_before=False)
    machine = build_machine(shared)()
    try:
        machine.create_namespace("a", {})
        machine.touched_match_model()
        # createView b.v1 (no namespace b): the answer is lost after commit, the retry replays the stored 200
        machine.retry_after_lost_answer(Draws("create_view", "b", "v1"))
    except _Found:
        pass
    finally:
        machine._cleanup()
    f = shared.failure
    assert rules[0].hits == 1 and f is not None
    assert "got 503 then 200" in f.steps[-1], f.steps          # what was seen: the lost answer, the replayed 200
    # the blame: the same sequence without its retry and fault answers 200 where the model expects 404 (SEM-01)
    plain = _without_replays(shared, f)
    assert plain is not None, f"blamed on replay: {f.kind}: {f.text}"
    assert (plain.kind, plain.requirement, plain.replayed) == ("unexpected-status", "SEM-01", False), plain.text
    assert "create view b.v1" in plain.text and "the model expects 404" in plain.text
    assert plain.signature == ("status", "createView", (404,))
    assert rules[0].hits == 2


def test_the_whole_run_blames_sem01_and_decides_gen02(make_odd):
    from test_model_semantics import OPTS, by_req

    from ctk.core.verdicts import Status
    from ctk.fuzzing import run_stateful_check

    rules: list = []
    ctx, _ = make_odd(lambda up: rules.append(create_view_in_missing_namespace(up)) or rules, interposer=True)
    vs = by_req(run_stateful_check(ctx, options=StatefulOptions(**OPTS)))
    assert rules[0].hits >= 1
    assert vs["SEM-01"].status is Status.DEVIATION and "createView" in vs["SEM-01"].message, vs["SEM-01"].message
    assert vs["GEN-02"].status is Status.PASS, vs["GEN-02"].message
