"""A third-party catalog takes port numbers: when a port picked for it was taken before it bound it, the lane
starts it again on another port (bounded) instead of failing the lane."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from interop import catalogs

# an HTTP server on the port given as argv[1] (a program that takes a port number and says nothing of it)
SERVER = ("import http.server, sys\n"
          "http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), http.server.SimpleHTTPRequestHandler)"
          ".serve_forever()\n")


class Fake(catalogs.Catalog):
    name = "fake"

    def _start(self, deadline_s: float) -> None:
        port = catalogs.free_port()
        self.url = f"http://127.0.0.1:{port}"
        process = catalogs.start_process("fake-server", [sys.executable, "-c", SERVER, str(port)],
                                         {"PATH": os.environ.get("PATH", "")}, self.workdir)
        self.processes.append(process)
        catalogs.wait_ready(process, self.url + "/", deadline_s, lambda status: status == 200)


@pytest.fixture
def busy_first(monkeypatch):
    """free_port hands out a port another process holds, ``times`` times, then free ones."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))        # bound, not listening: a probe of it is refused at once
    handed = []

    def arm(times: int) -> list[int]:
        real = catalogs.free_port

        def free_port(also_plus: int = 0) -> int:
            handed.append(busy.getsockname()[1] if len(handed) < times else real(also_plus))
            return handed[-1]

        monkeypatch.setattr(catalogs, "free_port", free_port)
        return handed

    yield arm
    busy.close()


def test_a_taken_port_is_started_again_on_another(tmp_path, busy_first):
    handed = busy_first(1)
    catalog = Fake(tmp_path, tmp_path)
    try:
        catalog.start(60)
        assert catalogs.http("GET", catalog.url + "/")[0] == 200
        assert len(handed) == 2 and catalog.url.endswith(f":{handed[1]}")
        assert len(catalog.processes) == 1 and catalog.processes[0].alive()
    finally:
        catalog.stop()


def test_attempts_are_bounded_and_the_last_failure_says_why(tmp_path, busy_first):
    handed = busy_first(99)
    catalog = Fake(tmp_path, tmp_path)
    with pytest.raises(catalogs.CatalogFailed, match="Address already in use"):
        catalog.start(60)
    assert len(handed) == Fake.START_ATTEMPTS
    catalog.stop()


def test_seaweedfs_ports_never_meet_another_components_grpc_port():
    """weed mini puts each component's gRPC port 10000 above its HTTP port and refuses a port that is another
    component's gRPC port ("reserved for gRPC calculation"): the ports picked for it, their +10000 partners and
    the Iceberg port are all distinct numbers (one such clash failed the lane once)."""
    for _ in range(200):
        ports = catalogs.free_ports(5, also_plus=10000, singles=1)
        numbers = ports + [p + 10000 for p in ports[:5]]
        assert len(set(numbers)) == len(numbers), ports
        assert all(p + 10000 <= 65535 for p in ports[:5])
