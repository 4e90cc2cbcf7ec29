"""Probes of what a catalog supports where ``/v1/config`` does not say (``ctk.catalog.capabilities``).

Each probe runs once per process, in a namespace of its own under the run namespace (removed with it), and
answers a `Known` with the observation it rests on. A probe that cannot tell (a setup step failed, a 5xx)
answers ``supported=None``: the checks that need the capability are then inconclusive, never passed.
"""

from __future__ import annotations

from typing import Callable

from ctk.catalog.bodies import create_table_body
from ctk.catalog.capabilities import Capability, Known
from ctk.catalog.facade import drop_as_named, drop_named, leftover_lines, probe_nesting
from ctk.client.transport import ns_path, table_path
from ctk.checks.common import describe
from ctk.checks.context import CheckContext


def _probe_namespace(ctx: CheckContext, stem: str, properties: dict[str, str] | None = None
                     ) -> tuple[tuple[str, ...] | None, str]:
    placement = getattr(ctx.client, "placement", None)
    name = ctx.unique(stem)
    ns = placement.child(name) if placement is not None else tuple(ctx.namespace) + (name,)
    ex = ctx.client.request("POST", "namespaces", json={"namespace": list(ns), "properties": dict(properties or {})},
                            label="probe: create a namespace")
    if ex.status not in (200, 201, 204):
        return None, f"creating a probe namespace answered {describe(ex)}"
    return ns, ""


def _leave_nothing(ctx: CheckContext, who: str, tables: tuple[tuple[str, ...], list[str]] | None = None,
                   namespace: tuple[str, ...] | None = None) -> None:
    """Remove at once what a probe made (its tables by name, a namespace however the catalog named it), reading
    each back; what stays is noted on the run's placement, named exactly, for the run's cleanup problems."""
    where, names = tables if tables is not None else ((), [])
    problems = [p for name in names
                if (p := drop_named(ctx.client, "table", where, name, label=f"probe: {who}")) is not None]
    if namespace is not None:
        problems += drop_as_named(ctx.client, namespace)[1]
    _say_left(ctx, leftover_lines(problems, who))


def _say_left(ctx: CheckContext, leftovers: list[str]) -> None:
    """Note what a probe left on the run's placement (the run's cleanup problems say it at the end)."""
    placement = getattr(ctx.client, "placement", None)
    if placement is not None:
        for left in leftovers:
            placement.leave(left)


def _plain_create_broken(ctx: CheckContext, ns: tuple[str, ...], made: list[str]) -> str | None:
    """Why createTable of a plain name fails too (so a refusal the probe saw says nothing of the capability),
    None when it works; what it made is added to ``made`` for the probe to remove."""
    ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables", json=create_table_body("plain"),
                            label="probe: create a table with a plain name (is createTable itself working?)")
    if ex.status is not None and 200 <= ex.status < 300:
        made.append("plain")
        return None
    return f"createTable of a plain name answered {describe(ex)} too: createTable itself is broken"


def namespace_properties(ctx: CheckContext) -> Known:
    ns, why = _probe_namespace(ctx, "probe_props", {"ctk.probe": "kept"})
    if ns is None:
        return Known(None, "probe", why)
    got = ctx.client.request("GET", f"namespaces/{ns_path(ns)}", label="probe: load namespace properties")
    body = got.json() if got.status == 200 else None
    if not isinstance(body, dict):
        return Known(None, "probe", f"loading the probe namespace answered {describe(got)}")
    kept = (body.get("properties") or {}).get("ctk.probe") == "kept"
    return Known(kept, "probe", "a property given at createNamespace was " + ("loaded back" if kept else
                                                                               "not loaded back"))


def nested_namespaces(ctx: CheckContext) -> Known:
    placement = getattr(ctx.client, "placement", None)
    if placement is not None and placement.nested is not None:
        return Known(bool(placement.nested), "probe", placement.nesting_note or "the session's nesting probe")
    ns, why = _probe_namespace(ctx, "probe_nest")       # no session probe (a context of its own): probe here
    if ns is None:
        return Known(None, "probe", why)
    probe = probe_nesting(ctx.client, ns, "child")        # the session's probe, one level below the probe namespace
    _say_left(ctx, probe.leftovers)
    refused = probe.created not in (200, 201, 204, 409)
    if refused or probe.loaded is None or probe.loaded >= 500:
        # a 4xx refusal is the answer (no nesting); a 5xx or no answer, on the create or the load, tells nothing
        status = probe.created if refused else probe.loaded
        return Known(False if status is not None and 400 <= status < 500 else None, "probe", probe.note)
    if probe.loaded == 200 and not probe.nested:
        return Known(False, "probe", f"{probe.note}: one level, not nested")
    return Known(probe.nested, "probe", probe.note)


def names_with_dot_or_slash(ctx: CheckContext) -> Known:
    ns, why = _probe_namespace(ctx, "probe_names")
    if ns is None:
        return Known(None, "probe", why)
    seen: list[str] = []
    made: list[str] = []           # dropped again at once, by name, read back (what stays is reported)
    try:
        for name in ("ctk.dot", "ctk/slash"):
            ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables", json=create_table_body(name),
                                    label=f"probe: create table {name!r}")
            if ex.status is not None and 200 <= ex.status < 300:
                made.append(name)
            if ex.status != 200:
                broken = _plain_create_broken(ctx, ns, made)
                if broken:          # undecided, naming the broken operation: no capability is learnt from it
                    return Known(None, "probe", f"creating a table named {name!r} answered {describe(ex)}; {broken}")
                return Known(False, "probe", f"creating a table named {name!r} answered {describe(ex)}")
            got = ctx.client.request("GET", table_path(ns, name), label=f"probe: load table {name!r}")
            if got.status != 200:
                return Known(False, "probe", f"a table named {name!r} was created but loading it answered "
                                             f"{describe(got)}")
            seen.append(name)
    finally:
        _leave_nothing(ctx, "the names probe", tables=(ns, made))
    return Known(True, "probe", f"tables named {', '.join(repr(n) for n in seen)} were created and loaded back")


