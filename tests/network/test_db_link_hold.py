"""A database link fault that outlasts a pool's retry (issue 19, item 3).

A catalog whose database pool runs a statement that failed on a lost connection again on a fresh one
(`ReferenceSettings.db_statement_retries`, like some JDBC pools) absorbs the kit's single cut write: the first
attempt gets 200 and REPLAY-03 through the link used to stay undecided ("the first attempt got 200"). The
``fail_write_hold`` link fault keeps the link down from the cut write until the catalog answered, so the
catalog answers its real 5xx and REPLAY-03 is decided; a catalog that stores that 5xx is caught."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from ctk.interposer import Interposer
from ctk.interposer.faults import LinkFaults


class _Echo:
    """A loopback TCP server that echoes every chunk (a stand-in for a database: bytes in, bytes out)."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = self.sock.getsockname()
        self.stop_flag = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        self.sock.settimeout(0.2)
        while not self.stop_flag.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn):
        with conn:
            while True:
                try:
                    data = conn.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                conn.sendall(data)

    def close(self):
        self.stop_flag.set()
        self.sock.close()


def _talk(address, data: bytes) -> bytes | None:
    """Send `data` on a new connection; the echo, or None when the connection was refused or cut."""
    try:
        with socket.create_connection(address, timeout=5) as c:
            c.sendall(data)
            got = c.recv(4096)
            return got or None
    except OSError:
        return None


def test_fail_write_hold_keeps_the_link_down_until_restored():
    echo = _Echo()
    try:
        with Interposer(upstream=echo.address) as ip:
            address = ip.address
            link = LinkFaults(ip)
            assert _talk(address, b"SELECT 1") == b"SELECT 1"
            once = link.db_fail("fail_write")
            assert _talk(address, b"INSERT INTO t") is None          # the write is cut...
            assert _talk(address, b"INSERT INTO t") == b"INSERT INTO t"   # ...once: a retry gets through
            link.db_restore(once)
            held = link.db_fail("fail_write_hold")
            assert _talk(address, b"SELECT 1") == b"SELECT 1"        # reads pass until a write is cut
            assert _talk(address, b"INSERT INTO t") is None
            assert link.went_down(held)
            assert _talk(address, b"INSERT INTO t") is None          # a fresh connection meets the broken link
            assert _talk(address, b"SELECT 1") is None
            link.db_restore(held)                                    # the catalog answered: the link is back
            assert _talk(address, b"INSERT INTO t") == b"INSERT INTO t"
            assert ip.counters["injected"].get("proxy_disabled") == 1
    finally:
        echo.close()


def test_bad_link_mode_names_the_modes():
    with pytest.raises(ValueError, match="fail_write_hold"):
        LinkFaults(object()).db_fail("sometimes")


# ------------------------------------------------------------------------------------------------ PostgreSQL

def _stack(pg, tmp_path, **settings):
    """PostgreSQL <- interposer (TCP) <- reference catalog (no control API) <- interposer (HTTP) <- kit."""
    from ctk.checks.context import CheckContext
    from ctk.checks.faults import DbLinkFaults
    from ctk.client.config import TargetConfig
    from ctk.client.transport import CatalogClient
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    db = Interposer(upstream=(pg.host, pg.port))
    db.start()
    db.describe = lambda: "in-process interposer"
    srv = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "wh"), database_url=pg.url_via(*db.address),
                                            idempotency_lifetime="PT60S", **settings))
    srv.start()
    host, port = srv.url.rsplit("//", 1)[1].split(":")
    ip = Interposer(upstream=(host, int(port)))
    ip.start()
    client = CatalogClient(TargetConfig(ip.url, timeout=30.0))
    ctx = CheckContext.create(client, interposer=ip)
    ctx.faults = DbLinkFaults(ctx.faults, db)

    def stop():
        client.close()
        ip.stop()
        srv.stop()
        db.stop()
    return ctx, srv, stop


def _replay03(ctx):
    from ctk.catalog import ENDPOINTS
    from ctk.checks.idempotency import check_5xx_not_stored

    [v] = check_5xx_not_stored(ctx, ENDPOINTS["updateTable"])
    return v


@pytest.mark.postgres
def test_pool_retry_absorbs_a_single_cut_write(pg, tmp_path):
    """The reproduction: the pool runs the cut write again on a fresh connection; one cut write is absorbed."""
    from ctk.catalog import ENDPOINTS
    from ctk.checks.common import Run
    from ctk.checks.db_link import NetworkOptions, _db_link_attempt
    from ctk.core.behaviours import Behaviour

    ctx, srv, stop = _stack(pg, tmp_path, db_statement_retries=1)
    try:
        run = Run(ctx, "REPLAY-03", ENDPOINTS["updateTable"], Behaviour.FIVE_XX_NOT_STORED)
        v, absorbed = _db_link_attempt(run, ctx, ENDPOINTS["updateTable"], LinkFaults(ctx.faults.link),
                                       "fail_write", NetworkOptions())
    finally:
        stop()
    assert v.status.value == "inconclusive" and absorbed is not None, v.message
    assert "ran the write again on a fresh connection" in v.message and "200" in v.message


@pytest.mark.postgres
def test_replay03_decided_through_the_link_on_a_pool_that_retries(pg, tmp_path):
    ctx, srv, stop = _stack(pg, tmp_path, db_statement_retries=1)
    try:
        v = _replay03(ctx)
    finally:
        stop()
    assert v.status.value == "pass", v.message
    assert "fail_write_hold" in v.message and v.details["mode"] == "fail_write_hold"
    assert v.details["earlier"]["attempts"][0] == 200          # the single cut write was absorbed
    assert v.details["answer_seen_by_interposer"] is True
    assert v.details["attempts"][0] == 500 and v.details["executions"] == 1


@pytest.mark.postgres
def test_stored_5xx_is_caught_through_the_held_link(pg, tmp_path):
    """The truth the issue reached by hand: with the link down for the whole request the catalog answers a real
    500; a catalog that stores it replays it to the same-key retry: REPLAY-03 fails."""
    ctx, srv, stop = _stack(pg, tmp_path, db_statement_retries=1, deviation="store-5xx")
    try:
        v = _replay03(ctx)
    finally:
        stop()
    assert v.status.value == "fail", v.message
    assert v.details["mode"] == "fail_write_hold"


def test_negative_statement_retries_is_a_clear_error():
    from ctk.reference.settings import ReferenceSettings

    with pytest.raises(ValueError, match="--db-statement-retries"):
        ReferenceSettings(db_statement_retries=-1)
