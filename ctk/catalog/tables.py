"""Cases of the table mutations: createTable, registerTable, updateTable, dropTable, unregisterTable,
renameTable (and the rename case views share)."""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple

from ctk.catalog import readback
from ctk.catalog.bodies import create_table_body, ident, set_properties_commit
from ctk.catalog.cases import Case, CaseContext, Conflict, Endpoint, Req, case
from ctk.catalog.facade import Catalog
from ctk.catalog.state import MARK, commits, created, created_marked, marked, prop_set, removed
from ctk.client.errors import PrerequisiteError
from ctk.client.transport import ns_path, table_path
from ctk.core.exchange import Exchange

LOADED = ("createTable", "loadTable")     # what every case on an existing table needs besides its own operation


class Ops(NamedTuple):
    """Setup and observation of one kind of resource in one namespace, for the cases shared by tables and
    views: ``make(name, properties=None)``, ``drop(name, label)``, ``state(name)`` (a case observer's state,
    None when absent) and ``commit(name, updates, label)`` (a commit that sets properties)."""
    make: Callable[..., object]
    drop: Callable[[str, str], object]
    state: Callable[[str], dict | None]
    commit: Callable[[str, dict, str], object]


def reading_back(kind: str, ns: tuple[str, ...], ops: Ops) -> Ops:
    """``ops`` whose make, drop and commit read their effect back (`ctk.catalog.readback`): a step acknowledged
    without its effect is `EffectMissing`, naming the plain operation it shows broken."""
    where = ".".join(ns)

    def commit(n: str, updates: dict, label: str) -> object:
        key, value = next(iter(updates.items()))
        return readback.committed(kind, f"{where}.{n}", lambda: ops.commit(n, updates, label),
                                  lambda: ops.state(n), key, value)

    # made: it loads, with the uuid its create answered (the cases' observers count executions by uuid)
    return Ops(lambda n, properties=None: readback.made(kind, f"{where}.{n}", lambda: ops.make(n, properties),
                                                        lambda: ops.state(n), same_uuid=True),
               lambda n, label: readback.dropped(kind, f"{where}.{n}", lambda: ops.drop(n, label),
                                                 lambda: ops.state(n)),
               ops.state, commit)


def table_ops(cat: Catalog, ns: tuple[str, ...], purge: bool) -> Ops:
    return reading_back("table", ns, Ops(lambda n, properties=None: cat.create_table(ns, n, properties),
                                         lambda n, label: cat.drop_table(ns, n, purge=purge, label=label),
                                         lambda n: cat.table_state(ns, n),
                                         lambda n, updates, label: cat.commit_table(ns, n, updates, label)))


def creation_case(ep: Endpoint, kind: str, ns: tuple[str, ...], names: tuple[str, str], path: str,
                  body: Callable[[str, str], dict], ops: Ops, marks: tuple[str, str] = ("alternative", "conflicting"),
                  why: str = "", notes: dict | None = None) -> Case:
    """createTable / createView / registerTable / registerView: ``names`` = (the resource the request creates,
    an existing one the conflicting request names); ``body(name, role)`` the payload for the role "first",
    "alternative" or "conflicting"; ``marks`` the kit's mark that the resource an alternative and a conflicting
    request create carries. ``ops.drop`` keeps what a re-execution needs (a registered metadata file)."""
    name, existing = names
    key = kind[0]
    alt_mark, conflict_mark = marks
    ops.make(existing)
    return Case(
        ep, f"{kind} {'.'.join(ns)}.{name}",
        Req("POST", path, body(name, "first")),
        observe=lambda: {key: ops.state(name), "existing": ops.state(existing)},
        executions=lambda b, a: created(b[key], a[key]),
        interfere=lambda: ops.drop(name, "interfere"),
        alternative=Req("POST", path, body(name, "alternative")),
        alt_executions=lambda b, a: created_marked(b[key], a[key], alt_mark),
        conflicting=Conflict(
            Req("POST", path, body(existing, "conflicting")), (409,),
            clear=lambda: ops.drop(existing, "clear conflict"),
            executed=lambda: marked(ops.state(existing), conflict_mark),
            why=why or f"the {kind} already exists"),
        notes=notes if notes is not None else {},
    )


