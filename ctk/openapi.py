"""The OpenAPI document the kit validates responses against (SCHEMA-01).

    spec = load_spec(path_or_None)        # --openapi-spec, else the kit's open-api/ctk-openapi.yaml
    op = spec.operation("POST", "http://127.0.0.1:8181/v1/namespaces")   # -> Operation or None
    problems = spec.validate(exchange)    # [] when the response is declared and its body matches
    spec.request_problems("POST", url, body_text)   # [] when the request body matches its declared schema
    RequestValidator([spec, other]).problems(method, url, body_text, headers)   # every document's problems

Works with OpenAPI 3.1 (JSON Schema 2020-12) and with 3.0 documents (``nullable`` is translated, in a 3.1
document too, where the upstream document still writes it: ``assert-ref-snapshot-id``'s null ``snapshot-id``).
Request bodies are validated with the ``discriminator`` honoured: a schema whose discriminator maps the instance's
property value to a shape holds the instance to that shape too (the upstream ``TableRequirement`` and ``BaseUpdate``
declare their shapes only through the mapping), and a value outside a closed mapping is no declared shape. Paths are
matched with and without the ``{prefix}`` segment, since a catalog without a prefix serves ``/v1/namespaces``.
Known slips of the upstream document are normalised (`normalize_upstream_quirks`; `spec.normalized` lists
what changed). A oneOf with a ``discriminator`` is explained by the alternative its property selects.
"""

from __future__ import annotations

import copy
import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from jsonschema import Draft202012Validator, validators
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from ctk.core.yamlfile import read_yaml

SPEC_URI = "urn:ctk:openapi"
DEFAULT_NAME = "ctk-openapi.yaml"
METHODS = ("get", "head", "post", "put", "delete", "patch")


class SpecError(ValueError):
    pass


