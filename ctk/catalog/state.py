"""The one reader of catalog state, and the deltas that count a request's effect between two states.

`read()` GETs a namespace, table or view (`resource_path()`) and classifies the answer: exists (200), absent
(404) or unreadable (anything else: a 5xx, no answer, a 200 that is not a JSON object), optionally trying a 5xx
or an unanswered read again (bounded: ``attempts``). Everything that reads state goes through it:

* the case observers (`namespace_state()`, `table_state()`, `view_state()`): a small dict per resource, None
  when absent; an unreadable state is a `PrerequisiteError` (the case cannot be judged);
* the history layer's state objects (``ctk.history.state``), which keep "unreadable" as a value
  (``READ_ATTEMPTS`` tries) so that a checker can call it inconclusive;
* the generated checks (``ctk.fuzzing``) through `current()`: the load answer or None when absent, an
  unreadable state a `PrerequisiteError` (their run ends inconclusive instead of blaming the catalog).

The deltas (`created`, `removed`, `marked`, `prop_set`, `table_commits`) turn two case observations into a
count of executions; `body_identity` gives the identity fields of an answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from ctk.client.errors import PrerequisiteError
from ctk.client.transport import ns_path, table_path, view_path
from ctk.core.exchange import Exchange

MARK = "ctk.mark"            # property the kit sets to make an update visible in state
REMOVED = "ctk.removed"      # property updateProperties removes (present before, and again after interfering)

READ_ATTEMPTS = 3            # a history state read answered 5xx or not answered is tried this many times in all
READ_PAUSE = 0.2             # seconds between those attempts


def resource_path(namespace: Any, name: str | None = None, kind: str = "namespace") -> str:
    """The path of a namespace (``kind`` "namespace"), a table ("table") or a view ("view")."""
    if kind == "namespace":
        return f"namespaces/{ns_path(namespace)}"
    if name is None:
        raise ValueError(f"a {kind} path needs a name")
    return table_path(namespace, name) if kind == "table" else view_path(namespace, name)


def read_with_retry(client: Any, path: str, label: str, attempts: int = READ_ATTEMPTS) -> Exchange:
    """GET ``path``; a 5xx or no answer is tried again, up to ``attempts`` in all. The last exchange."""
    ex = client.request("GET", path, label=label)
    for _ in range(attempts - 1):
        if ex.status is not None and ex.status < 500:
            break
        time.sleep(READ_PAUSE)
        ex = client.request("GET", path, label=label + " (again)")
    return ex


@dataclass
class Read:
    """One read of a resource: ``exists`` True (200 with a JSON object), False (404) or None (unreadable, with
    ``error`` saying why); ``body`` the JSON object when it exists."""
    exchange: Exchange
    exists: bool | None
    error: str | None = None
    body: dict | None = None


def file_gone(ex: Exchange) -> bool:
    """A 404 whose error type is NotFoundException: a file of the resource is gone (what Iceberg's FileIO raises,
    and upstream's catalog answers for a table whose metadata file was deleted), not the resource itself (that
    is NoSuchTableException / NoSuchViewException)."""
    body = ex.json() if ex.status == 404 else None
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("type") == "NotFoundException"


def read(client: Any, path: str, label: str, what: str, attempts: int = 1) -> Read:
    """Read the resource at ``path`` (``what`` names it in errors, e.g. "load table"). A 404 NotFoundException
    (a file of it is gone) is unreadable, not absent."""
    ex = read_with_retry(client, path, label, attempts)
    if ex.status == 404 and file_gone(ex):
        return Read(ex, None, "state unreadable (404 NotFoundException: a file of it is gone)")
    if ex.status == 404:
        return Read(ex, False)
    if ex.status is None:
        return Read(ex, None, f"state unreadable (no answer: {ex.error})")
    if ex.status != 200:
        kind = ex.status if ex.status >= 500 else f"status {ex.status}"
        return Read(ex, None, f"state unreadable ({kind}): {(ex.response_body or '')[:200]}")
    body = ex.json()
    if not isinstance(body, dict):
        return Read(ex, None, f"state unreadable: {what} answered 200 with a non-JSON body")
    return Read(ex, True, body=body)


def current(client: Any, namespace: Any, name: str | None = None, kind: str = "namespace") -> dict | None:
    """The resource's load answer, None when absent (a 5xx or no answer is read again, ``READ_ATTEMPTS`` in
    all); a state that stays unreadable is a `PrerequisiteError`, never "absent". The generated checks compare
    their model with this."""
    label = f"read: load {kind}"
    got = read(client, resource_path(namespace, name, kind), label, f"load {kind}", READ_ATTEMPTS)
    if got.exists is None:
        raise PrerequisiteError(f"{label}{'' if name is None else ' ' + name}: {got.error}", got.exchange)
    return got.body


# --------------------------------------------------------------------------------------------------------
# Case observers: one small dict per resource (None when absent)
# --------------------------------------------------------------------------------------------------------

def _observed(client: Any, path: str, what: str, damaged_ok: bool = False, metadata: bool = True) -> dict | None:
    got = read(client, path, f"observe: {what}", what)
    ex = got.exchange
    if got.exists is False:
        return None
    if damaged_ok and ex.status is not None and (ex.status >= 500 or file_gone(ex)):
        return {"damaged": f"{what} answered {ex.status}"}
    body = got.body     # a dict whenever the resource exists
    if not got.exists or body is None or (metadata and not isinstance(body.get("metadata"), dict)):
        raise PrerequisiteError(f"observe: {what} answered {ex.status or ex.error}", ex)
    return body


def load_result(client: Any, namespace: tuple[str, ...], name: str, kind: str = "table",
                damaged_ok: bool = False) -> dict | None:
    """The load result of a table or view (None for 404); anything but a load result is a PrerequisiteError,
    except that with damaged_ok a 5xx or a 404 NotFoundException reads as {"damaged": ...}: the catalog still
    lists the resource but cannot load it (its files are gone, say)."""
    return _observed(client, resource_path(namespace, name, kind), f"load {kind} {name}", damaged_ok)


def namespace_state(client: Any, namespace: tuple[str, ...]) -> dict | None:
    body = _observed(client, resource_path(namespace), "load namespace", metadata=False)
    return None if body is None else {"properties": dict(body.get("properties") or {})}


def table_state(client: Any, namespace: tuple[str, ...], name: str, damaged_ok: bool = False) -> dict | None:
    body = load_result(client, namespace, name, "table", damaged_ok)
    if body is None or "damaged" in body:
        return body
    md = body["metadata"]
    return {"uuid": md.get("table-uuid"), "properties": dict(md.get("properties") or {}),
            "metadata_log": len(md.get("metadata-log") or []),
            "metadata_location": body.get("metadata-location")}


def view_state(client: Any, namespace: tuple[str, ...], name: str) -> dict | None:
    body = load_result(client, namespace, name, "view")
    if body is None:
        return None
    md = body["metadata"]
    return {"uuid": md.get("view-uuid"), "properties": dict(md.get("properties") or {}),
            "versions": len(md.get("versions") or []),
            "metadata_location": body.get("metadata-location")}


# --------------------------------------------------------------------------------------------------------
# State deltas
# --------------------------------------------------------------------------------------------------------

def created(before: dict | None, after: dict | None, require: Callable[[dict], bool] | None = None) -> int:
    """1 when the resource appeared (or was replaced by a new incarnation) between the two states."""
    if after is None:
        return 0
    if require is not None and not require(after):
        return 0
    if before is None:
        return 1
    u = after.get("uuid")
    return 1 if (u is not None and u != before.get("uuid")) else 0


def created_marked(before: dict | None, after: dict | None, value: str) -> int:
    """`created`, counting only a resource that carries the kit's mark ``value``."""
    return created(before, after, lambda s: s["properties"].get(MARK) == value)