class KeptMetadata:
    """Copies of the metadata files a registration case registers, kept through the kit's own storage (the
    client's storage settings: pyiceberg's FileIO behind the loopback guard). The spec does not promise that a
    dropped table's or view's metadata file stays (Iceberg's own catalogs delete a dropped view's, and a table's
    directory with it), so after every drop the case writes back what it will register again, byte for byte.
    Where the kit cannot read the storage (``problem`` says why) nothing is kept and nothing restored."""

    def __init__(self, client: Any, loaded: list[dict]):
        self.kept: list[tuple[Any, str, bytes]] = []      # (FileIO, location, content)
        self.restored: list[str] = []
        self.problem: str | None = None
        try:
            for result in loaded:
                loc = result["metadata-location"]
                io = client.storage_settings(result).file_io(loc, "metadata files")
                with io.new_input(loc).open() as f:
                    self.kept.append((io, loc, f.read()))
        except Exception as exc:  # noqa: BLE001 - storage out of the kit's reach: the catalog's files only
            self.kept, self.problem = [], f"{type(exc).__name__}: {exc}"

    def restore(self) -> None:
        """Write back each kept file the catalog deleted (a failure to: PrerequisiteError)."""
        for io, loc, content in self.kept:
            try:
                if io.new_input(loc).exists():
                    continue
                with io.new_output(loc).create(overwrite=True) as f:
                    f.write(content)
            except Exception as exc:  # noqa: BLE001
                raise PrerequisiteError(f"setup: the catalog deleted the metadata file {loc} on drop and the kit "
                                        f"could not write its copy back: {type(exc).__name__}: {exc}") from None
            self.restored.append(loc)


def registration_case(ctx: CaseContext, ep: Endpoint, kind: str, path: str, source_stem: str,
                      make_source: Callable[[str, int], dict], ops: Ops, note_location: bool = False) -> Case:
    """registerTable / registerView: ``make_source(name, i)`` makes source ``i`` (1, 2) marked "source-{i}" and
    answers its load result; the first one's metadata location is registered and the second one's is the
    alternative. Both sources are dropped, so the registered files are no live object's; the kit keeps a copy
    of each (`KeptMetadata`) and writes it back after every drop of the case, for catalogs that delete a dropped
    object's metadata."""
    ns = tuple(ctx.namespace)
    sources = (ctx.unique(source_stem), ctx.unique(source_stem))
    names = (ctx.unique(kind[0]), ctx.unique(kind[0] + "x"))
    loaded = [make_source(src, i) for i, src in enumerate(sources, 1)]
    loc1, loc2 = (r.get("metadata-location") for r in loaded)
    if not loc1 or not loc2:
        raise PrerequisiteError(f"create{kind.title()} answered no metadata-location to register")
    kept = KeptMetadata(ctx.client, loaded)
    for src in sources:
        ops.drop(src, "setup")
    kept.restore()
    drop = ops.drop

    def drop_keeping(n: str, label: str) -> object:
        out = drop(n, label)
        kept.restore()
        return out

    ops = ops._replace(drop=drop_keeping)
    notes: dict | None = {"metadata-location": loc1} if note_location else None
    if kept.problem:
        notes = {**(notes or {}), "metadata copies": f"not kept ({kept.problem})"}

    def body(n: str, role: str) -> dict:
        return {"name": n, "metadata-location": loc2 if role == "alternative" else loc1}

    return creation_case(ep, kind, ns, names, path, body, ops, marks=("source-2", "source-1"),
                         why=f"a {kind} with that name already exists", notes=notes)


@case("createTable", success=(200,), requires=("loadTable", "dropTable"))
def create_table(ctx: CaseContext, ep: Endpoint) -> Case:
    ns = tuple(ctx.namespace)
    return creation_case(ep, "table", ns, (ctx.unique("t"), ctx.unique("tx")), f"namespaces/{ns_path(ns)}/tables",
                         lambda n, role: create_table_body(n, {MARK: role}),
                         table_ops(Catalog(ctx.client), ns, purge=True))


@case("registerTable", success=(200,), requires=LOADED + ("dropTable",))
def register_table(ctx: CaseContext, ep: Endpoint) -> Case:
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    return registration_case(ctx, ep, "table", f"namespaces/{ns_path(ns)}/register", "src",
                             lambda n, i: cat.create_table(ns, n, {MARK: f"source-{i}"}),
                             table_ops(cat, ns, purge=False), note_location=True)


def commit_case(ctx: CaseContext, ep: Endpoint, kind: str, request: Callable[[str, str], Req], ops: Ops,
                log: str) -> Case:
    """updateTable / replaceView of a resource made with the mark "initial" (the conflicting request names one
    that does not exist): ``request(name, role)`` for the role "first", "alternative" or "conflicting" commits
    without requirements, so a re-execution applies again and grows ``log`` ("metadata_log" / "versions")."""
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique(kind[0]), ctx.unique(kind[0] + "m")
    ops.make(name, {MARK: "initial"})
    key = kind[0]
    return Case(
        ep, f"{kind} {'.'.join(ns)}.{name}",
        request(name, "first"),
        observe=lambda: {key: ops.state(name)},
        executions=lambda b, a: commits(b[key], a[key], MARK, "first", log=log),
        interfere=lambda: ops.commit(name, {MARK: "interfered"}, "interfere"),
        alternative=request(name, "alternative"),
        alt_executions=lambda b, a: prop_set(b[key], a[key], MARK, "alternative"),
        conflicting=Conflict(
            request(missing, "conflicting"), (404,),
            clear=lambda: ops.make(missing),
            executed=lambda: marked(ops.state(missing), "conflicting"),
            why=f"the {kind} does not exist"),
    )


