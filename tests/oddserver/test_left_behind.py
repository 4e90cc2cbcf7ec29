"""Issue 34 item 6 ("Left behind"): what a run leaves on a catalog is removed or said, exactly.

Seen on real catalogs: a createTable into a namespace that does not exist answered 200 and stored the table with
no namespace (`tables_without_namespace`: no listing shows it; deleting it by name works) - 3 tables per run,
reported only as "namespace ...: 400", and `ctk cleanup` missed them; a table named ``ctk/slash`` the catalog
accepts and can never load or drop (`slash_names_stuck`), left by the names probe; and, where drops do nothing
(`drops_do_nothing`), the preflight session's namespace and its nesting probe went unreported.

The run's own cleanup now drops by name what a catalog stored in the namespaces the kit used as missing ones
(``ctk_absent_{n}``, objects named ``ctk_stray``), the names probe drops its tables at once and names what stays,
the preflight's cleanup problems are the run's, and `ctk cleanup` finds those tables too (by the kit's names, below
a run namespace carrying the kit's marker).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from urllib.parse import unquote

import httpx
import pytest
from odd import Answer, OddServer, Req, Rule

from ctk.cli import main

HIDDEN = "odd.hidden"


class tables_without_namespace(Rule):
    """A createTable / createView / renameTable into a namespace that does not exist answers as if it did: the
    object is stored (upstream the namespace is made, marked hidden), while the namespace itself stays unknown -
    listings leave it out, loading or dropping it answers 404. The object's own paths work."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream
        self.hidden: set[tuple[str, ...]] = set()

    def _make(self, levels: list[str]) -> None:
        if tuple(levels) in self.hidden:
            return
        r = httpx.get(f"{self.upstream}/v1/namespaces/{'%1F'.join(levels)}", timeout=10)
        if r.status_code == 404:
            httpx.post(f"{self.upstream}/v1/namespaces", timeout=10,
                       json={"namespace": levels, "properties": {HIDDEN: "1"}}).raise_for_status()
            with self.lock:
                self.hidden.add(tuple(levels))
            self.hit()

    def before(self, req: Req) -> Answer | None:
        m = re.search(r"/namespaces/([^/?]+)(/tables|/views)?$", req.path)
        levels = unquote(m.group(1)).split("\x1f") if m else None
        if m and req.method == "POST" and m.group(2):
            self._make(levels or [])
        if req.is_("POST", r"/tables/rename$") or req.is_("POST", r"/views/rename$"):
            dest = (req.json() or {}).get("destination") or {}
            if isinstance(dest.get("namespace"), list) and dest["namespace"]:
                self._make(dest["namespace"])
        if m and not m.group(2) and levels and tuple(levels) in self.hidden and req.method in ("GET", "HEAD",
                                                                                                "DELETE", "POST"):
            return Answer.of(404, {"error": {"message": f"Namespace does not exist: {'.'.join(levels)}",
                                             "type": "NoSuchNamespaceException", "code": 404}})
        return None

    def after(self, req: Req, answer: Answer) -> Answer | None:
        m = re.search(r"/namespaces/([^/?]+)/(tables|views)/[^/?]+$", req.path)
        levels = tuple(unquote(m.group(1)).split("\x1f")) if m else ()
        if req.method == "DELETE" and levels in self.hidden and 200 <= answer.status < 300:
            where = f"{self.upstream}/v1/namespaces/{m.group(1) if m else ''}"
            if not any(httpx.get(f"{where}/{kind}", timeout=10).json().get("identifiers") for kind in ("tables", "views")):
                httpx.delete(where, timeout=10)     # its last object gone: nothing is left of it
                with self.lock:
                    self.hidden.discard(levels)
        if req.is_("GET", r"/namespaces$") and answer.status == 200:
            body = answer.json() or {}
            kept = [ns for ns in body.get("namespaces") or [] if tuple(ns) not in self.hidden]
            if len(kept) != len(body.get("namespaces") or []):
                return Answer.of(200, {**body, "namespaces": kept})
        return None


class slash_names_stuck(Rule):
    """A table whose name holds '/' is created (200) and listed, but every path to it answers 404 (a router that
    splits on the decoded slash): it can never be loaded or dropped."""

    def before(self, req: Req) -> Answer | None:
        if re.search(r"/tables/[^/?]*%2F", req.path, re.I):
            self.hit()
            return Answer.of(404, {"error": {"message": "Table does not exist", "type": "NoSuchTableException",
                                             "code": 404}})
        return None


class drops_do_nothing(Rule):
    """Every DELETE of a namespace, table or view answers 204 and drops nothing."""

    def before(self, req: Req) -> Answer | None:
        if req.method == "DELETE" and "/namespaces/" in req.path:
            self.hit()
            return Answer(204, [], b"")
        return None


def everything(upstream: str, names: dict[str, str] | None = None) -> set[str]:
    """Every namespace, table and view the catalog behind the odd server has, hidden ones included, read from
    the reference directly: namespaces as their levels joined by '.', objects as namespace + '.' + name (and
    in ``names``, item -> the object's name)."""
    names = {} if names is None else names
    out: set[str] = set()
    todo: list[tuple[str, ...]] = [()]
    while todo:
        parent = todo.pop()
        params = {"parent": "\x1f".join(parent)} if parent else None
        for ns in httpx.get(f"{upstream}/v1/namespaces", params=params, timeout=10).json()["namespaces"]:
            out.add(".".join(ns))
            todo.append(tuple(ns))
            for kind in ("tables", "views"):
                r = httpx.get(f"{upstream}/v1/namespaces/{'%1F'.join(ns)}/{kind}", timeout=10)
                for i in r.json().get("identifiers") or []:
                    out.add(".".join(ns) + "." + i["name"])
                    names[".".join(ns) + "." + i["name"]] = i["name"]
    return out


