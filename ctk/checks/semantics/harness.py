"""`SemRun`: what a catalog-semantics check works with, and `run_semantic`, which runs one behind its gates.

Rules every semantic check follows (they are what makes its verdict rest only on what was seen to work):

- Requests go out plain: no Idempotency-Key, no fault; the check's resources live in a namespace of its own
  (`SemRun.namespace()`), placed like every other check's (inside the run namespace, or a run-unique sibling on
  a catalog that cannot nest).
- Every setup step reads its effect back (`SemRun.namespace()`, `.table()`, `.view()`, `.commit_ok()`): a step
  acknowledged without its effect raises `SetupBroken` naming the requirement that finding breaks (NS-01 for a
  namespace that does not load back, TBL-01 for a table, ...). The check's own verdict is then inconclusive,
  naming that finding (``details.blocked_by``); the finding itself is its own requirement's verdict.
- Judged by status and error ``type`` (`expect`), and by state read back; never by message text.
- Graded by the one table of `grading.py` (`SemRun.judge(kind, ...)`; `broken` an effect wrong, `status_broken`
  a wrong status while the effect held, `lenient` a lenient extra effect, `server_error` a valid request answered
  5xx on every try): one status and level per kind of behaviour, whichever check meets it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

from ctk.catalog import PrerequisiteError
from ctk.catalog.bodies import create_table_body, create_view_body
from ctk.catalog.capabilities import Capability, Known
from ctk.catalog.cases import spec_operation
from ctk.client.placement import ABSENT
from ctk.client.transport import ns_path, table_path, view_path
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Status, Verdict
from ctk.checks.common import (Run, control_sender, describe, error_of, not_routed, setup_failed, unserved,
                               unserved_step, unserved_verdict)
from ctk.checks.context import CheckContext
from ctk.checks.semantics.grading import SERVER_ERROR_TRIES, Kind, grade
from ctk.checks.semantics.probes import PROBES
from ctk.checks.semantics.registry import SemanticCheck

MAX_READS = 20           # reads a check may spend waiting for one state (bounded: reaching it is a finding)


class SetupBroken(Exception):
    """A setup step was acknowledged but its effect is not what the catalog then shows: the finding breaks
    ``requirement``; the check that needed the step cannot be decided."""

    def __init__(self, requirement: str, finding: str, exchange: Exchange | None = None):
        super().__init__(finding)
        self.requirement, self.finding, self.exchange = requirement, finding, exchange


class NotApplicable(Exception):
    """The check does not apply to this catalog (a capability it lacks, learnt on the way)."""


def error_type(ex: Exchange) -> str | None:
    """The error model's ``type`` of an answer (None: no error model)."""
    t = error_of(ex).get("type")
    return t if isinstance(t, str) else None


_TYPED_404 = re.compile(r"/namespaces/[^/]+/(?:tables|views)/[^/]+$|/(?:tables|views)/rename$"
                        r"|/namespaces/[^/]+/register(?:-view)?$")
_CREATE = re.compile(r"/namespaces/[^/]+/(?:tables|views)$")


def client_reads_type(ex: Exchange) -> bool:
    """Whether a client tells errors of this answer apart by the error model's ``type``, not by the status alone:
    Iceberg Java's error handlers for a table or view (load, exists, drop, rename, register, createTable - plain
    and staged - and createView) read it on a 404 (ErrorHandlers.tableErrorHandler: NoSuchNamespaceException by
    type, else NoSuchTableException; the view handler alike). Namespace operations, listings (GET of a
    collection: namespaceErrorHandler) and commits are told apart by status alone."""
    if ex.status != 404:
        return False
    path = urlsplit(ex.url).path.rstrip("/")
    if _CREATE.search(path):
        return ex.method == "POST"      # createTable / createView; listTables / listViews read the status alone
    if ex.method == "POST" and re.search(r"/namespaces/[^/]+/(?:tables|views)/[^/]+$", path):
        return False    # a commit: 404 is no such table or view, whatever the type
    return bool(_TYPED_404.search(path))


def client_exception(ex: Exchange) -> str | None:
    """The exception Iceberg Java's error handler raises for a 404 of a table or view operation, read from the
    error type as the client reads it (ErrorHandlers): NoSuchNamespaceException and NotFoundException by name,
    otherwise no such table (or view); None where the client does not read the type."""
    if not client_reads_type(ex):
        return None
    kind = error_type(ex)
    view = "/views" in urlsplit(ex.url).path
    if kind == "NoSuchNamespaceException" or (kind == "NotFoundException" and not view):
        return kind
    return "NoSuchViewException" if view else "NoSuchTableException"


