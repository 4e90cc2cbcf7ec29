"""The run namespace: created at session start (inside ``--ctk-parent-namespace`` when given), removed with
everything inside at the end, and the probe of whether the target nests namespaces below it.

The kit touches nothing outside it (and the run-unique siblings it registers where the target cannot nest).
Works with any client that has ``request(method, path, json=..., label=...) -> Exchange`` with paths relative
to ``/v1/{prefix}``.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

UNIT_SEP = "\x1f"
MAX_PAGES = 50           # pages per listing
MAX_DEPTH = 8            # nested namespace levels


class NamespaceError(RuntimeError):
    pass


def encode_namespace(parts: list[str] | tuple[str, ...] | str) -> str:
    if isinstance(parts, str):
        parts = [parts]
    return quote(UNIT_SEP.join(parts), safe="")


def run_namespace_name(prefix: str, run_id: str, worker: str) -> str:
    clean = lambda s: "".join(c if c.isalnum() else "_" for c in s)  # noqa: E731
    return f"{clean(prefix)}_{clean(run_id)}_{clean(worker)}"


def create(client: Any, name: str | tuple[str, ...] | list[str], run_id: str) -> None:
    """Create the run namespace (``name``: one level, or the full levels with the parent namespace first)."""
    parts = [name] if isinstance(name, str) else list(name)
    ex = client.request("POST", "namespaces", json={"namespace": parts, "properties": {"ctk.run-id": run_id}},
                        label="create run namespace")
    if ex.status in (200, 201, 204):
        return
    if ex.status == 409:  # left over from a crashed run with the same id: empty it and reuse it
        drop_tree(client, parts, keep_root=True)
        return
    detail = ex.error or f"HTTP {ex.status}: {(ex.response_body or '')[:300]}"
    where = f" inside {'.'.join(parts[:-1])!r}" if len(parts) > 1 else ""
    raise NamespaceError(f"could not create the run namespace {parts[-1]!r}{where} at {ex.url}: {detail}")


def check_parent(client: Any, parent: tuple[str, ...]) -> None:
    """The parent namespace must exist already: the kit never creates (or drops) anything outside its run
    namespace."""
    ex = client.request("GET", f"namespaces/{encode_namespace(list(parent))}", label="parent namespace exists?")
    if ex.status == 200:
        return
    what = "does not exist" if ex.status == 404 else f"could not be loaded ({ex.error or ex.status})"
    raise NamespaceError(f"the parent namespace {'.'.join(parent)!r} (--ctk-parent-namespace) {what} at {ex.url}; "
                         "the kit does not create it: give an existing namespace")


def check_loadable(client: Any, parts: tuple[str, ...]) -> None:
    """The run namespace, once created, must load back (a target may answer 200 to a nested namespace it then
    cannot find)."""
    ex = client.request("GET", f"namespaces/{encode_namespace(list(parts))}", label="run namespace loads back?")
    if ex.status != 200:
        raise NamespaceError(f"the run namespace {'.'.join(parts)!r} was created but loading it answered "
                             f"{ex.error or ex.status}; the target does not seem to support a namespace at that "
                             "depth (try another --ctk-parent-namespace, or none)")


NEST_PROBE = "ctk_nesting_probe"


def probe_nesting(client: Any, run: tuple[str, ...]) -> tuple[bool, str]:
    """Whether the target supports a namespace nested in the run namespace: create one, load it back, drop it.

    A creation answered 2xx whose namespace then cannot be loaded means no nesting (not a key-handling bug).
    Returns (nested, what was seen)."""
    probe = list(run) + [NEST_PROBE]
    ex = client.request("POST", "namespaces", json={"namespace": probe, "properties": {}},
                        label="probe: create a nested namespace")
    created = ex.status in (200, 201, 204)
    if not created and ex.status != 409:
        return False, f"creating {'.'.join(probe)} answered {ex.error or ex.status}"
    got = client.request("GET", f"namespaces/{encode_namespace(probe)}", label="probe: load the nested namespace")
    nested = got.status == 200
    if created or nested:
        client.request("DELETE", f"namespaces/{encode_namespace(probe)}", label="probe: drop the nested namespace")
    if nested:
        return True, f"{'.'.join(probe)} created and loaded back"
    return False, (f"creating {'.'.join(probe)} answered {ex.status}, but loading it answered "
                   f"{got.error or got.status}")


def _list(client: Any, path: str, key: str, deadline: float) -> list[Any]:
    items: list[Any] = []
    token = None
    for _ in range(MAX_PAGES):
        if time.monotonic() > deadline:
            break
        p = path + (("&" if "?" in path else "?") + "pageToken=" + quote(token, safe="") if token else "")
        ex = client.request("GET", p, label="cleanup: list")
        if ex.status == 404 or ex.status is None or ex.status >= 400:
            break
        body = ex.json() or {}
        items.extend(body.get(key) or [])
        token = body.get("next-page-token")
        if not token:
            break
    return items


CLEANUP_WORKERS = 4


def drop_tree(client: Any, parts: list[str], keep_root: bool = False, budget_s: float = 60.0,
              _depth: int = 0, _deadline: float | None = None) -> list[str]:
    """Drop views, tables and nested namespaces below `parts` (and `parts` itself unless keep_root).

    Returns a list of problems (empty when everything went). Bounded by `budget_s` and MAX_DEPTH."""
    deadline = _deadline if _deadline is not None else time.monotonic() + budget_s
    problems: list[str] = []
    enc = encode_namespace(parts)
    if _depth < MAX_DEPTH:
        children = _list(client, f"namespaces?parent={enc}", "namespaces", deadline)
        for child in children:
            if isinstance(child, list) and len(child) == len(parts) + 1 and child[: len(parts)] == parts:
                problems += drop_tree(client, child, False, budget_s, _depth + 1, deadline)
    drops = [(f"namespaces/{enc}/views/{quote(i['name'], safe='')}", "cleanup: drop view", f"view {i.get('name')}")
             for i in _list(client, f"namespaces/{enc}/views", "identifiers", deadline)]
    drops += [(f"namespaces/{enc}/tables/{quote(i['name'], safe='')}?purgeRequested=true", "cleanup: drop table",
               f"table {i.get('name')}") for i in _list(client, f"namespaces/{enc}/tables", "identifiers", deadline)]

    def drop(item: tuple[str, str, str]) -> str | None:
        path, label, what = item
        if time.monotonic() > deadline:
            return f"{what}: cleanup budget of {budget_s:.0f} s used up"
        ex = client.request("DELETE", path, label=label)
        return None if ex.status in (200, 204, 404) else f"{what}: {ex.error or ex.status}"

    # Independent drops, a few at a time: a run leaves hundreds of tables and views behind.
    with ThreadPoolExecutor(max_workers=CLEANUP_WORKERS) as pool:
        problems += [p for p in pool.map(drop, drops) if p]
    if not keep_root:
        ex = client.request("DELETE", f"namespaces/{enc}", label="cleanup: drop namespace")
        if ex.status not in (200, 204, 404):
            problems.append(f"namespace {'.'.join(parts)}: {ex.error or ex.status}")
    return problems


def drop_siblings(client: Any, siblings: list[tuple[str, ...]], budget_s: float = 60.0) -> list[str]:
    """Drop the sibling namespaces the kit registered (a target without nested namespaces), each with its
    content; a sibling that was never created answers 404 and is fine."""
    problems: list[str] = []
    deadline = time.monotonic() + budget_s
    for ns in dict.fromkeys(tuple(s) for s in siblings):
        if time.monotonic() > deadline:
            problems.append(f"namespace {'.'.join(ns)}: cleanup budget of {budget_s:.0f} s used up")
            continue
        problems += drop_tree(client, list(ns), budget_s=max(1.0, deadline - time.monotonic()))
    return problems


def exists(client: Any, parts: list[str]) -> bool:
    ex = client.request("GET", f"namespaces/{encode_namespace(parts)}", label="namespace exists?")
    return ex.status == 200
