"""Placement on real catalogs: --ctk-parent-namespace (option and ini key), the nesting probe, run-unique
siblings where the target cannot nest, cleanup of exactly what the kit made, and the advertised separator."""

from __future__ import annotations

import httpx
import pytest

from ctk.client.placement import Placement
from ctk.plugin import namespace as nsmod
from ctk.plugin.options import CtkOptions, OptionError, parse_parent_namespace, parse_properties
from ctk.plugin.session import CtkSession, advertised_separator


# ------------------------------------------------------------------------------------------------ options

def test_parent_namespace_and_catalog_properties_parse():
    assert parse_parent_namespace("bronze") == ("bronze",)
    assert parse_parent_namespace(" a.b ") == ("a", "b")
    assert parse_parent_namespace(None) == () and parse_parent_namespace("") == ()
    for bad in ("a..b", ".a", "a."):
        with pytest.raises(OptionError, match="--ctk-parent-namespace"):
            parse_parent_namespace(bad)
    assert parse_properties(["s3.endpoint=http://127.0.0.1:9000", "s3.region = us-east-1", "k=a=b"]) == {
        "s3.endpoint": "http://127.0.0.1:9000", "s3.region": "us-east-1", "k": "a=b"}
    for bad in ("novalue", "=x"):
        with pytest.raises(OptionError, match="--catalog-property expects K=V"):
            parse_properties([bad])


PROBE = """
from ctk.plugin.state import get_options

def test_probe(request):
    o = get_options(request.config)
    print("PARENT", o.parent_namespace, "PROPS", sorted(o.catalog_properties.items()))
"""


def test_options_and_ini_keys_reach_the_settings(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", "test_probe.py", "--catalog-url", "http://127.0.0.1:9", "-p", "no:html",
                                "--ctk-parent-namespace", "a.b", "--catalog-property", "s3.endpoint=http://127.0.0.1:1",
                                "--catalog-property", "s3.region=us-east-1")
    result.assert_outcomes(passed=1)
    assert "PARENT ('a', 'b') PROPS [('s3.endpoint', 'http://127.0.0.1:1'), ('s3.region', 'us-east-1')]" \
        in result.stdout.str()
    pytester.makeini("[pytest]\nctk_parent_namespace = bronze\nctk_catalog_properties =\n"
                     "    s3.endpoint=http://127.0.0.1:2\n    s3.access-key-id=ak\n")
    result = pytester.runpytest("-s", "test_probe.py", "--catalog-url", "http://127.0.0.1:9", "-p", "no:html")
    result.assert_outcomes(passed=1)
    assert "PARENT ('bronze',) PROPS [('s3.access-key-id', 'ak'), ('s3.endpoint', 'http://127.0.0.1:2')]" \
        in result.stdout.str()


def test_bad_property_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("test_probe.py", "--catalog-url", "http://127.0.0.1:9", "-p", "no:html",
                                "--catalog-property", "s3.endpoint")
    assert result.ret != 0
    assert "--catalog-property expects K=V" in result.stderr.str()


# ------------------------------------------------------------------------------------- nesting probe

class _Ex:
    def __init__(self, status, body=None):
        self.status, self.error, self.url, self.response_body = status, None, "http://127.0.0.1/x", ""
        self._body = body

    def json(self):
        return self._body


class _Scripted:
    """A client answering (method, path-start) with scripted statuses; records what was asked."""

    def __init__(self, answers):
        self.answers, self.asked = answers, []

    def request(self, method, path, json=None, label=None, **kw):
        self.asked.append((method, path))
        for (m, p), status in self.answers.items():
            if m == method and path.startswith(p):
                return _Ex(status, {"namespaces": []})
        return _Ex(404)


def test_probe_created_but_not_loadable_means_no_nesting_and_is_dropped():
    c = _Scripted({("POST", "namespaces"): 200, ("GET", "namespaces/"): 404, ("DELETE", "namespaces/"): 204})
    nested, note = nsmod.probe_nesting(c, ("bronze", "run"))
    assert nested is False and "answered 200, but loading it answered 404" in note
    assert ("DELETE", "namespaces/bronze%1Frun%1Fctk_nesting_probe") in c.asked   # it created it, so it drops it


