"""GEN-01 / SCHEMA-01 through schemathesis: passes on the reference catalog, catches replay deviations,
touches nothing outside the run namespace, and is deterministic under a seed."""

from __future__ import annotations

import json
import time
from urllib.parse import unquote, urlsplit

import pytest

from ctk.catalog import Catalog, drop_tree
from ctk.core.verdicts import Status
from ctk.fuzzing import GenOptions, run_openapi_checks

SUBSET = ("createNamespace", "updateProperties", "createTable", "updateTable", "renameTable", "dropView")


def by(verdicts, req):
    return {v.endpoint: v for v in verdicts if v.requirement == req}


def test_gen01_and_schema01_pass_on_reference(gen_ctx, timed):
    ctx = gen_ctx()
    vs = run_openapi_checks(ctx, examples=3, operations=SUBSET)
    gen, schema = by(vs, "GEN-01"), by(vs, "SCHEMA-01")
    assert set(gen) == set(SUBSET), vs
    for op, v in gen.items():
        assert v.status is Status.PASS, (op, v.message)
        assert v.details["examples"] == 3 and v.details["observe"] == "counters"   # a count, whatever the load
    for op, v in schema.items():
        assert v.status is Status.PASS, (op, v.message)
    # well-formed cases reach success, not only 4xx: the steering gives valid cores
    ok = sum(n for v in gen.values() for s, n in v.details["statuses"].items() if s.startswith("2"))
    assert ok >= 3, {op: v.details["statuses"] for op, v in gen.items()}


def test_generated_requests_stay_in_the_run_namespace(gen_ctx):
    from ctk.checks.semantics.baseline import baseline

    ctx = gen_ctx()
    run_ns = ctx.namespace[0]
    operations = ("createNamespace", "renameTable", "commitTransaction", "dropNamespace")
    for op in operations:      # the plain-operation baselines GEN-01 rests on leave their own namespaces
        baseline(ctx, op)
    before = Catalog(ctx.client).list_namespaces((run_ns,))
    mark = len(ctx.client.exchanges)
    run_openapi_checks(ctx, examples=3, operations=operations)
    muts = [e for e in ctx.client.exchanges[mark:] if e.method in ("POST", "DELETE") and "/_ctk" not in e.url]
    assert len(muts) >= 8
    for e in muts:
        path = unquote(urlsplit(e.url).path)
        if "/namespaces/" in path:
            assert path.split("/namespaces/", 1)[1].startswith(run_ns + "\x1f"), e.url
        body = json.loads(e.request_body) if e.request_body else {}
        names = []
        if isinstance(body.get("namespace"), list):
            names.append(body["namespace"])
        for k in ("source", "destination", "identifier"):
            if isinstance(body.get(k), dict):
                names.append(body[k]["namespace"])
        for c in body.get("table-changes") or []:
            names.append(c["identifier"]["namespace"])
        for ns in names:
            assert ns[0] == run_ns and len(ns) >= 2, (e.url, body)
    # the arenas are gone afterwards
    assert Catalog(ctx.client).list_namespaces((run_ns,)) == before


@pytest.mark.parametrize("deviation,kinds", [("no-replay", {"replay-status", "re-executed", "replay-body"}),
                                             ("replay-different-body", {"replay-status", "replay-body"})])
def test_gen01_catches_replay_deviations(gen_ctx, timed, deviation, kinds):
    ctx = gen_ctx(deviation)
    vs = run_openapi_checks(ctx, examples=4, operations=("createNamespace", "updateProperties"))
    gen = by(vs, "GEN-01")
    failed = [v for v in gen.values() if v.status is Status.FAIL]
    assert failed, [(v.endpoint, v.status, v.message[:200]) for v in vs]
    for v in failed:
        assert v.classification in kinds, v.classification
        assert "minimal failing example" in v.message and "Idempotency-Key" in v.message
        assert v.exchanges and v.exchanges[0]["request_headers"].get("Idempotency-Key")
        # the failing exchange pair carries the same key
        keys = {e["request_headers"].get("Idempotency-Key") for e in v.exchanges if "generated" in (e["label"] or "")}
        assert len(keys) == 1


