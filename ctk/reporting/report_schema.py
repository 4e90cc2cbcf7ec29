"""The JSON schema of conformance.json (format ``ctk-conformance/1``): shipped as ctk/data/conformance.schema.json
(the same file as docs/conformance.schema.json), and the one validation of a report against it."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "data" / "conformance.schema.json"


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The schema (JSON Schema 2020-12) as a dict."""
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def problems(report: Any, limit: int = 20) -> list[str]:
    """Where ``report`` (a parsed conformance.json) breaks the schema: "path: message" lines, at most `limit`;
    [] for a valid report."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    out = []
    for err in validator.iter_errors(report):
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        out.append(f"{where}: {err.message[:300]}")
        if len(out) >= limit:
            break
    return out