def _until_not_5xx(attempt: Callable[[int, Exchange | None], Exchange]) -> Exchange:
    """``attempt(n, last)`` for n = 1.. while the last answer is a 5xx, ``SERVER_ERROR_TRIES`` tries in all (a
    count, never a time); the last answer."""
    ex = attempt(1, None)
    for n in range(2, SERVER_ERROR_TRIES + 1):
        if ex.status is None or ex.status < 500:
            break
        ex = attempt(n, ex)
    return ex


class SemRun(Run):
    """One semantic check's run: its context, its namespace, its setup steps that read back, its verdicts."""

    def __init__(self, ctx: CheckContext, check: SemanticCheck):
        super().__init__(ctx, check.requirement, None, check.behaviour)
        self.check = check
        self.operation = check.operation
        self.client = ctx.client
        self._ns: tuple[str, ...] | None = None
        self.stale_accepted: list[str] = []     # commits whose stale requirement was answered as a success
        self.tried_out: set[int] = set()        # exchanges of a valid create answered 5xx on every try

    # -- verdicts ---------------------------------------------------------------------------------------------
    def _kw(self, classification: str | None, details: dict | None) -> dict:
        kw = super()._kw(classification, details)
        kw["endpoint"] = self.operation
        kw["details"] = {"check": self.check.name, **kw["details"]}
        if self.stale_accepted:     # the rule the root causes name for it: commit requirements unchecked
            kw["details"]["stale_requirement_accepted"] = list(self.stale_accepted)
        return kw

    def judge(self, kind: Kind, expected: str, happened: str, classification: str | None = None,
              details: dict | None = None) -> Verdict:
        """The verdict of a behaviour of ``kind``, graded by the one table (`grading.GRADES`)."""
        return grade(self, kind, expected, happened, classification, details)

    def broken(self, expected: str, happened: str, classification: str | None = None,
               details: dict | None = None) -> Verdict:
        """The effect is wrong: acknowledged and not done, or refused and changed (the requirement's level)."""
        return self.judge(Kind.NOT_DONE, expected, happened, classification, details)

    def status_broken(self, expected: str, happened: str, details: dict | None = None) -> Verdict:
        """A wrong status or error type while the effect held (the documents' level)."""
        return self.judge(Kind.WRONG_STATUS, expected, happened, details=details)

    def lenient(self, expected: str, happened: str, classification: str | None = None,
                details: dict | None = None) -> Verdict:
        """Acknowledged and done with a lenient extra effect where the documents say refuse (their level)."""
        return self.judge(Kind.LENIENT, expected, happened, classification, details)

    def server_error(self, ex: Exchange, what: str, seen: str = "", details: dict | None = None) -> Verdict:
        """A valid request answered 5xx on every try (`send_valid`): a finding at the documents' level; ``seen``
        says what the state read afterwards showed."""
        return self.judge(Kind.SERVER_ERROR, f"{what} (a valid request) is answered",
                          f"{ex.method} {ex.url} answered {describe(ex)} on each of {SERVER_ERROR_TRIES} tries"
                          + (f"; {seen}" if seen else ""), details=details)

    # -- requests ---------------------------------------------------------------------------------------------
    def send(self, method: str, path: str, json: Any = None, params: dict | None = None,
             label: str = "semantic", invalid: str | None = None) -> Exchange:
        """One plain request; ``invalid`` says what is invalid in a body sent so on purpose (X-Ctk-Invalid)."""
        return self.client.request(method, path, json=json, params=params, label=label, invalid=invalid)

    def send_valid(self, method: str, path: str, json: Any = None, params: dict | None = None,
                   label: str = "semantic") -> Exchange:
        """A valid request the verdict is about: sent again while it is answered 5xx, ``SERVER_ERROR_TRIES`` in
        all; the last answer (still 5xx: `server_error`)."""
        return _until_not_5xx(lambda n, last: self.send(
            method, path, json, params, label if last is None else f"{label} (try {n} after a {last.status})"))

    def create_valid(self, stem: str, build: Callable[[str], tuple[str, Any]], label: str
                     ) -> tuple[str, Any, Exchange]:
        """A create the verdict is about (a baseline's): POSTed; while it is answered 5xx it is sent again under
        a fresh name (the same name could meet its own earlier write as a 409), ``SERVER_ERROR_TRIES`` in all.
        (the name, the body, the last answer); still 5xx: a finding for `server_error`, never only
        "inconclusive"."""
        sent: list[tuple[str, Any]] = []

        def attempt(n: int, last: Exchange | None) -> Exchange:
            name = self.unique(stem)
            path, body = build(name)
            sent.append((name, body))
            return self.send("POST", path, body, label=label if last is None else
                             f"{label} (try {n}, a fresh name, after a {last.status})")

        ex = _until_not_5xx(attempt)
        if ex.status is not None and ex.status >= 500:
            self.tried_out.add(id(ex))       # answered 5xx on every try: `not_acknowledged` makes it a finding
        return sent[-1][0], sent[-1][1], ex

    def expect(self, ex: Exchange, statuses: Iterable[int], types: Iterable[str] = ()) -> str | None:
        """None when ``ex`` answered one of ``statuses`` and, where a client reads the error ``type`` of that
        answer (`client_reads_type`), one of ``types``; else what happened, for the verdict. Where no client
        reads the type (the spec names types only in examples), the status alone decides."""
        statuses, types = tuple(statuses), tuple(types)
        if ex.status not in statuses:
            return f"{ex.method} {ex.url} -> {describe(ex)}"
        if types and client_reads_type(ex) and client_exception(ex) not in types:
            return (f"{ex.method} {ex.url} -> {ex.status} with error type {error_type(ex)!r}, which a Java client "
                    f"raises as {client_exception(ex)}, not {' / '.join(types)}")
        return None

    def unique(self, stem: str) -> str:
        return self.ctx.unique(stem)

    def not_acknowledged(self, ex: Exchange, what: str) -> Verdict:
        """The verdict when the request under test (a valid one) was not acknowledged: a 4xx is a refusal, a
        decided finding at the documents' level (nothing lost, nothing misreported, but what the compatibility kit
        expects to work did not: a deviation); a 5xx or no answer leaves it undecided."""
        if ex.status is not None and 400 <= ex.status < 500 and not_routed(ex) is None:
            return self.status_broken(f"{what} is accepted", f"it answered {describe(ex)}: refused, so nothing of "
                                                              "what the check reads back was made")
        if id(ex) in self.tried_out:
            return self.server_error(ex, what)        # sent SERVER_ERROR_TRIES times (`create_valid`), 5xx each
        return self.inconclusive(f"{what} answered {describe(ex)}: nothing acknowledged to read back")

    # -- setup steps that read their effect back -------------------------------------------------------------
    def namespace(self, stem: str = "sem", properties: dict[str, str] | None = None) -> tuple[str, ...]:
        """A fresh namespace for this check (created and loaded back)."""
        placement = getattr(self.client, "placement", None)
        name = self.unique(stem)
        ns = placement.child(name) if placement is not None else tuple(self.ctx.namespace) + (name,)
        self.create_namespace(ns, properties)
        return ns

    def absent_namespace(self) -> tuple[str, ...]:
        """A namespace placed like the check's own that the kit never creates (`Placement.absent`): a table or
        view a check creates or renames into it is named STRAY (``ctk.client.placement``), so that the cleanup
        drops what a lenient catalog stored there anyway, by name."""
        placement = getattr(self.client, "placement", None)
        return placement.absent() if placement is not None else tuple(self.ctx.namespace) + (self.unique(ABSENT),)

    def create_namespace(self, ns: tuple[str, ...], properties: dict[str, str] | None = None) -> Exchange:
        ex = self.send("POST", "namespaces", {"namespace": list(ns), "properties": dict(properties or {})},
                       label=f"setup: create namespace {'.'.join(ns)}")
        if ex.status not in (200, 201, 204):
            raise PrerequisiteError(f"setup: create namespace {'.'.join(ns)} answered "
                                    f"{ex.status if ex.status is not None else ex.error}", ex)
        got = self.send("GET", f"namespaces/{ns_path(ns)}", label="setup: read back the namespace")
        _readable(got, "setup: read back the namespace")
        if got.status != 200:
            raise SetupBroken("NS-01", f"createNamespace {'.'.join(ns)} answered {ex.status}, but loading it "
                                       f"answered {describe(got)}", got)
        return ex

    def table(self, ns: tuple[str, ...], name: str | None = None, body: dict | None = None,
              properties: dict[str, str] | None = None) -> tuple[str, dict]:
        """A table created and loaded back with the same table-uuid: (name, its load result)."""
        name = name or self.unique("t")
        return name, self._created(ns, name, "table", "tables", table_path(ns, name), "table-uuid", "TBL-01",
                                   body if body is not None else create_table_body(name, properties))

    def view(self, ns: tuple[str, ...], name: str | None = None, body: dict | None = None,
             properties: dict[str, str] | None = None, sql: str = "SELECT 1 AS id") -> tuple[str, dict]:
        """A view created and loaded back with the same view-uuid: (name, its load result)."""
        name = name or self.unique("v")
        return name, self._created(ns, name, "view", "views", view_path(ns, name), "view-uuid", "VIEW-01",
                                   body if body is not None else create_view_body(ns, name, sql, properties))

    def _created(self, ns: tuple[str, ...], name: str, kind: str, collection: str, path: str, uuid_key: str,
                 requirement: str, body: dict) -> dict:
        """Create the table or view ``name`` and load it back: its load result, else PrerequisiteError (the
        create was refused) or SetupBroken naming ``requirement`` (acknowledged, but not what loads)."""
        ex = self.send("POST", f"namespaces/{ns_path(ns)}/{collection}", body, label=f"setup: create {kind} {name}")
        if ex.status != 200:
            raise PrerequisiteError(f"setup: create {kind} {name} answered "
                                    f"{ex.status if ex.status is not None else ex.error}", ex)
        created = ex.json() or {}
        got = self.send("GET", path, label=f"setup: read back the {kind}")
        _readable(got, f"setup: read back the {kind}")
        uuid = (created.get("metadata") or {}).get(uuid_key)
        loaded = got.json() if got.status == 200 else None
        if not isinstance(loaded, dict) or (loaded.get("metadata") or {}).get(uuid_key) != uuid:
            op = "createTable" if kind == "table" else "createView"
            raise SetupBroken(requirement, f"{op} {name} answered 200 ({uuid_key} {uuid}), but loading it "
                                           f"answered {describe(got)}", got)
        if not uuid:         # None == None is no evidence: what the checks compare the object by is missing
            op = "createTable" if kind == "table" else "createView"
            raise SetupBroken(requirement, f"{op} {name} answered 200 and loads, but with no {uuid_key} in its "
                                           "metadata (a required field: the checks identify the object by it)", got)
        return loaded

    def commit_ok(self, ns: tuple[str, ...], name: str, updates: list[dict], requirements: list[dict] | None = None,
                  label: str = "setup: commit") -> dict:
        """A table commit as a setup step: answered 200 and the next load shows its metadata-location (else
        SetupBroken EVO-01). Returns the load result."""
        body = {"identifier": {"namespace": list(ns), "name": name}, "requirements": list(requirements or []),
                "updates": updates}
        ex = self.send("POST", table_path(ns, name), body, label=label)
        if ex.status != 200:
            raise PrerequisiteError(f"{label}: commit to {name} answered "
                                    f"{ex.status if ex.status is not None else ex.error}", ex)
        answer = ex.json() if isinstance(ex.json(), dict) else {}
        answered = answer.get("metadata-location")
        if not answered:    # required by CommitTableResponse: nothing to compare the load with (EVO-01 names it)
            raise SetupBroken("EVO-01", f"{label}: the commit to {name} answered 200 without the required field "
                                        "`metadata-location` (CommitTableResponse)", ex)
        got = self.send("GET", table_path(ns, name), label=f"{label}: read back")
        _readable(got, f"{label}: read back")
        loaded = got.json() if got.status == 200 else None
        # a load answer without `metadata-location` (misnamed, say) is judged by its metadata: the commit's
        if isinstance(loaded, dict) and loaded.get("metadata-location") is None and answered \
                and isinstance(loaded.get("metadata"), dict) and loaded["metadata"] == answer.get("metadata"):
            return loaded
        if not isinstance(loaded, dict) or loaded.get("metadata-location") != answered:
            shown = loaded.get("metadata-location") if isinstance(loaded, dict) else describe(got)
            raise SetupBroken("EVO-01", f"a commit to {name} answered 200 with metadata-location {answered}, but "
                                        f"the next load shows {shown}", got)
        return loaded

    # -- capabilities -------------------------------------------------------------------------------------------
    def capability(self, cap: Capability) -> Known:
        probe = PROBES.get(cap)
        return self.ctx.capabilities.get(cap, (lambda: probe(self.ctx)) if probe is not None else None)


