"""The run namespace: created at session start (inside ``--ctk-parent-namespace`` when given), removed with
everything inside at the end, and the probe of whether the target nests namespaces below it.

The kit touches nothing outside it (and the run-unique siblings it registers where the target cannot nest).
Works with any client that has ``request(method, path, json=..., label=..., params=...) -> Exchange`` with
paths relative to ``/v1/{prefix}``. Namespaces are encoded by the client layer's codec (`ns_path`), listings
and the removal of a namespace with its content are the catalog layer's (`pages`, `drop_tree`).
"""

from __future__ import annotations

from typing import Any

from ctk.catalog.facade import CLEANUP_REQUESTS, NEST_PROBE, Budget, NestingProbe, drop_strays, drop_tree
from ctk.catalog.facade import probe_nesting as _probe
from ctk.client.transport import ns_path

__all__ = ["CLEANUP_REQUESTS", "MARKER", "NEST_PROBE", "Budget", "NamespaceError", "NestingProbe", "check_loadable", "check_parent", "create",
           "drop_siblings", "drop_strays", "drop_tree", "exists", "probe_nesting", "run_namespace_name"]


MARKER = "ctk.run-id"        # the property every namespace the kit creates for a run carries (ctk cleanup reads it)


class NamespaceError(RuntimeError):
    pass


def run_namespace_name(prefix: str, run_id: str, worker: str) -> str:
    clean = lambda s: "".join(c if c.isalnum() else "_" for c in s)  # noqa: E731
    return f"{clean(prefix)}_{clean(run_id)}_{clean(worker)}"


def create(client: Any, name: str | tuple[str, ...] | list[str], run_id: str) -> None:
    """Create the run namespace (``name``: one level, or the full levels with the parent namespace first)."""
    parts = [name] if isinstance(name, str) else list(name)
    ex = client.request("POST", "namespaces", json={"namespace": parts, "properties": {MARKER: run_id}},
                        label="create run namespace")
    if ex.status in (200, 201, 204):
        return
    if ex.status == 409:  # left over from a crashed run with the same id: empty it and reuse it
        drop_tree(client, parts, keep_root=True)
        return
    detail = ex.error or f"HTTP {ex.status}: {(ex.response_body or '')[:300]}"
    where = f" inside {'.'.join(parts[:-1])!r}" if len(parts) > 1 else ""
    raise NamespaceError(f"could not create the run namespace {parts[-1]!r}{where} at {ex.url}: {detail}"
                         f"{_create_hint(ex.status)}")


def _create_hint(status: int | None) -> str:
    """What to change when the run namespace cannot be created, by the answer's status."""
    if status == 404:
        return ("; a 404 here: the catalog prefix is wrong (give --catalog-prefix, or check what /v1/config "
                "advertises) or the parent does not exist (--ctk-parent-namespace)")
    if status in (401, 403):
        return ("; credentials that may create namespaces (--catalog-token / --catalog-credential), or an existing "
                "namespace where tables are allowed (--ctk-parent-namespace NS)")
    if status is not None and 400 <= status < 500:
        return "; a catalog that allows tables only in fixed namespaces: --ctk-parent-namespace NS"
    return ""


def check_parent(client: Any, parent: tuple[str, ...]) -> None:
    """The parent namespace must exist already: the kit never creates (or drops) anything outside its run
    namespace."""
    ex = client.request("GET", f"namespaces/{ns_path(parent)}", label="parent namespace exists?")
    if ex.status == 200:
        return
    what = "does not exist" if ex.status == 404 else f"could not be loaded ({ex.error or ex.status})"
    raise NamespaceError(f"the parent namespace {'.'.join(parent)!r} (--ctk-parent-namespace) {what} at {ex.url}; "
                         "the kit does not create it: give an existing namespace")


def check_loadable(client: Any, parts: tuple[str, ...]) -> None:
    """The run namespace, once created, must load back (a target may answer 200 to a nested namespace it then
    cannot find)."""
    ex = client.request("GET", f"namespaces/{ns_path(parts)}", label="run namespace loads back?")
    if ex.status != 200:
        raise NamespaceError(f"the run namespace {'.'.join(parts)!r} was created but loading it answered "
                             f"{ex.error or ex.status}; the target does not seem to support a namespace at that "
                             "depth (try another --ctk-parent-namespace, or none)")


def probe_nesting(client: Any, run: tuple[str, ...], run_id: str | None = None) -> NestingProbe:
    """Whether the target supports a namespace nested in the run namespace: create one (carrying the run's
    marker, so that `ctk cleanup` knows it as the kit's), load it back, remove it however the catalog named it
    (``ctk.catalog.facade.probe_nesting``). Unpacks as ``nested, note``; ``leftovers`` names what could not be
    removed (the session reports it)."""
    return _probe(client, run, NEST_PROBE, {MARKER: run_id} if run_id else None)


def drop_siblings(client: Any, siblings: list[tuple[str, ...]], budget: Budget | int | None = None) -> list[str]:
    """Drop the sibling namespaces the kit registered (a target without nested namespaces), each with its
    content; a sibling that was never created answers 404 and is fine. ``budget``: requests (a count)."""
    budget = budget if isinstance(budget, Budget) else Budget(CLEANUP_REQUESTS if budget is None else budget)
    problems: list[str] = []
    for ns in dict.fromkeys(tuple(s) for s in siblings):
        problems += drop_tree(client, list(ns), budget=budget)
    return problems


def exists(client: Any, parts: list[str]) -> bool:
    ex = client.request("GET", f"namespaces/{ns_path(parts)}", label="namespace exists?")
    return ex.status == 200
