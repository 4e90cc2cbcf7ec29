"""Faults by intention: the one place outside the interposer's own modules that knows its toxic names.

Checks (ctk.checks) and workloads (ctk.spark) say what should happen to a request, an answer or a link;
these classes turn that into toxics and read back what the toxics saw.

`HttpFaults(interposer)`: an HTTP-mode interposer between a client and a catalog (an in-process
`ctk.interposer.Interposer`). Every rule applies to the requests an `HttpMatch` selects, to the first
``times`` of them (0: every one), and returns a rule name for `remove`, `applied`, `matched`, `kept_answers`...

- ``lose_answer(match, mode)``   the catalog answers, the client does not hear it: ``"503"``/``"500"`` (that
                                 status instead of the answer), ``"drop"`` (the connection closes without a
                                 byte) or ``"reset"`` (a TCP RST after ``reset_bytes`` bytes of the answer)
- ``answer_503`` / ``drop_answer`` / ``reset_answer``  the same, one mode each
- ``delay_answer(match, seconds)``  the whole answer is read, then held before it is sent
- ``delay_request(match, seconds)`` the request is held before it is forwarded (``hold_requests``: every one)
- ``record_answer(match)``       nothing changes; the answer is kept as an event (`kept_answers`)
- ``hold_link(seconds)``         every answer of the catalog is slowed (TCP latency); `remove` restores it
- ``duplicate(match, ...)``      the request is sent more than once (``parallel``: as a burst); ``burst``
                                 gives the interposer's report of it (forward and answer times, answers)
- ``count_matching(match)``      nothing changes; `matched` counts the requests it selected, `arrivals` says
                                 when each was forwarded whole to the catalog

`LinkFaults(link)`: a TCP-mode interposer in front of a catalog's DATABASE (an in-process `Interposer`, or a
`ctk.interposer.client.ProxyLink` from ``--ctk-db-link``):

- ``db_hold(ms)``                the database's answers are slowed (a transaction stays open longer)
- ``db_fail(mode)``              the database link fails: ``"reset_peer"`` (connections reset), ``"down"``
                                 (refused), ``"fail_write"`` (the first write statement is dropped and its
                                 connection cut, once), ``"fail_write_hold"`` (the same, and from that moment
                                 the link stays down - every connection cut, new ones refused - until
                                 `db_restore`: a pool that retries the write on a fresh connection meets the
                                 broken link too); returns what `db_restore` needs
- ``db_cut_after_commit(pattern)``  the database's answer to the next statement matching `pattern` (the
                                 COMMIT) is cut: it commits, the catalog never hears; ``cuts`` tells what it cut
"""

from __future__ import annotations

import time
from typing import Any

from ctk.interposer.client import ProxyLink
from ctk.interposer.http_toxics import HttpMatch
from ctk.interposer.linklock import LinkLock
from ctk.interposer.runtime import Interposer

#: what a database link's faults are driven through: an in-process interposer, or a Toxiproxy-compatible one
#: (``--ctk-db-link``)
DbLink = Interposer | ProxyLink

LOSE_MODES = ("503", "500", "reset", "drop")
DB_FAILURES = ("reset_peer", "down", "fail_write")
#: link failures that last until `LinkFaults.db_restore` (the kit restores once the catalog answered)
DB_HOLDS = ("fail_write_hold",)
#: a write statement, in any case (SQLAlchemy writes INSERT INTO, Hibernate insert into)
DB_WRITE_PATTERN = r"(?i)\bINSERT\s+INTO\b|\bUPDATE\s+\S+\s+SET\b|\bDELETE\s+FROM\b"


