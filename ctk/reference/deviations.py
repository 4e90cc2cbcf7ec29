"""Deviation profiles of the reference catalog: each breaks exactly one rule.

They exist so the kit can prove that each of its checks fails when the rule is broken: the kit's own
tests start the reference catalog with a profile and assert that the checks listed in `catches` fail
(tests/test_sensitivity.py prints the matrix). Selected with `ctk serve --deviation NAME` or
ReferenceSettings(deviation=NAME).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    breaks: str            # the rule it breaks, in one line
    catches: tuple[str, ...]  # requirement ids whose checks must fail (or deviate) under it


PROFILES: dict[str, Profile] = {p.name: p for p in [
    # discovery
    Profile("lifetime-in-overrides", "advertises idempotency-key-lifetime inside `overrides` instead of top level",
            ("DISC-02",)),
    Profile("lifetime-weeks", "advertises the lifetime as P1W, which Java's Duration.parse rejects", ("DISC-03",)),
    Profile("no-discovery-rejects-key", "does not advertise support and rejects requests that carry a key with 400",
            ("DISC-04",)),
    # key handling
    Profile("accept-malformed-key", "accepts keys that are not UUIDs and executes the request", ("KEY-01",)),
    Profile("accept-repeated-key", "accepts the Idempotency-Key header given twice", ("KEY-02",)),
    # replay
    Profile("no-replay", "advertises support but re-executes every duplicate", ("REPLAY-01", "REPLAY-04")),
    Profile("keys-partial", "advertises support but honours keys only on createTable and updateTable (as Polaris "
            "does)", ("REPLAY-01",)),
    Profile("replay-different-body", "replays duplicates with another status/body than the original", ("REPLAY-01",)),
    Profile("replay-purges", "replays a purge-drop, but purges the files of the table that has the name now",
            ("REPLAY-01",)),
    Profile("terminal-4xx-not-stored", "does not finalize terminal 4xx, so a retry re-executes", ("REPLAY-02",)),
    Profile("store-5xx", "stores 5xx responses and replays them instead of executing the retry", ("REPLAY-03",)),
    # in flight
    Profile("in-flight-reexecutes", "lets an in-flight duplicate execute a second time", ("INFLIGHT-01",)),
    Profile("in-flight-plain-409", "answers an in-flight duplicate 409 without the request_in_progress subtype",
            ("INFLIGHT-02",)),
    # payload and scope
    Profile("no-payload-check", "replays the first response for the same key with another payload", ("PAYLOAD-01",)),
    Profile("scope-ignored", "scopes keys globally: the same key on another operation/resource replays the first",
            ("SCOPE-01",)),
    Profile("reuse-5xx", "answers a key reused on another operation with 500 (as upstream's server can)",
            ("SCOPE-02",)),
    # lifetime
    Profile("short-lifetime", "forgets keys after a tenth of the advertised lifetime", ("LIFE-01",)),
    # recovery
    Profile("replay-failed-reexecutes", "re-executes when a finalized response cannot be produced", ("RECON-01",)),
    Profile("no-reconcile", "on an IN_PROGRESS record left by a crash, re-executes without checking state",
            ("RECON-02",)),
    # commit concurrency
    Profile("stale-requirement-accepted", "does not check commit requirements", ("OCC-01", "OCC-02")),
    Profile("no-atomic-swap", "swaps the metadata pointer without compare-and-swap (read, check, then write)",
            ("OCC-02", "OCC-03")),
    Profile("transaction-not-atomic", "applies a multi-table transaction table by table, keeping partial results",
            ("OCC-04",)),
]}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown deviation profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
