"""`Catalog`: what the kit does to a catalog outside the request under test, over plain HTTP (no idempotency
keys): prerequisites (create / drop / commit namespaces, tables and views), the case observers of
``ctk.catalog.state``, listings (`pages()`, the one pagination routine) and the removal of a namespace with
everything below it (`drop_tree()`).

Paths are relative to ``/v1/{prefix}`` and namespaces are encoded by the client layer's one codec
(``ctk.client.transport.ns_path``); a target's advertised ``namespace-separator`` is applied by the client.
A prerequisite that fails raises `PrerequisiteError` (checks turn it into an inconclusive verdict).
"""

from __future__ import annotations

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


def pages(client: Any, path: str, field: str, label: str, params: dict[str, Any] | None = None,
          deadline: float | None = None, max_pages: int = MAX_PAGES) -> tuple[list, str | None]:
    """Every item under ``field`` of a paginated listing (following ``next-page-token``, at most ``max_pages``
    pages, none begun after the monotonic ``deadline``), and None; or the items read so far and why the
    listing stopped short (a page not answered 200 with a JSON object, the deadline)."""
    items: list = []
    token = None
    for _ in range(max_pages):
        if deadline is not None and time.monotonic() > deadline:
            return items, "time budget used up"
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


def drop_tree(client: Any, parts: Namespace, keep_root: bool = False, budget_s: float = 60.0,
              _depth: int = 0, _deadline: float | None = None) -> list[str]:
    """Drop views, tables (purged) and nested namespaces below `parts` (and `parts` itself unless keep_root).

    Returns a list of problems (empty when everything went). Bounded by `budget_s` and MAX_DEPTH."""
    deadline = _deadline if _deadline is not None else time.monotonic() + budget_s
    parts = list(ns_tuple(parts))
    problems: list[str] = []
    enc = ns_path(parts)
    if _depth < MAX_DEPTH:
        children, _ = pages(client, "namespaces", "namespaces", "cleanup: list", parent_param(parts), deadline)
        for child in children:
            if isinstance(child, list) and len(child) == len(parts) + 1 and child[: len(parts)] == parts:
                problems += drop_tree(client, child, False, budget_s, _depth + 1, deadline)
    views, _ = pages(client, f"namespaces/{enc}/views", "identifiers", "cleanup: list", deadline=deadline)
    tables, _ = pages(client, f"namespaces/{enc}/tables", "identifiers", "cleanup: list", deadline=deadline)
    drops: list[tuple[str, dict[str, str] | None, str, str]] = [
        (view_path(parts, name), None, "cleanup: drop view", f"view {name}") for name in _names(views)]
    drops += [(table_path(parts, name), {"purgeRequested": "true"}, "cleanup: drop table", f"table {name}")
              for name in _names(tables)]

    def drop(item: tuple[str, dict | None, str, str]) -> str | None:
        path, params, label, what = item
        if time.monotonic() > deadline:
            return f"{what}: cleanup budget of {budget_s:.0f} s used up"
        ex = client.request("DELETE", path, label=label, params=params)
        return None if ex.status in (200, 204, 404) else f"{what}: {ex.error or ex.status}"

    # Independent drops, a few at a time: a run leaves hundreds of tables and views behind.
    with ThreadPoolExecutor(max_workers=CLEANUP_WORKERS) as pool:
        problems += [p for p in pool.map(drop, drops) if p]
    if not keep_root:
        ex = client.request("DELETE", f"namespaces/{enc}", label="cleanup: drop namespace")
        if ex.status not in (200, 204, 404):
            problems.append(f"namespace {'.'.join(parts)}: {ex.error or ex.status}")
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


def listed_as(client: Any, ns: Namespace, deadline: float | None = None) -> list[tuple[str, ...]]:
    """How the catalog lists the namespace the kit created as ``ns`` when not under those levels: every listed
    namespace (top level, and below each leading part of ``ns``) whose levels, split on the separators a catalog
    may join levels with, are ``ns``'s - e.g. ``("run.probe",)`` for ``("run", "probe")`` on a catalog that
    joins levels with '.'. ``ns`` itself is not in the answer."""
    ns = ns_tuple(ns)
    seps = level_separators(client)
    want = _split_levels(ns, seps)
    found: list[tuple[str, ...]] = []
    for depth in range(len(ns)):
        items, _ = pages(client, "namespaces", "namespaces", "cleanup: find a namespace as listed",
                         parent_param(ns[:depth]), deadline)
        for item in items:
            if isinstance(item, list) and tuple(item) != ns and _split_levels(item, seps) == want \
                    and tuple(item) not in found:
                found.append(tuple(item))
    return found


def drop_as_named(client: Any, ns: Namespace, budget_s: float = 30.0) -> tuple[list[tuple[str, ...]], list[str]]:
    """Drop the namespace the kit created as ``ns`` where the catalog put it: under its levels, else under the
    name(s) the catalog lists it by (`listed_as`). Returns (the names it was found under, problems: what could
    not be removed)."""
    ns = ns_tuple(ns)
    deadline = time.monotonic() + budget_s
    ex = client.request("DELETE", f"namespaces/{ns_path(ns)}", label="cleanup: drop namespace")
    if ex.status in (200, 204):
        return [ns], []
    problems = [] if ex.status == 404 else [f"namespace {'.'.join(ns)}: DELETE answered {ex.error or ex.status}"]
    names = listed_as(client, ns, deadline)
    for other in names:
        problems += [f"namespace {_shown(other)} (the catalog's name for the namespace {list(ns)} the kit created) "
                     f"not removed: {p}"
                     for p in drop_tree(client, list(other), budget_s=max(1.0, deadline - time.monotonic()))]
    return ([ns] if ex.status != 404 else []) + names, problems


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


def probe_nesting(client: Any, parent: Namespace, name: str = NEST_PROBE, properties: dict | None = None,
                  budget_s: float = 30.0) -> NestingProbe:
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
    nested = got.status == 200
    names, problems = drop_as_named(client, probe, budget_s)
    others = [n for n in names if n != probe]
    if nested:
        note = f"{shown} created and loaded back"
    else:
        note = f"creating {shown} answered {ex.status}, but loading it answered {got.error or got.status}"
        if others:
            note += "; the catalog lists it as " + ", ".join(_shown(n) for n in others)
    leftovers = [f"leftover: {p}; remove it by hand or with ctk cleanup" for p in problems]
    return NestingProbe(probe, ex.status, got.status, nested, note, others, leftovers, [ex, got])
