"""GEN-01 / SCHEMA-01: mutations generated from an OpenAPI document by schemathesis, each replayed.

For every mutation operation of the document that the kit knows how to steer (see `STEERED`):

1. schemathesis generates cases (path parameters, query, body) from the document; the kit steers every
   namespace / table / view name into an *arena* under the run namespace (``<run>.<arena>`` holding table
   ``t0``, view ``v0`` and namespace ``n0``; absent names ``tx``, ``nx``... give 404s), removes fields that
   would reach outside the catalog (``location``), and sometimes swaps the loosely typed parts of a body
   (Iceberg schema, view version, updates) for valid ones so that successful mutations are generated too.
   The scan-planning mutations (`PLANNING`) share one arena that also holds ``tp``, a table partitioned by
   ``id`` with two data files (written with pyiceberg); a plan-id or plan task they need is made by a
   keyless planTableScan just before the case is sent (setup, not part of the example);
2. the case is sent with a fresh UUIDv7 Idempotency-Key through the kit's recorded client; the response must
   not be a 5xx nor a transport error (GEN-01) and must conform to the document (schemathesis'
   status-code, content-type and response-schema checks; SCHEMA-01);
3. the same request is sent again with the same key: same status, an equivalent body
   (`ctk.catalog.body_identity`) and no further effect - the control API's execution counters
   (``/_ctk/executions``) when the target has them, else a read of the arena's state before and after.

A failing example is shrunk by hypothesis; the verdict carries the minimal failing exchange(s).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote, urlsplit

from ctk.core.behaviours import Behaviour, check
from ctk.core.verdicts import Verdict
from ctk.client.transport import table_path
from ctk.catalog import (ENDPOINTS, Catalog, Plans, PrerequisiteError, append_file, body_identity, create_table_body,
                         create_view_body, drop_tree, plan_scan, schema, set_properties_update)
from ctk.catalog.state import current
from ctk.core.exchange import Exchange, render_exchanges
from ctk.client.keys import new_key
from ctk.fuzzing.backstop import Progress
from ctk.openapi import forbidden
from ctk.checks.common import PLAIN_BROKEN, baseline_blocked
from ctk.checks.context import CheckContext

MUTATING = ("POST", "PUT", "DELETE", "PATCH")


@dataclass
class GenOptions:
    examples: int = 10                 # hypothesis max_examples per operation: how much evidence is gathered
    seed: int | None = None            # None: derandomized (same cases every run)
    backstop_s: float = 600.0          # hang backstop (--ctk-gen-budget): no request answered for this many seconds,
                                       # never the normal end; what it cuts short is inconclusive, naming the option
    shrinks: int = 40                  # examples an operation may run after its first failure (shrinking)
    operations: tuple[str, ...] | None = None    # operationIds to run (default: every steered mutation)
    observe: str = "auto"              # "auto" (counters when present, else state), "counters", "state"


# --------------------------------------------------------------------------------------------------------
# The document
# --------------------------------------------------------------------------------------------------------

def resolve_spec_path(spec_path: str | Path | None = None) -> Path:
    """``--openapi-spec`` when given, else the document the kit ships (ctk/data/ctk-openapi.yaml). Never a path
    of one machine: an installed kit finds its own document or says so."""
    if spec_path:
        return Path(spec_path)
    from ctk.openapi import default_spec_path

    return default_spec_path()


def _load_document(path: Path, prefix: str | None) -> dict:
    from ctk.core.yamlfile import load_yaml

    doc = load_yaml(path.read_text(encoding="utf-8"))     # a fresh document: changed below without a copy
    if not isinstance(doc, dict) or "paths" not in doc:
        raise ValueError(f"{path}: not an OpenAPI document")
    from ctk.openapi import normalize_upstream_quirks

    normalize_upstream_quirks(doc)
    seg = f"/{prefix}" if prefix else ""
    paths = {}
    for template, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        item = dict(item)
        for where in [item] + [v for k, v in item.items() if k in ("get", "post", "put", "delete", "head", "patch")
                               and isinstance(v, dict)]:
            if isinstance(where.get("parameters"), list):
                where["parameters"] = [p for p in where["parameters"] if not _is_prefix_param(doc, p)]
        paths[template.replace("/{prefix}", seg)] = item
    doc["paths"] = paths
    doc.pop("servers", None)
    return doc


def _is_prefix_param(doc: dict, p: Any) -> bool:
    if isinstance(p, dict) and "$ref" in p:
        name = p["$ref"].rsplit("/", 1)[-1]
        p = ((doc.get("components") or {}).get("parameters") or {}).get(name, {})
    return isinstance(p, dict) and p.get("in") == "path" and p.get("name") == "prefix"


def mutation_operations(doc: dict) -> list[tuple[str, str, str]]:
    """(operationId, METHOD, path template) of every mutation of a loaded document."""
    out = []
    for template, item in (doc.get("paths") or {}).items():
        for method, op in item.items():
            if method.upper() in MUTATING and isinstance(op, dict) and op.get("operationId"):
                out.append((op["operationId"], method.upper(), template))
    return out


# --------------------------------------------------------------------------------------------------------
# Steering: every name into the arena under the run namespace
# --------------------------------------------------------------------------------------------------------

@dataclass
class Arena:
    ns: tuple[str, ...]
    table_location: str | None = None
    view_location: str | None = None
    client: Any = None                 # planning arenas: steering makes plans (setup requests) through it
    data_table: str | None = None      # planning arenas: the table with data files ("tp"), None if unwritable
    plans: dict[str, Any] = field(default_factory=dict)   # planning arenas: table -> Plans (state observation)

    @property
    def namespaces(self) -> list[tuple[str, ...]]:
        return [self.ns, self.ns + ("n0",), self.ns + ("nx",)]


NAMES = ["t0", "v0", "tx", "ty"]
CHILDREN = ["n0", "nx", "ny"]
PLANNING = ("planTableScan", "cancelPlanning", "fetchScanTasks")
DATA_TABLE = "tp"
# Row filters on the kit's schema (id long, data string) in the forms planners read: bare boolean, the
# current left/right/child form with references, the older term/value form.
FILTERS = [None, True,
           {"type": "gt", "term": "id", "value": 1},
           {"type": "eq", "left": {"type": "reference", "name": "data"}, "right": "r2"},
           {"type": "not-null", "child": {"type": "reference", "name": "id"}},
           {"type": "in", "term": "id", "values": [1, 2, 7]},
           {"type": "and", "left": {"type": "lt-eq", "term": "id", "value": 2},
            "right": {"type": "not", "child": {"type": "is-null", "term": "data"}}}]


def _ident(ns: tuple[str, ...], name: str) -> dict:
    return {"namespace": list(ns), "name": name}


def _draw_ns(data: Any, arena: Arena, st: Any) -> tuple[str, ...]:
    return data.draw(st.sampled_from(arena.namespaces), label="namespace")


def _draw_name(data: Any, st: Any) -> str:
    return data.draw(st.sampled_from(NAMES), label="name")


def _props(data: Any, st: Any) -> dict[str, str]:
    return data.draw(st.dictionaries(st.sampled_from(["k1", "k2", "ctk.mark"]), st.sampled_from(["a", "b", "c"]),
                                     max_size=2), label="properties")


def _steer_commit(change: Any, data: Any, arena: Arena, st: Any, valid: bool, ns=None, name=None) -> dict:
    change = dict(change) if isinstance(change, dict) else {}
    ns = ns or _draw_ns(data, arena, st)
    name = name or _draw_name(data, st)
    change["identifier"] = _ident(ns, name)
    if valid:
        change["requirements"] = []
        change["updates"] = [set_properties_update(_props(data, st) or {"k1": "a"})]
    return change


def _plan_body(data: Any, st: Any) -> dict:
    """A planTableScan request the arena's tables can bind: selection, statistics columns, a filter."""
    body: dict[str, Any] = {}
    for key in ("select", "stats-fields"):
        cols = data.draw(st.sampled_from([None, ["id"], ["id", "data"]]), label=key)
        if cols is not None:
            body[key] = cols
    flt = data.draw(st.sampled_from(FILTERS), label="filter")
    if flt is not None:
        body["filter"] = flt
    return body


