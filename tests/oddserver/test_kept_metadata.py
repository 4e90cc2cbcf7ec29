"""Issue 19 item 2 on a third-party-like catalog (no control API): dropView deletes the view's metadata file
(`odd.drop_view_deletes_metadata`, as Iceberg's own catalogs do), and registerView is still decided: the kit
keeps a copy of the file it registers and writes it back after each drop."""

from __future__ import annotations

from odd import drop_view_deletes_metadata

from ctk.checks import run_endpoint_checks
from ctk.core.verdicts import Status


def test_register_view_decided_where_drop_view_deletes_metadata(make_odd):
    holder = {}

    def rules(upstream):
        holder["rule"] = drop_view_deletes_metadata(upstream)
        return [holder["rule"]]

    ctx, _ = make_odd(rules)
    verdicts = run_endpoint_checks(ctx, "registerView", ["finalized-duplicate", "terminal-4xx-replayed"])
    assert holder["rule"].hits >= 3          # both sources' files and the registered view's on interfere
    assert verdicts and all(v.status is Status.PASS for v in verdicts), \
        [(v.requirement, v.status.value, v.message[:300]) for v in verdicts]
