"""Stored responses: large bodies are kept compressed and replay exactly; damage is a StoredResponseError."""

import base64
import json

import pytest

from ctk.reference.idempotency import (COMPRESS_ABOVE, StoredResponseError, decode_response, digest_of,
                                       encode_stored)
from ctk.reference.operations import OpResult


def encode_response(result: OpResult) -> str:
    return encode_stored(result)[0]


def test_large_body_round_trips_compressed():
    body = {"metadata": {"snapshots": [{"snapshot-id": i, "summary": {"operation": "append"}} for i in range(300)]},
            "metadata-location": "file:/w/t/metadata/00301-x.metadata.json", "config": {}}
    text = encode_response(OpResult(200, body, {"Content-Type": "application/json", "X-Other": "dropped"}))
    assert "body_z" in json.loads(text) and len(text) < len(json.dumps(body)) / 3
    out = decode_response(text, digest_of(text))
    assert out.status == 200 and out.body == body and out.headers == {"content-type": "application/json"}


def test_small_body_stays_plain():
    body = {"error": {"message": "exists", "type": "AlreadyExistsException", "code": 409}}
    text = encode_response(OpResult(409, body))
    assert len(json.dumps(body)) < COMPRESS_ABOVE and json.loads(text)["body"] == body
    assert decode_response(text, digest_of(text)).body == body


def test_damaged_compressed_body_cannot_be_replayed():
    text = encode_response(OpResult(200, {"x": "y" * (COMPRESS_ABOVE * 2)}))
    doc = json.loads(text)
    doc["body_z"] = base64.b64encode(b"not zlib at all").decode()
    bad = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    with pytest.raises(StoredResponseError, match="unreadable"):
        decode_response(bad, digest_of(bad))
