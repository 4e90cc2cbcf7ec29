"""The kit as a user runs it, for the sensitivity matrix under workers: `ctk serve --control-api` (optionally with
a deviation profile) in its own process, `ctk run --catalog-url` against it (default workers unless told), and
the judgement of its conformance.json against a profile's `catches`.

Used by tests/checks/test_sensitivity_workers.py (a representative subset) and bench/bench_sensitivity_workers.py
(every profile, printed as a matrix; `nox -s sensitivity`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ctk.checks import ENDPOINT_CHECKS
from ctk.core.requirements import status_if_broken
from ctk.reference.deviations import PROFILES

# The lifetime every matrix advertises: short enough that LIFE-01 (a duplicate at 90%) and LIFE-03 (just past
# the lifetime) wait a few seconds, and its half (short-lifetime's real one) longer than any retry delay of the
# other checks (about a second).
LIFETIME, GRACE = "PT4S", "PT2S"
RUN_LIMIT = 900.0        # seconds for one `ctk run` of the whole kit (about a minute on an idle 2-core machine)
BROKEN = ("fail", "deviation")
# the requirements the endpoint checks judge, endpoint by endpoint (their verdicts name the endpoint): what the
# registry's per-endpoint checks report on (ctk.checks.ENDPOINT_CHECKS)
ENDPOINT_REQUIREMENTS = frozenset(rid for _, fn in ENDPOINT_CHECKS for rid, _ in fn.ctk_check.reports)


@contextmanager
def serve(deviation: str | None = None, lifetime: str = LIFETIME, grace: str = GRACE, control_api: bool = True,
          variant: str | None = None) -> Iterator[str]:
    """`ctk serve --control-api` (without it: a plain catalog, as a third party's) in its own process, with a
    deviation profile or an allowed variant; yields its URL; stopped with SIGINT afterwards."""
    cmd = [sys.executable, "-m", "ctk", "serve", "--lifetime", lifetime, "--grace", grace]
    if control_api:
        cmd.append("--control-api")
    if deviation:
        cmd += ["--deviation", deviation]
    if variant:
        cmd += ["--variant", variant]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = (proc.stdout.readline() if proc.stdout else "").strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"ctk serve {' '.join(cmd[3:])} did not print its URL (got {url!r})")
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@dataclass
class KitRun:
    exit_code: int
    seconds: float
    report: dict
    log: str

    @property
    def results(self) -> list[dict]:
        return self.report.get("results") or []

    @property
    def workers(self) -> set[str]:
        """The xdist workers that decided the verdicts (conformance.json: each result's `worker`, gw0, gw1, ...;
        none in one process)."""
        return {str(r["worker"]) for r in self.results if r.get("worker")}


def run_kit(url: str, reports: Path, workers: int | None = None, limit: float = RUN_LIMIT,
            options: tuple[str, ...] = ()) -> KitRun:
    """`ctk run --catalog-url URL [options]` (the runner's default workers unless `workers` is given); its
    conformance.json."""
    cmd = [sys.executable, "-m", "ctk", "run", "--catalog-url", url, "--ctk-reports", str(reports), *options]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    cmd += ["--", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    seconds = time.monotonic() - t0
    path = reports / "conformance.json"
    if not path.exists():
        raise RuntimeError(f"ctk run wrote no {path} (exit {done.returncode}):\n{done.stdout[-3000:]}\n"
                           f"{done.stderr[-3000:]}")
    return KitRun(done.returncode, seconds, json.loads(path.read_text(encoding="utf-8")),
                  done.stdout[-5000:] + done.stderr[-2000:])


def rule_broken(result: dict) -> bool:
    """A verdict that reports its requirement's rule broken: fail or deviation, or a pass that classifies a
    behaviour the active profile does not judge (it carries details.rule_broken)."""
    return result.get("status") in BROKEN or bool((result.get("details") or {}).get("rule_broken"))


def level_status(r: dict, want: str) -> str:
    """The status a broken rule's verdict gets: `want` (its requirement's level), or a deviation where a semantic
    check judged it at the documents' level (details.judged_at: a status-only finding, or a rule no kit MUST
    covers)."""
    return "deviation" if want == "fail" and (r.get("details") or {}).get("judged_at") else want


def _line(r: dict) -> str:
    return (f"{r.get('requirement')} {r.get('endpoint')} {r.get('behaviour')}: {r.get('status')}"
            f"{' (' + r['classification'] + ')' if r.get('classification') else ''}: "
            f"{(r.get('message') or '')[:300]!r}")


@dataclass
class Judgement:
    """What one profile's run shows against its `catches`."""
    profile: str
    caught: dict[str, str] = field(default_factory=dict)      # requirement -> the verdicts it got
    missed: dict[str, list[str]] = field(default_factory=dict)  # listed, not caught with its level's verdict
    unlisted: dict[str, list[str]] = field(default_factory=dict)  # broken, not listed
    errors: list[str] = field(default_factory=list)
    blind: dict[str, list[str]] = field(default_factory=dict)   # listed, decided there on the reference, not caught

    @property
    def exact(self) -> bool:
        return not (self.missed or self.unlisted or self.errors or self.blind)

    def explain(self) -> str:
        out = [f"{self.profile}: " + ("exact" if self.exact else "NOT exact")]
        for title, part in (("missed", self.missed), ("unlisted", self.unlisted), ("not caught on", self.blind)):
            for req, lines in part.items():
                out.append(f"  {title} {req}:")
                out += [f"    {x}" for x in lines[:6]]
        out += [f"  error: {x}" for x in self.errors[:6]]
        return "\n".join(out)


