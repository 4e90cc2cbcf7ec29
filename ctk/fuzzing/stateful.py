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

Blame: a minimal sequence that fails with no retry, replay or fault in it shows the catalog's plain semantics,
not its idempotency: a status other than the spec documents is SEM-01, a state other than the acknowledged
mutations produce SEM-02. GEN-02 keeps what a retry, a replay or a fault took part in; to still decide it on
such a catalog the model is run again steering around the mismatch found (``rounds``). Namespace properties
given at create and not stored are allowed by the spec ("if supported by the server"): the model adopts them
and the SEM-02 verdict classifies it; a rename to the same name may be answered 409, 400 or 2xx (the spec does
not speak to it), and must leave the object where it was.

On a target that advertises no Idempotency-Key support the model runs in its plain mode: no key, retry, key
reuse or fault is sent; SEM-01/02 are decided, GEN-02 (retries with keys) is unsupported. Only operations the
target offers are used: one missing from an advertised /v1/config ``endpoints`` list is skipped, and one
answered as not routed (`ctk.checks.common.not_routed`: 404/405 without an error model, 501,
NoSuchOperation-like) is dropped from the machine, never a SEM-01 deviation, and named in the verdicts as what
it is: "advertised but not served (DISC-05)" where the catalog claims it (`claimed_by`: its endpoints list, or
the spec's default set without one; the run's DISC-05 verdict is the finding), "not offered" where it does not.
The model's namespaces live under the run namespace (the placement's), so a catalog that allows tables only below
certain top-level namespaces (run with --ctk-parent-namespace) works.