def test_probe_loadable_means_nesting():
    c = _Scripted({("POST", "namespaces"): 200, ("GET", "namespaces/"): 200, ("DELETE", "namespaces/"): 204})
    assert nsmod.probe_nesting(c, ("run",)).nested is True


def test_probe_refused_means_no_nesting_and_drops_nothing():
    c = _Scripted({("POST", "namespaces"): 400})
    nested, note = nsmod.probe_nesting(c, ("run",))
    assert nested is False and "400" in note
    assert not any(m == "DELETE" for m, _ in c.asked)


def test_placement_children_or_registered_siblings():
    p = Placement(("bronze", "ctk_1_main"), nested=True)
    assert p.child("ns_1") == ("bronze", "ctk_1_main", "ns_1") and p.siblings == []
    p = Placement(("bronze", "ctk_1_main"), nested=False)
    assert p.child("ns_1") == ("bronze", "ctk_1_main_ns_1")
    assert p.siblings == [("bronze", "ctk_1_main_ns_1")]
    assert p.owns(("bronze", "ctk_1_main_ns_1")) and p.owns(("bronze", "ctk_1_main", "t"))
    assert not p.owns(("bronze",)) and not p.owns(("bronze", "other"))


def test_advertised_separator_overrides_win():
    class D:
        overrides = {"namespace-separator": "%2E"}
        defaults = {"namespace-separator": "%1F"}

    assert advertised_separator(D()) == "%2E"
    D.overrides = {}
    assert advertised_separator(D()) == "%1F"
    D.defaults = {}
    assert advertised_separator(D()) is None


# --------------------------------------------------------------------------- sessions on a live target

def _top(url: str) -> list[list[str]]:
    return httpx.get(f"{url}/v1/namespaces", timeout=10).json()["namespaces"]


def _children(url: str, parent: str) -> list[list[str]]:
    return httpx.get(f"{url}/v1/namespaces", params={"parent": parent}, timeout=10).json()["namespaces"]


def test_run_namespace_inside_the_parent_and_removed_alone(reference_url):
    assert httpx.post(f"{reference_url}/v1/namespaces", json={"namespace": ["bronze"]}, timeout=10).status_code == 200
    before = _top(reference_url)
    s = CtkSession(CtkOptions(catalog_url=reference_url, parent_namespace=("bronze",)), run_id="r1")
    s.start()
    try:
        assert s.error is None, s.error
        assert s.namespace_parts == ("bronze", "ctk_r1_main") and s.namespace == "bronze.ctk_r1_main"
        assert tuple(s.context.namespace) == s.namespace_parts
        assert s.placement.nested is True
        assert [["bronze", "ctk_r1_main"]] == _children(reference_url, "bronze")
        # a check's namespace is a child of the run namespace
        from ctk.catalog import child_namespace

        assert child_namespace(s.context, "ns")[:2] == ("bronze", "ctk_r1_main")
    finally:
        s.stop()
    assert s.cleanup_problems == []
    assert _children(reference_url, "bronze") == []          # the run namespace went
    assert _top(reference_url) == before                     # the parent stayed, nothing else touched


def test_missing_parent_is_a_clear_error_and_nothing_is_created(reference_url):
    before = _top(reference_url)
    s = CtkSession(CtkOptions(catalog_url=reference_url, parent_namespace=("nope", "x")), run_id="r2")
    s.start()
    try:
        assert s.error and "parent namespace 'nope.x'" in s.error and "does not exist" in s.error
        assert not s.namespace_created
    finally:
        s.stop()
    assert _top(reference_url) == before