def _setup_plan(arena: Arena, name: str) -> dict | None:
    """A plan of arena table `name` (keyless planTableScan, polled until no longer submitted), None if the
    target does not make one."""
    if arena.client is None:
        return None
    try:
        return plan_scan(Catalog(arena.client), arena.ns, name)
    except PrerequisiteError:
        return None


def _steer_planning(op: str, body: dict, pp: dict, data: Any, arena: Arena) -> dict:
    """Steer planTableScan / cancelPlanning / fetchScanTasks; returns the body. The simplest example (the one
    hypothesis tries first) is the valid one: a real table, plan or plan task."""
    from hypothesis import strategies as st

    valid = not data.draw(st.booleans(), label="generated target")
    tables = [arena.data_table or "t0", "t0"]
    if valid:
        pp["namespace"], pp["table"] = arena.ns, data.draw(st.sampled_from(tables), label="table")
    else:
        pp["namespace"] = _draw_ns(data, arena, st)
        pp["table"] = data.draw(st.sampled_from(tables + ["tx", "v0"]), label="table")
    if op == "planTableScan":
        return _plan_body(data, st) if valid else body
    if op == "cancelPlanning":
        plan = _setup_plan(arena, pp["table"]) if valid else None
        if plan is not None:
            pid = plan["plan-id"]
            if data.draw(st.booleans(), label="cancelled before"):     # cancelling a cancelled plan: 204
                arena.client.request("DELETE", f"{table_path(arena.ns, pp['table'])}/plan/{quote(pid, safe='')}",
                                     label="setup: cancel the plan")
        else:
            pid = data.draw(st.sampled_from(["00000000-0000-0000-0000-000000000000", "no-such-plan"]),
                            label="plan-id")
        pp["plan-id"] = pid
        return body
    # fetchScanTasks: a plan task of a fresh plan (each is handed out once), else the generated token
    plan = _setup_plan(arena, arena.data_table) if (valid and arena.data_table) else None
    tokens = [t for t in ((plan or {}).get("plan-tasks") or []) if isinstance(t, str)]
    if tokens:
        pp["table"] = arena.data_table
        body = {"plan-task": data.draw(st.sampled_from(tokens), label="plan-task")}
    return body