def default_spec_path() -> Path:
    """open-api/ctk-openapi.yaml next to the package (checkout), or ctk/data/ when shipped as package data."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "open-api" / DEFAULT_NAME, here / "data" / DEFAULT_NAME,
                      here / "data" / "open-api" / DEFAULT_NAME):
        if candidate.is_file():
            return candidate
    try:
        from importlib.resources import files

        res = files("ctk").joinpath("data", DEFAULT_NAME)
        if res.is_file():
            return Path(str(res))
    except (ImportError, ModuleNotFoundError, FileNotFoundError, TypeError):
        pass
    raise SpecError("the kit's OpenAPI document (open-api/ctk-openapi.yaml) was not found; pass --openapi-spec")


@dataclass
class Operation:
    method: str
    template: str
    operation_id: str | None
    responses: dict[str, Any]


def _nullable_to_31(node: Any) -> Any:
    """OpenAPI 3.0 `nullable: true` -> JSON Schema type unions (in place on a copy)."""
    if isinstance(node, dict):
        if node.get("nullable") is True:
            t = node.get("type")
            if isinstance(t, str):
                node["type"] = [t, "null"]
            elif isinstance(t, list) and "null" not in t:
                node["type"] = t + ["null"]
            elif "$ref" in node or "allOf" in node or "oneOf" in node or "anyOf" in node:
                inner = {k: v for k, v in node.items() if k != "nullable"}
                node.clear()
                node["anyOf"] = [inner, {"type": "null"}]
        node.pop("nullable", None)
        for v in list(node.values()):
            _nullable_to_31(v)
    elif isinstance(node, list):
        for v in node:
            _nullable_to_31(v)
    return node


ERROR_MODEL = "#/components/schemas/ErrorModel"
ERROR_WRAPPER = "#/components/schemas/IcebergErrorResponse"


def normalize_error_responses(doc: dict[str, Any]) -> list[str]:
    """Read a bare ``ErrorModel`` error response as the ``IcebergErrorResponse`` wrapper; returns what changed.

    The upstream document declares some error responses (e.g. createView 404/409, dropView 404) with the bare
    ErrorModel schema, while its own examples for them, every other operation and real servers use the wrapper
    ``{"error": {...}}``. Validating against the literal schema would blame servers for the spec's slip, so
    when the document has the wrapper schema, those responses are read as wrapped (in place).
    """
    if "IcebergErrorResponse" not in ((doc.get("components") or {}).get("schemas") or {}):
        return []
    changed = []
    for template, item in (doc.get("paths") or {}).items():
        for method, op in (item.items() if isinstance(item, dict) else []):
            if not isinstance(op, dict):
                continue
            for status, resp in (op.get("responses") or {}).items():
                if not str(status)[:1] in ("4", "5") or not isinstance(resp, dict):
                    continue
                media = (resp.get("content") or {}).get("application/json") or {}
                if media.get("schema") == {"$ref": ERROR_MODEL}:
                    media["schema"] = {"$ref": ERROR_WRAPPER}
                    changed.append(f"{method.upper()} {template} {status}")
    return changed


PRIMITIVE_VALUE = "PrimitiveTypeValue"
_SCALARS = {"boolean", "integer", "number", "string"}


def normalize_primitive_value(doc: dict[str, Any]) -> list[str]:
    """Read the upstream ``PrimitiveTypeValue`` ``oneOf`` as ``anyOf``; returns what changed.

    Quirk (upstream Iceberg REST document): ``PrimitiveTypeValue`` - the type of partition values, of the
    lower/upper bounds of data files and of filter literals - is a ``oneOf`` over one schema per Iceberg type
    (BooleanTypeValue, IntegerTypeValue, LongTypeValue, FloatTypeValue, DoubleTypeValue, DecimalTypeValue,
    StringTypeValue, DateTypeValue, ..., BinaryTypeValue). As JSON Schema those alternatives overlap: the
    integer 1 is valid as integer, long, float and double, the string "r1" as string, decimal, time,
    timestamp, fixed and binary. ``oneOf`` asks for exactly one match, so every value but a boolean fails
    and a server that answers planning results with bounds or partition values would be blamed for the
    document's slip (the Iceberg type that picks the alternative is in the table schema, not in the JSON).

    Narrow: only the schema of that name, only when its ``oneOf`` is all ``$ref``s to plain scalar-typed
    schemas and at least two of them accept the same JSON values (integer counted as number). Changed in
    place. Null partition values, which the upstream definition does not admit at all, are left as they are.
    """
    schemas = (doc.get("components") or {}).get("schemas") or {}
    node = schemas.get(PRIMITIVE_VALUE)
    if not isinstance(node, dict):
        return []
    alts = node.get("oneOf")
    if not isinstance(alts, list) or len(alts) < 2:
        return []
    kinds = []
    for alt in alts:
        ref = alt.get("$ref") if isinstance(alt, dict) and len(alt) == 1 else None
        if not isinstance(ref, str) or not ref.startswith("#/components/schemas/"):
            return []
        target = schemas.get(ref.rsplit("/", 1)[-1])
        if not isinstance(target, dict) or any(k in target for k in ("oneOf", "anyOf", "allOf", "not", "$ref")):
            return []
        t = target.get("type")
        if not isinstance(t, str) or t not in _SCALARS:
            return []
        kinds.append("number" if t == "integer" else t)
    if len(set(kinds)) == len(kinds):
        return []          # the alternatives exclude each other: the oneOf means what it says
    node["anyOf"] = node.pop("oneOf")
    return [f"schema {PRIMITIVE_VALUE}: oneOf of overlapping scalar encodings read as anyOf"]


def normalize_variant_type(doc: dict[str, Any]) -> list[str]:
    """Read the upstream ``Type`` ``oneOf`` as ``anyOf`` where its ``VariantType`` overlaps ``PrimitiveType``;
    returns what changed.

    Quirk (upstream Iceberg REST document): ``Type`` is a ``oneOf`` of VariantType (the string const
    ``"variant"``), PrimitiveType (any string), StructType, ListType and MapType. ``"variant"`` is valid under the
    first two, so ``oneOf`` (exactly one) forbids every variant column (its own comment only orders the
    alternatives for a generated client). Narrow: only that schema, only when an alternative is a string const
    and another is a plain string schema. Changed in place."""
    schemas = (doc.get("components") or {}).get("schemas") or {}
    node = schemas.get("Type")
    if not isinstance(node, dict) or not isinstance(alts := node.get("oneOf"), list):
        return []
    targets = [schemas.get(str(a.get("$ref", "")).rsplit("/", 1)[-1]) if isinstance(a, dict) else None for a in alts]
    const = any(isinstance(t, dict) and t.get("type") == "string" and isinstance(t.get("const"), str) for t in targets)
    plain = any(isinstance(t, dict) and t.get("type") == "string" and not ({"const", "enum", "pattern"} & set(t))
                for t in targets)
    if not (const and plain):
        return []
    node["anyOf"] = node.pop("oneOf")
    return ["schema Type: oneOf whose VariantType (\"variant\") is also a PrimitiveType read as anyOf"]


def normalize_upstream_quirks(doc: dict[str, Any]) -> list[str]:
    """Every normalisation of known upstream slips (in place); returns what changed."""
    return normalize_error_responses(doc) + normalize_primitive_value(doc) + normalize_variant_type(doc)


def _discriminated(error: Any) -> bool:
    return error.validator in ("oneOf", "anyOf") and isinstance(error.schema, dict) and \
        isinstance(error.schema.get("discriminator"), dict)


def _explain(error: Any) -> str:
    """An error's message; for a oneOf/anyOf with a discriminator, the errors of the alternative that the
    discriminating property selects (jsonschema alone only says 'not valid under any of the given schemas')."""
    from jsonschema.exceptions import best_match, relevance

    schema = error.schema if isinstance(error.schema, dict) else {}
    disc = schema.get("discriminator") if error.validator in ("oneOf", "anyOf") else None
    inst = error.instance
    if not isinstance(disc, dict) or not isinstance(disc.get("propertyName"), str) or not isinstance(inst, dict):
        # an anyOf of shapes each selected by a discriminator of their own (the upstream TableUpdate): the errors
        # of the shape the instance's property selected
        picked = [c for c in error.context or [] if c.validator == "discriminator" or
                  c.message.startswith("as ")] if error.validator in ("oneOf", "anyOf") else []
        return min(picked, key=lambda c: len(c.message)).message if picked else error.message
    prop, mapping = disc["propertyName"], disc.get("mapping") or {}
    if prop not in inst:
        return f"{prop!r} is a required property (it selects the shape: {', '.join(map(str, mapping))})"
    target = mapping.get(str(inst[prop]))
    if target is None:
        return f"{prop} {inst[prop]!r} is not one of {', '.join(map(repr, mapping))}" if mapping else error.message
    branches = {i for i, alt in enumerate(schema.get(error.validator) or [])
                if isinstance(alt, dict) and alt.get("$ref") in (target, SPEC_URI + target)}
    sub = [c for c in error.context or [] if c.relative_schema_path and c.relative_schema_path[0] in branches]
    if not sub:
        return error.message
    best = max(sub, key=relevance)
    if not _discriminated(best):
        best = best_match(sub)
    where = "/".join(map(str, best.absolute_path)) or "(body)"
    return f"as {prop} {inst[prop]!r} ({target.rsplit('/', 1)[-1]}): {where}: {_explain(best)}"


def _body_problems(where: str, text: str, validator: Any) -> list[str]:
    """The first problems of a JSON body (a response's or a request's) against ``validator``, each prefixed with
    ``where``; a body that is not JSON is one problem."""
    import json

    try:
        body = json.loads(text)
    except ValueError:
        return [f"{where}: body is not JSON: {text[:120]!r}"]
    errors = sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{where}: {'/'.join(map(str, e.absolute_path)) or '(body)'}: {_explain(e)[:300]}" for e in errors[:5]]


class Spec:
    def __init__(self, document: dict[str, Any], source: str = "<spec>"):
        if not isinstance(document, dict) or "paths" not in document:
            raise SpecError(f"{source}: not an OpenAPI document (no 'paths')")
        self.source = source
        self.version = str(document.get("openapi", ""))
        doc = copy.deepcopy(document)
        _nullable_to_31(doc)
        self.normalized = normalize_upstream_quirks(doc)
        self.document = doc
        self.registry = Registry().with_resource(SPEC_URI, Resource.from_contents(doc, default_specification=DRAFT202012))
        self._ops: list[tuple[re.Pattern[str], int, Operation]] = []
        for template, item in (doc.get("paths") or {}).items():
            if not isinstance(item, dict):
                continue
            for method in METHODS:
                op = item.get(method)
                if not isinstance(op, dict):
                    continue
                responses = {str(k): v for k, v in (op.get("responses") or {}).items()}
                op["responses"] = responses
                operation = Operation(method.upper(), template, op.get("operationId"), responses)
                for variant in _variants(template):
                    self._ops.append((_template_regex(variant), variant.count("{"), operation))
        # most literal first: fewer placeholders win (e.g. /tables/rename before /tables/{table})
        self._ops.sort(key=lambda t: t[1])

    def operation(self, method: str, url: str) -> Operation | None:
        """The document's operation for a request; a catalog behind a base path (``http://host/iceberg``) is
        matched from its ``/v1/`` on, as the document's paths begin there."""
        path = urlsplit(url).path
        candidates = [path]
        at = path.find("/v1/")
        if at > 0:
            candidates.append(path[at:])
        for candidate in candidates:
            for regex, _n, op in self._ops:
                if op.method == method.upper() and regex.fullmatch(candidate):
                    return op
        return None

    def operation_by_id(self, operation_id: str) -> Operation | None:
        for _r, _n, op in self._ops:
            if op.operation_id == operation_id:
                return op
        return None

    def _resolve(self, node: Any) -> Any:
        for _ in range(20):
            if isinstance(node, dict) and "$ref" in node and len(node) <= 2:
                ref = node["$ref"]
                if not ref.startswith("#/"):
                    return node
                target: Any = self.document
                for part in ref[2:].split("/"):
                    target = target[part.replace("~1", "/").replace("~0", "~")]
                node = target
            else:
                break
        return node

    def response_for(self, op: Operation, status: int) -> tuple[str | None, Any]:
        codes = op.responses
        for key in (str(status), f"{str(status)[0]}XX", f"{str(status)[0]}xx", "default"):
            if key in codes:
                return key, self._resolve(codes[key])
        return None, None

    def validate(self, exchange: Any) -> list[str]:
        """Problems of one recorded response (an Exchange or its dict): undeclared status, body not matching
        the declared schema, non-JSON body where JSON is declared. [] for a conforming or unknown operation."""
        get = exchange.get if isinstance(exchange, dict) else (lambda k, d=None: getattr(exchange, k, d))
        status, method, url = get("status"), get("method"), get("url")
        if status is None or not method or not url:
            return []
        op = self.operation(method, url)
        if op is None:
            return []
        where = f"{method} {urlsplit(url).path} -> {status} ({op.operation_id or op.template})"
        key, response = self.response_for(op, int(status))
        if response is None or (key == "default" and int(status) < 400):
            return [f"{where}: status {status} is not declared (declared: {', '.join(sorted(op.responses))})"]
        content = (response or {}).get("content") or {}
        media = content.get("application/json")
        if method.upper() == "HEAD" or not media or "schema" not in media:
            return []
        body_text = get("response_body")
        if not body_text:
            return [f"{where}: empty body where the document declares a JSON body"]
        return _body_problems(where, body_text, self._validator(op.template, op.method, key))

    @functools.lru_cache(maxsize=512)  # noqa: B019 - one Spec per run
    def _validator(self, template: str, method: str, key: str) -> Draft202012Validator:
        response = self._resolve(self.document["paths"][template][method.lower()]["responses"][key])
        schema = _absolutize(copy.deepcopy(response["content"]["application/json"]["schema"]))
        return Draft202012Validator(schema, registry=self.registry)


    def request_schema(self, op: Operation) -> tuple[bool, Any]:
        """(required, the JSON schema) of an operation's request body; (False, None) where it declares none."""
        item = self.document["paths"][op.template][op.method.lower()]
        body = self._resolve(item.get("requestBody")) if isinstance(item, dict) else None
        if not isinstance(body, dict):
            return False, None
        media = (body.get("content") or {}).get("application/json")
        if not isinstance(media, dict) or "schema" not in media:
            return False, None
        return bool(body.get("required")), media["schema"]

    def request_problems(self, method: str, url: str, body_text: str | bytes | None,
                         nulls_absent: bool = False) -> list[str]:
        """Problems of one request body against the JSON request schema the document declares for its operation
        (the discriminators honoured); [] for a valid body, an operation the document does not know or one
        without a JSON request body. ``nulls_absent``: a member whose value is null is read as absent, as a
        receiving catalog reads it (Iceberg's Java client sends ``"location": null`` in createTable), and a
        required member whose schema allows null may be left out (PyIceberg leaves out assert-ref-snapshot-id's
        null ``snapshot-id``; Java catalogs read the absence as null)."""
        op = self.operation(method, url)
        if op is None:
            return []
        required, schema = self.request_schema(op)
        if schema is None:
            return []
        where = f"{method.upper()} {urlsplit(url).path} ({op.operation_id or op.template}) request"
        text = body_text.decode("utf-8", "replace") if isinstance(body_text, bytes) else body_text
        if not text:
            return [f"{where}: no body where the document requires one"] if required else []
        return _body_problems(where, text, self._request_validator(op.template, op.method, nulls_absent))

    @functools.lru_cache(maxsize=256)  # noqa: B019 - one Spec per run
    def _request_validator(self, template: str, method: str, nulls_absent: bool = False) -> Any:
        _required, schema = self.request_schema(Operation(method, template, None, {}))
        cls = ReceivingValidator if nulls_absent else DiscriminatingValidator
        return cls(_absolutize(copy.deepcopy(schema)), registry=self.registry)


