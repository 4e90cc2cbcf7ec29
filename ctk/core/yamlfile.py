"""Reading a YAML (or JSON) file a user points the kit at, with errors that name the file and the cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# libyaml's loader where PyYAML was built with it (ten times faster on the kit's OpenAPI document), else Python's
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through `SAFE_LOADER`."""
    return yaml.load(text, Loader=SAFE_LOADER)   # noqa: S506 - a safe loader


def read_yaml(path: str | Path, error: type[Exception], unreadable: str, invalid: str) -> Any:
    """The parsed document at ``path``. A file that cannot be read raises ``error(unreadable)``, one that is not
    YAML ``error(invalid)``; both messages are formatted with ``path`` and ``exc`` (the underlying error)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(unreadable.format(path=path, exc=exc)) from None
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise error(invalid.format(path=path, exc=exc)) from None
