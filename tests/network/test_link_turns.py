"""Turns on a shared database link (ctk.interposer.linklock, issue 30 item 2b): a link fault is armed only while no
other process is inside a check, and no other check begins while it is armed. Two processes here, as two xdist
workers are: this one arms through `LinkFaults`, a child process runs "checks" (shared turns)."""

from __future__ import annotations

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


@pytest.fixture
def link(tmp_path, monkeypatch):
    monkeypatch.setenv("CTK_LINK_LOCK_DIR", str(tmp_path))
    LinkLock._registry.clear()
    with Interposer(upstream=("127.0.0.1", 9)) as ip:       # nothing behind it is needed: only the link's state
        yield ip
    LinkLock._registry.clear()


@pytest.fixture
def child(link, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, link.url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "CTK_LINK_LOCK_DIR": str(tmp_path)})

    def say(line: str) -> str:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return proc.stdout.readline().strip()

    yield say
    proc.kill()
    proc.wait()


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
