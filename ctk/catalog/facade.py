"""`Catalog`: what the kit does to a catalog outside the request under test, over plain HTTP (no idempotency
keys): prerequisites (create / drop / commit namespaces, tables and views), the case observers of
``ctk.catalog.state``, listings (`pages()`, the one pagination routine) and the removal of a namespace with
everything below it (`drop_tree()`).

Paths are relative to ``/v1/{prefix}`` and namespaces are encoded by the client layer's one codec
(``ctk.client.transport.ns_path``); a target's advertised ``namespace-separator`` is applied by the client.
A prerequisite that fails raises `PrerequisiteError` (checks turn it into an inconclusive verdict).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from ctk.catalog import state
from ctk.catalog.bodies import create_table_body, create_view_body, set_properties_commit
from ctk.client.errors import PrerequisiteError
from ctk.client.transport import CatalogClient, Namespace, ns_path, ns_tuple, table_path, view_path
from ctk.core.exchange import Exchange

MAX_PAGES = 100          # pages per listing
MAX_DEPTH = 8            # nested namespace levels drop_tree descends
CLEANUP_WORKERS = 4      # drops drop_tree sends at a time
CLEANUP_REQUESTS = 5000  # requests one cleanup may send (a count: each request has its own timeout)


class Budget:
    """How many more requests a cleanup may send: a count, never a time, so that a loaded catalog is cleaned as
    far as a quiet one (each request has its timeout). Shared by the threads of one cleanup."""

    def __init__(self, requests: int) -> None:
        if requests < 0:
            raise ValueError(f"a cleanup budget is a number of requests >= 0, not {requests}")
        self.requests = int(requests)
        self.left = int(requests)
        self._lock = threading.Lock()

    def take(self) -> bool:
        """One request more, if the budget allows it."""
        with self._lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True

    @property
    def used_up(self) -> str:
        return f"cleanup budget of {self.requests} requests used up"


def _budget(budget: "Budget | int | None") -> Budget:
    return budget if isinstance(budget, Budget) else Budget(CLEANUP_REQUESTS if budget is None else budget)


def pages(client: Any, path: str, field: str, label: str, params: dict[str, Any] | None = None,
          deadline: float | None = None, max_pages: int = MAX_PAGES,
          budget: Budget | None = None) -> tuple[list, str | None]:
    """Every item under ``field`` of a paginated listing (following ``next-page-token``, at most ``max_pages``
    pages, none begun after the monotonic ``deadline`` or once ``budget`` is used up), and None; or the items
    read so far and why the listing stopped short (a page not answered 200 with a JSON object, the deadline,
    the budget)."""
    items: list = []
    token = None
    for _ in range(max_pages):
        if deadline is not None and time.monotonic() > deadline:
            return items, "time budget used up"
        if budget is not None and not budget.take():
            return items, budget.used_up
        ex = client.request("GET", path, label=label, params={**(params or {}), "pageToken": token})
        body = ex.json() if ex.status == 200 else None
        if not isinstance(body, dict):
            return items, f"{ex.error or f'HTTP {ex.status}'} ({ex.url})"
        items += body.get(field) or []
        token = body.get("next-page-token")
        if not token:
            break
    return items, None


def parent_param(parent: Namespace | None) -> dict[str, str] | None:
    """The ``parent`` query parameter of listNamespaces (levels joined by 0x1F; the client encodes it and puts
    an advertised separator in its place)."""
    parts = ns_tuple(parent) if parent else ()
    return {"parent": "\x1f".join(parts)} if parts else None


def _names(items: list) -> list[str]:
    return [i["name"] for i in items if isinstance(i, dict) and "name" in i]


class Catalog:
    def __init__(self, client: CatalogClient):
        self.client = client

    def do(self, method: str, path: str, json: Any = None, ok: tuple[int, ...] = (200, 201, 204),
           label: str = "setup", params: dict | None = None) -> Exchange:
        """Send one request; an answer whose status is not in ``ok`` raises `PrerequisiteError`."""
        ex = self.client.request(method, path, json=json, label=label, params=params)
        if ex.status not in ok:
            raise PrerequisiteError(f"{label}: {method} {path} answered "
                                    f"{ex.status if ex.status is not None else ex.error}", ex)
        return ex

    # namespaces
    def create_namespace(self, ns: tuple[str, ...], properties: dict | None = None) -> Exchange:
        return self.do("POST", "namespaces", {"namespace": list(ns), "properties": dict(properties or {})},
                       label=f"setup: create namespace {'.'.join(ns)}")

    def drop_namespace(self, ns: tuple[str, ...], label: str = "setup") -> Exchange:
        return self.do("DELETE", f"namespaces/{ns_path(ns)}", ok=(200, 204, 404),
                       label=f"{label}: drop namespace {'.'.join(ns)}")

    def update_namespace(self, ns: tuple[str, ...], updates: dict[str, str], label: str,
                         removals: list[str] | None = None, ok: tuple[int, ...] = (200, 201, 204)) -> Exchange:
        return self.do("POST", f"namespaces/{ns_path(ns)}/properties",
                       {"removals": list(removals or []), "updates": dict(updates)}, ok=ok, label=label)

    def set_namespace_property(self, ns: tuple[str, ...], key: str, value: str, label: str) -> Exchange:
        return self.update_namespace(ns, {key: value}, label)

    def namespace_state(self, ns: tuple[str, ...]) -> dict | None:
        return state.namespace_state(self.client, ns)

    # tables
    def create_table(self, ns: tuple[str, ...], name: str, properties: dict | None = None,
                     body: dict | None = None) -> dict:
        """createTable of ``body`` (default: the kit's table with ``properties``) -> its load result."""
        try:
            ex = self.do("POST", f"namespaces/{ns_path(ns)}/tables",
                         body if body is not None else create_table_body(name, properties),
                         label=f"setup: create table {name}")
        except PrerequisiteError as exc:
            raise PrerequisiteError(str(exc) + self._placement_hint(ns, exc.exchange), exc.exchange) from None
        return ex.json() or {}

    def _placement_hint(self, ns: tuple[str, ...], ex: Exchange | None) -> str:
        """For a table refused (4xx other than 409) in a top-level run namespace: the option that places the
        run namespace where the catalog allows tables."""
        placement = getattr(self.client, "placement", None)
        if ex is None or ex.status is None or not 400 <= ex.status < 500 or ex.status == 409 or placement is None \
                or placement.parent or tuple(ns[:1]) != tuple(placement.run):
            return ""
        return (" (the run namespace is top level; if the catalog allows tables only inside certain namespaces, "
                "give one with --ctk-parent-namespace)")

    def drop_table(self, ns: tuple[str, ...], name: str, purge: bool, label: str = "setup") -> Exchange:
        return self.do("DELETE", table_path(ns, name), ok=(200, 204, 404), label=f"{label}: drop table {name}",
                       params={"purgeRequested": "true" if purge else "false"})

    def commit_table(self, ns: tuple[str, ...], name: str, updates: dict[str, str], label: str) -> Exchange:
        return self.do("POST", table_path(ns, name), set_properties_commit(ns, name, updates), label=label)

    def table_state(self, ns: tuple[str, ...], name: str, damaged_ok: bool = False) -> dict | None:
        return state.table_state(self.client, ns, name, damaged_ok)

    # views
    def create_view(self, ns: tuple[str, ...], name: str, properties: dict | None = None,
                    sql: str = "SELECT 1 AS id") -> dict:
        ex = self.do("POST", f"namespaces/{ns_path(ns)}/views", create_view_body(ns, name, sql, properties),
                     label=f"setup: create view {name}")
        return ex.json() or {}

    def drop_view(self, ns: tuple[str, ...], name: str, label: str = "setup") -> Exchange:
        return self.do("DELETE", view_path(ns, name), ok=(200, 204, 404), label=f"{label}: drop view {name}")

    def commit_view(self, ns: tuple[str, ...], name: str, updates: dict[str, str], label: str) -> Exchange:
        return self.do("POST", view_path(ns, name), set_properties_commit(ns, name, updates), label=label)

    def view_state(self, ns: tuple[str, ...], name: str) -> dict | None:
        return state.view_state(self.client, ns, name)

    # listings (None when a page could not be read)
    def list_namespaces(self, parent: Namespace | None = None) -> list[tuple[str, ...]] | None:
        items, problem = pages(self.client, "namespaces", "namespaces", "read: list namespaces", parent_param(parent))
        return None if problem else [tuple(n) for n in items]

    def list_tables(self, ns: Namespace) -> list[str] | None:
        """Table names in the namespace, or None if the listing failed."""
        items, problem = pages(self.client, f"namespaces/{ns_path(ns)}/tables", "identifiers", "read: list tables")
        return None if problem else _names(items)

    def list_views(self, ns: Namespace) -> list[str] | None:
        items, problem = pages(self.client, f"namespaces/{ns_path(ns)}/views", "identifiers", "read: list views")
        return None if problem else _names(items)


def drop_tree(client: Any, parts: Namespace, keep_root: bool = False, budget: Budget | int | None = None,
              _depth: int = 0) -> list[str]:
    """Drop views, tables (purged) and nested namespaces below `parts` (and `parts` itself unless keep_root),
    reading back after the deletes: an object or namespace still listed (or loadable) after its DELETE was
    answered is a problem, whatever the answer said.

    Returns a list of problems (empty when everything went). Bounded by ``budget`` (a `Budget` shared with the
    rest of the cleanup, or a number of requests; default `CLEANUP_REQUESTS`) and MAX_DEPTH."""
    budget = _budget(budget)
    parts = list(ns_tuple(parts))
    problems: list[str] = []
    enc = ns_path(parts)
    if _depth < MAX_DEPTH:
        children, why = pages(client, "namespaces", "namespaces", "cleanup: list", parent_param(parts), budget=budget)
        if why == budget.used_up:
            problems.append(f"namespace {'.'.join(parts)}: nested namespaces not listed: {why}")
        for child in children:
            if isinstance(child, list) and len(child) == len(parts) + 1 and child[: len(parts)] == parts:
                problems += _drop_child(client, tuple(child), budget, _depth + 1)
    listings = {"view": f"namespaces/{enc}/views", "table": f"namespaces/{enc}/tables"}
    listed: dict[str, list[str]] = {}
    for kind, path in listings.items():
        items, why = pages(client, path, "identifiers", "cleanup: list", budget=budget)
        listed[kind] = _names(items)
        if why == budget.used_up:
            problems.append(f"namespace {'.'.join(parts)}: {kind}s not listed: {why}")
    drops: list[tuple[str, dict[str, str] | None, str, str, str]] = [
        (view_path(parts, name), None, "cleanup: drop view", "view", name) for name in listed["view"]]
    drops += [(table_path(parts, name), {"purgeRequested": "true"}, "cleanup: drop table", "table", name)
              for name in listed["table"]]

    def drop(item: tuple[str, dict | None, str, str, str]) -> str | None:
        path, params, label, kind, name = item
        if not budget.take():
            return f"{kind} {'.'.join(parts)}.{name}: {budget.used_up}"
        ex = client.request("DELETE", path, label=label, params=params)
        return None if ex.status in (200, 204, 404) else f"{kind} {'.'.join(parts)}.{name}: {ex.error or ex.status}"

    # Independent drops, a few at a time: a run leaves hundreds of tables and views behind.
    with ThreadPoolExecutor(max_workers=CLEANUP_WORKERS) as pool:
        failed = list(pool.map(drop, drops))
    problems += [p for p in failed if p]
    answered = {(d[3], d[4]) for d, p in zip(drops, failed) if p is None}
    for kind in {d[3] for d in drops}:      # read back: gone is what is no longer listed
        again, why = pages(client, listings[kind], "identifiers", "cleanup: read back", budget=budget)
        if why is not None:
            problems.append(f"namespace {'.'.join(parts)}: whether its {kind}s are gone could not be read: {why}")
        problems += [f"{kind} {'.'.join(parts)}.{name}: still listed after its DELETE was answered"
                     for name in _names(again) if (kind, name) in answered]
    if not keep_root:
        if not budget.take():
            return problems + [f"namespace {'.'.join(parts)}: {budget.used_up}"]
        ex = client.request("DELETE", f"namespaces/{enc}", label="cleanup: drop namespace")
        if ex.status not in (200, 204, 404):
            problems.append(f"namespace {'.'.join(parts)}: DELETE answered {said(ex)}")
        else:
            still = still_there(client, parts, budget)
            if still:
                problems.append(f"namespace {'.'.join(parts)}: DELETE answered {ex.status}, but it is "
                                + (f"still {still}" if not still.startswith("unreadable") else
                                   f"not known to be gone: {still}"))
    return problems


def _drop_child(client: Any, child: tuple[str, ...], budget: Budget, depth: int) -> list[str]:
    """Drop a listed nested namespace; when the read-back shows it still there, address it the other ways a
    catalog may read its name (`address_forms`: e.g. its levels joined by '.'), reading back after each."""
    problems = drop_tree(client, list(child), False, budget, depth)
    if not problems:
        return []
    for form in address_forms(client, child)[1:]:
        if still_there(client, child, budget) is None:
            return []
        # (a form the catalog does not have answers nothing wrong: what decides is whether the child is gone)
        drop_tree(client, list(form), False, budget, depth)
    return [] if still_there(client, child, budget) is None else problems


def still_there(client: Any, ns: Namespace, budget: Budget | None = None) -> str | None:
    """Whether a namespace is still there under exactly its levels, read back: "listed" (its parent's listing has
    it), None (gone: the listing was read and does not have it, or its parent is gone), else from a load:
    "loadable" (200) or "unreadable (...)". The listing comes first: some catalogs answer a load of any name 200."""
    ns = ns_tuple(ns)
    parent = ns[:-1]
    items, why = pages(client, "namespaces", "namespaces", "cleanup: read back", parent_param(parent),
                       budget=budget)
    if why is None and any(isinstance(i, list) and tuple(i) == ns for i in items):
        return "listed"
    if why is None and all(isinstance(i, list) and len(i) == len(ns) and tuple(i[:-1]) == parent for i in items):
        return None
    if why is None:      # the listing is not of that parent's children (a catalog that ignores `parent`): load it
        why = f"the listing of {list(parent)} names other namespaces"
    if why.startswith("HTTP 404") and len(ns) > 1:
        return None                      # the parent is gone, and with it what was below it
    if budget is not None and not budget.take():
        return f"unreadable ({budget.used_up})"
    status = client.request("GET", f"namespaces/{ns_path(ns)}", label="cleanup: read back").status
    if status == 200:
        return "loadable"
    if status == 404:
        return None                      # the listing did not say, the load does: gone
    return f"unreadable ({why})"


def said(ex: Exchange) -> str:
    """An answer in a few words, for a cleanup problem: its status (or transport error) and the error's type and
    message when it has an error body."""
    if ex.status is None:
        return f"no answer ({ex.error})"
    body = ex.json()
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and (err.get("type") or err.get("message")):
        message = " ".join(str(err.get("message") or "").split())[:160]
        return f"{ex.status} {err.get('type') or ''}".rstrip() + (f" ({message})" if message else "")
    return str(ex.status)


def drop_named(client: Any, kind: str, ns: Namespace, name: str, budget: Budget | None = None,
               label: str = "cleanup") -> str | None:
    """Drop the table or view ``name`` in ``ns`` by its name (a table purged) and read it back: None when it is
    gone (or was never there); else what is still there, with what its DELETE and the read-back answered. The
    read-back is the namespace's listing when it can be read (a name the catalog stores but cannot load, such
    as one holding '/', is still listed), else a load."""
    budget = _budget(budget)
    ns = ns_tuple(ns)
    path = table_path(ns, name) if kind == "table" else view_path(ns, name)
    shown = f"{kind} {'.'.join(ns)}.{name!r}" if any(c in name for c in "./") else f"{kind} {'.'.join(ns)}.{name}"
    if not budget.take():
        return f"{shown}: not dropped: {budget.used_up}"
    ex = client.request("DELETE", path, label=f"{label}: drop {kind}",
                        params={"purgeRequested": "true"} if kind == "table" else None)
    listing = f"namespaces/{ns_path(ns)}/{kind}s"
    items, why = pages(client, listing, "identifiers", f"{label}: read back", budget=budget)
    if why is None:
        if name not in _names(items):
            return None
        return f"{shown}: still listed after its DELETE answered {said(ex)}"
    if not budget.take():
        return f"{shown}: whether it is gone could not be read: {budget.used_up}"
    got = client.request("GET", path, label=f"{label}: read back")
    if got.status == 404:
        return None
    if got.status == 200:
        return f"{shown}: still loads after its DELETE answered {said(ex)}"
    return f"{shown}: DELETE answered {said(ex)}; whether it is gone could not be read (load {said(got)}, list {why})"


def drop_strays(client: Any, run: Namespace, count: int, budget: Budget | int | None = None,
                nested: bool | None = None) -> list[str]:
    """Drop the table and the view named ``STRAY`` (``ctk.client.placement``) in each of the first ``count``
    namespaces the kit used as missing ones below ``run`` (``ctk_absent_{n}``: as children, or - ``nested``
    False - as siblings of ``run``; None: both), by name: a catalog that stores a table in a namespace that does
    not exist lists it nowhere (issue 34). What answered its DELETE other than 404 is read back (a load); the
    answer is what still loads."""
    from ctk.client.placement import ABSENT, STRAY

    budget = _budget(budget)
    run = ns_tuple(run)
    problems: list[str] = []
    for n in range(1, count + 1):
        name = f"{ABSENT}_{n}"
        forms = ([run + (name,)] if nested is not False else []) \
            + ([run[:-1] + (f"{run[-1]}_{name}",)] if nested is not True else [])
        for ns in forms:
            for kind in ("table", "view"):
                path = table_path(ns, STRAY) if kind == "table" else view_path(ns, STRAY)
                if not budget.take():
                    return problems + [f"{kind}s in namespaces that do not exist below {'.'.join(run)}: "
                                       f"{budget.used_up}"]
                ex = client.request("DELETE", path, label=f"cleanup: drop a {kind} in a namespace never created",
                                    params={"purgeRequested": "true"} if kind == "table" else None)
                if ex.status == 404:
                    continue            # nothing there
                got = client.request("GET", path, label="cleanup: read back") if budget.take() else None
                if got is not None and got.status == 200:
                    problems.append(f"{kind} {'.'.join(ns)}.{STRAY} (in a namespace that does not exist, created "
                                    f"there by the catalog): still loads after its DELETE answered {said(ex)}")
    return problems


# --- what the kit created, however the catalog names it -------------------------------------------------------

NEST_PROBE = "ctk_nesting_probe"


def _split_levels(ns: Namespace, separators: tuple[str, ...]) -> tuple[str, ...]:
    parts: list[str] = []
    for level in ns_tuple(ns):
        pieces = [level]
        for sep in separators:
            pieces = [q for p in pieces for q in p.split(sep)]
        parts += pieces
    return tuple(parts)


def level_separators(client: Any) -> tuple[str, ...]:
    """The characters a catalog may join namespace levels with: the unit separator, '.', and the separator the
    catalog advertised (decoded)."""
    advertised = unquote(getattr(client, "namespace_separator", "") or "")
    return tuple(dict.fromkeys(s for s in ("\x1f", ".", advertised) if s))


def listed_as(client: Any, ns: Namespace, deadline: float | None = None, budget: Budget | None = None,
              include_self: bool = False) -> list[tuple[str, ...]]:
    """How the catalog lists the namespace the kit created as ``ns`` when not under those levels: every listed
    namespace (top level, and below each leading part of ``ns``) whose levels, split on the separators a catalog
    may join levels with, are ``ns``'s - e.g. ``("run.probe",)`` for ``("run", "probe")`` on a catalog that
    joins levels with '.'. ``ns`` itself is in the answer only with ``include_self`` (when listed)."""
    ns = ns_tuple(ns)
    seps = level_separators(client)
    want = _split_levels(ns, seps)
    found: list[tuple[str, ...]] = []
    for depth in range(len(want)):
        items, _ = pages(client, "namespaces", "namespaces", "cleanup: find a namespace as listed",
                         parent_param(want[:depth]), deadline, budget=budget)
        for item in items:
            if isinstance(item, list) and (include_self or tuple(item) != ns) \
                    and _split_levels(item, seps) == want and tuple(item) not in found:
                found.append(tuple(item))
    return found


def address_forms(client: Any, ns: Namespace) -> list[tuple[str, ...]]:
    """The ways to name, in a URL, a namespace listed as ``ns``: as listed; its levels split on the separators a
    catalog may join them with (the nested entry behind a joined name); those levels joined by '.' into one
    (a catalog that reads '.' in a path as its separator without advertising it)."""
    ns = ns_tuple(ns)
    split = _split_levels(ns, level_separators(client))
    forms = [ns, split] + ([(".".join(split),)] if len(split) > 1 else [])
    return list(dict.fromkeys(f for f in forms if f and all(f)))


def drop_as_named(client: Any, ns: Namespace, budget: Budget | int | None = None,
                  names: list[tuple[str, ...]] | None = None) -> tuple[list[tuple[str, ...]], list[str]]:
    """Drop the namespace the kit created as ``ns`` (or found listed as one of ``names``) wherever the catalog put
    it: under its levels, then under every name the catalog lists it by (`listed_as`), each addressed every way
    a catalog may read it (`address_forms`), reading back after every delete (a DELETE answered 200 proves
    nothing: some catalogs answer 200 for a namespace they do not have). Returns (the names it was listed under
    before, problems: what is still there - only what the read-back shows)."""
    ns = ns_tuple(ns)
    budget = _budget(budget)
    before = list(dict.fromkeys([*(names or []), *listed_as(client, ns, budget=budget, include_self=True)]))
    said: dict[tuple[str, ...], list[str]] = {}
    tried: set[tuple[str, ...]] = set()
    for name in [ns, *before]:
        for form in address_forms(client, name):
            if form in tried:
                continue
            if tried and not listed_as(client, ns, budget=budget, include_self=True) \
                    and still_there(client, ns, budget) is None:
                break
            tried.add(form)
            said.setdefault(name, []).extend(drop_tree(client, list(form), budget=budget))
    left = listed_as(client, ns, budget=budget, include_self=True)
    if not left and still_there(client, ns, budget) is not None:
        left.insert(0, ns)
    problems = []
    for name in left:
        why = "; ".join(dict.fromkeys(said.get(name) or said.get(ns) or [])) or "still listed after its DELETE"
        whose = "" if name == ns else f" (the catalog's name for the namespace {list(ns)} the kit created)"
        problems.append(f"namespace {_shown(name)}{whose} not removed: {why}")
    return before, problems


def _shown(ns: tuple[str, ...]) -> str:
    """A namespace as the catalog names it: one level as its name in quotes, several as their list."""
    return repr(ns[0]) if len(ns) == 1 else repr(list(ns))


@dataclass
class NestingProbe:
    """What creating a namespace nested in another showed: ``created`` and ``loaded`` are the statuses of the
    create and of loading it back; ``nested`` whether it loaded; ``listed_as`` the names the catalog lists it
    under when not its levels; ``leftovers`` what the kit could not remove afterwards. Unpacks as
    ``nested, note``."""

    namespace: tuple[str, ...]
    created: int | None
    loaded: int | None
    nested: bool
    note: str
    listed_as: list[tuple[str, ...]] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)

    def __iter__(self):
        yield self.nested
        yield self.note


