"""Optional mode: start a catalog image (and a Toxiproxy container in front of it) with testcontainers.

Needs a Docker engine; where there is none (as on the kit's own CI machines) `docker_unavailable()` says why
and the callers skip with that reason. Ports are published on 127.0.0.1 only.

    with ContainerTarget("apache/iceberg-rest-fixture:1.10.0", port=8181, toxiproxy=True) as t:
        t.url           # http://127.0.0.1:<port>, through Toxiproxy when asked for
        t.toxiproxy     # an InterposerClient on the Toxiproxy API (standard toxics), or None
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

TOXIPROXY_IMAGE = "ghcr.io/shopify/toxiproxy:2.9.0"
TOXIPROXY_API_PORT = 8474
TOXIPROXY_PROXY_PORT = 8666


class ContainersUnavailable(RuntimeError):
    """No Docker engine (or no testcontainers): the container mode cannot run here."""


def docker_unavailable() -> str | None:
    """None when a Docker engine answers; otherwise the reason, in one line."""
    try:
        import docker  # testcontainers' dependency
    except ImportError:
        return "the docker/testcontainers packages are not installed (pip install 'iceberg-rest-ctk[containers]')"
    try:
        client = docker.from_env(timeout=3)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # noqa: BLE001 - any failure means: no engine to talk to
        return f"no Docker engine answers ({type(exc).__name__}: {str(exc)[:160]})"
    return None


class ContainerTarget:
    def __init__(self, image: str, port: int = 8181, env: dict[str, str] | None = None, toxiproxy: bool = False,
                 start_timeout: float = 120.0):
        self.image, self.port, self.env, self.with_toxiproxy = image, port, dict(env or {}), toxiproxy
        self.start_timeout = start_timeout
        self.url: str | None = None
        self.toxiproxy: Any = None
        self._containers: list[Any] = []
        self._network: Any = None

    def start(self) -> str:
        reason = docker_unavailable()
        if reason:
            raise ContainersUnavailable(reason)
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.network import Network

        self._network = Network().create()
        catalog = DockerContainer(self.image).with_exposed_ports(self.port).with_network(self._network) \
            .with_network_aliases("catalog")
        for k, v in self.env.items():
            catalog = catalog.with_env(k, v)
        catalog.start()
        self._containers.append(catalog)
        if self.with_toxiproxy:
            proxy = DockerContainer(TOXIPROXY_IMAGE).with_exposed_ports(TOXIPROXY_API_PORT, TOXIPROXY_PROXY_PORT) \
                .with_network(self._network)
            proxy.start()
            self._containers.append(proxy)
            from ctk.interposer import InterposerClient

            api = f"http://127.0.0.1:{proxy.get_exposed_port(TOXIPROXY_API_PORT)}"
            self.toxiproxy = InterposerClient(api)
            self.toxiproxy.create_proxy("catalog", listen=f"0.0.0.0:{TOXIPROXY_PROXY_PORT}",
                                        upstream=f"catalog:{self.port}")
            self.url = f"http://127.0.0.1:{proxy.get_exposed_port(TOXIPROXY_PROXY_PORT)}"
        else:
            self.url = f"http://127.0.0.1:{catalog.get_exposed_port(self.port)}"
        self._wait_ready()
        return self.url

    def _wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + self.start_timeout
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/v1/config", timeout=2.0).status_code < 500:
                    return
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            time.sleep(0.5)
        self.stop()
        raise ContainersUnavailable(f"{self.image} did not answer GET /v1/config within {self.start_timeout:g} s "
                                    f"({last})")

    def stop(self) -> None:
        for c in reversed(self._containers):
            with contextlib.suppress(Exception):    # best effort
                c.stop()
        self._containers.clear()
        if self._network is not None:
            with contextlib.suppress(Exception):
                self._network.remove()
            self._network = None

    def __enter__(self) -> "ContainerTarget":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
