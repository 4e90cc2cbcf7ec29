"""The case model of the endpoint catalog: every mutation the kit exercises, how to build it and how to count its
effect.

One `Endpoint` per mutation operation (operationId of the OpenAPI spec). ``endpoint.prepare(ctx)`` creates
the prerequisites under the run namespace (fresh, unique names per case) and returns a `Case`:

``request``       the mutation (method, path relative to ``/v1/{prefix}``, JSON body)
``alternative``   same operation and resource, another payload (None when the operation has no payload)
``conflicting``   a variant answered with a deterministic terminal 4xx, and ``clear_conflict()`` that removes
                  the cause so that a re-execution of it would now succeed (``conflict_executed()`` tells
                  from state whether it was executed; meaningful after ``clear_conflict()``)
``observe()``     the relevant catalog state, read over HTTP (never from the mutation's responses)
``executions(before, after)``      how many times the request's effect became visible between two states
``alt_executions(before, after)``  the same for the alternative payload
``interfere()``   an intervening change that makes a re-execution visible in state (e.g. after a create the
                  resource is dropped again: a replay leaves it absent, a re-execution brings it back)
``identity(exchange)`` the identity fields of a response (table-uuid, view-uuid, namespace, plan-id...) used
                  to call two bodies equivalent
``blind``         None, or why a re-execution may leave no trace in state (cancelling a cancelled plan):
                  then only the target's execution counters can tell a replay from a re-execution, and
                  checks without them say so (inconclusive) instead of passing
``copy_blind``    None, or why an execution by a copy whose answer the kit never reads (the network sent
                  the request twice) leaves no trace the kit can see (a plan made by the copy, when the
                  target offers no plan listing); the network checks then need counters too
``reexecutable``  whether the request, sent again after ``interfere()``, succeeds and counts once more
                  (False when the effect cannot be undone: a cancelled plan, a fetched plan task)
``learned(ex)``   an answer the client never got but the interposer read (a lost answer, a network copy's):
                  what it names joins the observed state (planTableScan: its plan-id)

Scan planning (planTableScan, cancelPlanning, fetchScanTasks): a plan is addressable only by the plan-id its
answer carries. When the target has the reference control API, ``GET /_ctk/plans`` lists a table's plans
and is the state; otherwise the kit counts the plans whose ids it has seen in answers to its own requests
(``client.exchanges``) and confirms each with fetchPlanningResult - a plan made by an attempt whose answer
never reached the kit (lost, or a copy sent by the network) is then invisible, so such checks end
inconclusive ("not visible") rather than passing on the reference's say-so. fetchScanTasks is observed
through the plan tasks fetchPlanningResult still lists (a target that does not retire fetched plan tasks
leaves its effect invisible: inconclusive).

Each builder registers itself with `case`: ``@case("createNamespace", requires=("loadNamespaceMetadata",
"dropNamespace"), success=(200,))``. The operation's method, path template and whether the merged spec lists
the Idempotency-Key parameter come from the kit's OpenAPI document (``ctk/data/ctk-openapi.yaml``, read once),
as do those of the operations it ``requires``; an operationId the document lacks is an error at registration.
The builders live in the per-area modules (``namespaces``, ``tables``, ``views``, ``transactions``,
``planning``); ``ctk.catalog`` imports them all, so `ENDPOINTS` is complete once the package is imported.

Prerequisite failures raise `PrerequisiteError` (checks turn it into an inconclusive verdict).
The context passed to ``prepare`` needs ``.client`` (a `CatalogClient`), ``.namespace`` (the run
namespace, a tuple) and ``.unique(stem)`` (a fresh name); `ctk.checks.context.CheckContext` provides them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ctk.catalog.state import body_identity
from ctk.client.transport import CatalogClient
from ctk.core.exchange import Exchange

SPEC_PATH = Path(__file__).resolve().parents[1] / "data" / "ctk-openapi.yaml"
PREFIXED = "/v1/{prefix}/"
HEADER = "idempotency-key"                  # the header parameter's name (and its components/parameters key)
PUBLISHED = "x-ctk-published-idempotency-key"   # false: the merged (published) spec lists no header here
METHODS = ("get", "head", "post", "put", "delete", "patch")


class CaseContext(Protocol):
    """What a case builder takes (`ctk.checks.context.CheckContext` is one): the client every request of the
    case goes through (its target's URL, prefix and headers), the run namespace the case creates its resources
    under, and fresh names."""

    client: CatalogClient
    namespace: tuple[str, ...]

    def unique(self, stem: str) -> str: ...


class AdvertisedEndpoints(Protocol):
    """What an endpoint needs of discovery (`ctk.client.discovery.Discovery` is one): the endpoints the target
    advertised in /v1/config (None: none advertised, the spec's default set applies)."""

    endpoints: set[str] | None

    def supports(self, method: str, template: str) -> bool: ...


# --------------------------------------------------------------------------------------------------------
# The OpenAPI document: method, path template and Idempotency-Key header of each operation
# --------------------------------------------------------------------------------------------------------

class CatalogSpecError(ValueError):
    """A case names an operation the kit's OpenAPI document does not have (or the document is unusable)."""


@dataclass(frozen=True)
class SpecOperation:
    method: str
    template: str                  # path template under /v1/{prefix}/
    has_header: bool               # the merged spec lists the Idempotency-Key parameter


def _lists_header(op: dict, item: dict, doc: dict) -> bool:
    for p in list(item.get("parameters") or []) + list(op.get("parameters") or []):
        ref = p.get("$ref", "") if isinstance(p, dict) else ""
        if ref.startswith("#/components/parameters/"):
            p = (doc.get("components") or {}).get("parameters", {}).get(ref.rsplit("/", 1)[-1]) or {}
        if isinstance(p, dict) and p.get("in") == "header" and str(p.get("name", "")).lower() == HEADER:
            return op.get(PUBLISHED, True) is not False
    return False


@functools.lru_cache(maxsize=4)
def spec_operations(path: str = str(SPEC_PATH)) -> dict[str, SpecOperation]:
    """operationId -> `SpecOperation` of every operation under ``/v1/{prefix}/`` in the document at ``path``
    (read once; libyaml's loader when pyyaml has it)."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogSpecError(f"cannot read the kit's OpenAPI document {path}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), dict):
        raise CatalogSpecError(f"{path}: not an OpenAPI document (no 'paths')")
    out: dict[str, SpecOperation] = {}
    for template, item in doc["paths"].items():
        if not isinstance(item, dict) or not str(template).startswith(PREFIXED):
            continue
        for method in METHODS:
            op = item.get(method)
            if isinstance(op, dict) and op.get("operationId"):
                out[op["operationId"]] = SpecOperation(method.upper(), template[len(PREFIXED):],
                                                       _lists_header(op, item, doc))
    return out


def spec_operation(operation: str, spec: str | Path | None = None) -> SpecOperation:
    ops = spec_operations(str(spec or SPEC_PATH))
    try:
        return ops[operation]
    except KeyError:
        raise CatalogSpecError(f"operation {operation!r} is not in the OpenAPI document {spec or SPEC_PATH} "
                               f"(operationIds under {PREFIXED}: {', '.join(sorted(ops))})") from None


# --------------------------------------------------------------------------------------------------------
# Case and Endpoint
# --------------------------------------------------------------------------------------------------------

@dataclass
class Req:
    method: str
    path: str                              # relative to /v1/{prefix}
    json: Any = None
    params: dict[str, Any] | None = None
    invalid: str | None = None             # what is invalid in a body sent so on purpose (X-Ctk-Invalid)

    def describe(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class Conflict:
    request: Req
    expect: tuple[int, ...]                       # the 4xx it must get, e.g. (409,)
    clear: Callable[[], object]                   # remove the cause: a re-execution would now succeed (result unused)
    executed: Callable[[], bool]                  # from state: was it executed (after clear)?
    why: str = ""


# What a case reads of the catalog: named resource states (None: absent), taken before and after a request.
Observed = dict[str, Any]


@dataclass
class Case:
    endpoint: "Endpoint"
    resource: str
    request: Req
    observe: Callable[[], Observed]
    executions: Callable[[Observed, Observed], int]     # (before, after) -> how often the request took effect
    interfere: Callable[[], object]               # change the resource behind the kit's back (result unused)
    alternative: Req | None = None
    alt_executions: Callable[[Observed, Observed], int] | None = None
    conflicting: Conflict | None = None
    identity: Callable[[Exchange], Any] = body_identity
    notes: dict[str, Any] = field(default_factory=dict)
    conflict_unavailable: str | None = None   # why this target gets no conflicting variant (None: see conflicting)
    blind: str | None = None
    copy_blind: str | None = None
    reexecutable: bool = True
    learn: Callable[[Exchange], None] | None = None

    def learned(self, exchange: Exchange) -> None:
        """An answer to the request that the kit's client never got (the interposer read it: a lost answer, a
        copy sent by the network): what it names becomes part of the observed state (a plan-id)."""
        if self.learn is not None:
            self.learn(exchange)

    def clear_conflict(self) -> None:
        if self.conflicting is None:
            raise ValueError(f"{self.endpoint.operation} has no conflicting variant")
        self.conflicting.clear()

    def conflict_executed(self) -> bool:
        assert self.conflicting is not None
        return self.conflicting.executed()

    def send(self, client: CatalogClient, req: Req | None = None, key: str | None = None,
             header_name: str = "Idempotency-Key", label: str | None = None, timeout: float | None = None,
             raw_headers: list[tuple[str, str]] | None = None) -> Exchange:
        r = req or self.request
        return client.request(r.method, r.path, json=r.json, params=r.params, idempotency_key=key,
                              header_name=header_name, label=label or f"{self.endpoint.operation}",
                              timeout=timeout, raw_headers=raw_headers, invalid=r.invalid)


@dataclass
class Endpoint:
    operation: str                 # operationId
    method: str
    template: str                  # path template under /v1/{prefix}/
    spec_has_header: bool          # whether the merged spec lists the Idempotency-Key parameter
    success: tuple[int, ...]       # statuses of success
    builder: Callable[[CaseContext, "Endpoint"], Case]
    requires: tuple[tuple[str, str], ...] = ()   # other endpoints (method, template) the case needs
    has_payload: bool = True

    @property
    def entry(self) -> str:
        """The `/v1/config` endpoints-list entry that gates it."""
        return f"{self.method} /v1/{{prefix}}/{self.template}"

    def supported(self, discovery: AdvertisedEndpoints | None) -> tuple[bool, str]:
        """(True, "") or (False, reason) from the advertised endpoints (default set when none advertised)."""
        if discovery is None:
            return True, ""
        needed = [(self.method, self.template)] + list(self.requires)
        for m, t in needed:
            if not discovery.supports(m, t):
                what = "the endpoints list" if discovery.endpoints is not None else \
                    "the default endpoint set (the target advertises no endpoints list)"
                tail = "" if (m, t) == (self.method, self.template) else f" (needed by {self.operation})"
                return False, f"{m} /v1/{{prefix}}/{t} is not in {what}{tail}"
        return True, ""

    def prepare(self, ctx: CaseContext) -> Case:
        return self.builder(ctx, self)

    def __repr__(self) -> str:
        return f"Endpoint({self.operation}: {self.method} {self.template})"


# --------------------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------------------

ENDPOINTS: dict[str, Endpoint] = {}

Builder = Callable[[CaseContext, Endpoint], Case]


def endpoint(operation: str, builder: Builder, success: tuple[int, ...], requires: tuple[str, ...] = (),
             has_payload: bool = True, spec: str | Path | None = None) -> Endpoint:
    """The `Endpoint` of ``operation``: method, template and header from the OpenAPI document, ``requires``
    (operationIds) turned into the (method, template) pairs the case needs besides its own."""
    own = spec_operation(operation, spec)
    needs = tuple((o.method, o.template) for o in (spec_operation(r, spec) for r in requires))
    return Endpoint(operation, own.method, own.template, own.has_header, tuple(success), builder, needs,
                    has_payload)


def case(operation: str, *, success: tuple[int, ...], requires: tuple[str, ...] = (), has_payload: bool = True,
         registry: dict[str, Endpoint] | None = None, spec: str | Path | None = None) -> Callable[[Builder], Builder]:
    """Register the decorated builder as the case of ``operation`` (an operationId of the OpenAPI document) in
    `ENDPOINTS` (or ``registry``). ``success``: the statuses of success; ``requires``: the operationIds the case
    needs besides its own (gating by advertised endpoints); ``has_payload``: False when the request has no body
    (no alternative payload)."""
    target = ENDPOINTS if registry is None else registry

    def register(builder: Builder) -> Builder:
        if operation in target:
            raise CatalogSpecError(f"operation {operation!r} is registered twice "
                                   f"({target[operation].builder.__qualname__} and {builder.__qualname__})")
        target[operation] = endpoint(operation, builder, success, requires, has_payload, spec)
        return builder

    return register


def get_endpoint(operation: str) -> Endpoint:
    try:
        return ENDPOINTS[operation]
    except KeyError:
        raise KeyError(f"unknown operation {operation!r}; known: {', '.join(ENDPOINTS)}") from None
