"""DISC-05 over the whole run: each process's summary of its traffic (per operation the catalog claims: served,
not served, or undecided) combined into one verdict, as the xdist controller does with its workers' summaries."""

from __future__ import annotations

from types import SimpleNamespace

from ctk.client.discovery import Discovery
from ctk.core.exchange import Exchange
from ctk.core.verdicts import Status
from ctk.plugin import served

BASE = "http://127.0.0.1:1/v1"


def _summary(worker: str, exchanges: list[Exchange], endpoints: list[str] | None = None) -> dict:
    config: dict = {"defaults": {}, "overrides": {}}
    if endpoints is not None:
        config["endpoints"] = endpoints
    return served.summarize(SimpleNamespace(worker=worker, client=SimpleNamespace(exchanges=exchanges),
                                            discovery=Discovery.from_config(config)))


def _ex(method: str, path: str, status: int, body: str | None = None) -> Exchange:
    return Exchange(method, f"{BASE}/{path}", status=status, response_body=body)


ROUTER_404 = _ex("POST", "namespaces/a/register", 404, '{"detail": "Not Found"}')
CREATED = _ex("POST", "namespaces/a/tables", 200, '{"metadata": {}}')


def test_an_operation_not_served_in_one_worker_and_served_in_none_is_a_deviation():
    a = _summary("gw0", [ROUTER_404, CREATED])
    b = _summary("gw1", [CREATED])
    v = served.verdict([a, b])
    assert v.status is Status.DEVIATION, v.message
    assert v.details["unserved"] == ["registerTable"] and v.details["workers"] == ["gw0", "gw1"]
    assert "spec's default endpoint set" in v.message and any(e["url"].endswith("/register") for e in v.exchanges)


def test_an_operation_a_handler_answered_in_another_worker_is_served():
    refused = _ex("POST", "namespaces/a/register", 409, '{"error": {"type": "AlreadyExistsException", "code": 409}}')
    v = served.verdict([_summary("gw0", [ROUTER_404, CREATED]), _summary("gw1", [refused])])
    assert v.status is Status.PASS and "registerTable" in v.details["served"], v.message


def test_an_operation_not_claimed_is_not_a_finding():
    v = served.verdict([_summary("gw0", [ROUTER_404, CREATED], endpoints=["POST /v1/{prefix}/namespaces/{namespace}"
                                                                         "/tables"])])
    assert v.status is Status.PASS and v.details["unserved"] == [], v.message


def test_405_and_501_are_not_served_whatever_their_body():
    refused = _ex("POST", "namespaces/a/tables", 405,
                  '{"error": {"type": "MethodNotAllowedException", "message": "no", "code": 405}}')
    commit = _ex("POST", "transactions/commit", 501, None)
    v = served.verdict([_summary("main", [refused, commit])])
    assert v.status is Status.DEVIATION and v.details["unserved"] == ["commitTransaction", "createTable"], v.message


def test_no_claimed_operation_reached_is_inconclusive_and_no_discovery_says_so():
    assert served.verdict([_summary("main", [])]).status is Status.INCONCLUSIVE
    none = served.summarize(SimpleNamespace(worker="main", client=SimpleNamespace(exchanges=[CREATED]),
                                            discovery=None))
    v = served.verdict([none])
    assert v.status is Status.INCONCLUSIVE and "not known" in v.message, v.message


def test_a_known_gaps_file_written_from_a_run_may_name_the_run_level_verdicts(tmp_path):
    """`ctk known-gaps` writes DISC-05's finding under its run-level id (no collected item has it); reading the file
    back for the next run is no usage error (the lakana lane's known-gaps runs ended exit 4 on it)."""
    from ctk.pytest_plugin import _check_known_gap_ids
    from ctk.reporting import known_gaps

    finding = {"nodeid": served.NODEID, "requirement": "DISC-05", "status": "deviation"}
    path = tmp_path / "gaps.yaml"
    path.write_text(known_gaps.render(known_gaps.entries_from_run([finding])).replace("TODO", "lakana has no registerTable"))
    gaps = known_gaps.load(path)
    assert [e.check for e in gaps.entries] == [served.NODEID]
    _check_known_gap_ids(SimpleNamespace(), [], gaps)      # raises pytest.UsageError for a check the kit lacks
