"""Turns on a shared database link (ctk.interposer.linklock, issue 30 item 2b, issue 34 item 6): a link fault is
armed only while no request of another process is in flight (and no whole check of it runs), and no other request
is sent while it is armed; the turn ends with the injection, not with the arming check. Two processes here, as two
xdist workers are: this one arms through `LinkFaults`, a child process runs "checks" and "requests" (shared
turns)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

import pytest

from ctk.interposer import Interposer
from ctk.interposer.faults import LinkFaults
from ctk.interposer.linklock import LinkLock

CHILD = """
import sys
from ctk.interposer.linklock import LinkLock
lock = LinkLock.for_url(sys.argv[1])
for line in sys.stdin:
    if line.strip() == "check":
        with lock.check_scope():
            print("in", flush=True)
            sys.stdin.readline()            # until told to leave
        print("out", flush=True)
    elif line.strip() == "try":             # a check that begins while the parent owns the link
        with lock.check_scope():
            print("in", lock.waits, flush=True)
            sys.stdin.readline()
        print("out", flush=True)
"""


#: a worker whose checks take turns per request (check_scope(whole=False)): "scope" opens a check, "req" sends a
#: request (in flight until the next line), "lost" a request that ended without its answer, "end" ends the check
PER_REQUEST_CHILD = """
import sys
from ctk.interposer.linklock import LinkLock
lock = LinkLock.for_url(sys.argv[1])
scope = None
for line in sys.stdin:
    what = line.strip()
    if what == "scope":
        scope = lock.check_scope(whole=False)
        scope.__enter__()
        print("scope", lock.mode, flush=True)
    elif what == "req":
        with lock.request():
            print("in", lock.waits, flush=True)
            sys.stdin.readline()            # in flight until told it was answered
        print("answered", lock.mode, flush=True)
    elif what == "lost":
        with lock.request():
            lock.unfinished()
        print("lost", lock.mode, flush=True)
    elif what == "end":
        scope.__exit__(None, None, None)
        print("end", lock.mode, flush=True)