def loaded_levels(ex: Exchange) -> tuple[str, ...] | None:
    """The levels a loadNamespaceMetadata answer names (its ``namespace``), None when it names none readable."""
    body = ex.json() if ex.status == 200 else None
    got = body.get("namespace") if isinstance(body, dict) else None
    return tuple(got) if isinstance(got, list) and all(isinstance(p, str) for p in got) else None


def probe_nesting(client: Any, parent: Namespace, name: str = NEST_PROBE, properties: dict | None = None,
                  budget: Budget | int | None = None) -> NestingProbe:
    """Create ``parent + (name,)``, load it back, and remove it however the catalog named it (`drop_as_named`).

    A create answered 2xx whose namespace then cannot be loaded means no nesting (the kit places its namespaces
    as siblings); the kit still removes what the create made (a catalog that joins levels with '.' lists it as
    one level ``parent.name``) and names in ``leftovers`` what it could not remove."""
    probe = ns_tuple(parent) + (name,)
    shown = ".".join(probe)
    ex = client.request("POST", "namespaces", json={"namespace": list(probe), "properties": dict(properties or {})},
                        label="probe: create a nested namespace")
    created = ex.status in (200, 201, 204)
    if not created and ex.status != 409:
        return NestingProbe(probe, ex.status, None, False, f"creating {shown} answered {ex.error or ex.status}",
                            exchanges=[ex])
    got = client.request("GET", f"namespaces/{ns_path(probe)}", label="probe: load the nested namespace")
    levels = loaded_levels(got)
    nested = got.status == 200 and levels in (None, probe)
    names, problems = drop_as_named(client, probe, budget)
    others = [n for n in names if n != probe]
    if nested:
        note = f"{shown} created and loaded back"
    elif got.status == 200:      # loaded, but under other levels: the catalog made one level of the joined name
        note = (f"creating {shown} answered {ex.status}; loading it answered 200 naming it {_shown(levels or ())}, "
                f"not the levels {list(probe)}")
    else:
        note = f"creating {shown} answered {ex.status}, but loading it answered {got.error or got.status}"
        if others:
            note += "; the catalog lists it as " + ", ".join(_shown(n) for n in others)
    return NestingProbe(probe, ex.status, got.status, nested, note, others,
                        leftover_lines(problems, "the nested-namespace probe"), [ex, got])


def leftover_lines(problems: list[str], who: str = "") -> list[str]:
    """What the kit made and could not remove, one line each as the run's cleanup problems say it."""
    made = f" (made by {who})" if who else ""
    return [f"leftover: {p}{made}; remove it by hand or with ctk cleanup" for p in problems]
