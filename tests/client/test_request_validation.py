"""Issue 34 item 1: only requests the spec allows. The request-body validator (`ctk.openapi.RequestValidator`) holds a
body to the request schemas of the merged upstream document and of the kit's own (discriminators and `nullable`
honoured); the kit says so on a body invalid on purpose (X-Ctk-Invalid); the reference answers a forbidden body 400
BadRequestException and changes nothing. The whole kit through a validating proxy: tests/checks/test_requests_valid.py.
"""

from __future__ import annotations

import json

import pytest

from upstream import UPSTREAM_SPEC  # ../shared beside the checkout (tests/upstream.py)

from ctk.client.config import TargetConfig
from ctk.client.transport import CatalogClient, table_path
from ctk.openapi import invalid_on_purpose, load_spec, request_validator

URL = "http://127.0.0.1:1/v1/namespaces/ns/tables/t"
# what TXN-04 sent before (issue 34): its replace of a missing table asserted the partition id of a made-up base
OLD_TXN_04 = {"identifier": {"namespace": ["ns"], "name": "t"},
              "requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-4000-8000-000000000000"},
                               {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 0},
                               {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": None}],
              "updates": [{"action": "set-properties", "updates": {}}]}


def validators():
    """The kit's own document alone (always there), and with the merged upstream one where it is beside the checkout."""
    out = [pytest.param(request_validator(), id="kit")]
    if UPSTREAM_SPEC.is_file():
        out.append(pytest.param(request_validator([UPSTREAM_SPEC]), id="kit+upstream"))
    return out


@pytest.mark.parametrize("validator", validators())
def test_the_old_txn_04_body_is_forbidden_and_the_integer_one_allowed(validator):
    problems = validator.problems("POST", URL, json.dumps(OLD_TXN_04))
    assert problems and all("last-assigned-partition-id" in p and "None is not of type 'integer'" in p
                            for p in problems), problems
    fixed = json.loads(json.dumps(OLD_TXN_04))
    fixed["requirements"][2]["last-assigned-partition-id"] = 999
    assert validator.problems("POST", URL, json.dumps(fixed)) == []


@pytest.mark.parametrize("validator", validators())
def test_requirements_are_held_to_the_shape_their_type_selects(validator):
    body = {"requirements": [{"type": "assert-ref-snapshot-id", "snapshot-id": 1}], "updates": []}
    problems = validator.problems("POST", URL, json.dumps(body))
    assert problems and "'ref' is a required property" in problems[0], problems
    # nullable honoured: a null snapshot-id says the ref must not exist
    body["requirements"][0]["ref"] = "main"
    body["requirements"][0]["snapshot-id"] = None
    assert validator.problems("POST", URL, json.dumps(body)) == []
    body["requirements"][0]["type"] = "assert-nothing"
    assert validator.problems("POST", URL, json.dumps(body))


@pytest.mark.skipif(not UPSTREAM_SPEC.is_file(), reason=f"the merged document is not at {UPSTREAM_SPEC}")
def test_upstream_updates_their_action_selects_and_transaction_changes():
    validator = request_validator([UPSTREAM_SPEC])
    body = {"requirements": [], "updates": [{"action": "set-properties"}, {"action": "bogus"}]}
    problems = validator.problems("POST", URL, json.dumps(body))
    assert any("as action 'set-properties' (SetPropertiesUpdate): 'updates' is a required property" in p
               for p in problems), problems
    assert any("action 'bogus' is not one of" in p for p in problems), problems
    txn = {"table-changes": [{"identifier": {"namespace": ["ns"], "name": "t"}, "updates": []}]}
    problems = validator.problems("POST", "http://127.0.0.1:1/v1/transactions/commit", json.dumps(txn))
    assert problems and all("'requirements' is a required property" in p for p in problems), problems
    # the upstream Type's oneOf makes "variant" both a VariantType and a PrimitiveType: read as anyOf (normalized)
    variant = {"name": "t", "schema": {"type": "struct", "fields": [
        {"id": 1, "name": "v", "type": "variant", "required": False}]}}
    assert validator.problems("POST", "http://127.0.0.1:1/v1/namespaces/ns/tables", json.dumps(variant)) == []
    assert any("Type" in n for n in load_spec(UPSTREAM_SPEC).normalized)


