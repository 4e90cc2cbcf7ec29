"""No process of a run outlives it, and an interrupt is not lost.

* ``die_with_parent``: the Linux parent-death signal (prctl PR_SET_PDEATHSIG). `ctk run` sets it in its pytest
  child, the plugin in every xdist worker: when `ctk run` is killed (SIGKILL included), pytest receives SIGTERM
  and stops as on Ctrl-C (the run namespace removed, partial reports); when the pytest controller is killed,
  its workers do the same. Elsewhere (not Linux) it does nothing.
* ``Lifeline``: the plugin's part: the controller hands its pid to each worker (which sets the signal), and
  after a SIGTERM waits, bounded, until each worker has finished its session (its cleanup) before xdist tears
  the workers down (else execnet interrupts a worker's cleanup 5 s later and kills it 10 s after that).
* ``keep_interrupting``/``running_tests``: after the first SIGTERM the KeyboardInterrupt is raised again, once
  a second, while the run is still collecting or running tests: a library that swallows it (a bare
  ``except:``; seen: a worker went on with its check after the KeyboardInterrupt was raised inside an import)
  cannot keep the run going; the cleanup is never interrupted.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any, Callable

import pytest

PR_SET_PDEATHSIG = 1
PARENT_KEY = "ctk_parent_pid"
WORKERS_GRACE_S = 30.0          # the longest the controller waits for its workers' cleanup after a SIGTERM
REDELIVER_EVERY_S = 1.0
WORKERS_EXIT_S = 2.0            # after a SIGTERM, once every worker has finished its session: their time to exit


def die_with_parent(signum: int = signal.SIGTERM, parent: int | None = None) -> bool:
    """Have the kernel send ``signum`` to this process when its parent dies. ``parent``: the pid it must have;
    when the parent is already gone (the process was reparented), ``signum`` is sent now. True when set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signum)
    return True


def child_preexec(signum: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for subprocess.Popen: the child gets ``signum`` when the calling process dies."""
    parent = os.getpid()

    def preexec() -> None:
        die_with_parent(signum, parent)

    return preexec


def running_tests(frame: Any) -> bool:
    """Whether ``frame`` is inside pytest's collection and test loop (``_pytest.main._main``): where a
    KeyboardInterrupt stops the run as Ctrl-C does. Outside it (start-up, the interrupt's handling, the session's
    finish with the cleanup and reports, unconfigure) a KeyboardInterrupt would only cut things short."""
    f = frame
    while f is not None:
        code = f.f_code
        if code.co_name == "_main" and code.co_filename.replace("\\", "/").endswith("_pytest/main.py"):
            return True
        f = f.f_back
    return False


# Set once the run is finishing (pytest handles the interrupt, or the session finishes): no more re-delivery.
FINISHING = threading.Event()


def keep_interrupting(signum: int = signal.SIGTERM) -> threading.Thread:
    """Re-send ``signum`` to the main thread once a second until FINISHING is set; the handler raises again only
    where ``running_tests`` (so a KeyboardInterrupt swallowed by a library, or one that arrived during start-up,
    still stops the run, and the cleanup is never cut short)."""
    main = threading.main_thread().ident

    def loop() -> None:
        if main is None:     # (the main thread has always started; nothing to re-deliver to otherwise)
            return
        while not FINISHING.wait(REDELIVER_EVERY_S):
            try:
                signal.pthread_kill(main, signum)
            except (OSError, ValueError, TypeError):
                return

    t = threading.Thread(target=loop, name="ctk-interrupt-redelivery", daemon=True)
    t.start()
    return t


class Lifeline:
    """Registered by the plugin when a run is active (see the module docstring)."""

    def __init__(self, config: pytest.Config, interrupted: Callable[[], bool]) -> None:
        self.config = config
        self.interrupted = interrupted
        self.nodes: list[Any] = []
        FINISHING.clear()
        winput = getattr(config, "workerinput", None)
        if winput and winput.get(PARENT_KEY):
            die_with_parent(signal.SIGTERM, int(winput[PARENT_KEY]))

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[PARENT_KEY] = os.getpid()
        self.nodes.append(node)

    def run_ids(self) -> list[str]:
        """The run ids the workers name their run namespaces by (ctk.plugin.session.worker_identity)."""
        return list(dict.fromkeys(str(n.workerinput.get("testrunuid"))[:8] for n in self.nodes
                                  if n.workerinput.get("testrunuid")))

    def unfinished(self) -> list[str]:
        """The workers that did not hand their cleanup's outcome back (stopped before their session finished)."""
        return [str(n.workerinput.get("workerid", "?")) for n in self.nodes
                if "ctk_cleanup_problems" not in (getattr(n, "workeroutput", None) or {})]

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        FINISHING.set()
        if not self.interrupted():
            return
        # Our SIGTERM: its one line was written; no "KeyboardInterrupt" banner with a traceback at the end, so
        # none is rendered either (the terminal reporter renders every frame of every chained KeyboardInterrupt,
        # with arguments, up front: 8-10 s on a loaded machine, measured).
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and hasattr(reporter, "_report_keyboardinterrupt"):
            reporter._report_keyboardinterrupt = lambda: None
            try:
                setattr(excinfo, "getrepr", lambda *args, **kwargs: None)   # nothing to render (see above)
            except Exception:  # noqa: BLE001 - pytest's ExceptionInfo changed: rendered, only slower
                pass

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        FINISHING.set()
        if self.nodes and self.interrupted() and self.wait_for_workers(WORKERS_GRACE_S):
            # every worker has finished its session, cleanup included: xdist need not give their processes its
            # 10 s to exit before it kills them (on a loaded machine their interpreter's shutdown took that long)
            manager = getattr(self.config.pluginmanager.get_plugin("dsession"), "nodemanager", None)
            if manager is not None and hasattr(manager, "EXIT_TIMEOUT"):
                manager.EXIT_TIMEOUT = WORKERS_EXIT_S

    def wait_for_workers(self, seconds: float) -> bool:
        """Until every worker has finished its session (xdist's "workerfinished" arrived: its cleanup is done) or
        is gone, at most ``seconds``; True when all have."""
        deadline = time.monotonic() + seconds

        def done(node: Any) -> bool:
            channel = getattr(node, "channel", None)
            return channel is None or getattr(node, "workeroutput", None) is not None or channel.isclosed()

        while not all(done(n) for n in self.nodes):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True