VIEW_OPERATIONS = frozenset({"listViews", "createView", "loadView", "replaceView", "dropView", "viewExists",
                             "renameView", "registerView"})


def _readable(got: Exchange, what: str) -> None:
    """A read-back answered 5xx or not at all shows nothing about the step: state unreadable (inconclusive), never a
    broken plain operation."""
    if got.status is None or got.status >= 500:
        raise PrerequisiteError(f"{what}: state unreadable ({describe(got)})", got)


def _supported(ctx: CheckContext, operation: str) -> tuple[bool, str]:
    d = ctx.discovery
    if d is None:
        return True, ""
    if operation in VIEW_OPERATIONS and ctx.capabilities.declared.get(Capability.VIEWS) is True:
        return True, ""     # --ctk-capability views=yes: a catalog that serves views without listing them
    op = spec_operation(operation)
    if d.supports(op.method.upper(), op.template):
        return True, ""
    what = "the endpoints list" if d.endpoints is not None else \
        "the default endpoint set (the target advertises no endpoints list)"
    hint = (" (a catalog that serves views without listing them: --ctk-capability views=yes)"
            if operation in VIEW_OPERATIONS else "")
    return False, f"{operation} ({op.method.upper()} /v1/{{prefix}}/{op.template}) is not in {what}{hint}"