def _steer(op: str, case: Any, data: Any, arena: Arena) -> bool:
    """Rewrite the generated case in place so it touches only the arena. False: the operation is not steered."""
    from hypothesis import strategies as st

    body = case.body if isinstance(case.body, dict) else {}
    valid = data.draw(st.booleans(), label="valid core")
    pp = case.path_parameters if case.path_parameters is not None else {}

    def path_ns() -> tuple[str, ...]:
        ns = _draw_ns(data, arena, st)
        pp["namespace"] = ns
        return ns

    if op == "createNamespace":
        body["namespace"] = list(arena.ns) + [data.draw(st.sampled_from(CHILDREN), label="child")]
        if valid:
            body["properties"] = _props(data, st)
    elif op == "dropNamespace":
        pp["namespace"] = arena.ns + (data.draw(st.sampled_from(CHILDREN), label="child"),)
    elif op == "updateProperties":
        path_ns()
        if valid:
            body = {"removals": data.draw(st.lists(st.sampled_from(["k1", "k2"]), max_size=1, unique=True)),
                    "updates": {}}
            body["updates"] = {k: v for k, v in _props(data, st).items() if k not in body["removals"]}
    elif op == "createTable":
        path_ns()
        body["name"] = _draw_name(data, st)
        body.pop("location", None)
        if valid:
            body["schema"] = schema()
            for k in ("partition-spec", "write-order"):
                body.pop(k, None)
            body["properties"] = _props(data, st)
    elif op in ("registerTable", "registerView"):
        path_ns()
        body["name"] = _draw_name(data, st)
        real = arena.table_location if op == "registerTable" else arena.view_location
        body["metadata-location"] = real if (valid and real) else f"file:///nonexistent-ctk/{uuid.uuid4().hex}.json"
        body.pop("overwrite", None)
    elif op in ("updateTable", "replaceView"):
        ns = path_ns()
        name = _draw_name(data, st)
        pp["table" if op == "updateTable" else "view"] = name
        body = _steer_commit(body, data, arena, st, valid, ns, name)
    elif op in ("dropTable", "dropView"):
        path_ns()
        pp["table" if op == "dropTable" else "view"] = _draw_name(data, st)
    elif op in ("renameTable", "renameView"):
        body["source"] = _ident(_draw_ns(data, arena, st), _draw_name(data, st))
        body["destination"] = _ident(_draw_ns(data, arena, st), _draw_name(data, st))
    elif op == "commitTransaction":
        given = body.get("table-changes")
        changes = (given[:3] if isinstance(given, list) else []) or [{}]
        body["table-changes"] = [_steer_commit(c, data, arena, st, valid) for c in changes]
    elif op in PLANNING:
        body = _steer_planning(op, body, pp, data, arena)
    elif op == "createView":
        ns = path_ns()
        name = _draw_name(data, st)
        body["name"] = name
        body.pop("location", None)
        if valid:
            good = create_view_body(ns, name, properties=_props(data, st))
            body.update({k: good[k] for k in ("schema", "view-version", "properties")})
    else:
        return False
    for p in ("table", "view"):
        if p in pp and not isinstance(pp[p], str):
            pp[p] = "tx"
    if "plan-id" in pp and not isinstance(pp["plan-id"], str):
        pp["plan-id"] = "no-such-plan"
    unknown = [p for p in pp if p not in ("namespace", "table", "view", "plan-id")]
    if unknown:
        return False
    case.path_parameters = pp
    if case.body is not None or body:
        case.body = body
    return True


