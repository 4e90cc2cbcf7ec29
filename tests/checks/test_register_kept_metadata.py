"""Issue 19 item 2: registerTable / registerView register the metadata file of an object the kit has just
dropped. The spec does not promise that file stays (Iceberg's own catalogs delete a dropped view's metadata), so
the kit keeps a copy through its own storage and writes it back after each drop of the case. Under the
reference variant `drop-deletes-metadata` (a drop deletes the metadata files) the registration checks are
decided, as on the default reference; without the kept copy they were not."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ctk.catalog import tables
from ctk.checks import run_endpoint_checks
from ctk.core.verdicts import Status

BEHAVIOURS = ["finalized-duplicate", "terminal-4xx-replayed", "payload-mismatch", "lost-answer"]
VARIANT = "drop-deletes-metadata"


def _file(location: str) -> Path:
    return Path(urlsplit(location).path if location.startswith("file:") else location)


def test_the_variant_deletes_a_dropped_objects_metadata(make_ctx):
    """What such a catalog does: after dropView, and dropTable without purge, the metadata file is gone (the
    default reference keeps it)."""
    for variant, gone in ((VARIANT, True), (None, False)):
        ctx = make_ctx(variant=variant)
        ns = tuple(ctx.namespace)
        view = _file(ctx.catalog.create_view(ns, "v")["metadata-location"])
        table = _file(ctx.catalog.create_table(ns, "t")["metadata-location"])
        assert view.exists() and table.exists()
        ctx.catalog.drop_view(ns, "v")
        ctx.catalog.drop_table(ns, "t", purge=False)
        assert (not view.exists(), not table.exists()) == (gone, gone), variant


@pytest.mark.parametrize("op", ["registerView", "registerTable"])
def test_registration_is_decided_where_a_drop_deletes_metadata(make_ctx, op):
    verdicts = run_endpoint_checks(make_ctx(variant=VARIANT), op, BEHAVIOURS)
    assert {v.behaviour for v in verdicts} >= {"finalized-duplicate", "terminal-4xx-replayed", "payload-mismatch"}
    bad = [v for v in verdicts if v.status is not Status.PASS]
    assert not bad, "\n".join(f"{v.requirement} {v.behaviour}: {v.status.value}: {v.message[:400]}" for v in bad)


def test_without_the_kept_copy_the_variant_leaves_them_undecided(make_ctx, monkeypatch):
    """The same checks with the copy not written back (the kit before the fix): the registration itself answers
    400 (no metadata file), so the replay checks are inconclusive."""
    monkeypatch.setattr(tables.KeptMetadata, "restore", lambda self: None)
    verdicts = run_endpoint_checks(make_ctx(variant=VARIANT), "registerView", BEHAVIOURS)
    by = {v.behaviour: v for v in verdicts}
    for b in ("finalized-duplicate", "payload-mismatch"):
        assert by[b].status is Status.INCONCLUSIVE, (b, by[b].status, by[b].message)
