"""docs/assertion-trace.md traces every assertion of the catalog-semantics checks to the sentence that states it
(issue 34 item 3), and says what the registry says."""

import os
import re
from pathlib import Path

import pytest
import yaml

import ctk.checks.semantics  # noqa: F401 - registers the semantic checks
from ctk.checks.semantics import registry, trace
from ctk.checks.semantics.registry import semantic_checks, untraced
from ctk.reporting import assertion_trace

PAGE = Path(__file__).resolve().parents[2] / "docs" / "assertion-trace.md"
UPSTREAM = Path(os.environ.get("CTK_UPSTREAM_SPEC", Path(__file__).resolve().parents[3] / "shared" / "reference"
                               / "iceberg-rest-catalog-open-api.yaml"))


def test_every_semantic_check_declares_an_assertion_with_a_source():
    assert len(semantic_checks()) >= 76
    assert not untraced(), "\n".join(untraced())
    for c in semantic_checks():
        assert c.asserts and any(a.source != "none" for a in c.asserts), c.id


def test_an_untraced_check_is_found(monkeypatch):
    name = semantic_checks()[0].name
    monkeypatch.setattr(trace, "TRACE", {k: v for k, v in trace.TRACE.items() if k != name})
    assert any(name in p and "no assertion" in p for p in untraced())
    monkeypatch.setattr(trace, "TRACE", {**trace.TRACE, "no-such-check": (trace.note("x", "y"),),
                                         name: (trace.rck("x", "CatalogTests.testNothing", "q"),)})
    found = untraced()
    assert any("no-such-check" in p for p in found) and any("testNothing" in p for p in found), found
    monkeypatch.setattr(trace, "TRACE", {**trace.TRACE, name: (trace.Assertion("x", "none", "", "y", "status"),)})
    assert any("only be a note" in p for p in untraced())


def test_the_page_is_what_the_registry_generates():
    assert PAGE.read_text(encoding="utf-8") == assertion_trace.render_markdown(), (
        "docs/assertion-trace.md differs from the registry: run `ctk assertion-trace -o docs/assertion-trace.md`")
    for c in semantic_checks():
        assert f"`{c.id}`" in PAGE.read_text(encoding="utf-8")


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _strings(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            out.append(str(k))
            _strings(v, out)
    elif isinstance(node, list):
        for v in node:
            _strings(v, out)
    elif isinstance(node, str):
        out.append(_norm(node))
    return out


@pytest.mark.skipif(not UPSTREAM.is_file(), reason=f"upstream spec not present at {UPSTREAM}")
def test_every_spec_quote_is_the_documents_text():
    """Each piece of a spec quote (between [..]) stands in one text of the merged OpenAPI document."""
    texts = _strings(yaml.safe_load(UPSTREAM.read_text(encoding="utf-8")), [])
    missing = []
    for name, items in trace.TRACE.items():
        for a in items:
            if a.source != "spec":
                continue
            quote = re.sub(r"^(ServerErrorResponse|BadRequestErrorResponse): ", "", a.quote)
            for piece in (p.strip() for p in quote.split("[..]")):
                if piece and not any(_norm(piece) in t for t in texts):
                    missing.append(f"{name}: {piece[:120]!r}")
    assert not missing, "spec quotes not found in the merged document:\n" + "\n".join(missing)


def test_registry_reads_the_trace():
    c = semantic_checks()[0]
    assert c.asserts == trace.trace_of(c.name) and registry.SEMANTIC_CHECKS[c.name] is c
