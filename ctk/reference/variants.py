"""Allowed-variant profiles of the reference catalog: each takes another path the merged spec allows.

The counterpart of the deviation profiles (ctk.reference.deviations): a deviation breaks one rule and the kit
must catch it (sensitivity); a variant behaves as some real catalog does where the spec leaves the choice open,
and the kit must pass it under the default `spec` profile (specificity) - while the `design` profile gives the
verdict the design document gives. Selected with ``ctk serve --variant NAME`` or
ReferenceSettings(variant=NAME).

Each variant is a small subclass of the reference's KeyPolicy (ctk.reference.policies) overriding the hooks
of the path it takes - key format, key scope, payload binding, in-flight answer, what a replay answers with,
how long a key is honoured - or of its CommitPolicy, for the catalog's own choices: the namespace separator it
advertises (separator-dot: '.', advertised as %2E, 0x1F still decoded) and whether a drop deletes metadata
files (drop-deletes-metadata, as Iceberg's own catalogs do for views). Three deviation profiles (scope-ignored,
no-payload-check, in-flight-plain-409) are the same policies, judged against the design document:
ctk.reference.deviations registers them as such.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ctk.reference.operations import CatalogError, Mutation, OpResult
from ctk.reference.policies import HEADER, UUID_RE, CommitPolicy, KeyPolicy


class InflightWait(KeyPolicy):
    name = "inflight-wait"

    def in_flight(self) -> str:
        return "wait"


class InflightPlain409(KeyPolicy):
    name = "inflight-409-plain"

    def in_flight_answer(self) -> OpResult:
        return _in_progress(409, "RequestInProgressException")


class Inflight503(KeyPolicy):
    """An in-flight duplicate gets 503 ServiceUnavailable with Retry-After (as Polaris answers when a key's
    window is busy): a client that retries 503 with Retry-After gets the replay once the original is done."""

    name = "inflight-503"

    def in_flight_answer(self) -> OpResult:
        return _in_progress(503, "ServiceUnavailableException")


def _in_progress(status: int, type_: str) -> OpResult:
    return CatalogError(status, type_, f"a request with this {HEADER} is still in progress; retry later", None,
                        {"Retry-After": "1"}).result()


class PayloadUnchecked(KeyPolicy):
    name = "payload-unchecked"

    def payload_conflict(self, held_hash: str, held_origin: str, request_hash: str, origin: str) -> bool:
        return False


class Payload400(KeyPolicy):
    """The same key with another payload is refused with 400 BadRequestException (as Lakekeeper answers), not
    the design document's 422; nothing is executed."""

    name = "payload-400"

    def payload_conflict_answer(self, mutation: Mutation) -> OpResult:
        return CatalogError(400, "BadRequestException", f"the {HEADER} was already used with another request "
                            f"payload for {mutation.operation}").result()


class KeysGlobal(KeyPolicy):
    """Keys looked up by the key alone. Another payload under the same key is still refused for the same
    operation and resource (payload_conflict compares the origins); on another one the first answer replays."""

    name = "keys-global"

    def scope(self, mutation: Mutation, key: str) -> tuple:
        return ("*", "*", key, "*")


class AnyUuid(KeyPolicy):
    name = "any-uuid"

    def accept_key(self, raw: str) -> str | None:
        return raw.lower() if UUID_RE.match(raw) else None

    def key_rule(self) -> str:
        return "a UUID"


class LifetimeGrace(KeyPolicy):
    """Honours keys past the advertised lifetime: a grace of at least half the lifetime (Lakekeeper adds PT5M
    to PT30M)."""

    name = "lifetime-grace"

    def expiry(self, now: float) -> float:
        lifetime = self.settings.lifetime.total_seconds()
        return now + lifetime + max(self.settings.grace.total_seconds(), lifetime / 2)


