"""Serving the reference catalog: ReferenceServer (uvicorn in a background thread) and `ctk serve`."""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import signal
import socket
import sys
import threading
import time

import uvicorn
from starlette.applications import Starlette

from ctk.reference.app import create_app
from ctk.reference.settings import ReferenceSettings


def check_loopback(host: str) -> None:
    from ctk.client.config import is_loopback_host

    if is_loopback_host(host):
        return
    raise ValueError(f"the reference catalog only listens on loopback addresses, not {host!r}")


class ReferenceServer:
    """`with ReferenceServer(settings) as srv: srv.url` - uvicorn in a daemon thread on 127.0.0.1."""

    def __init__(self, settings: ReferenceSettings | None = None, start_timeout: float = 30.0):
        self.settings = settings or ReferenceSettings()
        check_loopback(self.settings.host)
        self.start_timeout = start_timeout
        self.app: Starlette | None = None
        self.url: str | None = None
        self._sock: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        if self.url:
            return self.url
        self.app = app = create_app(self.settings)
        family = socket.AF_INET6 if ":" in self.settings.host else socket.AF_INET
        # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on such sockets, and without it every
        # response waits ~40 ms for the client's delayed ACK (Nagle).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.settings.host, self.settings.port))
        except OSError:
            sock.close()
            raise
        port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False,
                                timeout_graceful_shutdown=5, limit_concurrency=256)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name=f"ctk-reference-{port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._server.should_exit = True
                sock.close()
                raise RuntimeError("the reference catalog did not start")
            time.sleep(0.02)
        host = "[::1]" if family == socket.AF_INET6 else "127.0.0.1"
        self.url = f"http://{host}:{port}"
        self._sock = sock
        return self.url

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._server, self._thread, self.url = None, None, None

    @property
    def disposable(self) -> bool:
        """The whole catalog (metadata files and its SQLite database) lives in the temporary warehouse that
        `remove_temp_warehouse` deletes: nothing of it outlives the server."""
        return not self.settings.warehouse and not self.settings.database_url

    def remove_temp_warehouse(self) -> None:
        """Remove the temporary warehouse the catalog made for itself (none was given); call after stop()."""
        path = None if self.settings.warehouse else self.settings.extra.pop("warehouse_dir", None)
        if path and os.path.basename(path).startswith("ctk-ref-"):
            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> "ReferenceServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help="loopback address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default 0: a free one)")
    parser.add_argument("--warehouse", default=None, help="directory for metadata files (default: a temp dir)")
    parser.add_argument("--database-url", default=None, help="SQLAlchemy URL (default: SQLite in the warehouse)")
    parser.add_argument("--prefix", default=None, help="catalog prefix advertised in /v1/config")
    parser.add_argument("--lifetime", default=None,
                        help="Idempotency-Key lifetime, ISO-8601 (default PT30M; 'none': not advertised)")
    parser.add_argument("--grace", default=None, help="grace period after the lifetime (default PT5M)")
    parser.add_argument("--in-flight", choices=("reject", "wait"), default=None,
                        help="in-flight duplicates: 409 (reject) or wait and replay")
    from ctk.reference.deviations import PROFILES

    parser.add_argument("--deviation", default=None, choices=list(PROFILES), metavar="NAME",
                        help=f"deviation profile: breaks one rule, so a check can be shown to fail "
                             f"({len(PROFILES)} profiles, listed below)")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "deviation profiles (--deviation NAME):\n" + "\n".join(
        f"  {p.name:<28} {p.breaks}" for p in PROFILES.values())
    from ctk.reference.variants import help_text, variant_name

    parser.add_argument("--variant", default=None, type=variant_name, metavar="NAME[+NAME]",
                        help="allowed-variant profile: another path the spec allows, or several joined by '+' ("
                             + help_text() + ")")
    parser.add_argument("--control-api", action="store_true", default=None, help="enable /_ctk test hooks")
    parser.add_argument("--token", default=None, help="require Authorization: Bearer <token>")
    parser.add_argument("--planning-mode", choices=("sync", "async"), default=None,
                        help="planTableScan answers completed plans (sync, default) or submitted ones (async)")
    parser.add_argument("--plan-task-size", type=int, default=None,
                        help="file scan tasks per plan task handed out by fetchScanTasks (0: all inline; default 1)")
    parser.add_argument("--db-statement-retries", type=int, default=None, metavar="N",
                        help="a statement that failed on a lost database connection is silently run again on a "
                             "fresh connection, its transaction replayed first, up to N times (as some JDBC pools "
                             "do; with --database-url; default 0)")
    parser.add_argument("--request-spec", default=None, metavar="PATH",
                        help="an OpenAPI document (e.g. the merged Iceberg REST one) whose request schemas every "
                             "request body must match too, besides the kit's own; a body either forbids is "
                             "answered 400 BadRequestException")


def settings_from_args(args: argparse.Namespace) -> ReferenceSettings:
    lifetime = getattr(args, "lifetime", None)
    disable = lifetime is not None and lifetime.lower() in ("none", "")
    settings = ReferenceSettings.from_env(
        host=args.host, port=args.port, warehouse=args.warehouse, database_url=args.database_url,
        prefix=args.prefix, idempotency_lifetime=None if disable else lifetime, idempotency_grace=args.grace,
        in_flight=args.in_flight, deviation=args.deviation, variant=getattr(args, "variant", None),
        control_api=args.control_api, token=args.token,
        planning_mode=getattr(args, "planning_mode", None), plan_task_size=getattr(args, "plan_task_size", None),
        db_statement_retries=getattr(args, "db_statement_retries", None),
        request_spec=getattr(args, "request_spec", None))
    if disable:
        settings.idempotency_lifetime = None
    return settings


def run(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
        server = ReferenceServer(settings)
    except ValueError as exc:
        print(f"ctk serve: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            url = server.start()
        except OSError as exc:
            where = f"{settings.host}:{settings.port}"
            why = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
            print(f"ctk serve: cannot listen on {where}: {why}", file=sys.stderr)
            return 1
        print(url, flush=True)
        print(f"warehouse: {settings.warehouse or settings.extra.get('warehouse_dir')}", file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            if server._thread is None or not server._thread.is_alive():
                print("ctk serve: the server stopped unexpectedly", file=sys.stderr)
                return 1
    finally:
        server.stop()
        server.remove_temp_warehouse()
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 0
