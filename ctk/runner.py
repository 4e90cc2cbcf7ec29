"""`ctk run`: the conformance kit = pytest with the ctk plugin, against the embedded reference catalog (default)
or a catalog URL; reports in reports/ (junit.xml, report.html, conformance.json, conformance.html).

    ctk run                                          # embedded reference catalog
    ctk run --catalog-url http://127.0.0.1:8181      # your catalog
    ctk run --ctk-strict -- -k idempotency -n 2      # anything after -- goes to pytest as is

Exit status: pytest's (0 all passed or skipped, 1 some test failed, ...): non-zero on any failure.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import sys

# (flag, kind, help); forwarded to pytest as the plugin's option of the same name.
FORWARDED: list[tuple[str, str, str]] = [
    ("--catalog-url", "value", "catalog base URL (without /v1); default: start the embedded reference catalog"),
    ("--catalog-prefix", "value", "catalog prefix (default: the one /v1/config advertises)"),
    ("--warehouse", "value", "warehouse to ask /v1/config for"),
    ("--catalog-token", "value", "bearer token"),
    ("--catalog-credential", "value", "OAuth2 client credential CLIENT_ID:SECRET"),
    ("--catalog-header", "append", "extra header K=V (repeatable)"),
    ("--openapi-spec", "value", "OpenAPI document for SCHEMA-01 (default: open-api/ctk-openapi.yaml)"),
    ("--ctk-scenarios", "value", "directory of scenario files (default: scenarios/)"),
    ("--ctk-namespace-prefix", "value", "prefix of the run namespace (default ctk)"),
    ("--ctk-parent-namespace", "value", "existing namespace (e.g. bronze or a.b) to create the run namespace in"),
    ("--catalog-property", "append", "storage property K=V for the kit's file reads/writes, pyiceberg names "
                                     "(repeatable; e.g. s3.endpoint=http://127.0.0.1:9000)"),
    ("--ctk-timeout", "value", "per-request timeout in seconds (default 10)"),
    ("--ctk-max-wait", "value", "longest wait a check may do in seconds (default 30)"),
    ("--ctk-reports", "value", "report directory (default reports/)"),
    ("--ctk-strict", "flag", "deviations (SHOULD/MAY broken) fail"),
    ("--ctk-allow-remote", "flag", "allow a non-loopback --catalog-url"),
    ("--ctk-spark", "flag", "also run the Spark pipeline checks (needs `ctk spark-jars`)"),
    ("--ctk-examples", "value", "generated checks: examples (default 5)"),
    ("--ctk-seed", "value", "generated checks: seed (default derandomized)"),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for flag, kind, help_text in FORWARDED:
        if kind == "flag":
            parser.add_argument(flag, action="store_true", help=help_text)
        elif kind == "append":
            parser.add_argument(flag, action="append", metavar="K=V", help=help_text)
        else:
            parser.add_argument(flag, help=help_text)
    parser.add_argument("--workers", type=int, default=3,
                        help="pytest-xdist workers, each with its own run namespace (and embedded catalog); "
                             "0 runs in one process (default 3: the checks mostly wait, so 3 beat 2 on 2 cores)")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER,
                        help="further pytest arguments (put them after --, e.g. -- -k keys -n 2)")


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def plugin_installed() -> bool:
    try:
        return any(ep.name == "ctk" for ep in importlib.metadata.entry_points(group="pytest11"))
    except Exception:  # noqa: BLE001
        return False


def pytest_argv(args: argparse.Namespace) -> list[str]:
    argv: list[str] = []
    if not plugin_installed():
        argv += ["-p", "ctk.pytest_plugin"]
    for flag, kind, _help in FORWARDED:
        value = getattr(args, _dest(flag), None)
        if kind == "flag":
            if value:
                argv.append(flag)
        elif kind == "append":
            for v in value or []:
                argv += [flag, v]
        elif value is not None:
            argv += [flag, str(value)]
    if not getattr(args, "catalog_url", None):
        argv.append("--ctk")
    extra = list(getattr(args, "pytest_args", None) or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    workers = getattr(args, "workers", 0) or 0
    if workers > 0 and _xdist_installed() and not any(a == "-n" or a.startswith("-n") or a.startswith("--numprocesses")
                                                      for a in extra):
        argv += ["-n", str(workers)]
    return argv + extra


def _xdist_installed() -> bool:
    return importlib.util.find_spec("xdist") is not None


def run(args: argparse.Namespace) -> int:
    """pytest in a child interpreter (a clean import state for assertion rewriting); its exit status."""
    import subprocess

    argv = pytest_argv(args)
    target = args.catalog_url or "the embedded reference catalog"
    print(f"ctk run: conformance kit against {target}; pytest {' '.join(_shown(argv))}", file=sys.stderr)
    try:
        return subprocess.call([sys.executable, "-m", "pytest", *argv])
    except KeyboardInterrupt:
        return 130


def _shown(argv: list[str]) -> list[str]:
    out, hide = [], False
    for a in argv:
        out.append("<redacted>" if hide else a)
        hide = a in ("--catalog-token", "--catalog-credential", "--catalog-header", "--catalog-property")
    return out
