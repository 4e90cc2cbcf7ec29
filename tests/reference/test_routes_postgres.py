"""The reference catalog on PostgreSQL (psycopg): routes, CAS race. Starts a throwaway cluster on 127.0.0.1."""

from __future__ import annotations


import httpx
import pytest
import uuid6

from ctk.reference.server import ReferenceServer
from ctk.reference.settings import ReferenceSettings

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(180)]

@pytest.fixture(scope="module")
def pg_url(pg):
    return pg.url


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def test_postgres_catalog(pg_url, tmp_path):
    import threading

    settings = ReferenceSettings(warehouse=str(tmp_path / "wh"), database_url=pg_url, control_api=True)
    with ReferenceServer(settings) as server, httpx.Client(base_url=server.url + "/v1", timeout=60) as c:
        assert c.post("/namespaces", json={"namespace": ["db"]}).status_code == 200
        assert c.post("/namespaces", json={"namespace": ["db"]}).status_code == 409
        created = c.post("/namespaces/db/tables", json={"name": "t", "schema": SCHEMA}).json()
        assert not (tmp_path / "wh" / "catalog.db").exists()  # pointers live in PostgreSQL

        n, statuses = 8, []
        barrier = threading.Barrier(n, timeout=30)

        def commit(i):
            body = {"requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0}],
                    "updates": [{"action": "add-schema", "last-column-id": 2, "schema": {
                        "type": "struct", "schema-id": 1, "fields": [SCHEMA["fields"][0], {
                            "id": 2, "name": f"c{i}", "type": "string", "required": False}]}},
                        {"action": "set-current-schema", "schema-id": -1}]}
            with httpx.Client(timeout=60) as cc:
                barrier.wait()
                statuses.append(cc.post(f"{server.url}/v1/namespaces/db/tables/t", json=body).status_code)

        threads = [threading.Thread(target=commit, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        assert sorted(statuses) == [200] + [409] * (n - 1), statuses
        final = c.get("/namespaces/db/tables/t").json()
        assert final["metadata-location"] != created["metadata-location"]
        assert c.delete("/namespaces/db/tables/t").status_code == 204
        assert c.delete("/namespaces/db").status_code == 204
    # the pipeline's own tables live in the same database: a restart on it works
    with ReferenceServer(settings) as again:
        assert httpx.get(again.url + "/v1/namespaces", timeout=10).json()["namespaces"] == []


@pytest.mark.parametrize("what", ["namespace", "table"])
def test_concurrent_creations_on_postgres_lose_with_409_never_500(pg_url, tmp_path, what):
    """On PostgreSQL two creations of one name both pass the existence check; the unique index decides, and
    the loser must get the same 409 AlreadyExistsException as a creation that came later."""
    import threading

    settings = ReferenceSettings(warehouse=str(tmp_path / "wh"), database_url=pg_url)
    with ReferenceServer(settings) as server, httpx.Client(base_url=server.url + "/v1", timeout=60) as c:
        ns = f"race_{what}"
        if what == "table":
            assert c.post("/namespaces", json={"namespace": [ns]}).status_code == 200
        n, answers = 8, []
        barrier = threading.Barrier(n, timeout=30)

        def create():
            with httpx.Client(base_url=server.url + "/v1", timeout=60) as cc:
                barrier.wait()
                if what == "namespace":
                    answers.append(cc.post("/namespaces", json={"namespace": [ns]}))
                else:
                    answers.append(cc.post(f"/namespaces/{ns}/tables", json={"name": "t", "schema": SCHEMA}))

        threads = [threading.Thread(target=create) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        statuses = sorted(r.status_code for r in answers)
        assert statuses == [200] + [409] * (n - 1), [(r.status_code, r.text[:200]) for r in answers]
        assert all(r.json()["error"]["type"] == "AlreadyExistsException" for r in answers if r.status_code == 409)
        if what == "table":
            assert c.delete(f"/namespaces/{ns}/tables/t").status_code == 204
        assert c.delete(f"/namespaces/{ns}").status_code == 204


def test_answers_stored_by_reference_on_postgres(pg_url, tmp_path):
    """Replays read the metadata file; a purge copies those answers into their records first; a records table
    without the ref column (an older version's) gets it on start."""
    import uuid

    from sqlalchemy import create_engine

    from ctk.reference.idempotency import records

    settings = ReferenceSettings(warehouse=str(tmp_path / "wh"), database_url=pg_url)
    key = {"Idempotency-Key": str(uuid6.uuid7())}
    body = {"name": "byref", "schema": SCHEMA}
    engine = create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.begin() as conn:          # as an older version left the table
            conn.exec_driver_sql("DROP INDEX IF EXISTS ix_ctk_idem_ref")
            conn.exec_driver_sql(f"ALTER TABLE IF EXISTS {records.name} DROP COLUMN IF EXISTS ref")
        with ReferenceServer(settings) as server, httpx.Client(base_url=server.url + "/v1", timeout=60) as c:
            c.post("/namespaces", json={"namespace": ["byref"]})
            created = c.post("/namespaces/byref/tables", json=body, headers=key)
            assert created.status_code == 200
            assert c.post("/namespaces/byref/tables", json=body, headers=key).content == created.content
            assert c.delete("/namespaces/byref/tables/byref", params={"purgeRequested": "true"}).status_code == 204
            replay = c.post("/namespaces/byref/tables", json=body, headers=key)
            assert replay.status_code == 200 and replay.content == created.content
            assert replay.headers["idempotent-replayed"] == "true"
            with engine.connect() as conn:
                refs = conn.exec_driver_sql(f"SELECT ref FROM {records.name} WHERE idem_key = %s",
                                            (key["Idempotency-Key"],)).all()
            assert refs == [(None,)]          # copied in before the purge
    finally:
        engine.dispose()
