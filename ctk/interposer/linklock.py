"""Turns on a shared link: a fault armed on a catalog's database link is owned by one check at a time.

The link between a catalog and its database carries every request the catalog serves, so a fault armed on it
(`ctk.interposer.faults.LinkFaults`: held, failed, cut) meets the requests of every check that is running at that
moment, in every process that drives the catalog: the xdist workers of a run, or two runs. `LinkLock` is a
readers-writer lock across processes (``fcntl.flock`` on files named after the link, in the temporary
directory):

- what a fault can meet is the catalog's work on the kit's requests, so the shared side is held while a request is
  in flight: every request of the kit's client (``request()``, `ctk.client.transport.CatalogClient`) takes one,
  many at once. A check whose traffic at the catalog no request of the kit's client bounds (copies the interposer
  sends, a JVM's or pyiceberg's requests, a request that ended without its answer while the catalog may still be
  at work on it, retries timed against a key lifetime) holds it for its whole run instead:
  ``check_scope(whole=True)``, or from that moment to the check's end (``unfinished()``).
- arming a link fault takes the exclusive turn (``acquire_exclusive``) for that one injection: it waits until no
  request of another process is in flight (and no whole check runs), no other request is sent until it is given
  back, and it is given back when the injection's last fault is removed (``release_exclusive``) - once this
  process's own requests then in flight have ended, and at the end of the check scope at the latest.

A writer waiting is served before readers that come after it (a turnstile file the readers pass through), so a
stream of requests from other workers cannot starve it. A whole check that runs long (the generated cases) lets a
waiting writer in between its units with ``pause_point()``. Turns are per process and re-entrant: the threads
of one check share its turn, and the process that owns the exclusive turn needs no shared one. Every wait is a
blocking ``flock`` (the kernel wakes the waiter when the turn is given back), never a timer. The kernel drops a
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
        self._scopes = 0                  # check scopes open: the exclusive turn ends with the last at the latest
        self._scope_turns = 0             # shared turns taken for the open check scope, left when it ends
        self._unfinished = False          # one of them is kept for a request that ended without its answer
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
            if self._readers > 0:
                return
            if self._mode == "shared" or (self._mode == "exclusive" and self._owners == 0):
                fcntl.flock(self._fds()[0], fcntl.LOCK_UN)   # (an exclusive turn given back while a request of
                self._mode = None                            # this process was still in flight ends with it)

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """A shared turn for the block (no link fault of another process is armed meanwhile)."""
        self._enter_shared()
        try:
            yield
        finally:
            self._leave_shared()

    def request(self) -> contextlib.AbstractContextManager[None]:
        """One request of the kit's client, in flight at the catalog: a shared turn while it is
        (`ctk.client.transport.CatalogClient`)."""
        return self.shared()

    def unfinished(self) -> None:
        """A request of the running check ended without its answer (a timeout, a dropped connection): the catalog
        may still be at work on it, so the check keeps a shared turn from now to its end. Outside a check scope,
        nothing (no check follows whose requests could be told apart)."""
        with self._mutex:
            if self._scopes == 0 or self._unfinished:
                return
            self._unfinished = True
            self._scope_turns += 1
        self._enter_shared()

    @contextlib.contextmanager
    def check_scope(self, whole: bool = True) -> Iterator[None]:
        """One check. ``whole``: a shared turn for all of it (its traffic at the catalog is not bounded by its
        client's requests); else only its requests take turns (`request`; `unfinished`). An exclusive turn the
        check takes inside ends with the injection (`release_exclusive`), with the block at the latest."""
        with self._mutex:
            self._scopes += 1
            if whole:
                self._scope_turns += 1
        if whole:
            self._enter_shared()
        try:
            yield
        finally:
            with self._mutex:
                self._scopes -= 1
                left = self._scope_turns if self._scopes == 0 else 0
                self._scope_turns -= left
                self._unfinished = self._unfinished and self._scopes > 0
            for _ in range(left):
                self._leave_shared()
            with self._mutex:
                if self._scopes == 0 and self._mode == "exclusive":
                    self._owners = 0
                    self._give_back()

    def pause_point(self) -> None:
        """Between two self-contained units of a long check: a writer waiting for the link gets its turn now,
        then the check goes on. Nothing when no writer waits, or this process is not in a shared turn, or the turn is
        kept for a request that ended without its answer (`unfinished`: the catalog may still be at work on it)."""
        with self._mutex:
            if self._mode != "shared" or self._unfinished:
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
        """Give one exclusive turn back; the link is given up when none is left (the injection is over) and this
        process has no request in flight (else when the last of them ends)."""
        with self._mutex:
            if self._mode != "exclusive":
                return
            self._owners = max(0, self._owners - 1)
            if self._owners == 0:
                self._give_back()

    def _give_back(self) -> None:
        """The exclusive turn ends, unless a shared turn of this process is open (a request in flight, a whole
        check): then it ends with the last of them (`_leave_shared`). Never turned into a shared one in place:
        ``flock`` does that by unlocking first, and a writer waiting would get in while the request is in flight."""
        if self._readers > 0:
            return
        fcntl.flock(self._fds()[0], fcntl.LOCK_UN)
        self._mode = None

    @property
    def mode(self) -> str | None:
        return self._mode