STEERED = ("createNamespace", "dropNamespace", "updateProperties", "createTable", "registerTable", "updateTable",
           "dropTable", "renameTable", "commitTransaction", "createView", "replaceView", "dropView", "renameView",
           "registerView") + PLANNING


# --------------------------------------------------------------------------------------------------------
# Arena setup, observation, cleanup
# --------------------------------------------------------------------------------------------------------

def make_arena(ctx: CheckContext, stem: str, planning: bool = False) -> Arena:
    """The arena; with `planning`, also table ``tp`` (partitioned by identity(id), rows 1 and 2 in two data
    files) when the kit can write data files to the target's storage."""
    placement = getattr(ctx.client, "placement", None)
    if placement is not None and placement.nested is False:
        raise PrerequisiteError("the arena needs nested namespaces (a namespace with a child), which the target "
                                f"does not support ({placement.nesting_note})")
    cat = Catalog(ctx.client)
    ns = tuple(ctx.namespace) + (ctx.unique(stem),)
    cat.create_namespace(ns)
    cat.create_namespace(ns + ("n0",))
    t = cat.create_table(ns, "t0", {"k1": "a"})
    v = cat.create_view(ns, "v0", {"k1": "a"})
    arena = Arena(ns, t.get("metadata-location"), v.get("metadata-location"))
    if planning:
        arena.client = ctx.client
        body = create_table_body(DATA_TABLE, {"k1": "a"})
        body["partition-spec"] = {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "id",
                                                            "transform": "identity"}]}
        try:
            cat.create_table(ns, DATA_TABLE, body=body)
            append_file(ctx.client, ns, DATA_TABLE, [1, 2])
            arena.data_table = DATA_TABLE
        except PrerequisiteError:
            pass      # planning is still exercised on the empty t0; fetchScanTasks only with generated tokens
        first = Plans(ctx.client, ns, "t0")
        arena.plans = {"t0": first}
        if arena.data_table:
            arena.plans[arena.data_table] = Plans(ctx.client, ns, arena.data_table, listed=first.listed)
    return arena


