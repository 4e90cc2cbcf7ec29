"""The run namespace: created at session start, removed with everything inside at the end.

The kit touches nothing outside it. Works with any client that has
``request(method, path, json=..., label=...) -> Exchange`` with paths relative to ``/v1/{prefix}``.
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


def create(client: Any, name: str, run_id: str) -> None:
    ex = client.request("POST", "namespaces", json={"namespace": [name], "properties": {"ctk.run-id": run_id}},
                        label="create run namespace")
    if ex.status in (200, 201, 204):
        return
    if ex.status == 409:  # left over from a crashed run with the same id: empty it and reuse it
        drop_tree(client, [name], keep_root=True)
        return
    detail = ex.error or f"HTTP {ex.status}: {(ex.response_body or '')[:300]}"
    raise NamespaceError(f"could not create the run namespace {name!r} at {ex.url}: {detail}")


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


def exists(client: Any, parts: list[str]) -> bool:
    ex = client.request("GET", f"namespaces/{encode_namespace(parts)}", label="namespace exists?")
    return ex.status == 200
