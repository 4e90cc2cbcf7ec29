"""State readers, integrity and checkers on real tables of the reference catalog."""

import os
import random
import threading

from ctk.history.checkers import check_table
from ctk.history.integrity import check_integrity, check_table_integrity
from ctk.history.recorder import History
from ctk.history.state import read_namespace_state, read_table_state, read_view_state
from ctk.history.writer import cleanup_staged, stage_append
from ctk.client.retrying import RetryingClient
from ctk.client.discovery import discover


def test_states(ref_client, table):
    ns, name = table
    st = read_table_state(ref_client, ns, name)
    assert st.exists and st.snapshot_ids == [] and st.parent_chain() == [] and st.table_uuid
    assert read_table_state(ref_client, ns, "nope").exists is False
    nst = read_namespace_state(ref_client, ns)
    assert nst.exists is True
    assert read_namespace_state(ref_client, ("nope",)).exists is False
    assert read_view_state(ref_client, ns, "v").exists is False
    ref_client.request("POST", "namespaces/db/properties", json={"updates": {"a": "1"}, "removals": []})
    assert read_namespace_state(ref_client, ns).properties.get("a") == "1"


def test_appends_chain_and_integrity(ref_client, table):
    ns, name = table
    h = History()
    for i in range(3):
        staged = stage_append(ref_client, ns, name, marker=f"m{i}")
        inv = h.invoke("w", "append", value=staged.snapshot_id)
        h.record_exchange(inv, ref_client.request("POST", staged.path, json=staged.body))
    st = read_table_state(ref_client, ns, name)
    assert len(st.parent_chain()) == 3 and st.summary_values("ctk.op") == ["m0", "m1", "m2"]
    seqs = [st.snapshot(s)["sequence-number"] for s in reversed(st.parent_chain())]
    assert seqs == sorted(seqs)
    r = check_table(h, st, op="append")
    assert r.valid and r.count("ok_present") == 3, str(r)
    integ = check_table_integrity(ref_client, ns, name, count_rows=True, check_data_files=True)
    assert integ.ok and integ.rows == 3 and integ.snapshots == 3, str(integ)


def test_integrity_detects_missing_manifest_and_data_file(ref_client, table):
    ns, name = table
    staged = stage_append(ref_client, ns, name, marker="x")
    assert ref_client.request("POST", staged.path, json=staged.body).status == 200
    st = read_table_state(ref_client, ns, name)
    path = staged.data_files[0]
    staged.io.delete(path)
    r = check_integrity(st, check_data_files=True)
    assert not r.ok and [m.kind for m in r.missing] == ["data-file"]
    staged.io.delete(staged.manifests[0])
    r = check_integrity(st)
    assert not r.ok and [m.kind for m in r.missing] == ["manifest"] and "CORRUPT" in str(r)


def test_staged_commit_is_not_committed_and_cleanup_deletes(ref_client, table):
    ns, name = table
    staged = stage_append(ref_client, ns, name)
    assert read_table_state(ref_client, ns, name).snapshot_ids == []
    assert all(staged.io.new_input(p).exists() for p in staged.files)
    deleted = cleanup_staged(staged)
    assert staged.manifest_list in deleted and not staged.io.new_input(staged.manifest_list).exists()
    assert staged.io.new_input(staged.data_files[0]).exists()  # data files kept unless asked
    assert staged.body["identifier"] == {"namespace": ["db"], "name": "t"}
    assert any(u["action"] == "add-snapshot" for u in staged.body["updates"])


def test_concurrent_appends_with_refresh_and_retry_are_linear(ref_client, table):
    ns, name = table
    d = discover(ref_client)
    h = History()
    errors = []

    def worker(w):
        rc = RetryingClient(ref_client, d, history=h, process=w, rng=random.Random(w), max_attempts=3)
        for j in range(3):
            for k in range(20):  # refresh-and-retry on 409, bounded; each try is its own logical operation
                marker = f"w{w}-{j}-{k}"
                staged = stage_append(ref_client, ns, name, marker=marker)
                ex = rc.mutate("POST", staged.path, json=staged.body, op="append", value=marker)
                if ex.status == 200:
                    break
                cleanup_staged(staged)
                if ex.status != 409:
                    errors.append(ex.render())
                    return
            else:
                errors.append(f"w{w}-{j} never committed")

    ts = [threading.Thread(target=worker, args=(w,)) for w in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errors, errors
    st = read_table_state(ref_client, ns, name)
    # values are markers; a try that got 409 is its own logical op with outcome fail and must be absent
    r = check_table(h, st, op="append", summary_key="ctk.op")
    assert r.valid, str(r)
    assert r.count("ok_present") == 9 and r.counts["chain_length"] == 9
    assert check_integrity(st).ok
