"""The behaviours the kit observes, and the registry of checks: each check names its requirement and behaviour.

``Behaviour`` is the one vocabulary of behaviour names: a verdict's ``behaviour`` (the matrix column of the
reports), a scenario file's ``behaviour`` field and the checks' test names all use its values. A member carries
its display name (the column heading) and its area; the declaration order is the report's column order (the
Idempotency-Key behaviours every mutation endpoint is checked for first).

A check registers with ``@check(requirement=..., behaviour=Behaviour.X)`` (``also``: further (requirement,
behaviour) pairs the same check reports on). ``registered(area)`` lists the checks of an area in column order;
``checks_for(requirement)`` the checks behind a requirement. The requirement ids come from
``ctk.core.requirements``: an unknown id or behaviour is an error when the module defining the check is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Callable, Iterable

from ctk.core.requirements import REQUIREMENTS


class Behaviour(StrEnum):
    """A behaviour name (the value, as verdicts and scenario files spell it), its display name and its area."""

    display: str
    area: str

    def __new__(cls, value: str, display: str = "", area: str = "") -> "Behaviour":
        # (display and area have defaults only for the type checker: `Behaviour("name")` looks a member up)
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.display = display
        obj.area = area
        return obj

    # Idempotency-Key behaviour per mutation endpoint (the matrix's main columns)
    FINALIZED_DUPLICATE = ("finalized-duplicate", "finalized duplicate", "idempotency")
    REPLAY_ORIGINAL_STATE = ("replay-original-state", "replay of the original", "idempotency")
    TERMINAL_4XX_REPLAYED = ("terminal-4xx-replayed", "terminal 4xx replayed", "idempotency")
    FIVE_XX_NOT_STORED = ("5xx-not-stored", "5xx not stored", "idempotency")
    LOST_ANSWER = ("lost-answer", "answer lost", "idempotency")
    LOST_ANSWER_503 = ("lost-answer-503", "answer lost: 503", "idempotency")
    LOST_ANSWER_500 = ("lost-answer-500", "answer lost: 500", "idempotency")
    LOST_ANSWER_RESET = ("lost-answer-reset", "answer lost: reset", "idempotency")
    LOST_ANSWER_DROP = ("lost-answer-drop", "answer lost: dropped", "idempotency")
    IN_FLIGHT_DUPLICATE = ("in-flight-duplicate", "in-flight duplicate", "idempotency")
    IN_FLIGHT_409_SUBTYPE = ("in-flight-409-subtype", "in-flight 409 subtype", "idempotency")
    PAYLOAD_MISMATCH = ("payload-mismatch", "payload mismatch", "idempotency")
    KEY_SCOPE = ("key-scope", "key scope", "idempotency")
    KEY_REUSE_NO_5XX = ("key-reuse-no-5xx", "key reuse: no 5xx", "idempotency")
    LIFETIME = ("lifetime", "key lifetime", "idempotency")
    LIFETIME_GRACE = ("lifetime-grace", "lifetime grace", "idempotency")
    REPLAY_FAILED = ("replay-failed", "unreadable record", "idempotency")
    REPLAY_FAILED_SUBTYPE = ("replay-failed-subtype", "unreadable record subtype", "idempotency")
    CRASH_RECONCILED = ("crash-reconciled", "crash reconciled", "idempotency")
    # the catalog's plain semantics (no key, no fault; ctk.checks.semantics): one column per area, many checks
    CATALOG_NAMESPACES = ("catalog-namespaces", "catalog: namespaces", "catalog")
    CATALOG_TABLES = ("catalog-tables", "catalog: tables", "catalog")
    CATALOG_LISTING = ("catalog-listing", "catalog: listing", "catalog")
    CATALOG_EVOLUTION = ("catalog-evolution", "catalog: evolution", "catalog")
    CATALOG_TRANSACTIONS = ("catalog-transactions", "catalog: transactions", "catalog")
    CATALOG_VIEWS = ("catalog-views", "catalog: views", "catalog")
    CATALOG_TYPES = ("catalog-types", "catalog: types", "catalog")
    # discovery (GET /v1/config)
    DISCOVERY = ("discovery", "lifetime advertised", "discovery")
    LIFETIME_PLACEMENT = ("lifetime-placement", "lifetime at top level", "discovery")
    JAVA_PARSEABLE = ("java-parseable", "lifetime Java-parseable", "discovery")
    KEY_IGNORED_WHEN_UNSUPPORTED = ("key-ignored-when-unsupported", "key ignored when unsupported", "discovery")
    CLAIMED_SERVED = ("claimed-served", "claimed operations served", "discovery")
    NESTED_NAMESPACE = ("nested-namespace", "nested namespace loads back", "discovery")
    # key format
    MALFORMED_KEY = ("malformed-key", "malformed key", "keys")
    REPEATED_HEADER = ("repeated-header", "header given twice", "keys")
    # network faults through the interposer (ctk.checks.network)
    LOST_DROP = ("lost-drop", "network: answer dropped", "network")
    LOST_503 = ("lost-503", "network: answer replaced by 503", "network")
    LOST_RESET = ("lost-reset", "network: reset mid-answer", "network")
    LOST_TIMEOUT = ("lost-timeout", "network: answer past timeout", "network")
    SLOW_LINK = ("slow-link", "network: slow link", "network")
    NETWORK_DUPLICATE = ("network-duplicate", "network: duplicated request", "network")
    NETWORK_DUPLICATE_INFLIGHT = ("network-duplicate-inflight", "network: duplicate in flight", "network")
    SEED_1A = ("seed-1a", "seed example 1a (control)", "network")
    SEED_1B = ("seed-1b", "seed example 1b", "network")
    LOST_EVOLUTION = ("lost-evolution", "network: evolution commit answer lost", "network")
    # the link between the catalog and its database
    DB_LATENCY_IN_FLIGHT = ("db-latency-in-flight", "database: slow, duplicate in flight", "database")
    DB_LINK_RESET_PEER = ("db-link-reset-peer", "database: link reset", "database")
    DB_LINK_DOWN = ("db-link-down", "database: link down", "database")
    DB_LINK_FAIL_WRITE = ("db-link-fail-write", "database: write fails", "database")
    DB_COMMIT_CUT = ("db-commit-cut", "database: commit answer cut", "database")
    # commit concurrency
    REQUIREMENTS = ("requirements", "commit requirements", "concurrency")
    REQUIREMENT_ASSERT_CREATE = ("requirement:assert-create", "assert-create", "concurrency")
    REQUIREMENT_ASSERT_TABLE_UUID = ("requirement:assert-table-uuid", "assert-table-uuid", "concurrency")
    REQUIREMENT_ASSERT_REF_SNAPSHOT_ID = ("requirement:assert-ref-snapshot-id", "assert-ref-snapshot-id",
                                          "concurrency")
    REQUIREMENT_ASSERT_REF_SNAPSHOT_ID_NULL = ("requirement:assert-ref-snapshot-id-null",
                                               "assert-ref-snapshot-id (null)", "concurrency")
    REQUIREMENT_ASSERT_LAST_ASSIGNED_FIELD_ID = ("requirement:assert-last-assigned-field-id",
                                                 "assert-last-assigned-field-id", "concurrency")
    REQUIREMENT_ASSERT_CURRENT_SCHEMA_ID = ("requirement:assert-current-schema-id", "assert-current-schema-id",
                                            "concurrency")
    REQUIREMENT_ASSERT_LAST_ASSIGNED_PARTITION_ID = ("requirement:assert-last-assigned-partition-id",
                                                     "assert-last-assigned-partition-id", "concurrency")
    REQUIREMENT_ASSERT_DEFAULT_SPEC_ID = ("requirement:assert-default-spec-id", "assert-default-spec-id",
                                          "concurrency")
    REQUIREMENT_ASSERT_DEFAULT_SORT_ORDER_ID = ("requirement:assert-default-sort-order-id",
                                                "assert-default-sort-order-id", "concurrency")
    RACE = ("race", "commit race", "concurrency")
    SERIAL_HISTORY = ("serial-history", "serial history", "concurrency")
    TRANSACTION = ("transaction", "multi-table transaction", "concurrency")
    # a real client, and the data pipeline on Spark
    PYICEBERG = ("pyiceberg", "pyiceberg end to end", "client")
    CONCURRENT_APPENDS = ("concurrent-appends", "Spark: concurrent appends", "spark")
    SERIALIZABLE_COPY_ON_WRITE = ("serializable/copy-on-write", "Spark: serializable, copy-on-write", "spark")
    SERIALIZABLE_MERGE_ON_READ = ("serializable/merge-on-read", "Spark: serializable, merge-on-read", "spark")
    SNAPSHOT_COPY_ON_WRITE = ("snapshot/copy-on-write", "Spark: snapshot, copy-on-write", "spark")
    SNAPSHOT_MERGE_ON_READ = ("snapshot/merge-on-read", "Spark: snapshot, merge-on-read", "spark")
    COMPACTION_RACES = ("compaction-races", "Spark: compaction races", "spark")
    LOST_ANSWERS = ("lost-answers", "Spark: lost answers", "spark")
    # responses against the OpenAPI document, generated and model-based checks
    SCHEMA = ("schema", "responses conform", "schema")
    ALL_TRAFFIC = ("all-traffic", "all traffic conforms", "schema")
    GENERATED_REPLAY = ("generated-replay", "generated: replay", "generated")
    GENERATED_SCHEMA = ("generated-schema", "generated: schema", "generated")
    MODEL_BASED = ("model-based", "model-based sequences", "generated")
    # the kit itself: a check that crashed outside any check's own handling
    CRASH = ("crash", "check crashed", "kit")

    @property
    def order(self) -> int:
        """The column position in the reports (declaration order)."""
        return _ORDER[self]

    @classmethod
    def parse(cls, name: Any, where: str = "behaviour") -> "Behaviour":
        """The member named ``name`` (its value); ValueError naming ``where`` and the known names otherwise."""
        if isinstance(name, cls):
            return name
        try:
            return cls(name)
        except ValueError:
            raise ValueError(f"{where}: unknown behaviour {name!r} (known: {', '.join(known_names())})") from None


_ORDER = {b: i for i, b in enumerate(Behaviour)}


def known_names() -> list[str]:
    return [b.value for b in Behaviour]


def column_order(names: Iterable[str]) -> list[str]:
    """Behaviour names in the registry's column order; names that are not registered (a report from another
    version of the kit) follow, alphabetically."""
    names = set(names)
    known = [b.value for b in Behaviour if b.value in names]
    return known + sorted(names - set(known))


def display_name(name: str) -> str:
    """The column heading of a behaviour name (the name itself when it is not registered)."""
    try:
        return Behaviour(name).display
    except ValueError:
        return name


# ---------------------------------------------------------------------------------------------------------
# the check registry


@dataclass(frozen=True)
class RegisteredCheck:
    requirement: str
    behaviour: Behaviour
    fn: Callable[..., Any]
    also: tuple[tuple[str, Behaviour], ...] = ()

    @property
    def area(self) -> str:
        return self.behaviour.area

    @property
    def reports(self) -> tuple[tuple[str, Behaviour], ...]:
        """Every (requirement, behaviour) pair the check gives verdicts on."""
        return ((self.requirement, self.behaviour), *self.also)


CHECKS: list[RegisteredCheck] = []
SHARED_AREAS = frozenset({"catalog"})   # areas whose behaviours (columns) are shared by several checks


def _qualified(fn: Callable[..., Any]) -> tuple[str, str]:
    return getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", repr(fn))


def _requirement(rid: str, where: str) -> str:
    if rid not in REQUIREMENTS:
        raise ValueError(f"{where}: unknown requirement {rid!r} (known: {', '.join(REQUIREMENTS)})")
    return rid


def check(requirement: str, behaviour: Behaviour | str,
          also: Iterable[tuple[str, Behaviour | str]] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated check function under ``requirement`` and ``behaviour`` (both validated); the
    function is returned unchanged, with its registration as ``fn.ctk_check``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        where = f"check {getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"
        reg = RegisteredCheck(
            _requirement(requirement, where), Behaviour.parse(behaviour, where), fn,
            tuple((_requirement(r, where), Behaviour.parse(b, where)) for r, b in also))
        # A module imported again (a test that drops it from sys.modules) registers the same check anew: the
        # same module and name replace the old entry; another function on the same behaviour is an error.
        def same(other: RegisteredCheck) -> bool:
            return other.fn is fn or (_qualified(other.fn) == _qualified(fn))

        for other in CHECKS:
            # the catalog-semantics columns hold many checks each (an area, not one behaviour)
            if other.behaviour is reg.behaviour and not same(other) and reg.behaviour.area not in SHARED_AREAS:
                raise ValueError(f"{where}: behaviour {reg.behaviour.value!r} is already registered by "
                                 f"{other.fn.__module__}.{other.fn.__qualname__}")
        CHECKS[:] = [c for c in CHECKS if not same(c)] + [reg]
        fn.ctk_check = reg  # type: ignore[attr-defined]
        return fn

    return wrap


def registered(area: str | None = None) -> list[RegisteredCheck]:
    """The registered checks (of ``area``), in column order."""
    return sorted((c for c in CHECKS if area is None or c.area == area), key=lambda c: c.behaviour.order)


def checks_for(requirement: str) -> list[RegisteredCheck]:
    """The registered checks that report on ``requirement``."""
    return [c for c in registered() if any(r == requirement for r, _ in c.reports)]