How much is tried is counted (``examples`` sequences of up to ``steps`` rules, ``shrinks`` sequences for
shrinking), never timed, so that a busy machine gives the verdicts of a quiet one; ``backstop_s``
(--ctk-gen-budget) only catches a hang - no request answered for that long (ctk.fuzzing.backstop), however long
the run takes - and what it cuts short is inconclusive, naming the option.
"""

from __future__ import annotations

import copy
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
from ctk.checks.common import ADVERTISED_UNSERVED, DISC_UNSERVED, baseline_blocked, claimed_by, not_routed
from ctk.checks.context import CheckContext
from ctk.fuzzing.backstop import Progress
from ctk.openapi import forbidden

NSS = ("a", "b")
TABLES = ("t1", "t2")
VIEWS = ("v1", "v2")
KEYS = ("k1", "k2")
VALUES = ("x", "y")
STORED = (400, 404, 409, 422)
RECENT = 4                        # a retry picks one of the last RECENT finalized mutations
REPLAY_KINDS = ("replay-status", "re-executed", "retry-after-fault", "key-reuse")
SEMANTICS = {"unexpected-status": "SEM-01", "state": "SEM-02"}
# a create of an identifier that exists answered 2xx is judged as the semantic checks judge it (NS-02, TBL-02,
# VIEW-02: the client was told its create happened): SEM-02; other 2xx where 409 is documented stay SEM-01
CREATES = frozenset({"createNamespace", "createTable", "createView"})
# operation -> (method, template under /v1/{prefix}/): the /v1/config endpoints-list entry that gates it
OPERATIONS = {
    "createNamespace": ("POST", "namespaces"),
    "dropNamespace": ("DELETE", "namespaces/{namespace}"),
    "updateProperties": ("POST", "namespaces/{namespace}/properties"),
    "createTable": ("POST", "namespaces/{namespace}/tables"),
    "dropTable": ("DELETE", "namespaces/{namespace}/tables/{table}"),
    "renameTable": ("POST", "tables/rename"),
    "updateTable": ("POST", "namespaces/{namespace}/tables/{table}"),
    "createView": ("POST", "namespaces/{namespace}/views"),
    "dropView": ("DELETE", "namespaces/{namespace}/views/{view}"),
    "renameView": ("POST", "views/rename"),
    "replaceView": ("POST", "namespaces/{namespace}/views/{view}"),
}
NS_PROPS_NOTE = ("namespace properties given at create were not stored (allowed by the merged spec: "
                 "\u201cProperties stored on the namespace, if supported by the server\u201d); the model adopted it")


@dataclass
class StatefulOptions:
    examples: int = 10            # hypothesis max_examples (sequences): how much evidence, a count
    steps: int = 12               # stateful_step_count (rules per sequence)
    seed: int | None = None       # None: derandomized
    backstop_s: float = 600.0     # hang backstop (--ctk-gen-budget), never the normal end: cut short = inconclusive
    shrinks: int = 40             # sequences run after the first failure (shrinking), a count
    rounds: int = 3               # model runs: the first, and reruns steering around a semantics mismatch
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
    props: dict | None = None     # properties a create sets (None: not a create)
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
                  uses_counters: bool = False, requirement: str = "GEN-02", keyless: bool = False) -> str:
    import yaml

    doc = {"scenarios": [{
        "name": f"{requirement} minimal failing sequence ({endpoint})",
        "requirement": requirement,
        "endpoint": endpoint,
        "behaviour": "model-based",
        "description": f"Found by the kit's model-based test and shrunk by hypothesis. {why}"[:900],
        "requires": ([] if keyless else ["idempotency"]) + (["faults"] if uses_faults else []) + (["control-api"] if uses_counters else []),
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
    replayed: bool = False        # a retry, a replay (key reuse) or a fault is in the sequence
    signature: tuple = ()         # what the model steers around on a rerun (a semantics mismatch)
    calls: list = field(default_factory=list)   # the plain rules of the sequence (name, args)

    @property
    def requirement(self) -> str:
        if self.replayed or self.kind in REPLAY_KINDS:
            return "GEN-02"
        return SEMANTICS.get(self.kind, "GEN-02")


@dataclass
class _Shared:
    ctx: CheckContext
    opts: StatefulOptions
    progress: Progress            # the hang backstop: stalled once no request was answered for --ctk-gen-budget s
    lifetime: float | None
    can_lose: bool
    can_fail_before: bool
    counters: bool = False
    avoid: set = field(default_factory=set)   # signatures of semantics mismatches found in earlier rounds
    plain_only: bool = False      # no retries, key reuses or faults (a round that decides SEM-01/02 alone)
    keyless: bool = False         # send no Idempotency-Key (a target that does not advertise key support)
    flat: bool = False            # the target does not nest namespaces: the model's are siblings of the run's
    offered: dict = field(default_factory=dict)   # operation -> why it is not offered (not advertised / not routed)
    unserved: set = field(default_factory=set)    # of those, the ones the catalog claims (a DISC-05 finding)
    ops: dict = field(default_factory=dict)       # operation -> {status: count} of the plain mutations judged
    failure: _Failure | None = None
    shrink_runs: int = 0
    sequences: int = 0
    steps: int = 0
    backstop_hit: bool = False
    plain: int = 0                # mutations sent once whose status matched the model (SEM-01 evidence)
    compared: int = 0             # state comparisons after a plain mutation that matched (SEM-02 evidence)
    ns_props_dropped: int = 0     # namespaces whose create properties were not stored (adopted)
    replays: int = 0              # retries and key reuses sent (GEN-02 evidence)
    late: int = 0                 # retries skipped: their key was older than half its lifetime


def _drop_unserved(shared: _Shared, op: str, why: str) -> None:
    """Drop ``op``, answered as not routed, from the machine: one the catalog claims (`claimed_by`) is a DISC-05
    finding ("advertised but not served", named by the run's DISC-05 verdict), one it does not claim is not
    offered."""
    if op in shared.offered:
        return
    claimed = claimed_by(shared.ctx.discovery, *OPERATIONS[op])
    shared.offered[op] = f"answered as not routed: {why}" + (
        f"; the catalog claims it in {claimed} ({DISC_UNSERVED})" if claimed else "")
    if claimed:
        shared.unserved.add(op)


def build_machine(shared: _Shared) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

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
            self.replayed = False     # a retry or a key reuse in this sequence
            self.last_plain = False   # the last rule was a mutation sent once
            self.calls: list[tuple[str, tuple]] = []   # the plain rules called (name, args), to replay them alone
            self.failed = False
            # counted, not timed: after a failure, `shrinks` more sequences; the wall clock only as a hang backstop
            if shared.failure is not None:
                self.idle = shared.shrink_runs >= shared.opts.shrinks
                shared.shrink_runs += 0 if self.idle else 1
            else:
                self.idle = shared.progress.stalled()
                shared.backstop_hit = shared.backstop_hit or self.idle
            link = shared.ctx.db_link_faults
            if link is not None and not self.idle:   # a check waiting to arm a database-link fault gets its turn
                link.db.turns.pause_point()          # between two sequences (ctk.interposer.linklock)
            run = tuple(shared.ctx.namespace)
            # an idle sequence builds mutations, sends none
            self.root = run[:-1] + (f"{run[-1]}_idle",) if shared.flat else run + ("idle",)
            if self.idle:
                return
            shared.sequences += 1
            m = shared.ctx.unique("m")
            if shared.flat:
                # a target without nested namespaces: the model's namespaces are run-unique siblings of the run
                # namespace (``<run>_<m>_a``), as every other check places its namespaces; no root is created
                self.root = run[:-1] + (f"{run[-1]}_{m}",)
                placement = getattr(self.client, "placement", None)
                for n in NSS:
                    if placement is not None:
                        placement.child(f"{m}_{n}")       # registered: the session's cleanup drops them too
            else:
                self.root = run + (m,)
                self.cat.create_namespace(self.root)

        # --- helpers ------------------------------------------------------------------------------
        def _ns(self, n: str) -> tuple[str, ...]:
            if shared.flat:
                return self.root[:-1] + (f"{self.root[-1]}_{n}",)
            return self.root + (n,)

        def _ph_ns(self, n: str | None = None) -> list[str]:
            return ["{ns}%1F{child}_" + n] if shared.flat and n else _ph_ns(n)

        def _fail(self, kind: str, text: str, op: str | None = None, pending: Mut | None = None) -> None:
            """Record the failure (with its scenario) and stop the sequence. ``pending``: the step whose expected
            success did not happen; the scenario's final observations then include its effect."""
            self.failed = True
            model = copy.deepcopy(self.model)
            if pending is not None and all(200 <= s < 300 for s in pending.expect):
                pending.apply(model)
            observes = self._observes(model)
            why = text.splitlines()[0]
            endpoint = op or next((m.op for m in reversed(self.history)), "createNamespace")
            replayed = self.replayed or self.uses_faults
            last = pending or (self.history[-1] if self.history else None)
            signature: tuple = ()
            if last is not None and kind == "unexpected-status":
                signature = ("status", last.op, tuple(last.expect))
            elif last is not None and kind == "state":
                signature = ("state", last.op, bool(last.props))
            f = _Failure(kind, text, list(self.lines), "", self.client.exchanges_since(self.mark), replayed, signature,
                         list(self.calls))
            f.scenario = scenario_yaml(self.scen, observes, endpoint, self.uses_faults, why, self.uses_counters,
                                       requirement=f.requirement, keyless=shared.keyless)
            shared.failure = f
            raise _Found(text)

        def _observes(self, model: Model) -> list[dict]:
            out: list[dict] = []
            for t in dict.fromkeys(self.touched):
                if t[0] == "ns":
                    exists = t[1] in model.ns
                    out.append({"observe": "namespace_exists", "args": {"namespace": self._ph_ns(t[1])},
                                "label": "the model's namespace", "expect": {"value": exists}})
                    for k in KEYS:
                        if exists:
                            out.append({"observe": "property", "args": {"kind": "namespace",
                                                                        "namespace": self._ph_ns(t[1]), "key": k},
                                        "expect": {"value": model.ns[t[1]].get(k)}})
                else:
                    kind, n, name = t
                    objs = model.objects(kind)
                    exists = (n, name) in objs
                    q = "table_exists" if kind == "table" else "view_exists"
                    out.append({"observe": q, "args": {"namespace": self._ph_ns(n), kind: name},
                                "label": f"the model's {kind}", "expect": {"value": exists}})
                    if exists and kind == "table":
                        for k in KEYS:
                            out.append({"observe": "property", "args": {"kind": "table", "namespace": self._ph_ns(n),
                                                                        "table": name, "key": k},
                                        "expect": {"value": objs[(n, name)].get(k)}})
            return out

        def _scen_request(self, m: Mut, body: Any, label: str, expect: list) -> None:
            req: dict = {"method": m.method, "path": _ph_value(m.path, self.root)}
            if not shared.keyless:
                req["key"] = _scenario_key(m.index)
            if body is not None:
                req["body"] = _ph_value(body, self.root)
            if m.params:
                req["path"] += "?" + "&".join(f"{k}={v}" for k, v in m.params.items())
            self.scen.append({"request": req, "label": label[:200], "expect": {"status": expect}})

        def _send(self, m: Mut, body: Any, label: str) -> Exchange:
            # the model's bodies are the kit's own and valid; one that is not says so (X-Ctk-Invalid, best effort)
            return self.client.request(m.method, m.path, json=body, params=m.params,
                                       idempotency_key=None if shared.keyless else m.key, label=f"model: {label}",
                                       invalid=forbidden(m.method, self.client.url_for(m.path), body))

        def _new(self, m: Mut) -> Mut:
            m.key, m.index, m.sent_at = new_key(), len(self.history) + 1, time.monotonic()
            return m

        def _ok(self, status: int | None) -> bool:
            return status is not None and 200 <= status < 300

        def _avoided(self, m: Mut) -> bool:
            """A mutation of the kind a semantics mismatch of an earlier round was found on (the rerun that
            decides GEN-02 on such a catalog steers around it). Creates with properties are sent without them
            by their rules instead."""
            return (("status", m.op, tuple(m.expect)) in shared.avoid
                    or ("state", m.op, bool(m.props)) in shared.avoid)

        def _create_props(self, op: str, props: dict) -> dict:
            return {} if props and ("state", op, True) in shared.avoid else props

        def _run(self, m: Mut) -> None:
            self.last_plain = False
            if self.idle or self._avoided(m) or m.op in shared.offered:
                return
            shared.steps += 1
            self._new(m)
            ex = self._send(m, m.body, m.text)
            why = not_routed(ex)
            if why is not None:
                # the target does not serve the operation at all: dropped from the machine, not a status the model
                # can judge; the model is unchanged (nothing was executed)
                _drop_unserved(shared, m.op, why)
                return
            self.lines.append(f"{m.index}. {m.text} -> expect {'/'.join(map(str, m.expect))}")
            self._scen_request(m, m.body, f"#{m.index} {m.text}", list(m.expect))
            self.history.append(m)
            self.touched += m.touched
            self.lines[-1] += f", got {ex.status if ex.status is not None else 'no answer'}"
            if ex.status not in m.expect and self._ok(ex.status) and set(m.expect) == {409} and m.op in CREATES:
                # a create acknowledged where the identifier exists: the client is told its create happened,
                # which it could not have (the grading of the semantic checks: answered with the old object or
                # over it - a MUST, ctk.checks.semantics.grading.Kind.NOT_DONE), not a status matter
                self._fail("state", f"step {m.index} ({m.text}) answered {_st(ex)}: acknowledged, though the model "
                                    "says the identifier exists (409): the client was told a change happened that "
                                    "could not", m.op)
            if ex.status not in m.expect:
                self._fail("unexpected-status", f"step {m.index} ({m.text}) answered {_st(ex)}; the model expects "
                                                f"{'/'.join(map(str, m.expect))}", m.op, m)
            shared.plain += 1
            per = shared.ops.setdefault(m.op, {})
            per[ex.status] = per.get(ex.status, 0) + 1
            self.last_plain = True
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
                       alt_body={"namespace": list(self._ns(n)), "properties": {"k1": "other"}}, props=dict(props))

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
                       f"create {kind} {n}.{name} {props}", alt_body=alt, props=dict(props))

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
                # a rename to the same name: the merged spec does not speak to it (409 is for "the target
                # identifier to rename to already exists"); any of these answers is allowed, none moves the object
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
        @initialize(n=ns_st, props=props_st)
        def start_with_a_namespace(self, n, props):
            """Every sequence starts by creating one of its namespaces (a plain, judged mutation): otherwise the
            few sequences of a small --ctk-examples may never leave the empty state and judge only 404s."""
            self.create_namespace(n, props)
            if not self.idle and not self.failed and self.history:
                self.touched_match_model()

        @rule(n=ns_st, props=props_st)
        def create_namespace(self, n, props):
            self.calls.append(('create_namespace', (n, props)))
            self._run(self.m_create_ns(n, self._create_props("createNamespace", props)))

        @rule(n=ns_st)
        def drop_namespace(self, n):
            self.calls.append(('drop_namespace', (n,)))
            self._run(self.m_drop_ns(n))

        @rule(n=ns_st, k=key_st, v=val_st)
        def set_namespace_property(self, n, k, v):
            self.calls.append(('set_namespace_property', (n, k, v)))
            self._run(self.m_ns_props(n, k, v))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1), props=props_st)
        def create_object(self, kind, n, i, props):
            self.calls.append(('create_object', (kind, n, i, props)))
            op = "createTable" if kind == "table" else "createView"
            self._run(self.m_create(kind, n, _name(kind, i), self._create_props(op, props)))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1))
        def drop_object(self, kind, n, i):
            self.calls.append(('drop_object', (kind, n, i)))
            self._run(self.m_drop(kind, n, _name(kind, i)))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1), n2=ns_st, i2=st.integers(0, 1))
        def rename_object(self, kind, n, i, n2, i2):
            self.calls.append(('rename_object', (kind, n, i, n2, i2)))
            self._run(self.m_rename(kind, n, _name(kind, i), n2, _name(kind, i2)))

        @rule(kind=kind_st, n=ns_st, i=st.integers(0, 1), k=key_st, v=val_st)
        def commit_object(self, kind, n, i, k, v):
            self.calls.append(('commit_object', (kind, n, i, k, v)))
            self._run(self.m_commit(kind, n, _name(kind, i), k, v))

        def _eligible(self, need_alt: bool = False) -> list[Mut]:
            """The finalized mutations a retry may pick: the last RECENT of them, a count (what hypothesis draws
            from must not depend on the clock, or a busy machine runs other sequences than a quiet one); one
            sent longer than half the key lifetime ago is then skipped at send time (`_too_old`)."""
            if shared.plain_only:
                return []
            return [m for m in self.history if m.status is not None
                    and (not need_alt or m.alt_body is not None)][-RECENT:]

        def _too_old(self, m: Mut, what: str) -> bool:
            age = time.monotonic() - m.sent_at
            if shared.lifetime is not None and age >= shared.lifetime / 2:
                shared.late += 1
                self.lines.append(f"   {what} #{m.index} skipped: sent {age:.1f} s ago, past half the key lifetime")
                return True
            return False

        @precondition(lambda self: not self.idle and bool(self._eligible()))
        @rule(data=st.data())
        def retry(self, data):
            self._retry(data.draw(st.sampled_from(self._eligible()), label="retried mutation"))

        def _retry(self, m: Mut) -> None:
            if self._too_old(m, "retry"):
                return
            shared.steps += 1
            shared.replays += 1
            self.replayed, self.last_plain = True, False
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
            if self._too_old(m, "key reuse of"):
                return
            shared.steps += 1
            shared.replays += 1
            self.replayed, self.last_plain = True, False
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
            # the same mutation as the plain rule sends it: what the catalog does without the fault and the retry
            # is the model's expectation (`_without_replays` sends this call alone to tell the two apart)
            plain: tuple[str, tuple]
            if which == "create_ns":
                m, plain = self.m_create_ns(n, {}), ("create_namespace", (n, {}))
            elif which == "ns_props":
                k, v = data.draw(key_st), data.draw(val_st)
                m, plain = self.m_ns_props(n, k, v), ("set_namespace_property", (n, k, v))
            elif which == "create_table":
                t = data.draw(table_st)
                m, plain = self.m_create("table", n, t, {}), ("create_object", ("table", n, TABLES.index(t), {}))
            elif which == "commit_table":
                t, k, v = data.draw(table_st), data.draw(key_st), data.draw(val_st)
                m = self.m_commit("table", n, t, k, v)
                plain = ("commit_object", ("table", n, TABLES.index(t), k, v))
            elif which == "drop_table":
                t = data.draw(table_st)
                m, plain = self.m_drop("table", n, t), ("drop_object", ("table", n, TABLES.index(t)))
            else:
                w = data.draw(view_st)
                m, plain = self.m_create("view", n, w, {}), ("create_object", ("view", n, VIEWS.index(w), {}))
            self.last_plain = False
            if self._avoided(m) or m.op in shared.offered:
                return
            shared.steps += 1
            self._new(m)
            self.history.append(m)
            self.touched += m.touched
            self.uses_faults = True
            self.calls.append(plain)
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
            why = not_routed(first)
            if why is not None:
                _drop_unserved(shared, m.op, why)
                self.history.remove(m)
                self.touched = self.touched[:len(self.touched) - len(m.touched)]
                self.lines[-1] += f", answered as not routed ({why}): {m.op} dropped from the model"
                return
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
            if self.last_plain:
                shared.compared += 1

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
                    last = self.history[-1]
                    if (got != want and not got and self.last_plain and last.op == "createNamespace"
                            and ("ns", t[1]) in last.touched and last.props and want == last.props):
                        self.model.ns[t[1]] = {}      # allowed: the server does not store properties at create
                        shared.ns_props_dropped += 1
                        self.lines[-1] += f" ({NS_PROPS_NOTE})"
                        return
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
            if shared.flat:
                stem = self.root[-1] + "_"
                listed = {tuple(x)[-1][len(stem):] for x in (self.cat.list_namespaces(self.root[:-1] or None) or [])
                          if tuple(x)[:-1] == self.root[:-1] and tuple(x)[-1].startswith(stem)}
            else:
                listed = {tuple(x)[-1] for x in (self.cat.list_namespaces(self.root) or [])}
            if listed != set(self.model.ns):
                self._fail("state", f"at the end: namespaces {sorted(listed)}; the model says {sorted(self.model.ns)}")
            for n in self.model.ns:
                for kind, lister in (("table", self.cat.list_tables), ("view", self.cat.list_views)):
                    if kind == "view" and "createView" in shared.offered:
                        continue          # the target offers no views: nothing of the model to list
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
                for n in (NSS if shared.flat else list(self.model.ns)):
                    c.drop_namespace(self._ns(n), label="cleanup")
                if not shared.flat:
                    ex = c.drop_namespace(self.root, label="cleanup")
                    if ex.status not in (200, 204):
                        raise PrerequisiteError("root not empty")
            except PrerequisiteError:
                for ns in ([self._ns(n) for n in NSS] if shared.flat else [self.root]):
                    drop_tree(self.client, ns)

    return CatalogModel