def pagination(ctx: CheckContext) -> Known:
    ns, why = _probe_namespace(ctx, "probe_pages")
    if ns is None:
        return Known(None, "probe", why)
    for i in range(2):
        ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables", json=create_table_body(f"p{i}"),
                                label="probe: create a table to list")
        if ex.status != 200:
            return Known(None, "probe", f"creating a table to list answered {describe(ex)}")
    got = ctx.client.request("GET", f"namespaces/{ns_path(ns)}/tables", params={"pageSize": 1},
                             label="probe: list tables, pageSize 1")
    body = got.json() if got.status == 200 else None
    if not isinstance(body, dict):
        return Known(None, "probe", f"listing tables with pageSize 1 answered {describe(got)}")
    items = body.get("identifiers") or []
    if body.get("next-page-token"):
        return Known(True, "probe", f"listing 2 tables with pageSize 1 answered {len(items)} and a next-page-token")
    return Known(False, "probe", f"listing 2 tables with pageSize 1 answered {len(items)} and no next-page-token "
                                 "(the catalog does not page)")


def format_v3(ctx: CheckContext) -> Known:
    ns, why = _probe_namespace(ctx, "probe_v3")
    if ns is None:
        return Known(None, "probe", why)
    ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables",
                            json=create_table_body("v3", {"format-version": "3"}), label="probe: create a v3 table")
    body = ex.json() if ex.status == 200 else None
    if not isinstance(body, dict):
        if ex.status is not None and 400 <= ex.status < 500:
            made: list[str] = []
            broken = _plain_create_broken(ctx, ns, made)
            _leave_nothing(ctx, "the format-version 3 probe", tables=(ns, made))
            if broken:
                return Known(None, "probe", f"creating a format-version 3 table answered {describe(ex)}; {broken}")
            return Known(False, "probe", f"creating a format-version 3 table answered {describe(ex)}")
        return Known(None, "probe", f"creating a format-version 3 table answered {describe(ex)}")
    version = (body.get("metadata") or {}).get("format-version")
    return Known(version == 3, "probe", f"a table created with format-version 3 has format-version {version}")


def storage(ctx: CheckContext) -> Known:
    from ctk.client.storage import StorageGuardError

    ns, why = _probe_namespace(ctx, "probe_storage")
    if ns is None:
        return Known(None, "probe", why)
    ex = ctx.client.request("POST", f"namespaces/{ns_path(ns)}/tables", json=create_table_body("files"),
                            label="probe: create a table to reach its files")
    if ex.status != 200:
        return Known(None, "probe", f"creating a table answered {describe(ex)}")
    # the loaded table, not the create answer: what the catalog keeps is what the checks read (a create answer
    # with "" as its metadata-location opened the working directory)
    got = ctx.client.request("GET", table_path(ns, "files"), label="probe: load the table to reach its files")
    body = got.json() if got.status == 200 else None
    if not isinstance(body, dict):
        return Known(None, "probe", f"loading the table it created answered {describe(got)}")
    location = (body.get("metadata") or {}).get("location") or ""
    meta = body.get("metadata-location")
    if not isinstance(meta, str) or not meta.strip():
        return Known(None, "probe", f"the loaded table names no metadata-location ({meta!r}): no file to reach")
    try:
        io = ctx.client.storage_settings(body).file_io(location or meta)
        with io.new_input(meta).open() as f:
            f.read(1)
    except StorageGuardError as exc:
        return Known(False, "probe", f"the table files are out of the kit's reach: {exc}")
    except Exception as exc:  # noqa: BLE001 - any storage error: the kit cannot read the files
        return Known(False, "probe", f"reading the table's metadata file failed: {type(exc).__name__}: {exc}")
    return Known(True, "probe", "the kit read the metadata file of a table it created")


def views(ctx: CheckContext) -> Known:
    """From /v1/config: the view endpoints advertised (no endpoints list: the spec's default set, without views)."""
    d = ctx.discovery
    if d is None:
        return Known(None, "config", "/v1/config was not read")
    ok = d.supports("POST", "namespaces/{namespace}/views") and d.supports("GET", "namespaces/{namespace}/views/{view}")
    where = "the endpoints list of /v1/config" if d.endpoints is not None else \
        "the spec's default endpoint set (/v1/config lists no endpoints)"
    return Known(ok, "config", f"createView and loadView are {'' if ok else 'not '}in {where}")


PROBES: dict[Capability, Callable[[CheckContext], Known]] = {
    Capability.VIEWS: views,
    Capability.NAMESPACE_PROPERTIES: namespace_properties,
    Capability.NESTED_NAMESPACES: nested_namespaces,
    Capability.NAMES_WITH_DOT_OR_SLASH: names_with_dot_or_slash,
    Capability.PAGINATION: pagination,
    Capability.FORMAT_V3: format_v3,
    Capability.STORAGE: storage,
}
