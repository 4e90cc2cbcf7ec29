"""Each registered case takes its method, path template and Idempotency-Key header from the kit's OpenAPI
document; a case naming an operation the document lacks is a clear error."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from ctk.catalog import ENDPOINTS, CatalogSpecError, Case, case
from ctk.catalog.cases import SPEC_PATH, endpoint, spec_operations


@pytest.fixture(scope="module")
def document() -> dict:
    return yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))


def _operation(doc: dict, operation: str) -> tuple[str, str, dict, dict]:
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and op.get("operationId") == operation:
                return method.upper(), path, op, item
    raise AssertionError(f"{operation} not in the document")


@pytest.mark.parametrize("op", sorted(ENDPOINTS))
def test_every_registered_case_agrees_with_the_document(document, op):
    ep = ENDPOINTS[op]
    method, path, spec_op, item = _operation(document, op)
    assert ep.entry == f"{method} {path}"
    params = [p.get("$ref", "") for p in (item.get("parameters") or []) + (spec_op.get("parameters") or [])]
    listed = "#/components/parameters/idempotency-key" in params
    published = spec_op.get("x-ctk-published-idempotency-key", True)
    assert ep.spec_has_header == (listed and published)
    for m, t in ep.requires:
        assert t in {p.removeprefix("/v1/{prefix}/") for p in document["paths"]}
        assert m.lower() in document["paths"]["/v1/{prefix}/" + t]


def test_the_header_marks_of_the_document():
    """Every mutation the kit drives lists the header in the kit's document; createView is the one the merged
    (published) document gives none, and the document says so."""
    ops = spec_operations()
    assert {op for op in ENDPOINTS if not ops[op].has_header} == {"createView"}
    assert not ops["loadTable"].has_header and ops["loadTable"].method == "GET"


def test_an_operation_the_document_lacks_is_a_clear_error():
    registry: dict = {}
    with pytest.raises(CatalogSpecError) as info:
        @case("createWidget", success=(200,), registry=registry)
        def build(ctx, ep) -> Case:  # pragma: no cover - never registered
            raise AssertionError

    assert "'createWidget' is not in the OpenAPI document" in str(info.value)
    assert "createNamespace" in str(info.value)          # it lists what the document has
    assert registry == {}


def test_a_required_operation_the_document_lacks_is_a_clear_error():
    with pytest.raises(CatalogSpecError, match="'loadWidget' is not in the OpenAPI document"):
        endpoint("createTable", lambda ctx, ep: None, (200,), requires=("loadWidget",))


def test_registering_an_operation_twice_is_an_error():
    registry: dict = {}
    case("dropView", success=(204,), registry=registry)(lambda ctx, ep: None)
    with pytest.raises(CatalogSpecError, match="registered twice"):
        case("dropView", success=(204,), registry=registry)(lambda ctx, ep: None)


def test_a_case_is_built_from_another_document(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent("""\
        openapi: 3.1.0
        paths:
          /v1/config:
            get: {operationId: getConfig}
          /v1/{prefix}/things/{thing}:
            parameters:
              - {name: Idempotency-Key, in: header, schema: {type: string}}
            delete: {operationId: dropThing}
            get: {operationId: loadThing}
        """))
    registry: dict = {}
    case("dropThing", success=(204,), requires=("loadThing",), has_payload=False, registry=registry,
         spec=spec)(lambda ctx, ep: None)
    ep = registry["dropThing"]
    assert (ep.method, ep.template, ep.spec_has_header) == ("DELETE", "things/{thing}", True)
    assert ep.requires == (("GET", "things/{thing}"),) and ep.has_payload is False
    assert "getConfig" not in spec_operations(str(spec))           # only operations under /v1/{prefix}/


def test_an_unreadable_document_is_a_clear_error(tmp_path):
    with pytest.raises(CatalogSpecError, match="cannot read the kit's OpenAPI document"):
        spec_operations(str(tmp_path / "missing.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("just: [a, list\n")
    with pytest.raises(CatalogSpecError, match="cannot read"):
        spec_operations(str(bad))
    bad.write_text("openapi: 3.1.0\n")
    with pytest.raises(CatalogSpecError, match="no 'paths'"):
        spec_operations(str(bad))
