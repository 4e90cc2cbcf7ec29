import json

from ctk.history.recorder import History, classify
from ctk.core.exchange import Exchange


def ex(status=None, error=None, body=None):
    return Exchange("POST", "http://127.0.0.1/v1/x", status=status, error=error,
                    response_body=json.dumps(body) if body is not None else None)


def test_classify():
    assert classify(ex(200)) == "ok" and classify(ex(204)) == "ok"
    assert classify(ex(409)) == "fail" and classify(ex(404)) == "fail" and classify(ex(422)) == "fail"
    assert classify(ex(503)) == "info" and classify(ex(500)) == "info"
    assert classify(ex(error="timeout: ReadTimeout")) == "info"
    assert classify(ex(error="reset: RemoteProtocolError")) == "info"
    assert classify(ex(error="refused: ConnectError")) == "fail"
    assert classify(ex(409, body={"error": {"type": "RequestInProgressException", "code": 409}})) == "info"
    assert classify(ex(409, body={"error": {"type": "x", "subtype": "request_in_progress"}})) == "info"


def test_operations_fold_attempts(tmp_path):
    h = History()
    a1 = h.invoke(1, "append", value=11, key="k")
    h.info(a1, exchange=ex(503))
    a2 = h.invoke(1, "append", value=11, key="k", op_id=a1.op_id, attempt=2)
    b = h.invoke(2, "append", value=22)
    h.ok(a2, exchange=ex(200))
    c = h.invoke(3, "append", value=33)
    h.fail(c, exchange=ex(409))
    ops = h.operations()
    assert [(o.op_id, o.outcome, o.value) for o in ops] == [(a1.op_id, "ok", 11), (b.op_id, "info", 22),
                                                            (c.op_id, "fail", 33)]
    assert ops[0].ambiguous and len(ops[0].attempts) == 2 and ops[0].keys == {"k"}
    assert ops[1].attempts[0][1] is None  # still pending -> unknown
    assert "append" in ops[0].describe()
    p = tmp_path / "h.jsonl"
    h.dump(str(p))
    lines = [json.loads(x) for x in p.read_text().splitlines()]
    assert len(lines) == 7 and lines[1]["status"] == 503


def test_completion_type_checked():
    h = History()
    i = h.invoke(1, "x")
    try:
        h.complete(i, "maybe")
    except ValueError:
        pass
    else:
        raise AssertionError("accepted a bad type")
