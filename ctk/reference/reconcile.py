"""Crash recovery: is the change of a mutation, whose idempotency record a crash left IN_PROGRESS, in the state?

`reconcile(conn, mutation, reserved_at)` returns the OpResult to answer with when the change is visible
(the pipeline then finalizes the record with it), None when it is provably absent (the pipeline executes
the mutation), and raises `Unknown` when neither can be shown (the pipeline answers 500 and keeps the record,
so nothing is ever executed twice on a guess).

Used only when the route did not give its own `Mutation.reconcile`. Evidence per operation:
- createNamespace / createTable / createView / registerTable / registerView: the resource exists, and (for
  tables and views) its metadata file was written after the reservation (or is the registered file);
- dropNamespace / dropTable / unregisterTable / dropView: the resource is absent;
- renameTable / renameView: destination present and source absent;
- updateProperties: the namespace properties reflect the updates and removals;
- updateTable / commitTransaction: a metadata file written since the reservation (the current one or one
  in the metadata-log, judged by the file's modification time: last-updated-ms may be a client's snapshot
  time) shows the request's updates (added snapshot ids, refs, properties, schema/spec ids);
  none of them does and the log covers the whole window -> absent;
- replaceView: the current view metadata was written since the reservation and carries the added version.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

from sqlalchemy.engine import Connection

from ctk.reference.operations import Mutation, OpResult

CLOCK_MARGIN = 0.05   # seconds: file modification times use a coarser clock than time.time()


class Unknown(Exception):
    """Neither the presence nor the absence of the change can be shown."""


def _store():
    from ctk.reference import store  # the catalog core (imported lazily: reconcile is optional)
    return store


def _dump(model) -> dict:
    return _store().json_of(model)     # format version 3 included


def _ident(doc: Any) -> tuple[list[str], str]:
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise Unknown("request carries no identifier")
    return list(doc.get("namespace") or []), doc["name"]


def _ns_of(resource: str) -> list[str]:
    return _store().resource_levels(resource.split("/", 1)[0])


def _mtime(location: str) -> float | None:
    try:
        return os.stat(_store().local_path(location)).st_mtime
    except (OSError, ValueError):
        return None


def _written_since(location: str, since: float) -> bool:
    m = _mtime(location)
    if m is None:
        raise Unknown(f"cannot stat {location}")
    return m >= since - CLOCK_MARGIN


def _table_body(loaded) -> dict:
    return {"metadata-location": loaded.metadata_location, "metadata": _dump(loaded.metadata)}


def reconcile(conn: Connection, mutation: Mutation, reserved_at: float | None) -> OpResult | None:
    st = _store()
    since = 0.0 if reserved_at is None else reserved_at
    try:
        body = json.loads(mutation.body) if mutation.body and mutation.body.strip() else {}
    except ValueError:
        return None                      # a request that cannot parse changed nothing: run it (-> 400)
    op, res = mutation.operation, mutation.resource
    if not isinstance(body, dict):
        return None

    if op == "createNamespace":
        ns = body.get("namespace") or []
        props = st.namespace_properties(conn, ns)
        if props is None:
            return None
        want = body.get("properties") or {}
        if all(props.get(k) == v for k, v in want.items()):
            return OpResult(200, {"namespace": ns, "properties": props})
        raise Unknown("namespace exists with other properties")
    if op == "dropNamespace":
        return OpResult(204) if not st.namespace_exists(conn, st.resource_levels(res)) else None
    if op == "updateProperties":
        ns = _ns_of(res)
        props = st.namespace_properties(conn, ns)
        if props is None:
            return None
        updates, removals = body.get("updates") or {}, body.get("removals") or []
        if all(props.get(k) == v for k, v in updates.items()) and not any(k in props for k in removals):
            return OpResult(200, {"updated": sorted(updates), "removed": list(removals), "missing": []})
        return None
    if op in ("createTable", "createView", "registerTable", "registerView"):
        kind_view = op.endswith("View")
        ns, name = _ns_of(res), body.get("name")
        if not isinstance(name, str):
            return None
        loaded = (st.load_view if kind_view else st.load_table)(conn, ns, name)
        if loaded is None:
            return None
        if op.startswith("register"):
            if loaded.metadata_location == body.get("metadata-location"):
                return OpResult(200, _table_body(loaded))
            return None                  # another table of that name: executing answers 409
        if _written_since(loaded.metadata_location, since):
            return OpResult(200, _table_body(loaded))
        return None                      # existed before the reservation: executing answers 409
    if op == "unregisterTable":
        ns, name = _ns_of(res), st.resource_unquote(res.rsplit("/", 1)[-1])
        if st.table_pointer(conn, ns, name) is not None:
            return None
        location = st.last_unregistered(conn, ns, name, since - CLOCK_MARGIN)
        if location is None:
            return None                  # not unregistered by the earlier attempt: executing answers 404
        return OpResult(200, _table_body(st.Loaded(location, st.read_table_metadata(location))))
    if op in ("dropTable", "dropView"):
        ns, name = _ns_of(res), st.resource_unquote(res.rsplit("/", 1)[-1])
        pointer = st.view_pointer if op == "dropView" else st.table_pointer
        return OpResult(204) if pointer(conn, ns, name) is None else None
    if op in ("renameTable", "renameView"):
        (sns, src), (dns, dst) = _ident(body.get("source")), _ident(body.get("destination"))
        pointer = st.table_pointer if op == "renameTable" else st.view_pointer
        if pointer(conn, sns, src) is None and pointer(conn, dns, dst) is not None:
            return OpResult(204)
        return None
    if op == "updateTable":
        ns, name = _ns_of(res), st.resource_unquote(res.rsplit("/", 1)[-1])
        loaded = st.load_table(conn, ns, name)
        if loaded is None:
            return None
        return OpResult(200, _table_body(loaded)) if _table_change_applied(loaded, body, since) else None
    if op == "commitTransaction":
        verdicts = []
        for change in body.get("table-changes") or []:
            ns, name = _ident(change.get("identifier"))
            loaded = st.load_table(conn, ns, name)
            verdicts.append(loaded is not None and _table_change_applied(loaded, change, since))
        if verdicts and all(verdicts):
            return OpResult(204)
        if not any(verdicts):
            return None
        raise Unknown("only some table changes of the transaction are visible")
    if op == "replaceView":
        ns, name = _ns_of(res), st.resource_unquote(res.rsplit("/", 1)[-1])
        loaded = st.load_view(conn, ns, name)
        if loaded is None:
            return None
        if not _written_since(loaded.metadata_location, since):
            return None
        doc = _dump(loaded.metadata)
        added = [u.get("view-version") for u in body.get("updates") or [] if u.get("action") == "add-view-version"]
        current = next((v for v in doc.get("versions", []) if v.get("version-id") == doc.get("current-version-id")),
                       None)
        if added and current and all(a and a.get("representations") == current.get("representations")
                                     for a in added):
            return OpResult(200, _table_body(loaded))
        raise Unknown("the view changed since the reservation but does not show the request's version")
    raise Unknown(f"no reconciliation rule for {op}")


def _checks(updates: list[dict]) -> list[Callable[..., bool]]:
    """Predicates over a table metadata document, one per checkable update."""
    checks: list[Callable[..., bool]] = []    # each takes the metadata (its other arguments are bound defaults)
    for u in updates:
        action = u.get("action")
        if action == "add-snapshot" and isinstance(u.get("snapshot"), dict):
            sid = u["snapshot"].get("snapshot-id")
            checks.append(lambda d, sid=sid: any(s.get("snapshot-id") == sid for s in d.get("snapshots", [])))
        elif action == "set-snapshot-ref" and u.get("snapshot-id") is not None:
            ref, sid = u.get("ref-name"), u.get("snapshot-id")
            checks.append(lambda d, ref=ref, sid=sid: (d.get("refs", {}).get(ref) or {}).get("snapshot-id") == sid
                          or (ref == "main" and d.get("current-snapshot-id") == sid))
        elif action == "set-properties":
            ups = u.get("updates") or {}
            checks.append(lambda d, ups=ups: all(d.get("properties", {}).get(k) == v for k, v in ups.items()))
        elif action == "remove-properties":
            rem = u.get("removals") or []
            checks.append(lambda d, rem=rem: not any(k in d.get("properties", {}) for k in rem))
        elif action == "add-schema" and isinstance(u.get("schema"), dict):
            fields = u["schema"].get("fields")
            checks.append(lambda d, f=fields: any(s.get("fields") == f for s in d.get("schemas", [])))
        elif action == "set-location" and u.get("location"):
            loc = u["location"]
            checks.append(lambda d, loc=loc: d.get("location") == loc)
    return checks


def _table_change_applied(loaded, change: dict, since: float) -> bool:
    """True if a metadata file written since `since` shows every checkable update; False if provably not."""
    st = _store()
    checks = _checks(change.get("updates") or [])
    current = _dump(loaded.metadata)
    candidates = []
    if _written_since(loaded.metadata_location, since):
        candidates.append(current)
    else:
        return False                     # the table has not changed since the reservation
    covered = False
    for entry in reversed(current.get("metadata-log") or []):
        location = entry.get("metadata-file")
        if not location:
            continue
        if not _written_since(location, since):
            covered = True               # older files predate the reservation
            break
        try:
            candidates.append(_dump(st.read_table_metadata(location)))
        except Exception:
            raise Unknown(f"cannot read {location}") from None
    else:
        covered = len(current.get("metadata-log") or []) < int(
            current.get("properties", {}).get("write.metadata.previous-versions-max", 100))
    if not checks:
        raise Unknown("the table changed since the reservation and the request has no checkable update")
    if any(all(c(doc) for c in checks) for doc in candidates):
        return True
    if covered:
        return False
    raise Unknown("the metadata-log does not cover the window since the reservation")
