"""The requirements the kit checks: an id, a statement, and each source's level with the sentence it rests on.

Every conformance check names one of these ids; reports and docs/requirements.md are built from this registry
(``ctk requirements --markdown``).

Sources (`Said`, one per document that speaks to a requirement):

- ``spec``    the merged Iceberg REST OpenAPI document (what catalog authors implement)
- ``design``  the Iceberg REST idempotency design document (seeds/001; stricter in places)
- ``ietf``    the IETF Idempotency-Key header draft (recorded for reference; no profile judges by it)
- ``rck``     Iceberg's REST compatibility kit (``CatalogTests``, ``ViewCatalogTests``): what its tests assert of
              a catalog, judged where neither document speaks (no RFC 2119 word: SHOULD); the catalog-semantics
              family (areas namespaces, tables, listing, evolution, transactions, views) rests on it
- ``kit``     the kit's own classification: a level the kit holds under EVERY profile (no additional effect
              for a duplicate, 5xx never stored, optimistic concurrency, history, integrity), or ``None``
              where it only classifies

A source's level is the RFC 2119 word of the sentence; a sentence that states the rule without such a word is
recorded with ``level=None`` and counts as SHOULD; ``Level.CLASSIFIED`` records a sentence that explicitly
allows more than one behaviour.

Profiles (``--ctk-profile``; `set_profile`): ``spec`` (default) judges by the merged spec's level, ``design``
by the design document's level where it speaks and the merged spec's elsewhere. The kit's own level is a floor
under both. Where no source gives a level the requirement is CLASSIFIED: the check reports the behaviour it
saw, and a behaviour other than the one the statement names is not a fault (the verdict passes with the
classification). ``Requirement.level`` is the level under the active profile; ``level_under(profile)`` any.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Level(str, Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"
    CLASSIFIED = "CLASSIFIED"   # no source under the profile judges it: the behaviour is classified


_RANK = {Level.MUST: 3, Level.SHOULD: 2, Level.MAY: 1, Level.CLASSIFIED: 0}

# Short names of the documents requirements come from.
DESIGN = "Iceberg REST idempotency design (seeds/001)"
OPENAPI = "Iceberg REST OpenAPI (apache/iceberg 7f879b1)"
IETF = "IETF draft-ietf-httpapi-idempotency-key-header"
RFC9110 = "RFC 9110 (HTTP semantics)"
TABLE_SPEC = "Iceberg table spec / REST commit semantics"
KIT = "CTK (what the spec leaves open, classified)"

RCK = "Iceberg REST compatibility kit (CatalogTests / ViewCatalogTests, apache/iceberg 7f879b1)"

SOURCE_NAMES = {"spec": OPENAPI, "design": DESIGN, "ietf": IETF, "kit": "CTK classification",
                "http": RFC9110, "table": TABLE_SPEC, "rck": RCK}
PROFILES = ("spec", "design")
DEFAULT_PROFILE = "spec"
_active = {"profile": DEFAULT_PROFILE}


def set_profile(name: str) -> str:
    """Select the profile verdicts are judged by ("spec" or "design"); returns the previous one."""
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}")
    previous, _active["profile"] = _active["profile"], name
    return previous


def active_profile() -> str:
    return _active["profile"]


def other_profile(profile: str | None = None) -> str:
    p = profile or active_profile()
    return next(x for x in PROFILES if x != p)


@dataclass(frozen=True)
class Said:
    """What one source says about a requirement: its level (None: a rule without an RFC 2119 word), where, and
    the sentence (quoted from the source; [..] marks an omission)."""

    source: str                   # "spec" | "design" | "ietf" | "kit" | "http" | "table"
    level: Level | None
    where: str
    quote: str

    @property
    def effective(self) -> Level:
        return Level.SHOULD if self.level is None else self.level

    @property
    def word(self) -> str:
        """The level as the source states it, for the documents: "MUST", or "(no RFC 2119 word) -> SHOULD"."""
        if self.level is None:
            return "no RFC 2119 word: SHOULD"
        return "allows either: CLASSIFIED" if self.level is Level.CLASSIFIED else self.level.value


class Requirement:
    """A requirement. Construct as before, ``Requirement(id, area, level, source, statement, capability=None,
    subject="server")`` (then ``level`` applies under every profile), or pass ``said=(Said(...), ...)``."""

    def __init__(self, id: str, area: str, level: Level | None, source: str, statement: str,
                 capability: str | None = None, subject: str = "server", said: tuple[Said, ...] = ()):
        self.id, self.area, self.statement = id, area, statement
        self.capability, self.subject = capability, subject   # capability: without it the verdict is unsupported
        self.said = tuple(said)                               # subject: "server" or "client" (the kit's client)
        if level is None and not self.said:
            raise ValueError(f"requirement {id}: give a level, or the sources (said=) it comes from")
        if level is not None and self.said and level not in {self.level_under(p) for p in PROFILES}:
            raise ValueError(f"requirement {id}: level {level.value} is given, but its sources make it "
                             + ", ".join(f"{self.level_under(p).value} under {p}" for p in PROFILES)
                             + "; give one of those (or None: the level the sources state)")
        self.base_level = level if level is not None else self.level_under("spec")
        self.base_source = source

    def __repr__(self) -> str:
        return f"Requirement({self.id!r}, {self.level.value})"

    def saying(self, source: str) -> Said | None:
        return next((s for s in self.said if s.source == source), None)

    def deciding(self, profile: str | None = None) -> Said | None:
        """The statement that sets the level under `profile` (the kit's floor when it is the stronger)."""
        profile = profile or active_profile()
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
        doc = self.saying("spec") if profile == "spec" else (self.saying("design") or self.saying("spec"))
        # Iceberg's own compatibility kit is a source of its own: what its tests assert of a catalog, where
        # neither document speaks (its assertions carry no RFC 2119 word: SHOULD)
        doc = doc or self.saying("rck")
        kit = self.saying("kit")
        if kit is not None and kit.level is not None and (doc is None or _RANK[kit.level] > _RANK[doc.effective]):
            return kit
        return doc

    def level_under(self, profile: str | None = None) -> Level:
        if not self.said:
            return self.base_level
        d = self.deciding(profile)
        return Level.CLASSIFIED if d is None else d.effective

    @property
    def level(self) -> Level:
        """The level under the active profile."""
        return self.level_under()

    @property
    def levels(self) -> dict[str, Level]:
        return {p: self.level_under(p) for p in PROFILES}

    @property
    def source(self) -> str:
        """The sources that speak to it: the documents (merged spec first), then the kit's classification
        (`rests_on` names the one that sets the level under a profile)."""
        if not self.said:
            return self.base_source
        order = list(SOURCE_NAMES)
        ordered = sorted(self.said, key=lambda s: order.index(s.source) if s.source in order else len(order))
        kit = [s for s in ordered if s.source == "kit"]
        ordered = [s for s in ordered if s.source != "kit"] + kit
        return "; ".join(f"{SOURCE_NAMES.get(s.source, s.source)} {s.where}" for s in ordered)

    def rests_on(self, profile: str | None = None) -> str:
        """The sentence the level under `profile` rests on, with its source."""
        d = self.deciding(profile)
        if d is None:
            return "no source under this profile states it: classified, not judged"
        return f"{SOURCE_NAMES.get(d.source, d.source)} {d.where}: \u201c{d.quote}\u201d"


def status_if_broken(requirement_id: str, profile: str | None = None) -> str:
    """The verdict status of a check that found the rule broken: "fail" (MUST), "deviation" (SHOULD, MAY) or
    "pass" (CLASSIFIED: the behaviour is reported, not judged)."""
    level = get(requirement_id).level_under(profile)
    return {Level.MUST: "fail", Level.CLASSIFIED: "pass"}.get(level, "deviation")


# --- the sentences ---------------------------------------------------------------------------------------
_P = "components/parameters/idempotency-key"
_C = "CatalogConfig.idempotency-key-lifetime"
S_NO_EFFECT = Said("spec", None, _P, "When present, the server ensures no additional effects for requests that "
                   "carry the same Idempotency-Key. If a prior request with this key has been finalized, the server "
                   "returns an equivalent final response without re-running the operation.")
D_AT_MOST_ONCE = Said("design", None, "§API Changes", "When provided, the server guarantees at most once "
                      "execution for requests with the same key.")
# quoted by INFLIGHT-01 for its MAY (block, then replay) and by INFLIGHT-02 for the 409 subtype
_D_IN_PROGRESS = ("Key known & IN_PROGRESS -> return 409 request_in_progress (server MAY block and then return the "
                  "final result; MAY include Retry-After).")
D_SAME_KEY = Said("design", None, "§Server Responsibilities", "Same key --> do not re-execute; return the "
                  "stored/prior response.")


def _kit_must(why: str) -> Said:
    return Said("kit", Level.MUST, "(held under every profile)", why)


def _rck(where: str, quote: str) -> Said:
    """What a test of Iceberg's REST compatibility kit asserts (in the kit's words; the test named in where)."""
    return Said("rck", None, where, quote)


def _spec(where: str, quote: str) -> Said:
    return Said("spec", None, where, quote)


def _sem(rid: str, area: str, statement: str, *said: Said, capability: str | None = None) -> Requirement:
    """A requirement of the catalog-semantics family (``ctk.checks.semantics``)."""
    return Requirement(rid, area, None, "", statement, capability=capability, said=said)


K_EFFECT = _kit_must("An acknowledged mutation has its effect, as the next read shows: a client told “done” "
                     "that then reads otherwise loses data or reports a success that did not happen.")
K_REFUSED = _kit_must("A refused mutation has no effect: a client told “failed” cleans up after a change "
                      "that in fact happened.")
K_READ_BACK = _kit_must("A read shows every acknowledged change: a client that reads an older state commits on "
                        "top of it and loses the change, or reports it missing.")


K_NO_EFFECT = _kit_must("A duplicate with the same key and payload has no additional effect: a retry that "
                        "executes again duplicates a write, and one answered 409 by its own earlier write makes "
                        "the client delete files the table references (design document, Example 1a).")

_ALL: list[Requirement] = [
    # --- discovery -------------------------------------------------------------------------------
    Requirement("DISC-01", "discovery", Level.SHOULD, "", "GET /v1/config advertises idempotency support as a "
                "top-level, valid ISO-8601 `idempotency-key-lifetime`.", said=(
                    Said("spec", None, _C, "Client reuse window for an Idempotency-Key (ISO-8601 duration, e.g., "
                         "PT30M, PT24H). [..] Presence of this field indicates the server supports Idempotency-Key "
                         "semantics for mutation endpoints."),
                    Said("design", Level.SHOULD, "§Capability Discovery", "Catalogs SHOULD expose whether "
                         "idempotency key is supported by returning an ISO-8601 duration for the window"))),
    Requirement("DISC-02", "discovery", Level.SHOULD, "", "The lifetime is a top-level field of the config "
                "response, not a key inside `defaults` or `overrides`.", said=(
                    Said("spec", None, "CatalogConfig (properties overrides, defaults, endpoints, "
                         "idempotency-key-lifetime)", "idempotency-key-lifetime: type: string, format: duration "
                         "(a property of CatalogConfig itself, beside `defaults` and `overrides`)"),)),
    Requirement("DISC-03", "discovery", Level.SHOULD, "", "The advertised lifetime is one an Iceberg Java client can "
                "parse (days, hours, minutes, seconds; no years, months or weeks).", said=(
                    Said("kit", Level.SHOULD, "(interoperability; java.time.Duration.parse)", "Iceberg Java reads "
                         "the lifetime with Duration.parse, which rejects P1W and other year, month or week "
                         "durations: such a lifetime switches the feature off for Java clients."),)),
    Requirement("DISC-04", "discovery", Level.SHOULD, "", "A server that does not advertise support processes a "
                "mutation carrying an Idempotency-Key as an ordinary request.", capability="no-idempotency", said=(
                    Said("spec", None, _P, "required: false [..] Optional client-provided idempotency key for safe "
                         "request retries."),
                    Said("design", None, "§Goals", "Make support for handling idempotency optional so that "
                         "existing client/server behavior remains unchanged"))),
    Requirement("DISC-05", "discovery", Level.SHOULD, "", "An operation the catalog claims (listed in `endpoints`, "
                "or in the default set when no list is sent) is served: not answered as by a router that does not "
                "know the path, nor refused with 405 or 501.", said=(
                    Said("spec", None, "CatalogConfig.endpoints; getConfig", "A list of endpoints that the server "
                         "supports. [..] If a server does not send the `endpoints` field, a default set of endpoints "
                         "is assumed"),)),
    # --- key format --------------------------------------------------------------------------------
    Requirement("KEY-01", "keys", Level.SHOULD, "", "A malformed key (not a UUID, wrong length) is rejected with a "
                "4xx and executes nothing.", said=(
                    Said("spec", None, _P, "schema: type: string, format: uuid, minLength: 36, maxLength: 36 [..] "
                         "Key format: UUIDv7 in string form (RFC 9562)."),
                    Said("design", None, "§API Changes", "Key format: UUID (V7 preferred)"))),
    Requirement("KEY-02", "keys", Level.SHOULD, "", "A request carrying the Idempotency-Key header twice is "
                "rejected with a 4xx and executes nothing.", said=(
                    Said("kit", Level.SHOULD, "(two keys)", "A request with two keys has no single key a retry "
                         "can match; executing it leaves the client no safe retry."),
                    Said("http", Level.MUST, "§5.3", "A sender MUST NOT generate multiple field lines with the "
                         "same name in a message [..] unless [..] that field's definition allows multiple field "
                         "line values to be recombined as a comma-separated list"))),
    # --- replay ------------------------------------------------------------------------------------
    Requirement("REPLAY-01", "replay", Level.MUST, "", "A finalized duplicate (same key, same payload; the retry "
                "spells the header in lower case) returns the original status, the same resource and the "
                "original's effect, and the mutation ran exactly once.", said=(S_NO_EFFECT, D_SAME_KEY, K_NO_EFFECT)),
    Requirement("REPLAY-02", "replay", Level.SHOULD, "", "A deterministic terminal 4xx is finalized: a retry with "
                "the same key gets the stored 4xx even after the conflicting state is gone, and executes nothing.",
                said=(Said("spec", None, _P, "Finalize & replay: 200, 201, 204, and deterministic terminal 4xx "
                           "(including 409 such as AlreadyExists, NamespaceNotEmpty, etc.)"),
                      Said("design", None, "§API Changes, Finalization rules", "Finalize & replay: 200, 201, 204, "
                           "and deterministic terminal 4xx"))),
    Requirement("REPLAY-03", "replay", Level.MUST, "", "A 5xx is never stored: after a failure before persisting, a "
                "retry with the same key executes.", said=(
                    Said("spec", None, _P, "Do not finalize (not stored/replayed): 5xx"),
                    Said("design", Level.SHOULD, "§Server behavior", "Transient 5xx MUST SHOULD NOT be stored "
                         "(MUST struck through in the document)"),
                    _kit_must("A stored 5xx answers every retry of the operation with the failure: the client can "
                              "never complete it under its key, and cannot tell whether it ran."))),
    Requirement("REPLAY-04", "replay", Level.MUST, "", "Committed but the answer was lost (503, 500, reset): a retry "
                "with the same key returns success and the mutation ran exactly once.", said=(
                    S_NO_EFFECT,
                    Said("design", None, "Example 1b", "Server looks up abc123, finds stored success. Returns 200 "
                         "OK (cached result). Client does not delete files."), K_NO_EFFECT)),
    Requirement("REPLAY-05", "replay", Level.SHOULD, "", "A replay carries the original response (the state the "
                "original produced), not one rebuilt from a newer state.", said=(
                    Said("spec", Level.CLASSIFIED, _P, "The response body may reflect a newer state of the catalog "
                         "than existed at the time of the commit."),
                    Said("design", None, "§Server-Side Implementation", "Key known & FINALIZED -> do not "
                         "re-execute; return the previously finalized response (2xx or deterministic terminal "
                         "4xx)."))),
    # --- in flight ---------------------------------------------------------------------------------
    Requirement("INFLIGHT-01", "in-flight", Level.MUST, "", "A duplicate arriving while the original is in flight "
                "never executes a second time; it gets 409 or waits and replays the final result.", said=(
                    S_NO_EFFECT,
                    Said("design", Level.MAY, "§Server-Side Implementation", _D_IN_PROGRESS), K_NO_EFFECT)),
    Requirement("INFLIGHT-02", "in-flight", Level.SHOULD, "", "An in-flight duplicate that is not made to wait gets "
                "409 with the machine-readable subtype `request_in_progress`.", said=(
                    Said("design", None, "§Server-Side Implementation", _D_IN_PROGRESS),
                    Said("ietf", Level.SHOULD, "§2.7", "If the request is retried, while the original request is "
                         "still being processed, the resource server SHOULD reply with an HTTP 409 status code"))),
    # --- payload and scope -------------------------------------------------------------------------
    Requirement("PAYLOAD-01", "payload", Level.SHOULD, "", "The same key with another payload is rejected with 422 "
                "and executes nothing.", said=(
                    Said("design", None, "§Server Responsibilities", "Different payload -> 422 Unprocessable "
                         "Content (IdempotencyKeyConflict)."),
                    Said("ietf", Level.SHOULD, "§2.7", "If there is an attempt to reuse an idempotency key with a "
                         "different request payload, the resource server SHOULD reply with a HTTP 422 status "
                         "code"))),
    Requirement("SCOPE-01", "scope", Level.SHOULD, "", "The same key sent to another operation or resource is not "
                "answered with the first request's stored response.", said=(
                    Said("spec", Level.CLASSIFIED, _P, "The idempotency key must be globally unique (no reuse "
                         "across different operations)."),
                    Said("design", None, "§Standards alignment", "Duplicate recognition is by key within the "
                         "(operation type, resource id) scope."))),
    Requirement("SCOPE-02", "scope", Level.SHOULD, "", "A key reused on another operation or with another payload "
                "is answered like any well-formed request (2xx, 4xx, or the first's replay), never with a 5xx.", said=(
                    Said("kit", Level.SHOULD, "(a 5xx for a well-formed request)", "A 5xx tells a client the "
                         "outcome is unknown: it retries with the same key and gets the same 5xx, and the operation "
                         "ends as CommitStateUnknown."),)),
    # --- lifetime ----------------------------------------------------------------------------------
    Requirement("LIFE-01", "lifetime", Level.MUST, "", "Duplicates are honoured for at least the advertised "
                "lifetime, measured from first acceptance.", said=(
                    Said("spec", Level.SHOULD, _P, "Catalogs SHOULD NOT expire keys before the end of the "
                         "advertised token lifetime."),
                    Said("design", Level.MUST, "§Server Responsibilities", "the server MUST apply duplicate "
                         "handling for at least the advertised idempotency-key-lifetime, measured from first "
                         "acceptance of the key"))),
    Requirement("LIFE-03", "lifetime", Level.SHOULD, "", "A duplicate arriving just after the advertised lifetime "
                "is still honoured: a grace margin for transit and clock skew.", said=(
                    Said("spec", Level.CLASSIFIED, _C, "Servers SHOULD accept retries for at least this duration "
                         "and MAY include a grace period to account for delays/clock skew."),
                    Said("design", Level.SHOULD, "§Server Responsibilities", "and SHOULD include a grace margin "
                         "so retries sent near the deadline are not rejected due to transit/skew."))),
    Requirement("LIFE-02", "lifetime", Level.SHOULD, "", "A retrying client stops retrying with the same key once the "
                "lifetime has elapsed and raises IdempotencyWindowExpired.", subject="client", said=(
                    Said("spec", Level.SHOULD, _C, "Clients SHOULD NOT reuse an Idempotency-Key after this window "
                         "elapses; they SHOULD generate a new key for any subsequent attempt."),
                    Said("design", None, "§Client behavior", "If elapsed > lifetime -> raise "
                         "IdempotencyWindowExpired and stop automatic retries."))),
    # --- replay failure and crash recovery ---------------------------------------------------------
    Requirement("RECON-01", "recovery", Level.MUST, "", "A finalized record whose response cannot be produced is "
                "never executed again; the retry gets a 5xx.", capability="control-api", said=(
                    S_NO_EFFECT,
                    Said("design", None, "§Server-Side Implementation", "Replay failure (finalized but prior "
                         "response cannot be produced) -> do not re-execute; return 5xx"), K_NO_EFFECT)),
    Requirement("RECON-03", "recovery", Level.SHOULD, "", "That 5xx carries the error subtype "
                "`idempotency_replay_failed`.", capability="control-api", said=(
                    Said("design", None, "§Error subtype", "idempotency_replay_failed -> use with 5xx when a prior "
                         "finalized result cannot be replayed (do not re-execute)."),)),
    Requirement("RECON-02", "recovery", Level.MUST, "", "An IN_PROGRESS record left by a crash after the commit is "
                "reconciled on retry: success, one execution.", capability="control-api", said=(
                    S_NO_EFFECT,
                    Said("design", None, "§Commit succeeded but idempotency record wasn't finalized", "If the state "
                         "reflects the request change, mark K -> FINALIZED and return success (original result)."),
                    K_NO_EFFECT)),
    # --- commit concurrency ------------------------------------------------------------------------
    Requirement("OCC-01", "concurrency", Level.MUST, "", "A commit whose requirement does not hold gets 409 "
                "CommitFailedException and changes nothing.", said=(
                    Said("spec", None, "updateTable 409", "Conflict - CommitFailedException, one or more "
                         "requirements failed. The client may retry."),
                    _kit_must("Optimistic concurrency: a commit on a stale base that lands silently loses the "
                              "other writer's change."))),
    Requirement("OCC-02", "concurrency", Level.MUST, "", "Of N writers committing on the same base at once, exactly "
                "one wins and the others get 409.", said=(
                    Said("spec", None, "updateTable", "Requirements are assertions that will be validated before "
                         "attempting to make and commit changes."),
                    _kit_must("Optimistic concurrency: the metadata pointer is swapped atomically (compare and "
                              "swap), so of writers on one base only one lands."))),
    Requirement("OCC-03", "concurrency", Level.MUST, "", "N x M appends with refresh and retry give N x M snapshots "
                "in one linear parent chain with increasing sequence numbers.", said=(
                    _kit_must("Optimistic concurrency: refresh-and-retry gives a serial history."),)),
    Requirement("OCC-04", "concurrency", Level.MUST, "", "A multi-table transaction is all or nothing, also when one "
                "table's requirement fails.", said=(
                    Said("spec", None, "commitTransaction", "Commit updates to multiple tables in an atomic "
                         "operation"),
                    _kit_must("A half-applied transaction leaves tables in a state no client wrote."))),
    # --- history -----------------------------------------------------------------------------------
    Requirement("HIST-01", "history", Level.MUST, "", "No acknowledged mutation is missing from the final state "
                "(no lost write).", said=(_kit_must("History (Jepsen-style): an acknowledged write is never "
                                                    "lost."),)),
    Requirement("HIST-02", "history", Level.MUST, "", "No mutation is applied more than once (no duplicated "
                "write).", said=(_kit_must("History (Jepsen-style): no write is applied twice."),)),
    Requirement("INTEG-01", "integrity", Level.MUST, "", "Every snapshot of a table references a manifest list and "
                "manifests that exist in storage.", said=(
                    Said("design", None, "Example 1a", "Corruption: Metadata references snap-001, but files are "
                         "missing."),
                    _kit_must("Integrity: a table whose snapshot references missing files cannot be read."))),
    Requirement("CLIENT-01", "client", Level.MUST, "", "A real client (pyiceberg) creates a table, commits two "
                "appends, reloads the table and reads every row back; the load answer of a committed table "
                "carries `metadata-location`.", said=(
                    Said("spec", None, "LoadTableResult", "The corresponding file location of table metadata "
                         "should be returned in the `metadata-location` field, unless the metadata is not yet "
                         "committed. [..] Clients can check whether metadata has changed by comparing metadata "
                         "locations after the table has been created."),
                    _kit_must("Real clients must work: what the Java client and pyiceberg send (create bodies, "
                              "commits) is accepted, and what they read back lets them refresh and commit again."))),
    # --- protocol ----------------------------------------------------------------------------------
    Requirement("SCHEMA-01", "protocol", Level.SHOULD, "", "Responses conform to the OpenAPI document: declared "
                "status codes and body schemas, ErrorModel for errors.", said=(
                    Said("spec", None, "responses and components/schemas", "ErrorModel: JSON error payload "
                         "returned in a response with further details on the error"),)),
    Requirement("GEN-01", "generated", Level.MUST, "", "Generated well-formed mutations get no 5xx, and a replay "
                "with the same key returns the same outcome with no further effect.", said=(S_NO_EFFECT,
                                                                                             K_NO_EFFECT)),
    Requirement("GEN-02", "generated", Level.MUST, "", "Under random sequences of mutations, retries and faults, "
                "the catalog's state matches a model of it after every step.", said=(
                    _kit_must("Model-based: the state after mutations, retries and faults is the state the "
                              "acknowledged mutations produce, each once."),)),
    # --- catalog semantics (the model's plain mutations: no retry, no replay, no fault) -----------------------
    Requirement("SEM-01", "semantics", Level.SHOULD, "", "A mutation sent once (no retry, no fault) answers the "
                "status the merged spec documents for the state it meets: 404 when the namespace, table or view it "
                "names does not exist, 409 when the identifier to create or rename to exists or the namespace to "
                "drop is not empty, 2xx otherwise.", said=(
                    Said("spec", None, "createTable / renameTable / dropNamespace responses",
                         "404: Not Found - The namespace specified does not exist [..] 409: Conflict - The "
                         "identifier already exists as a table or view [..] NoSuchNamespaceException, The target "
                         "namespace of the new table identifier does not exist [..] 409: Not Empty - Namespace to "
                         "delete is not empty."),)),
    Requirement("SEM-02", "semantics", Level.MUST, "", "A mutation sent once (no retry, no fault) that the catalog "
                "acknowledged has its effect, and one it refused has none, as reads show: created objects exist "
                "with their properties, dropped ones are gone, renamed ones moved, committed properties set.", said=(
                    Said("spec", None, "createNamespace; CreateNamespaceResponse.properties", "Create a namespace, "
                         "with an optional set of properties. [..] Properties stored on the namespace, if supported "
                         "by the server."),
                    _kit_must("History: an acknowledged write is never lost and a refused one leaves no trace "
                              "(namespace properties given at create are the spec's exception: a server that does "
                              "not store them is classified, not failed)."))),
    # --- catalog semantics: what Iceberg's REST compatibility kit checks, observed over REST -------------------
    # Judged by status, error type and the state read back (ctk.checks.semantics); the MUST of the kit where a
    # client would lose data or misreport success (K_EFFECT, K_READ_BACK). docs/rck-coverage.md maps every test
    # of CatalogTests and ViewCatalogTests to these ids.
    _sem("NS-01", "namespaces", "createNamespace creates the namespace: loadNamespaceMetadata answers 200 with its "
         "levels, namespaceExists 204, and listNamespaces lists it.",
         _rck("CatalogTests.testCreateNamespace", "a created namespace exists and is listed"),
         _spec("createNamespace", "Create a namespace, with an optional set of properties."), K_EFFECT),
    _sem("NS-02", "namespaces", "createNamespace of a namespace that exists answers 409 (AlreadyExistsException) and "
         "leaves the existing namespace and its properties as they were.",
         _spec("createNamespace 409", "Conflict - The namespace already exists"),
         _rck("CatalogTests.testCreateExistingNamespace", "creating an existing namespace fails with "
              "AlreadyExistsException"), K_REFUSED),
    _sem("NS-03", "namespaces", "Properties given at createNamespace are returned by loadNamespaceMetadata (where the "
         "catalog keeps namespace properties).",
         _rck("CatalogTests.testCreateNamespaceWithProperties", "the properties a namespace was created with are "
              "loaded back"), capability="namespace-properties"),
    _sem("NS-04", "namespaces", "updateProperties sets its updates and removes its removals, as "
         "loadNamespaceMetadata then shows; the answer lists the keys updated, removed and missing (a removal "
         "that was not set).",
         _spec("UpdateNamespacePropertiesResponse", "updated: List of property keys that were added or updated "
               "[..] removed: List of properties that were removed [..] missing: List of properties requested for "
               "removal that were not found in the namespace's properties."),
         _rck("CatalogTests.testSetNamespaceProperties", "set, updated and removed properties are loaded back"),
         K_EFFECT),
    _sem("NS-05", "namespaces", "An operation on a namespace that does not exist (load, exists, update properties, "
         "drop, list its tables or views, create a table in it) answers 404 with NoSuchNamespaceException.",
         _spec("loadNamespaceMetadata / dropNamespace / updateProperties / listTables 404",
               "Not Found - Namespace not found"),
         _rck("CatalogTests.testDropNonexistentNamespace", "operations on a missing namespace fail with "
              "NoSuchNamespaceException")),
    _sem("NS-06", "namespaces", "dropNamespace of an empty namespace answers 204 and the namespace is gone: load "
         "answers 404, exists 404, and listNamespaces no longer lists it.",
         _spec("dropNamespace 204", "Success, no content"),
         _rck("CatalogTests.testDropNamespace", "a dropped namespace no longer exists"), K_EFFECT),
    _sem("NS-07", "namespaces", "dropNamespace of a namespace that holds a table, a view or a nested namespace "
         "answers 409 (NamespaceNotEmptyException) and drops nothing.",
         _spec("dropNamespace 409", "Not Empty - Namespace to delete is not empty."),
         _rck("CatalogTests.testDropNonEmptyNamespace", "dropping a namespace that holds a table fails with "
              "NamespaceNotEmptyException"), K_REFUSED),
    _sem("NS-08", "namespaces", "listNamespaces lists exactly the namespaces at a level: with `parent`, its children "
         "(not deeper levels, not other parents); a parent that does not exist answers 404.",
         _spec("listNamespaces", "List all namespaces at a certain level, optionally starting from a given parent "
               "namespace. [..] If `parent` is not provided, all top-level namespaces should be listed."),
         _rck("CatalogTests.testListNestedNamespaces", "the children of a namespace are listed, not its "
              "grandchildren")),
    _sem("NS-09", "namespaces", "A namespace level holding '.' or '/' is created, loaded, listed and dropped under "
         "that exact name (where the catalog accepts such names).",
         _rck("CatalogTests.testNamespaceWithDot", "a namespace whose name holds a dot round-trips"),
         capability="names-with-dot-or-slash"),
    _sem("TBL-01", "tables", "createTable answers its metadata (the requested schema, a table-uuid, a location) and "
         "the table exists: loadTable answers the same table-uuid and schema, tableExists 204 (that listTables lists "
         "it is LIST-01's).",
         _spec("createTable", "Create a table or start a create transaction, like atomic CTAS."),
         _rck("CatalogTests.testBasicCreateTable", "a created table loads with the requested schema"), K_EFFECT),
    _sem("TBL-02", "tables", "createTable of an identifier that exists as a table answers 409 "
         "(AlreadyExistsException) and leaves that table as it was; in a namespace that does not exist it answers "
         "404 (NoSuchNamespaceException) and creates nothing.",
         _spec("createTable 409 / 404", "Conflict - The identifier already exists as a table or view [..] Not "
               "Found - The namespace specified does not exist"),
         _rck("CatalogTests.testBasicCreateTableThatAlreadyExists", "creating an existing table fails with "
              "AlreadyExistsException and the table keeps its schema"), K_REFUSED),
    _sem("TBL-03", "tables", "What a complete createTable gives is in the table: the partition spec and sort order "
         "bound to the schema's field ids, the properties (also those a create or replace transaction commits; the "
         "Java client merges the catalog's table-default.* and table-override.* into what it sends, the catalog "
         "keeps what it is sent), a location (the requested one, unless the catalog places tables itself), default "
         "column values of a v3 schema.",
         _rck("CatalogTests.testCompleteCreateTable", "a table created with spec, order, properties and location "
              "loads with them")),
    _sem("TBL-04", "tables", "loadTable of a table that does not exist answers 404 NoSuchTableException, in an "
         "existing namespace and in a missing one alike (for NoSuchNamespaceException the Java client raises that "
         "exception, which neither testLoadTableWithNonExistingNamespace nor its metadata-table fallback expects), "
         "also for a metadata-table name such as `t.snapshots` (the client then loads `t`); tableExists 404.",
         _spec("loadTable 404", "Not Found - NoSuchTableException, table to load does not exist"),
         _rck("CatalogTests.testLoadMissingTable", "loading a missing table fails with NoSuchTableException")),
    _sem("TBL-05", "tables", "loadTable of a table whose current metadata file is gone answers 404 (or another "
         "4xx), not 5xx: a 5xx makes a client retry a request that cannot succeed.",
         _rck("CatalogTests.testLoadTableWithMissingMetadataFile", "loading a table whose metadata file was "
              "deleted fails with NotFoundException"), capability="storage"),
    _sem("TBL-06", "tables", "renameTable answers 204, the source identifier is gone and the target loads the same "
         "table (table-uuid, metadata); dropping the renamed table later leaves a table created under the old "
         "name intact.",
         _spec("renameTable", "Rename a table from its current name to a new name"),
         _rck("CatalogTests.testRenameTable", "after a rename the source is gone and the target has the "
              "table"), K_EFFECT),
    _sem("TBL-07", "tables", "renameTable of a missing source answers 404 (NoSuchTableException), to a namespace "
         "that does not exist 404 (NoSuchNamespaceException), to an identifier that exists 409 "
         "(AlreadyExistsException); none changes anything.",
         _spec("renameTable 404 / 409", "Not Found - NoSuchTableException, Table to rename does not exist - "
               "NoSuchNamespaceException, The target namespace of the new table identifier does not exist [..] "
               "Conflict - The target identifier to rename to already exists as a table or view"),
         _rck("CatalogTests.testRenameTableDestinationTableAlreadyExists", "renaming onto an existing table "
              "fails and both tables are unchanged"), K_REFUSED),
    _sem("TBL-08", "tables", "dropTable (with and without purgeRequested) answers 204 and the table is gone: "
         "loadTable 404, tableExists 404, not listed; dropping a missing table answers 404 (NoSuchTableException).",
         _spec("dropTable", "Remove a table from the catalog [..] 404: Not Found - NoSuchTableException, Table to "
               "drop does not exist"),
         _rck("CatalogTests.testDropTable", "a dropped table no longer exists"), K_EFFECT),
    _sem("TBL-09", "tables", "registerTable registers the given metadata file: loadTable answers that table "
         "(table-uuid, schema, snapshots); an identifier that exists answers 409 (AlreadyExistsException); a "
         "metadata location that does not exist is refused with a 4xx and registers nothing.",
         _spec("registerTable", "Register a table using given metadata file location."),
         _rck("CatalogTests.testRegisterTable", "a registered table loads with the registered metadata"),
         K_EFFECT),
    _sem("TBL-10", "tables", "A table name holding '.' or '/' is created, loaded, listed and dropped under that "
         "exact name (where the catalog accepts such names).",
         _rck("CatalogTests.testTableNameWithDot", "a table whose name holds a dot round-trips"),
         capability="names-with-dot-or-slash"),
    _sem("TBL-11", "tables", "A table created under a name that another table was renamed away from gets a "
         "location of its own.",
         _rck("CatalogTests.createTableInUniqueLocation", "a new table under an old name does not share the "
              "renamed table's location")),
    _sem("LIST-01", "listing", "listTables lists exactly the tables of a namespace (created ones, not dropped ones, "
         "not views, not other namespaces'); an empty namespace lists none.",
         _spec("listTables", "Return all table identifiers under this namespace"),
         _rck("CatalogTests.testListTables", "listTables returns exactly the namespace's tables"), K_READ_BACK),
    _sem("LIST-02", "listing", "A paged listing (pageSize, next-page-token) gives every item exactly once across its "
         "pages, no page longer than pageSize, for namespaces, tables and views.",
         _spec("components/parameters/page-size", "For servers that support pagination, this signals an upper "
               "bound of the number of results that a client will receive."), capability="pagination"),
    _sem("LIST-03", "listing", "listViews lists exactly the views of a namespace (not its tables); an empty "
         "namespace lists none.",
         _spec("listViews", "Return all view identifiers under this namespace"),
         _rck("ViewCatalogTests.listViewsAndTables", "listViews and listTables each list only their own kind"),
         K_READ_BACK, capability="views"),
    _sem("EVO-01", "evolution", "A committed change is what the next loadTable shows: its metadata-location is the "
         "one the commit answered, and the change is in it.",
         _rck("CatalogTests.testUpdateTableSchema", "after a commit, loading the table shows the change"),
         K_READ_BACK),
    _sem("EVO-02", "evolution", "Schema evolution: add-schema with set-current-schema makes the new schema current "
         "with the field ids given; set-current-schema back to an earlier id reverts to it; a stale "
         "assert-current-schema-id or assert-last-assigned-field-id answers 409 (CommitFailedException) and "
         "changes nothing.",
         _spec("updateTable 409", "Conflict (CommitFailedException), one or more requirements failed. The client "
               "may retry."),
         _rck("CatalogTests.testUpdateTableSchemaConflict", "a schema update on a stale base fails with "
              "CommitFailedException and the table keeps the other update"), K_EFFECT),
    _sem("EVO-03", "evolution", "Partition evolution: add-spec with set-default-spec makes the new spec default "
         "(its id assigned, equal specs reused), reverting to an earlier spec id works, remove-partition-specs "
         "removes unused specs; a stale assert-default-spec-id or assert-last-assigned-partition-id answers 409.",
         _rck("CatalogTests.testUpdateTableSpec", "a spec update is loaded back; a conflicting one fails"),
         K_EFFECT),
    _sem("EVO-04", "evolution", "Sort-order evolution: add-sort-order with set-default-sort-order makes the new "
         "order default, reverting works; a stale assert-default-sort-order-id answers 409.",
         _rck("CatalogTests.testUpdateTableSortOrder", "a sort order update is loaded back"), K_EFFECT),
    _sem("EVO-05", "evolution", "set-properties and remove-properties on a table are what loadTable then shows; "
         "several updates in one commit are applied together.",
         _rck("CatalogTests.testUpdateTransaction", "the updates of one commit are all loaded back"), K_EFFECT),
    _sem("EVO-06", "evolution", "An append (add-snapshot, set-snapshot-ref main) makes the snapshot current, logged "
         "and referenced by main; a branch or tag set by set-snapshot-ref is loaded back and remove-snapshot-ref "
         "removes it; a second append on the stale base with assert-ref-snapshot-id answers 409.",
         _rck("CatalogTests.testConcurrentAppendNonEmptyTable", "appends are loaded back; a concurrent append on a "
              "stale base is refused"), K_EFFECT, capability="storage"),
    _sem("EVO-07", "evolution", "A commit whose assert-table-uuid names another table (the table was dropped and "
         "created again) answers 409 and leaves the new table unchanged; a commit to a table that does not exist "
         "answers 404 (NoSuchTableException).",
         _spec("updateTable 404", "Not Found - NoSuchTableException, table to load does not exist"),
         _rck("CatalogTests.testUUIDValidation", "a commit based on a dropped table fails with "
              "CommitFailedException")),
    _sem("EVO-08", "evolution", "The metadata log records each previous metadata file of a table, oldest first, "
         "trimmed to the latest write.metadata.previous-versions-max entries from the commit that sets it on.",
         _rck("CatalogTests.testMetadataFileLocationsRemovalAfterCommit", "previous metadata files are tracked and "
              "trimmed")),
    _sem("EVO-09", "evolution", "A commit carrying an update action or a requirement type the document does not "
         "define is refused (400 BadRequestException) and changes nothing: never answered as a success with the "
         "unknown part dropped.",
         _spec("updateTable 400 (BadRequestErrorResponse)", "Indicates a bad request error. It could be caused by an "
               "unexpected request body format or other forms of request validation failure"),
         _kit_must("A commit answered 200 with part of it silently dropped tells the client a change happened "
                   "that did not (a newer client's update, an older catalog): it reports a success that did not "
                   "happen.")),
    _sem("TXN-01", "transactions", "A staged create (createTable with stage-create) creates nothing until its commit "
         "with assert-create; then the table exists with the staged schema, properties and the commit's updates.",
         _spec("createTable stage-create", "If `stage-create` is true, the table is not created in the catalog "
               "[..] the staged table must be committed with the `assert-create` requirement"),
         _rck("CatalogTests.testCompleteCreateTransaction", "a create transaction creates the table only when "
              "committed, with everything it staged"), K_EFFECT),
    _sem("TXN-02", "transactions", "A staged create committed after another client created the table answers 409 "
         "and leaves the other table as it was; a create (assert-create) with other requirements is refused "
         "with 400.",
         _rck("CatalogTests.testConcurrentCreateTransaction", "a create transaction loses to a concurrent create "
              "with AlreadyExistsException"), K_REFUSED),
    _sem("TXN-03", "transactions", "A replace transaction (assert-table-uuid; new schema, spec, order, properties; "
         "main removed) keeps the table-uuid, the earlier schemas and the snapshot log, and makes the new schema, "
         "spec and order current with no current snapshot.",
         _rck("CatalogTests.testReplaceTableKeepsSnapshotLog", "a replaced table keeps its uuid and snapshot "
              "log"), K_EFFECT),
    _sem("TXN-04", "transactions", "A replace of a table that does not exist answers 404 (NoSuchTableException); of "
         "two replaces on the same base, one whose assert-last-assigned-field-id no longer holds answers 409.",
         _rck("CatalogTests.testReplaceTransactionRequiresTableExists", "a replace transaction requires the "
              "table")),
    _sem("VIEW-01", "views", "createView answers its metadata (the version with its SQL per dialect, default namespace "
         "and catalog, its schema, properties, a view-uuid) and the view exists: loadView answers the same, viewExists "
         "204; its metadata files go under write.metadata.path when set (a catalog may override a requested "
         "location). Catalog-level view-default.* / view-override.* properties are merged by the Java client before "
         "it sends the request, not by the catalog; listing is LIST-03's.",
         _spec("createView", "Create a view in the given namespace."),
         _rck("ViewCatalogTests.basicCreateView", "a created view loads with its version and schema"), K_EFFECT,
         capability="views"),
    _sem("VIEW-02", "views", "createView of an existing view answers 409 (AlreadyExistsException), in a missing "
         "namespace 404 (NoSuchNamespaceException); a request without a schema or a default namespace, with two "
         "queries for one dialect (dialects compare case-insensitively) or a query without a dialect is refused with "
         "400 (IllegalArgumentException, which a Java client raises as such, or BadRequestException); none creates "
         "anything.",
         _spec("createView 409 / 404", "Conflict - The view already exists [..] Not Found - The namespace specified "
               "does not exist"),
         _rck("ViewCatalogTests.createViewErrorCases", "invalid or clashing view creates fail"), K_REFUSED,
         capability="views"),
    _sem("VIEW-03", "views", "Tables and views share one name space: creating, staging, replacing, registering or "
         "renaming a table onto a view's name, or a view onto a table's, answers 409 and changes nothing; "
         "loadView of a table and loadTable of a view answer 404.",
         _spec("createTable 409", "Conflict - The identifier already exists as a table or view"),
         _rck("ViewCatalogTests.createViewThatAlreadyExistsAsTable", "a view cannot take a table's name, nor a "
              "table a view's"), K_REFUSED, capability="views"),
    _sem("VIEW-04", "views", "renameView answers 204, the source is gone and the target loads the same view "
         "(view-uuid, versions), also across namespaces; a missing source answers 404, a missing target namespace "
         "404, an existing target 409, changing nothing.",
         _spec("renameView", "Rename a view from its current name to a new name"),
         _rck("ViewCatalogTests.renameView", "after a rename the source is gone and the target has the view"),
         K_EFFECT, capability="views"),
    _sem("VIEW-05", "views", "dropView answers 204 and the view is gone (loadView 404, viewExists 404); dropping a "
         "missing view answers 404 (NoSuchViewException), and loading a view in a namespace that does not exist "
         "404 NoSuchViewException.",
         _spec("dropView", "Remove a view from the catalog"),
         _rck("ViewCatalogTests.basicCreateView", "a dropped view no longer exists"), K_EFFECT,
         capability="views"),
    _sem("VIEW-06", "views", "replaceView with add-view-version and set-current-view-version makes the new version "
         "current on its schema (SQL per dialect kept, earlier versions kept, version-log extended); properties and "
         "location updates are loaded back without touching the versions; of two replaces on the same base (each "
         "with only assert-view-uuid) the second is applied on top or refused 409, never losing the first; versions "
         "beyond version.history.num-entries expire.",
         _spec("replaceView", "Commit updates to a view."),
         _rck("ViewCatalogTests.replaceViewVersion", "a replaced view version is loaded back"), K_EFFECT,
         capability="views"),
    _sem("VIEW-07", "views", "replaceView (a new version, a properties or a location update) on a view that was "
         "dropped answers 404 (NoSuchViewException); with a stale assert-view-uuid 409; an invalid update (a version "
         "whose schema does not exist or without a default namespace, a dialect given twice, a null property value "
         "or removal, a null location) 400; none changes the view.",
         _rck("ViewCatalogTests.replaceViewConflict", "replacing a dropped view fails with NoSuchViewException"),
         K_REFUSED, capability="views"),
    _sem("VIEW-08", "views", "registerView registers the given view metadata file (of a view dropped with "
         "gc.enabled=false): loadView answers that view (view-uuid, versions); an identifier that exists answers "
         "409; a metadata file that does not exist is refused with a 4xx.",
         _spec("registerView", "Register a view using given metadata file location."),
         _rck("ViewCatalogTests.registerView", "a registered view loads with the registered metadata"), K_EFFECT,
         capability="views"),
    _sem("V3-01", "types", "A format-version 3 table with a variant column is created and loads back with it, a "
         "variant column is added to a v3 table by add-schema; a format-version 2 table with a variant column is "
         "refused with 400.",
         _rck("CatalogTests.testCreateTableWithVariantColumn", "a v3 table holds a variant column; a v2 table "
              "cannot"), capability="format-v3"),
    # --- data pipeline -----------------------------------------------------------------------------
    Requirement("SPARK-01", "spark", Level.MUST, "", "Concurrent Spark appends through the catalog all land, "
                "conflicts retried, table intact.", capability="spark", said=(
                    _kit_must("History and integrity through a real client: every acknowledged append lands "
                              "once."),)),
    Requirement("SPARK-02", "spark", Level.MUST, "", "Concurrent UPDATE/DELETE/MERGE conflicts surface as client "
                "validation errors, never as a corrupt or half-applied table.", capability="spark", said=(
                    _kit_must("Optimistic concurrency and integrity through a real client (seeds/003)."),)),
    Requirement("SPARK-03", "spark", Level.MUST, "", "Compaction racing with appends and row-level updates leaves an "
                "intact table.", capability="spark", said=(
                    _kit_must("Integrity through a real client (seeds/003)."),)),
    Requirement("SPARK-04", "spark", Level.MUST, "", "Spark workloads with lost commit answers injected keep the "
                "table intact with every acknowledged write present once.", capability="spark", said=(
                    Said("design", None, "Example 1b", "No corruption: Metadata and data remain consistent."),
                    K_NO_EFFECT)),
]

REQUIREMENTS: dict[str, Requirement] = {r.id: r for r in _ALL}


def get(requirement_id: str) -> Requirement:
    try:
        return REQUIREMENTS[requirement_id]
    except KeyError:
        raise KeyError(f"unknown requirement id {requirement_id!r}; known: {', '.join(REQUIREMENTS)}") from None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table() -> str:
    """The requirements table for docs/requirements.md: the level under each profile, then every source's
    sentence with its own level."""
    lines = [
        "| id | spec profile | design profile | area | statement | what each source says | assumes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in REQUIREMENTS.values():
        if r.said:
            says = "<br>".join(_cell(f"**{SOURCE_NAMES.get(s.source, s.source)}** {s.where} ({s.word}): "
                                     f"\u201c{s.quote}\u201d") for s in r.said)
        else:
            says = _cell(r.base_source)
        lines.append(f"| {r.id} | {r.level_under('spec').value} | {r.level_under('design').value} | {r.area} | "
                     f"{_cell(r.statement)} | {says} | {r.capability or ''} |")
    return "\n".join(lines) + "\n"
