"""The objects every check uses are typed, so a reader or a tool follows a catalog URL or an Idempotency-Key
from the plugin to the HTTP request: session -> context -> case -> client."""

from __future__ import annotations

import typing

from ctk.checks.context import CheckContext
from ctk.client.transport import CatalogClient
from ctk.catalog import AdvertisedEndpoints, Case, CaseContext, Endpoint
from ctk.plugin.session import CtkSession
from ctk.client.discovery import Discovery


def _protocol_members(proto: type) -> set[str]:
    return {n for n in vars(proto) if not n.startswith("_")} | set(getattr(proto, "__annotations__", {}))


def test_the_check_context_names_its_client_and_discovery():
    hints = typing.get_type_hints(CheckContext)
    assert hints["client"] is CatalogClient
    assert hints["discovery"] == Discovery | None
    assert typing.Any not in hints.values()


def test_the_check_context_and_discovery_are_what_cases_take():
    assert _protocol_members(CaseContext) <= set(dir(CheckContext)) | set(typing.get_type_hints(CheckContext))
    assert _protocol_members(AdvertisedEndpoints) <= set(dir(Discovery)) | set(typing.get_type_hints(Discovery))


def test_a_case_sends_through_a_catalog_client_and_is_built_from_a_case_context():
    assert typing.get_type_hints(Case.send)["client"] is CatalogClient
    assert typing.get_type_hints(Endpoint.prepare)["ctx"] is CaseContext


def test_the_session_holds_typed_parts():
    source = typing.get_type_hints(CtkSession._make_context)
    assert source["return"] is CheckContext


def test_the_central_objects_are_never_any_where_they_are_passed():
    """A check context, a case, a check run, an endpoint, an interposer or a database link is passed with its
    type (CheckContext, Case, Run, Endpoint, Interposer, DbLink), so an editor follows it; `Any` stays for
    arbitrary JSON and for third-party objects (a schemathesis case in ctk/fuzzing/openapi_run.py)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "ctk"
    central = {"ctx", "case", "run", "endpoint", "ip", "interposer", "db_interposer", "db_link", "link", "history"}
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                for arg in a.posonlyargs + a.args + a.kwonlyargs:
                    if arg.arg in central and arg.annotation is not None and ast.unparse(arg.annotation) == "Any":
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}({arg.arg}: Any)")
    schemathesis_cases = [f for f in found if f.startswith("ctk/fuzzing/openapi_run.py") and "(case: Any)" in f]
    assert sorted(set(found) - set(schemathesis_cases)) == []
