"""`CatalogClient`: the kit's recorded, bounded, redacting HTTP client for an Iceberg REST catalog.

* ``request()`` never raises for transport errors: a timeout, reset or refused connection gives an
  `Exchange` with ``status=None`` and ``error`` text that starts with its kind (``timeout:``, ``reset:``,
  ``refused:``, ``protocol:``, ``auth:``, ``transport:``); see `error_kind()`.
* A read (GET, HEAD) lost on a connection the server dropped before answering (an idle keep-alive connection it
  closed as the request went out, or one it closes after a 500 without saying so: `dropped_connection()`) is
  sent again on a fresh connection, at most ``READ_RETRIES`` times (``request(..., read_retries=N)`` changes the
  bound, 0 turns it off); the exchange is recorded once, its lost tries in ``Exchange.dropped``. Mutations are
  never sent again here (their lost answers are the retrying client's and the idempotency checks' matter).
* Every exchange is appended to ``client.exchanges`` (thread-safe); secrets are redacted only when an
  exchange is rendered or serialized (`Exchange.to_dict()` / `render()`), never stored in repr.
* Paths are relative to ``/v1/{prefix}``: ``client.request("GET", "namespaces")`` goes to
  ``{url}/v1/{prefix}/namespaces``. Paths that start with ``/v1/`` or ``/_ctk`` are taken from the base URL
  as they are, and full ``http(s)://`` URLs are used unchanged.
* Namespaces are encoded per the spec: each level percent-encoded, levels joined by ``%1F``
  (`ns_path()`, `table_path()`, `view_path()`, or ``url_for(template, namespace=(...), table=...)``).
  A target that advertises another ``namespace-separator`` in /v1/config (e.g. ``%2E``) gets that one:
  `set_namespace_separator()` makes ``url_for`` put it in place of ``%1F`` in every URL it builds.
  ``url_for`` is the one path builder: what is sent, and what a fault rule matches (``url_path()``: the
  path as it goes on the wire, e.g. for the interposer's match patterns), both come from it.
* Listings (namespaces, tables, views) are the catalog layer's: ``ctk.catalog.Catalog`` pages through them.
* Table loads and creations carry ``X-Iceberg-Access-Delegation: vended-credentials``, as the Java client and
  pyiceberg send it, so that catalogs which vend storage settings do; `storage_settings()` turns a load
  result into the settings of the kit's own file reads and writes (``ctk.client.storage``).
"""

from __future__ import annotations

import contextlib
import json as _json
import re
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any, Protocol
from urllib.parse import quote, unquote, urlencode, urlsplit

import httpx

from ctk.core.exchange import Exchange
from ctk.client.config import TargetConfig

INVALID_HEADER = "X-Ctk-Invalid"     # what is invalid in a request body the kit sends so on purpose

Namespace = Sequence[str] | str

DEFAULT_SEPARATOR = "%1F"
# GET .../namespaces/{ns}/tables/{table} (load) and POST .../namespaces/{ns}/tables (create)
_LOAD_TABLE = re.compile(r"namespaces/[^/?]+/tables/[^/?]+(\?.*)?$")
_CREATE_TABLE = re.compile(r"namespaces/[^/?]+/tables(\?.*)?$")


def encode_separator(value: Any) -> str | None:
    """The URL form of an advertised ``namespace-separator`` (``%2E`` is sent as ``%2E``, a raw character is
    percent-encoded where needed); None for a value the kit cannot use (empty, not a string, ``/``)."""
    if not isinstance(value, str) or not value:
        return None
    raw = unquote(value) if "%" in value else value
    if not raw or "/" in raw:
        return None
    if "%" in value:       # already in URL form, as the spec's example (%2E): sent as advertised
        return DEFAULT_SEPARATOR if raw == "\x1f" else value
    return quote(raw, safe="")


def ns_tuple(namespace: Namespace) -> tuple[str, ...]:
    """("a", "b") from ("a", "b"), ["a", "b"] or "a.b"."""
    if isinstance(namespace, str):
        return tuple(namespace.split(".")) if namespace else ()
    return tuple(namespace)


def ns_path(namespace: Namespace) -> str:
    """The URL path segment for a namespace: levels percent-encoded and joined by ``%1F``."""
    parts = ns_tuple(namespace)
    if not parts:
        raise ValueError("empty namespace")
    return "%1F".join(quote(p, safe="") for p in parts)


