"""The reference catalog's strategies: how it handles Idempotency-Keys (KeyPolicy) and commits (CommitPolicy).

The base classes are the correct behaviour, the reference's own choice wherever the spec leaves one open.
Every other behaviour is a subclass: an allowed variant (ctk.reference.variants) overrides the hooks of the
path it takes; a deviation profile (ctk.reference.deviations) overrides exactly ONE hook, so it breaks one
rule. The catalog code asks the hooks and never compares a profile's name. Each base lists its hooks in
HOOKS (tests/reference/test_policies.py checks the one-hook rule against that list).

Adding a deviation profile is one subclass and one registry entry::

    class NoReplay(KeyPolicy):
        def finalized_duplicate(self) -> str:
            return "execute"

    Profile(NAME, "re-executes every duplicate", ("REPLAY-01", "REPLAY-04"), NoReplay)
"""

from __future__ import annotations

import re
import uuid
from typing import Any, Callable

from ctk.reference.operations import CatalogError, Mutation, OpResult

HEADER = "Idempotency-Key"
LIFETIME_FIELD = "idempotency-key-lifetime"
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
STORED_4XX = (400, 404, 409, 422)


class KeyPolicy:
    """The reference catalog's Idempotency-Key handling (ctk.reference.pipeline asks these hooks)."""

    name = "reference"
    HOOKS = ("key_support", "advertise", "honours", "accepts_header_count", "accept_key", "key_rule", "scope",
             "reuse", "payload_conflict", "payload_conflict_answer", "finalized_duplicate", "unreadable_record",
             "replay", "in_flight", "in_flight_answer", "expiry", "storable", "crashed_record")

    def __init__(self, settings: Any):
        self.settings = settings

    # -- support and discovery ----------------------------------------------------------------------
    def key_support(self) -> str:
        """What a request carrying a key gets: "honoured" (when a lifetime is configured), "ignored" (run as an
        ordinary request: not advertised), or "rejected" (400)."""
        return "honoured" if getattr(self.settings, "idempotency_lifetime", None) is not None else "ignored"

    def advertise(self, config: dict) -> None:
        """Write what /v1/config advertises about keys into its body: the lifetime at top level."""
        if self.key_support() == "honoured":
            config[LIFETIME_FIELD] = self.settings.idempotency_lifetime

    def honours(self, mutation: Mutation) -> bool:
        """Whether a valid key on this operation is honoured (every mutation), or the request runs as an ordinary
        one (asked after the key's format and count are checked)."""
        return True

    # -- key acceptance -----------------------------------------------------------------------------
    def accepts_header_count(self, count: int) -> bool:
        """Whether the Idempotency-Key header may appear `count` times: once only."""
        return count == 1

    def accept_key(self, raw: str) -> str | None:
        """The key a header value stands for (normalised), or None when it is refused with 400: a UUIDv7."""
        if UUID_RE.match(raw) and uuid.UUID(raw).version == 7:
            return raw.lower()
        return None

    def key_rule(self) -> str:
        """The accepted format, for the 400 message."""
        return "a UUIDv7 (RFC 9562)"

    # -- scope and payload --------------------------------------------------------------------------
    def scope(self, mutation: Mutation, key: str) -> tuple:
        return (mutation.operation, mutation.resource, key, mutation.principal)

    def reuse(self, mutation: Mutation, held_origin: str, origin: str) -> OpResult | None:
        """The answer when a key held by another operation/resource/principal is met (possible only with a
        scope wider than those): None, go on as a duplicate."""
        return None

    def payload_conflict(self, held_hash: str, held_origin: str, request_hash: str, origin: str) -> bool:
        """Whether the same key with this payload is refused (422): another payload for the same request."""
        return held_hash != request_hash and held_origin == origin

    def payload_conflict_answer(self, mutation: Mutation) -> OpResult:
        """The answer that refuses it (nothing executed): 422 IdempotencyKeyConflict."""
        return CatalogError(422, "IdempotencyKeyConflict", f"Unprocessable Entity: the {HEADER} was already used "
                            f"with another request payload for {mutation.operation}; use a new key for a new "
                            "request").result()

    # -- duplicates ---------------------------------------------------------------------------------
    def finalized_duplicate(self) -> str:
        """A duplicate of a finalized key: "replay" the stored answer, or "execute" it again."""
        return "replay"

    def unreadable_record(self) -> str:
        """A finalized record whose answer cannot be produced: "fail" (500, not executed), or "execute"."""
        return "fail"

    def replay(self, engine: Any, mutation: Mutation, stored: OpResult) -> OpResult:
        """The answer to a finalized duplicate: the stored one."""
        return stored

    def in_flight(self) -> str:
        """A duplicate of a request still running: "reject" (answer at once), "wait" (and replay), "execute"."""
        return "wait" if getattr(self.settings, "in_flight", "reject") == "wait" else "reject"

    def in_flight_answer(self) -> OpResult:
        """The answer that rejects an in-flight duplicate: 409 with the request_in_progress subtype."""
        return _error(409, "RequestInProgressException", "request_in_progress")

    # -- records ------------------------------------------------------------------------------------
    def expiry(self, now: float) -> float:
        return now + (self.settings.lifetime + self.settings.grace).total_seconds()

    def storable(self, status: int) -> bool:
        """Whether an answer is finalized (replayed to duplicates): 2xx and terminal 4xx, never 5xx."""
        return 200 <= status < 300 or status in STORED_4XX

    def crashed_record(self) -> str:
        """An IN_PROGRESS record left by a crash: "reconcile" with the catalog's state, or "execute" blindly."""
        return "reconcile"