def _name(kind: str, i: int) -> str:
    return (TABLES if kind == "table" else VIEWS)[i]


def _st(ex: Exchange) -> str:
    return f"no answer ({(ex.error or '').split(':', 1)[0]})" if ex.status is None else str(ex.status)


# --------------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------------

@check(requirement="GEN-02", behaviour=Behaviour.MODEL_BASED,
       also=(("SEM-01", Behaviour.MODEL_BASED), ("SEM-02", Behaviour.MODEL_BASED)))
def run_stateful_check(ctx: CheckContext, examples: int = 10, steps: int = 12, seed: int | None = None,
                       backstop_s: float = 600.0, report_dir: str | Path | None = None,
                       options: StatefulOptions | None = None) -> list[Verdict]:
    """GEN-02, SEM-01 and SEM-02: one verdict each. ``examples`` sequences of up to ``steps`` rules (counts);
    ``seed`` (None: derandomized); ``backstop_s``: hang backstop in seconds (--ctk-gen-budget); the minimal
    failing scenario is written to ``report_dir``. A minimal failing sequence with no retry, replay or fault in
    it is the catalog's plain semantics (SEM-01: a status, SEM-02: a state); the model then runs again steering
    around it (at most ``rounds`` runs), so that GEN-02 is still decided."""
    opts = options or StatefulOptions(examples=examples, steps=steps, seed=seed, backstop_s=backstop_s,
                                      report_dir=str(report_dir) if report_dir else None)
    kw = dict(endpoint=None, behaviour="model-based")
    keyless = not ctx.idempotency_supported
    keyless_reason = ""
    if keyless:
        # SEM-01/02 apply to every catalog: the model runs in its plain mode (no keys, retries, key reuse or
        # faults) and decides them; GEN-02 (retries with keys) stays unsupported
        why = getattr(ctx.discovery, "lifetime_error", None) or "no discovery"
        keyless_reason = f"the target does not advertise Idempotency-Key support (idempotency-key-lifetime: {why})"
        opts = StatefulOptions(**{**opts.__dict__, "faults": False, "counters": False})
    placement = getattr(ctx.client, "placement", None)
    flat = placement is not None and placement.nested is False   # the model's namespaces go beside the run's
    lifetime = getattr(ctx.discovery, "lifetime", None)
    offered: dict[str, str] = {}            # operations not offered (dropped from the machine), and why
    unserved: set[str] = set()              # of those, the ones the catalog claims (`_drop_unserved`)
    disc = ctx.discovery
    if disc is not None and getattr(disc, "endpoints", None) is not None:
        for op, (method, template) in OPERATIONS.items():
            if not disc.supports(method, template):
                offered[op] = f"{method} /v1/{{prefix}}/{template} is not in the advertised endpoints list"
    for op in OPERATIONS:   # semantics first: a mutation whose plain operation is broken leaves the model
        blocked = None if op in offered else baseline_blocked(ctx, (op,))
        if blocked is not None:
            offered[op] = f"its plain operation is broken ({blocked[0]}): retries are judged only on one that works"
    faults = ctx.faults
    can_lose = opts.faults and faults.supports("lose_answer:503")
    can_fail_before = opts.faults and faults.supports("fail_before")
    counters = opts.counters and faults.executions() is not None
    progress = Progress(ctx.client, opts.backstop_s)
    t0 = time.monotonic()
    avoid: set = set()
    found: dict[str, _Failure] = {}          # SEM-01 / SEM-02: the first minimal failure of each
    runs: list[tuple[_Shared, str | None]] = []
    replay_failure: _Failure | None = None
    stuck = None
    plain_only = keyless
    for _ in range(max(1, int(opts.rounds))):
        shared = _Shared(ctx, opts, progress, lifetime.total_seconds() if lifetime is not None else None,
                         can_lose=can_lose and not plain_only, can_fail_before=can_fail_before and not plain_only,
                         counters=counters, avoid=set(avoid), plain_only=plain_only, keyless=keyless,
                         offered=offered, unserved=unserved, flat=flat)
        error = _run_machine(shared)
        runs.append((shared, error))
        f = shared.failure
        if f is None or error is not None:
            break
        if f.requirement == "GEN-02":
            plain = _without_replays(shared, f)
            if plain is not None:
                f = shared.failure = plain
        if f.requirement == "GEN-02":
            # replay is decided (fail); the next round, without retries or faults, decides SEM-01/02
            replay_failure, plain_only = f, True
            continue
        found.setdefault(f.requirement, f)
        if not f.signature or f.signature in avoid:
            stuck = f
            break
        avoid.add(f.signature)
    took = time.monotonic() - t0
    total = {k: sum(getattr(sh, k) for sh, _ in runs) for k in ("sequences", "steps", "plain", "compared",
                                                              "ns_props_dropped", "replays", "late")}
    last, error = runs[-1]
    backstop_hit = any(sh.backstop_hit for sh, _ in runs)
    details = {"sequences": total["sequences"], "steps": total["steps"], "seconds": round(took, 2),
               "seed": opts.seed, "examples": opts.examples, "steps_per_sequence": opts.steps,
               "faults": [m for m, ok in (("lose_answer", can_lose), ("fail_before", can_fail_before)) if ok],
               "replays": total["replays"], "retries_skipped_late": total["late"],
               "rounds": len(runs), "steered_around": [_steered(a) for a in sorted(avoid)],
               "backstop_hit": backstop_hit, "keyless": keyless, "not_offered": dict(offered),
               "advertised_unserved": sorted(unserved),
               "operations": _merge_ops(sh.ops for sh, _ in runs)}
    if keyless:
        out = [Verdict.unsupported("GEN-02", keyless_reason, details=details, **kw)]
    else:
        out = [_gen02(opts, details, last, error, replay_failure, stuck, found, backstop_hit, **kw)]
    out += _semantics(opts, details, total, found, error, **kw)
    try:
        if can_lose or can_fail_before:
            faults.clear()
    except Exception:  # noqa: BLE001
        pass
    return out


