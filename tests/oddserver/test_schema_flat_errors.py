"""Issue 30 item 6(a): SCHEMA-01 decides "not routed" from the route and the advertised endpoints, not from the
body's shape. A catalog whose error bodies are flat (``{"message", "type", "code"}`` without the ``error``
wrapper) answered 404 on routes it serves; every such 404 was skipped as "not routed", so its error bodies were
never validated. Now a 404 without an error model is not routed only on a route that is not advertised or that
answered nothing else; a route the catalog does not serve (`odd.not_routed`) stays unsupported."""

from __future__ import annotations

from types import SimpleNamespace

from odd import Answer, Req, Rule, not_routed

from ctk.client.transport import ns_path
from ctk.plugin import traffic


class flat_error_bodies(Rule):
    """Every error answer's body loses its ``error`` wrapper: ``{"message", "type", "code"}`` at the top."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        if answer.status >= 400 and isinstance(body, dict) and isinstance(body.get("error"), dict):
            self.hit()
            return Answer.of(answer.status, body["error"])
        return None


def test_flat_404_bodies_of_served_routes_are_validated(make_odd):
    flat = flat_error_bodies()
    ctx, _ = make_odd([not_routed("POST", r"/transactions/commit$"), flat])
    c = ctx.client
    run = tuple(ctx.namespace)
    assert c.request("GET", f"namespaces/{ns_path(run)}", label="load").status == 200
    missing = c.request("GET", f"namespaces/{ns_path(run + ('missing',))}", label="load missing")
    assert missing.status == 404 and flat.hits >= 1 and "error" not in (missing.json() or {})
    unrouted = c.request("POST", "transactions/commit", json={"table-changes": []}, label="commit")
    assert unrouted.status == 404
    summary = traffic.summarize(SimpleNamespace(worker="w", client=c, discovery=ctx.discovery), None)
    assert summary["unrouted"] == 1, summary                      # the route the catalog does not serve
    assert summary["problem_count"] >= 1, summary                 # the flat 404 body was validated, and is wrong
    assert any("/namespaces/" in p and "404" in p for p, _ in summary["problems"]), summary["problems"]