class RepliesRebuilt(KeyPolicy):
    """Replays a table's or view's answer from its current state (as Polaris and Lakekeeper do): the same
    resource, the original's change in its history, possibly later changes too. When the resource is gone or
    is another one now, the stored answer."""

    name = "replies-rebuilt"

    def replay(self, engine: Any, mutation: Mutation, stored: OpResult) -> OpResult:
        body = stored.body
        if not (200 <= stored.status < 300 and isinstance(body, dict) and isinstance(body.get("metadata"), dict)):
            return stored
        try:
            rebuilt = _rebuild(engine, mutation, body)
        except Exception:  # noqa: BLE001 - anything unreadable: answer what was stored
            return stored
        return stored if rebuilt is None else OpResult(stored.status, rebuilt, dict(stored.headers))


def _target(mutation: Mutation) -> tuple[str, list[str], str] | None:
    """(kind, namespace, name) of the table or view a mutation's answer describes."""
    from ctk.reference import store

    ns_key, _, rest = mutation.resource.partition("/")
    parts = rest.split("/")
    if parts[0] in ("tables", "views") and len(parts) == 2:
        return parts[0][:-1], store.resource_levels(ns_key), store.resource_unquote(parts[1])
    if parts[0] in ("tables", "register", "views", "register-view") and len(parts) == 1:
        name = (json.loads(mutation.body or b"{}") or {}).get("name")
        kind = "view" if parts[0] in ("views", "register-view") else "table"
        return (kind, store.resource_levels(ns_key), name) if isinstance(name, str) else None
    return None


def _rebuild(engine: Any, mutation: Mutation, body: dict) -> dict | None:
    from ctk.reference import store
    from ctk.reference.catalog import table_result
    from ctk.reference.views import view_result

    target = _target(mutation)
    if target is None:
        return None
    kind, ns, name = target
    with store.read_connection(engine) as conn:
        table = store.load_table(conn, ns, name) if kind == "table" else None
        view = store.load_view(conn, ns, name) if kind != "table" else None
    if table is not None:
        out = table_result(table.metadata_location, table.metadata)
    elif view is not None:
        out = view_result(view.metadata_location, view.metadata)
    else:
        return None
    uuid = f"{kind}-uuid"       # the same table or view, not one created since under its name
    if out["metadata"].get(uuid) != body["metadata"].get(uuid):
        return None
    if kind == "table" and isinstance(body.get("config"), dict):
        out["config"] = body["config"]
    return out


class DotSeparator(CommitPolicy):
    """Namespace levels joined by '.' in paths and the ``parent`` query: /v1/config advertises
    ``namespace-separator: %2E`` (the spec's example), and 0x1F is still decoded as the spec requires."""

    def namespace_separator(self) -> str:
        return "."


class DropDeletesMetadata(CommitPolicy):
    """Dropping a view, or a table without purge, deletes its metadata files (as Iceberg's own catalogs delete a
    dropped view's metadata): a later registerView / registerTable of such a file finds nothing."""

    def drop_deletes_metadata(self) -> bool:
        return True


@dataclass(frozen=True)
class Variant:
    name: str
    path: str                          # the allowed path it takes, in one line
    policy: type[KeyPolicy]          # the hooks it overrides (KeyPolicy itself: none of the key handling)
    shows: dict[str, str]              # behaviour-profile row -> what the kit must observe (a substring)
    design: dict[str, str]             # requirement -> the verdict the design document gives
    commits: type[CommitPolicy] = CommitPolicy   # the catalog's hooks it overrides (namespaces, drops)


VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("inflight-wait", "an in-flight duplicate waits for the original and gets its replayed answer",
            InflightWait, {"in-flight": "waits and replays"}, {"INFLIGHT-01": "pass", "INFLIGHT-02": "unsupported"}),
    Variant("inflight-409-plain", "an in-flight duplicate gets 409 without the request_in_progress subtype",
            InflightPlain409, {"in-flight": "409 without subtype"}, {"INFLIGHT-01": "pass", "INFLIGHT-02": "deviation"}),
    Variant("inflight-503", "an in-flight duplicate gets 503 with Retry-After (no subtype)",
            Inflight503, {"in-flight": "answers 503"}, {"INFLIGHT-01": "pass", "INFLIGHT-02": "deviation"}),
    Variant("payload-unchecked", "the same key with another payload replays the first answer (no payload binding)",
            PayloadUnchecked, {"payload-mismatch": "replays the first"}, {"PAYLOAD-01": "deviation"}),
    Variant("payload-400", "the same key with another payload is refused with 400 (not 422); nothing executed",
            Payload400, {"payload-mismatch": "rejects with 400"}, {"PAYLOAD-01": "deviation"}),
    Variant("keys-global", "keys are looked up by the key alone (no operation or resource scope)",
            KeysGlobal, {"key-scope": "global"}, {"SCOPE-01": "deviation"}),
    Variant("replies-rebuilt", "a replay is rebuilt from the resource's current state (may reflect a newer state)",
            RepliesRebuilt, {"replay": "rebuilt from current state"}, {"REPLAY-01": "pass", "REPLAY-05": "deviation"}),
    Variant("lifetime-grace", "keys are honoured for a grace period past the advertised lifetime",
            LifetimeGrace, {"lifetime": "grace after the lifetime"}, {"LIFE-01": "pass", "LIFE-03": "pass"}),
    Variant("any-uuid", "any UUID version is accepted as a key, not only UUIDv7",
            AnyUuid, {"key-formats": "any UUID"}, {"KEY-01": "pass"}),
    Variant("separator-dot", "namespace levels are joined by '.' (advertised URL-encoded as namespace-separator; "
            "0x1F still decoded)", KeyPolicy, {}, {}, commits=DotSeparator),
    Variant("drop-deletes-metadata", "dropping a view, or a table without purge, deletes its metadata files",
            KeyPolicy, {}, {}, commits=DropDeletesMetadata),
]}

COMBINE = "+"


def _hooks(cls: type) -> set[str]:
    """The hooks a policy class overrides itself (not those of its bases)."""
    return {k for k, v in vars(cls).items() if callable(v) and not k.startswith("__")}


def _combined(name: str, parts: list[Variant]) -> Variant:
    """Several variants at once, as a real catalog takes several allowed paths (Polaris: an in-flight 503 and
    replays rebuilt from the current state): one policy class over each part's, refused when two parts override
    the same hook (two answers to one choice, e.g. inflight-wait+inflight-503)."""
    owner: dict[str, str] = {}
    for v in parts:
        # a choice is a hook, or a row of the behaviour profile (inflight-wait's in_flight and inflight-503's
        # in_flight_answer are two hooks but one choice: what an in-flight duplicate gets)
        chosen = {h for cls in (v.policy, v.commits) if cls not in (KeyPolicy, CommitPolicy) for h in _hooks(cls)}
        for hook in sorted(chosen | {f"the {row} row" for row in v.shows}):
            if hook in owner:
                raise ValueError(f"variant {name!r}: {owner[hook]} and {v.name} both choose {hook} (one catalog "
                                 f"takes one path there)")
            owner[hook] = v.name
    keys = tuple(v.policy for v in parts if v.policy is not KeyPolicy) or (KeyPolicy,)
    commits = tuple(v.commits for v in parts if v.commits is not CommitPolicy) or (CommitPolicy,)
    policy = keys[0] if len(keys) == 1 else type(name, keys, {"name": name})
    commit = commits[0] if len(commits) == 1 else type(name, commits, {})
    return Variant(name, "; ".join(v.path for v in parts), policy,
                   {k: s for v in parts for k, s in v.shows.items()},
                   {k: s for v in parts for k, s in v.design.items()}, commit)


def get_variant(name: str) -> Variant:
    """A variant by name, or several joined by '+' (``inflight-503+replies-rebuilt``): see ``_combined``."""
    names = [n.strip() for n in name.split(COMBINE)]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant profile {', '.join(map(repr, unknown))}; known: "
                         f"{', '.join(VARIANTS)} (several joined by '{COMBINE}')")
    if len(set(names)) != len(names):
        raise ValueError(f"variant {name!r} names a variant twice")
    return VARIANTS[names[0]] if len(names) == 1 else _combined(COMBINE.join(names), [VARIANTS[n] for n in names])


def help_text() -> str:
    return "; ".join(f"{v.name}: {v.path}" for v in VARIANTS.values())


def variant_name(raw: str) -> str:
    """``ctk serve --variant``: the name as given once it names known, combinable variants (argparse's type)."""
    import argparse

    try:
        return get_variant(raw).name
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
