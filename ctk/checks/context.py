"""What every check gets: `CheckContext` (client, discovery, run namespace, fault injector, options)."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from ctk.checks.faults import DbLinkFaults, FaultInjector, NoFaults, detect_injector
from ctk.client.transport import CatalogClient
from ctk.catalog import Catalog
from ctk.catalog.capabilities import Capabilities, Capability
from ctk.client.discovery import Discovery, discover

if TYPE_CHECKING:  # pragma: no cover
    from ctk.interposer import Interposer


# The libraries the checks import lazily, from threads of their own (the lifetime batch, bursts, workloads).
# pyiceberg.table and pyiceberg.table.update import each other: two threads importing them for the first time at
# once can get "cannot import name ... from partially initialized module" (a crash seen in one of four runs under
# load), so they are imported once here, in the thread that makes the context, before any check runs.
PRELOADED = ("pyarrow", "pyiceberg.table", "pyiceberg.table.update", "pyiceberg.table.metadata",
             "pyiceberg.io.pyarrow", "pyiceberg.catalog.noop")


def preload_libraries() -> None:
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)


@dataclass
class CheckOptions:
    max_wait: float = 60.0            # longest a check may wait on purpose (e.g. LIFE-01), seconds
    strict: bool = False              # deviations count as failures (the plugin applies it)
    inflight_hold: float = 1.0        # seconds the first request is held in flight for INFLIGHT-* (the duplicate goes once it is held)
    lose_modes: tuple[str, ...] = ("503", "500", "reset")
    assume_support: bool = False      # run key checks even when the target does not advertise a lifetime
    capabilities: dict[Capability, bool] = field(default_factory=dict)   # declared by --ctk-capability


@dataclass
class CheckContext:
    """A check's view of the target (it is an `ctk.catalog.CaseContext`): every request goes through
    ``client`` (the catalog URL, prefix, auth and the Idempotency-Key header name it sends), ``discovery`` says
    what /v1/config advertised (None: not read)."""

    client: CatalogClient
    discovery: Discovery | None
    namespace: tuple[str, ...]                    # run namespace; cases create their resources under it
    faults: FaultInjector = field(default_factory=NoFaults)
    options: CheckOptions = field(default_factory=CheckOptions)
    capabilities: Capabilities = field(default_factory=Capabilities)   # what the catalog supports, as learnt
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1), repr=False)

    def unique(self, stem: str) -> str:
        """A fresh lower-case identifier for a case's resource."""
        return f"{stem}_{next(self._counter)}_{uuid.uuid4().hex[:6]}"

    @property
    def idempotency_supported(self) -> bool:
        return bool(self.options.assume_support or (self.discovery is not None
                                                    and self.discovery.idempotency_supported))

    @property
    def db_link_faults(self) -> DbLinkFaults | None:
        """The injector as the catalog's database link (``--ctk-db-link``: `DbLinkFaults`), None when this run
        has no such link; the checks that fail, hold or cut the database reach the link only through this."""
        return self.faults if isinstance(self.faults, DbLinkFaults) else None

    @property
    def catalog(self) -> Catalog:
        return Catalog(self.client)

    @classmethod
    def bind(cls, client: CatalogClient, discovery: Discovery | None, namespace: tuple[str, ...],
             faults: FaultInjector, options: CheckOptions) -> "CheckContext":
        """The context of `client` and `faults`, the one place a client is bound to its injector: its requests
        carry what the injector's rules and counters select them by (the control API's scope header). The
        headers belong to this client, not to its target (siblings on the same target keep their own); a client
        already bound to another scope is refused, since re-binding it would make the first context's counters
        read zero (a check passing on no evidence)."""
        wanted = faults.request_headers()
        clash = {k: v for k, v in client.bound_headers.items() if k in wanted and wanted[k] != v}
        if clash:
            raise ValueError(f"this client is bound to another check context ({clash}); give each context its own "
                             "client (client.sibling())")
        client.bound_headers.update(wanted)
        return cls(client, discovery, tuple(namespace), faults, options,
                   capabilities=Capabilities(declared=dict(options.capabilities)))

    @classmethod
    def create(cls, client: CatalogClient, discovery: Discovery | None = None, namespace: tuple[str, ...] | None = None,
               interposer: "Interposer | None" = None, faults: FaultInjector | None = None,
               options: CheckOptions | None = None, create_namespace: bool = True) -> "CheckContext":
        """Discover (when not given), pick the fault injector (and put the headers it needs on the client's
        requests), create the run namespace."""
        preload_libraries()
        if discovery is None:
            discovery = discover(client)
        ns = tuple(namespace) if namespace else (f"ctk_{uuid.uuid4().hex[:10]}",)
        if faults is None:
            faults = detect_injector(client, interposer, scope=".".join(ns))
        ctx = cls.bind(client, discovery, ns, faults, options or CheckOptions())
        if create_namespace:
            Catalog(client).create_namespace(ns)
        return ctx