"""


@pytest.fixture
def link(tmp_path, monkeypatch):
    monkeypatch.setenv("CTK_LINK_LOCK_DIR", str(tmp_path))
    LinkLock._registry.clear()
    with Interposer(upstream=("127.0.0.1", 9)) as ip:       # nothing behind it is needed: only the link's state
        yield ip
    LinkLock._registry.clear()


@contextlib.contextmanager
def _worker(script: str, link, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", script, link.url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "CTK_LINK_LOCK_DIR": str(tmp_path)})

    def say(line: str) -> str:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return proc.stdout.readline().strip()

    try:
        yield say
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def child(link, tmp_path):
    with _worker(CHILD, link, tmp_path) as say:
        yield say


@pytest.fixture
def requests_child(link, tmp_path):
    with _worker(PER_REQUEST_CHILD, link, tmp_path) as say:
        yield say


def _until(pred, limit: int = 2000) -> bool:
    """Polls `pred` (a counter), at most `limit` times 5 ms apart."""
    ev = threading.Event()
    for _ in range(limit):
        if pred():
            return True
        ev.wait(0.005)
    return False


def test_a_fault_waits_for_the_other_process_check_and_holds_off_the_next(link, child):
    assert child("check") == "in"                          # another worker's check is running
    faults = LinkFaults(link)
    turns = faults.turns
    armed, go_on = threading.Event(), threading.Event()

    def check_arming_a_fault() -> None:
        with turns.check_scope():                          # this worker's check, as the plugin runs it
            faults.db_fail("down")
            armed.set()
            go_on.wait(30)
            faults.db_restore(None)                        # restored; the turn is kept to the check's end

    t = threading.Thread(target=check_arming_a_fault, daemon=True)
    t.start()
    assert _until(lambda: turns.waits >= 1)                # it waits for the other process's check
    assert not armed.is_set()
    assert child("leave") == "out"                         # that check ended: now the fault is armed
    assert armed.wait(30)
    said: dict[str, str] = {}
    other = threading.Thread(target=lambda: said.setdefault("try", child("try")), daemon=True)
    other.start()                                          # a check beginning on the other worker ...
    assert _until(lambda: _turnstile_taken(turns))         # ... waits (at the turnstile, behind the owner)
    assert "try" not in said
    go_on.set()
    t.join(30)
    other.join(30)
    assert said["try"].startswith("in") and int(said["try"].split()[1]) >= 1, said
    assert child("leave") == "out"
    assert turns.mode is None


def test_without_a_check_scope_the_turn_ends_with_the_last_fault(link, child):
    faults = LinkFaults(link)
    hold = faults.db_hold(5)
    cut = faults.db_cut_after_commit()
    assert faults.turns.mode == "exclusive"
    faults.remove(hold)
    assert faults.turns.mode == "exclusive"                # the cut is still armed
    faults.remove(cut)
    assert faults.turns.mode is None
    assert child("try") == "in 0"                          # nothing to wait for
    assert child("leave") == "out"


def test_a_long_check_lets_a_waiting_fault_in_between_its_units(link, child, tmp_path):
    """pause_point (the generated cases call it between examples): a writer waiting for the link gets its turn,
    then the long check goes on; with no writer waiting it changes nothing."""
    turns = LinkLock.for_url(link.url)
    with turns.check_scope():
        turns.pause_point()
        assert turns.mode == "shared" and turns.waits == 0
        writer = subprocess.Popen(
            [sys.executable, "-c", "import sys; from ctk.interposer.linklock import LinkLock; "
             "l = LinkLock.for_url(sys.argv[1]); l.acquire_exclusive(); print('owned', flush=True); "
             "sys.stdin.readline(); l.release_exclusive(); print('given back', flush=True)", link.url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "CTK_LINK_LOCK_DIR": str(tmp_path)})
        try:
            done = threading.Event()

            def pause() -> None:
                turns.pause_point()
                done.set()

            # the writer waits for this check's shared turn; pause_point lets it in and waits behind it
            p = threading.Thread(target=pause, daemon=True)
            assert _until(lambda: _turnstile_taken(turns))
            p.start()
            assert writer.stdout.readline().strip() == "owned"
            assert not done.is_set()
            writer.stdin.write("\n")
            writer.stdin.flush()
            assert writer.stdout.readline().strip() == "given back"
            assert done.wait(30) and turns.mode == "shared"
        finally:
            writer.kill()
            writer.wait()


def _turnstile_taken(turns: LinkLock) -> bool:
    """Whether another process holds the turnstile (a writer waiting or owning, a reader queued behind one)."""
    import fcntl

    fd = os.open(turns.path + ".turn", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_fault_waits_only_for_requests_in_flight_and_its_turn_ends_with_the_injection(link, requests_child):
    """Issue 34 item 6: another worker's check that arms nothing holds no turn between its requests; a fault
    waits for the one in flight, the next request waits while the fault is armed, and the turn is given back when
    the fault is removed - the arming check still running."""
    assert requests_child("scope") == "scope None"         # a check of the other worker: no turn of its own
    assert requests_child("req") == "in 0"                 # its request is in flight
    faults = LinkFaults(link)
    turns = faults.turns
    armed, go_on, removed, finish = threading.Event(), threading.Event(), threading.Event(), threading.Event()

    def check_arming_a_fault() -> None:
        with turns.check_scope(whole=False):              # this worker's check, as the plugin runs it
            faults.db_fail("down")
            armed.set()
            go_on.wait(30)
            faults.db_restore(None)                        # the injection is over: the turn ends here
            removed.set()
            finish.wait(30)                                # ... while the check goes on

    t = threading.Thread(target=check_arming_a_fault, daemon=True)
    t.start()
    assert _until(lambda: turns.waits >= 1)                # it waits for the request in flight
    assert not armed.is_set()
    assert requests_child("") == "answered None"           # answered: the fault is armed, the check goes on
    assert armed.wait(30)
    said: dict[str, str] = {}
    other = threading.Thread(target=lambda: said.setdefault("req", requests_child("req")), daemon=True)
    other.start()                                          # the other check's next request ...
    assert _until(lambda: _turnstile_taken(turns))         # ... waits (at the turnstile, behind the owner)
    assert "req" not in said
    go_on.set()
    assert removed.wait(30)
    other.join(30)
    assert said["req"].startswith("in") and int(said["req"].split()[1]) >= 1, said   # sent once the fault went
    assert t.is_alive()                                    # the arming check had not ended
    assert requests_child("") == "answered None"
    finish.set()
    t.join(30)
    assert turns.mode is None
    assert requests_child("end") == "end None"


def test_a_request_ended_without_its_answer_keeps_the_turn_to_the_check_end(link, requests_child):
    """The catalog may still be at work on a request whose answer never came: no fault is armed until that
    check ended."""
    assert requests_child("scope") == "scope None"
    assert requests_child("lost") == "lost shared"         # kept after the request
    turns = LinkLock.for_url(link.url)
    owned = threading.Event()

    def arm() -> None:
        turns.acquire_exclusive()
        owned.set()

    t = threading.Thread(target=arm, daemon=True)
    t.start()
    assert _until(lambda: turns.waits >= 1)
    assert not owned.is_set()
    assert requests_child("end") == "end None"             # the check ended: now the fault is armed
    assert owned.wait(30)
    turns.release_exclusive()
    assert turns.mode is None


def test_a_turn_given_back_during_an_own_request_ends_with_it(link, requests_child):
    """The exclusive turn is never turned into a shared one in place (flock unlocks first, a waiting writer could
    get in under the request still in flight): it ends when this process's last request then in flight ends."""
    turns = LinkLock.for_url(link.url)
    in_flight, answered = threading.Event(), threading.Event()
    with turns.check_scope(whole=False):
        turns.acquire_exclusive()

        def request() -> None:
            with turns.request():
                in_flight.set()
                answered.wait(30)

        t = threading.Thread(target=request, daemon=True)
        t.start()
        assert in_flight.wait(30)
        turns.release_exclusive()                           # the injection is over, its request is not
        assert turns.mode == "exclusive"
        assert requests_child("scope") == "scope None"
        said: dict[str, str] = {}
        other = threading.Thread(target=lambda: said.setdefault("req", requests_child("req")), daemon=True)
        other.start()
        assert _until(lambda: _turnstile_taken(turns))      # the other worker's request waits for it
        answered.set()
        t.join(30)
        other.join(30)
        assert said["req"].startswith("in 1"), said
        assert turns.mode is None
        assert requests_child("") == "answered None"
