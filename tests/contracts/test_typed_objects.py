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
