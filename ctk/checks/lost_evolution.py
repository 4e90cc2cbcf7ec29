"""REPLAY-04 for every kind of evolution commit: the answer is lost after the commit, the kit's retrying client
retries with the same Idempotency-Key, and the final metadata must be exactly one execution's (issue 28, beyond
the Java kit).

Each kind is one commit on a table (a view for the view version) of its own, sent through the interposer whose
``drop_response`` lets the catalog commit and closes the connection without a byte of the answer. Between the
lost attempt and the retry, the kit reads the table (the commit is there, once) and makes a re-execution visible:
a plain commit of the same kind moves the state away from what the lost commit made (the earlier schema, spec or
order made current again, the property set to another value, the ref removed, another view version made current).
A replay leaves that state as it is; a second execution brings the lost commit's change back (an equal schema,
spec or order is reused by its id in Java's builder: the current one changes back), or adds a second copy.

=============  =================================================  ===================================
kind           the commit whose answer is lost                    the interference (plain, no key)
=============  =================================================  ===================================
schema         add-schema (a new column), set-current-schema -1  set-current-schema 0
spec           add-spec (bucket), set-default-spec -1             set-default-spec 0
sort-order     add-sort-order, set-default-sort-order -1          set-default-sort-order 0
properties     set-properties ctk.lost=own                        set-properties ctk.lost=other
refs           set-snapshot-ref (a tag on the table's snapshot)   remove-snapshot-ref
replace        a replace transaction (schema, spec, order)        set-current-schema 0
view-version   add-view-version, set-current-view-version -1      another version made current
=============  =================================================  ===================================

The commits assert only the table's (view's) uuid: a requirement the interference breaks would turn a second
execution into a 409, which the check also names, but a change in state is the clearer evidence. Where the
target has the reference control API, its execution counters are a second witness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ctk.catalog import ENDPOINTS, Endpoint, PrerequisiteError
from ctk.catalog.bodies import create_table_body, create_view_body, ident, set_properties_update, view_version
from ctk.checks.common import Run, counter_delta, describe, guarded
from ctk.checks.context import CheckContext
from ctk.checks.faulted import (NetworkOptions, attempt_statuses, execution_counters, keys_problem,
                                retrying_client)
from ctk.checks.faults import FaultMatch
from ctk.client.keys import new_key
from ctk.client.retrying import IdempotencyWindowExpired
from ctk.client.transport import ns_path, table_path, view_path
from ctk.core import needs
from ctk.core.behaviours import Behaviour, check
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.history.recorder import History
from ctk.interposer.faults import HttpFaults
from ctk.interposer.runtime import Interposer

KINDS = ("schema", "spec", "sort-order", "properties", "refs", "replace", "view-version")


@dataclass
class Plan:
    """One kind's commit, its interference and how the final metadata is judged."""

    operation: str                              # updateTable / replaceView
    path: str                                   # the resource's path (table or view)
    body: dict                                  # the commit whose answer is lost
    interference: dict                          # the plain commit between the attempts
    once: Callable[[dict], str | None]          # after the lost attempt: None when the commit is there once
    final: Callable[[dict, dict], str | None]   # (state after the interference, final state): None when one run


def _meta(ex: Exchange) -> dict | None:
    body = ex.json() if ex.status == 200 else None
    m = body.get("metadata") if isinstance(body, dict) else None
    return m if isinstance(m, dict) else None


def _ids(m: dict, items: str, key: str) -> list[Any]:
    return [i.get(key) for i in m.get(items) or [] if isinstance(i, dict)]


def _commit_body(ns: tuple[str, ...], name: str, uuid_req: dict, updates: list[dict]) -> dict:
    return {"identifier": ident(ns, name), "requirements": [uuid_req], "updates": updates}


def _table(ctx: CheckContext, ns: tuple[str, ...], stem: str) -> tuple[str, dict]:
    name = ctx.unique(stem)
    ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables", json=create_table_body(name),
                            label=f"setup: create table {name}")
    m = _meta(ex)
    if m is None:
        raise PrerequisiteError(f"setup: create table {name} answered {describe(ex)}", ex)
    return name, m


