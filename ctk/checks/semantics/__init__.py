"""Catalog semantics: every behaviour of Iceberg's REST compatibility kit (``CatalogTests``,
``ViewCatalogTests``) that can be observed over REST, as the kit's requirements (areas namespaces, tables,
listing, evolution, transactions, views, types), judged by status, error type and state read back.

Importing this package registers the checks of every area (``SEMANTIC_CHECKS``) and installs the baseline gate
(``baseline.install``): the retry checks of a mutation endpoint run only on top of its plain operation seen to
work. ``docs/rck-coverage.md`` (``ctk rck-coverage``) maps every compatibility-kit test to these checks.
"""

from __future__ import annotations

import importlib

from ctk.checks.semantics import baseline
from ctk.checks.semantics.harness import SemRun, SetupBroken, run_semantic
from ctk.checks.semantics.registry import SEMANTIC_CHECKS, SemanticCheck, baselines, semantic, semantic_checks

AREA_MODULES = ("namespaces", "tables", "listing", "evolution", "transactions", "views")

for _name in AREA_MODULES:
    try:
        importlib.import_module(f"ctk.checks.semantics.{_name}")
    except ModuleNotFoundError as _exc:   # an area not written yet
        if _exc.name != f"ctk.checks.semantics.{_name}":
            raise

baseline.install()

__all__ = ["SEMANTIC_CHECKS", "SemRun", "SemanticCheck", "SetupBroken", "baselines", "run_semantic", "semantic",
           "semantic_checks"]
