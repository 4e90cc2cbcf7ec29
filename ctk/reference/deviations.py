"""Deviation profiles of the reference catalog: each breaks exactly one rule.

They exist so the kit can prove that each of its checks fails when the rule is broken: the kit's own
tests start the reference catalog with a profile and assert that it fails exactly the requirements listed in
`catches`, each with the verdict its level calls for (tests/checks/test_sensitivity.py prints the matrix).
Selected with `ctk serve --deviation NAME` or ReferenceSettings(deviation=NAME).

Each profile is a subclass of a policy (ctk.reference.policies) overriding exactly ONE hook - of the
reference's KeyPolicy or CommitPolicy, or of the allowed variant it builds on (reuse-5xx: keys-global). Three
profiles are an allowed variant's policy itself (allowed by the merged spec, not by the design document).
This module is the registry: the catalog code asks the hooks and never compares a profile's name.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ctk.reference.operations import CatalogError, Mutation, OpResult
from ctk.reference.policies import LIFETIME_FIELD, CommitPolicy, KeyPolicy
from ctk.reference.variants import InflightPlain409, KeysGlobal, PayloadUnchecked


@dataclass(frozen=True)
class Profile:
    name: str
    breaks: str            # the rule it breaks, in one line
    catches: tuple[str, ...]  # requirement ids whose checks must fail (or deviate) under it, and no others
    policy: type[KeyPolicy] | type[CommitPolicy] = KeyPolicy  # the policy subclass that breaks it
    # Per endpoint: requirement -> the only endpoints (operationIds) whose checks show it broken. A requirement
    # of `catches` not named here is shown on every endpoint whose checks decide it on the reference
    # (tests/checks/test_reference_all_endpoints.py holds each endpoint to exactly that set).
    shown_on: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)

    def shown_on_endpoint(self, requirement: str, operation: str) -> bool:
        """Whether `operation`'s endpoint checks show `requirement` (one of `catches`) broken under it."""
        only = self.shown_on.get(requirement)
        return requirement in self.catches and (only is None or operation in only)


# -- discovery ----------------------------------------------------------------------------------------------
class LifetimeInOverrides(KeyPolicy):
    def advertise(self, config: dict) -> None:
        super().advertise(config)
        if LIFETIME_FIELD in config:
            config["overrides"][LIFETIME_FIELD] = config.pop(LIFETIME_FIELD)


class LifetimeWeeks(KeyPolicy):
    def advertise(self, config: dict) -> None:
        super().advertise(config)
        if LIFETIME_FIELD in config:
            config[LIFETIME_FIELD] = "P1W"


class NoDiscoveryRejectsKey(KeyPolicy):
    def key_support(self) -> str:
        return "rejected"


# -- key handling ---------------------------------------------------------------------------------------------
class AcceptMalformedKey(KeyPolicy):
    def accept_key(self, raw: str) -> str | None:
        key = super().accept_key(raw)
        if key is not None:
            return key
        return raw if 0 < len(raw) <= 200 else "sha256:" + hashlib.sha256(raw.encode()).hexdigest()


class AcceptRepeatedKey(KeyPolicy):
    def accepts_header_count(self, count: int) -> bool:
        return count >= 1


# -- replay ---------------------------------------------------------------------------------------------------
class NoReplay(KeyPolicy):
    def finalized_duplicate(self) -> str:
        return "execute"


class KeysPartial(KeyPolicy):
    def honours(self, mutation: Mutation) -> bool:
        return mutation.operation in ("createTable", "updateTable")


class ReplayDifferentBody(KeyPolicy):
    def replay(self, engine: Any, mutation: Mutation, stored: OpResult) -> OpResult:
        if not 200 <= stored.status < 300:     # a stored terminal 4xx replays as stored: REPLAY-02 holds
            return stored
        status = {200: 201, 201: 200, 204: 200}.get(stored.status, stored.status)
        return OpResult(status, {"replayed": True}, {})


class ReplayPurges(CommitPolicy):
    def purge_target(self, committed: str | None, current: Callable[[], str | None]) -> str | None:
        return committed or current()      # a replay purges whatever table has the name now


class Terminal4xxNotStored(KeyPolicy):
    def storable(self, status: int) -> bool:
        return 200 <= status < 300


class Store5xx(KeyPolicy):
    def storable(self, status: int) -> bool:
        return super().storable(status) or status >= 500


