"""Catalog semantics: listings (LIST-01..LIST-03). Plain requests, judged by the identifiers listed against what
the check created and dropped, and by the pages of a paged listing."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ctk.catalog.bodies import create_table_body, create_view_body
from ctk.catalog.capabilities import Capability
from ctk.catalog.facade import pages, parent_param
from ctk.client.transport import ns_path, view_path
from ctk.core.verdicts import Status, Verdict
from ctk.checks.common import describe
from ctk.checks.semantics.harness import SemRun
from ctk.checks.semantics.reading import acknowledged
from ctk.checks.semantics.registry import semantic
from ctk.checks.semantics.tables import NO_NS, drop, listed

PAGE_SIZES = (1, 2)
ITEMS = 3              # per kind: a page size of 2 then ends on a short page


def _exactly(t: SemRun, ns: tuple[str, ...], want: set[str], kind: str, when: str) -> str | None:
    """None when list<kind> of ``ns`` gives exactly ``want``, each once and named in ``ns``; else the problem.
    Raises nothing: a listing that cannot be read is a problem of its own kind ("unreadable")."""
    items = listed(t, ns, kind)
    if items is None:
        return f"unreadable: list {kind} of {'.'.join(ns)} {when} failed"
    names = [n for _, n in items]
    foreign = [f"{'.'.join(i)}.{n}" for i, n in items if i != ns]
    if foreign or len(names) != len(set(names)) or set(names) != want:
        return (f"{when}: list {kind} of {'.'.join(ns)} gave {sorted(names)}"
                + (f" (named in other namespaces: {foreign})" if foreign else "") + f", expected {sorted(want)}")
    return None


def _judge(t: SemRun, problems: Sequence[str | None], expected: str, done: str) -> Verdict:
    found = [p for p in problems if p]
    unreadable = [p for p in found if p.startswith("unreadable")]
    if unreadable and len(unreadable) == len(found):
        return t.inconclusive("; ".join(unreadable))
    if found:
        return t.broken(expected, "; ".join(p for p in found if not p.startswith("unreadable")))
    return t.ok(done)


@semantic("LIST-01", "listTables", uses=("createTable", "dropTable"))
def check_list_tables(t: SemRun) -> Verdict:
    """Two namespaces, each listed on its own as tables come and go (the compatibility kit's testListTables).
    ``listTablesInEmptyNamespace`` lists the tables of the empty namespace (``Namespace.empty()``), which a
    REST path cannot name; what it asserts that can be observed - a namespace lists its own tables, not those
    of another - is judged here. A missing namespace answers 404 (also NS-05)."""
    ns1, ns2 = t.namespace("list_a"), t.namespace("list_b")
    problems = [_exactly(t, ns1, set(), "tables", "new"), _exactly(t, ns2, set(), "tables", "new")]
    a1, _ = t.table(ns1)
    a2, _ = t.table(ns1)
    b1, _ = t.table(ns2, a1)         # the same name in the other namespace
    problems += [_exactly(t, ns1, {a1, a2}, "tables", "after creates"),
                 _exactly(t, ns2, {b1}, "tables", "after creates")]
    dropped = drop(t, ns1, a1, label="dropTable")
    if not acknowledged(dropped):
        return t.inconclusive(f"dropTable answered {describe(dropped)}")
    problems += [_exactly(t, ns1, {a2}, "tables", "after a drop"), _exactly(t, ns2, {b1}, "tables", "after a drop")]
    verdict = _judge(t, problems, "listTables lists exactly the namespace's tables (created ones, not dropped "
                                  "ones, not another namespace's); a new namespace lists none",
                     "each namespace listed exactly its own tables as they were created and dropped")
    if verdict.status is not Status.PASS:
        return verdict
    missing = t.send("GET", f"namespaces/{ns_path(ns1 + ('ctk_absent',))}/tables",
                     label="listTables of a missing namespace")
    if (p := t.expect(missing, (404,), NO_NS)):
        return t.status_broken("404 NoSuchNamespaceException for the tables of a missing namespace", p)
    return t.ok("each namespace listed exactly its own tables as they were created and dropped; a new namespace "
                "listed none; a missing one answered 404 NoSuchNamespaceException")


def _paged(t: SemRun, path: str, field: str, size: int, params: dict | None, total: int
           ) -> tuple[list[Any], list[str]]:
    """Every item of a listing read ``size`` at a time (at most total + 2 pages), and what was wrong with its
    pages: a page longer than ``size``, a page that could not be read, a token that never ends."""
    items: list[Any] = []
    problems: list[str] = []
    token = None
    for _ in range(total + 2):
        ex = t.send("GET", path, params={**(params or {}), "pageSize": size, "pageToken": token},
                    label=f"list, pageSize {size}")
        body = ex.json() if ex.status == 200 else None
        if not isinstance(body, dict):
            problems.append(f"unreadable: a page answered {describe(ex)}")
            return items, problems
        page = body.get(field) or []
        if len(page) > size:
            problems.append(f"a page of {len(page)} items for pageSize {size}")
        items += page
        token = body.get("next-page-token")
        if not token:
            return items, problems
    problems.append(f"pageSize {size}: still a next-page-token after {total + 2} pages of {total} items")
    return items, problems


def _key(item: Any) -> str:
    if isinstance(item, dict):
        return ".".join([*(str(p) for p in item.get("namespace") or []), str(item.get("name"))])
    return ".".join(str(p) for p in item) if isinstance(item, list) else repr(item)


@semantic("LIST-02", "listTables", uses=("createTable", "listNamespaces"),
          needs=(Capability.PAGINATION,))
def check_pagination(t: SemRun) -> Verdict:
    """Three tables, and where the catalog has them three child namespaces and three views, listed with pageSize
    1 and 2: every item exactly once across the pages (the same set as the listing without pageSize), no page
    longer than pageSize."""
    ns = t.namespace("pages")
    p = ns_path(ns)
    kinds: list[tuple[str, str, str, dict | None, Callable[[int], Any]]] = [
        ("tables", f"namespaces/{p}/tables", "identifiers", None,
         lambda i: t.send("POST", f"namespaces/{p}/tables", create_table_body(f"pt{i}"), label="setup: table"))]
    if t.capability(Capability.NESTED_NAMESPACES).supported:
        kinds.append(("namespaces", "namespaces", "namespaces", parent_param(ns),
                      lambda i: t.send("POST", "namespaces", {"namespace": [*ns, f"pn{i}"], "properties": {}},
                                       label="setup: child namespace")))
    d = t.ctx.discovery
    if t.capability(Capability.VIEWS).supported and (d is None or d.supports("GET", "namespaces/{namespace}/views")):
        kinds.append(("views", f"namespaces/{p}/views", "identifiers", None,
                      lambda i: t.send("POST", f"namespaces/{p}/views", create_view_body(ns, f"pv{i}"),
                                       label="setup: view")))
    problems: list[str] = []
    judged = []
    for kind, path, field, params, make in kinds:
        made = [make(i) for i in range(ITEMS)]
        if any(ex.status != 200 for ex in made):
            problems.append(f"unreadable: creating {kind} to list answered "
                            f"{', '.join(describe(ex) for ex in made)}")
            continue
        whole, why = pages(t.client, path, field, f"read: list {kind}", params)
        if why:
            problems.append(f"unreadable: the listing of {kind} without pageSize failed: {why}")
            continue
        want = sorted(_key(i) for i in whole)
        if len(want) != ITEMS:
            problems.append(f"unreadable: the listing of {kind} without pageSize has {len(want)} items, not the "
                            f"{ITEMS} created")
            continue
        for size in PAGE_SIZES:
            items, wrong = _paged(t, path, field, size, params, ITEMS)
            got = sorted(_key(i) for i in items)
            problems += [f"{kind}: {w}" if not w.startswith("unreadable") else w for w in wrong]
            if not any(w.startswith("unreadable") for w in wrong) and got != want:
                problems.append(f"{kind}, pageSize {size}: the pages gave {got}, expected each of {want} once")
        judged.append(kind)
    return _judge(t, problems, "a paged listing gives every item exactly once, no page longer than pageSize",
                  f"{', '.join(judged)}: pageSize {' and '.join(map(str, PAGE_SIZES))} gave every item exactly once, "
                  "no page longer than pageSize")


@semantic("LIST-03", "listViews", uses=("createView", "dropView", "createTable", "listTables", "dropTable"),
          needs=(Capability.VIEWS,))
def check_list_views(t: SemRun) -> Verdict:
    """Views and a table in one namespace, a view in another: listViews gives each namespace's views only, and
    listTables its tables only, as they are created and dropped. ``listViewsInEmptyNamespace`` lists the views of
    the empty namespace, which a REST path cannot name; what can be observed of it - a namespace lists its own
    views, not another's - is judged here."""
    ns1, ns2 = t.namespace("lview_a"), t.namespace("lview_b")
    problems = [_exactly(t, ns1, set(), "views", "new"), _exactly(t, ns2, set(), "views", "new")]
    table, _ = t.table(ns1)
    v1, _ = t.view(ns1)
    v2, _ = t.view(ns1)
    w1, _ = t.view(ns2)
    problems += [_exactly(t, ns1, {v1, v2}, "views", "after creates"),
                 _exactly(t, ns2, {w1}, "views", "after creates"),
                 _exactly(t, ns1, {table}, "tables", "after creating views")]
    gone = t.send("DELETE", view_path(ns1, v1), label="dropView")
    dropped = drop(t, ns1, table, label="dropTable")
    if any(not acknowledged(ex) for ex in (gone, dropped)):
        return t.inconclusive(f"dropView answered {describe(gone)}, dropTable {describe(dropped)}")
    problems += [_exactly(t, ns1, {v2}, "views", "after dropping a view and the table"),
                 _exactly(t, ns1, set(), "tables", "after dropping the table")]
    return _judge(t, problems, "listViews lists exactly the namespace's views (not its tables, not another "
                               "namespace's, not dropped ones); listTables lists no views",
                  "listViews and listTables each listed exactly their own kind of the namespace, as views and a "
                  "table were created and dropped")
