"""Session state of the ctk plugin: the target (embedded reference catalog or a URL), its health, the client,
discovery, the run namespace and the check context. One per pytest session (per xdist worker)."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

import httpx

from ctk.checks.context import CheckContext, CheckOptions
from ctk.client.probing import PROBE_TRIES
from ctk.client.transport import CatalogClient
from ctk.client.placement import Placement
from ctk.interposer import Interposer
from ctk.plugin import namespace as nsmod
from ctk.plugin.options import CtkOptions
from ctk.client.config import TargetConfig
from ctk.client.discovery import Discovery, advertised_separator, discover

if TYPE_CHECKING:  # pragma: no cover - imported where used: the embedded catalog's web stack, Docker
    import pytest

    from ctk.interposer.linklock import LinkLock
    from ctk.plugin.containers import ContainerTarget
    from ctk.reference.server import ReferenceServer

EMBEDDED_SETTINGS: dict[str, Any] = dict(control_api=True, idempotency_lifetime="PT4S", idempotency_grace="PT2S")


class TargetUnavailable(RuntimeError):
    """The catalog did not answer (hangs, refuses, died): every ctk test fails with this message."""


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def probe(url: str, timeout: float, headers: dict[str, str] | None = None, credential: str | None = None,
          warehouse: str | None = None, strict: bool = False) -> str | None:
    """GET {url}/v1/config with a hard timeout; None when the target is usable, else the problem in one line
    that names the user's URL and the cause: nothing listening (refused), timed out, not HTTP, credentials
    rejected (401/403, also by the OAuth2 token endpoint for ``credential``) and, with ``strict``, any other
    non-200 answer or one that is not a JSON object. Without ``strict`` any HTTP answer counts as alive."""
    hdrs = dict(headers or {})
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)), trust_env=False) as c:
            if credential and strict:
                client_id, _, secret = credential.partition(":")
                r = c.post(f"{url}/v1/oauth/tokens", data={"grant_type": "client_credentials", "client_id": client_id,
                                                           "client_secret": secret, "scope": "catalog"})
                token = (_json_object(r) or {}).get("access_token") if r.status_code == 200 else None
                if r.status_code in (400, 401, 403) and not token:
                    return (f"catalog at {url} rejected the client credentials: POST /v1/oauth/tokens answered "
                            f"HTTP {r.status_code} {_snippet(r.text)}")
                if not token:
                    return (f"catalog at {url} gave no token for the client credentials: POST /v1/oauth/tokens "
                            f"answered HTTP {r.status_code} {_snippet(r.text)}")
                hdrs["Authorization"] = f"Bearer {token}"
            for attempt in range(1, PROBE_TRIES + 1):   # a 5xx, a timeout or a dropped connection: read again
                try:
                    r = c.get(f"{url}/v1/config", headers=hdrs, params={"warehouse": warehouse} if warehouse else None)
                except (httpx.TimeoutException, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                    if attempt == PROBE_TRIES:
                        raise
                    continue
                if r.status_code < 500:
                    break
    except httpx.TimeoutException as exc:
        return (f"catalog at {url} did not answer GET /v1/config within the {timeout:g} s timeout "
                f"({type(exc).__name__}); is it hanging? If it is only slow, raise --ctk-timeout")
    except httpx.ConnectError as exc:
        return (f"catalog at {url} is unreachable: connection refused, nothing listening? ({_snippet(str(exc))}); "
                "is the catalog started, and is --catalog-url its address and port?")
    except (httpx.RemoteProtocolError, httpx.LocalProtocolError, httpx.DecodingError) as exc:
        return (f"catalog at {url} does not speak HTTP: GET /v1/config failed: {type(exc).__name__}: "
                f"{_snippet(str(exc))}; is --catalog-url the port of its REST API, with http:// or https:// as it "
                "serves?")
    except httpx.HTTPError as exc:
        return (f"catalog at {url} is unreachable: GET /v1/config failed: {type(exc).__name__}: {_snippet(str(exc))}"
                "; check --catalog-url")
    if not strict:
        return None
    if r.status_code in (401, 403):
        how = "rejected the credentials" if hdrs.get("Authorization") else "requires credentials"
        return (f"catalog at {url} {how}: GET /v1/config answered HTTP {r.status_code} {_snippet(r.text)} "
                "(give --catalog-token or --catalog-credential ID:SECRET)")
    if r.status_code == 404:
        return (f"catalog at {url} answered HTTP 404 to GET /v1/config: {_snippet(r.text)}; check --catalog-url: "
                "the base URL before /v1, with any path the catalog is served under (e.g. "
                "http://127.0.0.1:8181/api/catalog), and --warehouse when the catalog wants one (the path after "
                "/v1/, e.g. /v1/PREFIX/namespaces, is --catalog-prefix or what /v1/config advertises)")
    if 400 <= r.status_code < 500:
        return (f"catalog at {url} answered HTTP {r.status_code} to GET /v1/config: {_snippet(r.text)}; check "
                "--catalog-url and --warehouse")
    if r.status_code != 200:
        return (f"catalog at {url} answered HTTP {r.status_code} to GET /v1/config: {_snippet(r.text)} (the "
                "catalog's own error: its log says why)")
    if _json_object(r) is None:
        kind = r.headers.get("content-type", "no content type")
        return (f"catalog at {url} answered GET /v1/config with something that is not a JSON object ({kind}): "
                f"{_snippet(r.text)}; is --catalog-url the catalog's REST base URL (before /v1), not a web page?")
    return None


def _json_object(r: httpx.Response) -> dict | None:
    """The response's body when it is a JSON object, else None."""
    try:
        body = r.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