_IN_SHAPE = threading.local()


def _discriminator(validator: Any, disc: Any, instance: Any, schema: Any) -> Any:
    """The OpenAPI ``discriminator`` as a keyword where no oneOf/anyOf stands beside it (the upstream
    TableRequirement, BaseUpdate: the mapping is the only place their shapes are declared): the instance must
    match the shape its property selects, and a value outside the mapping is no declared shape. Beside a
    oneOf/anyOf, the alternatives judge (and `_explain` names the errors of the one the property selects)."""
    from jsonschema.exceptions import ValidationError

    if not isinstance(disc, dict) or not isinstance(instance, dict) or not isinstance(disc.get("propertyName"), str):
        return
    if any(k in schema for k in ("oneOf", "anyOf")):
        return                                   # the alternatives judge; `_explain` names the selected one's errors
    prop, mapping = disc["propertyName"], disc.get("mapping") or {}
    if prop not in instance:
        return                                   # `required` says so where the schema asks for it
    target = mapping.get(str(instance[prop]))
    if target is None:
        if mapping:
            yield ValidationError(f"{prop} {instance[prop]!r} is not one of {', '.join(map(repr, mapping))}")
        return
    ref = target if target.startswith(SPEC_URI) else SPEC_URI + target
    busy = getattr(_IN_SHAPE, "busy", None)
    if busy is None:
        busy = _IN_SHAPE.busy = set()
    key = (id(instance), ref)
    if key in busy:                              # the shape's own allOf leads back here: judged once
        return
    busy.add(key)
    try:
        for error in validator.descend(instance, {"$ref": ref}):
            error.message = f"as {prop} {instance[prop]!r} ({ref.rsplit('/', 1)[-1]}): {error.message}"
            yield error
    finally:
        busy.discard(key)