def test_without_nesting_cases_use_registered_siblings_and_cleanup_drops_exactly_them(reference_url):
    """A target that cannot nest (simulated by the probe's answer): createNamespace cases land next to the run
    namespace under run-unique names, and cleanup drops those and nothing else."""
    from ctk.checks.idempotency import check_finalized_duplicate
    from ctk.catalog import get_endpoint

    assert httpx.post(f"{reference_url}/v1/namespaces", json={"namespace": ["silver"]}, timeout=10).status_code == 200
    assert httpx.post(f"{reference_url}/v1/namespaces", json={"namespace": ["silver", "keep"]},
                      timeout=10).status_code == 200
    s = CtkSession(CtkOptions(catalog_url=reference_url, parent_namespace=("silver",)), run_id="r3")
    s.start()
    try:
        assert s.error is None, s.error
        s.placement.nested = False       # as if the probe had seen a 200 that cannot be loaded
        verdicts = check_finalized_duplicate(s.context, get_endpoint("createNamespace"))
        assert verdicts and all(v.status.value == "pass" for v in verdicts), [v.message for v in verdicts]
        assert s.placement.siblings and all(ns[0] == "silver" and ns[1].startswith("ctk_r3_main_")
                                            and len(ns) == 2 for ns in s.placement.siblings)
        made = [n for n in _children(reference_url, "silver") if n[1].startswith("ctk_r3_main_")]
        assert made, "the createNamespace case made its namespaces as siblings"
    finally:
        s.stop()
    assert s.cleanup_problems == []
    assert _children(reference_url, "silver") == [["silver", "keep"]]   # only what the kit made went


def test_advertised_separator_is_used_end_to_end(reference_url):
    """A catalog that advertises `namespace-separator: %2E` and does not understand %1F (a proxy in front of the
    reference catalog translates): the session, the checks and the real client all use %2E."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oddserver"))
    import odd

    class dot_separator(odd.Rule):
        seen_dots = 0    # namespace segments that came with the advertised %2E

        def before(self, req):
            if "%1F" in req.path.upper() or "%1F" in req.query.upper():
                self.hit()
                return odd.Answer.of(400, {"error": {"message": "this catalog separates levels with %2E",
                                                     "type": "BadRequestException", "code": 400}})
            # a server decodes the namespace segment and splits it at ".": "%2E" (the kit, as Java sends the
            # advertised form) and a raw "." (pyiceberg) mean the same; the reference behind wants %1F
            def seg(m):
                self.seen_dots += "%2E" in m.group(2).upper()
                return m.group(1) + re.sub(r"%2[Ee]|\.", "%1F", m.group(2))

            req.path = re.sub(r"(/namespaces/)([^/?]+)", seg, req.path)
            req.query = re.sub(r"(parent=)([^&]+)", seg, req.query)
            return None

        def after(self, req, answer):
            if req.is_("GET", r"/v1/config$") and answer.status == 200:
                body = answer.json()
                body.setdefault("overrides", {})["namespace-separator"] = "%2E"
                return odd.Answer.of(200, body)
            return None

    import re

    from ctk.checks import concurrency, real_client

    assert httpx.post(f"{reference_url}/v1/namespaces", json={"namespace": ["gold"]}, timeout=10).status_code == 200
    rule = dot_separator()
    with odd.OddServer(reference_url, [rule]) as proxy:
        s = CtkSession(CtkOptions(catalog_url=proxy.url, parent_namespace=("gold",)), run_id="r4")
        s.start()
        try:
            assert s.error is None, s.error
            assert s.client.namespace_separator == "%2E" and s.placement.nested is True
            verdicts = concurrency.check_serial_appends(s.context, 2, 2) + real_client.check_pyiceberg(s.context)
            assert all(v.status.value == "pass" for v in verdicts), \
                [(v.requirement, v.details.get("error"), v.message[:2000]) for v in verdicts if v.status.value != "pass"]
        finally:
            s.stop()
        assert s.cleanup_problems == []
    assert rule.hits == 0, "a request used %1F although the catalog advertised %2E"
    assert rule.seen_dots > 10
    assert _children(reference_url, "gold") == []