def table_path(namespace: Namespace, name: str) -> str:
    return f"namespaces/{ns_path(namespace)}/tables/{quote(name, safe='')}"


def view_path(namespace: Namespace, name: str) -> str:
    return f"namespaces/{ns_path(namespace)}/views/{quote(name, safe='')}"


def error_kind(exchange: Exchange) -> str | None:
    """"timeout", "reset", "refused", "protocol", "auth" or "transport" for a transport error, else None."""
    if exchange.error is None:
        return None
    return exchange.error.split(":", 1)[0]


def classify_outcome(exchange: Exchange) -> str:
    """"ok" / "fail" / "info" (outcome unknown) for one mutation attempt, Jepsen style.

    2xx ok; 5xx, timeout, reset and 409 request_in_progress info; other 4xx, refused connection and failed
    authentication fail (the request was certainly not applied).
    """
    if exchange.status is None:
        return "fail" if error_kind(exchange) in ("refused", "auth") else "info"
    if 200 <= exchange.status < 300:
        return "ok"
    if exchange.status >= 500:
        return "info"
    if exchange.status == 409 and is_request_in_progress(exchange):
        return "info"
    return "fail"


def is_request_in_progress(exchange: Exchange) -> bool:
    """A 409-style answer whose error names ``request_in_progress`` (type, subtype or message)."""
    body = exchange.json()
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return False
    text = " ".join(str(err.get(k, "")) for k in ("type", "subtype", "message")).lower()
    return "request_in_progress" in text or "requestinprogress" in text


