"""Where the run's caches go: not into the reports directory (reports/ holds reports only) and not into the
user's folder. pytest's cache (for --lf) and the generated checks' hypothesis database live under

    $CTK_CACHE_DIR, else $XDG_CACHE_HOME/ctk, else ~/.cache/ctk    (a temporary directory if none is writable)

as ``pytest/`` and ``hypothesis/``. A user's own choice wins: ``-o cache_dir=...`` / ``-p no:cacheprovider``,
HYPOTHESIS_STORAGE_DIRECTORY.
"""

from __future__ import annotations

import os
import tempfile


def cache_root() -> str:
    """The kit's cache directory (created)."""
    chosen = os.environ.get("CTK_CACHE_DIR")
    if not chosen:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        chosen = os.path.join(base, "ctk")
    try:
        os.makedirs(chosen, exist_ok=True)
        if os.access(chosen, os.W_OK):
            return os.path.abspath(chosen)
    except OSError:
        pass
    fallback = os.path.join(tempfile.gettempdir(), f"ctk-cache-{os.getuid() if hasattr(os, 'getuid') else 0}")
    os.makedirs(fallback, exist_ok=True)
    return fallback


def cache_dir(kind: str) -> str:
    """``cache_root()/kind`` (e.g. "pytest", "hypothesis")."""
    path = os.path.join(cache_root(), kind)
    os.makedirs(path, exist_ok=True)
    return path
