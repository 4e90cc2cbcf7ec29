"""The catalog-to-database link on any catalog, set up exactly as a user would in CI: `ctk interposer` (TCP
mode, its control API on) in front of PostgreSQL, `ctk serve --database-url` pointing at it with its control
API OFF (like any third-party catalog), and `pytest --catalog-url ... --ctk-db-link http://.../proxies/NAME`
from an empty directory. REPLAY-03 (the database write fails), INFLIGHT-01/02 (the database held while
duplicates arrive) and REPLAY-04 at the database (its answer to the commit cut) are decided; the store-5xx
deviation is caught that way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import procs

pytest.importorskip("psycopg", reason="psycopg is not installed (the reference catalog's PostgreSQL driver)")

pytestmark = pytest.mark.postgres

SELECT = "updateTable and (5xx-not-stored or in-flight-duplicate or lost-answer)"


class Stack:
    """PostgreSQL <- ctk interposer (TCP) <- ctk serve (no control API); the processes a user would start. Each
    binds port 0 itself and says where it listens (tests/procs.py): no port can be taken between a probe and
    the start."""

    def __init__(self, pg, tmp: Path, deviation: str | None = None, *extra: str):
        self.started: list[procs.Started] = []
        try:
            db = procs.interposer(f"{pg.host}:{pg.port}", "--name", "catalog-db", "--protocol", "tcp")
            self.started.append(db)
            self.link = f"{db.api_url}/proxies/catalog-db"
            serve = ["--warehouse", str(tmp / "wh"), "--database-url", pg.url_via(*db.listen), "--lifetime", "PT60S"]
            if deviation:
                serve += ["--deviation", deviation]
            serve += list(extra)
            catalog = procs.serve(*serve)
            self.started.append(catalog)
            self.url = catalog.url
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for proc in reversed(self.started):
            proc.stop(15)


def _run_kit(stack: Stack, where: Path, *extra: str) -> tuple[int, dict, str]:
    where.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    r = subprocess.run([sys.executable, "-m", "pytest", "--catalog-url", stack.url, *extra, "-p", "no:cacheprovider",
                        "-q", "-k", SELECT], cwd=where, env=env, capture_output=True, text=True, timeout=600)
    report = where / "reports" / "conformance.json"
    data = json.loads(report.read_text()) if report.exists() else {}
    return r.returncode, data, r.stdout[-3000:] + r.stderr[-2000:]


def _verdicts(data: dict) -> dict[tuple[str, str], str]:
    return {(v["requirement"], v["behaviour"]): v["status"] for v in data.get("results", [])}


@pytest.fixture
def stacks(pg, tmp_path):
    made: list[Stack] = []

    def make(deviation: str | None = None, *extra: str) -> Stack:
        s = Stack(pg, tmp_path / f"s{len(made)}", deviation, *extra)
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop()


def test_db_link_decides_without_the_control_api(stacks, tmp_path):
    stack = stacks()
    code, data, out = _run_kit(stack, tmp_path / "without")
    plain = _verdicts(data)
    assert plain[("REPLAY-03", "5xx-not-stored")] == "unsupported", out   # no control API, no link: cannot
    code, data, out = _run_kit(stack, tmp_path / "with", "--ctk-db-link", stack.link)
    got = _verdicts(data)
    assert code == 0, out
    assert got[("REPLAY-03", "5xx-not-stored")] == "pass", out
    assert got[("INFLIGHT-01", "in-flight-duplicate")] == "pass", out
    assert got[("REPLAY-04", "db-commit-cut")] == "pass", out
    by = {(v["requirement"], v["behaviour"]): v for v in data["results"]}
    assert "fail_write" in by[("REPLAY-03", "5xx-not-stored")]["message"]
    assert by[("INFLIGHT-01", "in-flight-duplicate")]["details"]["overlapped"] is True
    assert by[("REPLAY-04", "db-commit-cut")]["details"]["cut"]        # what the cut followed
    counters = httpx.get(stack.link + "/counters", timeout=5).json()
    assert counters["injected"].get("cut_after", 0) >= 2               # the failed write and the cut commit


def test_store_5xx_is_caught_through_the_db_link(stacks, tmp_path):
    stack = stacks("store-5xx")
    code, data, out = _run_kit(stack, tmp_path / "run", "--ctk-db-link", stack.link)
    got = _verdicts(data)
    assert got[("REPLAY-03", "5xx-not-stored")] == "fail", out
    assert code == 1, out


def test_pool_that_retries_a_lost_statement_is_decided_through_the_db_link(stacks, tmp_path):
    """A catalog whose pool runs the cut write again on a fresh connection (issue 19, item 3): the single cut write
    is absorbed, the link held down until the catalog answered decides REPLAY-03; storing that 500 is caught."""
    stack = stacks(None, "--db-statement-retries", "1")
    code, data, out = _run_kit(stack, tmp_path / "run", "--ctk-db-link", stack.link)
    by = {(v["requirement"], v["behaviour"]): v for v in data["results"]}
    v = by[("REPLAY-03", "5xx-not-stored")]
    assert v["status"] == "pass", out
    assert v["details"]["mode"] == "fail_write_hold" and v["details"]["earlier"]["attempts"][0] == 200, v
    stack = stacks("store-5xx", "--db-statement-retries", "1")
    code, data, out = _run_kit(stack, tmp_path / "dev", "--ctk-db-link", stack.link)
    assert _verdicts(data)[("REPLAY-03", "5xx-not-stored")] == "fail", out


def test_bad_db_link_is_a_clear_error(tmp_path):
    where = tmp_path / "bad"
    where.mkdir()
    r = subprocess.run([sys.executable, "-m", "pytest", "--catalog-url", "http://127.0.0.1:9", "--ctk-db-link",
                        "http://10.1.2.3:8474/proxies/db", "-p", "no:cacheprovider", "-q"], cwd=where,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--ctk-db-link" in (r.stdout + r.stderr) and "loopback" in (r.stdout + r.stderr)


def test_db_link_without_its_proxy_fails_every_test_with_the_reason(tmp_path):
    where = tmp_path / "gone"
    where.mkdir()
    # nothing listens there, and nothing is started there: a closed port is all this needs
    link = f"http://127.0.0.1:{procs.closed_port()}/proxies/catalog-db"
    r = subprocess.run([sys.executable, "-m", "pytest", "--ctk", "--ctk-db-link", link, "-p", "no:cacheprovider",
                        "-q", "-k", "discovery"], cwd=where, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and f"--ctk-db-link {link}: the proxy is not there" in out, out[-3000:]


def test_held_database_makes_in_flight_reexecution_certain(pg, tmp_path):
    """With the database held (DbLinkFaults), the copies of a burst arrive while the original is surely in
    flight: a catalog that lets an in-flight duplicate execute is caught in the first burst, no control API."""
    from ctk.checks.context import CheckContext
    from ctk.checks.faults import DbLinkFaults
    from ctk.checks.idempotency import check_in_flight
    from ctk.client.transport import CatalogClient
    from ctk.catalog import ENDPOINTS
    from ctk.interposer import Interposer
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings
    from ctk.client.config import TargetConfig

    with Interposer(upstream=(pg.host, pg.port)) as db:
        srv = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "wh"), database_url=pg.url_via(*db.address),
                                                idempotency_lifetime="PT60S", deviation="in-flight-reexecutes"))
        srv.start()
        host, port = srv.url.rsplit("//", 1)[1].split(":")
        try:
            with Interposer(upstream=(host, int(port))) as ip:
                client = CatalogClient(TargetConfig(ip.url, timeout=30.0))
                db.describe = lambda: "in-process interposer"          # what ProxyLink offers besides
                ctx = CheckContext.create(client, interposer=ip)
                ctx.faults = DbLinkFaults(ctx.faults, db)
                v1, _v2 = check_in_flight(ctx, ENDPOINTS["createTable"])
                client.close()
        finally:
            srv.stop()
    assert v1.status.value == "fail" and v1.classification == "second execution", v1.message
    assert len(v1.details["rounds"]) == 1 and v1.details["overlapped"] is True
