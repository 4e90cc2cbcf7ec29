"""Capability discovery: ``GET /v1/config`` parsed into a `Discovery`.

Rules applied (design document §Capability Discovery, merged OpenAPI CatalogConfig):
* ``idempotency-key-lifetime`` is a TOP-LEVEL field; found only inside ``overrides`` or ``defaults`` it is
  recorded in ``misplaced_in`` and does not count as support.
* A lifetime is valid when it is a string holding a positive ISO-8601 duration (parsed with isodate).
  Missing or invalid means unsupported: clients must not send keys or retry automatically.
* ``java_parseable``: whether Java's ``Duration.parse`` would accept the text (only days, hours, minutes and
  seconds: no years, months or weeks).
* ``endpoints``: the advertised ``"METHOD /v1/{prefix}/..."`` set; when absent, `supports()` answers from
  the default set an Iceberg Java client assumes (namespaces and tables, no views).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import isodate

from ctk.client.probing import probe_read
from ctk.core.exchange import Exchange

LIFETIME_KEY = "idempotency-key-lifetime"

# What Iceberg Java's RESTSessionCatalog assumes when /v1/config carries no "endpoints".
DEFAULT_ENDPOINTS = frozenset({
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
})

# Java's Duration.parse grammar: PnDTnHnMn.nS, each part optional, signs allowed, case-insensitive.
_JAVA_DURATION = re.compile(
    r"^[-+]?P(?:[-+]?[0-9]+D)?(?:T(?:[-+]?[0-9]+H)?(?:[-+]?[0-9]+M)?(?:[-+]?[0-9]+(?:[.,][0-9]{0,9})?S)?)?$",
    re.IGNORECASE,
)


class DiscoveryError(RuntimeError):
    """``GET /v1/config`` could not be used (target down, non-200, non-JSON); carries the exchange."""

    def __init__(self, message: str, exchange: Exchange | None = None):
        super().__init__(message)
        self.exchange = exchange


def java_duration_parseable(text: str) -> bool:
    """Whether ``java.time.Duration.parse(text)`` would accept ``text``."""
    if not isinstance(text, str) or not _JAVA_DURATION.match(text):
        return False
    body = text.lstrip("+-")[1:]  # after "P"
    if not body or body.upper() == "T" or body.upper().endswith("T"):
        return False
    return True


def parse_lifetime(value: Any) -> tuple[timedelta | None, str | None]:
    """(timedelta, None) for a valid lifetime, else (None, why it is invalid)."""
    if value is None:
        return None, "absent"
    if not isinstance(value, str):
        return None, f"not a string but {type(value).__name__} {value!r}"
    text = value.strip()
    if text != value or not text:
        return None, f"not an ISO-8601 duration: {value!r} (empty or surrounded by whitespace)"
    if text.upper().endswith("T"):
        return None, f"not an ISO-8601 duration: {value!r} (time designator T without a time part)"
    try:
        parsed = isodate.parse_duration(text)
    except (isodate.ISO8601Error, ValueError, TypeError, OverflowError) as exc:
        return None, f"not an ISO-8601 duration: {value!r} ({exc})"
    if isinstance(parsed, isodate.Duration):  # years or months: calendar dependent
        try:
            parsed = parsed.totimedelta(start=datetime(2000, 1, 1))
        except (OverflowError, ValueError) as exc:
            return None, f"duration {value!r} out of range ({exc})"
    if parsed <= timedelta(0):
        return None, f"duration {value!r} is not positive"
    return parsed, None


def normalize_endpoint(method: str, template: str) -> str:
    """``"POST /v1/{prefix}/namespaces"`` from ("post", "namespaces") or ("POST", "/v1/{prefix}/namespaces")."""
    t = template.strip()
    if not t.startswith("/v1/"):
        t = "/v1/{prefix}/" + t.lstrip("/")
    return f"{method.strip().upper()} {t.rstrip('/')}"


@dataclass
class Discovery:
    """What ``GET /v1/config`` said. See the module docstring for the rules."""

    config: dict[str, Any]
    exchange: Exchange | None = None
    lifetime: timedelta | None = None         # valid top-level lifetime, else None
    lifetime_raw: Any = None                  # the value as sent (also when misplaced)
    lifetime_error: str | None = None         # why there is no usable lifetime (None when valid)
    misplaced_in: str | None = None           # "overrides" / "defaults" when the key sits there instead
    java_parseable: bool | None = None        # None when no lifetime text was sent at all
    endpoints: set[str] | None = None         # normalized "METHOD /v1/{prefix}/..."; None when not advertised
    prefix: str | None = None                 # prefix override (or target prefix) in use
    defaults: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def idempotency_supported(self) -> bool:
        """Presence of a valid top-level lifetime implies support."""
        return self.lifetime is not None

    def supports(self, method: str, template: str) -> bool:
        """Whether the endpoint is advertised (or in the default set when no list was advertised)."""
        wanted = normalize_endpoint(method, template)
        return wanted in (DEFAULT_ENDPOINTS if self.endpoints is None else self.endpoints)

    @classmethod
    def from_config(cls, config: dict[str, Any], exchange: Exchange | None = None,
                    target_prefix: str | None = None) -> "Discovery":
        advertised_defaults, advertised_overrides = config.get("defaults"), config.get("overrides")
        defaults: dict[str, Any] = advertised_defaults if isinstance(advertised_defaults, dict) else {}
        overrides: dict[str, Any] = advertised_overrides if isinstance(advertised_overrides, dict) else {}
        d = cls(config=config, exchange=exchange, defaults=dict(defaults), overrides=dict(overrides))
        if LIFETIME_KEY in config:
            d.lifetime_raw = config[LIFETIME_KEY]
            d.lifetime, d.lifetime_error = parse_lifetime(d.lifetime_raw)
        else:
            for where, block in (("overrides", overrides), ("defaults", defaults)):
                if LIFETIME_KEY in block:
                    d.misplaced_in = where
                    d.lifetime_raw = block[LIFETIME_KEY]
                    _, why = parse_lifetime(d.lifetime_raw)
                    d.lifetime_error = (f"{LIFETIME_KEY} is inside {where!r}, not a top-level field"
                                        + (f"; also invalid: {why}" if why else ""))
                    break
            else:
                d.lifetime_error = "absent"
        if d.lifetime_raw is not None:
            d.java_parseable = java_duration_parseable(d.lifetime_raw)
        eps = config.get("endpoints")
        if isinstance(eps, list):
            d.endpoints = set()
            for e in eps:
                if isinstance(e, str) and " " in e.strip():
                    m, t = e.strip().split(None, 1)
                    d.endpoints.add(normalize_endpoint(m, t))
        prefix = overrides.get("prefix") or target_prefix or defaults.get("prefix")
        d.prefix = str(prefix).strip("/") or None if prefix else None
        return d


def discover(client: Any, apply_prefix: bool = True) -> Discovery:
    """``GET /v1/config`` (with ``?warehouse=`` when the target has one) parsed into a `Discovery`.

    Raises `DiscoveryError` when the target is down, answers non-200, or answers something that is not a
    JSON object. With ``apply_prefix`` the discovered prefix is set on the client.
    """
    target = client.target
    params = {"warehouse": target.warehouse} if target.warehouse else None
    # read again on a 5xx, a timeout or a dropped connection (bounded): one unreadable answer of a busy target
    # must not decide what the kit thinks it offers
    ex = probe_read(client, "/v1/config", "discovery: GET /v1/config", params=params)[-1]
    if ex.status is None:
        raise DiscoveryError(f"catalog at {target.base_url} did not answer GET /v1/config: {ex.error}", ex)
    if ex.status != 200:
        raise DiscoveryError(f"GET /v1/config at {target.base_url} answered {ex.status}: "
                             f"{(ex.response_body or '')[:300]}", ex)
    body = ex.json()
    if not isinstance(body, dict):
        kind = "non-JSON" if body is None else f"JSON {type(body).__name__} instead of an object"
        raise DiscoveryError(f"GET /v1/config at {target.base_url} answered {kind}: "
                             f"{(ex.response_body or '')[:300]!r}", ex)
    d = Discovery.from_config(body, ex, target_prefix=target.prefix)
    if apply_prefix:
        client.set_prefix(d.prefix)
    return d


def advertised_separator(discovery: Discovery | None) -> str | None:
    """The ``namespace-separator`` /v1/config advertises (overrides win over defaults), or None."""
    for block in (getattr(discovery, "overrides", None), getattr(discovery, "defaults", None)):
        if isinstance(block, dict) and block.get("namespace-separator"):
            return str(block["namespace-separator"])
    return None
