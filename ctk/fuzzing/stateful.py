"""GEN-02: a model-based (hypothesis RuleBasedStateMachine) test of a catalog's idempotent mutations.

Each example works in a fresh *root* namespace under the run namespace (``<run>.<m_...>``) with a tiny name
space (namespaces ``a`` ``b``, tables ``t1`` ``t2``, views ``v1`` ``v2``, property keys ``k1`` ``k2``) so
that collisions happen. Rules:

* create / drop namespaces, set namespace properties; create / drop / rename tables and views, commit
  (set-properties) to tables and views - each with a fresh Idempotency-Key; the model (dicts) predicts the
  status (200 / 204 / 404 / 409) and the effect;
* ``retry``: send an earlier mutation again with its key and payload (within half the advertised key
  lifetime): the stored status comes back and nothing changes;
* ``retry_after_fault``: a mutation whose answer is lost after commit (``lose_answer``: control API
  ``fail-after-commit`` or the interposer's ``replace_status``) or that fails before persisting
  (``fail_before``, control API only), then retried with the same key: executed exactly once. Not used when
  the context has no fault injector;
* ``reuse_key``: an earlier key with another payload: a 4xx (or the original answer) and no effect.

After every step the resources the step touched are read back over HTTP and compared with the model; at the
end of each example the whole root (list + load) is compared. On a mismatch hypothesis shrinks the sequence;
the minimal one becomes a runnable scenario (`ctk/scenarios` format) printed in the verdict and written to
``report_dir`` when given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctk.core.behaviours import Behaviour, check
from ctk.core.verdicts import Verdict
from ctk.client.transport import ns_path, table_path, view_path
from ctk.catalog import (Catalog, PrerequisiteError, create_table_body, create_view_body, drop_tree, ident,
                         set_properties_update)
from ctk.catalog.state import current
from ctk.core.exchange import Exchange, render_exchanges
from ctk.client.keys import new_key

NSS = ("a", "b")
TABLES = ("t1", "t2")
VIEWS = ("v1", "v2")
KEYS = ("k1", "k2")
VALUES = ("x", "y")
STORED = (400, 404, 409, 422)


@dataclass
class StatefulOptions:
    examples: int = 10            # hypothesis max_examples (sequences)
    steps: int = 12               # stateful_step_count (rules per sequence)
    seed: int | None = None       # None: derandomized
    time_budget: float = 60.0     # seconds; after it no new sequence does anything
    shrink_budget: float = 20.0   # extra seconds for shrinking a failure
    report_dir: str | None = None  # where to write the minimal failing scenario (YAML)
    faults: bool = True           # use the retry-after-fault rule when the context can inject faults
    counters: bool = True         # check a replay executes nothing with the control API's counters, when present


# --------------------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------------------

@dataclass
class Model:
    ns: dict[str, dict[str, str]] = field(default_factory=dict)              # child -> properties
    tables: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    views: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def objects(self, kind: str) -> dict[tuple[str, str], dict[str, str]]:
        return self.tables if kind == "table" else self.views

    def nonempty(self, n: str) -> bool:
        return any(k[0] == n for k in self.tables) or any(k[0] == n for k in self.views)


@dataclass
class Mut:
    """One mutation: how to send it, what the model expects, and how it changes the model."""
    op: str
    method: str
    path: str                     # relative to /v1/{prefix}
    body: Any
    params: dict | None
    expect: tuple[int, ...]       # acceptable statuses given the model at send time
    apply: Any                    # callable(model) applied when the answer is a success
    touched: list[tuple]          # ("ns", n) / ("table", n, t) / ("view", n, v)
    text: str                     # human-readable
    alt_body: Any = None          # another payload for the same operation and resource
    key: str = ""
    index: int = 0                # number within the sequence (scenario key)
    status: int | None = None     # the status the key is finalized with (None: not finalized)
    sent_at: float = 0.0


# --------------------------------------------------------------------------------------------------------
# Scenario text
# --------------------------------------------------------------------------------------------------------

def _ph_ns(n: str | None = None) -> list[str]:
    return ["{ns}", "{child}"] + ([n] if n else [])


def _ph_value(value: Any, root: tuple[str, ...]) -> Any:
    """Replace the concrete root namespace by placeholders in paths and bodies."""
    enc = ns_path(root)
    if isinstance(value, str):
        return value.replace(enc, "{ns}%1F{child}")
    if isinstance(value, list):
        if [*value[:len(root)]] == list(root) and all(isinstance(v, str) for v in value):
            return _ph_ns() + list(value[len(root):])
        return [_ph_value(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _ph_value(v, root) for k, v in value.items()}
    return value


def _scenario_key(index: int) -> str:
    return f"{index:08x}-0000-7000-8000-00{{uid}}"


def scenario_yaml(steps: list[dict], observes: list[dict], endpoint: str, uses_faults: bool, why: str,
                  uses_counters: bool = False) -> str:
    import yaml

    doc = {"scenarios": [{
        "name": f"GEN-02 minimal failing sequence ({endpoint})",
        "requirement": "GEN-02",
        "endpoint": endpoint,
        "behaviour": "model-based",
        "description": f"Found by the kit's model-based test and shrunk by hypothesis. {why}"[:900],
        "requires": ["idempotency"] + (["faults"] if uses_faults else []) + (["control-api"] if uses_counters else []),
        "setup": [{"request": {"method": "POST", "path": "namespaces", "body": {"namespace": ["{ns}", "{child}"]}},
                   "label": "root namespace of the sequence", "expect": {"status": [200]}}],
        "steps": steps + observes,
    }]}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)


# --------------------------------------------------------------------------------------------------------
# The state machine
# --------------------------------------------------------------------------------------------------------

class _Found(AssertionError):
    pass


@dataclass
class _Failure:
    kind: str
    text: str
    steps: list[str]
    scenario: str
    exchanges: list[Exchange]


@dataclass
class _Shared:
    ctx: Any
    opts: StatefulOptions
    deadline: float
    lifetime: float | None
    can_lose: bool
    can_fail_before: bool
    counters: bool = False
    failure: _Failure | None = None
    failure_at: float | None = None
    sequences: int = 0
    steps: int = 0
    budget_hit: bool = False


def build_machine(shared: _Shared) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

    ns_st, table_st, view_st = st.sampled_from(NSS), st.sampled_from(TABLES), st.sampled_from(VIEWS)
    kind_st = st.sampled_from(["table", "view"])
    key_st, val_st = st.sampled_from(KEYS), st.sampled_from(VALUES)
    props_st = st.dictionaries(key_st, val_st, max_size=1)
    fault_modes = (["lose"] if shared.can_lose else []) + (["before"] if shared.can_fail_before else [])

    class CatalogModel(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.client = shared.ctx.client
            self.cat = Catalog(self.client)
            self.model = Model()
            self.history: list[Mut] = []
            self.lines: list[str] = []
            self.scen: list[dict] = []
            self.touched: list[tuple] = []
            self.mark = len(self.client.exchanges)
            self.uses_faults = False
            self.uses_counters = False
            self.failed = False
            now = time.monotonic()
            self.idle = (now > shared.deadline and shared.failure is None) or (
                shared.failure_at is not None and now > shared.failure_at + shared.opts.shrink_budget)
            if self.idle:
                shared.budget_hit = True
                return
            shared.sequences += 1
            self.root = tuple(shared.ctx.namespace) + (shared.ctx.unique("m"),)
            self.cat.create_namespace(self.root)

        # --- helpers ------------------------------------------------------------------------------
        def _ns(self, n: str) -> tuple[str, ...]:
            return self.root + (n,)

        def _fail(self, kind: str, text: str, op: str | None = None, pending: Mut | None = None) -> None:
            """Record the failure (with its scenario) and stop the sequence. ``pending``: the step whose expected
            success did not happen; the scenario's final observations then include its effect."""
            import copy

            self.failed = True
            model = copy.deepcopy(self.model)
            if pending is not None and all(200 <= s < 300 for s in pending.expect):
                pending.apply(model)
            observes = self._observes(model)
            why = text.splitlines()[0]
            endpoint = op or next((m.op for m in reversed(self.history)), "createNamespace")
            f = _Failure(kind, text, list(self.lines),
                         scenario_yaml(self.scen, observes, endpoint, self.uses_faults, why, self.uses_counters),
                         self.client.exchanges_since(self.mark))
            shared.failure = f
            if shared.failure_at is None:
                shared.failure_at = time.monotonic()
            raise _Found(text)

        def _observes(self, model: Model) -> list[dict]:
            out: list[dict] = []
            for t in dict.fromkeys(self.touched):
                if t[0] == "ns":
                    exists = t[1] in model.ns
                    out.append({"observe": "namespace_exists", "args": {"namespace": _ph_ns(t[1])},
                                "label": "the model's namespace", "expect": {"value": exists}})
                    for k in KEYS:
                        if exists:
                            out.append({"observe": "property", "args": {"kind": "namespace",
                                                                        "namespace": _ph_ns(t[1]), "key": k},
                                        "expect": {"value": model.ns[t[1]].get(k)}})
                else:
                    kind, n, name = t
                    objs = model.objects(kind)
                    exists = (n, name) in objs
                    q = "table_exists" if kind == "table" else "view_exists"
                    out.append({"observe": q, "args": {"namespace": _ph_ns(n), kind: name},
                                "label": f"the model's {kind}", "expect": {"value": exists}})
                    if exists and kind == "table":
                        for k in KEYS:
                            out.append({"observe": "property", "args": {"kind": "table", "namespace": _ph_ns(n),
                                                                        "table": name, "key": k},
                                        "expect": {"value": objs[(n, name)].get(k)}})
            return out

        def _scen_request(self, m: Mut, body: Any, label: str, expect: list) -> None:
            req: dict = {"method": m.method, "path": _ph_value(m.path, self.root), "key": _scenario_key(m.index)}
            if body is not None:
                req["body"] = _ph_value(body, self.root)
            if m.params:
                req["path"] += "?" + "&".join(f"{k}={v}" for k, v in m.params.items())
            self.scen.append({"request": req, "label": label[:200], "expect": {"status": expect}})

        def _send(self, m: Mut, body: Any, label: str) -> Exchange:
            return self.client.request(m.method, m.path, json=body, params=m.params, idempotency_key=m.key,
                                       label=f"model: {label}")

        def _new(self, m: Mut) -> Mut:
            m.key, m.index, m.sent_at = new_key(), len(self.history) + 1, time.monotonic()
            return m

        def _ok(self, status: int | None) -> bool:
            return status is not None and 200 <= status < 300

        def _run(self, m: Mut) -> None:
            if self.idle:
                return
            shared.steps += 1
            self._new(m)
            self.lines.append(f"{m.index}. {m.text} -> expect {'/'.join(map(str, m.expect))}")
            self._scen_request(m, m.body, f"#{m.index} {m.text}", list(m.expect))
            ex = self._send(m, m.body, m.text)
            self.history.append(m)
            self.touched += m.touched
            self.lines[-1] += f", got {ex.status if ex.status is not None else 'no answer'}"
            if ex.status not in m.expect:
                self._fail("unexpected-status", f"step {m.index} ({m.text}) answered {_st(ex)}; the model expects "
                                                f"{'/'.join(map(str, m.expect))}", m.op, m)
            m.status = ex.status if (self._ok(ex.status) or ex.status in STORED) else None
            if self._ok(ex.status):
                m.apply(self.model)

        # --- mutations ----------------------------------------------------------------------------
        def m_create_ns(self, n: str, props: dict) -> Mut:
            exists = n in self.model.ns

            def apply(md: Model) -> None:
                md.ns[n] = dict(props)

            return Mut("createNamespace", "POST", "namespaces", {"namespace": list(self._ns(n)), "properties": props},
                       None, (409,) if exists else (200,), apply, [("ns", n)], f"create namespace {n} {props}",
                       alt_body={"namespace": list(self._ns(n)), "properties": {"k1": "other"}})

        def m_drop_ns(self, n: str) -> Mut:
            exp = (404,) if n not in self.model.ns else ((409,) if self.model.nonempty(n) else (204, 200))
            return Mut("dropNamespace", "DELETE", f"namespaces/{ns_path(self._ns(n))}", None, None, exp,
                       lambda md: md.ns.pop(n, None), [("ns", n)], f"drop namespace {n}")

        def m_ns_props(self, n: str, k: str, v: str) -> Mut:
            def apply(md: Model) -> None:
                md.ns[n][k] = v

            body = {"removals": [], "updates": {k: v}}
            return Mut("updateProperties", "POST", f"namespaces/{ns_path(self._ns(n))}/properties", body, None,
                       (200,) if n in self.model.ns else (404,), apply, [("ns", n)],
                       f"set namespace {n} property {k}={v}",
                       alt_body={"removals": [], "updates": {k: v + "-other"}})

        def m_create(self, kind: str, n: str, name: str, props: dict) -> Mut:
            objs = self.model.objects(kind)
            exp = (404,) if n not in self.model.ns else ((409,) if (n, name) in objs else (200,))
            ns = self._ns(n)
            if kind == "table":
                body, alt = create_table_body(name, props), create_table_body(name, {"k1": "other"})
                path, op = f"namespaces/{ns_path(ns)}/tables", "createTable"
            else:
                body, alt = create_view_body(ns, name, properties=props), create_view_body(ns, name, "SELECT 2 AS id",
                                                                                          {"k1": "other"})
                path, op = f"namespaces/{ns_path(ns)}/views", "createView"

            def apply(md: Model) -> None:
                md.objects(kind)[(n, name)] = dict(props)

            return Mut(op, "POST", path, body, None, exp, apply, [(kind, n, name), ("ns", n)],
                       f"create {kind} {n}.{name} {props}", alt_body=alt)

        def m_drop(self, kind: str, n: str, name: str) -> Mut:
            objs = self.model.objects(kind)
            ns = self._ns(n)
            exp = (204, 200) if (n, name) in objs else (404,)
            if kind == "table":
                path, op, params = table_path(ns, name), "dropTable", {"purgeRequested": "false"}
            else:
                path, op, params = view_path(ns, name), "dropView", None
            return Mut(op, "DELETE", path, None, params, exp, lambda md: md.objects(kind).pop((n, name), None),
                       [(kind, n, name)], f"drop {kind} {n}.{name}")

        def m_rename(self, kind: str, n: str, name: str, n2: str, name2: str) -> Mut:
            objs = self.model.objects(kind)
            src, dst = (n, name), (n2, name2)
            errors = set()
            if src not in objs:
                errors.add(404)
            if n2 not in self.model.ns:
                errors.add(404)
            if dst in objs:
                errors.add(409)
            exp = tuple(sorted(errors)) if errors else (204, 200)
            if src == dst and src in objs:
                exp = (409, 204, 200, 400)

            def apply(md: Model) -> None:
                o = md.objects(kind)
                if src != dst and src in o:
                    o[dst] = o.pop(src)

            body = {"source": ident(self._ns(n), name), "destination": ident(self._ns(n2), name2)}
            return Mut("renameTable" if kind == "table" else "renameView", "POST",
                       "tables/rename" if kind == "table" else "views/rename", body, None, exp, apply,
                       [(kind, n, name), (kind, n2, name2)], f"rename {kind} {n}.{name} to {n2}.{name2}")

        def m_commit(self, kind: str, n: str, name: str, k: str, v: str) -> Mut:
            objs = self.model.objects(kind)
            ns = self._ns(n)

            def body(val: str) -> dict:
                return {"identifier": ident(ns, name), "requirements": [],
                        "updates": [set_properties_update({k: val})]}

            def apply(md: Model) -> None:
                md.objects(kind)[(n, name)][k] = v

            return Mut("updateTable" if kind == "table" else "replaceView", "POST",
                       table_path(ns, name) if kind == "table" else view_path(ns, name), body(v), None,
                       (200,) if (n, name) in objs else (404,), apply, [(kind, n, name)],
                       f"commit {kind} {n}.{name} set {k}={v}", alt_body=body(v + "-other"))

        # --- rules --------------------------------------------------------------------------------
        @rule(n=ns_st, props=props_st)
        def create_namespace(self, n, props):
            self._run(self.m_create_ns(n, props))

        @rule(n=ns_st)
        def drop_namespace(self, n):
            self._run(self.m_drop_ns(n))

        @rule(n=ns_st, k=key_st, v=val_st)
        def set_namespace_property(self, n, k, v):
            self._run(self.m_ns_props(n, k, v))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1), props=props_st)
        def create_object(self, kind, n, i, props):
            self._run(self.m_create(kind, n, _name(kind, i), props))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1))
        def drop_object(self, kind, n, i):
            self._run(self.m_drop(kind, n, _name(kind, i)))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1), n2=ns_st, i2=st.integers(0, 1))
        def rename_object(self, kind, n, i, n2, i2):
            self._run(self.m_rename(kind, n, _name(kind, i), n2, _name(kind, i2)))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1), k=key_st, v=val_st)
        def commit_object(self, kind, n, i, k, v):
            self._run(self.m_commit(kind, n, _name(kind, i), k, v))

        def _eligible(self, need_alt: bool = False) -> list[Mut]:
            now = time.monotonic()
            return [m for m in self.history if m.status is not None and (not need_alt or m.alt_body is not None)
                    and (shared.lifetime is None or now - m.sent_at < shared.lifetime / 2)]

        @precondition(lambda self: not self.idle and bool(self._eligible()))
        @rule(data=st.data())
        def retry(self, data):
            self._retry(data.draw(st.sampled_from(self._eligible()), label="retried mutation"))

        def _retry(self, m: Mut) -> None:
            shared.steps += 1
            self.lines.append(f"   retry #{m.index} ({m.text}) with its key -> expect {m.status}")
            c0 = shared.ctx.faults.executions() if shared.counters else None
            if c0 is not None:
                self.uses_counters = True
                self.scen.append({"observe": "executions", "save": f"runs_{len(self.scen)}",
                                  "label": "execution counter before the retry"})
                saved = self.scen[-1]["save"]
            self._scen_request(m, m.body, f"retry #{m.index} with the same key and payload", [m.status])
            ex = self._send(m, m.body, f"retry #{m.index} with the same key")
            self.lines[-1] += f", got {_st(ex)}"
            c1 = shared.ctx.faults.executions() if c0 is not None else None
            if c0 is not None:
                self.scen.append({"observe": "executions", "label": "a replay executes nothing",
                                  "expect": {"delta_from": saved, "value": 0}})
            if ex.status != m.status:
                self._fail("replay-status", f"the retry of step {m.index} ({m.text}) with the same key answered "
                                            f"{_st(ex)}; the key was finalized with {m.status}", m.op)
            if c0 is not None and c1 is not None and c1.get("total", 0) != c0.get("total", 0):
                self._fail("re-executed", f"the retry of step {m.index} ({m.text}) with the same key answered "
                                          f"{_st(ex)} but executed again (execution counter {c0.get('total')} -> "
                                          f"{c1.get('total')})", m.op)

        @precondition(lambda self: not self.idle and bool(self._eligible()))
        @rule()
        def retry_last(self):
            self._retry(self._eligible()[-1])

        @precondition(lambda self: not self.idle and bool(self._eligible(need_alt=True)))
        @rule(data=st.data())
        def reuse_key(self, data):
            m = data.draw(st.sampled_from(self._eligible(need_alt=True)), label="key reused")
            shared.steps += 1
            allowed = sorted({m.status} | set(range(400, 500)))
            self.lines.append(f"   reuse the key of #{m.index} ({m.text}) with another payload -> expect a 4xx "
                              f"or {m.status}, no effect")
            self._scen_request(m, m.alt_body, f"the key of #{m.index} with another payload",
                               [s for s in (400, 409, 422, m.status) if s] if m.status else [422])
            ex = self._send(m, m.alt_body, f"reuse the key of #{m.index} with another payload")
            self.lines[-1] += f", got {_st(ex)}"
            if ex.status not in allowed:
                self._fail("key-reuse", f"the key of step {m.index} ({m.text}) sent with another payload answered "
                                        f"{_st(ex)}; expected a 4xx (422) or the original {m.status}, no effect")
            self.touched += m.touched

        @precondition(lambda self: not self.idle and "lose" in fault_modes)
        @rule(data=st.data())
        def retry_after_lost_answer(self, data):
            self._retry_after_fault(data, "lose")

        @precondition(lambda self: not self.idle and "before" in fault_modes)
        @rule(data=st.data())
        def retry_after_failure_before(self, data):
            self._retry_after_fault(data, "before")

        def _retry_after_fault(self, data, mode):
            from ctk.checks.faults import FaultMatch, FaultUnsupported

            which = data.draw(st.sampled_from(["create_ns", "ns_props", "create_table", "commit_table",
                                               "drop_table", "create_view"]), label="faulted mutation")
            n = data.draw(ns_st, label="n")
            if which == "create_ns":
                m = self.m_create_ns(n, {})
            elif which == "ns_props":
                m = self.m_ns_props(n, data.draw(key_st), data.draw(val_st))
            elif which == "create_table":
                m = self.m_create("table", n, data.draw(table_st), {})
            elif which == "commit_table":
                m = self.m_commit("table", n, data.draw(table_st), data.draw(key_st), data.draw(val_st))
            elif which == "drop_table":
                m = self.m_drop("table", n, data.draw(table_st))
            else:
                m = self.m_create("view", n, data.draw(view_st), {})
            shared.steps += 1
            self._new(m)
            self.history.append(m)
            self.touched += m.touched
            self.uses_faults = True
            faults = shared.ctx.faults
            match = FaultMatch(m.op, m.method, m.path, m.key)
            action = ({"fault": {"action": "fail_after_commit", "status": 503}} if mode == "lose"
                      else {"fault": {"action": "fail_before", "status": 503}})
            try:
                if mode == "lose":
                    faults.lose_answer(match, "503")
                else:
                    faults.fail_before(match, 503)
            except FaultUnsupported:
                return
            what = "answer lost after commit" if mode == "lose" else "fails before persisting"
            self.lines.append(f"{m.index}. {m.text} ({what}) then retried with the same key -> expect "
                              f"{'/'.join(map(str, m.expect))}")
            self.scen.append({**action, "label": f"#{m.index}: {what}"})
            self._scen_request(m, m.body, f"#{m.index} {m.text} ({what})", [500, 502, 503, 504, "none"])
            first = self._send(m, m.body, f"{m.text} ({what})")
            try:
                faults.clear()
            except Exception:  # noqa: BLE001 - best effort
                pass
            if first.status is not None and first.status < 500:
                # the fault did not apply: an ordinary answer
                self.lines[-1] += f", the faulted attempt answered {_st(first)}"
                if first.status not in m.expect:
                    self._fail("unexpected-status", f"step {m.index} ({m.text}) answered {_st(first)}; the model "
                                                    f"expects {'/'.join(map(str, m.expect))}", m.op, m)
                m.status = first.status
                if self._ok(first.status):
                    m.apply(self.model)
                return
            self._scen_request(m, m.body, f"retry #{m.index} with the same key", list(m.expect))
            again = self._send(m, m.body, f"retry #{m.index} after the fault")
            self.lines[-1] += f", got {_st(first)} then {_st(again)}"
            if again.status not in m.expect:
                self._fail("retry-after-fault", f"step {m.index} ({m.text}, {what}): the retry with the same key "
                                                f"answered {_st(again)}; the model expects "
                                                f"{'/'.join(map(str, m.expect))} (executed exactly once)", m.op, m)
            m.status = again.status if (self._ok(again.status) or again.status in STORED) else None
            if self._ok(again.status):
                m.apply(self.model)

        # --- invariants ---------------------------------------------------------------------------
        @invariant()
        def touched_match_model(self):
            if self.idle or self.failed or not self.history:
                return
            last = self.history[-1]
            for t in dict.fromkeys(last.touched):
                self._compare(t)

        def _compare(self, t: tuple) -> None:
            if t[0] == "ns":
                doc = current(self.client, self._ns(t[1]))
                want = self.model.ns.get(t[1])
                if (doc is None) != (want is None):
                    self._fail("state", f"after step {self.history[-1].index}: namespace {t[1]} "
                                        f"{'exists' if doc is not None else 'is absent'}; the model says "
                                        f"{'present' if want is not None else 'absent'}")
                if doc is not None and want is not None:
                    got = {k: v for k, v in (doc.get("properties") or {}).items() if k in KEYS}
                    if got != want:
                        self._fail("state", f"after step {self.history[-1].index}: namespace {t[1]} has properties "
                                            f"{got}; the model says {want}")
                return
            kind, n, name = t
            doc = current(self.client, self._ns(n), name, kind)
            want = self.model.objects(kind).get((n, name))
            if (doc is None) != (want is None):
                self._fail("state", f"after step {self.history[-1].index}: {kind} {n}.{name} "
                                    f"{'exists' if doc is not None else 'is absent'}; the model says "
                                    f"{'present' if want is not None else 'absent'}")
            if doc is not None and want is not None:
                props = ((doc.get("metadata") or {}).get("properties") or {})
                got = {k: v for k, v in props.items() if k in KEYS}
                if got != want:
                    self._fail("state", f"after step {self.history[-1].index}: {kind} {n}.{name} has properties "
                                        f"{got}; the model says {want}")

        def _full_compare(self) -> None:
            listed = {tuple(x)[-1] for x in (self.cat.list_namespaces(self.root) or [])}
            if listed != set(self.model.ns):
                self._fail("state", f"at the end: namespaces {sorted(listed)}; the model says {sorted(self.model.ns)}")
            for n in self.model.ns:
                for kind, lister in (("table", self.cat.list_tables), ("view", self.cat.list_views)):
                    got = set(lister(self._ns(n)) or [])
                    want = {k[1] for k in self.model.objects(kind) if k[0] == n}
                    if got != want:
                        self._fail("state", f"at the end: {kind}s in {n}: {sorted(got)}; the model says "
                                            f"{sorted(want)}")

        def teardown(self):
            if self.idle:
                return
            try:
                if not self.failed and self.history:
                    self._full_compare()
            finally:
                self._cleanup()

        def _cleanup(self) -> None:
            c = self.cat
            try:
                for (n, t) in list(self.model.tables):
                    c.drop_table(self._ns(n), t, purge=True, label="cleanup")
                for (n, v) in list(self.model.views):
                    c.drop_view(self._ns(n), v, label="cleanup")
                for n in list(self.model.ns):
                    c.drop_namespace(self._ns(n), label="cleanup")
                ex = c.drop_namespace(self.root, label="cleanup")
                if ex.status not in (200, 204):
                    raise PrerequisiteError("root not empty")
            except PrerequisiteError:
                drop_tree(self.client, self.root)

    return CatalogModel


