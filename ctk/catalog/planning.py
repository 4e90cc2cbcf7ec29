"""Cases of the scan-planning mutations: planTableScan, cancelPlanning, fetchScanTasks; the plans of a table as
far as the kit can see them (`Plans`), and the setup that plans a scan (`plan_scan`) and writes a data file
(`append_file`). How plans are observed is told in the docstring of ``ctk.catalog.cases``."""

from __future__ import annotations

import time
from typing import Callable
from urllib.parse import quote

from ctk.catalog import readback
from ctk.catalog.bodies import ident
from ctk.catalog.cases import Case, CaseContext, Conflict, Endpoint, Req, case, get_endpoint
from ctk.catalog.facade import Catalog
from ctk.catalog.state import load_result
from ctk.catalog.tables import Ops, table_ops
from ctk.client.errors import PrerequisiteError
from ctk.client.transport import CatalogClient, table_path
from ctk.core.exchange import Exchange


class Plans:
    """The plans of one table, as far as the kit can see them (see the docstring of ``ctk.catalog.cases``)."""

    def __init__(self, client: CatalogClient, ns: tuple[str, ...], name: str, listed: bool | None = None):
        self.client, self.ns, self.name = client, ns, name
        self.path = table_path(ns, name) + "/plan"
        self.mark = len(client.exchanges)
        self.listed = self._listing() is not None if listed is None else listed
        self.learned: list[str] = []       # plan-ids from answers the interposer read for the kit

    def learn(self, ex: Exchange) -> None:
        body = ex.json()
        pid = body.get("plan-id") if ex.status == 200 and isinstance(body, dict) else None
        if isinstance(pid, str) and pid not in self.learned:
            self.learned.append(pid)

    def _listing(self) -> dict[str, dict] | None:
        ex = self.client.request("GET", "/_ctk/plans", params={"namespace": "\x1f".join(self.ns), "table": self.name},
                                 label="observe: list plans (reference control API)")
        body = ex.json()
        if ex.status != 200 or not isinstance(body, dict) or not isinstance(body.get("plans"), list):
            return None
        return {p["plan-id"]: p for p in body["plans"] if isinstance(p, dict) and "plan-id" in p}

    def seen(self) -> list[str]:
        """Plan ids in answers to the kit's own planTableScan requests on this table."""
        out: list[str] = []
        sent = self.client.url_path(self.path)       # as the client puts it on the wire (namespace separator)
        for ex in self.client.exchanges[self.mark:]:
            if ex.method == "POST" and ex.status == 200 and ex.url.split("?", 1)[0].endswith(sent):
                body = ex.json()
                pid = body.get("plan-id") if isinstance(body, dict) else None
                if isinstance(pid, str) and pid not in out:
                    out.append(pid)
        return out + [p for p in self.learned if p not in out]

    def status(self, pid: str) -> str | None:
        """fetchPlanningResult's status of a plan, None for 404."""
        ex = self.client.request("GET", f"{self.path}/{quote(pid, safe='')}", label="observe: fetch planning result")
        body = ex.json()
        if ex.status == 404:
            return None
        if ex.status != 200 or not isinstance(body, dict):
            raise PrerequisiteError(f"observe: fetchPlanningResult answered {ex.status or ex.error}", ex)
        return body.get("status")

    def pending(self, pid: str) -> list[str]:
        """The plan tasks of a plan that fetchPlanningResult still lists (not fetched yet)."""
        ex = self.client.request("GET", f"{self.path}/{quote(pid, safe='')}", label="observe: plan tasks not fetched")
        body = ex.json()
        if ex.status != 200 or not isinstance(body, dict):
            raise PrerequisiteError(f"observe: fetchPlanningResult answered {ex.status or ex.error}", ex)
        return list(body.get("plan-tasks") or [])

    def state(self) -> dict[str, str | None]:
        """plan-id -> status of every plan of the table the kit can see (None: the control API's listing gives
        none for it)."""
        if self.listed:
            listing = self._listing()
            if listing is None:
                raise PrerequisiteError("observe: GET /_ctk/plans stopped answering")
            return {pid: p.get("status") for pid, p in listing.items()}
        out: dict[str, str | None] = {}
        for pid in self.seen():
            st = self.status(pid)
            if st is not None:
                out[pid] = st
        return out


