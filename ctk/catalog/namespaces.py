"""Cases of the namespace mutations: createNamespace, dropNamespace, updateProperties."""

from __future__ import annotations

from ctk.catalog import readback
from ctk.catalog.cases import Case, CaseContext, Conflict, Endpoint, Req, case
from ctk.catalog.facade import Catalog
from ctk.catalog.state import MARK, REMOVED, created, created_marked, marked, prop_set, removed
from ctk.client.transport import ns_path


def child_namespace(ctx: CaseContext, stem: str) -> tuple[str, ...]:
    """A fresh namespace for a case: a child of the run namespace, or - on a target that does not nest
    namespaces (``client.placement.nested`` False) - a run-unique sibling registered for cleanup."""
    placement = getattr(ctx.client, "placement", None)
    if placement is not None and tuple(placement.run) == tuple(ctx.namespace):
        return placement.child(ctx.unique(stem))
    return tuple(ctx.namespace) + (ctx.unique(stem),)


@case("createNamespace", success=(200,), requires=("loadNamespaceMetadata", "dropNamespace"))
def create_namespace(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = child_namespace(ctx, "ns")
    existing = child_namespace(ctx, "nsx")
    cat.create_namespace(existing, {MARK: "existing"})
    # The merged spec stores properties given at create "if supported by the server": where the catalog does,
    # the kit's mark tells which request made a namespace; where it does not, existence alone is counted
    keeps = marked(cat.namespace_state(existing), "existing")

    def made(before: dict | None, after: dict | None, mark: str) -> int:
        return created_marked(before, after, mark) if keeps else created(before, after)

    def observe():
        return {"ns": cat.namespace_state(ns), "existing": cat.namespace_state(existing)}

    return Case(
        ep, f"namespace {'.'.join(ns)}",
        Req("POST", "namespaces", {"namespace": list(ns), "properties": {MARK: "first"}}),
        observe=observe,
        executions=lambda b, a: made(b["ns"], a["ns"], "first"),
        interfere=lambda: readback.dropped("namespace", ".".join(ns), lambda: cat.drop_namespace(ns, "interfere"),
                                           lambda: cat.namespace_state(ns)),
        alternative=Req("POST", "namespaces", {"namespace": list(ns), "properties": {MARK: "alternative"}}),
        alt_executions=lambda b, a: made(b["ns"], a["ns"], "alternative"),
        conflicting=Conflict(
            Req("POST", "namespaces", {"namespace": list(existing), "properties": {MARK: "conflicting"}}), (409,),
            clear=lambda: readback.dropped("namespace", ".".join(existing),
                                           lambda: cat.drop_namespace(existing, "clear conflict"),
                                           lambda: cat.namespace_state(existing)),
            # after the clear only the conflicting request can bring the namespace back
            executed=(lambda: marked(cat.namespace_state(existing), "conflicting")) if keeps
            else (lambda: cat.namespace_state(existing) is not None),
            why="the namespace already exists"),
        notes={} if keeps else {"properties given at create": "not stored by the catalog: executions are counted "
                                                               "by existence"},
    )


@case("dropNamespace", success=(204, 200), requires=("createNamespace", "loadNamespaceMetadata"), has_payload=False)
def drop_namespace(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = child_namespace(ctx, "ns")
    missing = child_namespace(ctx, "nsm")

    def make(n: tuple[str, ...]) -> object:
        return readback.made("namespace", ".".join(n), lambda: cat.create_namespace(n),
                             lambda: cat.namespace_state(n))

    make(ns)
    return Case(
        ep, f"namespace {'.'.join(ns)}",
        Req("DELETE", f"namespaces/{ns_path(ns)}"),
        observe=lambda: {"ns": cat.namespace_state(ns)},
        executions=lambda b, a: removed(b["ns"], a["ns"]),
        interfere=lambda: make(ns),
        conflicting=Conflict(
            Req("DELETE", f"namespaces/{ns_path(missing)}"), (404,),
            clear=lambda: make(missing),
            executed=lambda: cat.namespace_state(missing) is None,
            why="the namespace does not exist"),
    )


@case("updateProperties", success=(200,), requires=("createNamespace", "loadNamespaceMetadata"))
def update_properties(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = child_namespace(ctx, "ns")
    missing = child_namespace(ctx, "nsm")
    cat.create_namespace(ns, {MARK: "initial", REMOVED: "present"})
    # properties given at create are stored "if supported by the server": set them with the operation itself
    cat.update_namespace(ns, {MARK: "initial", REMOVED: "present"}, "setup: set the namespace's properties", ok=(200,))

    def body(v):
        # a removal too: its answer names the key under "removed" when it was there and under "missing" when
        # it was not, so a second execution shows in the answer (without an interfering change in between)
        return {"removals": [REMOVED], "updates": {MARK: v}}

    def interfere():
        # the kit's property changed and the removed one back: a re-execution sets the one, removes the other
        readback.committed("namespace", ".".join(ns),
                           lambda: cat.update_namespace(ns, {MARK: "interfered", REMOVED: "present"}, "interfere",
                                                        ok=(200,)),
                           lambda: cat.namespace_state(ns), MARK, "interfered")

    return Case(
        ep, f"namespace {'.'.join(ns)}",
        Req("POST", f"namespaces/{ns_path(ns)}/properties", body("first")),
        observe=lambda: {"ns": cat.namespace_state(ns)},
        executions=lambda b, a: prop_set(b["ns"], a["ns"], MARK, "first"),
        interfere=interfere,
        alternative=Req("POST", f"namespaces/{ns_path(ns)}/properties", body("alternative")),
        alt_executions=lambda b, a: prop_set(b["ns"], a["ns"], MARK, "alternative"),
        conflicting=Conflict(
            Req("POST", f"namespaces/{ns_path(missing)}/properties", body("conflicting")), (404,),
            clear=lambda: readback.made("namespace", ".".join(missing), lambda: cat.create_namespace(missing),
                                        lambda: cat.namespace_state(missing)),
            executed=lambda: marked(cat.namespace_state(missing), "conflicting"),
            why="the namespace does not exist"),
    )
