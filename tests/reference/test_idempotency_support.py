"""A tiny Starlette app that hands synthetic Mutations to the Pipeline (no catalog core needed), served by
uvicorn on 127.0.0.1 in a thread so connection-level faults are visible to a real httpx client.

Routes: POST /items/{name} (createItem: insert, 409 if present, 400 if the body says so, sleeps inside its
transaction for {"sleep": seconds}),
DELETE /items/{name} (dropItem), POST /items/{name}/bump (bumpItem: counter += 1, never idempotent by
itself). The principal comes from the X-Principal header.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid

import uuid6

import httpx
import uvicorn
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, delete, insert, select, update
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from ctk.reference.operations import CatalogError, Mutation, OpResult
from ctk.reference.pipeline import Pipeline
from ctk.reference.settings import ReferenceSettings

meta = MetaData()
items = Table("items", meta, Column("name", String(100), primary_key=True), Column("value", Integer),
              Column("bumps", Integer, default=0))


def new_key() -> str:
    return str(uuid6.uuid7())


def make_app(settings: ReferenceSettings, db_path: str):
    engine = create_engine(f"sqlite:///{db_path}", connect_args={"timeout": 30, "check_same_thread": False})
    meta.create_all(engine)
    pipeline = Pipeline(engine, settings)

    def principal(request: Request) -> str:
        return request.headers.get("x-principal", "anonymous")

    async def create_item(request: Request):
        name = request.path_params["name"]
        body = await request.body()

        def execute(conn):
            doc = json.loads(body or b"{}")
            if doc.get("sleep"):             # hold the request in flight inside its transaction
                time.sleep(float(doc["sleep"]))
            if doc.get("fail"):
                raise CatalogError(int(doc["fail"]), "BadRequestException" if doc["fail"] < 500
                                   else "InternalServerError", f"asked to fail with {doc['fail']}")
            if conn.execute(select(items.c.name).where(items.c.name == name)).first():
                raise CatalogError(409, "AlreadyExistsException", f"item {name} exists")
            conn.execute(insert(items).values(name=name, value=doc.get("value", 0), bumps=0))
            return OpResult(201, {"name": name, "value": doc.get("value", 0)}, {"Location": f"/items/{name}"})

        def reconcile(conn):
            row = conn.execute(select(items).where(items.c.name == name)).first()
            return None if row is None else OpResult(201, {"name": name, "value": row.value, "reconciled": True})

        return await pipeline.handle(request, Mutation("createItem", f"items/{name}", principal(request), body,
                                                       execute, reconcile))

    async def drop_item(request: Request):
        name = request.path_params["name"]

        def execute(conn):
            if not conn.execute(delete(items).where(items.c.name == name)).rowcount:
                raise CatalogError(404, "NoSuchItemException", f"no item {name}")
            return OpResult(204)

        return await pipeline.handle(request, Mutation("dropItem", f"items/{name}", principal(request),
                                                       await request.body(), execute))

    async def bump_item(request: Request):
        name = request.path_params["name"]

        def execute(conn):
            n = conn.execute(update(items).where(items.c.name == name).values(bumps=items.c.bumps + 1)).rowcount
            if not n:
                raise CatalogError(404, "NoSuchItemException", f"no item {name}")
            bumps = conn.execute(select(items.c.bumps).where(items.c.name == name)).scalar_one()
            return OpResult(200, {"name": name, "bumps": bumps})

        return await pipeline.handle(request, Mutation("bumpItem", f"items/{name}", principal(request),
                                                       await request.body(), execute))

    routes = [Route("/items/{name}", create_item, methods=["POST"]),
              Route("/items/{name}", drop_item, methods=["DELETE"]),
              Route("/items/{name}/bump", bump_item, methods=["POST"])]
    if settings.control_api:
        routes += pipeline.routes()
    app = Starlette(routes=routes)
    return app, engine, pipeline


def bumps(engine, name: str) -> int | None:
    with engine.connect() as conn:
        return conn.execute(select(items.c.bumps).where(items.c.name == name)).scalar()


def exists(engine, name: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(items.c.name).where(items.c.name == name)).first() is not None


def remove(engine, name: str) -> None:
    with engine.begin() as conn:
        conn.execute(delete(items).where(items.c.name == name))


class Served:
    """The tiny app under uvicorn on 127.0.0.1:<free port> in a daemon thread."""

    def __init__(self, tmp_path, **settings):
        settings.setdefault("control_api", True)
        self.settings = ReferenceSettings(warehouse=str(tmp_path), **settings)
        self.app, self.engine, self.pipeline = make_app(self.settings, str(tmp_path / "tiny.db"))
        # uvicorn serves the socket bound here and kept open: no port probed free and closed can be taken
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="critical", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("tiny app did not start")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{self.port}"
        self.client = httpx.Client(base_url=self.url, timeout=15)

    def post(self, path: str, body=None, key: str | None = None, headers=None, **kw) -> httpx.Response:
        h = dict(headers or {})
        if key is not None:
            h["Idempotency-Key"] = key
        return self.client.post(path, json=body if body is not None else {}, headers=h, **kw)

    def executions(self) -> dict:
        return self.client.get("/_ctk/executions").json()

    def fault(self, **rule) -> str:
        r = self.client.post("/_ctk/faults", json=rule)
        assert r.status_code == 200, r.text
        return r.json()["id"]

    def close(self) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        self.pipeline.close()
        self.engine.dispose()
