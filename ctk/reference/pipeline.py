"""Mutation pipeline: every mutating route of the reference catalog goes through Pipeline.handle().

Placeholder until the idempotency layer lands: runs the operation in one transaction, no keys.
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ctk.reference.operations import CatalogError, Mutation, OpResult


def render(result: OpResult) -> Response:
    if result.body is None:
        return Response(status_code=result.status, headers=result.headers)
    return JSONResponse(result.body, status_code=result.status, headers=result.headers)


class Pipeline:
    def __init__(self, engine, settings):
        self.engine, self.settings = engine, settings

    def routes(self) -> list:
        """Starlette routes of the control API (/_ctk/...), mounted only when settings.control_api."""
        return []

    def close(self) -> None:
        pass

    def run(self, mutation: Mutation) -> OpResult:
        with self.engine.begin() as conn:
            try:
                return mutation.execute(conn)
            except CatalogError as exc:
                conn.rollback()
                return exc.result()

    async def handle(self, request: Request, mutation: Mutation) -> Response:
        return render(await run_in_threadpool(self.run, mutation))
