"""How a ctk run ends: its exit codes, `--ctk-fail-on`, and SIGTERM handled like Ctrl-C.

Exit codes (the same for `pytest --catalog-url ...` and `ctk run`):

    0  no MUST broken and every MUST decided that this setup can decide (deviations, classified passes, not
       applicable results and results this setup cannot decide - "needs --ctk-db-link" - allowed, unless
       --ctk-fail-on names them)
    1  a MUST broken (a check failed or crashed), or a result --ctk-fail-on names
    2  interrupted (Ctrl-C, SIGINT or SIGTERM); partial reports are written and marked "interrupted"
    3  internal error (pytest's own code)
    4  usage error (bad option value; pytest's own code)
    5  no tests collected (e.g. -k matched nothing; pytest's own code)
    6  the target is unusable (nothing listening, no answer, not HTTP, not JSON, credentials rejected,
       run namespace not creatable): one error naming the cause, no checks run, a report saying why
    7  no MUST broken, but a MUST was left undecided although this setup could decide it: a setup step failed,
       a storage setting is missing (OCC and history checks need to write table files), the outcome was
       unclear. The terminal's last lines name the requirements and what to change.
    8  --ctk-certify: the run passed, but it does not qualify as a certified run (a subset, known gaps,
       declared capabilities, a finding); the terminal's last lines say which condition failed

With --ctk-known-gaps FILE a finding the file lists does not fail the run (its test is an expected failure,
its status is left out of --ctk-fail-on and of the undecided MUSTs); a finding it does not list is new.

--ctk-fail-on (comma-separated): deviation, inconclusive, unsupported, stale (a known gap whose checks now
pass); ``ci`` = deviation,inconclusive,stale: the
strictness docs/verdicts.md recommends for CI: the reference catalog and every allowed variant pass, every
deviation profile the setup can observe fails (results this setup cannot decide, "needs ...", do not).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, Iterable

import pytest

from ctk.reporting.model import MUST_UNDECIDED

EXIT_OK = 0
EXIT_MUST_BROKEN = 1
EXIT_INTERRUPTED = 2
EXIT_USAGE = 4
EXIT_UNUSABLE_TARGET = 6
EXIT_MUST_UNDECIDED = 7
EXIT_NOT_CERTIFIED = 8

FAIL_ON_CHOICES = ("deviation", "inconclusive", "unsupported", "stale", "ci")
FAIL_ON_ALIASES = {"ci": ("deviation", "inconclusive", "stale")}

MEANING = {
    0: "no MUST broken, and every MUST this setup can decide was decided",
    1: "a MUST is broken (or a result --ctk-fail-on names)",
    2: "interrupted: the reports are partial",
    4: "usage error",
    5: "no tests collected",
    6: "the target is unusable",
    EXIT_MUST_UNDECIDED: MUST_UNDECIDED,
    EXIT_NOT_CERTIFIED: "--ctk-certify: the run does not qualify as a certified run (why above)",
}


def meaning(code: int) -> str:
    return MEANING.get(int(code), "pytest's own exit code")


def fail_on(config: pytest.Config) -> frozenset[str]:
    """The statuses named by --ctk-fail-on; a usage error naming the option as typed for anything else."""
    raw = config.getoption("ctk_fail_on", default=None)
    if not raw:
        return frozenset()
    chosen = {part.strip().lower() for part in str(raw).split(",") if part.strip()}
    unknown = sorted(chosen - set(FAIL_ON_CHOICES))
    if unknown or not chosen:
        raise pytest.UsageError(f"ctk: --ctk-fail-on {raw!r}: expected a comma-separated list of "
                                f"{', '.join(FAIL_ON_CHOICES)} (ci = deviation,inconclusive,stale)")
    for alias, statuses in FAIL_ON_ALIASES.items():
        if alias in chosen:
            chosen = (chosen - {alias}) | set(statuses)
    return frozenset(chosen)


def decide(current: int, report: Any, chosen: frozenset[str]) -> tuple[int, dict[str, int], list[str]]:
    """The run's exit code from pytest's (``current``) and the run report: (code, --ctk-fail-on hits, undecided
    MUSTs). Only a run pytest would end 0 changes: to 1 for a new finding (--ctk-known-gaps) or a result
    --ctk-fail-on names (a known gap counts for neither; a stale one for ``stale``), else to 7 for a MUST left
    undecided that this setup could decide (``RunReport.undecided_musts``), else to 8 for a --ctk-certify run
    that does not qualify."""
    if report is None:
        return current, {}, []
    judged = getattr(report, "gaps_judged", None)
    covered = set(judged.covered) if judged is not None else set()
    hits = fail_on_hits((r.status for i, r in enumerate(report.results) if i not in covered), chosen)
    if judged is not None and "stale" in chosen and judged.stale():
        hits["stale"] = len(judged.stale())
    if judged is not None and judged.new:
        hits["new"] = len(judged.new)
    undecided = report.undecided_musts(skip=covered) if report.state != "unusable-target" else []
    if current != EXIT_OK:
        return current, hits, undecided
    if hits:
        return EXIT_MUST_BROKEN, hits, undecided
    if undecided:
        return EXIT_MUST_UNDECIDED, hits, undecided
    cert = getattr(report, "certification", None)
    if cert and cert.get("requested") and not cert.get("certified"):
        return EXIT_NOT_CERTIFIED, hits, undecided
    return EXIT_OK, hits, undecided


def fail_on_hits(statuses: Iterable[str | None], chosen: frozenset[str]) -> dict[str, int]:
    """How many results have each status that --ctk-fail-on names."""
    hits: dict[str, int] = {}
    for s in statuses:
        if s in chosen:
            hits[s] = hits.get(s, 0) + 1
    return hits


# --- SIGTERM ---------------------------------------------------------------------------------------


SIGNAL_NOTE_ENV = "CTK_SIGNAL_NOTE"   # `ctk run` forwards the user's signal as SIGTERM and names it in this file


def signal_name() -> str:
    """The signal the user sent: what `ctk run` noted (SIGINT (Ctrl-C) or SIGTERM) where it forwarded one, else
    SIGTERM (the one this process got)."""
    path = os.environ.get(SIGNAL_NOTE_ENV)
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                noted = f.read(60).strip()
        except OSError:
            noted = ""
        if noted:
            return noted
    return "SIGTERM"


class Interrupts:
    """SIGTERM (CI cancelling a job, `docker stop`) handled as Ctrl-C: pytest stops, tears its fixtures down
    (the run namespace is removed), writes partial reports and exits 2. On the xdist controller the first
    signal also goes on to its children (the workers) as SIGTERM, so each removes its own run namespace
    (SIGTERM, not SIGINT: a shell's background job has SIGINT ignored, and so have its children). The
    KeyboardInterrupt is raised only while tests are collected or run, and again each second until pytest
    handles it; a SIGTERM while cleaning up is ignored (cleanup is bounded by its own budget)."""

    def __init__(self, forward: bool = False) -> None:
        self.forward = forward          # pass the signal on to child processes (the xdist controller's workers)
        self.received: int | None = None
        self._previous: Any = None

    def install(self) -> None:
        if os.name != "posix":
            return
        try:
            self._previous = signal.signal(signal.SIGTERM, self._on_sigterm)
        except ValueError:   # not the main thread (e.g. an embedding application): leave it alone
            self._previous = None

    def uninstall(self) -> None:
        if self._previous is not None:
            try:
                signal.signal(signal.SIGTERM, self._previous)
            except ValueError:
                pass
            self._previous = None

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        from ctk.plugin import lifeline   # raise only while tests run, again until the run stops (ctk.plugin.lifeline)

        if self.received is None:
            self.received = signum
            if self.forward:
                forward_to_children(signal.SIGTERM)
            sys.stderr.write(f"\nctk: {signal_name()} received: stopping, removing the run namespace, writing partial "
                             "reports\n")
            lifeline.keep_interrupting(signal.SIGTERM)
        if lifeline.running_tests(frame):
            raise KeyboardInterrupt


def children(pid: int | None = None) -> list[int]:
    """Direct child processes of ``pid`` (this process by default), from /proc; [] where there is none."""
    pid = os.getpid() if pid is None else pid
    out = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            out = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        try:
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                            stat = f.read()
                        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                            out.append(int(entry))
                    except (OSError, ValueError, IndexError):
                        continue
        except OSError:
            pass
    return out


def forward_to_children(signum: int) -> list[int]:
    sent = []
    for child in children():
        try:
            os.kill(child, signum)
            sent.append(child)
        except OSError:
            pass
    return sent