# -- in flight, scope, lifetime, recovery ---------------------------------------------------------------------
class InFlightReexecutes(KeyPolicy):
    def in_flight(self) -> str:
        return "execute"


class Reuse500(KeysGlobal):
    """Keys looked up by the key alone (the keys-global variant), and a reuse on another operation answered 500."""

    def reuse(self, mutation: Mutation, held_origin: str, origin: str) -> OpResult | None:
        if held_origin == origin:
            return None
        return CatalogError(500, "InternalServerError", f"{mutation.operation} failed unexpectedly").result()


class ShortLifetime(KeyPolicy):
    def expiry(self, now: float) -> float:
        # Half, not a tenth: a tenth of the PT4S the matrices advertise (0.4 s) is shorter than the kit's own
        # lost-answer client timeout (0.6 s), so REPLAY-04's and the in-flight burst's retries found the key
        # forgotten too - a catch that depended on the run's lifetime. At half, every retry of a non-lifetime
        # check (within about a second) is replayed; LIFE-01's duplicate at 90% is not.
        return now + self.settings.lifetime.total_seconds() / 2


class ReplayFailedReexecutes(KeyPolicy):
    def unreadable_record(self) -> str:
        return "execute"


class NoReconcile(KeyPolicy):
    def crashed_record(self) -> str:
        return "execute"


# -- commit concurrency ---------------------------------------------------------------------------------------
class StaleRequirementAccepted(CommitPolicy):
    def validate(self, requirements: list, base: Any) -> None:
        return None


class NoAtomicSwap(CommitPolicy):
    def atomic_swap(self) -> bool:
        return False


class TransactionNotAtomic(CommitPolicy):
    def atomic_transaction(self) -> bool:
        return False


# -- views --------------------------------------------------------------------------------------------------
class ViewReplaceKeepsOldVersion(CommitPolicy):
    def view_version_made_current(self) -> bool:
        return False


# -- tables -----------------------------------------------------------------------------------------------------
class MissingMetadata5xx(CommitPolicy):
    def missing_metadata(self, location: str) -> CatalogError:
        return CatalogError(500, "InternalServerError", f"FileNotFoundError: {location}")


# -- namespaces -------------------------------------------------------------------------------------------------
class DropNamespaceNotEmpty(CommitPolicy):
    def drop_needs_empty_namespace(self) -> bool:
        return False


# -- listing ----------------------------------------------------------------------------------------------------
class ListPagesOverlap(CommitPolicy):
    def next_page_offset(self, end: int) -> int:
        return end - 1


# -- evolution --------------------------------------------------------------------------------------------------
class TableUuidUnchecked(CommitPolicy):
    def validate(self, requirements: list, base: Any) -> None:
        from pyiceberg.table.update import AssertTableUUID

        super().validate([r for r in requirements if not isinstance(r, AssertTableUUID)], base)


# -- transactions -----------------------------------------------------------------------------------------------
class ReplaceLosesSnapshotLog(CommitPolicy):
    def replaced_metadata(self, updates: list, metadata: Any) -> Any:
        removes_main = any(getattr(u, "action", None) == "remove-snapshot-ref"
                           and getattr(u, "ref_name", None) == "main" for u in updates)
        return metadata.model_copy(update={"snapshot_log": []}) if removes_main else metadata


_ALL_ENDPOINTS = ("cancelPlanning", "commitTransaction", "createNamespace", "createTable", "createView",
                  "dropNamespace", "dropTable", "dropView", "fetchScanTasks", "planTableScan", "registerTable",
                  "registerView", "renameTable", "renameView", "replaceView", "unregisterTable", "updateProperties",
                  "updateTable")
_NOT_CREATE_UPDATE_TABLE = tuple(op for op in _ALL_ENDPOINTS if op not in ("createTable", "updateTable"))
_SUCCESS_WITH_BODY = tuple(op for op in _ALL_ENDPOINTS if op not in (
    "cancelPlanning", "commitTransaction", "dropNamespace", "dropTable", "dropView", "renameTable", "renameView"))

