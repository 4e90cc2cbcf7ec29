"""`ctk cleanup --catalog-url URL`: remove run namespaces that earlier runs left behind (a run killed with
SIGKILL, a machine that went down), and only the kit's own.

A namespace is the kit's when its name is ``{prefix}_{run id}_{worker}`` AND it carries the marker property
``ctk.run-id`` = that run id, which the kit sets when it creates a run namespace (ctk/plugin/namespace.py
``create``) and on the nesting probe. Where the target cannot nest namespaces, a run's check namespaces are
siblings whose names start with the run namespace's name and an underscore; those go with their marked run
namespace. A catalog that joins namespace levels with '.' (or its advertised separator) lists a namespace the
kit created inside a run namespace as one level, ``{run namespace}.{name}``: with the run's marker it is the
kit's too. A run namespace's tables and views that a catalog stored in a namespace the run used as a missing one
(``ctk_absent_{n}``, as a child or a sibling; a lenient catalog keeps them without the namespace, so no listing
shows them) are dropped by the kit's name for them (``ctk.client.placement.STRAY``) before the run namespace.

Names of that shape whose marker is missing (a catalog that drops namespace properties, a probe of an older
kit) are listed as unmarked and removed only with ``--include-unmarked``: the user confirms they are the kit's.
A marker with another value is never touched. What a run itself could not remove is in its reports (cleanup
problems, "leftover: ...").

Do not run it while a run against the same catalog is going on: that run's namespace is marked too.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from ctk.catalog.facade import (CLEANUP_REQUESTS, Budget, address_forms, drop_as_named, drop_strays,
                                level_separators, pages, parent_param)
from ctk.client.placement import MAX_ABSENT
from ctk.client.transport import ns_path
from ctk.plugin.namespace import MARKER


@dataclass
class Leftover:
    namespace: tuple[str, ...]
    run_id: str
    siblings: list[tuple[str, ...]] = field(default_factory=list)
    marked: bool = True          # False: the name is the kit's shape, but the marker property is missing
    run: bool = False            # a run namespace (not a nested one the catalog lists joined)


def _list_level(client: Any, parent: tuple[str, ...]) -> list[tuple[str, ...]]:
    items, problem = pages(client, "namespaces", "namespaces", "cleanup: list namespaces", parent_param(parent))
    if problem:
        raise RuntimeError(f"listing namespaces failed: {problem}")
    return [tuple(ns) for ns in items if isinstance(ns, list) and ns]


def _marker(client: Any, ns: tuple[str, ...]) -> str | None:
    """The marker's value; "" when the namespace loads without it; None when it does not load."""
    ex = client.request("GET", f"namespaces/{ns_path(ns)}", label="cleanup: load namespace")
    if ex.status != 200:
        return None
    props = (ex.json() or {}).get("properties") or {}
    value = props.get(MARKER)
    return str(value) if value is not None else ""


def _marker_anywhere(client: Any, ns: tuple[str, ...], run_id: str) -> str | None:
    """The marker of a namespace listed as ``ns``, read under every way a catalog may name it (`address_forms`:
    as listed, the nested entry behind a joined name, the levels joined by '.'): ``run_id`` when one of them
    carries it, else "" when one loads without it, else None (none loads)."""
    values = [_marker(client, form) for form in address_forms(client, ns)]
    if run_id in values:
        return run_id
    others = [v for v in values if v]
    return others[0] if others else ("" if "" in values else None)


def find_leftovers(client: Any, prefix: str = "ctk", parent: tuple[str, ...] = ()) -> list[Leftover]:
    """The kit's run namespaces (with their siblings) below ``parent`` (top level by default), the namespaces a
    catalog that joins levels listed as ``{run namespace}{separator}{name}`` or lists, with all their levels,
    below a run namespace that is gone, and - ``marked`` False - names of those shapes whose marker cannot be
    found under any name the catalog may know them by."""
    seps = "".join(re.escape(s) for s in level_separators(client))
    run_rx = re.compile(rf"^{re.escape(prefix)}_([A-Za-z0-9]+)_[A-Za-z0-9]+$")
    joined_rx = re.compile(rf"^({re.escape(prefix)}_([A-Za-z0-9]+)_[A-Za-z0-9]+)[{seps}].+$")
    sibling_rx = re.compile(rf"^({re.escape(prefix)}_([A-Za-z0-9]+)_[A-Za-z0-9]+)_.+$")
    listed = [ns for ns in _list_level(client, parent) if len(ns) > len(parent) and ns[: len(parent)] == parent]
    level = [ns for ns in listed if len(ns) == len(parent) + 1]
    found: list[Leftover] = []
    for ns in listed:
        below = ns[len(parent)]
        m = run_rx.match(below) if len(ns) > len(parent) + 1 else (run_rx.match(below) or joined_rx.match(below))
        if not m:
            continue
        run_id = m.group(1) if m.re is run_rx else m.group(2)
        marker = _marker_anywhere(client, ns, run_id)
        is_run = len(ns) == len(parent) + 1 and m.re is run_rx
        if marker == run_id:
            found.append(Leftover(ns, run_id, run=is_run))
        elif marker == "" or (marker is None and len(ns) > len(parent) + 1):   # another run's marker: never
            found.append(Leftover(ns, run_id, marked=False, run=is_run))
    runs = {lo.namespace[-1] for lo in found if lo.marked and len(lo.namespace) == len(parent) + 1
            and run_rx.match(lo.namespace[-1])}
    for leftover in found:
        if leftover.marked and leftover.namespace[-1] in runs:
            stem = leftover.namespace[-1] + "_"
            leftover.siblings = [ns for ns in level if ns[-1].startswith(stem)]
    # siblings whose run namespace is gone: the kit's shape, no marker (check namespaces carry none)
    claimed = {s for lo in found for s in lo.siblings} | {lo.namespace for lo in found}
    for ns in level:
        m = sibling_rx.match(ns[-1])
        if m and ns not in claimed and not run_rx.match(ns[-1]) and not joined_rx.match(ns[-1]) \
                and m.group(1) not in runs and _marker(client, ns) == "":
            found.append(Leftover(ns, m.group(2), marked=False))
    return found