def test_gen01_state_observation_without_counters(gen_ctx):
    ctx = gen_ctx()
    vs = run_openapi_checks(ctx, options=GenOptions(examples=3, operations=("updateTable", "createView"),
                                                    observe="state"))
    gen = by(vs, "GEN-01")
    assert all(v.status is Status.PASS and v.details["observe"] == "state" for v in gen.values()), \
        [(v.endpoint, v.message[:300]) for v in gen.values()]


def test_gen01_is_deterministic_under_a_seed(gen_ctx):
    ctx = gen_ctx()
    a = by(run_openapi_checks(ctx, examples=4, seed=7, operations=("createTable",)), "GEN-01")
    b = by(run_openapi_checks(ctx, examples=4, seed=7, operations=("createTable",)), "GEN-01")
    assert a["createTable"].details["statuses"] == b["createTable"].details["statuses"]


def test_gen01_unsupported_without_advertised_lifetime(tmp_path):
    from ctk.checks.context import CheckContext
    from ctk.client.transport import CatalogClient
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings
    from ctk.client.config import TargetConfig

    s = ReferenceSettings(warehouse=str(tmp_path), control_api=True)
    s.idempotency_lifetime = None
    with ReferenceServer(s) as srv, CatalogClient(TargetConfig(srv.url)) as client:
        ctx = CheckContext.create(client)
        vs = run_openapi_checks(ctx, examples=1, operations=("createNamespace",))
        assert [v.status for v in vs] == [Status.UNSUPPORTED]


def test_hang_backstop_gives_inconclusive_naming_the_option(gen_ctx):
    ctx = gen_ctx()
    vs = run_openapi_checks(ctx, examples=2, operations=("createNamespace", "dropNamespace"), backstop_s=0.0)
    assert {v.status for v in vs} == {Status.INCONCLUSIVE}
    assert all("--ctk-gen-budget" in v.message and "hang backstop" in v.message for v in vs), [v.message for v in vs]


def test_the_number_of_cases_is_a_count_not_a_time(gen_ctx, monkeypatch):
    """Every operation runs the asked number of examples however slow the catalog answers: a slow transport
    (each request 50 ms late, as on a busy runner) changes the time taken, never the cases nor the verdicts."""
    ctx = gen_ctx()
    ops = ("createNamespace", "updateProperties")
    quick = run_openapi_checks(ctx, examples=4, seed=3, operations=ops)
    request = ctx.client.request

    def slow(*a, **kw):
        time.sleep(0.05)
        return request(*a, **kw)

    monkeypatch.setattr(ctx.client, "request", slow)
    slowed = run_openapi_checks(ctx, examples=4, seed=3, operations=ops)
    assert [(v.requirement, v.endpoint, v.status) for v in quick] == \
        [(v.requirement, v.endpoint, v.status) for v in slowed]
    assert all(v.status is Status.PASS for v in slowed), [v.message[:300] for v in slowed]
    for v in by(slowed, "GEN-01").values():
        assert v.details["examples"] == v.details["examples_asked"] == 4, v.details



def test_arena_state_sees_a_commit_and_only_a_commit(gen_ctx):
    """The observation used without counters: a commit (new metadata location) changes it, reads do not."""
    from ctk.fuzzing.openapi_run import arena_state, make_arena

    ctx = gen_ctx()
    arena = make_arena(ctx, "obs")
    s0 = arena_state(ctx.client, arena)
    assert set(s0) == {".".join(arena.ns), ".".join(arena.ns + ("n0",))}
    assert arena_state(ctx.client, arena) == s0
    Catalog(ctx.client).commit_table(arena.ns, "t0", {"k2": "b"}, "test")
    s1 = arena_state(ctx.client, arena)
    assert s1 != s0 and s1[".".join(arena.ns)]["tables"]["t0"] != s0[".".join(arena.ns)]["tables"]["t0"]
    drop_tree(ctx.client, arena.ns)
    assert ctx.client.load_namespace(arena.ns) is None


