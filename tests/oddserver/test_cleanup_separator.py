"""`ctk cleanup` against a catalog that advertises another `namespace-separator` (``%2E``, as several real
catalogs do) and understands only that one: the leftovers of a run placed in a parent namespace are found
(their marker read through the nested name) and removed, children and tables included, and no URL the kit
sends carries the default ``%1F``."""

from __future__ import annotations

import re

import httpx
import pytest
from odd import Answer, OddServer, Req, Rule

from ctk.cli import main


class dot_separator(Rule):
    """Advertises ``namespace-separator: %2E`` and speaks only it: a path or ``parent`` query with ``%1F`` is a
    namespace this catalog does not have (404); ``%2E`` is turned into the reference's ``%1F`` on the way."""

    def __init__(self) -> None:
        super().__init__()
        self.default_sent = 0
        self.dotted = 0

    def before(self, req: Req) -> Answer | None:
        if re.search("%1f", req.path + req.query, re.I):
            with self.lock:
                self.default_sent += 1
            return Answer.of(404, {"error": {"code": 404, "type": "NoSuchNamespaceException",
                                             "message": f"no namespace in {req.path}"}})
        if re.search("%2e", req.path + req.query, re.I):
            with self.lock:
                self.dotted += 1
            req.path = re.sub("%2e", "%1F", req.path, flags=re.I)
            req.query = re.sub("%2e", "%1F", req.query, flags=re.I)
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        if req.is_("GET", r"^/v1/config$") and answer.status == 200:
            body = answer.json() or {}
            body.setdefault("overrides", {})["namespace-separator"] = "%2E"
            self.hit()
            return Answer.of(200, body)
        return None


@pytest.fixture
def dotted(start_catalog):
    rule = dot_separator()
    ctx = start_catalog(front=lambda up: OddServer(up, [rule]), control_api=False)
    return ctx.test_front.url, rule


def _post(url: str, path: str, body: dict) -> None:
    r = httpx.post(f"{url}/v1/{path}", json=body, timeout=10)
    assert r.status_code == 200, r.text


def _children(url: str, parent: str) -> list[list[str]]:
    r = httpx.get(f"{url}/v1/namespaces", params={"parent": parent}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["namespaces"]


def test_cleanup_uses_the_advertised_separator(dotted, capsys):
    url, rule = dotted
    run = ["bronze", "ctk_deadbeef_gw0"]
    _post(url, "namespaces", {"namespace": ["bronze"], "properties": {}})
    _post(url, "namespaces", {"namespace": run, "properties": {"ctk.run-id": "deadbeef"}})
    _post(url, "namespaces", {"namespace": [*run, "case"], "properties": {}})
    _post(url, "namespaces/bronze%2Ectk_deadbeef_gw0%2Ecase/tables",
          {"name": "t", "schema": {"type": "struct", "schema-id": 0,
                                   "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}})
    _post(url, "namespaces", {"namespace": ["bronze", "ctk_cafe0000_gw1"], "properties": {}})   # unmarked: not ours
    assert rule.default_sent == 0

    assert main(["cleanup", "--catalog-url", url, "--ctk-parent-namespace", "bronze", "--dry-run"]) == 0
    assert "would remove bronze.ctk_deadbeef_gw0 (run deadbeef)" in capsys.readouterr().out
    assert main(["cleanup", "--catalog-url", url, "--ctk-parent-namespace", "bronze"]) == 0
    out = capsys.readouterr()
    assert "removed 1 of 1 run namespaces (read back)" in out.out and "not removed" not in out.err, out
    assert _children(url, "bronze") == [["bronze", "ctk_cafe0000_gw1"]]
    assert rule.hits >= 2 and rule.dotted > 0
    assert rule.default_sent == 0, "the kit sent %1F to a catalog that advertised %2E"
