"""`TemporaryPostgres`: a throwaway PostgreSQL cluster from Debian's packages, for tests.

    with TemporaryPostgres() as url:          # postgresql+psycopg://postgres@127.0.0.1:PORT/postgres
        engine = sqlalchemy.create_engine(url)

initdb runs into a temporary directory (as the `postgres` user via runuser/su when we are root; PostgreSQL
refuses to run as root), listens on 127.0.0.1 on a free port with its unix socket in that directory, trust
authentication. `stop()` (or leaving the block) stops the server and removes the directory.
Raises `PostgresUnavailable` with a reason when PostgreSQL cannot be found or started.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


class PostgresUnavailable(RuntimeError):
    pass


def find_bindir() -> Path | None:
    env = os.environ.get("CTK_PG_BINDIR")
    if env and (Path(env) / "initdb").exists():
        return Path(env)
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
        reverse=True,
    )
    if candidates:
        return Path(candidates[0]).parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TemporaryPostgres:
    def __init__(self, *, user: str = "postgres", database: str = "postgres", start_timeout: float = 60.0):
        self.user = user
        self.database = database
        self.start_timeout = start_timeout
        self.bindir: Path | None = None
        self.tmp: Path | None = None
        self.port: int | None = None
        self.host = "127.0.0.1"
        self._as_user: list[str] = []
        self._running = False

    # ------------------------------------------------------------------ api
    @property
    def url(self) -> str:
        """SQLAlchemy URL (psycopg 3 driver)."""
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{self.database}"

    @property
    def dsn(self) -> str:
        """libpq connection string for psycopg.connect()."""
        return f"host={self.host} port={self.port} user={self.user} dbname={self.database} connect_timeout=10"

    def url_via(self, host: str, port: int) -> str:
        """The same database reached through another address (e.g. an interposer)."""
        return f"postgresql+psycopg://{self.user}@{host}:{port}/{self.database}"

    def dsn_via(self, host: str, port: int, **extra: object) -> str:
        base = f"host={host} port={port} user={self.user} dbname={self.database} connect_timeout=10"
        return base + "".join(f" {k}={v}" for k, v in extra.items())

    def __enter__(self) -> str:
        self.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ work
    def _run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        cmd = self._as_user + [shlex.join(argv)] if self._as_user and self._as_user[0] == "su" else self._as_user + argv
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(self.tmp))

    def start(self) -> None:
        self.bindir = find_bindir()
        if self.bindir is None:
            raise PostgresUnavailable("PostgreSQL server binaries (initdb) not found; apt-get install -y postgresql")
        self.tmp = Path(tempfile.mkdtemp(prefix="ctk-pg-"))
        if os.geteuid() == 0:
            try:
                import pwd

                pw = pwd.getpwnam("postgres")
            except KeyError:
                self._cleanup()
                raise PostgresUnavailable("running as root and there is no 'postgres' user to run the server")
            os.chown(self.tmp, pw.pw_uid, pw.pw_gid)
            if shutil.which("runuser"):
                self._as_user = ["runuser", "-u", "postgres", "--"]
            elif shutil.which("su"):
                self._as_user = ["su", "postgres", "-s", "/bin/sh", "-c"]
            else:
                self._cleanup()
                raise PostgresUnavailable("running as root and neither runuser nor su is available")
        data = self.tmp / "data"
        try:
            r = self._run(
                [str(self.bindir / "initdb"), "-D", str(data), "-U", self.user, "--auth=trust", "-E", "UTF8",
                 "--no-sync", "--no-instructions"],
                timeout=120,
            )
            if r.returncode != 0:
                raise PostgresUnavailable(f"initdb failed: {(r.stderr or r.stdout).strip()[-500:]}")
            last = ""
            for _attempt in range(3):
                self.port = _free_port()
                opts = (f"-p {self.port} -k {self.tmp} -c listen_addresses=127.0.0.1 -c fsync=off "
                        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50")
                r = self._run(
                    [str(self.bindir / "pg_ctl"), "-D", str(data), "-l", str(self.tmp / "server.log"), "-o", opts,
                     "-w", "-t", str(int(self.start_timeout)), "start"],
                    timeout=self.start_timeout + 15,
                )
                if r.returncode == 0:
                    self._running = True
                    break
                last = (r.stderr or r.stdout).strip() + self._log_tail()
            if not self._running:
                raise PostgresUnavailable(f"PostgreSQL did not start: {last[-800:]}")
            self._wait_ready()
        except subprocess.TimeoutExpired as exc:
            self.stop()
            raise PostgresUnavailable(f"PostgreSQL tooling timed out: {exc}") from None
        except PostgresUnavailable:
            self.stop()
            raise

    def _log_tail(self) -> str:
        try:
            return "\n" + (self.tmp / "server.log").read_text(errors="replace")[-500:]  # type: ignore[operator]
        except OSError:
            return ""

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((self.host, self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise PostgresUnavailable("PostgreSQL started but does not accept TCP connections")

    def stop(self) -> None:
        if self._running and self.bindir is not None and self.tmp is not None:
            try:
                self._run([str(self.bindir / "pg_ctl"), "-D", str(self.tmp / "data"), "-m", "immediate", "-w",
                           "-t", "30", "stop"], timeout=45)
            except subprocess.TimeoutExpired:
                pass
            self._running = False
        self._cleanup()

    def _cleanup(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