def _classify(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        kind = "timeout"
    elif isinstance(exc, httpx.ConnectError):
        text = str(exc).lower()
        kind = "refused" if ("refused" in text or "errno 111" in text or "cannot assign" in text) else "transport"
    elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        text = str(exc).lower()
        kind = "reset" if ("reset" in text or "disconnected" in text or "closed" in text
                           or isinstance(exc, (httpx.ReadError, httpx.WriteError))) else "protocol"
    elif isinstance(exc, httpx.ProtocolError):
        kind = "protocol"
    else:
        kind = "transport"
    return f"{kind}: {type(exc).__name__}: {exc}".rstrip(": ")


READ_METHODS = frozenset({"GET", "HEAD"})


def dropped_connection(exc: BaseException) -> bool:
    """Whether ``exc`` says the server dropped the connection before any answer to the request (closed or reset
    it: an idle keep-alive connection it closed as the request went out, or one it closes after an error
    without saying so). A timeout is not one: the server may be working on it."""
    if isinstance(exc, httpx.RemoteProtocolError):
        text = str(exc).lower()
        return "without sending" in text or "disconnected" in text
    return isinstance(exc, (httpx.ReadError, httpx.WriteError)) and not isinstance(exc, httpx.TimeoutException)


def _headers_dict(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header pairs as a dict; a header that occurs more than once keeps all values joined by ", "."""
    out: dict[str, str] = {}
    lower: dict[str, str] = {}
    for k, v in items:
        key = lower.get(k.lower())
        if key is None:
            lower[k.lower()] = k
            out[k] = v
        else:
            out[key] = out[key] + ", " + v
    return out


class RequestTurns(Protocol):
    """Turns the client's requests are sent in (`CatalogClient.turns`): with --ctk-db-link, the shared side of the
    turns on the catalog's database link (`ctk.interposer.linklock.LinkLock`), so that a link fault another
    process arms never meets a request of this one."""

    def request(self) -> contextlib.AbstractContextManager[None]:
        """Held while one request is in flight."""
        ...

    def unfinished(self) -> None:
        """A request ended without its answer: the catalog may still be at work on it."""
        ...


class CatalogClient:
    """Recorded HTTP client for one `TargetConfig`.

    ``transport`` may be an ``httpx.BaseTransport`` (e.g. ``httpx.MockTransport``) for tests.
    ``prefix`` is ``target.prefix`` until `discover()` (or `set_prefix()`) applies a config override.
    Use as a context manager or call ``close()``.
    """

    READ_RETRIES = 2        # a read lost on a dropped connection is sent again this many times at most (`_send`)

    def __init__(self, target: TargetConfig, transport: httpx.BaseTransport | None = None,
                 max_connections: int = 64) -> None:
        self.target = target
        self.prefix: str | None = target.prefix
        self.namespace_separator: str = DEFAULT_SEPARATOR   # URL form; see set_namespace_separator()
        self.access_delegation: str | None = "vended-credentials"  # sent on table loads and creations
        self.storage_properties: dict[str, str] = {}        # --catalog-property: FileIO settings of the kit
        self.storage_allow_remote: bool = False             # --ctk-allow-remote: lift the storage guard
        self.placement: Any = None                          # ctk.client.placement.Placement of the run
        self.bound_headers: dict[str, str] = {}             # this client's own headers (a fault injector's scope)
        self.turns: RequestTurns | None = None               # every request is sent in a turn of these (`_send`)
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._auth_lock = threading.Lock()
        self._token: str | None = target.token
        self._auth_error: str | None = None
        self._max_connections = max_connections
        self._http = httpx.Client(
            transport=transport,
            timeout=self._timeout(None),
            follow_redirects=False,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )

    # --- lifecycle ---------------------------------------------------------------------------------
    def sibling(self) -> "CatalogClient":
        """A new client on the same target with this one's settings (prefix, namespace separator, access
        delegation, storage settings, placement), its own connections, its own exchange record and no binding
        to a check context (``bound_headers``: the context that uses it binds it)."""
        other = CatalogClient(self.target, max_connections=self._max_connections)
        other.prefix, other.namespace_separator = self.prefix, self.namespace_separator
        other.access_delegation = self.access_delegation
        other.storage_properties = dict(self.storage_properties)
        other.storage_allow_remote, other.placement = self.storage_allow_remote, self.placement
        other.turns = self.turns
        other._token = self._token
        return other

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "CatalogClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CatalogClient({self.target!r}, prefix={self.prefix!r}, exchanges={len(self.exchanges)})"

    # --- paths -------------------------------------------------------------------------------------
    def set_prefix(self, prefix: str | None) -> None:
        self.prefix = (prefix or "").strip("/") or None

    def set_namespace_separator(self, value: Any) -> str:
        """Use the advertised ``namespace-separator`` (None or unusable: the default ``%1F``); returns it."""
        self.namespace_separator = encode_separator(value) or DEFAULT_SEPARATOR
        return self.namespace_separator

    def storage_settings(self, loaded: dict | None, location: str | None = None) -> Any:
        """`ctk.client.storage.StorageSettings` for a table the catalog returned as ``loaded``."""
        from ctk.client.storage import settings_for

        return settings_for(self, loaded, location)

    def url_for(self, path: str, query: dict[str, Any] | None = None, **params: Any) -> str:
        """The full URL for ``path`` (relative to ``/v1/{prefix}``, see module doc).

        ``{name}`` placeholders in ``path`` are filled from ``params``: a tuple/list value is a namespace
        (levels joined by %1F), any other value is percent-encoded as one segment. ``query`` values that
        are None are left out.
        """
        if params:
            filled = {k: (ns_path(v) if isinstance(v, (tuple, list)) else quote(str(v), safe=""))
                      for k, v in params.items()}
            path = path.format(**filled)
        if path.startswith(("http://", "https://")):
            url = path
        elif path.startswith(("/v1/", "/_ctk")) or path == "/v1":
            url = self.target.base_url + path
        else:
            rel = path.lstrip("/")
            url = self.target.base_url + "/v1/" + (f"{self.prefix}/" if self.prefix else "") + rel
        if query:
            q = urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
            if q:
                url += ("&" if "?" in url else "?") + q
        if self.namespace_separator != DEFAULT_SEPARATOR and "%1F" in url:
            url = url.replace("%1F", self.namespace_separator)
        return url

    def url_path(self, path: str, query: dict[str, Any] | None = None, **params: Any) -> str:
        """The path of ``url_for(path, ...)`` as it goes on the wire (percent-encoded, the advertised namespace
        separator in place, no query): what a fault rule on the way to the catalog matches."""
        return urlsplit(self.url_for(path, query, **params)).path

    # --- auth --------------------------------------------------------------------------------------
    def _timeout(self, timeout: float | None) -> httpx.Timeout:
        t = self.target.timeout if timeout is None else timeout
        return httpx.Timeout(t, connect=min(self.target.connect_timeout, t))

    def authenticate(self) -> str | None:
        """The bearer token to send (fetching it once through OAuth2 client credentials if configured).

        Raises `AuthError` when the token endpoint fails; `request()` turns that into an exchange error.
        """
        if self._token is not None or self.target.credential is None:
            return self._token
        with self._auth_lock:
            if self._token is not None:
                return self._token
            client_id, secret = self.target.credential.split(":", 1)
            form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret,
                    "scope": self.target.oauth_scope}
            ex = self._send("POST", self.url_for("/v1/oauth/tokens"), content=urlencode(form).encode(),
                            headers=[("Content-Type", "application/x-www-form-urlencoded")],
                            label="oauth2 token", timeout=None)
            body = ex.json()
            if ex.status != 200 or not isinstance(body, dict) or not body.get("access_token"):
                why = ex.error or f"status {ex.status}"
                raise AuthError(f"OAuth2 client-credentials token request to {ex.url} failed: {why}")
            self._token = str(body["access_token"])
            return self._token

    # --- requests ----------------------------------------------------------------------------------
    def request(self, method: str, path: str, json: Any = None, content: bytes | str | None = None,
                headers: dict[str, str] | None = None, idempotency_key: str | None = None,
                header_name: str = "Idempotency-Key", label: str | None = None, timeout: float | None = None,
                params: dict[str, Any] | None = None,
                raw_headers: Sequence[tuple[str, str]] | None = None, invalid: str | None = None,
                read_retries: int | None = None) -> Exchange:
        """Send one request and return its recorded `Exchange`; never raises for transport errors.

        json            body serialized as JSON (Content-Type application/json)
        content         raw body (wins over ``json``)
        headers         extra headers for this request
        idempotency_key sent as ``{header_name}: {key}`` (``header_name`` lets a check spell it differently)
        raw_headers     extra (name, value) pairs sent as given, duplicates included (e.g. the key twice)
        label           what the kit meant by the request, kept on the exchange
        timeout         seconds for this request instead of ``target.timeout``
        params          query parameters (None values left out)
        invalid         what is invalid in a body sent so on purpose (to see it refused): sent as the header
                        ``X-Ctk-Invalid`` (and so in the recorded exchange); every other body the kit sends is valid
                        against the OpenAPI request schemas
        read_retries    a GET/HEAD lost on a connection the server dropped is sent again on a fresh one at most
                        this many times (default ``READ_RETRIES``; 0: never); the lost tries are listed in the
                        exchange's ``dropped``. Mutations are never sent again here.
        """
        hdrs: list[tuple[str, str]] = [("Accept", "application/json")]
        hdrs += list(self.target.headers.items()) + list(self.bound_headers.items())
        body: bytes | None = None
        if content is not None:
            body = content.encode() if isinstance(content, str) else content
        elif json is not None:
            body = _json.dumps(json, separators=(",", ":")).encode()
            hdrs.append(("Content-Type", "application/json"))
        if headers:
            hdrs += list(headers.items())
        if self.access_delegation and self._delegates(method, path) \
                and not any(k.lower() == "x-iceberg-access-delegation" for k, _ in hdrs):
            hdrs.append(("X-Iceberg-Access-Delegation", self.access_delegation))
        if idempotency_key is not None:
            hdrs.append((header_name, idempotency_key))
        if raw_headers:
            hdrs += list(raw_headers)
        if invalid:     # one header line of printable ASCII, whatever the text names
            hdrs.append((INVALID_HEADER, " ".join(invalid.encode("ascii", "backslashreplace").decode().split())))
        url = self.url_for(path, query=params)
        try:
            token = self.authenticate()
        except AuthError as exc:
            ex = Exchange(method.upper(), url, _headers_dict(hdrs), body.decode("utf-8", "replace") if body else None,
                          error=f"auth: {exc}", started_at=time.time(), label=label)
            self._record(ex)
            return ex
        if token and not any(k.lower() == "authorization" for k, _ in hdrs):
            hdrs.append(("Authorization", f"Bearer {token}"))
        return self._send(method, url, content=body, headers=hdrs, label=label, timeout=timeout,
                          read_retries=read_retries)

    @staticmethod
    def _delegates(method: str, path: str) -> bool:
        """A table load or creation (where real clients ask for vended storage credentials)."""
        rel = path.split("/v1/", 1)[-1] if path.startswith(("http://", "https://", "/v1/")) else path.lstrip("/")
        m = method.upper()
        return bool((m == "GET" and _LOAD_TABLE.search(rel)) or (m == "POST" and _CREATE_TABLE.search(rel)))

    def _send(self, method: str, url: str, content: bytes | None, headers: list[tuple[str, str]],
              label: str | None, timeout: float | None, read_retries: int | None = None) -> Exchange:
        """One recorded exchange. A read (GET, HEAD: idempotent) lost on a connection the server dropped
        (`dropped_connection`) is sent again on a fresh connection, at most ``read_retries`` times (default
        ``READ_RETRIES``); the lost tries are kept on the exchange (``dropped``), which is recorded once. With
        `turns`, sent in one (from before the first try to the answer of the last), and said `unfinished` when
        it ended without an answer."""
        turns = self.turns
        if turns is None:
            return self._send_once(method, url, content, headers, label, timeout, read_retries)
        with turns.request():
            ex = self._send_once(method, url, content, headers, label, timeout, read_retries)
            if ex.status is None or ex.dropped:
                turns.unfinished()
        return ex

    def _send_once(self, method: str, url: str, content: bytes | None, headers: list[tuple[str, str]],
                   label: str | None, timeout: float | None, read_retries: int | None) -> Exchange:
        started = time.time()
        t0 = time.monotonic()
        ex = Exchange(method.upper(), url, _headers_dict(headers),
                      content.decode("utf-8", "replace") if content else None, started_at=started, label=label)
        retries = (self.READ_RETRIES if read_retries is None else read_retries) \
            if method.upper() in READ_METHODS else 0
        for _ in range(retries + 1):
            ex.error = None
            try:
                resp = self._http.request(method.upper(), url, content=content, headers=headers,
                                          timeout=self._timeout(timeout))
                ex.status = resp.status_code
                ex.response_headers = _headers_dict(resp.headers.multi_items())
                ex.response_body = resp.text if resp.content else None
            except httpx.HTTPError as exc:
                ex.error = _classify(exc)
                if dropped_connection(exc) and len(ex.dropped) < retries:
                    ex.dropped.append(ex.error)
                    continue
            except OSError as exc:  # pragma: no cover - httpx normally wraps these
                ex.error = f"transport: {type(exc).__name__}: {exc}"
            break
        ex.elapsed_ms = (time.monotonic() - t0) * 1000.0
        self._record(ex)
        return ex

    def _record(self, ex: Exchange) -> None:
        with self._lock:
            self.exchanges.append(ex)

    def exchanges_since(self, index: int) -> list[Exchange]:
        """Exchanges recorded after the first ``index`` ones (use ``n = len(client.exchanges)`` as a mark)."""
        with self._lock:
            return list(self.exchanges[index:])

    def get(self, path: str, **kw: Any) -> Exchange:
        return self.request("GET", path, **kw)

    def post(self, path: str, json: Any = None, **kw: Any) -> Exchange:
        return self.request("POST", path, json=json, **kw)

    def delete(self, path: str, **kw: Any) -> Exchange:
        return self.request("DELETE", path, **kw)

    def head(self, path: str, **kw: Any) -> Exchange:
        return self.request("HEAD", path, **kw)

    # --- readers (parsed JSON or None) --------------------------------------------------------------
    def _read(self, path: str, label: str, params: dict[str, Any] | None = None) -> Any:
        ex = self.request("GET", path, label=label, params=params)
        return ex.json() if ex.status == 200 else None

    def load_table(self, namespace: Namespace, name: str) -> dict | None:
        """The LoadTableResult (``metadata-location``, ``metadata``, ``config``) or None if not 200."""
        return self._read(table_path(namespace, name), "read: load table")

    def load_view(self, namespace: Namespace, name: str) -> dict | None:
        return self._read(view_path(namespace, name), "read: load view")

    def load_namespace(self, namespace: Namespace) -> dict | None:
        """``{"namespace": [...], "properties": {...}}`` or None if not 200."""
        return self._read(f"namespaces/{ns_path(namespace)}", "read: load namespace")

    def _exists(self, path: str, label: str) -> bool | None:
        ex = self.request("HEAD", path, label=label)
        if ex.status in (200, 204):
            return True
        if ex.status == 404:
            return False
        ex = self.request("GET", path, label=label + " (GET fallback)")
        if ex.status == 200:
            return True
        if ex.status == 404:
            return False
        return None

    def namespace_exists(self, namespace: Namespace) -> bool | None:
        """True / False, or None when the catalog answered neither (error, 5xx)."""
        return self._exists(f"namespaces/{ns_path(namespace)}", "read: namespace exists")

    def table_exists(self, namespace: Namespace, name: str) -> bool | None:
        return self._exists(table_path(namespace, name), "read: table exists")

    def view_exists(self, namespace: Namespace, name: str) -> bool | None:
        return self._exists(view_path(namespace, name), "read: view exists")


class AuthError(RuntimeError):
    """Fetching an OAuth2 token failed."""