class RenamedAway:
    """The terminal 4xx of cancelPlanning and fetchScanTasks: a plan (or plan task) of a table of its own
    (``name``), the table then renamed to ``moved``, so a request on the path of ``name`` answers 404
    NoSuchTableException (the merged spec lists 404 for both operations). ``clear()`` renames it back; a plan-id
    is opaque and names its plan, not a table name, so a catalog keeps it across the rename (the reference binds
    it to the table's name and uuid, and both are back). ``clear()`` then confirms that what the request names is
    still there (``intact()``): a catalog that dropped it on the rename could not succeed on a re-execution, and
    a replay could not be told from one, so that is a prerequisite that failed, not a verdict."""

    def __init__(self, ctx: CaseContext, ns: tuple[str, ...], name: str):
        self.client, self.ns, self.name, self.moved = ctx.client, ns, name, ctx.unique("tmv")

    def rename(self, src: str, dst: str, label: str) -> None:
        ex = self.client.request("POST", "tables/rename", json={"source": ident(self.ns, src),
                                                                 "destination": ident(self.ns, dst)}, label=label)
        if ex.status not in (200, 204):
            raise PrerequisiteError(f"{label}: renameTable answered {ex.status or ex.error}", ex)

    def away(self) -> None:
        readback.renamed("table", f"{'.'.join(self.ns)}.{self.name}",
                         lambda: self.rename(self.name, self.moved,
                                             f"setup: rename table {self.name} away (its plan's requests get 404)"),
                         lambda: load_result(self.client, self.ns, self.moved))

    def clear(self, intact: Callable[[], bool], lost: str) -> None:
        """Rename the table back; PrerequisiteError saying ``lost`` unless ``intact()``."""
        self.rename(self.moved, self.name, f"clear conflict: rename table {self.moved} back to {self.name}")
        if not intact():
            raise PrerequisiteError(f"after table {self.name} was renamed away and back, {lost} on this target: a "
                                    "re-execution could not succeed, so a replay of the stored 404 cannot be told "
                                    "from one")


def rename_missing(ctx: CaseContext) -> str | None:
    """Why the planning operations' terminal 4xx variant cannot be built on this target (it renames a table
    away and back, and the target does not advertise renameTable), or None. Only that variant needs the
    rename: the operations' other checks run without it."""
    discovery = getattr(ctx, "discovery", None)
    rename = get_endpoint("renameTable")
    if discovery is None or discovery.supports(rename.method, rename.template):
        return None
    return (f"its terminal 4xx variant renames a table away and back, and the target does not advertise "
            f"{rename.method} /v1/{{prefix}}/{rename.template}")


def new_plans(before: dict[str, str], after: dict[str, str]) -> int:
    return len(set(after) - set(before))


def plan_scan(cat: Catalog, ns: tuple[str, ...], name: str, body: dict | None = None) -> dict:
    """planTableScan (no key) -> its answer, polled with fetchPlanningResult until it is no longer submitted."""
    path = table_path(ns, name) + "/plan"
    doc = cat.do("POST", path, body if body is not None else {}, ok=(200,),
                  label=f"setup: plan a scan of {name}").json()
    if not isinstance(doc, dict) or not isinstance(doc.get("plan-id"), str):
        raise PrerequisiteError(f"setup: planTableScan of {name} answered no plan-id ({str(doc)[:200]}), so the "
                                "plan cannot be addressed")
    deadline = time.monotonic() + 10
    while doc.get("status") == "submitted" and time.monotonic() < deadline:
        time.sleep(0.05)
        got = cat.do("GET", f"{path}/{quote(doc['plan-id'], safe='')}", ok=(200,),
                      label="setup: fetch planning result").json() or {}
        doc = {**got, "plan-id": doc["plan-id"]}
    return doc


def append_file(client: CatalogClient, ns: tuple[str, ...], name: str, ids: list[int]) -> None:
    """Append one data file (rows of the kit's schema) with pyiceberg, committed over HTTP by the kit."""
    import pyarrow as pa
    from pyiceberg.catalog.noop import NoopCatalog
    from pyiceberg.table import CommitTableRequest, Namespace, Table, TableIdentifier
    from pyiceberg.table.metadata import TableMetadataUtil

    from ctk.client.storage import StorageGuardError, settings_for

    loaded = load_result(client, ns, name)
    if loaded is None:
        raise PrerequisiteError(f"setup: table {name} vanished before its data was written")
    try:
        metadata = TableMetadataUtil.parse_obj(loaded["metadata"])
        io = settings_for(client, loaded, metadata.location).file_io(metadata.location, f"table {name}'s files")
        table = Table((*ns, name), metadata, loaded.get("metadata-location") or "", io, NoopCatalog("ctk-noop"))
        txn = table.transaction()
        txn.append(pa.table({"id": pa.array(ids, pa.int64()), "data": pa.array([f"r{i}" for i in ids])}))
        body = CommitTableRequest(identifier=TableIdentifier(namespace=Namespace(root=list(ns)), name=name),
                                  requirements=txn._requirements, updates=txn._updates).model_dump(mode="json",
                                                                                                   by_alias=True)
    except StorageGuardError:
        raise
    except Exception as exc:  # noqa: BLE001 - storage the kit cannot write to, or a schema it did not expect
        raise PrerequisiteError(f"setup: cannot write a data file to table {name} with pyiceberg: "
                                f"{type(exc).__name__}: {exc}") from None
    added = [u["snapshot"].get("snapshot-id") for u in body.get("updates", [])
             if u.get("action") == "add-snapshot" and isinstance(u.get("snapshot"), dict)]

    def commit() -> Exchange:
        return Catalog(client).do("POST", table_path(ns, name), body, ok=(200,),
                                  label=f"setup: append a data file to {name}")

    if not added:           # pyiceberg's append always adds a snapshot; without one there is nothing to read back
        commit()
        return
    readback.appended(f"{'.'.join(ns)}.{name}", commit, lambda: (load_result(client, ns, name) or {}).get("metadata"),
                      added[-1])



