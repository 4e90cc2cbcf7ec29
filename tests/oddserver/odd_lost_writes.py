"""Odd-server rules of issue 19 (items 6 and 7): a catalog that acknowledges appends and records nothing, and
one that misspells ``metadata-location``; the one that drops the properties given at createNamespace is
`odd.drop_namespace_properties`. Used with `odd.OddServer`."""

from __future__ import annotations

import httpx
from odd import TABLE, Answer, Req, Rule, renamed_metadata_location


class acks_appends_records_nothing(Rule):
    """updateTable with an ``add-snapshot`` update answers 200 with the table as it was (its current metadata):
    the append is acknowledged, no snapshot is ever recorded."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream

    def before(self, req: Req) -> Answer | None:
        if not req.is_("POST", TABLE):
            return None
        body = req.json()
        updates = body.get("updates") if isinstance(body, dict) else None
        if not any(isinstance(u, dict) and u.get("action") == "add-snapshot" for u in updates or []):
            return None
        r = httpx.get(self.upstream + req.path, timeout=10)
        if r.status_code != 200:
            return None
        loaded = r.json()
        self.hit()
        return Answer.of(200, {"metadata-location": loaded["metadata-location"], "metadata": loaded["metadata"]})


class camel_case_metadata_location(renamed_metadata_location):
    """loadTable answers name the field ``metadataLocation`` instead of ``metadata-location``."""

    def __init__(self) -> None:
        super().__init__("metadataLocation")


class plan_for_other_payload_unfetchable(Rule):
    """planTableScan with a keyed request selecting only ``id`` (the kit's other payload) answers 200 with a new
    plan-id that fetchPlanningResult does not know (404): a new plan-id comes back, the state shows none."""

    def before(self, req: Req) -> Answer | None:
        if req.is_("POST", r"/tables/[^/]+/plan$") and any(k.lower() == "idempotency-key" for k, _ in req.headers):
            body = req.json()
            if isinstance(body, dict) and body.get("select") == ["id"]:
                self.hit()
                return Answer.of(200, {"status": "completed", "plan-id": f"odd-plan-{self.hits}",
                                       "file-scan-tasks": [], "delete-files": []})
        return None
