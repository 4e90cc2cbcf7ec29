"""Catalog semantics: namespaces (NS-01..NS-09). Plain requests, judged by status, error type and state read back.
"""

from __future__ import annotations

import json

from ctk.catalog.capabilities import Capability
from ctk.catalog.facade import parent_param
from ctk.client.placement import STRAY
from ctk.client.transport import ns_path
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.checks.common import describe
from ctk.checks.semantics.grading import Kind
from ctk.checks.semantics.harness import NotApplicable, SemRun, SetupBroken, error_type
from ctk.checks.semantics.reading import acknowledged
from ctk.checks.semantics.registry import semantic

NO_NS = ("NoSuchNamespaceException",)


def _load(t: SemRun, ns: tuple[str, ...], label: str = "read: load namespace") -> Exchange:
    return t.send("GET", f"namespaces/{ns_path(ns)}", label=label)


class MalformedListing(SetupBroken):
    """listNamespaces answered items that are not namespaces (arrays of strings): a listing finding, never an
    empty list. NS-01 and NS-08 judge it; a check that only reads the listing is blocked by it."""

    def __init__(self, finding: str, exchange: Exchange | None = None) -> None:
        super().__init__("NS-01", finding, exchange)


def _listed(t: SemRun, parent: tuple[str, ...] | None) -> list[tuple[str, ...]] | None:
    """The namespaces listed under ``parent``; None when a page could not be read; MalformedListing when an
    item is not an array of strings (namespaces listed as objects read as "lists 0 namespaces" before)."""
    from ctk.catalog.facade import pages

    mark = len(t.client.exchanges)
    items, problem = pages(t.client, "namespaces", "namespaces", "read: list namespaces", parent_param(parent))
    if problem:
        return None
    odd = [i for i in items if not (isinstance(i, list) and all(isinstance(p, str) for p in i))]
    if odd:
        page = next((e for e in reversed(t.client.exchanges[mark:]) if e.status == 200), None)
        raise MalformedListing(f"listNamespaces (parent {list(parent or ())}) answered {len(odd)} of {len(items)} "
                               f"item(s) that are not namespaces (arrays of strings), e.g. {json.dumps(odd[0])[:160]}",
                               page)
    return [tuple(i) for i in items]


def _exists_status(t: SemRun, ns: tuple[str, ...]) -> int | None:
    """namespaceExists' status, or None when the catalog does not offer it."""
    d = t.ctx.discovery
    if d is not None and not d.supports("HEAD", "namespaces/{namespace}"):
        return None
    return t.send("HEAD", f"namespaces/{ns_path(ns)}", label="read: namespace exists").status


@semantic("NS-01", "createNamespace", uses=("loadNamespaceMetadata", "listNamespaces"), baseline=True)
def check_create_namespace(t: SemRun) -> Verdict:
    placement = getattr(t.client, "placement", None)

    def placed(n: str) -> tuple[str, ...]:
        return placement.child(n) if placement is not None else tuple(t.ctx.namespace) + (n,)

    name, _, ex = t.create_valid("ns", lambda n: ("namespaces", {"namespace": list(placed(n)), "properties": {}}),
                              "createNamespace")
    ns = placed(name)
    if ex.status != 200:
        if ex.status is not None and 200 <= ex.status < 300:
            pass     # judged by its effect below; a 2xx other than 200 is a status matter
        else:
            return t.not_acknowledged(ex, "createNamespace")
    got = _load(t, ns)
    body = got.json() if got.status == 200 else None
    if not isinstance(body, dict):
        return t.broken("an acknowledged createNamespace: the namespace loads back (200)",
                        f"createNamespace answered {ex.status}; loading {'.'.join(ns)} answered {describe(got)}")
    if [str(x) for x in body.get("namespace") or []] != list(ns):
        return t.broken(f"loadNamespaceMetadata names the namespace {list(ns)}",
                        f"it answered namespace {body.get('namespace')!r}")
    head = _exists_status(t, ns)
    if head is not None and head != 204:
        return t.status_broken("namespaceExists answers 204 for a namespace that exists",
                               f"HEAD answered {head}")
    try:
        listed = _listed(t, ns[:-1] or None)
    except MalformedListing as exc:
        return t.broken(f"listNamespaces (parent {list(ns[:-1])}) lists the created namespace as its levels",
                        exc.finding)
    if listed is None:
        return t.inconclusive("the namespace loads back, but listing its parent's namespaces failed")
    if ns not in listed:
        return t.broken(f"listNamespaces (parent {list(ns[:-1])}) lists the created namespace",
                        f"it lists {len(listed)} namespaces, not {list(ns)}")
    if ex.status != 200:
        return t.status_broken("createNamespace answers 200 (CreateNamespaceResponse)", f"it answered {ex.status}")
    return t.ok(f"created {'.'.join(ns)}: it loads back, exists{'' if head is None else ' (HEAD 204)'} and is "
                "listed")


