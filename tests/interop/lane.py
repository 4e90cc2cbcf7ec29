"""Driver of one real catalog in the interop lane: start it, run the kit against it, stop it.

    PYTHONPATH=tests python -m interop.lane --catalog lakana --bin-dir DIR --out DIR [--deadline S]
    PYTHONPATH=tests python -m interop.lane --catalog seaweedfs --bin-dir ~/.cache/ctk-interop/weed-venv/bin \
        --out /tmp/sw --serve            # keep it up and print the kit commands, to reproduce a verdict by hand

The test module runs this inside a loopback-only network namespace (``unshare --net --pid``) when the machine
allows, so that the catalog and the kit share a network with nothing but 127.0.0.1 in it; otherwise directly,
with the kit's own loopback guard alone. It writes ``<out>/lane.json`` (mode, timings, each kit run's exit
status and its non-loopback connections) and each kit run's reports under ``<out>/<run>/``; the test module
judges them. The catalog is stopped on every path out (also SIGTERM); its processes' ids go to
``<out>/pids`` so that the test can end them should this driver itself die.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from interop.catalogs import CATALOGS, Catalog, CatalogFailed, KitRun

REPO = Path(__file__).resolve().parents[2]
SECRET_FLAGS = ("--catalog-token", "--catalog-credential")
SECRET_PROPERTY = re.compile(r"^(s3\.(access-key-id|secret-access-key|session-token))=")
# strace prints e.g. connect(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("52.1.2.3")}, 16)
_INET = re.compile(r'sa_family=AF_INET6?, sin6?_port=htons\((\d+)\).*?(?:inet_addr\("([^"]+)"\)|'
                   r'inet_pton\(AF_INET6, "([^"]+)")')


class Stop(Exception):
    pass


def shown(argv: list[str]) -> list[str]:
    """argv with credentials replaced (the lane's own throwaway ones, but reports are shared)."""
    out, hide = [], False
    for arg in argv:
        if hide:
            out.append("<redacted>")
        elif SECRET_PROPERTY.match(arg):
            out.append(arg.split("=", 1)[0] + "=<redacted>")
        else:
            out.append(arg)
        hide = arg in SECRET_FLAGS
    return out


def remote_connections(trace: Path) -> list[str]:
    """The non-loopback addresses the traced processes tried to connect to (strace -e trace=connect)."""
    found = []
    try:
        text = trace.read_text(errors="replace")
    except OSError:
        return found
    for line in text.splitlines():
        if "connect(" not in line:
            continue
        m = _INET.search(line)
        if not m:
            continue
        port, v4, v6 = m.groups()
        address = v4 or v6
        try:
            ip = ipaddress.ip_address(address)
            if getattr(ip, "ipv4_mapped", None):
                ip = ip.ipv4_mapped
            if ip.is_loopback:
                continue
        except ValueError:
            pass
        found.append(f"{address}:{port}")
    return sorted(set(found))


def strace_argv(trace: Path) -> list[str]:
    """strace options that record every connect() of the kit and its children into ``trace``; [] where strace
    is missing or cannot trace here (no ptrace in a container, say). seccomp-bpf keeps the cost low where
    this strace has it."""
    if not shutil.which("strace"):
        return []
    for fast in (["--seccomp-bpf"], []):
        argv = ["strace", "-f", "-qq", *fast, "-e", "trace=connect", "-e", "signal=none", "-o", str(trace)]
        try:
            probe = subprocess.run([*argv, "true"], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return argv
    return []


def kit_flags() -> set[str]:
    """The options ``ctk run`` knows (its --help)."""
    done = subprocess.run([sys.executable, "-m", "ctk", "run", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    return set(re.findall(r"(--[a-z][a-z0-9-]+)", done.stdout))


def split_options(options: list[str], flags: set[str]) -> tuple[list[str], list[str], list[str]]:
    """(options ``ctk run`` accepts, options for pytest itself, the flags among them ``ctk run`` does not
    forward): a plugin option the runner does not list still reaches the plugin after ``--``. Every option
    here takes one value."""
    kept, direct, unknown = [], [], []
    for flag, value in zip(options[::2], options[1::2]):
        if flag in flags:
            kept += [flag, value]
        else:
            direct += [flag, value]
            if flag not in unknown:
                unknown.append(flag)
    return kept, direct, unknown


def known_gaps_file(run: KitRun, out: Path, reports: Path) -> Path:
    """The file `ctk known-gaps` writes from the run ``run.known_gaps_from``'s conformance.json, with
    ``run.extra_gaps`` appended."""
    path = reports / "known-gaps.yaml"
    subprocess.run([sys.executable, "-m", "ctk", "known-gaps", str(out / str(run.known_gaps_from) / "conformance.json"),
                    "-o", str(path)], cwd=REPO, check=True, capture_output=True, timeout=120)
    if run.extra_gaps:
        with open(path, "a", encoding="utf-8") as f:
            f.write(run.extra_gaps)
    return path


def _odd_front(run: KitRun, options: list[str]):
    """An odd server (tests/oddserver, the rule ``run.odd_rule``) in front of the catalog, and the options with
    its URL for the catalog's."""
    sys.path.insert(0, str(REPO / "tests" / "oddserver"))
    import odd_semantics
    from odd import OddServer

    at = options.index("--catalog-url") + 1
    front = OddServer(options[at], [getattr(odd_semantics, str(run.odd_rule))()])
    url = front.start()
    return front, options[:at] + [url] + options[at + 1:]


def cleanup(options: list[str]) -> None:
    """`ctk cleanup` straight to the catalog: what a run through an odd server could not remove."""
    taken = ("--catalog-url", "--catalog-prefix", "--catalog-token", "--ctk-parent-namespace")
    argv = [a for flag, value in zip(options[::2], options[1::2]) if flag in taken for a in (flag, value)]
    subprocess.run([sys.executable, "-m", "ctk", "cleanup", *argv], cwd=REPO, capture_output=True, timeout=120)


def run_kit(run: KitRun, out: Path, timeout_s: float) -> dict:
    """One ``ctk run`` against the started catalog, traced for connect() when strace is here. Options this
    ``ctk run`` does not forward go to pytest after ``--`` and are reported."""
    reports = out / run.name
    reports.mkdir(parents=True, exist_ok=True)
    options, direct, unknown = split_options(run.options, kit_flags())
    if run.known_gaps_from:
        options += ["--ctk-known-gaps", str(known_gaps_file(run, out, reports))]
    if run.certify:
        options.append("--ctk-certify")
    front = None
    if run.odd_rule:
        front, options = _odd_front(run, options)
    try:
        return _run_kit(run, reports, options, direct, unknown, timeout_s)
    finally:
        if front is not None:
            front.stop()
            cleanup(run.options)


def _run_kit(run: KitRun, reports: Path, options: list[str], direct: list[str], unknown: list[str],
             timeout_s: float) -> dict:
    argv = [sys.executable, "-m", "ctk", "run", "--workers", "0", *options, "--ctk-reports", str(reports),
            "--", *direct, "-p", "no:cacheprovider", "-q", *run.pytest_args]
    trace = reports / "connect.trace"
    tracer = strace_argv(trace)
    traced = bool(tracer)
    full = tracer + argv
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"))}
    env["NO_PROXY"] = "*"
    started = time.monotonic()
    with open(reports / "kit.log", "wb") as log:
        kit = subprocess.Popen(full, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = kit.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(kit.pid, sig)
                    rc = kit.wait(timeout=5)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    rc = kit.poll()
        finally:
            try:
                os.killpg(kit.pid, signal.SIGKILL)          # anything the kit left behind in its group
            except ProcessLookupError:
                pass
    return {
        "argv": shown(["ctk", *argv[3:]]),
        "rc": rc,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - started, 1),
        "traced": traced,
        "remote_connections": remote_connections(trace) if traced else None,
        "expectation": run.expectation,
        "not_forwarded": unknown,
    }


def serve(catalog: Catalog, out: Path) -> None:
    """Keep the started catalog up for a person, printing each kit run's command (credentials shown: they are
    this catalog's throwaway ones), until SIGINT/SIGTERM (raised as Stop) or the catalog exits."""
    print(f"{catalog.name} is up at {catalog.url} (data in {catalog.workdir}); Ctrl-C stops it. The lane's runs:",
          flush=True)
    for run in catalog.runs():
        command = ["ctk", "run", "--workers", "0", *run.options, "--ctk-reports", str(out / run.name)]
        if run.pytest_args:
            command += ["--", *run.pytest_args]
        print("  " + " ".join(shlex.quote(a) for a in command), flush=True)
    while all(p.alive() for p in catalog.processes):
        time.sleep(0.5)
    raise Stop(f"{catalog.name} exited")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", choices=sorted(CATALOGS), required=True)
    parser.add_argument("--bin-dir", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--mode", default="guard", help="netns or guard: how the network is confined (reported)")
    parser.add_argument("--deadline", type=float, default=240.0, help="seconds for start + all kit runs")
    parser.add_argument("--start-deadline", type=float, default=60.0)
    parser.add_argument("--serve", action="store_true",
                        help="start the catalog, print the kit commands for it and keep it up until Ctrl-C "
                             "(to reproduce a verdict by hand)")
    args = parser.parse_args(argv)

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    workdir = out / "catalog"
    workdir.mkdir(exist_ok=True)
    pids = open(out / "pids", "a")

    def remember(pid: int) -> None:
        pids.write(f"{pid}\n")
        pids.flush()

    def on_term(signum, _frame):
        raise Stop(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    began = time.monotonic()
    result: dict = {"catalog": args.catalog, "mode": args.mode, "pid": os.getpid(), "runs": {}, "error": None}
    catalog: Catalog = CATALOGS[args.catalog](args.bin_dir, workdir, on_start=remember)
    try:
        result["startup_s"] = round(catalog.start(args.start_deadline), 1)
        if args.serve:
            serve(catalog, out)
        for run in catalog.runs():
            left = args.deadline - (time.monotonic() - began)
            if left < 10:
                result["runs"][run.name] = {"skipped": f"lane deadline of {args.deadline:.0f} s reached"}
                continue
            result["runs"][run.name] = run_kit(run, out, left)
    except (CatalogFailed, Stop, OSError, subprocess.SubprocessError) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        result["catalog_alive_at_end"] = any(p.alive() for p in catalog.processes)
        if result["catalog_alive_at_end"] and result["runs"] and not args.serve:
            try:    # what the kit's runs left in the catalog, listed by the lane itself (not the kit's word)
                result["leftovers"] = catalog.leftovers()
            except Exception as exc:  # noqa: BLE001 - reported, judged by the test
                result["leftovers"] = [f"(listing failed: {type(exc).__name__}: {exc})"]
        result["catalog_log"] = catalog.logs()
        catalog.stop()
        result["catalog_stopped"] = not any(p.alive() for p in catalog.processes)
        result["seconds"] = round(time.monotonic() - began, 1)
        (out / "lane.json").write_text(json.dumps(result, indent=2))
        pids.close()
    return 0 if result["error"] is None else 2


if __name__ == "__main__":
    sys.exit(main())
