"""Key-format checks: KEY-01 (malformed keys) and KEY-02 (the header given twice)."""

from __future__ import annotations

import uuid

from ctk.checks.common import describe, guarded
from ctk.checks.judging import broken
from ctk.core.behaviours import Behaviour, check, registered
from ctk.catalog import ENDPOINTS, Endpoint
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Verdict
from ctk.client.keys import malformed_keys, new_key
from ctk.checks.context import CheckContext
from ctk.checks.common import Run


def _rejected(ex: Exchange) -> bool:
    return ex.status is not None and 400 <= ex.status < 500


@check(requirement="KEY-01", behaviour=Behaviour.MALFORMED_KEY)
@guarded()
def check_malformed_keys(run: Run, ctx: CheckContext, endpoint: Endpoint | None = None) -> Verdict:
    endpoint = endpoint or ENDPOINTS["createNamespace"]
    run.endpoint = endpoint
    results, bad = [], []
    for key in [k for k in malformed_keys() if k]:   # an empty value is indistinguishable from no header
        case = endpoint.prepare(ctx)
        before = case.observe()
        ex = case.send(ctx.client, key=key, label=f"malformed key {key!r}")
        n = case.executions(before, case.observe())
        results.append({"key": key, "status": ex.status, "executions": n})
        if not _rejected(ex) or n:
            bad.append(f"key {key!r}: got {describe(ex)}, executions visible in state: {n}")
    statuses = sorted({str(r["status"]) for r in results})
    formats = _well_formed_probe(ctx, endpoint)
    details = {"results": results, "formats": formats, "accepted": key_formats(results, formats)}
    if bad:
        return broken(run, "a malformed Idempotency-Key (not a UUID, wrong length) is rejected with a 4xx and "
                          "nothing is executed", "; ".join(bad),
                          "accepted" if any(r["executions"] for r in results) else "/".join(statuses), details)
    return run.ok(f"all {len(results)} malformed keys rejected ({', '.join(statuses)}); nothing executed; "
                  f"well-formed keys accepted: {details['accepted']}", "/".join(statuses), details)


def _well_formed_probe(ctx: CheckContext, endpoint: Endpoint) -> dict:
    """Which well-formed keys besides a lower-case UUIDv7 the target takes (classified, not judged): the same in
    upper-case hex (the spec's own example is upper case) and other UUID versions."""
    v7 = new_key()
    out = {}
    for name, key in (("UUIDv7 upper-case", v7.upper()), ("UUIDv4", str(uuid.uuid4())),
                      ("UUIDv1", str(uuid.uuid1()))):
        case = endpoint.prepare(ctx)
        ex = case.send(ctx.client, key=key, label=f"well-formed key, {name}: {key}")
        out[name] = {"key": key, "status": ex.status,
                     "accepted": ex.status is not None and 200 <= ex.status < 300}
    return out


def key_formats(results: list[dict], formats: dict) -> str:
    """One line: UUIDv7 only / any UUID / any string, and whether upper-case hex is taken."""
    if any(r.get("executions") for r in results):
        kind = "any string"
    elif formats.get("UUIDv4", {}).get("accepted") or formats.get("UUIDv1", {}).get("accepted"):
        kind = "any UUID"
    else:
        kind = "UUIDv7 only"
    upper = formats.get("UUIDv7 upper-case", {}).get("accepted")
    return f"{kind}; upper-case hex {'accepted' if upper else 'rejected'}"


@check(requirement="KEY-02", behaviour=Behaviour.REPEATED_HEADER)
@guarded()
def check_repeated_header(run: Run, ctx: CheckContext, endpoint: Endpoint | None = None) -> Verdict:
    endpoint = endpoint or ENDPOINTS["createNamespace"]
    run.endpoint = endpoint
    case = endpoint.prepare(ctx)
    before = case.observe()
    k1, k2 = new_key(), new_key()
    ex = case.send(ctx.client, raw_headers=[("Idempotency-Key", k1), ("Idempotency-Key", k2)],
                   label="Idempotency-Key header given twice")
    n = case.executions(before, case.observe())
    details = {"keys": [k1, k2], "status": ex.status, "executions": n}
    if _rejected(ex) and not n:
        return run.ok(f"rejected with {describe(ex)}; nothing executed", str(ex.status), details)
    return broken(run, "a request carrying the Idempotency-Key header twice is rejected with a 4xx and executes "
                      "nothing", f"got {describe(ex)}; executions visible in state: {n}",
                      "accepted" if n else describe(ex), details)


KEY_CHECKS = [(c.behaviour, c.fn) for c in registered("keys")]   # (behaviour, function), column order
