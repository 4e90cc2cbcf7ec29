"""Between catalog and database: the reference catalog on a throwaway PostgreSQL with the interposer in front
of PostgreSQL. A latency toxic on the DB link holds a mutation in flight while its duplicate arrives
(INFLIGHT-01); reset_peer / down on the DB link gives the client a 5xx and the retry after the link is back
executes once (REPLAY-03)."""

from __future__ import annotations

import time

import pytest

from ctk.checks.context import CheckContext
from ctk.checks.db_link import check_db_latency_inflight, run_db_link_scenarios
from ctk.core.verdicts import Status
from ctk.client.transport import CatalogClient
from ctk.interposer import Interposer
from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings
from ctk.client.config import TargetConfig

pytest.importorskip("psycopg", reason="psycopg is not installed (the reference catalog's PostgreSQL driver)")

pytestmark = pytest.mark.postgres


@pytest.fixture
def catalog_on_pg(pg, tmp_path):
    """catalog_on_pg(deviation=None) -> (CheckContext on the catalog, interposer in front of PostgreSQL)."""
    opened: list = []

    def make(deviation: str | None = None):
        ip = Interposer(upstream=(pg.host, pg.port))
        ip.start()
        opened.append(ip)
        srv = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / f"wh{len(opened)}"),
                                                database_url=pg.url_via(*ip.address), idempotency_lifetime="PT60S",
                                                deviation=deviation))
        srv.start()
        opened.append(srv)
        client = CatalogClient(TargetConfig(srv.url, timeout=30.0))
        opened.append(client)
        return CheckContext.create(client), ip

    yield make
    for thing in reversed(opened):
        thing.close() if isinstance(thing, CatalogClient) else thing.stop()


def test_db_link_pair(catalog_on_pg):
    ctx, ip = catalog_on_pg()
    t0 = time.monotonic()
    verdicts = run_db_link_scenarios(ctx, ip, ["updateTable", "createNamespace"])
    print(f"{len(verdicts)} DB-link verdicts in {time.monotonic() - t0:.1f}s")
    text = "\n".join(f"{v.endpoint} {v.behaviour} {v.status.value} {v.classification}\n{v.message[:800]}"
                     for v in verdicts)
    assert [(v.requirement, v.behaviour) for v in verdicts] == [
        ("INFLIGHT-01", "db-latency-in-flight"), ("REPLAY-03", "db-link-reset-peer"),
        ("REPLAY-03", "db-link-down")] * 2
    assert all(v.status == Status.PASS for v in verdicts), text
    for v in verdicts:
        if v.requirement == "INFLIGHT-01":
            assert v.classification in ("409 request_in_progress", "wait-and-replay") and v.details["overlapped"]
            assert v.details["executions_state"] == 1
        else:
            assert v.details["attempts"][0] >= 500 and v.details["attempts"][-1] in (200, 204)
            assert v.details["executions"] == 1 and v.details["committed_before_failure"] == 0
    assert ip.counters["injected"].get("reset_peer", 0) >= 1
    assert ip.counters["injected"].get("proxy_disabled", 0) == 2


def test_db_latency_catches_in_flight_reexecution(catalog_on_pg):
    ctx, ip = catalog_on_pg("in-flight-reexecutes")
    [v] = check_db_latency_inflight(ctx, ip, "createNamespace")
    assert v.status == Status.FAIL and v.classification == "second execution", v.message
    assert "expected:" in v.message and "exchanges:" in v.message


def test_replay03_decided_when_the_catalog_sends_writes_by_statement_name(pg, tmp_path, monkeypatch):
    """Issue 30 (2a): a catalog whose driver keeps its statements prepared on the server (here psycopg with
    prepare_threshold=0, as the PostgreSQL JDBC driver after prepareThreshold executions) sends a write as
    Bind/Execute of a statement name. REPLAY-03 through the database link still cuts the write and decides."""
    import sqlalchemy

    from ctk.checks.db_link import check_db_link_failure
    from ctk.checks.faults import DbLinkFaults
    from ctk.reference import store

    made = sqlalchemy.create_engine

    def named_statements(url, **kw):
        if "psycopg" in str(url):
            kw["connect_args"] = {**kw.get("connect_args", {}), "prepare_threshold": 0}
        return made(url, **kw)

    monkeypatch.setattr(store, "create_engine", named_statements)
    with Interposer(upstream=(pg.host, pg.port)) as db:
        srv = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "wh"), database_url=pg.url_via(*db.address),
                                                idempotency_lifetime="PT60S"))
        srv.start()
        try:
            with CatalogClient(TargetConfig(srv.url, timeout=30.0)) as client:
                ctx = CheckContext.create(client)
                db.describe = lambda: "in-process interposer"
                ctx.faults = DbLinkFaults(ctx.faults, db)
                verdicts = [v for op in ("createNamespace", "updateTable", "createTable", "updateTable")
                            for v in check_db_link_failure(ctx, db, op, "fail_write")]
        finally:
            srv.stop()
    text = "\n".join(f"{v.endpoint} {v.status.value}: {v.message[:300]}" for v in verdicts)
    assert [v.status for v in verdicts] == [Status.PASS] * 4, text
    assert all(v.details["attempts"][0] >= 500 for v in verdicts), text