SELECTION = "NS-05 or TBL-02 or TBL-07 or VIEW-02 or VIEW-04 or TBL-10"


def run_kit(tmp_path, url: str, *extra: str) -> tuple[dict, str]:
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--catalog-url", url,
                             "-k", SELECTION, "-p", "no:html", "--ctk-reports", "rep", *extra],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    report = tmp_path / "rep" / "conformance.json"
    assert report.exists(), result.stdout[-3000:] + result.stderr[-2000:]
    return json.loads(report.read_text()), result.stdout


def named(left: set[str], problems: list[str], names: dict[str, str]) -> set[str]:
    """What was left and is named in no cleanup problem: a namespace by its levels (joined by '.', or as their
    list), a table or view by its namespace and name (``names``: item -> its own name, which may hold '.' or '/')."""
    text = "\n".join(problems)

    def said(item: str) -> bool:
        if item in names:
            ns = item[: -len(names[item]) - 1]
            return f"{ns}.{names[item]}" in text or f"{ns}.{names[item]!r}" in text
        return item in text or str(item.split(".")) in text
    return {item for item in left if not said(item)}


def lenient_catalog(start_catalog, also) -> tuple[list, str, str, set[str]]:
    """The reference behind an odd server storing what is created where no namespace is, plus rule ``also``; no
    control API: (its rules, the front's URL, the reference's URL, everything the reference holds before)."""
    rules: list = []
    ctx = start_catalog(front=lambda up: OddServer(up, rules.extend([tables_without_namespace(up), also]) or rules),
                        control_api=False)
    return rules, ctx.test_front.url, ctx.test_front.upstream, everything(ctx.test_front.upstream)


def test_a_run_removes_what_a_lenient_catalog_stored_nowhere_listed(tmp_path, start_catalog):
    rules, url, upstream, before = lenient_catalog(start_catalog, slash_names_stuck())
    data, out = run_kit(tmp_path, url)
    assert rules[0].hits >= 3 and rules[1].hits >= 1, (rules[0].hits, rules[1].hits, out[-3000:])
    names: dict[str, str] = {}
    left = everything(upstream, names) - before
    problems = data["cleanup_problems"]
    # what a createTable stored where no namespace is: gone (the namespace with it)
    assert not [i for i in left if "ctk_stray" in i] and not rules[0].hidden, (left, rules[0].hidden)
    # the table no path reaches stays, named exactly, with the probe that made it; so do the namespaces holding it
    stuck = [item for item in left if item.endswith("ctk/slash")]
    assert len(stuck) == 1 and named(left, problems, names) == set(), (left, problems)
    assert any("ctk/slash" in p and "names probe" in p for p in problems), problems
    assert "cleanup problem" in out and "ctk/slash" in out


def test_where_drops_do_nothing_everything_left_is_said(tmp_path, start_catalog):
    """Drops that do nothing leave all; every namespace and table of the kit left is named in cleanup_problems -
    the preflight session's (the xdist controller's trial of the target) and the tables stored where no namespace
    is listed included."""
    rules, url, upstream, before = lenient_catalog(start_catalog, drops_do_nothing())
    data, out = run_kit(tmp_path, url, "-n", "1")
    names: dict[str, str] = {}
    left = everything(upstream, names) - before
    assert any("_preflight" in item for item in left) and rules[0].hidden, (left, rules[0].hidden)
    assert any("ctk_stray" in item for item in left), left
    visible = {item for item in left if not any(item == ".".join(ns) for ns in rules[0].hidden)}
    missed = named(visible, data["cleanup_problems"], names)
    assert missed == set(), "\n".join(sorted(missed)) + "\n---\n" + "\n".join(data["cleanup_problems"])


def test_ctk_cleanup_finds_tables_where_no_namespace_is(start_catalog, capsys):
    """After a run that could not clean up: the run namespace (marked) is listed, its tables in namespaces that
    do not exist are not; `ctk cleanup` drops them by the kit's names, and leaves another's alone."""
    rules: list = []
    ctx = start_catalog(front=lambda up: OddServer(up, rules.append(tables_without_namespace(up)) or rules),
                        control_api=False)
    url, upstream = ctx.test_front.url, ctx.test_front.upstream
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    for run, props in (("ctk_dead0001_gw0", {"ctk.run-id": "dead0001"}), ("ctk_dead0002_gw0", {"ctk.run-id": "x"})):
        assert httpx.post(f"{url}/v1/namespaces", json={"namespace": [run], "properties": props},
                          timeout=10).status_code == 200
        for where in (f"{run}%1Fctk_absent_3", f"{run}_ctk_absent_1"):
            r = httpx.post(f"{url}/v1/namespaces/{where}/tables", json={"name": "ctk_stray", "schema": schema},
                           timeout=10)
            assert r.status_code == 200, r.text
    assert len(rules[0].hidden) == 4
    assert main(["cleanup", "--catalog-url", url]) == 0
    out = capsys.readouterr()
    left = everything(upstream)
    assert not rules[0].hidden - {ns for ns in rules[0].hidden if "dead0002" in ns[0]}
    assert not {i for i in left if "dead0001" in i}, (left, out.out, out.err)
    assert {"ctk_dead0002_gw0.ctk_absent_3.ctk_stray", "ctk_dead0002_gw0_ctk_absent_1.ctk_stray"} <= left
