"""Mutation pipeline: every mutating route of the reference catalog goes through Pipeline.handle().

It applies, in order: the Idempotency-Key rules (format, single header, scope, payload binding), the
reserve-then-finalize protocol over the records table (ctk.reference.idempotency), in-flight handling
(reject with 409 request_in_progress, or wait and replay), crash recovery (reconcile an IN_PROGRESS record
left by a crash: ctk.reference.reconcile) and the test hooks (ctk.reference.faults). At each choice it asks
the catalog's KeyPolicy (ctk.reference.policies): the reference's own, an allowed variant's or a deviation
profile's.

Transactions: when no fault rule is set (the fast path), the mutation's execute(conn) and the insertion of
its finalized record commit in ONE transaction; duplicates arriving meanwhile in this process are answered
from an in-memory registry of the scopes in flight, and a duplicate from another process that ran meanwhile
fails on the record's unique index, rolls back whole and replays. Only a request's first try takes the fast
path: a later duplicate of a scope this process finalized (the newest 50,000), and every poll of a duplicate
waiting for its original, look the record up instead of running the mutation. With fault rules (the test
hooks need a visible IN_PROGRESS record), the reservation commits on its own first, and the mutation and the
finalization (or the release of the reservation for a response that must not be stored) commit together.
A CatalogError rolls the mutation back; its terminal 4xx is then finalized in a short transaction of its own
(on the slow path a crash in between leaves an IN_PROGRESS record whose change is provably absent:
reconciled by executing).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ctk.reference import reconcile as reconcile_mod
from ctk.reference.policies import HEADER, KeyPolicy
from ctk.reference.profiles import policies_for
from ctk.reference.faults import SCOPE_HEADER, Faults, FaultRule
from sqlalchemy.exc import IntegrityError

from ctk.reference.idempotency import (FINALIZED, IN_PROGRESS, Record, RecordStore, StoredResponseError,
                                       Resolver, canonical_hash, decode_response, encode_stored,
                                       origin_of)
from ctk.reference.operations import CatalogError, Mutation, OpResult

log = logging.getLogger("ctk.reference.pipeline")

REPLAY_HEADER = "Idempotent-Replayed"
POLL_SECONDS = 0.05
MAX_RACES = 50
FINALIZED_MEMORY = 50_000   # scopes finalized by this process that a duplicate can replay without running first


def render(result: OpResult) -> Response:
    if result.body is None:
        return Response(status_code=result.status, headers=result.headers)
    if isinstance(result.body, (bytes, bytearray)):
        return Response(bytes(result.body), status_code=result.status, headers=result.headers)
    return JSONResponse(result.body, status_code=result.status, headers=result.headers)


def error_result(status: int, type_: str, message: str, subtype: str | None = None,
                 headers: dict[str, str] | None = None) -> OpResult:
    return CatalogError(status, type_, message, subtype, headers).result()


class DropConnection(Exception):
    """Raised after the response start so the server closes the connection without a complete answer."""


class DropResponse(Response):
    """drop-after-commit: announce a body, send none of it, and abort (uvicorn then closes the socket)."""

    def __init__(self) -> None:
        super().__init__(status_code=200)

    async def __call__(self, scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"4096")]})
        raise DropConnection("drop-after-commit: connection closed without an answer")


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, DropConnection):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())


class _LostReservation(Exception):
    pass


class _KeyTaken(Exception):
    """Fast path: the scope already has a record; the transaction (with nothing in it yet) is rolled back."""


def _with_wire(result: OpResult, wire: bytes | None) -> OpResult:
    """The result to send, with its body as the JSON bytes already serialized for the stored record."""
    if wire is None:
        return result
    headers = dict(result.headers)
    if not any(k.lower() == "content-type" for k in headers):
        headers["content-type"] = "application/json"
    return OpResult(result.status, wire, headers)


@dataclass
class _Hold:
    """A held request (`delay` with `until-met`): how many duplicates must meet it, how many did."""
    needed: int
    met: int = 0
    event: asyncio.Event = field(default_factory=asyncio.Event)


class Pipeline:
    def __init__(self, engine, settings):
        self.engine, self.settings = engine, settings
        # how keys are handled (format, scope, payload binding, in-flight answer, replay, lifetime, what is
        # stored) and how commits are: the reference's own policies, an allowed variant's or a deviation's
        self.policy, self.commit_policy = policies_for(settings)
        self._rebuilds = type(self.policy).replay is not KeyPolicy.replay
        self.records = RecordStore(engine)
        # metadata file location -> metadata JSON, for answers stored by reference (set by the catalog)
        self.resolve_ref: Resolver | None = None
        self.faults = Faults()
        self.stale_after = float((settings.extra or {}).get("stale_after", 30.0))
        self._active: set[str] = set()   # owners of reservations held by requests running in this process
        # Scopes being executed by the fast path in this process (their record is not committed yet):
        # scope -> (request hash, origin), so a duplicate arriving meanwhile is answered as in flight.
        self._inflight: dict[tuple, tuple[str, str]] = {}
        self._inflight_lock = threading.Lock()
        # Requests held by a `delay` fault with `until-met` (control API): key scope -> the hold, which ends once
        # that many duplicates met the held request in flight (only touched on the event loop)
        self._holds: dict[tuple, _Hold] = {}
        # Scopes whose finalized record this process committed on the fast path (the newest ones): a duplicate
        # of one is looked up and replayed at once instead of running the mutation and rolling it back.
        self._finalized_here: OrderedDict[tuple, None] = OrderedDict()
        # storable answers the database could not take when they were made (it was down): scope -> record row,
        # written before the next request with that key is looked at (a policy storing 5xx)
        self._unstored: dict[tuple, tuple] = {}
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        if settings.idempotency_lifetime is not None and settings.sweep_interval and settings.sweep_interval > 0:
            self._sweeper = threading.Thread(target=self._sweep_loop, name="ctk-idempotency-sweep", daemon=True)
            self._sweeper.start()

    # -- lifecycle ----------------------------------------------------------------------------------
    def routes(self) -> list:
        """Starlette routes of the control API (/_ctk/...), mounted only when settings.control_api."""
        return self.faults.routes(self.settings)

    def close(self) -> None:
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)

    def _sweep_loop(self) -> None:
        while not self._stop.wait(self.settings.sweep_interval):
            try:
                self.records.sweep()
            except Exception:  # keep sweeping; a locked database is retried at the next tick
                log.exception("idempotency sweep failed")

    # -- lifetime -----------------------------------------------------------------------------------
    def _expiry(self, now: float) -> float:
        return self.policy.expiry(now)

    # -- entry point --------------------------------------------------------------------------------
    async def handle(self, request: Request, mutation: Mutation) -> Response:
        mutation.scope = request.headers.get(SCOPE_HEADER)     # whose fault rules and counters (control API)
        values = request.headers.getlist(HEADER.lower())
        policy = self.policy
        if not values:
            return await self._unkeyed(request, mutation)
        support = policy.key_support()
        if support == "rejected":
            return render(error_result(400, "BadRequestException",
                                       f"{HEADER} is not supported by this catalog"))
        if support != "honoured":
            return await self._unkeyed(request, mutation)   # not advertised: the key is ignored
        if not policy.accepts_header_count(len(values)):
            return render(error_result(400, "BadRequestException",
                                       f"the {HEADER} header must be given once, got {len(values)} values"))
        key = policy.accept_key(values[0].strip())
        if key is None:
            return render(error_result(400, "BadRequestException",
                                       f"the {HEADER} header must be {policy.key_rule()} in its 36-character "
                                       f"form (e.g. 0190f1e2-3a4b-7c5d-8e9f-0a1b2c3d4e5f), got {values[0][:60]!r}"))
        if not policy.honours(mutation):      # a valid key on an operation whose keys are not honoured
            return await self._unkeyed(request, mutation)
        origin = (mutation.operation, mutation.resource, mutation.principal)
        scope = policy.scope(mutation, key)
        return await self._keyed(request, mutation, scope, origin, canonical_hash(mutation.body))

    # -- without a key ------------------------------------------------------------------------------
    def _take_faults(self, request: Request, mutation: Mutation, keyed: bool) -> dict[str, FaultRule]:
        if not self.settings.control_api or not self.faults.rules:
            return {}
        return self.faults.take(mutation.operation, request.method, request.url.path, keyed, mutation.scope)

    async def _unkeyed(self, request: Request, mutation: Mutation, faults: dict | None = None) -> Response:
        faults = self._take_faults(request, mutation, keyed=False) if faults is None else faults
        if "delay" in faults:
            await asyncio.sleep(faults["delay"].seconds)
        if "fail-before" in faults:
            return render(self._fault_error(faults["fail-before"]))
        result = await run_in_threadpool(self._execute_plain, mutation)
        return self._after_commit(result, faults)

    def _execute_plain(self, mutation: Mutation) -> OpResult:
        try:
            with self.engine.begin() as conn:
                self.faults.count_execution(mutation.operation, mutation.resource, mutation.scope)
                result = mutation.execute(conn)
            mutation.did_commit()
            return result
        except CatalogError as exc:
            return exc.result()
        except Exception:
            log.exception("operation %s failed", mutation.operation)
            return error_result(500, "InternalServerError", f"{mutation.operation} failed unexpectedly")

    def _after_commit(self, result: OpResult, faults: dict[str, FaultRule]) -> Response:
        if "crash-before-finalize" in faults:
            return render(self._fault_error(faults["crash-before-finalize"], "simulated crash after commit"))
        if "fail-after-commit" in faults:
            return render(self._fault_error(faults["fail-after-commit"], "injected failure after commit"))
        if "drop-after-commit" in faults:
            return DropResponse()
        return render(result)

    @staticmethod
    def _fault_error(rule: FaultRule, what: str = "injected failure before persisting") -> OpResult:
        type_ = "ServiceUnavailableException" if rule.status == 503 else (
            "InternalServerError" if rule.status >= 500 else "BadRequestException")
        return error_result(rule.status, type_, f"{what} (ctk fault {rule.id})")

    # -- with a key ---------------------------------------------------------------------------------
    def _storable(self, status: int) -> bool:
        return self.policy.storable(status)

    def _stale(self, rec: Record, now: float) -> bool:
        if rec.crashed:
            return True
        return rec.owner not in self._active and now - rec.updated_at > self.stale_after

    async def _keyed(self, request: Request, mutation: Mutation, scope: tuple, origin: tuple,
                     request_hash: str) -> Response:
        policy = self.policy
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, float(self.settings.in_flight_wait_timeout))
        races = 0
        faults: dict | None = None
        first = True
        met = False                      # this request met its key in flight (told a held original once)
        # Look the record up before anything else: for a scope finalized here (replay, or see it expired), and
        # on every poll while waiting for an original in flight (never run the mutation again meanwhile).
        if scope in self._unstored:      # an answer of this key the database could not take then: store it now
            await run_in_threadpool(self._flush_unstored, scope)
        look_up = scope in self._finalized_here
        while races < MAX_RACES:
            now = time.time()
            if look_up:
                look_up, owner = False, None
            elif first and not (self.settings.control_api and self.faults.rules):
                # Fast path (no fault rule can apply): reserve, run and finalize in one transaction.
                done = await run_in_threadpool(self._reserve_and_execute, mutation, scope, request_hash,
                                               self._expiry(now), now, origin_of(*origin))
                if done is not None:
                    return self._after_commit(done, {})
                owner = None
            elif scope in self._inflight:
                owner = None             # running on the fast path here: answered as in flight below
            else:
                owner = await run_in_threadpool(self.records.reserve, scope, request_hash, self._expiry(now), now,
                                                origin_of(*origin))
            first = False
            if owner is not None:
                if faults is None:
                    faults = self._take_faults(request, mutation, keyed=True)
                return await self._run_owned(mutation, owner, faults, recover=False, scope=scope)
            here = self._inflight.get(scope)   # running on the fast path here: its record is not committed yet
            rec = None if here is not None else await run_in_threadpool(self.records.get, scope)
            if rec is None and here is None:
                here = self._inflight.get(scope)
            if rec is None and here is None:   # released meanwhile: reserve again
                races += 1
                continue
            if rec is not None and rec.expires_at < now:     # expired: the key is new again
                await run_in_threadpool(self.records.delete, rec)
                races += 1
                continue
            if here is not None:     # one of the two is there: neither went round the loop again above
                held_hash, held_origin = here
            elif rec is not None:
                held_hash, held_origin = rec.request_hash, rec.origin
            reused = policy.reuse(mutation, held_origin, origin_of(*origin))
            if reused is not None:
                return render(reused)
            if policy.payload_conflict(held_hash, held_origin, request_hash, origin_of(*origin)):
                return render(policy.payload_conflict_answer(mutation))
            if rec is not None and rec.status == FINALIZED:
                if policy.finalized_duplicate() == "execute":
                    return await self._unkeyed(request, mutation, faults={})
                try:
                    result = decode_response(rec.response, rec.response_digest, self.resolve_ref)
                except StoredResponseError as exc:
                    if policy.unreadable_record() == "execute":
                        await run_in_threadpool(self.records.delete, rec)
                        races += 1
                        continue
                    return render(error_result(
                        500, "IdempotencyReplayFailedException",
                        f"the finalized response of this {HEADER} cannot be produced ({exc}); "
                        "the request was not executed again", subtype="idempotency_replay_failed"))
                if self._rebuilds:
                    result = await run_in_threadpool(policy.replay, self.engine, mutation, result)
                return self._replay(result)
            if rec is not None and self._stale(rec, now):      # IN_PROGRESS left by a crash
                owner = await run_in_threadpool(self.records.take_over, rec)
                if owner is None:
                    races += 1
                    continue
                return await self._run_owned(mutation, owner, {}, recover=True, created_at=rec.created_at)
            # in flight: an IN_PROGRESS record, or a request running on the fast path here
            if not met:
                met = True
                self._met_in_flight(scope)
            in_flight = policy.in_flight()
            if in_flight == "execute":
                return await self._unkeyed(request, mutation, faults={})
            if in_flight == "wait" and loop.time() < deadline:
                await asyncio.sleep(min(POLL_SECONDS, max(0.0, deadline - loop.time())))
                look_up = True
                continue
            return self._in_progress()
        return render(error_result(503, "ServiceUnavailableException",
                                   f"could not reserve the {HEADER} (too many concurrent changes); retry",
                                   headers={"Retry-After": "1"}))

    def _in_progress(self) -> Response:
        return render(self.policy.in_flight_answer())

    @staticmethod
    def _replay(result: OpResult) -> Response:
        headers = dict(result.headers)
        headers[REPLAY_HEADER] = "true"
        return render(OpResult(result.status, result.body, headers))

    async def _hold(self, rule: FaultRule, scope: tuple | None) -> None:
        """A `delay` fault: `rule.seconds`, or with `until-met` until that many same-key requests met this one
        in flight (`_met_in_flight`), `rule.seconds` being the longest."""
        if rule.until_met is None or scope is None:
            await asyncio.sleep(rule.seconds)
            return
        hold = self._holds[scope] = _Hold(rule.until_met)
        try:
            await asyncio.wait_for(hold.event.wait(), rule.seconds)
        except asyncio.TimeoutError:
            pass
        finally:
            if self._holds.get(scope) is hold:
                del self._holds[scope]

    def _met_in_flight(self, scope: tuple) -> None:
        hold = self._holds.get(scope)
        if hold is not None:
            hold.met += 1
            if hold.met >= hold.needed:
                hold.event.set()

    async def _run_owned(self, mutation: Mutation, owner: str, faults: dict[str, FaultRule], recover: bool,
                         created_at: float | None = None, scope: tuple | None = None) -> Response:
        self._active.add(owner)
        try:
            if "delay" in faults:
                await self._hold(faults["delay"], scope)
            if "fail-before" in faults:
                result = self._fault_error(faults["fail-before"])
                await run_in_threadpool(self._settle_outside, owner, result)
                return render(result)
            result, crashed = await run_in_threadpool(self._execute_owned, mutation, owner, faults, recover,
                                                      created_at)
        finally:
            self._active.discard(owner)
        if crashed:
            return render(result)
        if "corrupt-stored-response" in faults:
            await run_in_threadpool(self.records.corrupt, owner)
        return self._after_commit(result, {k: v for k, v in faults.items() if k != "crash-before-finalize"})

    def _reserve_and_execute(self, mutation: Mutation, scope: tuple, request_hash: str, expires_at: float,
                             now: float, origin: str) -> OpResult | None:
        """Fast path: run the mutation and write its finalized record in ONE transaction.

        None: the key is taken (a committed record, or a request of this process still running with it).
        Inside this process the in-flight registry answers a duplicate at once. The record is written last,
        with the stored answer, in a single statement: a duplicate from another process that ran meanwhile
        hits the record's unique index there, and its whole transaction (mutation included) rolls back; it
        then replays this record. A crash before the commit leaves neither the change nor the record, so the
        retry simply executes.
        """
        with self._inflight_lock:
            if scope in self._inflight:
                return None
            self._inflight[scope] = (request_hash, origin)
        try:
            return self._execute_reserved(mutation, scope, request_hash, expires_at, now, origin)
        finally:
            with self._inflight_lock:
                self._inflight.pop(scope, None)

    def _execute_reserved(self, mutation: Mutation, scope: tuple, request_hash: str, expires_at: float,
                          now: float, origin: str) -> OpResult | None:
        try:
            with self.engine.begin() as conn:
                result = mutation.execute(conn)
                wire = None
                if self._storable(result.status):
                    text, wire, ref = encode_stored(result)
                    try:
                        RecordStore.reserve_in(conn, scope, request_hash, expires_at, now, origin,
                                               status=FINALIZED, response=text, ref=ref)
                    except IntegrityError:
                        raise _KeyTaken() from None
                self.faults.count_execution(mutation.operation, mutation.resource, mutation.scope)
            mutation.did_commit()
            if self._storable(result.status):      # its record went in with it
                self._remember_finalized(scope)
            return _with_wire(result, wire)
        except _KeyTaken:
            return None
        except CatalogError as exc:      # the mutation rolled back: store its terminal answer on its own
            result = exc.result()
            if self._storable(result.status):
                try:
                    with self.engine.begin() as conn:
                        text, _wire, ref = encode_stored(result)
                        RecordStore.reserve_in(conn, scope, request_hash, expires_at, now, origin,
                                               status=FINALIZED, response=text, ref=ref)
                except IntegrityError:
                    return None          # another process finalized this key meanwhile: replay its answer
                self._remember_finalized(scope)
            elif self._key_taken(scope):
                # an answer that is not stored, of a run that rolled back while the key has a record (e.g. one
                # left IN_PROGRESS by a crash, whose change made this run fail): answered as the duplicate it is
                return None
            self.faults.count_execution(mutation.operation, mutation.resource, mutation.scope)
            return result
        except Exception:
            # A duplicate that ran while its original held the key (IN_PROGRESS on the reserve path, or already
            # committed) can fail on the original's own change, e.g. a unique constraint: it is answered as the
            # duplicate it is (in flight, or replayed), not with a 500.
            if self._key_taken(scope):
                log.info("operation %s failed while its key was taken by another request; answering as a "
                         "duplicate", mutation.operation, exc_info=True)
                return None
            log.exception("operation %s failed", mutation.operation)
            result = error_result(500, "InternalServerError", f"{mutation.operation} failed unexpectedly")
            if self._storable(result.status):   # a policy storing 5xx stores even a failing database's 500 (once back)
                text, _wire, ref = encode_stored(result)
                row = (scope, request_hash, expires_at, now, origin, text, ref)
                if not self._store_unstored(row):     # the database is still down: written before the next
                    with self._inflight_lock:         # request with this key is looked at
                        self._unstored[scope] = row
            return result

    def _store_unstored(self, row: tuple) -> bool:
        """Write a finalized answer the database could not take when it was made; whether it is stored (or
        another request's record holds the key)."""
        scope, request_hash, expires_at, now, origin, text, ref = row
        try:
            with self.engine.begin() as conn:
                RecordStore.reserve_in(conn, scope, request_hash, expires_at, now, origin,
                                       status=FINALIZED, response=text, ref=ref)
        except IntegrityError:
            return True
        except Exception:  # noqa: BLE001 - still failing: kept for later
            return False
        self._remember_finalized(scope)
        return True

    def _flush_unstored(self, scope: tuple) -> None:
        with self._inflight_lock:
            row = self._unstored.pop(scope, None)
        if row is not None and not self._store_unstored(row):
            with self._inflight_lock:
                self._unstored.setdefault(scope, row)

    def _key_taken(self, scope: tuple) -> bool:
        try:
            return self.records.get(scope) is not None
        except Exception:  # noqa: BLE001 - the database itself failing: the original error stands
            return False

    def _remember_finalized(self, scope: tuple) -> None:
        with self._inflight_lock:
            self._finalized_here[scope] = None
            if len(self._finalized_here) > FINALIZED_MEMORY:
                self._finalized_here.popitem(last=False)

    def _settle_outside(self, owner: str, result: OpResult) -> None:
        """Finalize (storable) or release the reservation in a short transaction of its own."""
        if self._storable(result.status):
            with self.engine.begin() as conn:
                RecordStore.finalize(conn, owner, result)
        else:
            self.records.release(owner)

    def _execute_owned(self, mutation: Mutation, owner: str, faults: dict[str, FaultRule], recover: bool,
                       created_at: float | None) -> tuple[OpResult, bool]:
        """Run (or reconcile) the mutation and settle its record in ONE transaction.
        Returns (result to answer, crashed-by-hook)."""
        try:
            executed = False
            with self.engine.begin() as conn:
                result = None
                if recover and self.policy.crashed_record() == "reconcile":
                    result = self._reconcile(conn, mutation, created_at)
                if result is None:
                    self.faults.count_execution(mutation.operation, mutation.resource, mutation.scope)
                    result = mutation.execute(conn)
                    executed = True
                if "crash-before-finalize" in faults:     # as if the process died after the commit
                    RecordStore.mark_crashed(conn, owner)
                    return self._fault_error(faults["crash-before-finalize"], "simulated crash after commit"), True
                if self._storable(result.status):
                    text, wire, ref = encode_stored(result)
                    if not RecordStore.finalize(conn, owner, result, text, ref):
                        raise _LostReservation()
                    result = _with_wire(result, wire)
                else:
                    RecordStore.release_in(conn, owner)
            if executed:
                mutation.did_commit()
            return result, False
        except CatalogError as exc:      # the mutation rolled back; settle its terminal answer
            result = exc.result()
            self._settle_outside(owner, result)
            return result, False
        except reconcile_mod.Unknown as exc:
            self._mark_crashed_outside(owner)
            return error_result(500, "CommitStateUnknownException",
                                f"cannot determine whether the earlier attempt with this {HEADER} was applied: "
                                f"{exc}; retry later"), False
        except _LostReservation:
            return error_result(503, "ServiceUnavailableException",
                                f"the {HEADER} reservation was lost while executing; nothing was changed, retry",
                                headers={"Retry-After": "1"}), False
        except Exception:
            log.exception("operation %s failed", mutation.operation)
            self.records.release(owner)
            return error_result(500, "InternalServerError", f"{mutation.operation} failed unexpectedly"), False

    def _mark_crashed_outside(self, owner: str) -> None:
        with self.engine.begin() as conn:
            RecordStore.mark_crashed(conn, owner)

    def _reconcile(self, conn: Connection, mutation: Mutation, created_at: float | None) -> OpResult | None:
        if mutation.reconcile is not None:
            return mutation.reconcile(conn)
        return reconcile_mod.reconcile(conn, mutation, created_at)