@case("updateTable", success=(200,), requires=LOADED)
def update_table(ctx: CaseContext, ep: Endpoint) -> Case:
    ns = tuple(ctx.namespace)

    def request(n: str, role: str) -> Req:
        return Req("POST", table_path(ns, n), set_properties_commit(ns, n, {MARK: role}))

    return commit_case(ctx, ep, "table", request, table_ops(Catalog(ctx.client), ns, purge=True), log="metadata_log")


def drop_like_table(ctx: CaseContext, ep: Endpoint, suffix: str, method: str, params: dict | None = None) -> Case:
    ops = table_ops(Catalog(ctx.client), tuple(ctx.namespace), purge=True)
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    name, missing = ctx.unique("t"), ctx.unique("tm")
    ops.make(name)

    def req(n):
        return Req(method, table_path(ns, n) + suffix, params=params)

    return Case(
        ep, f"table {'.'.join(ns)}.{name}",
        req(name),
        observe=lambda: {"t": cat.table_state(ns, name, damaged_ok=True)},
        executions=lambda b, a: removed(b["t"], a["t"]),
        # a table with the same name again: a re-execution would remove the new one, or (a purge run again)
        # delete its files, so that it is listed but cannot be loaded
        interfere=lambda: ops.make(name),
        conflicting=Conflict(
            req(missing), (404,),
            clear=lambda: ops.make(missing),
            executed=lambda: cat.table_state(ns, missing) is None,
            why="the table does not exist"),
    )


@case("dropTable", success=(204, 200), requires=LOADED, has_payload=False)
def drop_table(ctx: CaseContext, ep: Endpoint) -> Case:
    # with purge: the drop whose side effects reach beyond the catalog's database, the harder one to replay
    return drop_like_table(ctx, ep, "", "DELETE", {"purgeRequested": "true"})


@case("unregisterTable", success=(200, 204), requires=LOADED, has_payload=False)
def unregister_table(ctx: CaseContext, ep: Endpoint) -> Case:
    return drop_like_table(ctx, ep, "/unregister", "POST")


def rename_case(ctx: CaseContext, ep: Endpoint, kind: str) -> Case:
    """renameTable / renameView (``kind`` "table" / "view")."""
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    src, dst, dst2, csrc, cdst = (ctx.unique(s) for s in ("src", "dst", "dsta", "csrc", "cdst"))
    if kind == "table":
        make, state, path = (lambda n: cat.create_table(ns, n)), (lambda n: cat.table_state(ns, n)), "tables/rename"
    else:
        make, state, path = (lambda n: cat.create_view(ns, n)), (lambda n: cat.view_state(ns, n)), "views/rename"
    for n in (src, csrc, cdst):
        readback.made(kind, f"{'.'.join(ns)}.{n}", partial(make, n), partial(state, n))

    def body(s, d):
        return {"source": ident(ns, s), "destination": ident(ns, d)}

    def send_back() -> Exchange:
        ex = ctx.client.request("POST", path, json=body(dst, src), label="interfere: rename back")
        if ex.status not in (200, 204):
            raise PrerequisiteError(f"interfere: rename back answered {ex.status or ex.error}", ex)
        return ex

    def rename_back():
        readback.renamed_back(kind, f"{'.'.join(ns)}.{src}", send_back, lambda: state(src))

    def clear():
        readback.dropped(kind, f"{'.'.join(ns)}.{cdst}",
                         lambda: (cat.drop_table(ns, cdst, purge=True, label="clear conflict") if kind == "table"
                                  else cat.drop_view(ns, cdst, label="clear conflict")),
                         lambda: state(cdst))

    def moved(b, a, d):
        return 1 if (b[d] is None and a[d] is not None and a["src"] is None) else 0

    return Case(
        ep, f"{kind} {'.'.join(ns)}.{src}",
        Req("POST", path, body(src, dst)),
        observe=lambda: {"src": state(src), "dst": state(dst), "dst2": state(dst2)},
        executions=lambda b, a: moved(b, a, "dst"),
        interfere=rename_back,
        alternative=Req("POST", path, body(src, dst2)),
        alt_executions=lambda b, a: moved(b, a, "dst2"),
        conflicting=Conflict(
            Req("POST", path, body(csrc, cdst)), (409,), clear=clear,
            executed=lambda: state(csrc) is None and state(cdst) is not None,
            why=f"the destination {kind} already exists"),
    )


@case("renameTable", success=(204, 200), requires=LOADED + ("dropTable",))
def rename_table(ctx: CaseContext, ep: Endpoint) -> Case:
    return rename_case(ctx, ep, "table")
