"""Catalog cases and state: the operations the kit exercises, built over the client layer.

``bodies``        request bodies (pyiceberg models where pyiceberg has them)
``facade``        `Catalog`: prerequisites over plain HTTP, listings (`pages`, the one pagination routine),
                  `drop_tree`
``state``         the one reader of namespace / table / view state, and the deltas that count executions
``cases``         the case model (`Req`, `Conflict`, `Case`, `Endpoint`), the registry `ENDPOINTS` and the
                  `case` decorator that takes method, path and header from the OpenAPI document
``namespaces``, ``tables``, ``views``, ``transactions``, ``planning``: the cases of each area

Importing the package imports every area, so `ENDPOINTS` holds every case (in this order).
"""

from ctk.catalog.bodies import (create_table_body, create_view_body, ident, schema, set_properties_commit,
                                set_properties_update, view_version)
from ctk.catalog.cases import (ENDPOINTS, AdvertisedEndpoints, Case, CaseContext, CatalogSpecError, Conflict,
                               Endpoint, Req, case, get_endpoint)
from ctk.catalog.facade import Catalog, drop_tree, pages
from ctk.catalog.state import MARK, body_identity
from ctk.client.errors import PrerequisiteError

from ctk.catalog import namespaces, tables, transactions, views, planning  # noqa: E402,I001 - registers, in order
from ctk.catalog.namespaces import child_namespace
from ctk.catalog.planning import Plans, append_file, plan_scan

__all__ = ["ENDPOINTS", "AdvertisedEndpoints", "Case", "CaseContext", "Catalog", "CatalogSpecError", "Conflict",
           "Endpoint", "MARK", "Plans", "PrerequisiteError", "Req", "append_file", "body_identity", "case",
           "child_namespace", "create_table_body", "create_view_body", "drop_tree", "get_endpoint", "ident",
           "namespaces", "pages", "plan_scan", "planning", "schema", "set_properties_commit", "set_properties_update",
           "tables", "transactions", "view_version", "views"]
