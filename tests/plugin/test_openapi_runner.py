"""ctk.openapi (SCHEMA-01 validation) and `ctk run` argument handling."""

from __future__ import annotations

import argparse
import json

import pytest

from ctk.core.exchange import Exchange
from ctk.openapi import Spec, SpecError, default_spec_path, load_spec
from ctk import runner

from upstream import UPSTREAM_SPEC  # ../shared beside the checkout (tests/upstream.py)

SHARED = UPSTREAM_SPEC


def ex(method, path, status, body=""):
    return Exchange(method, f"http://127.0.0.1:1{path}", status=status, response_body=body)


def test_kit_document_is_found_and_describes_idempotency():
    spec = load_spec()
    assert default_spec_path().name == "ctk-openapi.yaml"
    doc = spec.document
    param = doc["components"]["parameters"]["idempotency-key"]
    assert param["name"] == "Idempotency-Key" and param["schema"]["maxLength"] == 36
    assert "idempotency-key-lifetime" in doc["components"]["schemas"]["CatalogConfig"]["properties"]
    assert doc["components"]["schemas"]["ErrorModel"]["properties"]["subtype"]["enum"] == [
        "request_in_progress", "idempotency_replay_failed"]
    assert "422" in doc["paths"]["/v1/{prefix}/namespaces"]["post"]["responses"]


def test_validate_good_and_bad():
    spec = load_spec()
    assert spec.validate(ex("POST", "/v1/namespaces", 200, '{"namespace":["a"],"properties":{}}')) == []
    assert spec.validate(ex("POST", "/v1/pfx/namespaces", 200, '{"namespace":["a"]}')) == []  # with a prefix
    [p] = spec.validate(ex("POST", "/v1/namespaces", 200, '{"namespace":"a"}'))
    assert "createNamespace" in p and "namespace: 'a' is not of type 'array'" in p
    [p] = spec.validate(ex("POST", "/v1/tables/rename", 201))
    assert "status 201 is not declared" in p
    [p] = spec.validate(ex("DELETE", "/v1/namespaces/a", 409, '{"error":{"message":"x","type":"T","code":409,'
                                                               '"subtype":"nope"}}'))
    assert "subtype" in p
    assert spec.validate(ex("POST", "/v1/namespaces/a/tables/t", 409,
                            '{"error":{"message":"busy","type":"RequestInProgressException","code":409,'
                            '"subtype":"request_in_progress"}}')) == []
    [p] = spec.validate(ex("GET", "/v1/config", 200, "not json"))
    assert "not JSON" in p
    assert spec.validate(ex("GET", "/v1/unknown", 200, "x")) == []          # not in the document
    assert spec.validate(Exchange("GET", "http://127.0.0.1:1/v1/config", error="timeout")) == []


def test_openapi_30_nullable_is_translated():
    doc = {"openapi": "3.0.3", "paths": {"/v1/x": {"get": {"operationId": "x", "responses": {"200": {
        "description": "d", "content": {"application/json": {"schema": {
            "type": "object", "properties": {"a": {"type": "string", "nullable": True}}}}}}}}}}}
    spec = Spec(doc)
    assert spec.validate(ex("GET", "/v1/x", 200, '{"a": null}')) == []
    assert spec.validate(ex("GET", "/v1/x", 200, '{"a": 1}')) != []


@pytest.mark.skipif(not SHARED.is_file(), reason="shared reference spec not present")
def test_upstream_document_loads():
    spec = load_spec(SHARED)
    assert spec.operation("POST", "http://h/v1/namespaces").operation_id == "createNamespace"
    assert spec.validate(ex("POST", "/v1/namespaces", 200, '{"namespace":"a"}')) != []


def test_bad_spec(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("hello: world\n")
    with pytest.raises(SpecError, match="not an OpenAPI document"):
        load_spec(p)


def _args(argv):
    p = argparse.ArgumentParser()
    runner.add_arguments(p)
    return p.parse_args(argv)


def test_runner_argv_embedded_by_default():
    argv = runner.pytest_argv(_args(["--ctk-strict", "--", "-k", "keys", "-n", "2"]))
    assert "--ctk" in argv and "--ctk-strict" in argv
    assert argv[-4:] == ["-k", "keys", "-n", "2"]


def test_runner_argv_with_url_and_secrets():
    args = _args(["--catalog-url", "http://127.0.0.1:8181", "--catalog-token", "s3cr3t-value",
                  "--catalog-header", "A=1", "--catalog-header", "B=2"])
    argv = runner.pytest_argv(args)
    assert "--ctk" not in argv
    assert argv[argv.index("--catalog-url") + 1] == "http://127.0.0.1:8181"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--catalog-header"] == ["A=1", "B=2"]
    assert "s3cr3t-value" in argv and "s3cr3t-value" not in " ".join(runner._shown(argv))


def test_ctk_run_exit_status(tmp_path, monkeypatch):
    """`ctk run` against a dead URL: no check runs, exit status 6 (unusable target), the report says why."""
    from ctk.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sc").mkdir()
    code = main(["run", "--workers", "0", "--catalog-url", "http://127.0.0.1:9", "--ctk-timeout", "1", "--ctk-scenarios",
                 str(tmp_path / "sc"), "--", "-q", "-x", "-p", "no:cacheprovider", "-k", "test_discovery"])
    assert code == 6
    data = json.loads((tmp_path / "reports" / "conformance.json").read_text())
    assert data["state"] == "unusable-target" and "http://127.0.0.1:9" in data["problem"]
