"""Server processes the kit's own tests (and bench/) start, without port races.

A port found free (bound to 0, closed again) and then handed to a program we start can be taken by another
process in between: other engineers' test runs, pytest-xdist workers, the catalogs and interposers of other
tests. So a test does not pick ports for its servers:

* ``start(argv, announce=...)`` - a program that binds port 0 itself and says where it listens; its output is
  read until each named pattern has matched a line. ``serve()`` (`ctk serve --port 0` prints its URL as its
  first line on stdout) and ``interposer()`` (`ctk interposer --listen 127.0.0.1:0 --api 127.0.0.1:0` prints
  ``interposer NAME: HOST:PORT -> ...`` and ``control API: http://HOST:PORT``) are the kit's own.
* ``start_on_free_port(argv_for, ...)`` - a program that takes only a port number and cannot say which port it
  got (toxiproxy-server, third-party catalogs): a port is picked, the program started, and when it exits
  saying the address is in use, started again on another port, at most ``attempts`` times. It is ready once
  it listens on the port itself (``listening``: its own socket in /proc), so a server of another test that took
  the port can never pass for it.
* ``closed_port()`` - for a port that must only have nothing listening on it (a dead target): no process of
  ours is started on it, so there is nothing to race with; see its docstring.

tests/ is on sys.path (tests/conftest.py is not in a package), so tests import this as ``procs``; bench/ scripts
put tests/ on sys.path first.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from typing import Callable, Mapping

CTK = (sys.executable, "-m", "ctk")
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
# "the port is in use": ctk serve; "port N for Master (...) is not available": SeaweedFS weed mini
PORT_TAKEN = re.compile(r"address already in use|the port is in use|EADDRINUSE|Errno 98|port \d+ .*is not available",
                        re.I)
SERVE_URL = r"^(?P<url>http://\S+:\d+)$"
INTERPOSER_PROXY = r"^interposer (?P<name>\S+): (?P<host>\S+):(?P<port>\d+) -> "
INTERPOSER_API = r"^control API: (?P<url>http://\S+:\d+)$"


class StartFailed(RuntimeError):
    """The program exited (or did not get ready in time) before it was ready; ``output`` is what it printed."""

    def __init__(self, message: str, output: str, returncode: int | None):
        super().__init__(f"{message}\n--- output ---\n{output[-3000:]}")
        self.output, self.returncode = output, returncode

    @property
    def port_taken(self) -> bool:
        """Whether it says its address was in use (another process took the port)."""
        return bool(PORT_TAKEN.search(self.output))


class Started:
    """A started program, its stdout and stderr read (merged) by a thread so that it never blocks on a full
    pipe; ``found`` holds the announcement matches by name."""

    def __init__(self, argv: list[str], env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None):
        self.argv = list(argv)
        self.popen = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, text=True, errors="replace",
                                      env=None if env is None else dict(env), cwd=cwd)
        self.lines: list[str] = []
        self.found: dict[str, re.Match] = {}
        self._changed = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, name=f"output of {os.path.basename(argv[0])}",
                                        daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.popen.pid

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def output(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def _failed(self, why: str) -> StartFailed:
        self.stop()
        return StartFailed(f"{' '.join(self.argv)}: {why}", self.output(), self.popen.returncode)

    def wait_announced(self, announce: Mapping[str, str], timeout: float) -> dict[str, re.Match]:
        """Wait until each pattern of ``announce`` (name -> regex) matched a line of output; the matches."""
        patterns = {name: re.compile(rx) for name, rx in announce.items()}
        deadline = time.monotonic() + timeout
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    for name, rx in patterns.items():
                        if name not in self.found and (m := rx.search(line)):
                            self.found[name] = m
                seen = len(self.lines)
                if all(name in self.found for name in patterns):
                    return self.found
                left = deadline - time.monotonic()
                if self._eof or left <= 0:
                    break
                self._changed.wait(min(left, 1.0))
        missing = sorted(set(patterns) - set(self.found))
        if self._eof:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(STOP_GRACE_S)
            raise self._failed(f"exited with {self.popen.returncode} before announcing {missing}")
        raise self._failed(f"did not announce {missing} within {timeout:.0f} s")

    def wait_ready(self, ready: Callable[[], bool], timeout: float) -> None:
        """Poll ``ready()`` (an exception counts as not ready) until it is true; fail if the program exits."""
        deadline = time.monotonic() + timeout
        while True:
            if self.popen.poll() is not None:
                self._reader.join(5)
                raise self._failed(f"exited with {self.popen.returncode} before it was ready")
            try:
                if ready():
                    return
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if time.monotonic() > deadline:
                raise self._failed(f"not ready within {timeout:.0f} s")
            time.sleep(0.05)

    def stop(self, grace: float = STOP_GRACE_S) -> int | None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; the exit code."""
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self._reader.join(5)
        return self.popen.returncode

    def __enter__(self) -> "Started":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start(argv: list[str], announce: Mapping[str, str], timeout: float = START_TIMEOUT_S,
          env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None) -> Started:
    """Start ``argv`` and wait for its announcements (name -> regex over its output lines): ``started.found``."""
    started = Started(argv, env, cwd)
    started.wait_announced(announce, timeout)
    return started


