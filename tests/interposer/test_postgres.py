"""The interposer in front of a throwaway PostgreSQL server (plain TCP, client speaks first)."""

from __future__ import annotations

import time

import pytest

from ctk.interposer import Interposer
from interposer_helpers import NOT_DELAYED_S, SLOW_MS

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_proxy(pg):
    with Interposer(upstream=(pg.host, pg.port)) as ip:
        yield ip


def _query_time(conn) -> float:
    t0 = time.perf_counter()
    assert conn.execute("select 1").fetchone() == (1,)
    return time.perf_counter() - t0


def test_sqlalchemy_url_works(pg):
    import sqlalchemy

    engine = sqlalchemy.create_engine(pg.url)
    with engine.connect() as c:
        assert c.execute(sqlalchemy.text("select 41 + 1")).scalar() == 42
    engine.dispose()


def test_queries_pass_through(pg, pg_proxy):
    with psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True) as conn:
        conn.execute("create table if not exists t (id int)")
        conn.execute("insert into t values (1), (2)")
        assert conn.execute("select count(*) from t").fetchone()[0] >= 2
    c = pg_proxy.counters
    assert c["connections"] >= 1 and c["http_connections"] == 0
    assert c["bytes_upstream"] > 0 and c["bytes_downstream"] > 0


def test_latency_slows_queries(pg, pg_proxy):
    with psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True) as conn:
        base = _query_time(conn)
        pg_proxy.add_toxic("lat", type="latency", stream="downstream", attributes={"latency": SLOW_MS})
        slow = _query_time(conn)
        pg_proxy.remove_toxic("lat")
        fast = _query_time(conn)
    assert slow >= SLOW_MS / 1000 - 0.01, slow
    assert base < NOT_DELAYED_S and fast < NOT_DELAYED_S, (base, fast)   # the toxic would add SLOW_MS


def test_reset_peer_breaks_the_connection(pg, pg_proxy):
    conn = psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True)
    _query_time(conn)
    pg_proxy.add_toxic("rst", type="reset_peer", attributes={"timeout": 100})
    with pytest.raises(psycopg.OperationalError):
        conn.execute("select pg_sleep(0.5)")
    conn.close()
    pg_proxy.remove_toxic("rst")
    with psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True) as conn2:
        _query_time(conn2)  # the interposer survived: the query answers
    assert pg_proxy.counters["injected"]["reset_peer"] == 1


def test_timeout_toxic_hangs_then_closes(pg, pg_proxy):
    conn = psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True)
    pg_proxy.add_toxic("to", type="timeout", stream="upstream", attributes={"timeout": 400})
    t0 = time.perf_counter()
    with pytest.raises(psycopg.OperationalError):
        conn.execute("select 1")
    took = time.perf_counter() - t0
    conn.close()
    assert 0.35 <= took < 5, took    # the upper bound only catches a toxic that never fires (generous: load)
    pg_proxy.remove_toxic("to")
    with psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True) as conn2:
        assert _query_time(conn2) < 1


def test_proxy_down_refuses_new_connections(pg, pg_proxy):
    pg_proxy.disable()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(pg.dsn_via(*pg_proxy.address, connect_timeout=2))
    pg_proxy.enable()
    with psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True) as conn:
        assert _query_time(conn) < 1