def judge(profile: str, catches: tuple[str, ...] | list[str], results: list[dict],
          profile_of_run: str = "spec", reference: list[dict] | None = None) -> Judgement:
    """Exact: every listed requirement has a verdict that reports its rule broken with the verdict its level
    calls for under the run's profile; no other requirement has one; no check ended in error. With the
    reference's run (`reference`), per endpoint too: a listed requirement the reference's endpoint checks
    decided (pass) on an endpoint is caught on that endpoint, where the deviation profile shows it
    (Profile.shown_on)."""
    j = Judgement(profile)
    if reference is not None and profile in PROFILES:
        shown = PROFILES[profile]
        decided = {(r.get("requirement"), r.get("endpoint")) for r in reference
                   if r.get("endpoint") and r.get("status") == "pass"}
        for req, endpoint in sorted(decided):
            if req in ENDPOINT_REQUIREMENTS and shown.shown_on_endpoint(req, endpoint) and not any(
                    r.get("requirement") == req and r.get("endpoint") == endpoint and rule_broken(r)
                    for r in results):
                j.blind.setdefault(req, []).append(endpoint)
    listed = set(catches)
    for r in results:
        if r.get("status") == "error":
            j.errors.append(_line(r))
    for req in sorted(listed):
        verdicts = [r for r in results if r.get("requirement") == req]
        want = status_if_broken(req, profile_of_run)
        hits = [r for r in verdicts if rule_broken(r) and r.get("status") == level_status(r, want)]
        if hits:
            j.caught[req] = ",".join(sorted({r["status"] + (f"({r['classification']})" if r.get("classification")
                                                           and r["status"] == "pass" else "") for r in hits}))
        else:
            j.missed[req] = [f"wanted {want}, got:"] + ([_line(r) for r in verdicts] or ["no verdict at all"])
    for r in results:
        req = r.get("requirement")
        if req not in listed and rule_broken(r):
            j.unlisted.setdefault(req, []).append(_line(r))
    return j


def verdict_key(r: dict) -> tuple[str, str, str]:
    return (r.get("requirement") or "", r.get("endpoint") or "", r.get("behaviour") or "")


def status_table(results: list[dict], key: Callable[[dict], tuple] = verdict_key) -> dict[tuple, str]:
    """``key`` (requirement + endpoint + behaviour) -> its status (several verdicts under one key: the set of
    statuses)."""
    t: dict[tuple, set[str]] = {}
    for r in results:
        t.setdefault(key(r), set()).add(r.get("status") or "?")
    return {k: "/".join(sorted(v)) for k, v in t.items()}


def verdict_diff(a: list[dict], b: list[dict], only_in_a: frozenset[tuple] = frozenset(),
                 key: Callable[[dict], tuple] = verdict_key) -> list[str]:
    """Where run a and run b differ, per ``key`` (requirement + endpoint + behaviour): another status, or a verdict
    one run has and the other has not (except the keys in `only_in_a`, which run a has by design)."""
    ta, tb = status_table(a, key), status_table(b, key)
    return [f"{' '.join(k)}: {ta.get(k, '(none)')} vs {tb.get(k, '(none)')}"
            for k in sorted(set(ta) | set(tb)) if ta.get(k) != tb.get(k) and not (k in only_in_a and k not in tb)]


@contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` processes that spin on a core each while the block runs (a busy runner), killed afterwards."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()
