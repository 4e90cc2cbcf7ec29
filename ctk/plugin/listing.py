"""`ctk list`: the kit's checks as `ctk run` would collect them, each with the requirement ids it judges, its
endpoint and behaviour (what `-k` and `--ctk-requirement` select by). Nothing is run and no catalog is contacted."""

from __future__ import annotations

import argparse
import sys
import tempfile
import pytest


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "ctk list [-k EXPRESSION] [--ctk-requirement ID[,ID]] [--ctk-scenarios DIR]"
    parser.add_argument("-k", dest="keyword", metavar="EXPRESSION",
                        help="only the checks this pytest -k expression selects (requirement ids such as REPLAY-01 "
                             "or REPLAY_01, endpoints and behaviours are keywords)")
    parser.add_argument("--ctk-requirement", metavar="ID[,ID]", help="only the checks that judge these requirements")
    parser.add_argument("--ctk-scenarios", metavar="DIR", help="directory of scenario files (default: the kit's)")


class _Lister:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        from ctk.plugin.collection import item_endpoint_behaviour, item_requirements

        for item in items:
            op, beh = item_endpoint_behaviour(item)
            self.rows.append((",".join(item_requirements(item)) or "-", op or "-", beh or "-", item.nodeid))
        items[:] = []          # listed, not run


def run(args: argparse.Namespace) -> int:
    lister = _Lister()
    with tempfile.TemporaryDirectory(prefix="ctk-list-") as reports:
        argv = ["--ctk", "--collect-only", "-q", "-p", "no:cacheprovider", "--noconftest", "-p", "no:randomly",
                "--ctk-reports", reports, "-o", "console_output_style=classic"]
        if args.keyword:
            argv += ["-k", args.keyword]
        if args.ctk_requirement:
            argv += ["--ctk-requirement", args.ctk_requirement]
        if args.ctk_scenarios:
            argv += ["--ctk-scenarios", args.ctk_scenarios]
        import contextlib
        import io

        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet):
            code = pytest.main(argv, plugins=[lister])
    if code not in (0, 5) or (code == 5 and not lister.rows and not args.keyword and not args.ctk_requirement):
        sys.stdout.write(quiet.getvalue())
        return int(code)
    widths = [max([len(h)] + [len(r[i]) for r in lister.rows]) for i, h in enumerate(("REQUIREMENTS", "ENDPOINT"))]
    print(f"{'REQUIREMENTS':<{widths[0]}}  {'ENDPOINT':<{widths[1]}}  BEHAVIOUR / TEST")
    for reqs, op, beh, nodeid in lister.rows:
        print(f"{reqs:<{widths[0]}}  {op:<{widths[1]}}  {beh}  {nodeid}")
    print(f"{len(lister.rows)} check(s); select with `ctk run --ctk-requirement ID[,ID]` or `ctk run -k EXPR`",
          file=sys.stderr)
    return 0 if lister.rows else 5
