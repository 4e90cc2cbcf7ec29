"""Where the plugin keeps its per-run objects (pytest's config stash)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from ctk.plugin.options import CtkOptions
    from ctk.plugin.session import CtkSession

OPTIONS_KEY = pytest.StashKey["CtkOptions"]()
SESSION_KEY = pytest.StashKey["CtkSession"]()


def get_options(config: pytest.Config) -> "CtkOptions | None":
    return config.stash.get(OPTIONS_KEY, None)


def get_session(config: pytest.Config) -> "CtkSession | None":
    return config.stash.get(SESSION_KEY, None)