def remove_leftovers(client: Any, leftovers: list[Leftover], budget: int = CLEANUP_REQUESTS) -> list[str]:
    """Drop each leftover (siblings first) with everything inside, by the name the catalog lists it by and every
    way a catalog may read that name, reading back after every delete; the problems (what is still there, as
    the read-back shows), empty when all went."""
    shared = Budget(budget)
    problems: list[str] = []
    for leftover in leftovers:
        if leftover.run:     # first what a catalog stored in the namespaces the run used as missing ones (unlisted)
            problems += drop_strays(client, leftover.namespace, MAX_ABSENT, shared)
        for ns in [*leftover.siblings, leftover.namespace]:
            problems += drop_as_named(client, ns, shared, names=[ns])[1]
    return problems


def still_listed(client: Any, leftovers: list[Leftover], parent: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Which of the leftovers' namespaces the catalog still lists (the read-back of a removal)."""
    wanted = {ns for lo in leftovers for ns in [*lo.siblings, lo.namespace]}
    try:
        listed = set(_list_level(client, parent))
        listed |= {child for ns in wanted if len(ns) > len(parent) + 1
                   for child in _list_level(client, ns[:-1])}
    except RuntimeError:
        return sorted(wanted)
    return sorted(wanted & listed)


def sweep_run(client: Any, prefix: str, parent: tuple[str, ...], run_ids: list[str],
              budget: int = CLEANUP_REQUESTS, remove: bool = True) -> tuple[list[str], list[str]]:
    """What a run's own processes left (the xdist controller, once its workers ended: a worker stopped before its
    cleanup finished leaves its run namespace): the namespaces of these run ids still listed are removed like
    `ctk cleanup` removes them, read back (``remove`` False: only named). Returns (what was removed, what stays:
    problems naming it)."""
    leftovers = [lo for lo in find_leftovers(client, prefix, parent) if lo.run_id in run_ids]
    if not leftovers:
        return [], []
    if not remove:
        return [], [f"namespace {'.'.join(lo.namespace)} of this run left behind (its worker stopped before its "
                     "cleanup finished); remove it with ctk cleanup" for lo in leftovers]
    problems = remove_leftovers(client, leftovers, budget)
    left = set(still_listed(client, leftovers, parent))
    gone = [".".join(lo.namespace) for lo in leftovers if lo.namespace not in left]
    problems += [f"namespace {'.'.join(ns)} of this run still listed after its removal" for ns in sorted(left)]
    return gone, problems


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
    parser.add_argument("--include-unmarked", action="store_true",
                        help="also remove namespaces named like the kit's whose ctk.run-id marker is missing (a "
                             "catalog that drops namespace properties); they are listed either way")


def run(args: argparse.Namespace) -> int:
    from ctk.client.transport import CatalogClient
    from ctk.client.config import TargetConfig, TargetError
    from ctk.client.discovery import DiscoveryError, discover
    from ctk.client.discovery import advertised_separator

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
        marked = [lo for lo in leftovers if lo.marked]
        unmarked = [lo for lo in leftovers if not lo.marked]
        chosen = marked + (unmarked if args.include_unmarked else [])
        for leftover in marked:
            extra = f" (+{len(leftover.siblings)} sibling namespaces)" if leftover.siblings else ""
            print(f"{'would remove' if args.dry_run else 'removing'} {'.'.join(leftover.namespace)} "
                  f"(run {leftover.run_id}){extra}")
        for leftover in unmarked:
            what = ("would remove" if args.dry_run else "removing") if args.include_unmarked else "unmarked, kept"
            print(f"{what} {'.'.join(leftover.namespace)} (named like run {leftover.run_id}, but without the "
                  f"{MARKER} marker)")
        if unmarked and not args.include_unmarked:
            print(f"{len(unmarked)} namespaces are named like the kit's, but no {MARKER} marker was found under "
                  "any name they go by (as listed, their nested levels, their levels joined by '.'): the catalog "
                  "did not keep it, or they are not a run's; if they are the kit's, remove them with "
                  "--include-unmarked")
        if not marked:
            print(f"no leftover run namespaces at {args.catalog_url}"
                  + (f" carrying the {MARKER} marker" if unmarked else ""))
        if args.dry_run or not chosen:
            return 0
        problems = remove_leftovers(client, chosen)
        # read back: only what the catalog no longer lists is removed, whatever its DELETEs answered
        left = set(still_listed(client, chosen, parent))
    gone = [lo for lo in chosen if lo.namespace not in left and not left & set(lo.siblings)]
    for p in problems:
        print(f"ctk cleanup: not removed: {p}", file=sys.stderr)
    for ns in sorted(left):
        print(f"ctk cleanup: still listed after removal: {'.'.join(ns)}", file=sys.stderr)
    print(f"removed {len(gone)} of {len(chosen)} run namespaces (read back)"
          + (f", {len(problems)} problems" if problems else ""))
    return 1 if problems or left else 0
