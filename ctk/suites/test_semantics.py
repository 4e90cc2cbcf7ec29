"""Catalog semantics (NS-*, TBL-*, LIST-*, EVO-*, TXN-*, VIEW-*, V3-*): what Iceberg's REST compatibility kit
checks of a catalog, observed over REST with plain requests (no key, no fault), capability-aware. One test per
check; its id is the requirement and the check's name (``-k NS-06``, ``-k drop-empty-namespace``)."""

import pytest

from ctk.checks.semantics import run_semantic, semantic_checks

CHECKS = semantic_checks()


@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_semantics(ctk_context, check):
    return run_semantic(ctk_context, check)
