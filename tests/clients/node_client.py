"""iceberg-js from the npm registry, installed once into a cache directory (``$CTK_CLIENTS_CACHE``, default
``~/.cache/ctk-clients``) so that a rerun does not install again, and the node that runs it.

`ensure_iceberg_js()` is the module's entry file (an ES module the lane's script imports by its path); a failure
to install raises `InstallUnavailable` with npm's own words, which the lane turns into a skip (a failure under CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from installs import InstallUnavailable, locked, run_step

PACKAGE, VERSION = "iceberg-js", "1.0.0"
CACHE_ENV = "CTK_CLIENTS_CACHE"
INSTALL_TIMEOUT_S = 300.0
MIN_NODE = 18          # global fetch; iceberg-js 1.0.0 declares node >= 22 but runs on 20 (checked by the lane)


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "ctk-clients").expanduser()


def node() -> str:
    """The node executable, new enough for iceberg-js (global fetch)."""
    found = shutil.which("node")
    if not found:
        raise InstallUnavailable("node is not installed (apt-get install nodejs npm)")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        raise InstallUnavailable(f"{found} --version said {version!r}, not a node version") from None
    if major < MIN_NODE:
        raise InstallUnavailable(f"{PACKAGE} needs node >= {MIN_NODE} (fetch); {found} is {version}")
    return found


def _installed(prefix: Path) -> Path | None:
    manifest = prefix / "node_modules" / PACKAGE / "package.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = manifest.parent / "dist" / "index.mjs"
    return entry if data.get("version") == VERSION and entry.is_file() else None


def ensure_iceberg_js(cache: Path | None = None, npm: str | None = None) -> Path:
    """The entry file of iceberg-js VERSION, installed with npm into ``<cache>/iceberg-js`` if it is not there."""
    prefix = (cache or cache_dir()) / PACKAGE
    with locked(prefix.parent):
        entry = _installed(prefix)
        if entry is not None:
            return entry
        npm = npm or shutil.which("npm")
        if not npm:
            raise InstallUnavailable("npm is not installed (apt-get install npm)")
        prefix.mkdir(parents=True, exist_ok=True)
        argv = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
                f"{PACKAGE}@{VERSION}"]
        run_step(argv, timeout=INSTALL_TIMEOUT_S, what=f"npm install {PACKAGE}@{VERSION}",
                 failed=f"npm install {PACKAGE}@{VERSION} failed")
        entry = _installed(prefix)
        if entry is None:
            raise InstallUnavailable(f"npm install {PACKAGE}@{VERSION} exited 0, but {prefix}/node_modules/"
                                     f"{PACKAGE} holds no version {VERSION} with dist/index.mjs")
        return entry
