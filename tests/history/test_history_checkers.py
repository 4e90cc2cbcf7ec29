from ctk.history.checkers import check_chain, check_effects, check_table
from ctk.history.recorder import History
from ctk.history.state import TableState
from ctk.core.exchange import Exchange


def ex(status=None, error=None):
    return Exchange("POST", "http://127.0.0.1/x", status=status, error=error)


def hist(*specs):
    """specs: (value, [statuses or error strings of each attempt])"""
    h = History()
    for value, attempts in specs:
        op_id = None
        for n, a in enumerate(attempts, 1):
            inv = h.invoke("p", "append", value=value, op_id=op_id, attempt=n)
            op_id = inv.op_id
            h.record_exchange(inv, ex(a) if isinstance(a, int) else ex(error=a))
    return h


def table(snaps, current=None, last_seq=None):
    """snaps: list of (id, parent, seq)."""
    md = {"snapshots": [{"snapshot-id": i, "parent-snapshot-id": p, "sequence-number": s, "summary": {"operation": "append"}}
                        for i, p, s in snaps],
          "current-snapshot-id": current if current is not None else (snaps[-1][0] if snaps else -1),
          "last-sequence-number": last_seq if last_seq is not None else (max((s for *_, s in snaps), default=0))}
    return TableState(True, "loc", md)


def test_all_categories():
    h = hist((1, [200]), (2, [200]), (3, [503]), (4, ["timeout: x"]), (5, [503, 409]), (6, [409]))
    r = check_effects(h, [1, 3, 5, 9, 9])
    assert r.count("ok_present") == 1 and r.count("lost") == 1          # 1 present, 2 lost
    assert r.count("recovered") == 1 and r.count("unknown_absent") == 1  # 3 present, 4 absent
    assert r.count("failed_present") == 1 and r.count("fail_absent") == 1
    assert r.count("unexpected") == 1 and not r.valid
    text = str(r)
    assert text.startswith("INVALID") and "lost" in text and "read its own write" in text
    assert set(r.anomalies) == {"lost", "failed_present", "unexpected"}
    assert r.to_dict()["valid"] is False


def test_duplicated_and_valid():
    h = hist((1, [200]), (2, [503, 200]))
    assert check_effects(h, [1, 2]).valid
    r = check_effects(h, [1, 2, 2])
    assert r.count("duplicated") == 1 and not r.valid


def test_op_filter():
    h = History()
    i = h.invoke("p", "other", value=7)
    h.ok(i)
    assert check_effects(h, [], op="append").valid
    assert not check_effects(h, [], op="other").valid


def test_linear_chain_ok():
    st = table([(1, None, 1), (2, 1, 2), (3, 2, 3)])
    assert st.parent_chain() == [3, 2, 1]
    r = check_chain(st)
    assert r.valid and r.counts["chain_length"] == 3


def test_branching_chain_flagged():
    r = check_chain(table([(1, None, 1), (2, 1, 2), (3, 1, 3)]))
    assert not r.valid and "not in the main parent chain: [2]" in str(r)


def test_sequence_numbers_not_increasing_flagged():
    r = check_chain(table([(1, None, 2), (2, 1, 2)]))
    assert not r.valid and "sequence number" in str(r)


def test_broken_parent_flagged():
    r = check_chain(table([(2, 1, 2)]))
    assert not r.valid and "missing parent 1" in str(r)


def test_missing_table_flagged():
    assert not check_chain(TableState(False, error="404")).valid


def test_check_table_combines():
    h = hist((1, [200]), (2, [200]))
    r = check_table(h, table([(1, None, 1), (2, 1, 2)]))
    assert r.valid and r.counts["ok_present"] == 2 and r.counts["chain_length"] == 2
    r = check_table(h, table([(1, None, 1)]))
    assert r.count("lost") == 1


def test_summary_marker_detects_reexecution():
    h = hist((10, [503, 200]))
    for op in h.operations():
        op.value = "m1"
    ops = h.operations()
    ops[0].value = "m1"
    st = table([(1, None, 1), (2, 1, 2)])
    for s in st.metadata["snapshots"]:
        s["summary"]["ctk.op"] = "m1"
    r = check_table(ops, st, summary_key="ctk.op")
    assert r.count("duplicated") == 1


def test_nothing_present_is_no_evidence_of_no_duplicate():
    """Issue 19, item 6: acknowledged appends, none in the state: "none duplicated" is not a pass."""
    r = check_effects(hist((1, [200]), (2, [200])), [])
    assert r.valid is False and r.count("lost") == 2 and r.present == 0
    why = r.duplicates_vacuous_reason("append")
    assert why is not None and "none of the appends" in why and "2 acknowledged: lost" in why
    r = check_effects(hist((1, [200]), (2, [200])), [1])
    assert r.present == 1 and r.duplicates_vacuous_reason("append") is None


def test_integrity_of_a_table_without_snapshots_is_no_evidence():
    from ctk.history.integrity import IntegrityResult

    empty = IntegrityResult()
    assert empty.ok                                   # nothing missing ...
    assert "0 snapshots to check" in empty.vacuous_reason()      # ... and nothing checked
    assert "3 append(s) were acknowledged" in empty.vacuous_reason(3)
    assert IntegrityResult(snapshots=1, manifest_lists=1).vacuous_reason(3) is None
