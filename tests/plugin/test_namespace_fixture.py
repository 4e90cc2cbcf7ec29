"""The `ctk_namespace` fixture: a str of the run namespace's levels joined by '.' (as it always was), with
the unambiguous ``levels`` tuple, ``child()`` and the URL form ``path``. Under ``--ctk-parent-namespace a.b``
a user's test reaches its run namespace, nests below it and creates a table in it through ``levels`` and
``path``; the dotted string alone names a different, single-level namespace."""

from __future__ import annotations

import httpx
import pytest

from ctk.plugin.fixtures import RunNamespace

USES_LEVELS = """
import pytest

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}

def test_levels(ctk_client, ctk_namespace):
    ns = ctk_namespace
    assert ns.levels[:-1] == PARENT and ns.levels[-1].startswith("ctk_")
    assert ns == ".".join(ns.levels)                       # the old string, for display and old users
    assert ctk_client.request("GET", f"namespaces/{ns.path}").status == 200
    assert ctk_client.request("POST", "namespaces", json={"namespace": list(ns.child("kid"))}).status == 200
    assert ctk_client.request("POST", f"namespaces/{ns.path}/tables",
                              json={"name": "t", "schema": SCHEMA}).status == 200
    print("RUN-NAMESPACE", list(ns.levels))
"""


def _run(pytester: pytest.Pytester, url: str, parent: tuple[str, ...]) -> pytest.RunResult:
    pytester.makepyfile(test_levels=f"PARENT = {parent!r}\n" + USES_LEVELS)
    args = ["test_levels.py", "--catalog-url", url, "-s", "-p", "no:html", "--ctk-reports", "rep"]
    if parent:
        args += ["--ctk-parent-namespace", ".".join(parent)]
    return pytester.runpytest(*args)


def test_levels_under_a_two_level_parent(pytester: pytest.Pytester, reference_url):
    for levels in (["team"], ["team", "bronze"]):
        assert httpx.post(f"{reference_url}/v1/namespaces", json={"namespace": levels}, timeout=10).status_code == 200
    try:
        result = _run(pytester, reference_url, ("team", "bronze"))
        result.assert_outcomes(passed=1)
        assert "RUN-NAMESPACE ['team', 'bronze', 'ctk_" in result.stdout.str()
        left = httpx.get(f"{reference_url}/v1/namespaces", params={"parent": "team\x1fbronze"}, timeout=10).json()
        assert left["namespaces"] == []                        # the run namespace and its child went
    finally:
        for levels in (["team", "bronze"], ["team"]):
            httpx.delete(f"{reference_url}/v1/namespaces/{'%1F'.join(levels)}", timeout=10)


def test_top_level_run_namespace_is_one_level(pytester: pytest.Pytester, reference_url):
    result = _run(pytester, reference_url, ())
    result.assert_outcomes(passed=1)


def test_run_namespace_value():
    ns = RunNamespace(("a.b", "ctk_1a2b3c4d_gw0"))         # a level holding a dot
    assert ns == "a.b.ctk_1a2b3c4d_gw0" and isinstance(ns, str)
    assert ns.levels == ("a.b", "ctk_1a2b3c4d_gw0") != RunNamespace(("a", "b", "ctk_1a2b3c4d_gw0")).levels
    assert ns.child("c") == ("a.b", "ctk_1a2b3c4d_gw0", "c")
    assert ns.path == "a.b%1Fctk_1a2b3c4d_gw0"
    top = RunNamespace(["ctk_x_main"])
    assert [top, "child"] == ["ctk_x_main", "child"] and f"namespaces/{top}/tables" == f"namespaces/{top.path}/tables"
    for bad in ((), ("a", ""), ("a", None)):
        with pytest.raises(ValueError, match="non-empty levels"):
            RunNamespace(bad)