class CtkSession:
    def __init__(self, options: CtkOptions, run_id: str | None = None, worker: str | None = None):
        self.options = options
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.worker = worker or "main"
        self.server: ReferenceServer | None = None    # the embedded catalog, when no URL is given
        self.interposer: Interposer | None = None     # in-process interposer between the kit's client and the target
        self.interposer_note: str | None = None
        self.url: str | None = options.catalog_url    # the catalog URL (the user's; the client may go via interposer)
        self.target: TargetConfig | None = None       # URL, prefix, auth, timeouts the client uses
        self.client: CatalogClient | None = None      # every request of the checks goes through it
        self.discovery: Discovery | None = None       # what /v1/config advertised (Idempotency-Key lifetime, ...)
        self.context: CheckContext | None = None      # what every check gets
        self.namespace: str | None = None    # the run namespace, levels joined by "." (parent levels first)
        self.namespace_parts: tuple[str, ...] = ()
        self.placement: Placement | None = None  # run namespace, nesting support, registered siblings
        self.namespace_created = False
        self.error: str | None = None        # set once the target is known to be unusable
        self.skip_reason: str | None = None  # the target cannot exist here (e.g. no Docker engine): skip, not fail
        self.container: ContainerTarget | None = None
        self.started = False
        self.cleanup_problems: list[str] = []
        self.leftovers: list[str] = []        # what the kit created and could not remove (reported at the end)
        self.server_info: dict[str, Any] = {}
        # work still running in the background (the lifetime batch): ended before the run namespace is dropped,
        # so that nothing is created in it after (an interrupted run leaves the batch's threads running)
        self.before_stop: list[Callable[[], None]] = []

    # -- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start (or connect to) the target, check it answers, discover, create the run namespace.
        Never raises: a problem is stored in `self.error` and each ctk test fails with it."""
        if self.started:
            return
        self.started = True
        try:
            with self._link_turn():     # the run namespace is made while no other process has a link fault armed
                self._start()
        except nsmod.NamespaceError as exc:
            self.error = self.error or f"run namespace not creatable: {exc}"
        except Exception as exc:  # noqa: BLE001 - reported to every test
            self.error = self.error or f"{type(exc).__name__}: {exc}"
        if self.error:
            self.error = self.public(self.error)

    def _link_turn(self) -> contextlib.AbstractContextManager[None]:
        """A shared turn on the catalog's database link (--ctk-db-link; ctk.interposer.linklock), else nothing."""
        lock = self._link_lock()
        return lock.shared() if lock is not None else contextlib.nullcontext()

    def _link_lock(self) -> LinkLock | None:
        """The turns on the catalog's database link (--ctk-db-link; ctk.interposer.linklock), None without one."""
        if not self.options.db_link:
            return None
        from ctk.interposer.linklock import LinkLock

        return LinkLock.for_url(self.options.db_link)

    def public(self, text: str) -> str:
        """``text`` with the internal interposer's URL replaced by the URL the user gave (or the embedded one)."""
        from urllib.parse import urlsplit

        inner = getattr(self.target, "url", None)
        if text and inner and self.url and inner != self.url:
            text = text.replace(inner, self.url)
            inner_host, user_host = urlsplit(inner).netloc, urlsplit(self.url).netloc
            if inner_host and user_host:
                text = text.replace(inner_host, user_host)
        return text

    def _start(self) -> None:
        o = self.options
        if self.url is None and o.catalog_image:
            from ctk.plugin.containers import ContainersUnavailable, ContainerTarget

            self.container = ContainerTarget(o.catalog_image)
            try:
                self.url = self.container.start().rstrip("/")
            except ContainersUnavailable as exc:
                self.skip_reason = f"unsupported: container mode for {o.catalog_image}: {exc}"
                self.container = None
                return
            self.server_info["container"] = o.catalog_image
        if self.url is None:
            # imported here: the embedded catalog pulls in starlette, uvicorn and sqlalchemy
            from ctk.reference.server import ReferenceServer
            from ctk.reference.settings import ReferenceSettings

            self.server = ReferenceServer(ReferenceSettings.from_env(**EMBEDDED_SETTINGS))
            self.url = self.server.start().rstrip("/")
            self.server_info["embedded"] = True
            self.server_info["settings"] = dict(EMBEDDED_SETTINGS)
        problem = probe(self.url, o.timeout, self._auth_headers(), credential=o.catalog_credential,
                        warehouse=o.warehouse, strict=True)
        if problem:
            self.error = problem
            return
        self.target = TargetConfig(
            url=self._through_interposer(self.url), prefix=o.catalog_prefix, warehouse=o.warehouse, token=o.catalog_token,
            credential=o.catalog_credential, headers=dict(o.catalog_headers), timeout=o.timeout,
            connect_timeout=min(o.timeout, 5.0), allow_remote=o.allow_remote or self.server is not None)
        client = CatalogClient(self.target)
        client.turns = self._link_lock()     # its requests (and its siblings') in turns on the database link
        self.client = client
        self.discovery = discover(client)
        self._place_run_namespace(client)
        self.context = self._make_context(client)

    def _place_run_namespace(self, client: CatalogClient) -> None:
        """Storage settings and the namespace separator on the client, then the run namespace (inside the
        parent namespace when given) and the probe of whether the target nests namespaces below it."""
        o = self.options
        client.storage_properties = dict(o.catalog_properties)
        client.storage_allow_remote = bool(o.allow_remote)
        sep = advertised_separator(self.discovery)
        used = client.set_namespace_separator(sep)
        if sep is not None:
            self.server_info["namespace-separator"] = used
        parent = tuple(o.parent_namespace)
        if parent:
            nsmod.check_parent(client, parent)
        parts = parent + (nsmod.run_namespace_name(o.namespace_prefix, self.run_id, self.worker),)
        self.namespace, self.namespace_parts = ".".join(parts), parts
        nsmod.create(client, parts, self.run_id)
        self.namespace_created = True
        if parent:
            nsmod.check_loadable(client, parts)
        probe = nsmod.probe_nesting(client, parts, self.run_id)
        self.placement = Placement(parts, probe.nested, probe.note, probe=probe)
        client.placement = self.placement
        self.leftovers += probe.leftovers          # reported with the cleanup problems at the end
        self.server_info["placement"] = {"run-namespace": self.namespace, "parent": ".".join(parent) or None,
                                         "nested-namespaces": probe.nested, "probe": probe.note}

    def _through_interposer(self, url: str) -> str:
        """Start an interposer (no toxics: a pass-through) in front of the target and return its URL, so
        that network faults can be injected on any target; the target URL itself when that is impossible."""
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        if parts.scheme != "http":
            self.interposer_note = f"{parts.scheme} target: the interposer relays plain HTTP only"
            return url
        if not parts.hostname:
            self.interposer_note = f"the target URL {url} names no host: no interposer in front of it"
            return url
        self.interposer = Interposer(upstream=(parts.hostname, parts.port or 80))
        host, port = self.interposer.start()
        self.server_info["interposer"] = f"{host}:{port} -> {parts.hostname}:{parts.port or 80}"
        return f"http://{host}:{port}{parts.path.rstrip('/')}"

    def _auth_headers(self) -> dict[str, str]:
        h = dict(self.options.catalog_headers)
        if self.options.catalog_token:
            h["Authorization"] = f"Bearer {self.options.catalog_token}"
        return h

    def _make_context(self, client: CatalogClient) -> CheckContext:
        """The CheckContext on the run namespace (created by the session, so not again here)."""
        options = CheckOptions(max_wait=self.options.max_wait, strict=self.options.strict,
                               capabilities=dict(self.options.capabilities))
        ctx = CheckContext.create(client, discovery=self.discovery, namespace=self.namespace_parts,
                                  interposer=self.interposer, options=options, create_namespace=False)
        probe = getattr(ctx.faults, "probe", None)
        if probe is not None:   # GET /_ctk as read (every try): what decided the injector, in the report
            self.server_info["control-api-probe"] = probe.to_dict()
        if self.options.db_link:   # the catalog's database link, on any catalog (ctk.checks.faults.DbLinkFaults)
            from ctk.checks.faults import DbLinkFaults
            from ctk.interposer.client import ProxyLink

            link = ProxyLink(self.options.db_link)
            try:
                link.check()
            except Exception as exc:  # noqa: BLE001 - API unreachable, no such proxy: the run cannot go on
                raise RuntimeError(f"--ctk-db-link {self.options.db_link}: the proxy is not there ({exc})") from None
            ctx.faults = DbLinkFaults(ctx.faults, link)
            self.server_info["db-link"] = self.options.db_link
        return ctx

    def stop(self) -> None:
        """Remove the run namespace (with everything inside) and stop the embedded catalog. Bounded. Once: the
        plugin stops the session before it writes the reports, the session fixture's teardown comes later."""
        if getattr(self, "_stopped", False):
            return
        self._stopped = True
        for end in self.before_stop:
            with contextlib.suppress(Exception):
                end()
        db = getattr(getattr(self.context, "faults", None), "db", None)
        disarm = getattr(db, "disarm_all", None)
        if self.options.db_link and callable(disarm):
            with contextlib.suppress(Exception):
                disarm()      # a fault an interrupted check armed on the link: gone before the cleanup
        turn = contextlib.ExitStack()
        turn.enter_context(self._link_turn())   # cleanup, too, while no other process has a link fault armed
        try:
            if self.server is not None and self.server.disposable:
                pass    # the embedded catalog is deleted whole below (its warehouse and database): no drop one by one
            elif self.namespace_created and self.client is not None and not self.error:
                self.cleanup_problems = self._drop_own()
            elif self.namespace_created and self.client is not None and self.url is not None:
                if probe(self.url, min(self.options.timeout, 5.0), self._auth_headers()) is None:
                    self.cleanup_problems = self._drop_own()
                else:
                    self.cleanup_problems = [f"run namespace {self.namespace} left behind: target unreachable"]
        except Exception as exc:  # noqa: BLE001
            self.cleanup_problems.append(f"cleanup failed: {type(exc).__name__}: {exc}")
        finally:
            turn.close()
            left = list(dict.fromkeys([*self.leftovers, *(self.placement.left if self.placement is not None else [])]))
            self.cleanup_problems = left + [p for p in self.cleanup_problems if p not in left]
            for closer in (getattr(self.context, "close", None), getattr(self.client, "close", None)):
                if callable(closer):
                    with contextlib.suppress(Exception):
                        closer()
            if self.container is not None:
                self.container.stop()
                self.container = None
            if self.interposer is not None:
                with contextlib.suppress(Exception):
                    self.interposer.stop()
                self.interposer = None
            if self.server is not None:
                try:
                    self.server.stop()
                    self.server.remove_temp_warehouse()
                finally:
                    self.server = None

    def _drop_own(self) -> list[str]:
        """Drop the run namespace with its content, then the siblings the kit registered (only those), within one
        budget of requests (a count, not a time: a loaded catalog is cleaned as far as a quiet one); what is still
        there after (read back) is a problem."""
        budget = nsmod.Budget(nsmod.CLEANUP_REQUESTS)
        problems: list[str] = []
        if self.placement is not None and self.placement.absents:
            # first what a lenient catalog stored in the namespaces the kit used as missing ones (listed nowhere;
            # they may also keep the run namespace from being dropped)
            problems += nsmod.drop_strays(self.client, self.namespace_parts, self.placement.absents, budget,
                                          self.placement.nested)
        problems += nsmod.drop_tree(self.client, list(self.namespace_parts), budget=budget)
        if self.placement is not None and self.placement.siblings:
            problems += nsmod.drop_siblings(self.client, list(self.placement.siblings), budget=budget)
        return problems

    def sweep(self, run_ids: list[str], remove: bool = True) -> tuple[list[str], list[str]]:
        """The xdist controller, once its workers ended (a URL target): remove what the run's processes left
        (``ctk.plugin.leftovers.sweep_run``) in a turn on the database link when there is one; (removed, problems).
        This session creates nothing: a client on the target, discovery for its prefix and separator."""
        from ctk.plugin.leftovers import sweep_run

        o = self.options
        if not o.catalog_url:
            return [], []
        target = TargetConfig(url=o.catalog_url, prefix=o.catalog_prefix, warehouse=o.warehouse, token=o.catalog_token,
                              credential=o.catalog_credential, headers=dict(o.catalog_headers), timeout=o.timeout,
                              connect_timeout=min(o.timeout, 5.0), allow_remote=o.allow_remote)
        try:
            with self._link_turn(), CatalogClient(target) as client:
                client.set_namespace_separator(advertised_separator(discover(client)))
                return sweep_run(client, o.namespace_prefix, tuple(o.parent_namespace), run_ids, remove=remove)
        except Exception as exc:  # noqa: BLE001 - said, not raised: the reports are still written
            return [], [f"what the run's workers left could not be looked for: {type(exc).__name__}: {exc}"]

    # -- health ----------------------------------------------------------------------------------------

    def require_healthy(self) -> None:
        if self.error:
            raise TargetUnavailable(self.error)

    def recheck(self) -> str | None:
        """After a check saw transport errors: is the target still there? Marks the session dead if not."""
        if self.error or not self.url:
            return self.error
        problem = probe(self.url, self.options.timeout, self._auth_headers())
        if problem:
            self.error = problem + " (the target stopped answering during the run)"
        return self.error


def worker_identity(config: pytest.Config) -> tuple[str, str]:
    """(run id, worker id): shared run id across xdist workers, worker id 'main' without xdist."""
    winput = getattr(config, "workerinput", None)
    if winput:
        run_id = str(winput.get("testrunuid") or os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex)[:8]
        return run_id, str(winput.get("workerid", "gw"))
    return uuid.uuid4().hex[:8], "main"


def wait_for(pred, timeout: float, interval: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(interval)
    return bool(pred())