def test_schema01_flags_a_nonconforming_replay(gen_ctx):
    """replay-different-body replays a success as {"replayed": true}: not the body the document declares (enough
    examples that some generated createNamespace succeeds; a stored 4xx replays as stored)."""
    ctx = gen_ctx("replay-different-body")
    vs = run_openapi_checks(ctx, examples=6, operations=("createNamespace",))
    v = by(vs, "SCHEMA-01")["createNamespace"]
    assert v.status is Status.DEVIATION, v.message
    assert "(replay)" in v.message and "required" in v.message


def test_a_slow_catalog_that_keeps_answering_is_never_cut(gen_ctx, monkeypatch):
    """Issue 30 (7): on a busy runner GEN-01 took longer than a wall-clock limit and lost its verdict. The hang
    backstop fires only when no request was answered for --ctk-gen-budget seconds: a run that takes many times that
    long, answered all along (each request 50 ms late), gives the verdicts of a quick run."""
    ctx = gen_ctx()
    ops = ("createNamespace", "updateProperties")
    request = ctx.client.request

    def slow(*a, **kw):
        time.sleep(0.05)
        return request(*a, **kw)

    monkeypatch.setattr(ctx.client, "request", slow)
    t0 = time.monotonic()
    vs = run_openapi_checks(ctx, examples=4, seed=3, operations=ops, backstop_s=0.5)
    took = time.monotonic() - t0
    assert took > 2 * 0.5, took                       # far longer than the backstop, in total
    assert all(v.status is Status.PASS for v in vs), [v.message[:300] for v in vs]
    for v in by(vs, "GEN-01").values():
        assert v.details["examples"] == v.details["examples_asked"] == 4, v.details


def test_the_backstop_fires_only_after_no_answer_for_its_time():
    """The backstop's clock (Progress): answers keep it alive however long the run; a span without any answer
    (transport errors do not count) longer than the limit stops it."""
    from types import SimpleNamespace

    from ctk.fuzzing.backstop import Progress

    now = [0.0]
    exchanges: list = []
    client = SimpleNamespace(exchanges=exchanges, exchanges_since=lambda i: exchanges[i:])
    progress = Progress(client, 10.0, clock=lambda: now[0])
    for _ in range(100):                               # 100 answers, 9 s apart: 900 s in all, never stalled
        now[0] += 9.0
        exchanges.append(SimpleNamespace(status=200))
        assert not progress.stalled()
    now[0] += 9.0
    exchanges.append(SimpleNamespace(status=None))      # a timeout is no answer
    assert not progress.stalled()
    now[0] += 2.0
    assert progress.stalled()                          # 11 s since the last answer


def test_generated_openapi_has_no_wall_clock_limit(pytester):
    """No kit check has pytest-timeout's wall clock (0, issue 36): the generated OpenAPI cases' backstop is
    progress and the others' budgets count requests, so a busy runner cannot turn a verdict into an ERROR."""
    pytester.makeconftest("""
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        m = item.get_closest_marker("timeout")
        print("TIMEOUT", getattr(item, "originalname", item.name), m.args[0] if m else None)
""")
    r = pytester.runpytest_subprocess("--ctk", "--collect-only", "-q", "-k", "generated_openapi or (createNamespace "
                                      "and finalized)", "-p", "no:cacheprovider", "-s")
    lines = {ln.split()[1]: ln.split()[2] for ln in r.stdout.lines if ln.startswith("TIMEOUT ")}
    assert lines.get("test_generated_openapi") == "0", r.stdout.str()[-2000:]
    assert lines.get("test_idempotency") == "0" and lines.get("createNamespace_finalized_duplicate", "0") == "0", lines