@semantic("NS-02", "createNamespace", uses=("loadNamespaceMetadata", "updateProperties"))
def check_create_existing_namespace(t: SemRun) -> Verdict:
    ns = t.namespace("exists")
    t.ctx.catalog.update_namespace(ns, {"ctk.mark": "first"}, "setup: mark the namespace")
    ex = t.send("POST", "namespaces", {"namespace": list(ns), "properties": {"ctk.mark": "second"}},
                label="createNamespace (exists)")
    got = _load(t, ns)
    props = ((got.json() or {}).get("properties") or {}) if got.status == 200 else None
    if props is None:
        return t.broken("a namespace that exists is left as it was by a second create",
                        f"loading it afterwards answered {describe(got)}")
    if props.get("ctk.mark") != "first":
        return t.broken("the existing namespace keeps its properties",
                        f"after the second create (answered {ex.status}) ctk.mark is {props.get('ctk.mark')!r}")
    if ex.status is not None and 200 <= ex.status < 300:
        # the client was told its create (ctk.mark=second) happened; the old namespace is what loads: the grade of
        # every create answered with the old object (TBL-02, VIEW-02; grading.Kind.NOT_DONE)
        return t.broken("a create of an existing namespace is refused (409): a client told it succeeded expects "
                        "its properties", f"the second create answered {ex.status}; the namespace still has "
                        "ctk.mark=first")
    problem = t.expect(ex, (409,), ("AlreadyExistsException",))
    if problem:
        return t.status_broken("409 AlreadyExistsException for a namespace that exists", problem)
    return t.ok("a second create answered 409 AlreadyExistsException and changed nothing")


@semantic("NS-03", "createNamespace", uses=("loadNamespaceMetadata",), needs=(Capability.NAMESPACE_PROPERTIES,))
def check_namespace_properties_at_create(t: SemRun) -> Verdict:
    props = {"owner": "ctk", "ctk.note": "created with properties"}
    ns = t.namespace("props", properties=props)
    got = _load(t, ns)
    loaded = ((got.json() or {}).get("properties") or {}) if got.status == 200 else {}
    missing = {k: v for k, v in props.items() if loaded.get(k) != v}
    if missing:
        return t.broken(f"loadNamespaceMetadata returns the properties given at create {props}",
                        f"it returned {loaded!r}")
    return t.ok("the properties given at create load back")


PROPERTIES_OPTIONAL = ("the spec lets a server leave namespace properties out (updateProperties: \"Server "
                       "implementations are not required to support namespace properties.\", 406 "
                       "UnsupportedOperationResponse)")


@semantic("NS-04", "updateProperties", uses=("loadNamespaceMetadata",), baseline=True)
def check_update_properties(t: SemRun) -> Verdict:
    ns = t.namespace("props_update")
    first = t.send("POST", f"namespaces/{ns_path(ns)}/properties",
                   {"removals": [], "updates": {"a": "1", "b": "2"}}, label="updateProperties (set)")
    if first.status == 406:
        # the spec's own answer of a server without namespace properties: not a refused valid request
        raise NotApplicable(f"updateProperties answered {describe(first)}: {PROPERTIES_OPTIONAL}")
    if first.status != 200:
        return t.not_acknowledged(first, "updateProperties")
    ex = t.send("POST", f"namespaces/{ns_path(ns)}/properties",
                {"removals": ["b", "ctk_never_set"], "updates": {"a": "10", "c": "3"}},
                label="updateProperties (update, add, remove)")
    if ex.status != 200:
        return t.not_acknowledged(ex, "updateProperties")
    got = _load(t, ns)
    props = ((got.json() or {}).get("properties") or {}) if got.status == 200 else None
    if props is None:
        return t.inconclusive(f"loading the namespace answered {describe(got)}")
    wrong = [f"{k}={props.get(k)!r} (expected {v!r})" for k, v in (("a", "10"), ("c", "3"), ("b", None))
             if props.get(k) != v]
    if wrong:
        return t.broken("acknowledged updates are set and removals removed: a=10, c=3, no b",
                        "loadNamespaceMetadata shows " + ", ".join(wrong))
    body = ex.json() or {}
    updated, removed, missing = (set(body.get(k) or []) for k in ("updated", "removed", "missing"))
    # `missing` "Represents a partial success response. Server's do not need to implement this." (the spec):
    # absent, null or empty it is not implemented, a note; a list naming other keys is a wrong answer
    wrong_missing = bool(missing) and missing != {"ctk_never_set"}
    if updated != {"a", "c"} or removed != {"b"} or wrong_missing:
        return t.status_broken("the answer lists updated [a, c], removed [b]"
                               + (", missing [ctk_never_set] (where it lists `missing`)" if wrong_missing else ""),
                               f"it lists updated {sorted(updated)}, removed {sorted(removed)}"
                               + (f", missing {sorted(missing)}" if wrong_missing else ""))
    if not missing:
        return t.ok("updates set, removals removed, the answer lists updated/removed",
                    details={"notes": [f"the answer's `missing` is {body.get('missing')!r}: not implemented, which "
                                       "the spec allows (\"Server's do not need to implement this\")"]})
    return t.ok("updates set, removals removed, the answer lists updated/removed/missing")


