"""The format-version 3 ``variant`` type for the reference catalog.

Iceberg Java accepts ``"variant"`` as a primitive type of a schema (at any depth: a column, a list element, a map
value, a struct field) in format-version 3 tables, and refuses it before v3 ("variant is not supported until v3",
an IllegalArgumentException: 400). pyiceberg 0.12 does not know the type: its parser raises "Type not recognized"
for every schema that names it, so the reference answered 400 to a v3 create with a variant column.

`install()` (idempotent, run when the reference's metadata modules are imported) teaches pyiceberg's type parser
the name: a `VariantType` primitive whose minimum format version is 3, so that `Schema.check_format_version_
compatibility` refuses it in v1/v2 tables and the metadata files that hold it are written and read back as Java
writes them (the type is the string ``"variant"``).
"""

from __future__ import annotations

import threading
import types
from typing import Any, Literal

from pydantic import Field
from pyiceberg.types import IcebergType, PrimitiveType

VARIANT = "variant"
_lock = threading.Lock()
_installed = False


class VariantType(PrimitiveType):
    """Iceberg's variant type (semi-structured values), format version 3 and later."""

    root: Literal["variant"] = Field(default="variant")

    def minimum_format_version(self) -> Any:
        return 3


def install() -> None:
    """Make pyiceberg's parser of type names accept ``"variant"`` (every other name goes to pyiceberg).

    pyiceberg parses a type name in one function, ``IcebergType.handle_primitive_type``, reached two ways: called
    by name (a field's type) and as the validator pydantic compiled into every model holding a type (a list
    element, a map key or value). Both reach the same function object, so its code is replaced by a wrapper's
    (no free variables, names looked up in pyiceberg.types' globals) that answers ``VariantType()`` for
    ``"variant"`` and hands everything else to a copy of the original."""
    global _installed
    with _lock:
        if _installed:
            return
        import pyiceberg.types as module

        target = IcebergType.handle_primitive_type.__func__
        copy = types.FunctionType(target.__code__, target.__globals__, target.__name__, target.__defaults__,
                                  target.__closure__)
        module.__dict__["_ctk_parse_type"] = copy
        module.__dict__["_ctk_variant_type"] = VariantType
        scope: dict[str, Any] = {}
        exec(compile(_WRAPPER, "<ctk.reference.variant>", "exec"), module.__dict__, scope)
        target.__code__ = scope["handle_primitive_type"].__code__
        _installed = True


_WRAPPER = """
def handle_primitive_type(cls, v, handler):
    if isinstance(v, str) and v == "variant":
        return _ctk_variant_type()
    return _ctk_parse_type(cls, v, handler)
"""


install()