def _grown(before: dict, items: str, key: str, current: str, what: str) -> Callable[[dict], str | None]:
    """``once`` for an add-and-make-current commit: one more item, and it is current."""
    n = len(_ids(before, items, key))

    def once(m: dict) -> str | None:
        have = _ids(m, items, key)
        if len(have) != n + 1 or m.get(current) == before.get(current):
            return f"{len(have) - n} new {what} (expected 1), current {m.get(current)}"
        return None
    return once


def _one_run(items: str, key: str, current: str, what: str) -> Callable[[dict, dict], str | None]:
    """``final`` for an add-and-make-current commit: the interference's current item, no further item."""
    def final(base: dict, m: dict) -> str | None:
        problems = []
        if m.get(current) != base.get(current):
            problems.append(f"{current} went from {base.get(current)} (the interference's) back to {m.get(current)}")
        if len(_ids(m, items, key)) != len(_ids(base, items, key)):
            problems.append(f"{len(_ids(m, items, key)) - len(_ids(base, items, key))} more {what}")
        return "; ".join(problems) or None
    return final


def _plan(ctx: CheckContext, kind: str) -> Plan:
    from ctk.checks.semantics.evolution import (NEW_COL, SHARD, BUCKET_THEN_ID, add_order, add_schema, add_spec,
                                                order, set_current_schema, set_default_order, set_default_spec,
                                                spec, stage_with, struct, field)

    ns = tuple(ctx.namespace)
    if kind == "view-version":
        name = ctx.unique("lost_view")
        ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/views",
                                json=create_view_body(ns, name, "SELECT 1 AS id"), label=f"setup: create view {name}")
        vm = _meta(ex)
        if vm is None:
            raise PrerequisiteError(f"setup: create view {name} answered {describe(ex)}", ex)
        vreq = {"type": "assert-view-uuid", "uuid": vm.get("view-uuid")}

        def version(sql: str) -> list[dict]:
            return [{"action": "add-view-version", "view-version": view_version(ns, sql)},
                    {"action": "set-current-view-version", "view-version-id": -1}]

        n = len(_ids(vm, "versions", "version-id"))

        def once_v(m: dict) -> str | None:
            have = len(_ids(m, "versions", "version-id"))
            return None if have == n + 1 else f"{have - n} new versions (expected 1)"

        def final_v(base: dict, m: dict) -> str | None:
            problems = []
            if m.get("current-version-id") != base.get("current-version-id"):
                problems.append(f"current-version-id went from {base.get('current-version-id')} (the "
                                f"interference's) to {m.get('current-version-id')}")
            if len(_ids(m, "versions", "version-id")) != len(_ids(base, "versions", "version-id")):
                problems.append(f"{len(_ids(m, 'versions', 'version-id')) - len(_ids(base, 'versions', 'version-id'))}"
                                " more versions")
            return "; ".join(problems) or None

        return Plan("replaceView", view_path(ns, name), _commit_body(ns, name, vreq, version("SELECT 2 AS id")),
                    _commit_body(ns, name, vreq, version("SELECT 3 AS id")), once_v, final_v)

    name, m = _table(ctx, ns, f"lost_{kind.replace('-', '_')}")
    treq = {"type": "assert-table-uuid", "uuid": m.get("table-uuid")}
    path = table_path(ns, name)

    def plan(updates: list[dict], interference: list[dict], once: Callable[[dict], str | None],
             final: Callable[[dict, dict], str | None]) -> Plan:
        return Plan("updateTable", path, _commit_body(ns, name, treq, updates),
                    _commit_body(ns, name, treq, interference), once, final)

    if kind == "schema":
        return plan([add_schema(NEW_COL, 3), set_current_schema()], [set_current_schema(0)],
                    _grown(m, "schemas", "schema-id", "current-schema-id", "schemas"),
                    _one_run("schemas", "schema-id", "current-schema-id", "schemas"))
    if kind == "spec":
        return plan([add_spec(spec(SHARD, spec_id=1)), set_default_spec()], [set_default_spec(0)],
                    _grown(m, "partition-specs", "spec-id", "default-spec-id", "specs"),
                    _one_run("partition-specs", "spec-id", "default-spec-id", "specs"))
    if kind == "sort-order":
        return plan([add_order(order(*BUCKET_THEN_ID)), set_default_order()], [set_default_order(0)],
                    _grown(m, "sort-orders", "order-id", "default-sort-order-id", "sort orders"),
                    _one_run("sort-orders", "order-id", "default-sort-order-id", "sort orders"))
    if kind == "properties":
        def once_p(after: dict) -> str | None:
            got = (after.get("properties") or {}).get("ctk.lost")
            return None if got == "own" else f"ctk.lost is {got!r}"

        def final_p(base: dict, after: dict) -> str | None:
            got = (after.get("properties") or {}).get("ctk.lost")
            return None if got == "other" else f"ctk.lost went from 'other' (the interference's) to {got!r}"

        return plan([set_properties_update({"ctk.lost": "own"})], [set_properties_update({"ctk.lost": "other"})],
                    once_p, final_p)
    if kind == "refs":
        loaded = ctx.client.request("GET", path, label="setup: load the table to append to").json()
        staged = stage_with(ctx.client, ns, name, loaded if isinstance(loaded, dict) else {}, "lost-refs")
        ex = ctx.client.request("POST", staged.path, json=staged.body, label="setup: an append to tag")
        if ex.status != 200:
            raise PrerequisiteError(f"setup: an append answered {describe(ex)}", ex)
        tag = {"action": "set-snapshot-ref", "ref-name": "ctk_lost", "type": "tag", "snapshot-id": staged.snapshot_id}

        def once_r(after: dict) -> str | None:
            ref = (after.get("refs") or {}).get("ctk_lost")
            return None if isinstance(ref, dict) and ref.get("snapshot-id") == staged.snapshot_id else f"ref {ref}"

        def final_r(base: dict, after: dict) -> str | None:
            ref = (after.get("refs") or {}).get("ctk_lost")
            return None if ref is None else f"the tag removed by the interference is back: {ref}"

        return plan([tag], [{"action": "remove-snapshot-ref", "ref-name": "ctk_lost"}], once_r, final_r)
    if kind == "replace":
        replaced = struct(field(1, "id", "long"), field(3, "replaced", "string"), schema_id=1)
        updates = [add_schema(replaced, 3), set_current_schema(), add_spec(spec(SHARD, spec_id=1)),
                   set_default_spec(), add_order(order((1, "identity"))), set_default_order(),
                   set_properties_update({"ctk.replaced": "yes"})]
        return plan(updates, [set_current_schema(0)],
                    _grown(m, "schemas", "schema-id", "current-schema-id", "schemas"),
                    _one_run("schemas", "schema-id", "current-schema-id", "schemas"))
    raise ValueError(f"unknown evolution commit kind {kind!r}; known: {', '.join(KINDS)}")


