"""The case of commitTransaction: one set-properties change to each of two tables, committed together."""

from __future__ import annotations

from ctk.catalog.bodies import set_properties_commit
from ctk.catalog.cases import Case, CaseContext, Conflict, Endpoint, Req, case
from ctk.catalog.facade import Catalog
from ctk.catalog.state import MARK, marked, prop_set, table_commits
from ctk.catalog.tables import LOADED, table_ops


@case("commitTransaction", success=(204, 200), requires=LOADED + ("updateTable",))
def commit_transaction(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    ops = table_ops(cat, ns, purge=True)
    t1, t2, missing = ctx.unique("t"), ctx.unique("t"), ctx.unique("tm")
    ops.make(t1, {MARK: "initial"})
    ops.make(t2, {MARK: "initial"})

    def body(v, names=(t1, t2)):
        return {"table-changes": [set_properties_commit(ns, n, {MARK: v}) for n in names]}

    def observe():
        return {"t1": cat.table_state(ns, t1), "t2": cat.table_state(ns, t2)}

    def count(b, a, v):
        return min(table_commits(b["t1"], a["t1"], MARK, v), table_commits(b["t2"], a["t2"], MARK, v)) \
            if v == "first" else min(prop_set(b["t1"], a["t1"], MARK, v), prop_set(b["t2"], a["t2"], MARK, v))

    def interfere():
        ops.commit(t1, {MARK: "interfered"}, "interfere")
        ops.commit(t2, {MARK: "interfered"}, "interfere")

    return Case(
        ep, f"tables {'.'.join(ns)}.{t1}, {t2}",
        Req("POST", "transactions/commit", body("first")),
        observe=observe,
        executions=lambda b, a: count(b, a, "first"),
        interfere=interfere,
        alternative=Req("POST", "transactions/commit", body("alternative")),
        alt_executions=lambda b, a: count(b, a, "alternative"),
        conflicting=Conflict(
            Req("POST", "transactions/commit", body("conflicting", (t1, missing))), (404,),
            clear=lambda: ops.make(missing),
            executed=lambda: marked(cat.table_state(ns, t1), "conflicting"),
            why="one table of the transaction does not exist"),
    )
