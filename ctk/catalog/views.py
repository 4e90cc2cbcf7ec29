"""Cases of the view mutations: createView, replaceView, dropView, renameView, registerView."""

from __future__ import annotations

from ctk.catalog.bodies import create_view_body, ident, set_properties_update, view_version
from ctk.catalog.cases import Case, CaseContext, Conflict, Endpoint, Req, case
from ctk.catalog.facade import Catalog
from ctk.catalog.state import MARK, removed
from ctk.catalog.tables import Ops, commit_case, creation_case, reading_back, registration_case, rename_case
from ctk.client.transport import ns_path, view_path

LOADED = ("createView", "loadView")       # what every case on an existing view needs besides its own operation


def view_ops(cat: Catalog, ns: tuple[str, ...]) -> Ops:
    return reading_back("view", ns, Ops(lambda n, properties=None: cat.create_view(ns, n, properties),
                                        lambda n, label: cat.drop_view(ns, n, label),
                                        lambda n: cat.view_state(ns, n),
                                        lambda n, updates, label: cat.commit_view(ns, n, updates, label)))


@case("createView", success=(200,), requires=("loadView", "dropView"))
def create_view(ctx: CaseContext, ep: Endpoint) -> Case:
    ns = tuple(ctx.namespace)

    def body(n: str, role: str) -> dict:
        return create_view_body(ns, n, "SELECT 2 AS id" if role == "alternative" else "SELECT 1 AS id", {MARK: role})

    return creation_case(ep, "view", ns, (ctx.unique("v"), ctx.unique("vx")), f"namespaces/{ns_path(ns)}/views",
                         body, view_ops(Catalog(ctx.client), ns))


@case("replaceView", success=(200,), requires=LOADED)
def replace_view(ctx: CaseContext, ep: Endpoint) -> Case:
    ns = tuple(ctx.namespace)
    sql = {"first": "SELECT 10 AS id", "alternative": "SELECT 20 AS id", "conflicting": "SELECT 30 AS id"}

    def request(n: str, role: str) -> Req:
        # a new view version made current, plus a property: a re-execution adds another version
        return Req("POST", view_path(ns, n), {
            "identifier": ident(ns, n), "requirements": [],
            "updates": [{"action": "add-view-version", "view-version": view_version(ns, sql[role])},
                        {"action": "set-current-view-version", "view-version-id": -1},
                        set_properties_update({MARK: role})]})

    return commit_case(ctx, ep, "view", request, view_ops(Catalog(ctx.client), ns), log="versions")


@case("dropView", success=(204, 200), requires=LOADED, has_payload=False)
def drop_view(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    ops = view_ops(cat, ns)
    name, missing = ctx.unique("v"), ctx.unique("vm")
    ops.make(name)
    return Case(
        ep, f"view {'.'.join(ns)}.{name}",
        Req("DELETE", view_path(ns, name)),
        observe=lambda: {"v": cat.view_state(ns, name)},
        executions=lambda b, a: removed(b["v"], a["v"]),
        interfere=lambda: ops.make(name),
        conflicting=Conflict(
            Req("DELETE", view_path(ns, missing)), (404,),
            clear=lambda: ops.make(missing),
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
    return registration_case(ctx, ep, "view", f"namespaces/{ns_path(ns)}/register-view", "vs",
                             lambda n, i: cat.create_view(ns, n, {MARK: f"source-{i}"}, sql=f"SELECT {i} AS id"),
                             view_ops(cat, ns))