def _name(kind: str, i: int) -> str:
    return (TABLES if kind == "table" else VIEWS)[i]


def _st(ex: Exchange) -> str:
    return f"no answer ({(ex.error or '').split(':', 1)[0]})" if ex.status is None else str(ex.status)


# --------------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------------

@check(requirement="GEN-02", behaviour=Behaviour.MODEL_BASED)
def run_stateful_check(ctx: Any, examples: int = 10, steps: int = 12, seed: int | None = None,
                       time_budget: float = 60.0, report_dir: str | Path | None = None,
                       options: StatefulOptions | None = None) -> list[Verdict]:
    """GEN-02: one verdict. ``examples`` sequences of up to ``steps`` rules; ``seed`` (None: derandomized);
    ``time_budget`` seconds (+ a shrink budget); the minimal failing scenario is written to ``report_dir``."""
    from hypothesis import HealthCheck, Phase, Verbosity, settings
    from hypothesis.errors import Flaky
    from hypothesis.stateful import run_state_machine_as_test

    opts = options or StatefulOptions(examples=examples, steps=steps, seed=seed, time_budget=time_budget,
                                      report_dir=str(report_dir) if report_dir else None)
    kw = dict(endpoint=None, behaviour="model-based")
    if not ctx.idempotency_supported:
        why = getattr(ctx.discovery, "lifetime_error", None) or "no discovery"
        return [Verdict.unsupported("GEN-02", "the target does not advertise Idempotency-Key support "
                                              f"(idempotency-key-lifetime: {why})", **kw)]
    placement = getattr(ctx.client, "placement", None)
    if placement is not None and placement.nested is False:   # the model's namespaces are children of a root
        return [Verdict.inconclusive("GEN-02", "the model-based run needs nested namespaces, which the target does "
                                              f"not support ({placement.nesting_note})", **kw)]
    lifetime = getattr(ctx.discovery, "lifetime", None)
    faults = ctx.faults
    shared = _Shared(ctx, opts, time.monotonic() + opts.time_budget,
                     lifetime.total_seconds() if lifetime is not None else None,
                     can_lose=opts.faults and faults.supports("lose_answer:503"),
                     can_fail_before=opts.faults and faults.supports("fail_before"))
    shared.counters = opts.counters and faults.executions() is not None
    machine = build_machine(shared)
    if opts.seed is not None:
        machine._hypothesis_internal_use_seed = opts.seed  # what @hypothesis.seed sets
    cfg = settings(max_examples=max(1, int(opts.examples)), stateful_step_count=max(1, int(opts.steps)),
                   deadline=None, database=None, derandomize=opts.seed is None, print_blob=False,
                   report_multiple_bugs=False, verbosity=Verbosity.quiet,
                   phases=(Phase.explicit, Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    t0 = time.monotonic()
    error = None
    try:
        run_state_machine_as_test(machine, settings=cfg)
    except _Found:
        pass
    except Flaky as exc:
        # a failure that did not reproduce is recorded in shared.failure; otherwise the budget made later runs
        # of the same example idle (nothing failed)
        if shared.failure is None and not shared.budget_hit:
            error = f"{type(exc).__name__}: {str(exc)[:400]}"
    except AssertionError as exc:
        if shared.failure is None:
            error = f"{type(exc).__name__}: {str(exc)[:400]}"
    except PrerequisiteError as exc:
        error = f"a setup step failed: {exc}"
    except Exception as exc:  # noqa: BLE001 - hypothesis internals, transport
        if shared.failure is None:
            error = f"{type(exc).__name__}: {str(exc)[:400]}"
    finally:
        try:
            faults.clear()
        except Exception:  # noqa: BLE001
            pass
    took = time.monotonic() - t0
    details = {"sequences": shared.sequences, "steps": shared.steps, "seconds": round(took, 2), "seed": opts.seed,
               "faults": [m for m, ok in (("lose_answer", shared.can_lose), ("fail_before", shared.can_fail_before))
                          if ok], "budget_hit": shared.budget_hit}
    if shared.failure is not None:
        f = shared.failure
        path = None
        if opts.report_dir:
            d = Path(opts.report_dir)
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"gen02_minimal_{int(time.time())}.yaml"
            path.write_text(f.scenario, encoding="utf-8")
            details["scenario_file"] = str(path)
        details["scenario"] = f.scenario
        details["sequence"] = f.steps
        exs = [e.to_dict() for e in f.exchanges if (e.label or "").startswith("model:")][-12:]
        text = (f"expected: after every step the catalog's state matches the model (replays change nothing, a "
                f"retried lost commit executes once)\nhappened: {f.text}\n\nminimal failing sequence "
                f"(shrunk by hypothesis):\n  " + "\n  ".join(f.steps)
                + (f"\n\nscenario written to {path}" if path else "")
                + "\n\nrunnable scenario (put it in scenarios/):\n" + f.scenario
                + "\nexchanges (mutations of the minimal sequence):\n" + render_exchanges(exs, limit=600))
        return [Verdict.broken("GEN-02", text, classification=f.kind, exchanges=exs, details=details, **kw)]
    if error:
        return [Verdict.inconclusive("GEN-02", f"the model-based run stopped: {error}", details=details, **kw)]
    if shared.steps == 0:
        return [Verdict.inconclusive("GEN-02", "no step ran within the time budget", details=details, **kw)]
    return [Verdict.ok("GEN-02", f"{shared.sequences} random sequences ({shared.steps} steps, faults: "
                                 f"{', '.join(details['faults']) or 'none'}) kept the catalog equal to the model",
                       classification="model-equal", details=details, **kw)]


__all__ = ["StatefulOptions", "run_stateful_check", "scenario_yaml", "Model"]
