"""Turns on a shared link: a fault armed on a catalog's database link is owned by one check at a time.

The link between a catalog and its database carries every request the catalog serves, so a fault armed on it
(`ctk.interposer.faults.LinkFaults`: held, failed, cut) meets the requests of every check that is running at that
moment, in every process that drives the catalog: the xdist workers of a run, or two runs. `LinkLock` is a
readers-writer lock across processes (``fcntl.flock`` on files named after the link, in the temporary
directory):

- a check that does not arm link faults runs inside ``lock.check_scope()`` (a shared turn: many at once),
- arming a link fault takes the exclusive turn (``acquire_exclusive``): it waits until no other process is inside
  a check, and no other check begins until it is given back - at the end of the arming check's scope (the pytest
  plugin's), else when its last fault is removed (``release_exclusive``).

A writer waiting is served before readers that come after it (a turnstile file the readers pass through), so a
stream of short checks on other workers cannot starve it. A check that runs long (the generated cases) lets a
waiting writer in between its units with ``pause_point()``. Turns are per process and re-entrant: the threads
of one check share its turn, and the process that owns the exclusive turn needs no shared one. The kernel drops a
dead process's turns.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator

#: where the lock files live (all processes sharing a link must agree; the default is the temporary directory)
DIR_ENV = "CTK_LINK_LOCK_DIR"


def link_identity(link: object) -> str:
    """What names a link for every process that uses it: a ``ProxyLink``'s control-API URL, an in-process
    interposer's URL."""
    url = getattr(link, "url", None)
    if isinstance(url, str) and url:
        return url.strip().rstrip("/")
    return f"object:{id(link)}"


class LinkLock:
    """The turns of one link, in this process (see the module docstring). One object per identity: `named`."""

    _registry: dict[str, "LinkLock"] = {}
    _registry_lock = threading.Lock()

    def __init__(self, identity: str, directory: str | None = None) -> None:
        self.identity = identity
        where = directory or os.environ.get(DIR_ENV) or tempfile.gettempdir()
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        self.path = os.path.join(where, f"ctk-link-{digest}.lock")
        self._mutex = threading.RLock()
        self._data: int | None = None     # fd of the lock itself (shared / exclusive)
        self._turn: int | None = None     # fd of the turnstile (a waiting writer holds it)
        self._mode: str | None = None     # None, "shared", "exclusive": what this process holds
        self._readers = 0                 # shared turns taken in this process (threads, nested scopes)
        self._owners = 0                  # exclusive turns taken in this process
        self._scopes = 0                  # check scopes open: the exclusive turn is kept until the last ends
        self.waits = 0                    # times this process had to wait for another's turn (tests, measuring)

    @classmethod
    def named(cls, identity: str) -> "LinkLock":
        with cls._registry_lock:
            lock = cls._registry.get(identity)
            if lock is None:
                lock = cls._registry[identity] = cls(identity)
            return lock

    @classmethod
    def of(cls, link: object) -> "LinkLock":
        return cls.named(link_identity(link))

    @classmethod
    def for_url(cls, url: str) -> "LinkLock":
        """The turns of the link a ``ProxyLink(url)`` drives (``--ctk-db-link URL``)."""
        return cls.named(url.strip().rstrip("/"))

    # ------------------------------------------------------------------ files
    def _fds(self) -> tuple[int, int]:
        if self._data is None or self._turn is None:
            self._data = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            self._turn = os.open(self.path + ".turn", os.O_RDWR | os.O_CREAT, 0o666)
        return self._data, self._turn

    def _flock(self, fd: int, how: int) -> None:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            self.waits += 1
            fcntl.flock(fd, how)

    # ------------------------------------------------------------------ shared turns
    def _enter_shared(self) -> None:
        with self._mutex:
            self._readers += 1
            if self._mode is not None:
                return
            data, turn = self._fds()
            self._flock(turn, fcntl.LOCK_EX)      # behind a writer that is waiting
            try:
                self._flock(data, fcntl.LOCK_SH)
            finally:
                fcntl.flock(turn, fcntl.LOCK_UN)
            self._mode = "shared"

    def _leave_shared(self) -> None:
        with self._mutex:
            self._readers -= 1
            if self._readers == 0 and self._mode == "shared":
                fcntl.flock(self._fds()[0], fcntl.LOCK_UN)
                self._mode = None

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """A shared turn for the block (no link fault of another process is armed meanwhile)."""
        self._enter_shared()
        try:
            yield
        finally:
            self._leave_shared()

    @contextlib.contextmanager
    def check_scope(self) -> Iterator[None]:
        """One check: a shared turn; an exclusive turn the check takes inside is kept until the block ends."""
        with self._mutex:
            self._scopes += 1
        self._enter_shared()
        try:
            yield
        finally:
            with self._mutex:
                self._scopes -= 1
                if self._scopes == 0 and self._mode == "exclusive":
                    self._owners = 0
                    self._give_back()
            self._leave_shared()

    def pause_point(self) -> None:
        """Between two self-contained units of a long check: a writer waiting for the link gets its turn now,
        then the check goes on. Nothing when no writer waits, or this process is not in a shared turn."""
        with self._mutex:
            if self._mode != "shared":
                return
            data, turn = self._fds()
            try:
                fcntl.flock(turn, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:          # a writer holds the turnstile: let it in, then queue behind it
                fcntl.flock(data, fcntl.LOCK_UN)
                self._mode = None
                self._flock(turn, fcntl.LOCK_EX)
                try:
                    self._flock(data, fcntl.LOCK_SH)
                finally:
                    fcntl.flock(turn, fcntl.LOCK_UN)
                self._mode = "shared"
                return
            fcntl.flock(turn, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ the exclusive turn
    def acquire_exclusive(self) -> None:
        """Own the link (re-entrant): waits until no other process is inside a check; this process's own shared
        turn is given up first (another process upgrading at the same time may be waiting for it)."""
        with self._mutex:
            if self._mode == "exclusive":
                self._owners += 1
                return
            data, turn = self._fds()
            if self._mode == "shared":
                fcntl.flock(data, fcntl.LOCK_UN)
                self._mode = None
            self._flock(turn, fcntl.LOCK_EX)    # readers arriving from now on wait behind this writer
            try:
                self._flock(data, fcntl.LOCK_EX)
            finally:
                fcntl.flock(turn, fcntl.LOCK_UN)
            self._mode = "exclusive"
            self._owners = 1

    def release_exclusive(self) -> None:
        """Give one exclusive turn back; the link is given up when none is left, unless a check scope is open (its
        end gives it up)."""
        with self._mutex:
            if self._mode != "exclusive":
                return
            self._owners = max(0, self._owners - 1)
            if self._owners == 0 and self._scopes == 0:
                self._give_back()

    def _give_back(self) -> None:
        data = self._fds()[0]
        if self._readers > 0:          # still inside a shared turn of this process: keep that one
            fcntl.flock(data, fcntl.LOCK_SH)
            self._mode = "shared"
        else:
            fcntl.flock(data, fcntl.LOCK_UN)
            self._mode = None

    @property
    def mode(self) -> str | None:
        return self._mode
