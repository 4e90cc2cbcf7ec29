"""The requirements the kit checks, each with an id, a source, a level and a one-line statement.

Every conformance check names one of these ids; reports and the generated requirements table in
docs/requirements.md are built from this registry (``ctk requirements --markdown``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Level(str, Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


# Short names of the documents requirements come from.
DESIGN = "Iceberg REST idempotency design (seeds/001)"
OPENAPI = "Iceberg REST OpenAPI (apache/iceberg 7f879b1)"
IETF = "IETF draft-ietf-httpapi-idempotency-key-header"
RFC9110 = "RFC 9110 (HTTP semantics)"
TABLE_SPEC = "Iceberg table spec / REST commit semantics"
KIT = "CTK (what the spec leaves open, classified)"


@dataclass(frozen=True)
class Requirement:
    id: str
    area: str
    level: Level
    source: str
    statement: str
    # Capability the check assumes; when the target lacks it the verdict is "unsupported".
    capability: str | None = None
    # "server" checks a catalog; "client" checks the kit's own retrying client.
    subject: str = "server"


_ALL: list[Requirement] = [
    # --- discovery -------------------------------------------------------------------------------
    Requirement("DISC-01", "discovery", Level.SHOULD, f"{DESIGN} §Capability Discovery; {OPENAPI} CatalogConfig",
                "GET /v1/config advertises idempotency support as a top-level, valid ISO-8601 "
                "`idempotency-key-lifetime`."),
    Requirement("DISC-02", "discovery", Level.SHOULD, f"{OPENAPI} CatalogConfig.idempotency-key-lifetime",
                "The lifetime is a top-level field of the config response, not a key inside `defaults` or "
                "`overrides`."),
    Requirement("DISC-03", "discovery", Level.SHOULD, f"{KIT}: Java Duration.parse",
                "The advertised lifetime is one an Iceberg Java client can parse (days, hours, minutes, "
                "seconds; no years, months or weeks)."),
    Requirement("DISC-04", "discovery", Level.MUST, f"{DESIGN} §Goals (support is optional and additive)",
                "A server that does not advertise support processes a mutation carrying an Idempotency-Key "
                "as an ordinary request.", capability="no-idempotency"),
    # --- key format --------------------------------------------------------------------------------
    Requirement("KEY-01", "keys", Level.SHOULD, f"{OPENAPI} components/parameters/idempotency-key (uuid, 36 chars)",
                "A malformed key (not a UUID, wrong length) is rejected with a 4xx and executes nothing."),
    Requirement("KEY-02", "keys", Level.SHOULD, f"{IETF} §2 (single header field)",
                "A request carrying the Idempotency-Key header twice is rejected with a 4xx and executes "
                "nothing."),
    # --- replay ------------------------------------------------------------------------------------
    Requirement("REPLAY-01", "replay", Level.MUST, f"{OPENAPI} idempotency-key; {DESIGN} §Server Responsibilities",
                "A finalized duplicate (same key, same payload; the retry spells the header in lower case) returns "
                "the original status and an equivalent body, and the mutation ran exactly once."),
    Requirement("REPLAY-02", "replay", Level.MUST, f"{OPENAPI} idempotency-key (finalize & replay terminal 4xx)",
                "A deterministic terminal 4xx is finalized: a retry with the same key gets the stored 4xx even "
                "after the conflicting state is gone, and executes nothing."),
    Requirement("REPLAY-03", "replay", Level.MUST, f"{OPENAPI} idempotency-key (do not finalize 5xx)",
                "A 5xx is never stored: after a failure before persisting, a retry with the same key executes."),
    Requirement("REPLAY-04", "replay", Level.MUST, f"{DESIGN} Example 1b",
                "Committed but the answer was lost (503, 500, reset): a retry with the same key returns success "
                "and the mutation ran exactly once."),
    # --- in flight ---------------------------------------------------------------------------------
    Requirement("INFLIGHT-01", "in-flight", Level.MUST, f"{DESIGN} §In-Flight Duplicates & Key Binding",
                "A duplicate arriving while the original is in flight never executes a second time; it gets 409 "
                "or waits and replays the final result."),
    Requirement("INFLIGHT-02", "in-flight", Level.SHOULD, f"{DESIGN} §Error subtype",
                "A 409 for an in-flight duplicate carries the machine-readable subtype `request_in_progress`."),
    # --- payload and scope -------------------------------------------------------------------------
    Requirement("PAYLOAD-01", "payload", Level.SHOULD, f"{DESIGN} §Request Hashing; {IETF} §2.4",
                "The same key with another payload is rejected with 422 and executes nothing."),
    Requirement("SCOPE-01", "scope", Level.MUST, f"{DESIGN} §Key Requirements (scoped to operation and resource)",
                "The same key sent to another operation or resource is not answered with the first request's "
                "stored response."),
    # --- lifetime ----------------------------------------------------------------------------------
    Requirement("LIFE-01", "lifetime", Level.MUST, f"{DESIGN} §Honor window + grace; {OPENAPI} CatalogConfig",
                "Duplicates are honoured for at least the advertised lifetime, measured from first acceptance."),
    Requirement("LIFE-02", "lifetime", Level.MUST, f"{DESIGN} §Token Lifetime & Client Retry Behavior",
                "A retrying client stops retrying with the same key once the lifetime has elapsed and raises "
                "IdempotencyWindowExpired.", subject="client"),
    # --- replay failure and crash recovery ---------------------------------------------------------
    Requirement("RECON-01", "recovery", Level.MUST, f"{DESIGN} §Commit succeeded but idempotency record wasn't finalized",
                "A finalized record whose response cannot be produced gives 5xx `idempotency_replay_failed` and "
                "never re-executes.", capability="control-api"),
    Requirement("RECON-02", "recovery", Level.MUST, f"{DESIGN} §reserve-then-finalize",
                "An IN_PROGRESS record left by a crash after the commit is reconciled on retry: success, one "
                "execution.", capability="control-api"),
    # --- commit concurrency ------------------------------------------------------------------------
    Requirement("OCC-01", "concurrency", Level.MUST, f"{TABLE_SPEC}; {OPENAPI} TableRequirement",
                "A commit whose requirement does not hold gets 409 CommitFailedException and changes nothing."),
    Requirement("OCC-02", "concurrency", Level.MUST, f"{TABLE_SPEC} (atomic compare-and-swap)",
                "Of N writers committing on the same base at once, exactly one wins and the others get 409."),
    Requirement("OCC-03", "concurrency", Level.MUST, f"{TABLE_SPEC} (serial history)",
                "N x M appends with refresh and retry give N x M snapshots in one linear parent chain with "
                "increasing sequence numbers."),
    Requirement("OCC-04", "concurrency", Level.MUST, f"{OPENAPI} commitTransaction",
                "A multi-table transaction is all or nothing, also when one table's requirement fails."),
    # --- history -----------------------------------------------------------------------------------
    Requirement("HIST-01", "history", Level.MUST, f"{KIT} (Jepsen-style history)",
                "No acknowledged mutation is missing from the final state (no lost write)."),
    Requirement("HIST-02", "history", Level.MUST, f"{KIT} (Jepsen-style history)",
                "No mutation is applied more than once (no duplicated write)."),
    Requirement("INTEG-01", "integrity", Level.MUST, f"{DESIGN} Example 1a; {TABLE_SPEC}",
                "Every snapshot of a table references a manifest list and manifests that exist in storage."),
    # --- protocol ----------------------------------------------------------------------------------
    Requirement("SCHEMA-01", "protocol", Level.SHOULD, f"{OPENAPI}",
                "Responses conform to the OpenAPI document: declared status codes and body schemas, ErrorModel "
                "for errors."),
    Requirement("GEN-01", "generated", Level.MUST, f"{OPENAPI}; {DESIGN}",
                "Generated well-formed mutations get no 5xx, and a replay with the same key returns the same "
                "outcome with no further effect."),
    Requirement("GEN-02", "generated", Level.MUST, f"{KIT} (model-based)",
                "Under random sequences of mutations, retries and faults, the catalog's state matches a model "
                "of it after every step."),
    # --- data pipeline -----------------------------------------------------------------------------
    Requirement("SPARK-01", "spark", Level.MUST, f"{TABLE_SPEC}",
                "Concurrent Spark appends through the catalog all land, conflicts retried, table intact.",
                capability="spark"),
    Requirement("SPARK-02", "spark", Level.MUST, f"{TABLE_SPEC}; seeds/003",
                "Concurrent UPDATE/DELETE/MERGE conflicts surface as client validation errors, never as a "
                "corrupt or half-applied table.", capability="spark"),
    Requirement("SPARK-03", "spark", Level.MUST, f"{TABLE_SPEC}; seeds/003",
                "Compaction racing with appends and row-level updates leaves an intact table.",
                capability="spark"),
    Requirement("SPARK-04", "spark", Level.MUST, f"{DESIGN} Example 1b",
                "Spark workloads with lost commit answers injected keep the table intact with every "
                "acknowledged write present once.", capability="spark"),
]

REQUIREMENTS: dict[str, Requirement] = {r.id: r for r in _ALL}


def get(requirement_id: str) -> Requirement:
    try:
        return REQUIREMENTS[requirement_id]
    except KeyError:
        raise KeyError(f"unknown requirement id {requirement_id!r}; known: {', '.join(REQUIREMENTS)}") from None


def markdown_table() -> str:
    """The requirements table for docs/requirements.md."""
    lines = [
        "| id | level | area | statement | source | assumes |",
        "|---|---|---|---|---|---|",
    ]
    for r in _ALL:
        lines.append(
            f"| {r.id} | {r.level.value} | {r.area} | {r.statement} | {r.source} | {r.capability or ''} |"
        )
    return "\n".join(lines) + "\n"