def arena_state(client: Any, arena: Arena) -> dict:
    """What the arena holds: namespaces with properties, tables and views with metadata locations; in a
    planning arena also the plans of its tables with their status (`ctk.catalog.Plans`: the control API
    listing, else the plan-ids of the kit's own answers): a re-executed planTableScan is a new plan-id."""
    out: dict = {}
    if arena.plans:
        out["plans of"] = {name: plans.state() for name, plans in arena.plans.items()}
    cat = Catalog(client)
    seen = [arena.ns] + [tuple(c) for c in (cat.list_namespaces(arena.ns) or [])]
    for ns in seen:
        doc = current(client, ns)
        if doc is None:
            continue
        entry = {"properties": doc.get("properties") or {}, "tables": {}, "views": {}}
        for t in cat.list_tables(ns) or []:
            entry["tables"][t] = (current(client, ns, t, "table") or {}).get("metadata-location")
        for v in cat.list_views(ns) or []:
            entry["views"][v] = (current(client, ns, v, "view") or {}).get("metadata-location")
        out[".".join(ns)] = entry
    return out


# --------------------------------------------------------------------------------------------------------
# One operation
# --------------------------------------------------------------------------------------------------------

@dataclass
class _Failure:
    kind: str
    text: str
    exchanges: list[Exchange]


@dataclass
class _OpResult:
    operation: str
    examples: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    failure: _Failure | None = None
    schema_problems: list[tuple[str, list[Exchange]]] = field(default_factory=list)
    error: str | None = None
    stopped_by_backstop: bool = False
    shrink_runs: int = 0


def _to_httpx(ex: Exchange) -> Any:
    import httpx

    req = httpx.Request(ex.method, ex.url, headers=ex.request_headers,
                        content=(ex.request_body or "").encode())
    from datetime import timedelta

    resp = httpx.Response(ex.status or 0, headers=ex.response_headers,
                          content=(ex.response_body or "").encode(), request=req)
    resp.elapsed = timedelta(milliseconds=ex.elapsed_ms or 0.0)
    return resp


def _schema_problems(case: Any, ex: Exchange, spec: Any = None) -> str | None:
    """schemathesis' status-code, content-type and response-schema checks of one response; when they fail,
    the kit's own reading of the failure (`ctk.openapi.Spec.validate`: the field and, for a oneOf with a
    discriminator, the alternative it selects) comes first, as schemathesis prints the whole schema."""
    from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,
                                                   status_code_conformance)

    if ex.status is None or ex.method.upper() == "HEAD":
        return None
    try:
        case.validate_response(_to_httpx(ex), checks=[status_code_conformance, content_type_conformance,
                                                      response_schema_conformance])
    except BaseExceptionGroup as group:  # schemathesis FailureGroup (not an Exception subclass)
        parts = []
        for f in group.exceptions:
            title = getattr(f, "title", type(f).__name__)
            msg = getattr(f, "message", str(f))
            parts.append(f"{title}: {msg}".strip())
        where = f"{ex.method} {urlsplit(ex.url).path} -> {ex.status}"
        ours = []
        if spec is not None:
            try:
                ours = [p.split(": ", 1)[-1] for p in spec.validate(ex)]
            except Exception:  # noqa: BLE001 - an explanation only
                ours = []
        return (where + "\n" + "".join(f"- {p}\n" for p in ours) + "\n".join(parts))[:1500]
    except Exception as exc:  # noqa: BLE001 - a single Failure
        return f"{ex.method} {urlsplit(ex.url).path} -> {ex.status}\n{exc}"[:1500]
    return None


def _describe(ex: Exchange) -> str:
    return f"no answer ({ex.error})" if ex.status is None else f"{ex.status}"


