"""The catalog facade: one pagination routine for every listing, one namespace codec (the client's), one
drop_tree that removes a namespace with everything below it."""

from __future__ import annotations

import time

import httpx

from ctk.catalog import Catalog, drop_tree, pages
from ctk.client.transport import ns_path


def _pager(pages_by_token: dict, status: int = 200):
    """A handler answering GET .../namespaces with the page for its pageToken; records the requests."""
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        page = pages_by_token.get(req.url.params.get("pageToken"))
        if page is None:
            return httpx.Response(503, json={"error": {"message": "down", "type": "X", "code": 503}})
        return httpx.Response(status, json=page)

    return handler, seen


def test_pages_follow_the_token_and_encode_it(mock_client):
    handler, seen = _pager({None: {"namespaces": [["a"]], "next-page-token": "p 2/&"},
                            "p 2/&": {"namespaces": [["b"]]}})
    c = mock_client(handler)
    assert pages(c, "namespaces", "namespaces", "read") == ([["a"], ["b"]], None)
    assert "pageToken" not in seen[0].url.params and seen[1].url.params["pageToken"] == "p 2/&"


def test_a_page_that_fails_stops_the_listing_with_the_items_so_far(mock_client):
    handler, _ = _pager({None: {"namespaces": [["a"]], "next-page-token": "gone"}})
    items, problem = pages(mock_client(handler), "namespaces", "namespaces", "read")
    assert items == [["a"]] and problem.startswith("HTTP 503 (http://127.0.0.1:1/v1/namespaces?pageToken=gone")
    # the facade's listings say "could not list" (None), not "empty"
    assert Catalog(mock_client(handler)).list_namespaces() is None


def test_pages_are_bounded_in_count_and_time(mock_client):
    handler, seen = _pager({None: {"namespaces": [["a"]], "next-page-token": "x"},
                            "x": {"namespaces": [["a"]], "next-page-token": "x"}})
    items, problem = pages(mock_client(handler), "namespaces", "namespaces", "read", max_pages=5)
    assert len(items) == 5 and len(seen) == 5 and problem is None
    items, problem = pages(mock_client(handler), "namespaces", "namespaces", "read", deadline=time.monotonic() - 1)
    assert items == [] and problem == "time budget used up"


def test_listings_of_namespaces_tables_and_views(mock_client):
    def handler(req: httpx.Request) -> httpx.Response:
        p = req.url.path
        if p == "/v1/dev/namespaces":
            if not req.url.params.get("pageToken"):
                return httpx.Response(200, json={"namespaces": [["db"]], "next-page-token": "p2"})
            return httpx.Response(200, json={"namespaces": [["db2"]]})
        if p == "/v1/dev/namespaces/db/tables":
            return httpx.Response(200, json={"identifiers": [{"namespace": ["db"], "name": n} for n in ("t1", "t2")]
                                             + [{"namespace": ["db"]}]})
        return httpx.Response(404, json={"error": {"message": "no", "type": "NoSuchNamespaceException", "code": 404}})

    cat = Catalog(mock_client(handler, prefix="dev"))
    assert cat.list_namespaces() == [("db",), ("db2",)]
    assert cat.list_tables("db") == ["t1", "t2"]           # an identifier without a name is skipped
    assert cat.list_views("db") is None


def test_the_parent_of_a_listing_takes_the_advertised_separator(mock_client):
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, json={"namespaces": []})

    c = mock_client(handler, prefix="dev")
    Catalog(c).list_namespaces(("a", "b.c"))
    assert seen[-1].url.raw_path.decode() == "/v1/dev/namespaces?parent=a%1Fb.c"
    c.set_namespace_separator("%2E")
    Catalog(c).list_namespaces(("a", "b"))
    assert seen[-1].url.raw_path.decode() == "/v1/dev/namespaces?parent=a%2Eb"


def test_the_one_namespace_codec():
    """What the plugin's own encoder did (quote the levels joined by 0x1F) is what ns_path does, also for a level
    with a dot in it, a space, a slash or a percent sign; a dotted string is the one form that means levels."""
    for parts in [("a",), ("a", "b"), ("a.b",), ("a.b", "c"), ("b c", "d/e", "f%g", "ü")]:
        from urllib.parse import quote

        assert ns_path(parts) == quote("\x1f".join(parts), safe="")
    assert ns_path("a.b") == "a%1Fb" and ns_path(["a.b"]) == "a.b"


def test_drop_tree_removes_everything_below_and_nothing_beside(ctx):
    cat = Catalog(ctx.client)
    root = ctx.namespace + ("tree",)
    keep = ctx.namespace + ("keep",)
    for ns in (root, root + ("child",), root + ("child", "grandchild"), root + ("dot.ted",), keep):
        cat.create_namespace(ns)
    cat.create_table(root, "t")
    cat.create_table(root + ("child", "grandchild"), "t2")
    cat.create_view(root + ("dot.ted",), "v")
    cat.create_table(keep, "kept")
    assert drop_tree(ctx.client, root) == []
    assert cat.namespace_state(root) is None and cat.namespace_state(root + ("dot.ted",)) is None
    assert cat.list_namespaces(ctx.namespace) == [keep]
    assert cat.list_tables(keep) == ["kept"]


def test_drop_tree_keeps_the_root_when_asked_and_says_what_it_could_not_drop(ctx, monkeypatch):
    cat = Catalog(ctx.client)
    root = ctx.namespace + ("tree",)
    cat.create_namespace(root)
    cat.create_table(root, "t")
    assert drop_tree(ctx.client, list(root), keep_root=True) == []
    assert cat.namespace_state(root) == {"properties": {}} and cat.list_tables(root) == []
    cat.create_table(root, "t")
    problems = drop_tree(ctx.client, root, budget=0)          # no request left: nothing is listed or dropped
    assert problems and all("cleanup budget" in p or "namespace" in p for p in problems)


def test_listings_on_the_reference_catalog(ctx):
    cat = Catalog(ctx.client)
    cat.create_namespace(ctx.namespace + ("b c",))
    assert ctx.namespace in cat.list_namespaces()
    assert cat.list_namespaces(ctx.namespace) == [ctx.namespace + ("b c",)]
    assert cat.list_tables(ctx.namespace + ("b c",)) == [] and cat.list_views(ctx.namespace + ("b c",)) == []
