"""The `ctk` console command. Each subcommand lives in the module that owns it; this file only routes.

A subcommand module provides `add_arguments(parser)` and `run(args) -> int`.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys

SUBCOMMANDS: list[tuple[str, str, str]] = [
    ("serve", "ctk.reference.server", "start the embedded reference catalog on 127.0.0.1"),
    ("interposer", "ctk.interposer.cli", "start the fault-injecting interposer (Toxiproxy-compatible API)"),
    ("run", "ctk.runner", "run the conformance kit (pytest with the ctk plugin) and write reports/"),
    ("list", "ctk.plugin.listing", "list the kit's checks with the requirement ids, endpoint and behaviour of each"),
    ("known-gaps", "ctk.reporting.known_gaps", "write a known-gaps file (--ctk-known-gaps) from a run's "
                                               "conformance.json, every finding an entry with reason: TODO"),
    ("cleanup", "ctk.plugin.leftovers", "remove run namespaces earlier runs left in a catalog (only the kit's own)"),
    ("report", "ctk.reporting.compare", "write the compatibility matrix of conformance.json runs (matrix.html, matrix.md)"),
    ("requirements", "ctk.reporting.requirements_doc", "print the requirements table (markdown)"),
    ("rck-coverage", "ctk.reporting.rck_coverage", "map every test of Iceberg's REST compatibility kit to the "
                                                   "requirements covering it (markdown)"),
    ("assertion-trace", "ctk.reporting.assertion_trace", "list every assertion of the catalog-semantics checks with "
                                                         "the sentence that states it (markdown)"),
    ("spark-jars", "ctk.spark.jars", "assemble the Iceberg Spark runtime jars, with checksums (two Debian .deb files: "
                                     "downloaded once, or --debs DIR / --offline)"),
]


# `ctk run` and `ctk list` end a usage error (an unknown option, a bad value) with exit 4 (ctk.plugin.exits: what
# pytest gives a usage error) and their own usage line, not argparse's 2 (which the runner's docs call "interrupted")
USAGE_EXIT = 4
OWN_USAGE_ERRORS = ("run", "list")


class UsageExit(SystemExit):
    """A usage error of a subcommand: its usage and the message are printed; exits USAGE_EXIT."""


def _usage_error(p: argparse.ArgumentParser, message: str) -> None:
    p.print_usage(sys.stderr)
    print(f"{p.prog}: error: {message}", file=sys.stderr)
    raise UsageExit(USAGE_EXIT)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that subcommand's module is imported (start-up stays light)."""
    from ctk import __version__

    parser = argparse.ArgumentParser(prog="ctk", description="Iceberg REST catalog compatibility test kit")
    parser.add_argument("--version", action="version", version=f"ctk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help_text in SUBCOMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        if name in OWN_USAGE_ERRORS:
            p.error = functools.partial(_usage_error, p)  # type: ignore[method-assign,assignment]
        if only is not None and name != only:
            continue
        try:
            importlib.import_module(module).add_arguments(p)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            p.set_defaults(_missing=f"`ctk {name}` is not available in this build ({module} missing)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    known = {name for name, _, _ in SUBCOMMANDS}
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(only=chosen if chosen in known else "")
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            sub = _subparser(parser, getattr(args, "command", None))
            message = f"unrecognized arguments: {' '.join(extra)}"
            if sub is not None and args.command in OWN_USAGE_ERRORS:
                _usage_error(sub, message + " (pytest's own options go after --)" if args.command == "run" else message)
            parser.error(message)
    except UsageExit as exc:
        return int(exc.code or USAGE_EXIT)
    if not args.command:
        parser.print_help()
        return 2
    if getattr(args, "_missing", None):
        print(args._missing, file=sys.stderr)
        return 2
    return int(importlib.import_module(args._module).run(args) or 0)


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            chosen: argparse.ArgumentParser = action.choices[name]
            return chosen
    return None


if __name__ == "__main__":
    sys.exit(main())