def serve(*args: str, command: tuple[str, ...] = CTK, **kw) -> Started:
    """`ctk serve --port 0 ARGS` once it answers (it prints its URL when it is up): ``.url``."""
    started = start([*command, "serve", "--port", "0", *args], {"url": SERVE_URL}, **kw)
    started.url = started.found["url"]["url"]  # type: ignore[attr-defined]
    return started


def interposer(upstream: str | None, *args: str, api: bool = True, command: tuple[str, ...] = CTK, **kw) -> Started:
    """`ctk interposer --listen 127.0.0.1:0 --upstream UPSTREAM [--api 127.0.0.1:0 | --api none] ARGS` once both
    listen: ``.listen`` (host, port) of the proxy (None without ``upstream``), ``.api_url`` (None without api)."""
    argv = [*command, "interposer", "--api", "127.0.0.1:0" if api else "none"]
    announce = {"api": INTERPOSER_API} if api else {}
    if upstream is not None:
        argv += ["--listen", "127.0.0.1:0", "--upstream", upstream]
        announce["proxy"] = INTERPOSER_PROXY
    started = start([*argv, *args], announce, **kw)
    proxy = started.found.get("proxy")
    started.listen = (proxy["host"], int(proxy["port"])) if proxy else None  # type: ignore[attr-defined]
    started.api_url = started.found["api"]["url"] if api else None  # type: ignore[attr-defined]
    return started



def serve_over_db_link(pg, warehouse: str, started: list[Started]) -> tuple[Started, str]:
    """`ctk serve` on PostgreSQL ``pg`` through an interposer on its database link (lifetime PT60S): (the catalog,
    the link's control URL for ``--ctk-db-link``); both are appended to ``started`` as they start, to be stopped."""
    db = interposer(f"{pg.host}:{pg.port}", "--name", "catalog-db", "--protocol", "tcp")
    started.append(db)
    catalog = serve("--warehouse", warehouse, "--database-url", pg.url_via(*db.listen), "--lifetime", "PT60S")
    started.append(catalog)
    return catalog, f"{db.api_url}/proxies/catalog-db"

def closed_port() -> int:
    """A loopback port nothing listens on: bound to 0 and closed again. Only for a target that must be dead (a
    refused connection): nothing of ours is started on it, so no start can lose it to another process. Another
    process could still bind it meanwhile; the kernel hands out ports for bind(0) spread over its whole
    ephemeral range, so that is unlikely in the seconds a test uses it - never use it for a server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _socket_inodes(pid: int) -> set[str]:
    out = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    out.add(target[8:-1])
    return out


def listening(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself has a TCP socket listening on ``port`` (Linux /proc)."""
    inodes = _socket_inodes(pid)
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            next(f, None)
            for row in f:
                cols = row.split()
                # local address HEX:PORT, state 0A = LISTEN, inode in column 10
                if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port \
                        and cols[9] in inodes:
                    return True
    return False


def start_on_free_port(argv_for: Callable[[int], list[str]], ready: Callable[[int], bool] | None = None,
                       attempts: int = 3, timeout: float = START_TIMEOUT_S, env: Mapping[str, str] | None = None,
                       cwd: str | os.PathLike | None = None) -> tuple[Started, int]:
    """(started, port) of ``argv_for(port)``, a program that takes a port number and says nothing of it: ready
    once it listens on the port itself and ``ready(port)`` (when given) holds; started again on another port
    when it exits saying the address was in use, at most ``attempts`` times."""
    last: StartFailed | None = None
    for _ in range(attempts):
        port = closed_port()
        started = Started(argv_for(port), env, cwd)
        try:
            started.wait_ready(lambda: listening(started.pid, port) and (ready is None or ready(port)), timeout)
            return started, port
        except StartFailed as exc:
            if not exc.port_taken:
                raise
            last = exc
    assert last is not None
    raise last
