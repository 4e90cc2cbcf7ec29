"""Issue 34 item 5: the storage probe reads the metadata-location of the table as loaded. It read it from the
create answer, which on one catalog was "": the kit opened its working directory, the probe said "storage out of
reach", and EVO-06 (a MUST that catalog breaks) read "not applicable"."""

from __future__ import annotations

from odd import Answer, Req, Rule, snake_case_metadata_location

from ctk.checks.semantics.probes import storage

CREATE_TABLE = r"/namespaces/[^/]+/tables$"


class empty_create_location(Rule):
    """createTable answers "" as its metadata-location; loads are right."""

    def after(self, req: Req, answer: Answer) -> Answer | None:
        body = answer.json()
        if req.is_("POST", CREATE_TABLE) and answer.status == 200 and isinstance(body, dict):
            self.hit()
            return Answer.of(200, {**body, "metadata-location": ""})
        return None


def test_an_empty_location_in_the_create_answer_is_not_what_the_probe_reads(make_odd):
    rule = empty_create_location()
    ctx, _ = make_odd([rule])
    known = storage(ctx)
    assert rule.hits >= 1
    assert known.supported is True, known
    assert any(e.label == "probe: load the table to reach its files" for e in ctx.client.exchanges)


def test_a_loaded_table_without_metadata_location_leaves_storage_undecided(make_odd):
    rule = snake_case_metadata_location()
    ctx, _ = make_odd([rule])
    known = storage(ctx)
    assert rule.hits >= 1
    assert known.supported is None and "names no metadata-location" in known.why, known