class HttpFaults:
    """Intention-named faults through an HTTP-mode interposer (see the module docstring)."""

    def __init__(self, interposer: Interposer):
        self.interposer = interposer
        self._seq = 0

    # -------------------------------------------------------------- answers taken from the client
    def lose_answer(self, match: HttpMatch, mode: str = "503", *, reset_bytes: int = 0, times: int = 1,
                    name: str | None = None) -> str:
        if mode in ("503", "500"):
            return self.answer_503(match, status=int(mode), times=times, name=name)
        if mode == "drop":
            return self.drop_answer(match, times=times, name=name)
        if mode == "reset":
            return self.reset_answer(match, after_bytes=reset_bytes, times=times, name=name)
        raise ValueError(f"mode must be one of {LOSE_MODES}, not {mode!r}")

    def answer_503(self, match: HttpMatch, status: int = 503, *, times: int = 1, name: str | None = None) -> str:
        """The catalog's answer is read whole, the client gets `status` (an Iceberg error body) instead."""
        return self.interposer.add_http_toxic("replace_status", match=match, status=status, times=times, name=name)

    def drop_answer(self, match: HttpMatch, *, times: int = 1, name: str | None = None) -> str:
        """The catalog's answer is read whole, the client's connection closes without a byte of it."""
        return self.interposer.add_http_toxic("drop_response", match=match, times=times, name=name)

    def reset_answer(self, match: HttpMatch, after_bytes: int = 0, *, times: int = 1, name: str | None = None) -> str:
        """The first `after_bytes` bytes of the answer reach the client, then a TCP RST."""
        return self.interposer.add_http_toxic("reset_after_bytes", match=match, bytes=after_bytes, times=times,
                                              name=name)

    def delay_answer(self, match: HttpMatch, seconds: float, *, times: int = 1) -> str:
        """The answer is read whole, held `seconds`, then sent (the catalog is not held)."""
        return self.interposer.add_http_toxic("delay_response", match=match, delay_ms=int(seconds * 1000),
                                              times=times)

    def record_answer(self, match: HttpMatch, *, times: int = 1) -> str:
        """Nothing changes; the answer (status, body) is kept as an event of this rule."""
        return self.interposer.add_http_toxic("record_response", match=match, times=times)

    # -------------------------------------------------------------- requests
    def delay_request(self, match: HttpMatch, seconds: float, *, times: int = 1, name: str | None = None,
                      gather: int = 0) -> str:
        """The request is held `seconds` before it is forwarded (``gather``: see `hold_requests`)."""
        return self.interposer.add_http_toxic("delay_request", match=match, delay_ms=int(seconds * 1000),
                                              times=times, name=name, gather=int(gather))

    def hold_requests(self, match: HttpMatch, seconds: float, gather: int = 0) -> str:
        """Every matching request is held `seconds` before it is forwarded, until the rule is removed. With
        ``gather`` n: the matching requests are held until n of them are, then go together, and the ones after
        pass at once; `seconds` is then the longest hold (an event, not a guess, ends it)."""
        return self.delay_request(match, seconds, times=0, gather=gather)

    def duplicate(self, match: HttpMatch, *, copies: int = 1, parallel: bool = False, hold_copy: bool = False,
                  times: int = 1) -> str:
        """The network delivers the request 1 + `copies` times: with `parallel`, all released together (a
        burst); otherwise the copies after the first answer (``hold_copy``: only once the rule is removed)."""
        return self.interposer.add_http_toxic("duplicate_request", match=match, times=times, parallel=parallel,
                                              copies=copies, hold_copy=hold_copy)

    def duplicate_burst(self, match: HttpMatch, copies: int = 1) -> str:
        """The request and `copies` copies, released to the catalog together."""
        return self.duplicate(match, copies=copies, parallel=True)

    def count_matching(self, match: HttpMatch, name: str | None = None) -> str:
        """Changes nothing; `matched(name)` counts the requests the match selected until it is removed."""
        return self.interposer.add_http_toxic("delay_request", match=match, delay_ms=0, times=0, name=name)

    # -------------------------------------------------------------- the link
    def hold_link(self, seconds: float, name: str | None = None) -> str:
        """Every answer of the catalog is delayed `seconds` on its way to the client (TCP latency), until
        the rule is removed."""
        if name is None:
            self._seq += 1
            name = f"ctk_hold_link_{id(self) & 0xffff:x}_{self._seq}"
        return self.interposer.add_toxic(name, type="latency", stream="downstream",
                                         attributes={"latency": int(seconds * 1000), "jitter": 0})

    # -------------------------------------------------------------- what the rules saw
    def remove(self, *names: str | None) -> None:
        """Remove rules (used up, already gone or None: ignored)."""
        _remove_rules(self.interposer, names)

    def _count(self, name: str, which: str) -> int:
        return int(((self.interposer.counters.get("toxics") or {}).get(name) or {}).get(which, 0))

    def matched(self, name: str) -> int:
        """How many requests the rule's match selected (applied or not)."""
        return self._count(name, "matched")

    def applied(self, name: str) -> int:
        """How many times the rule acted."""
        return self._count(name, "applied")

    def kept_answers(self, name: str) -> list[dict]:
        """The answers the rule took from the client or recorded, as the interposer read them (``status``,
        ``body``), oldest first."""
        try:
            events = self.interposer.events_of(name)
        except Exception:  # noqa: BLE001 - an interposer without events: nothing known
            return []
        return [e for e in events if "body" in e and e.get("status") is not None]

    def wait_answer(self, name: str, timeout: float, unseen_grace: float = 2.0) -> bool:
        """Wait (polling the rule's events every 10 ms, at most `timeout` s) until the catalog's answer to the
        request the rule took has reached the interposer; whether it did. When no request has reached the rule
        after `unseen_grace` s (the client gave up before sending it), there is nothing to wait for: False."""
        started = time.monotonic()
        deadline = started + max(0.0, timeout)
        while True:
            if self.kept_answers(name):
                return True
            now = time.monotonic()
            if now >= deadline or (now - started >= unseen_grace and not self.applied(name)):
                return False
            time.sleep(0.01)

    def arrivals(self, name: str) -> list[float]:
        """When each request a `count_matching` (or `delay_request`) rule selected was forwarded whole to the
        catalog (time.time(), oldest first): when the catalog got it, by the interposer's clock."""
        try:
            events = self.interposer.events_of(name, "request_forwarded")
        except Exception:  # noqa: BLE001 - an interposer without events: nothing known
            return []
        return [float(e["time"]) for e in events if e.get("time") is not None]

    def burst(self, name: str, timeout: float) -> dict | None:
        """The ``duplicate_burst`` report of a `duplicate` rule (forward and answer times of the original and
        its copies, the copies' answers, whether they overlapped), polled every 20 ms for at most `timeout` s;
        None when it did not come."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.interposer.events_of(name, "duplicate_burst")
            if found:
                return found[-1]
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.02)


class LinkFaults:
    """Intention-named faults on the link between a catalog and its database (see the module docstring)."""

    def __init__(self, link: DbLink):
        self.link = link
        self._seq = 0
        self._held: set[str] = set()   # fail_write_hold rules: restoring them enables the link again
        # the link is shared by every request the catalog serves: arming takes its exclusive turn (linklock.py)
        self.turns = LinkLock.of(link)
        self._armed: set[str] = set()

    def _own(self, what: str) -> None:
        """Before a fault is armed: the link's exclusive turn (waits for the checks of other processes)."""
        if not self._armed:
            self.turns.acquire_exclusive()
        self._armed.add(what)

    def _disown(self, what: str | None) -> None:
        if what in self._armed:
            self._armed.discard(what)
            if not self._armed:
                self.turns.release_exclusive()

    def _armed_as(self, what: str, arm: Any) -> Any:
        """Arm (``arm()``) with the link owned; a failed arming gives the turn back."""
        self._own(what)
        try:
            return arm()
        except BaseException:
            self._disown(what)
            raise

    def _name(self, what: str) -> str:
        self._seq += 1
        return f"ctk_db_{what}_{id(self) & 0xffff:x}_{self._seq}"

    def describe(self) -> str:
        describe = getattr(self.link, "describe", None)
        return describe() if describe is not None else "the database link"

    def db_hold(self, ms: int) -> str:
        """Every answer of the database is delayed `ms` (latency), until the rule is removed."""
        name = self._name("hold")
        return self._armed_as(name, lambda: self.link.add_toxic(name, type="latency", stream="downstream",
                                                                attributes={"latency": int(ms), "jitter": 0}))

    def db_fail(self, mode: str, write_pattern: str = DB_WRITE_PATTERN) -> str | None:
        """The database link fails (``mode``: see the module docstring) until `db_restore` gets the result."""
        if mode == "down":
            self._armed_as(DOWN, self.link.disable)
            return None
        if mode == "fail_write":   # one write fails; the link works for everything after it
            name = self._name("fail_write")
            return self._armed_as(name, lambda: self.link.add_toxic(
                name, type="cut_after", stream="upstream",
                attributes={"pattern": write_pattern, "deliver": 0, "times": 1}))
        if mode == "fail_write_hold":   # one write fails and the link stays down until db_restore
            name = self._name("fail_write_hold")
            self._armed_as(name, lambda: self.link.add_toxic(
                name, type="cut_after", stream="upstream",
                attributes={"pattern": write_pattern, "deliver": 0, "times": 1, "then_down": 1}))
            self._held.add(name)
            return name
        if mode == "reset_peer":
            name = self._name("reset")
            return self._armed_as(name, lambda: self.link.add_toxic(name, type="reset_peer", stream="downstream",
                                                                    attributes={"timeout": 50}))
        raise ValueError(f"mode must be one of {', '.join(DB_FAILURES + DB_HOLDS)}, not {mode!r}")

    def db_restore(self, failed: str | None) -> None:
        """Undo `db_fail` (its return value)."""
        if failed is None:
            self.link.enable()
            self._disown(DOWN)
            return
        if failed in self._held:     # the cut took the link down with it: bring it back (before the turn ends)
            self._held.discard(failed)
            _remove_rules(self.link, (failed,))
            self.link.enable()
        self.remove(failed)

    def went_down(self, name: str) -> bool:
        """Whether a ``fail_write_hold`` rule cut a write (and so took the link down)."""
        return bool(self.cuts(name))

    def db_cut_after_commit(self, pattern: str = "COMMIT") -> str:
        """The database's answer to the next statement matching `pattern` is cut (it runs, the catalog never
        hears the outcome); once."""
        name = self._name("cut")
        return self._armed_as(name, lambda: self.link.add_toxic(name, type="cut_after", stream="upstream",
                                                                attributes={"pattern": pattern, "times": 1}))

    def cuts(self, name: str) -> list[dict]:
        """What a `db_cut_after_commit` or ``fail_write`` rule cut (its events, with ``sent``)."""
        return [e for e in self.link.events_of(name) if e.get("kind") == "cut_after"]

    def disarm_all(self) -> None:
        """Remove every fault this object armed and bring the link back up (an interrupted check's fault stays
        armed otherwise, and the catalog then cannot serve the run's cleanup); the link's turn is given back."""
        armed = [n for n in self._armed if n != DOWN]
        if DOWN in self._armed or self._held:
            try:
                self.link.enable()
            except Exception:  # noqa: BLE001 - the proxy is gone: nothing to bring back
                pass
        self._held.clear()
        _remove_rules(self.link, tuple(armed))
        for n in [*armed, DOWN]:
            self._disown(n)

    def remove(self, *names: str | None) -> None:
        """Remove rules (used up, already gone or None: ignored); the link's turn is given back with the last."""
        _remove_rules(self.link, names)
        for n in names:
            self._disown(n)


#: what `LinkFaults` calls the link taken down (``db_fail("down")``) among its armed faults
DOWN = "\0down"


def _remove_rules(proxy: Any, names: tuple[str | None, ...]) -> None:
    for n in names:
        if not n:
            continue
        try:
            proxy.remove_toxic(n)
        except Exception:  # noqa: BLE001 - already gone
            pass