@semantic("NS-05", "loadNamespaceMetadata", uses=("updateProperties", "dropNamespace", "listTables", "createTable"))
def check_missing_namespace(t: SemRun) -> list[Verdict] | Verdict:
    from ctk.catalog.bodies import create_table_body

    ns = t.absent_namespace()
    p = ns_path(ns)
    tries = [
        ("loadNamespaceMetadata", t.send("GET", f"namespaces/{p}", label="load a missing namespace"), NO_NS),
        ("updateProperties", t.send("POST", f"namespaces/{p}/properties", {"removals": ["x"], "updates": {"a": "1"}},
                                    label="update properties of a missing namespace"), NO_NS),
        ("dropNamespace", t.send("DELETE", f"namespaces/{p}", label="drop a missing namespace"), NO_NS),
        ("listTables", t.send("GET", f"namespaces/{p}/tables", label="list tables of a missing namespace"), NO_NS),
        ("createTable", t.send("POST", f"namespaces/{p}/tables", create_table_body(STRAY),
                               label="create a table in a missing namespace"), NO_NS),
    ]
    head = _exists_status(t, ns)
    after = _load(t, ns, "read: is the missing namespace still missing")
    if after.status == 200:
        made = [f"{op} answered {ex.status}" for op, ex, _ in tries if ex.status is not None and 200 <= ex.status < 300]
        if made:    # acknowledged and done, with the namespace made too (a non-strict catalog)
            return t.lenient("operations on a namespace that does not exist are refused (404) and create nothing",
                             "; ".join(made) + f"; afterwards {'.'.join(ns)} loads (200)",
                             "created in a missing namespace")
        return t.judge(Kind.REFUSED_CHANGED, "operations on a namespace that does not exist create nothing",
                       "every one was refused (" + ", ".join(f"{op} {ex.status}" for op, ex, _ in tries)
                       + f"), yet afterwards {'.'.join(ns)} loads (200)")
    problems = [f"{op}: {pr}" for op, ex, types in tries if (pr := t.expect(ex, (404,), types))]
    if head is not None and head != 404:
        problems.append(f"namespaceExists: HEAD answered {head}")
    if problems:
        return t.status_broken("404 NoSuchNamespaceException for every operation on a missing namespace",
                               "; ".join(problems))
    seen = sorted({f"{ex.status} {error_type(ex)}" if error_type(ex) else f"{ex.status}" for _, ex, _ in tries})
    return t.ok(f"{len(tries)} operations on a missing namespace ({', '.join(op for op, _, _ in tries)}) answered "
                f"{' / '.join(seen)}" + ("" if head is None else ", HEAD 404"))


@semantic("NS-06", "dropNamespace", uses=("loadNamespaceMetadata", "listNamespaces"), baseline=True)
def check_drop_empty_namespace(t: SemRun) -> Verdict:
    ns = t.namespace("drop")
    ex = t.send("DELETE", f"namespaces/{ns_path(ns)}", label="dropNamespace")
    if not acknowledged(ex):
        return t.not_acknowledged(ex, "dropNamespace of an empty namespace")
    got = _load(t, ns, "read: load the dropped namespace")
    if got.status != 404:
        return t.broken("an acknowledged dropNamespace: the namespace is gone (load answers 404)",
                        f"dropNamespace answered {ex.status}; loading {'.'.join(ns)} then answered {describe(got)}")
    listed = _listed(t, ns[:-1] or None)
    if listed is not None and ns in listed:
        return t.broken("a dropped namespace is no longer listed", f"listNamespaces still lists {list(ns)}")
    head = _exists_status(t, ns)
    if head is not None and head != 404:
        return t.status_broken("namespaceExists answers 404 for a dropped namespace", f"HEAD answered {head}")
    if ex.status != 204:
        return t.status_broken("dropNamespace answers 204", f"it answered {ex.status}")
    return t.ok("dropNamespace answered 204; the namespace is gone (load 404, not listed)")


