"""SCHEMA-01: responses conform to the OpenAPI document (--openapi-spec, default the kit's own).

Validates a fresh round of reads and mutations in the run namespace, then every response this session's
client has recorded so far (the suites run before it in file order)."""

import uuid
from urllib.parse import quote

from ctk.plugin.traffic import responses_to_judge
from ctk.core.behaviours import Behaviour
from ctk.core.verdicts import Verdict
from ctk.openapi import SpecError, load_spec

REQ = "SCHEMA-01"


def _verdict(spec, exchanges, what, discovery=None):
    judged = responses_to_judge(spec, list(exchanges), discovery)
    checked, seen = len(judged["exchanges"]), len(judged["exchanges"]) + judged["unmatched"]
    problems = [(p, ex) for ex in judged["exchanges"] for p in spec.validate(ex)]
    if checked == 0:
        why = (f"none of {seen} responses matched an operation of {spec.source} (a base path the document's "
               f"paths do not begin with?)" if seen else "no responses to validate")
        return Verdict.inconclusive(REQ, f"{why} ({what})", behaviour=Behaviour.SCHEMA)
    if problems:
        shown = problems[:8]
        return Verdict.broken(
            REQ, f"{len(problems)} response(s) of {checked} do not conform to {spec.source} ({what}):\n"
                 + "\n".join(p for p, _ in shown),
            behaviour=Behaviour.SCHEMA, classification=f"{len(problems)} problems",
            exchanges=[ex.to_dict() for _, ex in shown])
    return Verdict.ok(REQ, f"{checked} responses conform to {spec.source} ({what})", behaviour=Behaviour.SCHEMA)


def _spec(ctk_session):
    try:
        return load_spec(ctk_session.options.openapi_spec), None
    except SpecError as exc:
        return None, Verdict.inconclusive(REQ, f"OpenAPI document unusable: {exc}", behaviour=Behaviour.SCHEMA)


def test_schema_fresh_round(ctk_session, ctk_client):
    spec, bad = _spec(ctk_session)
    if bad:
        return bad
    # a child of the run namespace (a registered run-unique sibling where the target does not nest namespaces)
    run = tuple(ctk_session.namespace_parts or (ctk_session.namespace,))
    placement = getattr(ctk_session, "placement", None)
    levels = placement.child(f"s_{uuid.uuid4().hex[:8]}") if placement else run + (f"s_{uuid.uuid4().hex[:8]}",)
    enc = "%1F".join(quote(p, safe="") for p in levels)
    mark = len(ctk_client.exchanges)
    c = ctk_client
    c.request("GET", "/v1/config", label="schema: config")
    c.request("GET", "namespaces", label="schema: list namespaces")
    c.request("POST", "namespaces", json={"namespace": list(levels), "properties": {"a": "1"}}, label="schema: create")
    c.request("POST", "namespaces", json={"namespace": list(levels)}, label="schema: create again (409)")
    c.request("GET", f"namespaces/{enc}", label="schema: load namespace")
    c.request("POST", f"namespaces/{enc}/properties", json={"updates": {"b": "2"}, "removals": ["zz"]},
              label="schema: update properties")
    c.request("POST", f"namespaces/{enc}/tables", label="schema: create table",
              json={"name": "t", "schema": {"type": "struct", "schema-id": 0,
                                            "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}})
    c.request("GET", f"namespaces/{enc}/tables", label="schema: list tables")
    c.request("GET", f"namespaces/{enc}/tables/t", label="schema: load table")
    c.request("GET", f"namespaces/{enc}/tables/missing", label="schema: load missing table (404)")
    c.request("GET", f"namespaces/{enc}/views", label="schema: list views")
    c.request("DELETE", f"namespaces/{enc}/tables/t", label="schema: drop table")
    c.request("DELETE", f"namespaces/{enc}", label="schema: drop namespace")
    return _verdict(spec, c.exchanges_since(mark), "a fresh round of reads and mutations",
                    getattr(ctk_session, "discovery", None))


def test_schema_recorded(ctk_session, ctk_client):
    spec, bad = _spec(ctk_session)
    if bad:
        return bad
    return _verdict(spec, list(ctk_client.exchanges), "every response recorded in this session",
                    getattr(ctk_session, "discovery", None))
