"""`ctk cleanup --catalog-url URL`: remove run namespaces that earlier runs left behind (a run killed with
SIGKILL, a machine that went down), and only the kit's own.

A namespace is the kit's when its name is ``{prefix}_{run id}_{worker}`` AND it carries the marker property
``ctk.run-id`` = that run id, which the kit sets when it creates a run namespace (ctk/plugin/namespace.py
``create``). Where the target cannot nest namespaces, a run's check namespaces are siblings whose names start
with the run namespace's name and an underscore; those go with their marked run namespace. Anything else,
even with a similar name, is left alone.

Do not run it while a run against the same catalog is going on: that run's namespace is marked too.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from ctk.catalog.facade import pages, parent_param
from ctk.client.transport import ns_path
from ctk.plugin import namespace as nsmod

MARKER = "ctk.run-id"


@dataclass
class Leftover:
    namespace: tuple[str, ...]
    run_id: str
    siblings: list[tuple[str, ...]] = field(default_factory=list)


def _list_level(client: Any, parent: tuple[str, ...]) -> list[tuple[str, ...]]:
    items, problem = pages(client, "namespaces", "namespaces", "cleanup: list namespaces", parent_param(parent))
    if problem:
        raise RuntimeError(f"listing namespaces failed: {problem}")
    return [tuple(ns) for ns in items if isinstance(ns, list)]


def _marker(client: Any, ns: tuple[str, ...]) -> str | None:
    ex = client.request("GET", f"namespaces/{ns_path(ns)}", label="cleanup: load namespace")
    if ex.status != 200:
        return None
    props = (ex.json() or {}).get("properties") or {}
    value = props.get(MARKER)
    return str(value) if value is not None else None


def find_leftovers(client: Any, prefix: str = "ctk", parent: tuple[str, ...] = ()) -> list[Leftover]:
    """The kit's run namespaces (with their siblings) directly below ``parent`` (top level by default)."""
    pattern = re.compile(rf"^{re.escape(prefix)}_([A-Za-z0-9]+)_[A-Za-z0-9]+$")
    level = _list_level(client, parent)
    found: list[Leftover] = []
    for ns in level:
        m = pattern.match(ns[-1]) if len(ns) == len(parent) + 1 else None
        if m and _marker(client, ns) == m.group(1):
            found.append(Leftover(ns, m.group(1)))
    for leftover in found:
        stem = leftover.namespace[-1] + "_"
        leftover.siblings = [ns for ns in level if ns[-1].startswith(stem)]
    return found


def remove_leftovers(client: Any, leftovers: list[Leftover], budget_s: float = 120.0) -> list[str]:
    """Drop each leftover (siblings first) with everything inside; the problems, empty when all went."""
    problems: list[str] = []
    for leftover in leftovers:
        for ns in [*leftover.siblings, leftover.namespace]:
            problems += nsmod.drop_tree(client, list(ns), budget_s=budget_s)
    return problems


# --- the command -----------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--catalog-url", required=True, help="catalog base URL (without /v1)")
    parser.add_argument("--catalog-prefix", default=None, help="catalog prefix (default: the one /v1/config advertises)")
    parser.add_argument("--warehouse", default=None, help="warehouse to ask /v1/config for")
    parser.add_argument("--catalog-token", default=None, help="bearer token")
    parser.add_argument("--catalog-credential", default=None, help="OAuth2 client credential CLIENT_ID:SECRET")
    parser.add_argument("--ctk-namespace-prefix", default="ctk", help="prefix of the run namespaces (default ctk)")
    parser.add_argument("--ctk-parent-namespace", default=None,
                        help="the namespace the runs were placed in (dot-separated levels; default: top level)")
    parser.add_argument("--ctk-allow-remote", action="store_true", help="allow a non-loopback --catalog-url")
    parser.add_argument("--ctk-timeout", type=float, default=10.0, help="per-request timeout in seconds")
    parser.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")


def run(args: argparse.Namespace) -> int:
    from ctk.client.transport import CatalogClient
    from ctk.client.config import TargetConfig, TargetError
    from ctk.client.discovery import DiscoveryError, discover
    from ctk.plugin.session import advertised_separator

    try:
        target = TargetConfig(url=args.catalog_url, prefix=args.catalog_prefix, warehouse=args.warehouse,
                              token=args.catalog_token, credential=args.catalog_credential,
                              timeout=args.ctk_timeout, connect_timeout=min(args.ctk_timeout, 5.0),
                              allow_remote=args.ctk_allow_remote)
    except TargetError as exc:
        print(f"ctk cleanup: {exc}", file=sys.stderr)
        return 4
    parent = tuple(p for p in (args.ctk_parent_namespace or "").split(".") if p)
    with CatalogClient(target) as client:
        try:
            # the advertised namespace-separator, as a run uses it: a nested name in a URL or a parent query
            client.set_namespace_separator(advertised_separator(discover(client)))
            leftovers = find_leftovers(client, args.ctk_namespace_prefix, parent)
        except (DiscoveryError, RuntimeError) as exc:
            print(f"ctk cleanup: {exc}", file=sys.stderr)
            return 6
        for leftover in leftovers:
            extra = f" (+{len(leftover.siblings)} sibling namespaces)" if leftover.siblings else ""
            print(f"{'would remove' if args.dry_run else 'removing'} {'.'.join(leftover.namespace)} "
                  f"(run {leftover.run_id}){extra}")
        if not leftovers:
            print(f"no leftover run namespaces at {args.catalog_url}")
        if args.dry_run or not leftovers:
            return 0
        problems = remove_leftovers(client, leftovers)
    for p in problems:
        print(f"ctk cleanup: not removed: {p}", file=sys.stderr)
    print(f"removed {len(leftovers)} run namespaces" + (f", {len(problems)} problems" if problems else ""))
    return 1 if problems else 0