def _lost(run: Run, ctx: CheckContext, endpoint: Endpoint, ip: Interposer, kind: str, opts: NetworkOptions) -> Verdict:
    plan = _plan(ctx, kind)
    key = new_key()
    history = History()
    faults = HttpFaults(ip)
    from ctk.interposer import HttpMatch

    regex = FaultMatch(plan.operation, "POST", plan.path, key).path_regex(ctx.client)
    rule = faults.drop_answer(HttpMatch(method="POST", path=regex, header="Idempotency-Key", header_value=key))
    seen: dict[str, Any] = {}

    def read(label: str) -> dict | None:
        return _meta(ctx.client.request("GET", plan.path, label=label))

    def between() -> None:
        seen["mid"] = read("read: the state after the lost answer")
        seen["once"] = plan.once(seen["mid"]) if seen["mid"] is not None else "the state could not be read"
        if seen["once"] is None:
            seen["interfered"] = ctx.client.request("POST", plan.path, json=plan.interference,
                                                    label="interference: a plain commit of the same kind")
        seen["base"] = read("read: the state after the interference")
        seen["c0"] = execution_counters(ctx)

    rc = retrying_client(ctx, history, between, opts)
    try:
        final = rc.mutate("POST", plan.path, json=plan.body, op=plan.operation, value=key, key=key,
                          label=f"{plan.operation} ({kind}; answer dropped after the commit)")
    except IdempotencyWindowExpired as exc:
        return run.inconclusive(f"the retrying client stopped: {exc}", "window expired", {"key": key})
    finally:
        faults.remove(rule)
    attempts = list(rc.last_attempts)
    c1 = execution_counters(ctx)
    details: dict[str, Any] = {"key": key, "kind": kind, "attempts": attempt_statuses(attempts),
                               "history": history.to_list()}
    if "mid" not in seen:
        return run.inconclusive(f"the injected fault did not happen: the first attempt got {describe(attempts[0])} "
                                "and the client did not retry", "fault missed", details)
    if (kp := keys_problem(attempts)) is not None:
        return run.inconclusive(kp, "client", details)
    if seen["once"] is not None:
        return run.inconclusive(f"the lost attempt did not leave the {kind} commit there once: {seen['once']}",
                                "not committed", details)
    interfered = seen.get("interfered")
    if not isinstance(interfered, Exchange) or interfered.status != 200 or seen.get("base") is None:
        what = describe(interfered) if isinstance(interfered, Exchange) else "not sent"
        return run.inconclusive(f"the interference (a plain {kind} commit) answered {what}: a second execution "
                                "could not be made visible", "interference failed", details)
    after = read("read: the final state")
    if after is None:
        return run.inconclusive("the final state could not be read", "state unreadable", details)
    counted = counter_delta(seen.get("c0"), c1, plan.operation)
    details["counter_delta"] = counted
    problems = []
    if final.status not in endpoint.success:
        problems.append(f"the retry got {describe(final)}, not success {list(endpoint.success)}")
    if (again := plan.final(seen["base"], after)) is not None:
        problems.append(f"the final metadata is not one execution's: {again}")
    if counted:
        problems.append(f"the target's execution counter rose by {counted} during the retry")
    if problems:
        return run.broken(f"a committed {kind} commit whose answer was lost, retried with the same key, gets "
                          "success and is not executed again", "; ".join(problems) +
                          f"\nattempts: {attempt_statuses(attempts)}", "re-executed" if len(problems) > 1 or
                          not problems[0].startswith("the retry got") else f"final {describe(final)}", details)
    return run.ok(f"{kind}: the answer was dropped after the commit; the retry with the same key got "
                  f"{final.status} and the final metadata is one execution's (the interference's state kept)",
                  "recovered", details)


@check(requirement="REPLAY-04", behaviour=Behaviour.LOST_EVOLUTION)
def check_lost_evolution(ctx: CheckContext, interposer: Interposer | None, kind: str,
                         options: NetworkOptions | None = None) -> list[Verdict]:
    """One kind of evolution commit (see the module docstring) through a lost answer; a list of one verdict."""
    if kind not in KINDS:
        raise ValueError(f"unknown evolution commit kind {kind!r}; known: {', '.join(KINDS)}")
    endpoint = ENDPOINTS["replaceView" if kind == "view-version" else "updateTable"]
    opts = options or NetworkOptions()

    @guarded("REPLAY-04", Behaviour.LOST_EVOLUTION)
    def run_kind(run: Run, ctx: CheckContext, endpoint: Endpoint) -> Verdict:
        if interposer is None:
            return run.unsupported("a lost answer needs the interposer between the kit and the target",
                                   needs=needs.INTERPOSER)
        return _lost(run, ctx, endpoint, interposer, kind, opts)

    return run_kind(ctx, endpoint)
