"""Run a `ctk` subcommand of the reporting package the way ctk.cli routes it, without importing the other
subcommands' modules (other packages may be mid-change while these tests run)."""

import argparse
import importlib

from ctk.cli import SUBCOMMANDS


def ctk(argv: list[str]) -> int:
    name, *rest = argv
    module = {n: m for n, m, _ in SUBCOMMANDS}[name]
    assert module.startswith("ctk.reporting."), module
    mod = importlib.import_module(module)
    parser = argparse.ArgumentParser(prog=f"ctk {name}")
    mod.add_arguments(parser)
    return int(mod.run(parser.parse_args(rest)) or 0)