def _run_operation(ctx: CheckContext, schema: Any, op_id: str, method: str, template: str, opts: GenOptions,
                   progress: Progress, counters: bool, shared: dict | None = None, spec: Any = None) -> _OpResult:
    """Generate, send and replay `op_id`. `shared`: arenas kept across operations (the planning arena: the
    planning mutations change plans, never the arena's tables); the caller drops them."""
    from hypothesis import HealthCheck, Phase, given, seed as hseed, settings
    from hypothesis import strategies as st

    res = _OpResult(op_id)
    client = ctx.client
    try:
        operation = schema[template][method]
    except Exception as exc:  # noqa: BLE001
        res.error = f"schemathesis could not build {method} {template}: {exc}"
        return res
    planning = op_id in PLANNING
    try:
        if planning and shared is not None:
            if "planning" not in shared:
                shared["planning"] = make_arena(ctx, "gen", planning=True)
            arena = shared["planning"]
        else:
            arena = make_arena(ctx, "gen", planning=planning)
    except PrerequisiteError as exc:
        res.error = f"could not set up the arena: {exc}"
        return res

    db = ctx.db_link_faults
    turns = db.db.turns if db is not None else None    # the database link's turns (ctk.interposer.linklock)

    def body_of(case: Any, data: Any) -> None:
        # How much is generated is counted (max_examples; after a failure, `opts.shrinks` shrinking runs), never
        # timed: the same cases and verdicts on a busy machine as on a quiet one. Only a hang - no request
        # answered for --ctk-gen-budget seconds (`progress`) - stops it early; what it cuts short is inconclusive.
        if res.failure is not None:
            if res.shrink_runs >= opts.shrinks:
                return
            res.shrink_runs += 1
        elif progress.stalled():
            res.stopped_by_backstop = True
            return
        if turns is not None:   # between two examples a check waiting to arm a database-link fault gets its turn
            turns.pause_point()
        if not _steer(op_id, case, data, arena):
            res.error = f"{op_id}: path parameters the kit cannot steer into the run namespace"
            return
        pp = case.path_parameters or {}
        path = client.url_for(template, **pp)
        query = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in (case.query or {}).items()}
        payload = case.body if operation.body else None
        key = new_key()
        mark = len(client.exchanges)
        # the generated cases explore: a body the request schemas forbid (steered names, a case the generator
        # drew outside them) says so on the request, as every body the kit sends invalid on purpose (best effort)
        invalid = forbidden(method, path, payload, [spec] if spec is not None else [])
        first = client.request(method, path, json=payload, params=query or None, idempotency_key=key,
                               label=f"generated {op_id}", invalid=invalid)
        res.examples += 1
        res.statuses[first.status or 0] = res.statuses.get(first.status or 0, 0) + 1

        def fail(kind: str, text: str) -> NoReturn:
            res.failure = _Failure(kind, text, client.exchanges_since(mark))
            raise AssertionError(text)

        if first.status is None:
            fail("transport-error", f"{op_id}: a generated well-formed request got no answer ({first.error})")
        if first.status >= 500:
            fail("5xx", f"{op_id}: a generated well-formed request got {first.status}")
        problem = _schema_problems(case, first, spec)
        if problem and len(res.schema_problems) < 5:
            res.schema_problems.append((problem, [first]))
        c0 = ctx.faults.executions() if counters else None
        s0 = arena_state(client, arena) if c0 is None else None
        again = client.request(method, path, json=payload, params=query or None, idempotency_key=key,
                               label=f"generated {op_id}: replay with the same key", invalid=invalid)
        c1 = ctx.faults.executions() if c0 is not None else None
        problem = _schema_problems(case, again, spec)
        if problem and len(res.schema_problems) < 5:
            res.schema_problems.append(("(replay) " + problem, [again]))
        s1 = arena_state(client, arena) if s0 is not None else None
        if again.status != first.status:
            fail("replay-status", f"{op_id}: the replay with the same key got {_describe(again)}, "
                                  f"the original {_describe(first)}")
        if body_identity(again) != body_identity(first):
            fail("replay-body", f"{op_id}: the replay's body is not equivalent to the original's: "
                                f"{body_identity(again)} vs {body_identity(first)}")
        if c0 is not None and c1 is not None and c1.get("total", 0) != c0.get("total", 0):
            fail("re-executed", f"{op_id}: the replay executed again (execution counter "
                                f"{c0.get('total')} -> {c1.get('total')})")
        if s0 is not None and s1 != s0:
            fail("re-executed", f"{op_id}: the replay changed catalog state:\nbefore: "
                                f"{json.dumps(s0, sort_keys=True)[:600]}\nafter:  {json.dumps(s1, sort_keys=True)[:600]}")

    test = given(case=operation.as_strategy(), data=st.data())(body_of)
    test = settings(max_examples=max(1, int(opts.examples)), deadline=None, database=None,
                    derandomize=opts.seed is None, print_blob=False, report_multiple_bugs=False,
                    phases=(Phase.explicit, Phase.generate, Phase.shrink),
                    suppress_health_check=list(HealthCheck))(test)
    if opts.seed is not None:
        test = hseed(opts.seed)(test)
    try:
        test()
    except AssertionError as exc:
        if res.failure is None:   # raised by generation itself, before any example reached the target
            res.error = f"AssertionError while generating cases: {str(exc)[:400]}"
    except Exception as exc:  # noqa: BLE001 - hypothesis Flaky (the shrink count cut a shrink) or generation errors
        if res.failure is None:
            res.error = f"{type(exc).__name__}: {str(exc)[:500]}"
    finally:
        if not (planning and shared is not None):
            drop_tree(client, arena.ns)
    return res


