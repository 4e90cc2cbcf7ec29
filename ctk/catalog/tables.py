"""Cases of the table mutations: createTable, registerTable, updateTable, dropTable, unregisterTable,
renameTable (and the rename case views share)."""

from __future__ import annotations

from typing import Callable

from ctk.catalog.bodies import create_table_body, ident, set_properties_commit
from ctk.catalog.cases import Case, CaseContext, Conflict, Endpoint, Req, case
from ctk.catalog.facade import Catalog
from ctk.catalog.state import MARK, created, created_marked, marked, prop_set, removed, table_commits
from ctk.client.errors import PrerequisiteError
from ctk.client.transport import ns_path, table_path

LOADED = ("createTable", "loadTable")     # what every case on an existing table needs besides its own operation


@case("createTable", success=(200,), requires=("loadTable", "dropTable"))
def create_table(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, existing = ctx.unique("t"), ctx.unique("tx")
    cat.create_table(ns, existing)
    path = f"namespaces/{ns_path(ns)}/tables"

    def observe():
        return {"t": cat.table_state(ns, name), "existing": cat.table_state(ns, existing)}

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        Req("POST", path, create_table_body(name, {MARK: "first"})),
        observe=observe,
        executions=lambda b, a: created(b["t"], a["t"]),
        interfere=lambda: cat.drop_table(ns, name, purge=True, label="interfere"),
        alternative=Req("POST", path, create_table_body(name, {MARK: "alternative"})),
        alt_executions=lambda b, a: created_marked(b["t"], a["t"], "alternative"),
        conflicting=Conflict(
            Req("POST", path, create_table_body(existing, {MARK: "conflicting"})), (409,),
            clear=lambda: cat.drop_table(ns, existing, purge=True, label="clear conflict"),
            executed=lambda: marked(cat.table_state(ns, existing), "conflicting"),
            why="the table already exists"),
    )


def register_case(ctx: CaseContext, ep: Endpoint, kind: str, path: str,
                  sources: Callable[[str, str], tuple[str | None, str | None]],
                  make: Callable[[str], object], drop: Callable[[str, str], object],
                  state: Callable[[str], dict | None], notes: dict | None = None) -> Case:
    """registerTable / registerView: ``sources(src1, src2)`` makes two resources marked "source-1" and
    "source-2", drops them and answers their metadata locations; ``make`` / ``drop(name, label)`` /
    ``state`` create, drop (keeping the metadata file) and observe one resource of the kind."""
    ns = tuple(ctx.namespace)
    stem = "src" if kind == "table" else "vs"
    src1, src2, name, existing = ctx.unique(stem), ctx.unique(stem), ctx.unique(kind[0]), ctx.unique(kind[0] + "x")
    loc1, loc2 = sources(src1, src2)
    make(existing)
    return Case(
        ep, f"{kind} {'.'.join(ns)}.{name}",
        Req("POST", path, {"name": name, "metadata-location": loc1}),
        observe=lambda: {kind[0]: state(name), "existing": state(existing)},
        executions=lambda b, a: created(b[kind[0]], a[kind[0]]),
        # dropped keeping the metadata file: a re-execution would succeed and be visible
        interfere=lambda: drop(name, "interfere"),
        alternative=Req("POST", path, {"name": name, "metadata-location": loc2}),
        alt_executions=lambda b, a: created_marked(b[kind[0]], a[kind[0]], "source-2"),
        conflicting=Conflict(
            Req("POST", path, {"name": existing, "metadata-location": loc1}), (409,),
            clear=lambda: drop(existing, "clear conflict"),
            executed=lambda: marked(state(existing), "source-1"),
            why=f"a {kind} with that name already exists"),
        notes=notes if notes is not None else {},
    )


