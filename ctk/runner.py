"""`ctk run`: the conformance kit = pytest with the ctk plugin, against the embedded reference catalog (default)
or a catalog URL; reports in reports/ (junit.xml, report.html, conformance.json, conformance.html).

    ctk run                                          # embedded reference catalog
    ctk run --catalog-url http://127.0.0.1:8181      # your catalog
    ctk run -k REPLAY-01                             # only the checks -k selects (as pytest's -k)
    ctk run --ctk-strict -- -k idempotency -n 2      # anything after -- goes to pytest as is

Exit status (ctk.plugin.exits): 0 no MUST broken, 1 a MUST broken (or a status --ctk-fail-on names),
2 interrupted, 4 usage error, 5 no tests selected, 6 the target is unusable, 7 a MUST left undecided,
8 not a certified run (--ctk-certify).

SIGINT and SIGTERM are passed on to the pytest child (and its xdist workers) as SIGTERM, which the plugin
handles like Ctrl-C (SIGTERM, because a shell starts background jobs with SIGINT ignored, and that carries
over to the child): they stop, remove their run namespaces and write partial reports marked "interrupted".
After a second signal the child is killed if it has not ended CHILD_GRACE_S later. When `ctk run` itself is
killed (SIGKILL), the child gets SIGTERM from the kernel (the parent-death signal, ctk.plugin.lifeline; Linux)
and stops the same way; its xdist workers die with it: no process of the run outlives it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import signal
import sys
import time

from ctk.plugin import lifeline
from ctk.plugin.options import OPTIONS, Option, grouped

CHILD_GRACE_S = 60.0

# The plugin's options `ctk run` takes (ctk.plugin.options, the one table), under the same names and in the same
# groups; FORWARDED go on to pytest as they are, --workers becomes -n N.
TAKEN: list[Option] = [o for o in OPTIONS if o.run]
FORWARDED: list[Option] = [o for o in TAKEN if o.forward]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "ctk run [OPTIONS] [-- PYTEST_ARGS]"
    for title, options in grouped():
        group = parser.add_argument_group(title)
        for o in options:
            if not o.run:
                continue
            if o.kind == "bool":
                group.add_argument(o.flag, action="store_true", help=o.help)
            elif o.kind == "list":
                group.add_argument(o.flag, action="append", metavar="K=V", help=o.help)
            elif o.kind == "int":
                group.add_argument(o.flag, type=int, metavar=o.metavar, default=o.run_default, help=o.help)
            else:
                group.add_argument(o.flag, metavar=o.metavar, help=o.help)
    parser.add_argument("-k", dest="keyword", metavar="EXPRESSION",
                        help="only the checks this pytest -k expression selects (requirement ids such as REPLAY-01 "
                             "or REPLAY_01, endpoints, behaviours and test names are keywords; `ctk list -k` shows "
                             "them); a subset run")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER,
                        help="further pytest arguments (put them after --, e.g. -- -k keys -n 2)")


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def plugin_installed() -> bool:
    try:
        return any(ep.name == "ctk" for ep in importlib.metadata.entry_points(group="pytest11"))
    except Exception:  # noqa: BLE001
        return False


# (module that provides it or None for pytest's own, plugin name): pytest plugins the kit's run turns off.
# pytest-benchmark would create .benchmarks/ in the working directory and warn under xdist (the kit has no
# benchmarks); schemathesis' and anyio's pytest plugins serve tests written for them (the kit drives schemathesis as
# a library), and cost each process of the run about 3 s of imports; pytest's unraisableexception plugin collects
# garbage five times at the end of every process to report exceptions in finalizers (seconds on the kit's heap).
UNUSED_PLUGINS: tuple[tuple[str | None, str], ...] = (
    ("pytest_benchmark", "benchmark"), ("schemathesis", "schemathesis"), ("anyio", "anyio"),
    (None, "unraisableexception"))


def pytest_argv(args: argparse.Namespace) -> list[str]:
    argv: list[str] = []
    if not plugin_installed():
        argv += ["-p", "ctk.pytest_plugin"]
    for o in FORWARDED:
        value = getattr(args, _dest(o.flag), None)
        if o.kind == "bool":
            if value:
                argv.append(o.flag)
        elif o.kind == "list":
            for v in value or []:
                argv += [o.flag, v]
        elif value is not None:
            argv += [o.flag, str(value)]
    if not getattr(args, "catalog_url", None) and not getattr(args, "catalog_image", None):
        argv.append("--ctk")
    extra = list(getattr(args, "pytest_args", None) or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    if getattr(args, "keyword", None):
        argv += ["-k", args.keyword]
    # The kit's run is its own: pytest would load conftest.py files of the working directory and its test*/
    # folders (a catalog project's own tests/conftest.py, with its fixtures, hooks and exit-status rules); the kit's
    # suites need none
    if "--noconftest" not in extra:
        argv.append("--noconftest")
    # pytest's cache goes to the kit's cache directory, neither into reports/ nor the user's folder (unless they
    # chose a place; ctk.plugin.caches)
    if not any(a.startswith("cache_dir=") or a == "no:cacheprovider" for a in extra):
        from ctk.plugin.caches import cache_dir

        argv += ["-o", f"cache_dir={cache_dir('pytest')}"]
    # pytest plugins the kit's run does not use, each loaded (imported) by every process of the run otherwise
    for module, plugin in UNUSED_PLUGINS:
        if (module is None or importlib.util.find_spec(module) is not None) and not any(plugin in a for a in extra):
            argv += ["-p", f"no:{plugin}"]
    workers = getattr(args, "workers", 0) or 0
    if workers > 0 and not any(a == "-n" or a.startswith("-n") or a.startswith("--numprocesses") for a in extra):
        if not _xdist_installed():   # a base dependency: never drop to one process silently
            raise RunnerError(f"--workers {workers} needs pytest-xdist, which is not installed in {sys.executable}; "
                              "install it (pip install pytest-xdist) or pass --workers 0 for one process")
        argv += ["-n", str(workers)]
    return argv + extra


class RunnerError(RuntimeError):
    """`ctk run` cannot start pytest as asked."""


def _xdist_installed() -> bool:
    return importlib.util.find_spec("xdist") is not None


def check_values(args: argparse.Namespace) -> list[str]:
    """Values `ctk run` can judge itself, before pytest starts (a usage error, exit 4, names the option): the
    catalog URL (made the base URL: a trailing /v1 is dropped, and said) and --ctk-fail-on. Returns notes."""
    from ctk.plugin.exits import FAIL_ON_CHOICES
    from ctk.plugin.options import catalog_base_url

    notes = []
    url = getattr(args, "catalog_url", None)
    if url:
        try:
            base = catalog_base_url(url, bool(getattr(args, "ctk_allow_remote", False)))
        except Exception as exc:  # noqa: BLE001 - pytest.UsageError: the message names the option
            raise RunnerError(str(exc).removeprefix("ctk: ")) from None
        if base != url.strip().rstrip("/"):
            notes.append(f"--catalog-url {url} ends in /v1: the base URL tested is {base} (the kit adds /v1/...)")
        args.catalog_url = base
    raw = getattr(args, "ctk_fail_on", None)
    if raw is not None:
        chosen = {part.strip().lower() for part in str(raw).split(",") if part.strip()}
        unknown = sorted(chosen - set(FAIL_ON_CHOICES))
        if unknown or not chosen:
            raise RunnerError(f"--ctk-fail-on {raw!r}: expected a comma-separated list of "
                              f"{', '.join(FAIL_ON_CHOICES)} (ci = deviation,inconclusive,stale)"
                              + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    return notes


def run(args: argparse.Namespace) -> int:
    """pytest in a child interpreter (a clean import state for assertion rewriting); its exit status."""
    import subprocess

    try:
        notes = check_values(args)
        argv = pytest_argv(args)
    except RunnerError as exc:
        print("usage: ctk run [OPTIONS] [-- PYTEST_ARGS]", file=sys.stderr)
        print(f"ctk run: error: {exc}", file=sys.stderr)
        return 4
    for note in notes:
        print(f"ctk run: {note}", file=sys.stderr)
    target = args.catalog_url or (getattr(args, "catalog_image", None) and f"the catalog image {args.catalog_image}") \
        or "the embedded reference catalog"
    print(f"ctk run: conformance kit against {target}; pytest {' '.join(_shown(argv))}", file=sys.stderr)
    # Its own process group, so that a terminal's Ctrl-C reaches the child only through us (once), and we can
    # pass SIGINT/SIGTERM on to the child and its xdist workers together. The parent-death signal: when we are
    # killed (SIGKILL included), the child gets SIGTERM and stops as on Ctrl-C, its workers with it.
    import tempfile

    from ctk.plugin.exits import SIGNAL_NOTE_ENV

    with tempfile.TemporaryDirectory(prefix="ctk-run-") as tmp:
        note = os.path.join(tmp, "signal")
        child = subprocess.Popen([sys.executable, "-m", "pytest", *argv], start_new_session=True,
                                 preexec_fn=lifeline.child_preexec(signal.SIGTERM),
                                 env={**os.environ, SIGNAL_NOTE_ENV: note})
        return wait_forwarding(child, note)


SIGNAL_NAMES = {signal.SIGINT: "SIGINT (Ctrl-C)", signal.SIGTERM: "SIGTERM"}


def wait_forwarding(child, note: str | None = None) -> int:
    """Wait for ``child``, passing SIGINT and SIGTERM on to its process group as SIGTERM (the signal the user sent
    named in the file ``note``, for the child's message); its exit status."""
    received: list[int] = []

    def forward(signum, _frame):
        received.append(signum)
        if len(received) > 1:
            return          # once is enough: the plugin ignores a second SIGTERM while it cleans up
        if note:
            try:
                with open(note, "w", encoding="utf-8") as f:
                    f.write(SIGNAL_NAMES.get(signum, f"signal {signum}"))
            except OSError:
                pass
        try:
            os.killpg(child.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                code = child.wait(timeout=0.5)
                break
            except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: keep waiting
                pass
            if len(received) >= 2 and not _wait_until_gone(child, CHILD_GRACE_S):
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                code = child.wait()
                print("ctk run: pytest did not stop after a second signal; killed", file=sys.stderr)
                break
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 2 if code < 0 else code


def _wait_until_gone(child, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if child.poll() is not None:
            return True
        time.sleep(0.2)
    return child.poll() is not None


def _shown(argv: list[str]) -> list[str]:
    out, hide = [], False
    for a in argv:
        out.append("<redacted>" if hide else a)
        hide = a in ("--catalog-token", "--catalog-credential", "--catalog-header", "--catalog-property")
    return out
