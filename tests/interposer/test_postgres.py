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


def _fail_next_insert(pg_proxy, name="fw"):
    """The fault REPLAY-03 arms on a catalog's database link (LinkFaults.db_fail("fail_write"))."""
    from ctk.interposer.faults import DB_WRITE_PATTERN

    return pg_proxy.add_toxic(name, type="cut_after", stream="upstream",
                              attributes={"pattern": DB_WRITE_PATTERN, "deliver": 0, "times": 1})


@pytest.mark.parametrize("prepare", [False, True], ids=["text-on-the-wire", "named-prepared"])
def test_cut_after_finds_a_write_whatever_the_driver_sends(pg, pg_proxy, prepare):
    """A driver that keeps the statement prepared on the server (psycopg prepare=True, as the PostgreSQL JDBC driver
    does after prepareThreshold executions) sends only the statement's name on later executions (Bind/Execute):
    the write is still found and dropped, nothing is inserted."""
    with psycopg.connect(pg.dsn, autocommit=True) as direct:
        direct.execute("drop table if exists w; create table w (id int)")
    conn = psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True)
    for i in range(3):      # prepared (Parse with a name) on the first; the text is not sent again
        conn.execute("insert into w values (%s)", (i,), prepare=prepare)
    rule = _fail_next_insert(pg_proxy)
    with pytest.raises(psycopg.OperationalError):
        conn.execute("insert into w values (%s)", (99,), prepare=prepare)
    conn.close()
    [event] = [e for e in pg_proxy.events_of(rule) if e.get("kind") == "cut_after"]
    assert "insert into w" in event["sent"], event
    with psycopg.connect(pg.dsn, autocommit=True) as direct:
        assert direct.execute("select count(*) from w where id = 99").fetchone() == (0,)
        assert direct.execute("select count(*) from w").fetchone() == (3,)


def test_cut_after_ignores_reads_of_a_prepared_statement(pg, pg_proxy):
    """Only what a chunk runs counts: reads (named or not) pass while a write fault is armed, and a Close
    forgets a name."""
    with psycopg.connect(pg.dsn, autocommit=True) as direct:
        direct.execute("drop table if exists r; create table r (id int); insert into r values (1)")
    conn = psycopg.connect(pg.dsn_via(*pg_proxy.address), autocommit=True)
    for _ in range(3):
        assert conn.execute("select count(*) from r where id = %s", (1,), prepare=True).fetchone() == (1,)
    rule = _fail_next_insert(pg_proxy)
    for _ in range(3):
        assert conn.execute("select count(*) from r where id = %s", (1,), prepare=True).fetchone() == (1,)
    conn.execute("deallocate all")
    assert conn.execute("select 1").fetchone() == (1,)
    assert not [e for e in pg_proxy.events_of(rule) if e.get("kind") == "cut_after"]
    conn.close()


JDBC_PROGRAM = """
import java.sql.*;
import java.io.*;

public class Writes {
    public static void main(String[] a) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        try (Connection c = DriverManager.getConnection(a[0])) {
            PreparedStatement ps = c.prepareStatement("INSERT INTO jw VALUES (?)");
            for (int i = 0; i < 8; i++) { ps.setInt(1, i); ps.executeUpdate(); }
            System.out.println("ready"); System.out.flush();
            in.readLine();
            try { ps.setInt(1, 99); ps.executeUpdate(); System.out.println("written"); }
            catch (SQLException e) { System.out.println("failed " + e.getSQLState()); }
        }
    }
}
"""


def _pgjdbc_jar():
    import glob
    import os
    import shutil

    jars = sorted(glob.glob(os.path.expanduser("~/.m2/repository/org/postgresql/postgresql/*/postgresql-*.jar")))
    jars = [j for j in jars if not j.endswith(("-sources.jar", "-javadoc.jar"))]
    if not jars or not shutil.which("java"):
        pytest.skip("the PostgreSQL JDBC driver (~/.m2) or java is not here")
    return jars[-1]


def test_cut_after_finds_a_write_the_jdbc_driver_sends_by_name(pg, pg_proxy, tmp_path):
    """What was seen (issue 30): the PostgreSQL JDBC driver, after prepareThreshold (5) executions, sends a write as
    Bind/Execute of a named server-side statement; the fault REPLAY-03 arms still finds and drops it."""
    import subprocess

    jar = _pgjdbc_jar()
    with psycopg.connect(pg.dsn, autocommit=True) as direct:
        direct.execute("drop table if exists jw; create table jw (id int)")
    (tmp_path / "Writes.java").write_text(JDBC_PROGRAM)
    host, port = pg_proxy.address
    url = f"jdbc:postgresql://{host}:{port}/{pg.database}?user={pg.user}&sslmode=disable"
    proc = subprocess.Popen(["java", "-cp", jar, str(tmp_path / "Writes.java"), url], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        rule = _fail_next_insert(pg_proxy)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        said = proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()
    assert said.startswith("failed"), said
    [event] = [e for e in pg_proxy.events_of(rule) if e.get("kind") == "cut_after"]
    assert "INSERT INTO jw" in event["sent"], event
    with psycopg.connect(pg.dsn, autocommit=True) as direct:
        assert direct.execute("select count(*) from jw").fetchone() == (8,)


def _msg(kind: bytes, body: bytes) -> bytes:
    import struct

    return kind + struct.pack("!i", len(body) + 4) + body


def test_frontend_reader_follows_names_across_any_chunking():
    """pgwire.FrontendReader: startup, a named Parse, then Bind/Execute by name, fed in one piece and byte by byte;
    a TLS or HTTP stream is not readable (None)."""
    import struct

    from ctk.interposer.pgwire import FrontendReader

    startup = struct.pack("!ii", 8, 80877103) + struct.pack("!ii", 17, 196608) + b"user\0pg\0\0"
    stream = (startup + _msg(b"P", b"S_1\0INSERT INTO t VALUES ($1)\0\0\0") + _msg(b"S", b"")
              + _msg(b"B", b"\0S_1\0\0\0\0\x01" + b"\0\0\0\x04" + b"x" * 4 + b"\0\0")
              + _msg(b"E", b"\0\0\0\0\0") + _msg(b"Q", b"SELECT 1\0")
              + _msg(b"C", b"SS_1\0") + _msg(b"B", b"\0S_1\0\0\0\0\0\0\0") + _msg(b"E", b"\0\0\0\0\0"))
    whole = FrontendReader().feed(stream)
    assert whole == ["INSERT INTO t VALUES ($1)", "SELECT 1"]
    reader = FrontendReader()
    one_by_one = [sql for i in range(len(stream)) for sql in reader.feed(stream[i:i + 1]) or []]
    assert one_by_one == whole
    assert FrontendReader().feed(struct.pack("!ii", 8, 80877103) + b"\x16\x03\x01\x02\x00\x01\x00\x01") is None
    assert FrontendReader().feed(b"POST /v1/namespaces HTTP/1.1\r\n") is None