PROFILES: dict[str, Profile] = {p.name: p for p in [
    # discovery
    Profile("lifetime-in-overrides", "advertises idempotency-key-lifetime inside `overrides` instead of top level",
            ("DISC-02",), LifetimeInOverrides),
    Profile("lifetime-weeks", "advertises the lifetime as P1W, which Java's Duration.parse rejects",
            ("DISC-03",), LifetimeWeeks),
    Profile("no-discovery-rejects-key", "does not advertise support and rejects requests that carry a key with 400",
            ("DISC-04",), NoDiscoveryRejectsKey),
    # key handling
    Profile("accept-malformed-key", "accepts keys that are not UUIDs and executes the request",
            ("KEY-01",), AcceptMalformedKey),
    Profile("accept-repeated-key", "accepts the Idempotency-Key header given twice", ("KEY-02",), AcceptRepeatedKey),
    # replay
    # Never replaying breaks every rule about what a duplicate gets, each seen by its own check: the replay of a
    # success (REPLAY-01) and of a terminal 4xx (REPLAY-02), the answer lost in transit (REPLAY-04), keys honoured
    # for the advertised lifetime (LIFE-01), and no re-execution when the stored answer is unreadable (RECON-01).
    # The same re-executed duplicate is what the generated replays (GEN-01) and the model (GEN-02) see, what the
    # network's late copy applies twice (HIST-02), and, in the design document's example 1b, what turns a
    # committed append retried after a 503 into a 409 whose client deletes the files the table references
    # (INTEG-01).
    Profile("no-replay", "advertises support but re-executes every duplicate",
            ("REPLAY-01", "REPLAY-02", "REPLAY-04", "LIFE-01", "RECON-01", "GEN-01", "GEN-02", "HIST-02",
             "INTEG-01"), NoReplay),
    # On an operation whose keys it does not honour, every rule about a keyed duplicate is broken, each seen by its
    # own check there: replays (REPLAY-01/02/04), in-flight duplicates, payload binding, lifetime and recovery,
    # and the generated replays (GEN-01), the model (GEN-02) and the network's late copy (HIST-02) on the
    # operations whose keys it ignores.
    Profile("keys-partial", "advertises support but honours keys only on createTable and updateTable (as Polaris "
            "does); a key is still validated everywhere",
            ("REPLAY-01", "REPLAY-02", "REPLAY-04", "INFLIGHT-01", "PAYLOAD-01", "LIFE-01", "RECON-01", "RECON-02",
             "GEN-01", "GEN-02", "HIST-02"), KeysPartial,
            shown_on={r: _NOT_CREATE_UPDATE_TABLE for r in ("REPLAY-01", "REPLAY-02", "REPLAY-04", "INFLIGHT-01",
                                                           "PAYLOAD-01", "LIFE-01", "RECON-01", "RECON-02")}),
    # A success replayed wrongly is also what a retry after a lost answer gets (REPLAY-04), the lifetime check
    # recognises an honoured key by its replay (LIFE-01), and the generated replays (GEN-01) and the model's
    # retries (GEN-02) compare the replay with the original. SCHEMA-01 validates replays too: a replay that is not
    # the original is, for an operation whose success is 204 (the drops, renames, commitTransaction), an answer
    # the operation does not declare - the wrong replay itself, not a second rule.
    Profile("replay-different-body", "replays a success with another status/body than the original",
            ("REPLAY-01", "REPLAY-04", "LIFE-01", "GEN-01", "GEN-02", "SCHEMA-01"), ReplayDifferentBody,
            # after a lost answer the client compares bodies: an operation whose success is 204 has none to differ
            shown_on={"REPLAY-04": _SUCCESS_WITH_BODY}),
    # Every check that retries a purge-drop after the name was taken again sees the new table's files go: after a
    # lost answer (REPLAY-04), within the lifetime (LIFE-01), with an unreadable stored answer (RECON-01).
    Profile("replay-purges", "replays a purge-drop, but purges the files of the table that has the name now",
            ("REPLAY-01", "REPLAY-04", "LIFE-01", "RECON-01"), ReplayPurges,
            shown_on={r: ("dropTable",) for r in ("REPLAY-01", "REPLAY-04", "LIFE-01", "RECON-01")}),
    # The generated cases' 4xx replays (GEN-01) and the model's (GEN-02) re-execute too.
    Profile("terminal-4xx-not-stored", "does not finalize terminal 4xx, so a retry re-executes",
            ("REPLAY-02", "GEN-01", "GEN-02"), Terminal4xxNotStored),
    # The model's retry after an injected 503 (fails before persisting) gets the stored 503 back (GEN-02).
    Profile("store-5xx", "stores 5xx responses and replays them instead of executing the retry",
            ("REPLAY-03", "GEN-02"), Store5xx),
    # in flight
    Profile("in-flight-reexecutes", "lets an in-flight duplicate execute a second time",
            ("INFLIGHT-01",), InFlightReexecutes),
    Profile("in-flight-plain-409", "answers an in-flight duplicate 409 without the request_in_progress subtype",
            ("INFLIGHT-02",), InflightPlain409),
    # payload and scope
    Profile("no-payload-check", "replays the first response for the same key with another payload",
            ("PAYLOAD-01",), PayloadUnchecked),
    Profile("scope-ignored", "scopes keys globally: the same key on another operation/resource replays the first",
            ("SCOPE-01",), KeysGlobal),
    Profile("reuse-5xx", "answers a key reused on another operation with 500 (as upstream's server can)",
            ("SCOPE-02",), Reuse500),
    # lifetime
    Profile("short-lifetime", "forgets keys after half the advertised lifetime", ("LIFE-01",), ShortLifetime),
    # recovery
    Profile("replay-failed-reexecutes", "re-executes when a finalized response cannot be produced",
            ("RECON-01",), ReplayFailedReexecutes),
    Profile("no-reconcile", "on an IN_PROGRESS record left by a crash, re-executes without checking state",
            ("RECON-02",), NoReconcile),
    # commit concurrency
    # Unchecked requirements let stale commits through wherever the kit commits on a stale base: racing writers
    # (OCC-02: the losers' updates then fail as 400, not 409), appends from a stale base (OCC-03: snapshots off
    # the main chain), and the transaction check, whose conflicting table carries a stale requirement (OCC-04).
    Profile("stale-requirement-accepted", "does not check commit requirements",
            ("OCC-01", "OCC-02", "OCC-03", "OCC-04"), StaleRequirementAccepted),
    # A pointer written without compare-and-swap loses concurrent commits: both acknowledged, one missing from the
    # table's history - HIST-01 (every acknowledged commit is in the history) is that same lost update, observed.
    Profile("no-atomic-swap", "swaps the metadata pointer without compare-and-swap (read, check, then write)",
            ("OCC-02", "OCC-03", "HIST-01"), NoAtomicSwap),
    Profile("transaction-not-atomic", "applies a multi-table transaction table by table, keeping partial results",
            ("OCC-04",), TransactionNotAtomic),
    # views: replaceView adds the version but leaves the old one current - a client told "replaced" reads the
    # old SQL (the baseline of replaceView fails, so its retry checks are inconclusive, not failed)
    Profile("view-replace-keeps-old-version", "replaceView answers 200 but leaves current-version-id unchanged",
            ("VIEW-06",), ViewReplaceKeepsOldVersion),
    # tables: what the reference answered before issue 28 item 9 - a Java client retries the 500 for 30 s
    Profile("missing-metadata-5xx", "answers 500 to loadTable of a table whose current metadata file is gone",
            ("TBL-05",), MissingMetadata5xx),
    # namespaces: dropping a namespace that still holds tables answers 204 and removes it - its tables are left
    # under a namespace that no longer exists (no listing reaches them); the generated model run, where it drops
    # a namespace it put a table in, sees the same 204 where the spec documents 409 (SEM-01)
    Profile("drop-namespace-not-empty", "dropNamespace drops a namespace that holds tables, views or namespaces",
            ("NS-07", "SEM-01"), DropNamespaceNotEmpty),
    # listing: each page's next-page-token points at the last item of the page, so it comes again on the next page
    # (a client following tokens lists it twice; with pageSize 1 the tokens never end)
    Profile("list-pages-overlap", "a next-page-token repeats the last item of its page on the next page",
            ("LIST-02",), ListPagesOverlap),
    # evolution: a commit's assert-table-uuid is not checked, so a writer that still holds a dropped table commits
    # its change into the new table of the same name (EVO-07); the every-requirement check (OCC-01) and the
    # transaction whose table assert names another uuid (OCC-04) see the same rule broken
    Profile("table-uuid-unchecked", "does not check a commit's assert-table-uuid",
            ("EVO-07", "OCC-01", "OCC-04"), TableUuidUnchecked),
    # transactions: a replace transaction (it removes main) drops the table's snapshot log - the history a client
    # reads for time travel and rollback is gone although the snapshots are kept
    Profile("replace-loses-snapshot-log", "a replace transaction drops the table's snapshot log",
            ("TXN-03",), ReplaceLosesSnapshotLog),
]}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown deviation profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
