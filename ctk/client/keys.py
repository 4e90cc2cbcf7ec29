"""Idempotency keys: UUIDv7 (RFC 9562) in canonical 36-character form."""

from __future__ import annotations

import re
import uuid

import uuid6

_CANONICAL = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def new_key() -> str:
    """A fresh UUIDv7 key, e.g. ``0190f2b4-...``; time-ordered, unique per mutation."""
    return str(uuid6.uuid7())


def is_valid_key(key: object, require_v7: bool = False) -> bool:
    """True for a canonical 36-character hyphenated UUID (any version unless ``require_v7``)."""
    if not isinstance(key, str) or len(key) != 36 or not _CANONICAL.match(key):
        return False
    try:
        parsed = uuid.UUID(key)
    except ValueError:
        return False
    return parsed.version == 7 if require_v7 else True


def malformed_keys() -> list[str]:
    """Keys a strict server should reject (not a UUID, wrong length, braces, no hyphens)."""
    k = new_key()
    return ["not-a-uuid", k[:35], k + "0", "{" + k[:34] + "}", k.replace("-", ""), ""]
