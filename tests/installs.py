"""What the test lanes that install a third-party client or catalog into a cache directory share: the lock that
keeps two runs from installing into the same cache at once, and one install step run with a bound, whose failure
raises `InstallUnavailable` with the tool's own last words (the lane turns it into a skip; a failure under CI)."""

from __future__ import annotations

import contextlib
import fcntl
import subprocess
from pathlib import Path
from typing import Iterator, Sequence


class InstallUnavailable(RuntimeError):
    """A client or catalog could not be installed or run here; the message says why and what to do."""


@contextlib.contextmanager
def locked(cache: Path) -> Iterator[None]:
    """Holds ``<cache>/.lock`` exclusively (creating the directory) while a run looks into or installs into it."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_step(argv: Sequence[str], *, timeout: float, what: str, failed: str) -> None:
    """Runs one install command; `InstallUnavailable` "<what>: <error>" when it cannot run or times out, and
    "<failed> (exit N):" with the last five lines it wrote when it exits non-zero."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallUnavailable(f"{what}: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise InstallUnavailable(f"{failed} (exit {done.returncode}):\n{tail}")