DiscriminatingValidator: Any = validators.extend(Draft202012Validator, {"discriminator": _discriminator})
_REQUIRED = Draft202012Validator.VALIDATORS["required"]
_PROPERTIES = Draft202012Validator.VALIDATORS["properties"]


def _required_or_null(validator: Any, required: Any, instance: Any, schema: Any) -> Any:
    """``required`` as a receiving catalog reads it: a member left out whose schema allows null reads as null."""
    if not isinstance(instance, dict) or not isinstance(required, list):
        yield from _REQUIRED(validator, required, instance, schema)
        return
    props = schema.get("properties") or {}
    missing = [p for p in required if p not in instance
               and not (isinstance(props.get(p), (dict, bool)) and validator.evolve(schema=props[p]).is_valid(None))]
    yield from _REQUIRED(validator, missing, instance, schema)


def _properties_null_absent(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
    """``properties`` as a receiving catalog reads them: an optional member sent as null is absent."""
    if isinstance(instance, dict):
        required = set(schema.get("required") or ())
        instance = {k: v for k, v in instance.items() if v is not None or k in required}
    yield from _PROPERTIES(validator, properties, instance, schema)


# the reference's reading of a request (ctk.reference.app): null and absence mean the same to the catalogs Iceberg's
# clients talk to (Java's parsers read both as null); the kit's own sender check (DiscriminatingValidator) keeps
# the schema's letter
ReceivingValidator: Any = validators.extend(DiscriminatingValidator, {"required": _required_or_null,
                                                                      "properties": _properties_null_absent})


def invalid_on_purpose(headers: Any) -> str | None:
    """The ``X-Ctk-Invalid`` value of a request's headers (a dict or (name, value) pairs): what the kit says is
    invalid in a body it sends on purpose; None when it says nothing."""
    from ctk.client.transport import INVALID_HEADER

    items = headers.items() if isinstance(headers, dict) else (headers or [])
    for k, v in items:
        if str(k).lower() == INVALID_HEADER.lower():
            return str(v)
    return None


class RequestValidator:
    """Request bodies held to every given document (the merged upstream one, the kit's own): a body is valid only
    when no document that declares its operation's request finds a problem.

    ``nulls_absent`` is the receiving side's reading (the reference catalog): an optional member sent as null is
    absent. The kit's own sender check keeps it off, so the kit itself never sends a null the schema does not
    allow."""

    def __init__(self, specs: Sequence[Spec], nulls_absent: bool = False) -> None:
        self.specs = list(specs)
        self.nulls_absent = nulls_absent

    def problems(self, method: str, url: str, body_text: str | bytes | None) -> list[str]:
        out: list[str] = []
        for spec in self.specs:
            out += [f"{p} [{Path(spec.source).name}]"
                    for p in spec.request_problems(method, url, body_text, nulls_absent=self.nulls_absent)]
        return out


def forbidden(method: str, url: str, payload: Any, specs: Sequence[Spec] = ()) -> str | None:
    """What the request schemas (the kit's own document and ``specs``) forbid in a JSON ``payload`` about to be
    sent, for X-Ctk-Invalid where the sender explores (the generated checks); None for a valid one or no body."""
    if payload is None:
        return None
    import json

    own = load_spec(None)
    problems = RequestValidator([own, *[s for s in specs if s is not own]]).problems(method, url, json.dumps(payload))
    return "generated: " + problems[0].split("request: ", 1)[-1][:200] if problems else None


def request_validator(extra: Sequence[str | Path] = (), nulls_absent: bool = False) -> RequestValidator:
    """The kit's own document and the documents at ``extra`` (e.g. the merged upstream one)."""
    return RequestValidator([load_spec(None)] + [load_spec(p) for p in extra], nulls_absent=nulls_absent)


def _absolutize(node: Any) -> Any:
    """Local refs (#/components/...) of a schema taken out of the document -> refs into the registered spec."""
    if isinstance(node, dict):
        return {k: (SPEC_URI + v if k == "$ref" and isinstance(v, str) and v.startswith("#") else _absolutize(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_absolutize(v) for v in node]
    return node


def _variants(template: str) -> list[str]:
    out = [template]
    if "/{prefix}" in template:
        out.append(template.replace("/{prefix}", "", 1))
    return out


def _template_regex(template: str) -> re.Pattern[str]:
    pattern = ""
    for part in re.split(r"(\{[^}]+\})", template):
        if part.startswith("{") and part.endswith("}"):
            pattern += r"[^/]+"
        else:
            pattern += re.escape(part)
    return re.compile(pattern)


@functools.lru_cache(maxsize=8)
def _load_cached(path: str) -> Spec:
    doc = read_yaml(path, SpecError, unreadable="cannot read OpenAPI document {path}: {exc}",
                    invalid="{path}: not valid YAML/JSON: {exc}")
    return Spec(doc, source=str(Path(path)))


def load_spec(path: str | Path | None = None) -> Spec:
    """The document at `path` (``--openapi-spec``), else the kit's own."""
    return _load_cached(str(Path(path).resolve() if path else default_spec_path()))


def unquote_path(url: str) -> str:
    return unquote(urlsplit(url).path)