@semantic("NS-07", "dropNamespace", uses=("createTable", "loadTable", "loadNamespaceMetadata"))
def check_drop_non_empty_namespace(t: SemRun) -> list[Verdict] | Verdict:
    from ctk.client.transport import table_path, view_path

    holders = []
    ns = t.namespace("nonempty_t")
    name, _ = t.table(ns)
    holders.append(("a table", ns, table_path(ns, name)))
    if t.ctx.discovery is None or t.ctx.discovery.supports("POST", "namespaces/{namespace}/views"):
        vns = t.namespace("nonempty_v")
        vname, _ = t.view(vns)
        holders.append(("a view", vns, view_path(vns, vname)))
    if t.capability(Capability.NESTED_NAMESPACES).supported:
        nns = t.namespace("nonempty_n")
        child = nns + ("child",)
        t.create_namespace(child)
        holders.append(("a nested namespace", nns, f"namespaces/{ns_path(child)}"))
    problems, dropped, wrong_status, unread = [], [], [], []
    for what, holder, content in holders:
        ex = t.send("DELETE", f"namespaces/{ns_path(holder)}", label=f"dropNamespace holding {what}")
        still = _load(t, holder, "read: the namespace is still there").status
        kept = t.send("GET", content, label=f"read: {what} is still there").status
        if ex.status is not None and 200 <= ex.status < 300 and kept == 200:
            # the catalog dropped the holder and left what it held: no listing of the run namespace finds that
            # orphan any more, so the check removes it itself (then the holder, should it come back)
            t.send("DELETE", content, params={"purgeRequested": "true"} if "/tables/" in content else None,
                   label=f"cleanup: remove {what} the dropped namespace left")
            t.send("DELETE", f"namespaces/{ns_path(holder)}", label="cleanup: drop the namespace")
        if still not in (200, 404) or kept not in (200, 404):
            unread.append(f"holding {what}: answered {describe(ex)}, then the namespace loads {still} and {what} "
                          f"{kept}")
        elif ex.status is not None and not 200 <= ex.status < 300 and 404 in (still, kept):
            # refused, and yet something was dropped: a client told "failed" keeps a state that is gone
            problems.append(f"holding {what}: answered {ex.status}, but afterwards the namespace loads {still} and "
                            f"{what} {kept}")
        elif ex.status is not None and 404 in (still, kept):
            # acknowledged and done although the namespace was not empty: what it held is orphaned (or gone with
            # it) - not a status slip, but a rule only the documents state (the spec's 409 "Not Empty")
            dropped.append(f"holding {what}: answered {ex.status}; afterwards the namespace loads {still} and {what} "
                           f"{kept}")
        elif ex.status != 409 and (pr := t.expect(ex, (409,))):
            wrong_status.append(f"holding {what}: {pr} (afterwards namespace {still}, {what} {kept})")
        elif (pr := t.expect(ex, (409,), ("NamespaceNotEmptyException",))):
            wrong_status.append(f"holding {what}: {pr}")
    if problems:
        return t.broken("dropNamespace of a namespace that is not empty is refused and drops nothing",
                        "; ".join(problems))
    if dropped:
        return t.lenient("dropNamespace of a namespace that is not empty is refused (409) and drops nothing",
                         "; ".join(dropped), "dropped although not empty")
    if unread:
        return t.inconclusive("; ".join(unread) + ": what the drop left could not be read")
    if wrong_status:
        return t.status_broken("409 NamespaceNotEmptyException for a namespace that is not empty",
                               "; ".join(wrong_status))
    return t.ok(f"dropNamespace of a namespace holding {', '.join(w for w, _, _ in holders)} answered 409 "
                "NamespaceNotEmptyException each time and dropped nothing")