# --------------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------------

@check(requirement="GEN-01", behaviour=Behaviour.GENERATED_REPLAY,
       also=(("SCHEMA-01", Behaviour.GENERATED_SCHEMA),))
def run_openapi_checks(ctx: CheckContext, spec_path: str | Path | None = None, examples: int = 10, seed: int | None = None,
                       backstop_s: float = 600.0, operations: tuple[str, ...] | list[str] | None = None,
                       options: GenOptions | None = None) -> list[Verdict]:
    """GEN-01 (one verdict per operation) and SCHEMA-01 (one per operation) from schemathesis-generated cases.

    ``spec_path``: --openapi-spec (default: the kit's document, else the shared upstream copy);
    ``examples``: generated cases per operation (the amount of evidence: a count, never a time);
    ``seed``: hypothesis seed (None: derandomized); ``backstop_s``: hang backstop (--ctk-gen-budget): once no
    request was answered for that many seconds, an operation it cuts short or never reaches is inconclusive, naming
    the option. A slow catalog that keeps answering is never cut, however long the run takes.
    """
    opts = options or GenOptions(examples=examples, seed=seed, backstop_s=backstop_s,
                                 operations=tuple(operations) if operations else None)
    if not ctx.idempotency_supported:
        why = getattr(ctx.discovery, "lifetime_error", None) or "no discovery"
        return [Verdict.unsupported("GEN-01", "the target does not advertise Idempotency-Key support "
                                              f"(idempotency-key-lifetime: {why})", behaviour="generated-replay")]
    try:
        import schemathesis

        path = resolve_spec_path(spec_path)
        doc = _load_document(path, getattr(ctx.client, "prefix", None))
        schema = schemathesis.openapi.from_dict(doc)
    except Exception as exc:  # noqa: BLE001
        return [Verdict.inconclusive("GEN-01", f"cannot load the OpenAPI document: {exc}",
                                     behaviour="generated-replay")]
    wanted = opts.operations or STEERED
    ops = [o for o in mutation_operations(doc) if o[0] in wanted and o[0] in STEERED]
    skipped = sorted({o[0] for o in mutation_operations(doc)} - {o[0] for o in ops})
    counters = opts.observe == "counters" or (opts.observe == "auto" and ctx.faults.executions() is not None)
    if opts.observe == "state":
        counters = False
    progress = Progress(ctx.client, opts.backstop_s)
    shared: dict[str, Arena] = {}
    try:
        verdicts = _run_all(ctx, schema, ops, opts, path, counters, progress, shared)
    finally:
        for arena in shared.values():
            drop_tree(ctx.client, arena.ns)
    if skipped and verdicts:
        verdicts[0].details.setdefault("not_steered", skipped)
    return verdicts


def _backstop_note(opts: GenOptions) -> str:
    return (f"the hang backstop of the generated checks was reached: no request was answered for "
            f"{opts.backstop_s:g} s (--ctk-gen-budget); the number of cases is set by --ctk-examples, so this is a "
            "hang or a catalog that stopped answering: raise --ctk-gen-budget to decide it")


def _backstop_needs(opts: GenOptions) -> str:
    return f"--ctk-gen-budget above {opts.backstop_s:g} s (the generated checks' hang backstop: no answer that long)"


