"""`Interposer`: the in-process interposer (a background thread running its own event loop)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from ctk.interposer import loops
from ctk.interposer.api import ApiServer, Registry
from ctk.interposer.http_toxics import HttpMatch
from ctk.interposer.listener import Proxy, check_loopback

CALL_TIMEOUT = 15.0


class Runtime:
    """An event loop in a daemon thread; `call(coro)` runs a coroutine there and returns its result."""

    def __init__(self, name: str = "ctk-interposer", loop: str | None = None):
        self.loop = loops.new_event_loop(loop)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = threading.Event()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        self.loop.run_forever()
        # drain what is left
        pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()

    def start(self) -> None:
        self._thread.start()
        if not self._started.wait(10):
            raise RuntimeError("interposer loop did not start")

    def call(self, coro, timeout: float = CALL_TIMEOUT) -> Any:
        if threading.current_thread() is self._thread:
            raise RuntimeError("Runtime.call from the loop thread would deadlock")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)


class Interposer:
    """A fault-injecting TCP/HTTP proxy in front of `upstream`, running in a background thread.

    >>> ip = Interposer(upstream=("127.0.0.1", 8181)); host, port = ip.start(); ...; ip.stop()
    """

    def __init__(
        self,
        upstream: tuple[str, int],
        *,
        listen: tuple[str, int] = ("127.0.0.1", 0),
        name: str = "ctk",
        api: tuple[str, int] | None = None,
        protocol: str = "auto",
        fast_path: bool = True,
        loop: str | None = None,
    ):
        check_loopback(listen[0])
        if api is not None:
            check_loopback(api[0])
        self.name = name
        self._upstream = (upstream[0], int(upstream[1]))
        self._listen = listen
        self._api_listen = api
        self._protocol = protocol
        self._fast_path = fast_path  # False: every HTTP connection takes the coroutine path (tests)
        self._loop_choice = loop  # "auto" / None: uvloop when installed (see loops.py), "asyncio", "uvloop"
        self.loop_name = loops.resolve(loop)
        self._runtime: Runtime | None = None
        self._registry: Registry | None = None
        self._api: ApiServer | None = None
        self._proxy: Proxy | None = None
        self._http_seq = 0
        self._taps: list[Any] = []  # the proxy's tap list (shared once started)

    # ----------------------------------------------------------- lifecycle
    def start(self) -> tuple[str, int]:
        if self._runtime is not None:
            return self.address
        rt = Runtime(loop=self.loop_name)
        rt.start()
        self._runtime = rt
        try:
            rt.call(self._astart())
        except BaseException:
            self.stop()
            raise
        return self.address

    async def _astart(self) -> None:
        self._registry = Registry()
        proxy = Proxy(self.name, self._listen, self._upstream, protocol=self._protocol, fast_path=self._fast_path)
        proxy.taps = self._taps
        await proxy.start()
        self._registry.proxies[self.name] = proxy
        self._proxy = proxy
        if self._api_listen is not None:
            self._api = ApiServer(self._registry, self._api_listen)
            await self._api.start()

    def add_tap(self, tap: Any) -> None:
        """Observe every HTTP exchange: ``tap(request, status, error)`` is called on the interposer's thread
        once per request (``request.method``, ``.target``, ``.began`` (time.monotonic() at its head)) when
        its answer went out (``status``: the upstream's), or with ``status`` None and ``error`` when the
        connection ended first. A tap must be quick and must not raise."""
        self._taps.append(tap)

    def stop(self) -> None:
        rt = self._runtime
        if rt is None:
            return
        try:
            rt.call(self._astop(), timeout=10)
        except Exception:
            pass
        rt.stop()
        self._runtime = None

    async def _astop(self) -> None:
        if self._api is not None:
            await self._api.stop()
        if self._registry is not None:
            await self._registry.close()

    def __enter__(self) -> Interposer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------- properties
    def _p(self) -> Proxy:
        if self._proxy is None or self._runtime is None:
            raise RuntimeError("interposer is not started")
        return self._proxy

    @property
    def address(self) -> tuple[str, int]:
        return self._p().listen

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def describe(self) -> str:
        """Where it listens (as `client.ProxyLink.describe` says it for a proxy driven through its API)."""
        return self.url

    @property
    def api_url(self) -> str | None:
        return self._api.url if self._api is not None else None

    @property
    def upstream(self) -> tuple[str, int]:
        return self._upstream

    def _call(self, fn, *args: Any) -> Any:
        async def run() -> Any:
            return fn(*args)

        assert self._runtime is not None
        return self._runtime.call(run())

    # ----------------------------------------------------------- toxics
    def add_toxic(
        self,
        name: str | None = None,
        type: str = "latency",
        stream: str = "downstream",
        attributes: dict[str, Any] | None = None,
        toxicity: float = 1.0,
    ) -> str:
        """Add a TCP toxic (or any toxic in its JSON form); returns its name. Raises ToxicError."""
        data = {"name": name, "type": type, "stream": stream, "toxicity": toxicity, "attributes": attributes or {}}
        return self._call(lambda: self._p().add_toxic(data).name)

    def add_http_toxic(
        self,
        type: str,
        match: HttpMatch | None = None,
        *,
        status: int = 503,
        delay_ms: int = 0,
        bytes: int = 0,
        times: int = 1,
        toxicity: float = 1.0,
        parallel: bool = False,
        copies: int = 1,
        hold_copy: bool = False,
        gather: int = 0,
        name: str | None = None,
    ) -> str:
        """Add an HTTP toxic applying to the first `times` matching requests (0 = all); returns its name."""
        from ctk.interposer.http_toxics import HTTP_TOXICS

        if type not in HTTP_TOXICS:
            from ctk.interposer.toxics import ToxicError

            raise ToxicError(f"invalid HTTP toxic type: {type!r} (known: {', '.join(HTTP_TOXICS)})")
        attrs: dict[str, Any] = dict((match or HttpMatch()).to_attributes())
        attrs["times"] = times
        own = {"status": status, "delay_ms": delay_ms, "bytes": bytes, "parallel": parallel, "copies": copies,
               "hold_copy": hold_copy, "gather": gather}
        for key in HTTP_TOXICS[type]:
            attrs[key] = own[key]
        if name is None:
            self._http_seq += 1
            name = f"{type}_{self._http_seq}"
        return self.add_toxic(name, type=type, stream="downstream", attributes=attrs, toxicity=toxicity)

    def update_toxic(self, name: str, attributes: dict[str, Any] | None = None, toxicity: float | None = None) -> None:
        data: dict[str, Any] = {"attributes": attributes or {}}
        if toxicity is not None:
            data["toxicity"] = toxicity
        self._call(lambda: self._p().update_toxic(name, data))

    def remove_toxic(self, name: str) -> None:
        self._call(lambda: self._p().remove_toxic(name))

    def toxics(self) -> list[dict[str, Any]]:
        return self._call(lambda: [t.to_json() for t in self._p().toxics])

    def set_enabled(self, enabled: bool) -> None:
        assert self._runtime is not None
        self._runtime.call(self._p().set_enabled(enabled))

    def disable(self) -> None:
        self.set_enabled(False)

    def enable(self) -> None:
        self.set_enabled(True)

    def reset(self) -> None:
        """Remove every toxic, enable the proxy and zero the counters and events."""

        async def run() -> None:
            p = self._p()
            p.clear_toxics()
            await p.set_enabled(True)
            p.counters.reset()
            p.events.clear()

        assert self._runtime is not None
        self._runtime.call(run())

    @property
    def counters(self) -> dict[str, Any]:
        """Snapshot: connections, requests, responses, passed, bytes each way, injected faults by kind,
        per-toxic matched/applied counts, statuses of duplicate requests."""
        return self._call(lambda: self._p().snapshot())

    def events(self) -> list[dict[str, Any]]:
        """The recent injected faults and errors, oldest first (bounded)."""
        return self._call(lambda: list(self._p().events))

    def events_of(self, toxic: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The events of one toxic (optionally of one kind), oldest first."""
        return self._call(lambda: [e for e in self._p().events
                                   if e.get("toxic") == toxic and (kind is None or e.get("kind") == kind)])
