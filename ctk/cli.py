"""The `ctk` console command. Each subcommand lives in the module that owns it; this file only routes.

A subcommand module provides `add_arguments(parser)` and `run(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS: list[tuple[str, str, str]] = [
    ("serve", "ctk.reference.server", "start the embedded reference catalog on 127.0.0.1"),
    ("interposer", "ctk.interposer.cli", "start the fault-injecting interposer (Toxiproxy-compatible API)"),
    ("run", "ctk.runner", "run the conformance kit (pytest with the ctk plugin) and write reports/"),
    ("list", "ctk.plugin.listing", "list the kit's checks with the requirement ids, endpoint and behaviour of each"),
    ("cleanup", "ctk.plugin.leftovers", "remove run namespaces earlier runs left in a catalog (only the kit's own)"),
    ("report", "ctk.reporting.compare", "put several conformance.json runs side by side (HTML)"),
    ("requirements", "ctk.reporting.requirements_doc", "print the requirements table (markdown)"),
    ("rck-coverage", "ctk.reporting.rck_coverage", "map every test of Iceberg's REST compatibility kit to the "
                                                   "requirements covering it (markdown)"),
    ("spark-jars", "ctk.spark.jars", "assemble the Iceberg Spark runtime jars, with checksums (two Debian .deb files: "
                                     "downloaded once, or --debs DIR / --offline)"),
]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that subcommand's module is imported (start-up stays light)."""
    parser = argparse.ArgumentParser(prog="ctk", description="Iceberg REST catalog compatibility test kit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help_text in SUBCOMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
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
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    if getattr(args, "_missing", None):
        print(args._missing, file=sys.stderr)
        return 2
    return int(importlib.import_module(args._module).run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
