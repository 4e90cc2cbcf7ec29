"""Where the catalog under test lives and how to talk to it: `TargetConfig`.

The kit only talks to loopback hosts unless ``allow_remote=True`` is given explicitly, so that a typo in
a URL never points fault injection or destructive checks at a shared catalog.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class TargetError(ValueError):
    """The target configuration is unusable (bad URL, remote host not allowed, bad credential)."""


def is_loopback_host(host: str) -> bool:
    """Loopback names (``localhost``, also fully qualified as ``localhost.``, and ``*.localhost``) and
    addresses in any spelling the resolver takes (``127.0.0.1``, ``127.1``, ``::1``)."""
    host = host.strip("[]").lower()
    if host.endswith(".") and not host.endswith("..") and not host[:-1].replace(".", "").isdigit():
        host = host[:-1]                  # a fully qualified name (localhost.), not an address
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if host and all(part.isdigit() for part in host.split(".")) and host.count(".") <= 3:
        try:   # the short IPv4 forms inet_aton takes, as the resolver does: 127.1, 127.0.1, 2130706433
            return ipaddress.IPv4Address(socket.inet_aton(host)).is_loopback
        except OSError:
            return False
    return False


@dataclass
class TargetConfig:
    """A REST catalog endpoint.

    url             base URL without ``/v1``, e.g. ``http://127.0.0.1:8181``
    prefix          path prefix placed after ``/v1/`` (a ``prefix`` override from ``/v1/config`` wins)
    warehouse       sent as ``?warehouse=`` to ``GET /v1/config``
    token           bearer token sent as ``Authorization: Bearer ...``
    credential      ``client_id:secret`` for the OAuth2 client-credentials flow (``POST /v1/oauth/tokens``);
                    the token is fetched once and then sent on every request
    oauth_scope     scope asked for in that flow
    headers         extra headers sent on every request
    timeout         seconds for reading/writing a request (each request is bounded by it)
    connect_timeout seconds for establishing a connection
    allow_remote    False (default): refuse hosts that are not loopback addresses
    """

    url: str
    prefix: str | None = None
    warehouse: str | None = None
    token: str | None = None
    credential: str | None = None
    oauth_scope: str = "catalog"
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    connect_timeout: float = 5.0
    allow_remote: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url:
            raise TargetError("target url is empty")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https"):
            raise TargetError(f"target url must start with http:// or https://, got {self.url!r}")
        if not parts.hostname:
            raise TargetError(f"target url has no host: {self.url!r}")
        if parts.query or parts.fragment:
            raise TargetError(f"target url must not carry a query or fragment: {self.url!r}")
        if not self.allow_remote and not is_loopback_host(parts.hostname):
            raise TargetError(
                f"refusing non-loopback target host {parts.hostname!r} ({self.url}); the kit injects faults and "
                "mutates catalogs, so remote targets must be allowed explicitly (allow_remote=True / --ctk-allow-remote)"
            )
        path = parts.path.rstrip("/")
        if path.endswith("/v1"):
            path = path[: -len("/v1")]
        self.url = f"{parts.scheme}://{parts.netloc}{path}"
        if self.prefix is not None:
            self.prefix = self.prefix.strip("/") or None
        if self.credential is not None and ":" not in self.credential:
            raise TargetError("credential must be 'client_id:secret'")
        if self.token is not None and self.credential is not None:
            raise TargetError("give either a token or a credential, not both")
        if not (self.timeout and self.timeout > 0) or not (self.connect_timeout and self.connect_timeout > 0):
            raise TargetError("timeouts must be positive numbers of seconds")
        self.headers = dict(self.headers or {})

    @property
    def base_url(self) -> str:
        """The URL without a trailing slash and without ``/v1``."""
        return self.url

    def __repr__(self) -> str:  # never show secrets
        return (f"TargetConfig(url={self.url!r}, prefix={self.prefix!r}, warehouse={self.warehouse!r}, "
                f"token={'<redacted>' if self.token else None}, "
                f"credential={'<redacted>' if self.credential else None}, timeout={self.timeout}, "
                f"connect_timeout={self.connect_timeout}, allow_remote={self.allow_remote})")

    __str__ = __repr__