# what Iceberg 1.10's Java client (Spark's CREATE TABLE) sends: optional members present as null
JAVA_CREATE = {"name": "orders", "location": None, "write-order": None, "partition-spec": None,
               "stage-create": False, "properties": {"format-version": "2"},
               "schema": {"type": "struct", "schema-id": 0, "fields": [
                   {"id": 1, "name": "id", "type": "long", "required": False}]}}
TABLES = "http://127.0.0.1:1/v1/namespaces/ns/tables"


@pytest.mark.parametrize("nulls_absent", [False, True], ids=["sender", "receiver"])
def test_a_null_optional_member_is_absent_to_the_receiver_and_forbidden_to_the_kit(nulls_absent):
    validator = request_validator([UPSTREAM_SPEC] if UPSTREAM_SPEC.is_file() else [], nulls_absent=nulls_absent)
    problems = validator.problems("POST", TABLES, json.dumps(JAVA_CREATE))
    if nulls_absent:     # the reference accepts what the Java client sends, as the catalogs it talks to do
        assert problems == [], problems
    else:                # the kit's own requests never carry a null the schema does not allow
        assert any("location: None is not of type 'string'" in p for p in problems), problems
    # a required member that does not allow null is refused to either reading, sent as null or left out
    for body in ({**JAVA_CREATE, "name": None}, {k: v for k, v in JAVA_CREATE.items() if k != "name"}):
        problems = validator.problems("POST", TABLES, json.dumps(body))
        assert problems and any("name" in p for p in problems), problems
    # PyIceberg leaves out assert-ref-snapshot-id's null snapshot-id (required, nullable): absent reads as null
    commit = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main"}], "updates": []}
    problems = validator.problems("POST", URL, json.dumps(commit))
    if nulls_absent:
        assert problems == [], problems
    else:
        assert any("'snapshot-id' is a required property" in p for p in problems), problems


def test_a_body_invalid_on_purpose_says_so_on_the_request_and_in_its_exchange():
    import httpx

    seen = []

    def answer(request):
        seen.append(dict(request.headers))
        return httpx.Response(400, json={"error": {"message": "bad", "type": "BadRequestException", "code": 400}})

    client = CatalogClient(TargetConfig("http://127.0.0.1:1"), transport=httpx.MockTransport(answer))
    ex = client.request("POST", table_path(("ns",), "t"), json=OLD_TXN_04, invalid="a null partition id")
    assert invalid_on_purpose(seen[0]) == "a null partition id"
    assert invalid_on_purpose(ex.to_dict()["request_headers"]) == "a null partition id"
    plain = client.request("POST", table_path(("ns",), "t"), json=OLD_TXN_04)
    assert invalid_on_purpose(plain.request_headers) is None


def test_the_reference_answers_a_forbidden_body_400_and_changes_nothing(start_catalog):
    ctx = start_catalog()
    client, ns = ctx.client, ctx.namespace
    body = {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False}]}}
    created = client.request("POST", f"namespaces/{ns[0]}/tables", json=body)
    assert created.status == 200, created.render() if hasattr(created, "render") else created
    before = client.load_table(ns, "t")
    bad = json.loads(json.dumps(OLD_TXN_04))
    bad["identifier"] = {"namespace": list(ns), "name": "t"}
    bad["requirements"][0]["uuid"] = before["metadata"]["table-uuid"]
    ex = client.request("POST", table_path(ns, "t"), json=bad, invalid="null last-assigned-partition-id")
    assert ex.status == 400, (ex.status, ex.response_body)
    assert (ex.json() or {}).get("error", {}).get("type") == "BadRequestException", ex.response_body
    assert "last-assigned-partition-id" in ex.json()["error"]["message"]
    assert client.load_table(ns, "t")["metadata-location"] == before["metadata-location"]
    good = json.loads(json.dumps(bad))
    good["requirements"][2]["last-assigned-partition-id"] = before["metadata"]["last-partition-id"]
    good["requirements"][1]["last-assigned-field-id"] = before["metadata"]["last-column-id"]
    assert client.request("POST", table_path(ns, "t"), json=good).status == 200