def _planned_table(ctx: CaseContext) -> tuple[Catalog, tuple[str, ...], Ops, str]:
    """What every planning case starts from: the catalog, the case's namespace, its table operations (creates
    read back: TBL-01 otherwise; drops purge) and a table made with them, whose scans the case plans."""
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace)
    tables = table_ops(cat, ns, purge=True)
    name = ctx.unique("t")
    tables.make(name)
    return cat, ns, tables, name


@case("planTableScan", success=(200,), requires=("createTable", "fetchPlanningResult"))
def plan_table_scan(ctx: CaseContext, ep: Endpoint) -> Case:
    cat, ns, tables, name = _planned_table(ctx)
    missing = ctx.unique("tm")
    plans = Plans(ctx.client, ns, name)
    absent = Plans(ctx.client, ns, missing, listed=plans.listed)
    path, mpath = table_path(ns, name) + "/plan", table_path(ns, missing) + "/plan"
    return Case(
        ep, f"plans of table {'.'.join(ns)}.{name}",
        # each execution makes a new plan (a new plan-id): no interference is needed to see a second one
        Req("POST", path, {"select": ["id", "data"]}),
        observe=lambda: {"plans": plans.state()},
        executions=lambda b, a: new_plans(b["plans"], a["plans"]),
        interfere=lambda: None,
        alternative=Req("POST", path, {"select": ["id"]}),
        alt_executions=lambda b, a: new_plans(b["plans"], a["plans"]),
        conflicting=Conflict(
            Req("POST", mpath, {"select": ["id", "data"]}), (404,),
            clear=lambda: tables.make(missing),
            executed=lambda: bool(absent.state()),
            why="the table does not exist"),
        copy_blind=None if plans.listed else ("plans are read from the plan-ids in the kit's own answers, so a "
                                              "plan made by a copy whose answer the kit never reads is invisible"),
        learn=plans.learn,
        notes={"plan-state": "control API listing" if plans.listed else "plan-ids seen in answers"},
    )


@case("cancelPlanning", success=(204, 200),
      requires=("createTable", "planTableScan", "fetchPlanningResult"), has_payload=False)