def _run_all(ctx: CheckContext, schema: Any, ops: list, opts: GenOptions, path: Path, counters: bool,
             progress: Progress, shared: dict) -> list[Verdict]:
    try:
        from ctk.openapi import load_spec

        spec = load_spec(path)
    except Exception:  # noqa: BLE001 - schemathesis' own messages only
        spec = None
    verdicts: list[Verdict] = []
    for op_id, method, template in ops:
        kw = dict(endpoint=op_id, behaviour="generated-replay")
        if op_id in ENDPOINTS:
            ok, why = ENDPOINTS[op_id].supported(ctx.discovery)
            if not ok:
                verdicts.append(Verdict.unsupported("GEN-01", f"{op_id} not offered by the target: {why}", **kw))
                continue
        if progress.stalled():
            verdicts.append(Verdict.inconclusive("GEN-01", f"{op_id}: not run: {_backstop_note(opts)}",
                                                 needs=_backstop_needs(opts), **kw))
            continue
        blocked = baseline_blocked(ctx, (op_id,))    # semantics first: no replay verdict on a broken plain operation
        if blocked is not None:
            verdicts.append(Verdict.inconclusive("GEN-01", f"{op_id}: not run: {blocked[1]}",
                                                 classification=PLAIN_BROKEN, details={"blocked_by": blocked[0]},
                                                 **kw))
            continue
        t0 = time.monotonic()
        r = _run_operation(ctx, schema, op_id, method, template, opts, progress, counters, shared, spec)
        took = time.monotonic() - t0
        details = {"examples": r.examples, "examples_asked": max(1, int(opts.examples)),
                   "statuses": {str(k): v for k, v in sorted(r.statuses.items())},
                   "seconds": round(took, 2), "observe": "counters" if counters else "state",
                   "seed": opts.seed, "spec": str(path)}
        if r.failure is not None:
            f = r.failure
            text = (f"expected: a generated well-formed {op_id} gets no 5xx, and its replay with the same key the "
                    f"same status, an equivalent body and no further effect\nhappened: {f.text}\n\n"
                    f"minimal failing example (after shrinking):\n"
                    + render_exchanges([e.to_dict() for e in f.exchanges[:12]], limit=1200))
            verdicts.append(Verdict.broken("GEN-01", text, classification=f.kind,
                                           exchanges=[e.to_dict() for e in f.exchanges[:12]], details=details, **kw))
        elif r.error and r.examples == 0:
            verdicts.append(Verdict.inconclusive("GEN-01", f"{op_id}: {r.error}", details=details, **kw))
        elif r.stopped_by_backstop or r.examples == 0:
            verdicts.append(Verdict.inconclusive("GEN-01", f"{op_id}: {r.examples} of "
                                                           f"{details['examples_asked']} generated requests ran: "
                                                           f"{_backstop_note(opts)}", needs=_backstop_needs(opts),
                                                 details=details, **kw))
        else:
            verdicts.append(Verdict.ok("GEN-01", f"{op_id}: {r.examples} generated requests, statuses "
                                                 f"{details['statuses']}, each replayed with its key: same "
                                                 "outcome, no further effect", classification="replayed",
                                       details=details, **kw))
        skw = dict(endpoint=op_id, behaviour="generated-schema")
        if r.schema_problems:
            text = "\n\n".join(p for p, _ in r.schema_problems)
            exs = [e.to_dict() for _, es in r.schema_problems for e in es]
            verdicts.append(Verdict.broken("SCHEMA-01", f"responses to generated {op_id} requests do not conform to "
                                                        f"{path.name}:\n{text}", exchanges=exs, details=details,
                                           classification="nonconforming", **skw))
        elif r.stopped_by_backstop and r.examples:
            verdicts.append(Verdict.inconclusive("SCHEMA-01", f"{op_id}: {r.examples} responses conform, then "
                                                              f"{_backstop_note(opts)}", needs=_backstop_needs(opts),
                                                 details=details, **skw))
        elif r.examples:
            verdicts.append(Verdict.ok("SCHEMA-01", f"{op_id}: {r.examples} responses conform to {path.name}",
                                       details=details, **skw))
    return verdicts