def removed(before: dict | None, after: dict | None) -> int:
    """1 when the resource is gone, or still listed but can no longer be loaded (its files were deleted)."""
    return 1 if (before is not None and "damaged" not in before and (after is None or "damaged" in after)) else 0


def marked(state: dict | None, value: str) -> bool:
    """The resource (a case observer's state, None when absent) carries the kit's mark ``value``."""
    return (state or {}).get("properties", {}).get(MARK) == value


def prop_set(before: dict | None, after: dict | None, key: str, value: str) -> int:
    if after is None or after.get("properties", {}).get(key) != value:
        return 0
    if before is not None and before.get("properties", {}).get(key) == value:
        return 0
    return 1


def commits(before: dict | None, after: dict | None, key: str, value: str, log: str = "metadata_log") -> int:
    """Commits visible between two states of one table (``log`` "metadata_log") or view ("versions"): the growth
    of that log, at least the property change."""
    seen = prop_set(before, after, key, value)
    if before is not None and after is not None and before.get("uuid") == after.get("uuid"):
        seen = max(seen, after.get(log, 0) - before.get(log, 0))
    return seen


def table_commits(before: dict | None, after: dict | None, key: str, value: str) -> int:
    """Commits visible between two table states: metadata-log growth, at least the property change."""
    return commits(before, after, key, value)


def body_identity(ex: Exchange) -> Any:
    """Identity fields of a response: what must be equal for two bodies to count as equivalent."""
    body = ex.json()
    if ex.status is None:
        return ("no response", ex.error and ex.error.split(":", 1)[0])
    if not isinstance(body, dict):
        return (ex.status, None)
    if "error" in body and isinstance(body["error"], dict):
        e = body["error"]
        return (ex.status, "error", e.get("type"), e.get("code"))
    md = body.get("metadata") if isinstance(body.get("metadata"), dict) else None
    if md is not None:
        if "table-uuid" in md:
            return (ex.status, "table", md.get("table-uuid"))
        if "view-uuid" in md:
            return (ex.status, "view", md.get("view-uuid"))
    if "plan-id" in body:
        return (ex.status, "plan", body.get("status"), body.get("plan-id"))
    if "file-scan-tasks" in body or "plan-tasks" in body:
        listed = body.get("file-scan-tasks")
        tasks = listed if isinstance(listed, list) else []
        files = sorted(str((t.get("data-file") or {}).get("file-path")) for t in tasks if isinstance(t, dict))
        return (ex.status, "scan-tasks", body.get("status"), tuple(files),
                tuple(map(str, body.get("plan-tasks") or ())))
    if "namespace" in body:
        return (ex.status, "namespace", tuple(body.get("namespace") or ()))
    if "updated" in body or "removed" in body:
        return (ex.status, "properties", tuple(sorted(body.get("updated") or [])),
                tuple(sorted(body.get("removed") or [])), tuple(sorted(body.get("missing") or [])))
    return (ex.status, "body", tuple(sorted(body)))