def cancel_planning(ctx: CaseContext, ep: Endpoint) -> Case:
    cat, ns, tables, name = _planned_table(ctx)
    pid = plan_scan(cat, ns, name)["plan-id"]
    plans = Plans(ctx.client, ns, name, listed=False)

    path = f"{table_path(ns, name)}/plan/{quote(pid, safe='')}"

    def cancelled(b, a):
        return 1 if b["p"] not in (None, "cancelled") and a["p"] in (None, "cancelled") else 0

    def interfere():
        # Cancelling a cancelled plan changes nothing, so a re-execution cannot show in state. It can show in
        # the answer: the plan's table is dropped, and a control cancel WITHOUT a key (a re-execution by
        # definition) shows what a re-execution answers now. When that is not a success (404), a keyed retry
        # answered with the original success was replayed, and a re-executed one gets the control's answer.
        cat.drop_table(ns, name, purge=True, label="interfere: drop the plan's table")
        control = ctx.client.request("DELETE", path, label="interfere: control - cancel again without a key "
                                     "(what a re-execution answers now)")
        the_case.notes["re-execution answers"] = control.status if control.status is not None else control.error
        if control.status is not None and control.status not in ep.success:
            the_case.blind = None
        else:
            the_case.blind = (f"cancelling a plan that is already cancelled leaves no trace in state, and on this "
                          f"target a re-execution (a cancel without a key after the plan's table was dropped) "
                          f"answers {control.status or control.error} like the original")

    # the conflicting variant: a plan of a table of its own, renamed away (404 NoSuchTable on its old path)
    def conflict() -> Conflict:
        cname = ctx.unique("tc")
        tables.make(cname)
        cpid = plan_scan(cat, ns, cname)["plan-id"]
        cplans = Plans(ctx.client, ns, cname, listed=False)
        renamed = RenamedAway(ctx, ns, cname)
        renamed.away()
        return Conflict(
            Req("DELETE", f"{table_path(ns, cname)}/plan/{quote(cpid, safe='')}"), (404,),
            clear=lambda: renamed.clear(lambda: cplans.status(cpid) not in (None, "cancelled"),
                                        f"plan {cpid} is gone or cancelled"),
            executed=lambda: cplans.status(cpid) in (None, "cancelled"),
            why=f"the plan's table was renamed away ({cname} -> {renamed.moved})")

    missing = rename_missing(ctx)
    the_case = Case(
        ep, f"plan {pid} of table {'.'.join(ns)}.{name}",
        Req("DELETE", path),
        observe=lambda: {"p": plans.status(pid)},
        executions=cancelled,
        interfere=interfere,
        conflicting=None if missing else conflict(),
        conflict_unavailable=missing,
        blind="cancelling a plan that is already cancelled leaves no trace in state",
        reexecutable=False,
        notes={"plan-id": pid},
    )
    return the_case


@case("fetchScanTasks", success=(200,),
      requires=("createTable", "loadTable", "updateTable", "planTableScan", "fetchPlanningResult"))
def fetch_scan_tasks(ctx: CaseContext, ep: Endpoint) -> Case:
    cat, ns, tables, name = _planned_table(ctx)
    append_file(ctx.client, ns, name, [1, 2])
    first, second = plan_scan(cat, ns, name), plan_scan(cat, ns, name)   # two plans, each with its own plan task
    tokens = [(d.get("plan-tasks") or [None])[0] for d in (first, second)]
    if first.get("status") != "completed" or not all(isinstance(t, str) for t in tokens):
        raise PrerequisiteError(f"the target's plans of a table with a data file carry no plan-tasks (status "
                                f"{first.get('status')!r}, plan-tasks {first.get('plan-tasks')!r}); fetchScanTasks "
                                "cannot be exercised with them")
    plans = Plans(ctx.client, ns, name, listed=False)
    path = table_path(ns, name) + "/tasks"

    def fetched(b, a, key, token):
        return 1 if token in b[key] and token not in a[key] else 0

    # the conflicting variant: a plan task of a table of its own, renamed away (404 NoSuchTable on its old path)
    def conflict() -> Conflict:
        cname = ctx.unique("tc")
        tables.make(cname)
        append_file(ctx.client, ns, cname, [3])
        cplan = plan_scan(cat, ns, cname)
        ctoken = (cplan.get("plan-tasks") or [None])[0]
        if not isinstance(ctoken, str):
            raise PrerequisiteError(f"the target's plan of a second table with a data file carries no plan-tasks "
                                    f"({cplan.get('plan-tasks')!r}); fetchScanTasks cannot be exercised with it")
        cplans = Plans(ctx.client, ns, cname, listed=False)
        renamed = RenamedAway(ctx, ns, cname)
        renamed.away()

        def cpending():
            return cplans.pending(cplan["plan-id"])

        return Conflict(
            Req("POST", table_path(ns, cname) + "/tasks", {"plan-task": ctoken}), (404,),
            clear=lambda: renamed.clear(lambda: ctoken in cpending(), f"plan task {ctoken} is no longer listed"),
            executed=lambda: ctoken not in cpending(),
            why=f"the plan task's table was renamed away ({cname} -> {renamed.moved})")

    missing = rename_missing(ctx)
    return Case(
        ep, f"plan task {tokens[0]} of table {'.'.join(ns)}.{name}",
        Req("POST", path, {"plan-task": tokens[0]}),
        observe=lambda: {"p1": plans.pending(first["plan-id"]), "p2": plans.pending(second["plan-id"])},
        executions=lambda b, a: fetched(b, a, "p1", tokens[0]),
        interfere=lambda: None,
        alternative=Req("POST", path, {"plan-task": tokens[1]}),
        alt_executions=lambda b, a: fetched(b, a, "p2", tokens[1]),
        conflicting=None if missing else conflict(),
        conflict_unavailable=missing,
        reexecutable=False,
        notes={"plan-ids": [first["plan-id"], second["plan-id"]]},
    )