def _merge_ops(parts: Any) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for part in parts:
        for op, per in part.items():
            for status, n in per.items():
                out.setdefault(op, {})[status] = out.setdefault(op, {}).get(status, 0) + n
    return {op: dict(sorted(out[op].items())) for op in sorted(out)}


def _steered(signature: tuple) -> str:
    what, op, x = signature
    if what == "status":
        return f"{op} where the spec documents {'/'.join(map(str, x))}"
    return f"{op}{' with properties' if x else ''} (its effect)"


def _run_machine(shared: _Shared) -> str | None:
    """One hypothesis run of the model; the failure lands in ``shared.failure``; returns an error, or None."""
    from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
    from hypothesis.errors import Flaky
    from hypothesis.stateful import run_state_machine_as_test

    opts = shared.opts
    machine = build_machine(shared)
    if opts.seed is not None:
        machine = seed(opts.seed)(machine)
    cfg = settings(max_examples=max(1, int(opts.examples)), stateful_step_count=max(1, int(opts.steps)),
                   deadline=None, database=None, derandomize=opts.seed is None, print_blob=False,
                   report_multiple_bugs=False, verbosity=Verbosity.quiet,
                   phases=(Phase.explicit, Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    error = None
    try:
        run_state_machine_as_test(machine, settings=cfg)
    except _Found:
        pass
    except Flaky as exc:
        # a failure whose rerun was idle (the shrink count used up) is recorded in shared.failure; otherwise the
        # backstop made later runs of the same example idle (nothing failed)
        if shared.failure is None and not shared.backstop_hit:
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
            if shared.can_lose or shared.can_fail_before:
                shared.ctx.faults.clear()
        except Exception:  # noqa: BLE001
            pass
    return error


def _without_replays(shared: _Shared, f: _Failure) -> _Failure | None:
    """The failing sequence's plain mutations alone (its retries, key reuses and faults left out), on a fresh
    root: the failure they show without them, or None. A status or state mismatch that a sequence with a retry
    shows may be the catalog's plain semantics that shrinking did not isolate (its count ran out); only one
    that needs the retry is GEN-02's. A retry after a fault that answered other than the model expected is
    judged the same way: its mutation is in the calls as the plain rule sends it, and when that, sent once,
    answers the same way, the retry replayed what the catalog did the first time (right), and the mismatch is
    the catalog's semantics."""
    if not f.calls or f.kind not in (*SEMANTICS, "retry-after-fault"):
        return None
    probe = _Shared(shared.ctx, shared.opts, shared.progress, shared.lifetime, can_lose=False,
                    can_fail_before=False, counters=False, avoid=set(shared.avoid), keyless=shared.keyless,
                    flat=shared.flat)
    machine = build_machine(probe)()
    try:
        for name, args in f.calls:
            getattr(machine, name)(*args)
            machine.touched_match_model()
        machine.teardown()
    except _Found:
        try:
            machine._cleanup()
        except Exception:  # noqa: BLE001 - drop_tree did its best; the run namespace goes at the end
            pass
    failure = probe.failure
    return failure if failure is not None and failure.kind in SEMANTICS and not failure.replayed else None


def _write_scenario(opts: StatefulOptions, f: _Failure, details: dict) -> Path | None:
    if not opts.report_dir:
        return None
    d = Path(opts.report_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{f.requirement.lower().replace('-', '')}_minimal_{int(time.time())}.yaml"
    path.write_text(f.scenario, encoding="utf-8")
    details["scenario_file"] = str(path)
    return path


def _failure_verdict(requirement: str, expected: str, opts: StatefulOptions, f: _Failure, details: dict,
                     **kw: Any) -> Verdict:
    details = dict(details, scenario=f.scenario, sequence=f.steps)
    path = _write_scenario(opts, f, details)
    exs = [e.to_dict() for e in f.exchanges if (e.label or "").startswith("model:")][-12:]
    text = (f"expected: {expected}\nhappened: {f.text}\n\nminimal failing sequence (shrunk by hypothesis):\n  "
            + "\n  ".join(f.steps)
            + (f"\n\nscenario written to {path}" if path else "")
            + "\n\nrunnable scenario (put it in scenarios/):\n" + f.scenario
            + "\nexchanges (mutations of the minimal sequence):\n" + render_exchanges(exs, limit=600))
    return Verdict.broken(requirement, text, classification=f.kind, exchanges=exs, details=details, **kw)


def _backstop_reason(opts: StatefulOptions) -> str:
    return (f"the hang backstop of the generated checks ({opts.backstop_s:g} s) was reached; the amount of "
            "sequences is set by --ctk-examples and --ctk-steps, so this is a hang or a very slow catalog: raise "
            "--ctk-gen-budget (or lower --ctk-examples) to decide it")


def _gen02(opts: StatefulOptions, details: dict, last: _Shared, error: str | None, replay_failure: _Failure | None,
           stuck: _Failure | None, found: dict, backstop_hit: bool, **kw: Any) -> Verdict:
    steered = ""
    if found:
        steered = (f"; the model steered around the catalog-semantics mismatches found ("
                   f"{', '.join(f'{r}: {f.text.splitlines()[0]}' for r, f in sorted(found.items()))})")
    if replay_failure is not None:
        return _failure_verdict("GEN-02", "after every step the catalog's state matches the model (replays change "
                                "nothing, a retried lost commit executes once)", opts, replay_failure, details, **kw)
    if error:
        return Verdict.inconclusive("GEN-02", f"the model-based run stopped: {error}", details=details, **kw)
    if stuck is not None or last.failure is not None:
        return Verdict.inconclusive("GEN-02", "the model-based run could not get past the catalog's semantics "
                                    f"mismatches (no retry or fault in them){steered}: replay is not decided",
                                    details=details, **kw)
    if backstop_hit:
        return Verdict.inconclusive("GEN-02", f"{details['sequences']} sequences ran, then {_backstop_reason(opts)}",
                                    needs=f"--ctk-gen-budget above {opts.backstop_s:g} s", details=details, **kw)
    if details["steps"] == 0:
        return Verdict.inconclusive("GEN-02", "no step ran", details=details, **kw)
    if details["replays"] == 0 and not details["faults"]:
        return Verdict.inconclusive("GEN-02", f"{details['sequences']} sequences ran, but no retry or key reuse "
                                    f"was sent ({details['retries_skipped_late']} skipped: their key was older than "
                                    "half its lifetime), and no fault could be injected: replay is not decided",
                                    details=details, **kw)
    return Verdict.ok("GEN-02", f"{details['sequences']} random sequences ({details['steps']} steps, faults: "
                                f"{', '.join(details['faults']) or 'none'}) kept the catalog equal to the model"
                                f"{steered}", classification="model-equal", details=details, **kw)


def _semantics(opts: StatefulOptions, details: dict, total: dict, found: dict, error: str | None,
               **kw: Any) -> list[Verdict]:
    out = []
    sem = {"SEM-01": ("a mutation sent once answers the status the merged spec documents for the model's state",
                      total["plain"], "mutations sent once answered the status the spec documents"),
           "SEM-02": ("a mutation sent once that the catalog acknowledged has its effect, one it refused none",
                      total["compared"], "reads after mutations sent once showed the model's state")}
    notes = []
    if details.get("keyless"):
        notes.append("plain mode: the target advertises no Idempotency-Key support, so no key, retry, key reuse "
                     "or fault was sent")
    dropped = sorted((details.get("not_offered") or {}).items())
    for claimed, heading in ((True, f"{ADVERTISED_UNSERVED} ({DISC_UNSERVED}), dropped from the model"),
                             (False, "not offered, dropped from the model")):
        named = [f"{op} ({why})" for op, why in dropped if (op in details.get("advertised_unserved", ())) is claimed]
        if named:
            notes.append(f"{heading}: " + "; ".join(named))
    if details.get("operations"):
        notes.insert(0, "judged: " + ", ".join(
            f"{op} " + "/".join(f"{n}x{st}" for st, n in per.items()) for op, per in details["operations"].items()))
    note = f" ({'; '.join(notes)})" if notes else ""
    for req, (expected, n, said) in sem.items():
        d = dict(details, evidence=n)
        if req in found:
            out.append(_failure_verdict(req, expected + note, opts, found[req], d, **kw))
        elif error:
            out.append(Verdict.inconclusive(req, f"{n} {said}, then the model-based run stopped: {error}",
                                            details=d, **kw))
        elif details["backstop_hit"]:
            out.append(Verdict.inconclusive(req, f"{n} {said}, then {_backstop_reason(opts)}",
                                            needs=f"--ctk-gen-budget above {opts.backstop_s:g} s", details=d, **kw))
        elif n == 0:
            out.append(Verdict.inconclusive(req, "no mutation was sent once and judged (nothing to decide it on)"
                                            + note, details=d, **kw))
        elif not any(200 <= int(st) < 300 for per in details.get("operations", {}).values() for st in per):
            out.append(Verdict.inconclusive(req, f"{n} {said}, but the catalog acknowledged none of them (only "
                                            f"refusals were judged, no effect to compare){note}", details=d, **kw))
        elif req == "SEM-02" and total["ns_props_dropped"]:
            d["ns_props_dropped"] = total["ns_props_dropped"]
            d["classified"] = True      # what the spec leaves open: a classified pass in the reports
            out.append(Verdict.ok(req, f"{n} {said}; {total['ns_props_dropped']}x {NS_PROPS_NOTE}{note}",
                                  classification="namespace-properties-not-stored-at-create", details=d, **kw))
        else:
            out.append(Verdict.ok(req, f"{n} {said}{note}", classification="model-equal", details=d, **kw))
    return out


__all__ = ["StatefulOptions", "run_stateful_check", "scenario_yaml", "Model"]