def run_semantic(ctx: CheckContext, check: SemanticCheck) -> list[Verdict]:
    """Run ``check`` behind its gates; always a list of verdicts, never an exception."""
    t = SemRun(ctx, check)
    for op in (check.operation, *check.uses):
        ok, why = _supported(ctx, op)
        if not ok:
            return [t.unsupported(why)]
    caps: dict[str, dict[str, object]] = {}
    for cap in check.needs:
        known = t.capability(cap)
        caps[cap.value] = known.to_dict()
        if known.supported is False:
            return [t.unsupported(f"the catalog does not support {cap.value} ({cap.description}); "
                                  f"{known.source}: {known.why}", details={"capabilities": caps})]
        if known.supported is None:
            return [t.inconclusive(f"whether the catalog supports {cap.value} could not be learnt: {known.why}",
                                   details={"capabilities": caps}, needs=f"--ctk-capability {cap.value}=yes|no")]
    return [_with_capabilities(v, caps) for v in _run(t, check)]


def _with_capabilities(v: Verdict, caps: dict[str, dict[str, object]]) -> Verdict:
    if caps:
        v.details = {**(v.details or {}), "capabilities": {**caps, **((v.details or {}).get("capabilities") or {})}}
    return v


def _run(t: SemRun, check: SemanticCheck) -> list[Verdict]:
    try:
        out = check.fn(t)
    except SetupBroken as exc:
        return [t.inconclusive(f"a setup step showed a broken plain operation ({exc.requirement}): {exc.finding}; "
                               f"this check rests on it", classification="setup broken",
                               details={"blocked_by": exc.requirement, "finding": exc.finding})]
    except NotApplicable as exc:
        return [t.unsupported(str(exc))]
    except PrerequisiteError as exc:
        ex = getattr(exc, "exchange", None)
        step = unserved_step(t.ctx.discovery, ex, control_sender(t.client)) if ex is not None else None
        if step is not None:
            return [unserved_verdict(t, step, str(exc))]
        return [t.inconclusive(setup_failed(exc))]
    except Exception as exc:  # noqa: BLE001 - the check crashed: an error verdict, never a lost one
        return [t.crashed(exc)]
    out = out if isinstance(out, list) else [out]
    if any(v.status is not Status.UNSUPPORTED for v in out):
        # every request to the operation answered as by a router that does not know it: claimed by the catalog,
        # "advertised but not served" (DISC-05's finding, never a semantic verdict); not claimed, not applicable
        op = spec_operation(check.operation)
        found = unserved(t.ctx.discovery, t.exchanges(), op.method, op.template, check.operation,
                         control_sender(t.client), t.client.exchanges)
        if found is not None:
            return [unserved_verdict(t, found)]
    return out
