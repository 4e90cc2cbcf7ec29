"""A table refused in a top-level run namespace names --ctk-parent-namespace; nowhere else."""

from __future__ import annotations

import httpx
import pytest

from ctk.client.transport import CatalogClient
from ctk.catalog import Catalog, PrerequisiteError
from ctk.client.placement import Placement
from ctk.client.config import TargetConfig


def _client(status: int) -> CatalogClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"error": {"message": "no tables here", "type": "ValidationError",
                                                      "code": status}})

    return CatalogClient(TargetConfig("http://127.0.0.1:1"), transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("status,run,hinted", [
    (422, ("ctk_r",), True),
    (403, ("ctk_r",), True),
    (409, ("ctk_r",), False),          # the name exists: not a placement problem
    (500, ("ctk_r",), False),
    (422, ("bronze", "ctk_r"), False),  # already inside a parent namespace
])
def test_hint(status, run, hinted):
    c = _client(status)
    c.placement = Placement(run, nested=True)
    with pytest.raises(PrerequisiteError) as info:
        Catalog(c).create_table(run, "t")
    assert str(status) in str(info.value) and info.value.exchange is not None
    assert ("--ctk-parent-namespace" in str(info.value)) is hinted
    c.close()