def _error(status: int, type_: str, subtype: str | None) -> OpResult:
    return CatalogError(status, type_, f"a request with this {HEADER} is still in progress; retry later", subtype,
                        {"Retry-After": "1"}).result()


class CommitPolicy:
    """The reference catalog's commit handling (ctk.reference.catalog asks these hooks)."""

    name = "reference"
    HOOKS = ("atomic_swap", "validate", "atomic_transaction", "purge_target", "namespace_separator",
             "drop_deletes_metadata", "view_version_made_current", "missing_metadata", "replaced_metadata",
             "drop_needs_empty_namespace", "next_page_offset")

    def __init__(self, settings: Any):
        self.settings = settings

    def atomic_swap(self) -> bool:
        """Whether the metadata pointer is swapped by compare-and-swap inside the request's transaction (else:
        the base is read and checked before, outside it, and the pointer written without comparing)."""
        return True

    def validate(self, requirements: list, base: Any) -> None:
        """Check a commit's requirements against its base; raise pyiceberg's CommitFailedException (worded as
        Iceberg Java's requirement failures: ctk.reference.builder)."""
        from ctk.reference.builder import check_requirements
        check_requirements(requirements, base)

    def atomic_transaction(self) -> bool:
        """Whether a multi-table transaction is all or nothing (else the tables before a failing one stay)."""
        return True

    def purge_target(self, committed: str | None, current: Callable[[], str | None]) -> str | None:
        """The metadata location whose files a purge-drop deletes: the table this request's own drop
        committed (None: nothing, e.g. a replay). `current` reads the location the name has now."""
        return committed

    def namespace_separator(self) -> str:
        """The separator of namespace levels in paths and the ``parent`` query that /v1/config advertises as
        ``namespace-separator`` (URL-encoded) besides the unit separator 0x1F, which every server decodes: the
        unit separator itself (nothing to advertise)."""
        return "\x1f"

    def drop_deletes_metadata(self) -> bool:
        """Whether dropping a view, or a table without purge, deletes its metadata files (as Iceberg's own
        catalogs do; the spec leaves it open): no, they stay where they are."""
        return False

    def view_version_made_current(self) -> bool:
        """Whether replaceView's set-current-view-version makes the named version current (as Java's
        ViewMetadata.Builder): yes."""
        return True

    def missing_metadata(self, location: str) -> CatalogError:
        """The error for a table whose current metadata file is gone (loadTable, a commit's base): 404
        NotFoundException, as upstream's CatalogHandlers answers (the FileIO's NotFoundException), which the
        Java client raises as NotFoundException without retrying."""
        return CatalogError(404, "NotFoundException", f"Failed to open input stream for file: {location}")

    def replaced_metadata(self, updates: list, metadata: Any) -> Any:
        """The metadata a commit leaves once the builder applied its ``updates``; for a replace transaction (it
        removes main) what Java's builder makes: the snapshots and the snapshot log kept, no current snapshot."""
        return metadata

    def drop_needs_empty_namespace(self) -> bool:
        """Whether dropNamespace refuses a namespace that holds a table, a view or a child namespace (409
        NamespaceNotEmptyException, as every Iceberg catalog): yes."""
        return True

    def next_page_offset(self, end: int) -> int:
        """Where the page after one that ended before item `end` starts (its next-page-token): at `end`."""
        return end