@semantic("NS-08", "listNamespaces", uses=("createNamespace",), needs=(Capability.NESTED_NAMESPACES,))
def check_list_namespaces(t: SemRun) -> Verdict:
    try:
        return _list_namespaces(t)
    except MalformedListing as exc:
        return t.broken("listNamespaces lists exactly the children of the parent, each as its levels", exc.finding)


def _list_namespaces(t: SemRun) -> Verdict:
    parent = t.namespace("list")
    a, b = parent + ("a",), parent + ("b",)
    for ns in (a, b, a + ("x",)):
        t.create_namespace(ns)
    problems = []
    for at, want in ((parent, {a, b}), (a, {a + ("x",)}), (b, set())):
        got = _listed(t, at)
        if got is None:
            return t.inconclusive(f"listing the children of {list(at)} failed")
        if set(got) != want:
            problems.append(f"parent {list(at)}: listed {sorted(map(list, got))}, expected "
                            f"{sorted(map(list, want))}")
    top = _listed(t, None)
    if top is not None and parent[:1] not in top and len(parent) > 0:
        problems.append(f"the top level (no parent) does not list {list(parent[:1])}")
    deeper = sorted(list(n) for n in top or [] if len(n) != 1)
    if deeper:      # the spec: "If `parent` is not provided, all top-level namespaces should be listed"
        problems.append(f"the top level (no parent) also lists {len(deeper)} namespace(s) of more than one level, "
                        f"e.g. {deeper[:3]}")
    missing = t.send("GET", "namespaces", params=parent_param(parent + ("ctk_absent",)),
                     label="list namespaces of a missing parent")
    if problems:
        return t.broken("listNamespaces lists exactly the children of the parent", "; ".join(problems))
    if (pr := t.expect(missing, (404,), ("NoSuchNamespaceException",))):
        return t.status_broken("404 NoSuchNamespaceException for a parent that does not exist", pr)
    return t.ok("children listed exactly at each level; a missing parent answered 404")


@semantic("NS-09", "createNamespace", uses=("loadNamespaceMetadata", "dropNamespace", "listNamespaces"),
          needs=(Capability.NAMES_WITH_DOT_OR_SLASH,))
def check_namespace_names_with_dot_or_slash(t: SemRun) -> Verdict:
    from urllib.parse import unquote

    from ctk.checks.semantics.harness import NotApplicable

    placement = getattr(t.client, "placement", None)
    separator = unquote(getattr(t.client, "namespace_separator", "") or "")
    # a level holding the separator the catalog advertises cannot be told from two levels in a path: not sent
    stems = [s for s in ("dot.level", "slash/level") if not (separator in (".", "/") and separator in s)]
    skipped = [s for s in ("dot.level", "slash/level") if s not in stems]
    if not stems:
        raise NotApplicable(f"the catalog joins namespace levels with {separator!r}")
    problems, sent = [], []
    for stem in stems:
        name = t.unique(stem)
        ns = placement.child(name) if placement is not None else tuple(t.ctx.namespace) + (name,)
        ex = t.send("POST", "namespaces", {"namespace": list(ns), "properties": {}},
                    label=f"createNamespace {name!r}")
        sent.append(repr(name))
        if ex.status != 200:
            problems.append(f"create {list(ns)}: {describe(ex)}")
            continue
        got = _load(t, ns)
        listed = _listed(t, ns[:-1] or None)
        dropped = t.send("DELETE", f"namespaces/{ns_path(ns)}", label=f"dropNamespace {name!r}")
        gone = _load(t, ns, "read: dropped?")
        if listed is None:
            return t.inconclusive(f"listing the children of {list(ns[:-1])} failed")
        shown = sorted(list(n) for n in listed if n != ns and n[:-1] == ns[:-1] and n[-1] in name)
        if got.status != 200 or ns not in listed or dropped.status not in (200, 204) or gone.status != 404:
            problems.append(f"{list(ns)}: create 200, load {got.status}, "
                            + ("listed by its exact name" if ns in listed else
                               f"not listed by its exact name (listed: {shown or 'nothing like it'})")
                            + f", drop {dropped.status}, load after the drop {gone.status}")
    note = (f"; not sent: a level holding {' or '.join(repr(s) for s in skipped)} (the catalog advertises "
            f"namespace-separator {separator!r})" if skipped else "")
    if problems:
        return t.broken("a namespace level holding '.' or '/' round-trips (create, load, list, drop)",
                        "; ".join(problems) + note, details={"sent": sent})
    return t.ok(f"namespace levels {', '.join(sent)} were created, loaded, listed and dropped by their exact "
                f"names{note}", details={"sent": sent})
