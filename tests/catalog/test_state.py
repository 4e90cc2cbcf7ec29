"""The one state reader: exists / absent / unreadable, bounded retries, the case observers, the deltas."""

from __future__ import annotations

import httpx
import pytest

from ctk.catalog import state
from ctk.catalog.state import (created, created_marked, marked, prop_set, read, read_with_retry, removed,
                               table_commits)
from ctk.client.errors import PrerequisiteError

LOADED = {"metadata-location": "s3://x/m1.json",
          "metadata": {"table-uuid": "u1", "properties": {"ctk.mark": "first"}, "metadata-log": [{}, {}]}}


def _scripted(statuses_bodies):
    """A handler answering the n-th request with the n-th (status, body) (the last one repeated)."""
    calls: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        status, body = statuses_bodies[min(len(calls), len(statuses_bodies)) - 1]
        if isinstance(body, Exception):
            raise body
        return httpx.Response(status, json=body) if not isinstance(body, str) else httpx.Response(status, text=body)

    return handler, calls


@pytest.mark.parametrize("answers,exists,error", [
    ([(200, LOADED)], True, None),
    ([(404, {"error": {}})], False, None),
    ([(503, "down")], None, "state unreadable (503): down"),
    ([(403, "no")], None, "state unreadable (status 403): no"),
    ([(200, "not json")], None, "state unreadable: load table answered 200 with a non-JSON body"),
    ([(0, httpx.ConnectError("Connection refused"))], None, "state unreadable (no answer: refused"),
])
def test_read_classifies(mock_client, monkeypatch, answers, exists, error):
    monkeypatch.setattr(state, "READ_PAUSE", 0.0)
    handler, calls = _scripted(answers)
    got = read(mock_client(handler), "namespaces/a/tables/t", "state: load table", "load table")
    assert got.exists is exists and len(calls) == 1
    assert (got.error is None) if error is None else got.error.startswith(error)
    assert got.body == (LOADED if exists else None)


def test_a_5xx_is_read_again_a_bounded_number_of_times(mock_client, monkeypatch):
    monkeypatch.setattr(state, "READ_PAUSE", 0.0)
    handler, calls = _scripted([(503, "a"), (502, "b"), (200, LOADED)])
    assert read(mock_client(handler), "p", "l", "load table", attempts=3).exists is True and len(calls) == 3
    handler, calls = _scripted([(503, "a")])
    ex = read_with_retry(mock_client(handler), "p", "l", attempts=2)
    assert ex.status == 503 and len(calls) == 2 and ex.label == "l (again)"
    handler, calls = _scripted([(409, "a")])                       # a 4xx is an answer: not read again
    assert read_with_retry(mock_client(handler), "p", "l").status == 409 and len(calls) == 1


def test_the_case_observers(mock_client):
    handler, _ = _scripted([(200, LOADED)])
    assert state.table_state(mock_client(handler), ("a",), "t") == {
        "uuid": "u1", "properties": {"ctk.mark": "first"}, "metadata_log": 2, "metadata_location": "s3://x/m1.json"}
    handler, _ = _scripted([(404, {})])
    assert state.view_state(mock_client(handler), ("a",), "v") is None
    handler, _ = _scripted([(500, "gone")])
    assert state.table_state(mock_client(handler), ("a",), "t", damaged_ok=True) == {
        "damaged": "load table t answered 500"}
    with pytest.raises(PrerequisiteError, match="observe: load table t answered 500") as info:
        state.table_state(mock_client(handler), ("a",), "t")
    assert info.value.exchange.status == 500
    handler, _ = _scripted([(200, {"namespace": ["a"]})])           # a table answer without metadata
    with pytest.raises(PrerequisiteError):
        state.table_state(mock_client(handler), ("a",), "t")
    handler, _ = _scripted([(200, {"namespace": ["a"], "properties": {"k": "v"}})])
    assert state.namespace_state(mock_client(handler), ("a",)) == {"properties": {"k": "v"}}


def test_history_reads_through_the_same_reader(mock_client, monkeypatch):
    from ctk.history.state import read_namespace_state, read_table_state

    monkeypatch.setattr(state, "READ_PAUSE", 0.0)
    handler, calls = _scripted([(503, "a"), (200, LOADED)])
    got = read_table_state(mock_client(handler), ("a",), "t")
    assert got.exists and got.table_uuid == "u1" and len(calls) == 2
    handler, calls = _scripted([(503, "down")])
    got = read_namespace_state(mock_client(handler), ("a",))
    assert got.unreadable and got.error.startswith("state unreadable (503)") and len(calls) == state.READ_ATTEMPTS


def test_deltas():
    t1 = {"uuid": "u1", "properties": {"ctk.mark": "first"}, "metadata_log": 1}
    t1b = {"uuid": "u1", "properties": {"ctk.mark": "first"}, "metadata_log": 3}
    t2 = {"uuid": "u2", "properties": {"ctk.mark": "alternative"}, "metadata_log": 0}
    assert created(None, t1) == 1 and created(t1, t1b) == 0 and created(t1, t2) == 1 and created(t1, None) == 0
    assert created_marked(None, t1, "first") == 1 and created_marked(None, t1, "alternative") == 0
    assert removed(t1, None) == 1 and removed(t1, {"damaged": "x"}) == 1 and removed(None, None) == 0
    assert removed({"damaged": "x"}, None) == 0
    assert marked(t1, "first") and not marked(None, "first")
    assert prop_set(None, t1, "ctk.mark", "first") == 1 and prop_set(t1, t1b, "ctk.mark", "first") == 0
    assert table_commits(t1, t1b, "ctk.mark", "first") == 2 and table_commits(t1, t2, "ctk.mark", "x") == 0


def test_what_the_generated_checks_read(mock_client, monkeypatch):
    """`current`: the load answer, None when absent; a state that stays unreadable is a PrerequisiteError (the
    generated run ends inconclusive) and never reads as absent."""
    monkeypatch.setattr(state, "READ_PAUSE", 0.0)
    handler, _ = _scripted([(200, LOADED)])
    assert state.current(mock_client(handler), ("a",), "t", "table") == LOADED
    handler, _ = _scripted([(404, {})])
    assert state.current(mock_client(handler), ("a",)) is None
    handler, calls = _scripted([(503, "down")])
    with pytest.raises(PrerequisiteError, match=r"read: load view v: state unreadable \(503\)") as info:
        state.current(mock_client(handler), ("a",), "v", "view")
    assert len(calls) == state.READ_ATTEMPTS and info.value.exchange.status == 503