@case("registerTable", success=(200,), requires=LOADED + ("dropTable",))
def register_table(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    notes: dict = {}

    def sources(src1: str, src2: str) -> tuple[str | None, str | None]:
        loc1 = cat.create_table(ns, src1, {MARK: "source-1"}).get("metadata-location")
        loc2 = cat.create_table(ns, src2, {MARK: "source-2"}).get("metadata-location")
        if not loc1 or not loc2:
            raise PrerequisiteError("createTable answered no metadata-location to register")
        cat.drop_table(ns, src1, purge=False)
        cat.drop_table(ns, src2, purge=False)
        notes["metadata-location"] = loc1
        return loc1, loc2

    return register_case(ctx, ep, "table", f"namespaces/{ns_path(ns)}/register", sources,
                         make=lambda n: cat.create_table(ns, n),
                         drop=lambda n, label: cat.drop_table(ns, n, purge=False, label=label),
                         state=lambda n: cat.table_state(ns, n), notes=notes)


@case("updateTable", success=(200,), requires=LOADED)
def update_table(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("t"), ctx.unique("tm")
    cat.create_table(ns, name, {MARK: "initial"})

    def req(n, v):
        # no requirements: a re-execution applies again and shows as another commit
        return Req("POST", table_path(ns, n), set_properties_commit(ns, n, {MARK: v}))

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        req(name, "first"),
        observe=lambda: {"t": cat.table_state(ns, name)},
        executions=lambda b, a: table_commits(b["t"], a["t"], MARK, "first"),
        interfere=lambda: cat.commit_table(ns, name, {MARK: "interfered"}, "interfere"),
        alternative=req(name, "alternative"),
        alt_executions=lambda b, a: prop_set(b["t"], a["t"], MARK, "alternative"),
        conflicting=Conflict(
            req(missing, "conflicting"), (404,),
            clear=lambda: cat.create_table(ns, missing),
            executed=lambda: marked(cat.table_state(ns, missing), "conflicting"),
            why="the table does not exist"),
    )


def drop_like_table(ctx: CaseContext, ep: Endpoint, suffix: str, method: str, params: dict | None = None) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("t"), ctx.unique("tm")
    cat.create_table(ns, name)

    def req(n):
        return Req(method, table_path(ns, n) + suffix, params=params)

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        req(name),
        observe=lambda: {"t": cat.table_state(ns, name, damaged_ok=True)},
        executions=lambda b, a: removed(b["t"], a["t"]),
        # a table with the same name again: a re-execution would remove the new one, or (a purge run again)
        # delete its files, so that it is listed but cannot be loaded
        interfere=lambda: cat.create_table(ns, name),
        conflicting=Conflict(
            req(missing), (404,),
            clear=lambda: cat.create_table(ns, missing),
            executed=lambda: cat.table_state(ns, missing) is None,
            why="the table does not exist"),
    )


@case("dropTable", success=(204, 200), requires=LOADED, has_payload=False)
def drop_table(ctx: CaseContext, ep: Endpoint) -> Case:
    # with purge: the drop whose side effects reach beyond the catalog's database, the harder one to replay
    return drop_like_table(ctx, ep, "", "DELETE", {"purgeRequested": "true"})


@case("unregisterTable", success=(200, 204), requires=LOADED, has_payload=False)
def unregister_table(ctx: CaseContext, ep: Endpoint) -> Case:
    return drop_like_table(ctx, ep, "/unregister", "POST")


def rename_case(ctx: CaseContext, ep: Endpoint, kind: str) -> Case:
    """renameTable / renameView (``kind`` "table" / "view")."""
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    src, dst, dst2, csrc, cdst = (ctx.unique(s) for s in ("src", "dst", "dsta", "csrc", "cdst"))
    if kind == "table":
        make, state, path = (lambda n: cat.create_table(ns, n)), (lambda n: cat.table_state(ns, n)), "tables/rename"
    else:
        make, state, path = (lambda n: cat.create_view(ns, n)), (lambda n: cat.view_state(ns, n)), "views/rename"
    for n in (src, csrc, cdst):
        make(n)

    def body(s, d):
        return {"source": ident(ns, s), "destination": ident(ns, d)}

    def rename_back():
        ex = ctx.client.request("POST", path, json=body(dst, src), label="interfere: rename back")
        if ex.status not in (200, 204):
            raise PrerequisiteError(f"interfere: rename back answered {ex.status or ex.error}", ex)

    def clear():
        (cat.drop_table(ns, cdst, purge=True, label="clear conflict") if kind == "table"
         else cat.drop_view(ns, cdst, label="clear conflict"))

    def moved(b, a, d):
        return 1 if (b[d] is None and a[d] is not None and a["src"] is None) else 0

    return Case(
        ep, f"{kind} {'.'.join(ns)}.{src}",
        Req("POST", path, body(src, dst)),
        observe=lambda: {"src": state(src), "dst": state(dst), "dst2": state(dst2)},
        executions=lambda b, a: moved(b, a, "dst"),
        interfere=rename_back,
        alternative=Req("POST", path, body(src, dst2)),
        alt_executions=lambda b, a: moved(b, a, "dst2"),
        conflicting=Conflict(
            Req("POST", path, body(csrc, cdst)), (409,), clear=clear,
            executed=lambda: state(csrc) is None and state(cdst) is not None,
            why=f"the destination {kind} already exists"),
    )


@case("renameTable", success=(204, 200), requires=LOADED + ("dropTable",))
def rename_table(ctx: CaseContext, ep: Endpoint) -> Case:
    return rename_case(ctx, ep, "table")
