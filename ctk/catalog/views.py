"""Cases of the view mutations: createView, replaceView, dropView, renameView, registerView."""

from __future__ import annotations

from ctk.catalog.bodies import create_view_body, ident, set_properties_update, view_version
from ctk.catalog.cases import Case, CaseContext, Conflict, Endpoint, Req, case
from ctk.catalog.facade import Catalog
from ctk.catalog.state import MARK, commits, created, created_marked, marked, prop_set, removed
from ctk.catalog.tables import register_case, rename_case
from ctk.client.errors import PrerequisiteError
from ctk.client.transport import ns_path, view_path

LOADED = ("createView", "loadView")       # what every case on an existing view needs besides its own operation


@case("createView", success=(200,), requires=("loadView", "dropView"))
def create_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, existing = ctx.unique("v"), ctx.unique("vx")
    cat.create_view(ns, existing)
    path = f"namespaces/{ns_path(ns)}/views"
    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("POST", path, create_view_body(ns, name, properties={MARK: "first"})),
        observe=lambda: {"v": cat.view_state(ns, name), "existing": cat.view_state(ns, existing)},
        executions=lambda b, a: created(b["v"], a["v"]),
        interfere=lambda: cat.drop_view(ns, name, "interfere"),
        alternative=Req("POST", path, create_view_body(ns, name, "SELECT 2 AS id", {MARK: "alternative"})),
        alt_executions=lambda b, a: created_marked(b["v"], a["v"], "alternative"),
        conflicting=Conflict(
            Req("POST", path, create_view_body(ns, existing, properties={MARK: "conflicting"})), (409,),
            clear=lambda: cat.drop_view(ns, existing, "clear conflict"),
            executed=lambda: marked(cat.view_state(ns, existing), "conflicting"),
            why="the view already exists"),
    )


@case("replaceView", success=(200,), requires=LOADED)
def replace_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("v"), ctx.unique("vm")
    cat.create_view(ns, name, {MARK: "initial"})

    def body(n, v, sql):
        # a new view version made current, plus a property: a re-execution adds another version
        return {"identifier": ident(ns, n), "requirements": [],
                "updates": [{"action": "add-view-version", "view-version": view_version(ns, sql)},
                            {"action": "set-current-view-version", "view-version-id": -1},
                            set_properties_update({MARK: v})]}

    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("POST", view_path(ns, name), body(name, "first", "SELECT 10 AS id")),
        observe=lambda: {"v": cat.view_state(ns, name)},
        executions=lambda b, a: commits(b["v"], a["v"], MARK, "first", log="versions"),
        interfere=lambda: cat.commit_view(ns, name, {MARK: "interfered"}, "interfere"),
        alternative=Req("POST", view_path(ns, name), body(name, "alternative", "SELECT 20 AS id")),
        alt_executions=lambda b, a: prop_set(b["v"], a["v"], MARK, "alternative"),
        conflicting=Conflict(
            Req("POST", view_path(ns, missing), body(missing, "conflicting", "SELECT 30 AS id")), (404,),
            clear=lambda: cat.create_view(ns, missing),
            executed=lambda: marked(cat.view_state(ns, missing), "conflicting"),
            why="the view does not exist"),
    )


@case("dropView", success=(204, 200), requires=LOADED, has_payload=False)
def drop_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("v"), ctx.unique("vm")
    cat.create_view(ns, name)
    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("DELETE", view_path(ns, name)),
        observe=lambda: {"v": cat.view_state(ns, name)},
        executions=lambda b, a: removed(b["v"], a["v"]),
        interfere=lambda: cat.create_view(ns, name),
        conflicting=Conflict(
            Req("DELETE", view_path(ns, missing)), (404,),
            clear=lambda: cat.create_view(ns, missing),
            executed=lambda: cat.view_state(ns, missing) is None,
            why="the view does not exist"),
    )


@case("renameView", success=(204, 200), requires=LOADED + ("dropView",))
def rename_view(ctx: CaseContext, ep: Endpoint) -> Case:
    return rename_case(ctx, ep, "view")


@case("registerView", success=(200,), requires=LOADED + ("dropView",))
def register_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)

    def sources(src1: str, src2: str) -> tuple[str | None, str | None]:
        loc1 = cat.create_view(ns, src1, {MARK: "source-1"}).get("metadata-location")
        loc2 = cat.create_view(ns, src2, {MARK: "source-2"}, sql="SELECT 2 AS id").get("metadata-location")
        if not loc1 or not loc2:
            raise PrerequisiteError("createView answered no metadata-location to register")
        cat.drop_view(ns, src1)
        cat.drop_view(ns, src2)
        return loc1, loc2

    return register_case(ctx, ep, "view", f"namespaces/{ns_path(ns)}/register-view", sources,
                         make=lambda n: cat.create_view(ns, n),
                         drop=lambda n, label: cat.drop_view(ns, n, label),
                         state=lambda n: cat.view_state(ns, n))
