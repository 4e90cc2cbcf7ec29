"""Seed example 1a/1b (design document): a commit lands but its answer is a 503.

1a: a client retrying WITHOUT keys (Iceberg Java 1.6-1.9) reads 409 from its own earlier write, believes the
    commit failed, deletes the staged files: the table's current snapshot references a missing manifest list.
1b: with an Idempotency-Key the retry replays 200 and the table stays intact.
"""

import random

import httpx

from ctk.history.checkers import check_table
from ctk.history.integrity import check_integrity
from ctk.history.recorder import History
from ctk.history.state import read_table_state
from ctk.history.writer import cleanup_staged, stage_append
from ctk.client.retrying import RetryingClient
from ctk.client.discovery import discover


def inject_503_after_commit(client):
    ex = client.request("POST", "/_ctk/faults", json={"action": "fail-after-commit", "operation": "updateTable",
                                                       "status": 503, "times": 1})
    assert ex.status in (200, 201), ex.render()


def run_append(client, table, use_keys):
    ns, name = table
    d = discover(client)
    history = History()
    rc = RetryingClient(client, d, use_keys=use_keys, history=history, process="w1", sleep=lambda s: None,
                        rng=random.Random(0))
    staged = stage_append(client, ns, name, marker="append-1")
    inject_503_after_commit(client)
    ex = rc.mutate("POST", staged.path, json=staged.body, op="append", value=staged.snapshot_id)
    if ex.status == 409:  # the buggy client's reaction to CommitFailedException
        cleanup_staged(staged)
    state = read_table_state(client, ns, name)
    return d, rc, ex, staged, history, state


def test_1a_blind_retry_reads_own_write_and_corrupts(ref_client, table):
    d, rc, ex, staged, history, state = run_append(ref_client, table, use_keys=False)
    statuses = [a.status for a in rc.last_attempts]
    assert statuses == [503, 409], statuses
    assert all("Idempotency-Key" not in a.request_headers for a in rc.last_attempts)
    assert state.ref_snapshot_id() == staged.snapshot_id  # the first attempt did land
    integrity = check_integrity(state)
    assert not integrity.ok
    assert any(m.kind == "manifest-list" and m.path == staged.manifest_list for m in integrity.missing), str(integrity)
    verdict = check_table(history, state, op="append")
    assert verdict.count("failed_present") == 1 and not verdict.valid, str(verdict)
    assert "read its own write" in str(verdict)


def test_1b_keyed_retry_replays_and_table_is_intact(ref_client, table):
    d, rc, ex, staged, history, state = run_append(ref_client, table, use_keys=True)
    assert d.idempotency_supported
    statuses = [a.status for a in rc.last_attempts]
    assert statuses == [503, 200], statuses
    keys = {a.request_headers.get("Idempotency-Key") for a in rc.last_attempts}
    assert len(keys) == 1 and None not in keys
    assert state.ref_snapshot_id() == staged.snapshot_id and len(state.snapshot_ids) == 1
    integrity = check_integrity(state, count_rows=True, check_data_files=True)
    assert integrity.ok, str(integrity)
    assert integrity.rows == 1
    verdict = check_table(history, state, op="append")
    assert verdict.valid and verdict.count("ok_present") == 1, str(verdict)
    executions = ref_client.request("GET", "/_ctk/executions").json()
    assert executions["by_operation"].get("updateTable") == 1, executions
