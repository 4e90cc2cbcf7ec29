"""A catalog's known-gaps file (``--ctk-known-gaps FILE``, docs/known-gaps.md) and what a run makes of it.

The file (YAML, schema ``ctk/data/known-gaps.schema.json``) holds the capabilities the catalog declares (what
``--ctk-capability NAME=yes|no`` says) and its known gaps, each naming a check (its id as `ctk list` shows it)
or a requirement (with an optional endpoint), with a reason and an optional link. Against a run's results:

* a finding (fail, deviation, inconclusive, error) an entry names is a *known gap*: reported with the reason,
  it does not fail the run;
* a finding no entry names is *new*: the run fails (exit 1), the verdict block lists it first;
* an entry whose results all passed is *stale* (the gap is fixed: remove it), failing the run under
  ``--ctk-fail-on stale`` (in ``ci``); an entry no result of the run concerns (a subset run, a check not
  applicable here) is *unmatched*.

A file that is not valid, or an entry naming no check or requirement of this kit, is a usage error naming the
line (`KnownGapsError`). `ctk known-gaps reports/conformance.json -o FILE` writes a file from a run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

from ctk.catalog.capabilities import Capability
from ctk.core.requirements import REQUIREMENTS
from ctk.core.yamlfile import SAFE_LOADER

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "data" / "known-gaps.schema.json"
FINDINGS = ("fail", "deviation", "inconclusive", "error")    # what a run can fail on: what a gap may cover
STATES = ("known", "stale", "unmatched")
TODO = "TODO"


class KnownGapsError(ValueError):
    """The file is not a known-gaps file of this kit: the message names the file, the line and what is wrong."""


@dataclass(frozen=True)
class Entry:
    check: str | None
    requirement: str | None
    endpoint: str | None
    reason: str
    link: str | None
    line: int | None = None           # where it stands in the file (1-based)

    def names(self) -> str:
        """The entry as a person reads it: ``check`` or ``REQUIREMENT on endpoint``."""
        what = self.check or self.requirement or "?"
        if self.check and self.requirement:
            what += f" ({self.requirement})"
        return what + (f" on {self.endpoint}" if self.endpoint else "")

    def matches(self, result: Any) -> bool:
        if self.check is not None and check_id(str(_get(result, "nodeid") or "")) != self.check:
            return False
        if self.requirement is not None and _get(result, "requirement") != self.requirement:
            return False
        return self.endpoint is None or _get(result, "endpoint") == self.endpoint


@dataclass
class KnownGaps:
    path: str
    sha256: str
    capabilities: dict[Capability, bool] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)


@dataclass
class Judged:
    """A run's results against a known-gaps file: which entry covers each result (by index), each entry's
    state, and the findings no entry covers, in the order of the results."""
    gaps: KnownGaps
    covered: dict[int, int] = field(default_factory=dict)        # result index -> entry index
    states: list[str] = field(default_factory=list)              # per entry: known | stale | unmatched
    new: list[int] = field(default_factory=list)                 # result indexes of the new findings

    def stale(self) -> list[Entry]:
        return [e for e, s in zip(self.gaps.entries, self.states) if s == "stale"]

    def known(self) -> list[Entry]:
        return [e for e, s in zip(self.gaps.entries, self.states) if s == "known"]

    def reason_of(self, index: int) -> str | None:
        at = self.covered.get(index)
        return None if at is None else self.gaps.entries[at].reason

    def record(self, results: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """conformance.json's ``known_gaps`` and ``new_findings``."""
        return known_gaps_record(self.gaps, self.states), [finding_record(results[i]) for i in self.new]


def _get(r: Any, name: str) -> Any:
    return r.get(name) if isinstance(r, dict) else getattr(r, name, None)


def check_id(nodeid: str) -> str:
    """A check's id: its pytest node id without the directories of its file
    (``test_semantics.py::test_semantics[TBL-08-drop-table]``), as `ctk list` shows it."""
    path, sep, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1] + sep + rest


def is_finding(result: Any) -> bool:
    return _get(result, "status") in FINDINGS


def finding_record(result: Any) -> dict[str, Any]:
    return {"check": _get(result, "nodeid"), "requirement": _get(result, "requirement"),
            "endpoint": _get(result, "endpoint"), "status": _get(result, "status")}


def known_gaps_record(gaps: KnownGaps, states: list[str]) -> dict[str, Any]:
    return {"file": gaps.path, "sha256": gaps.sha256,
            "entries": [{"check": e.check, "requirement": e.requirement, "endpoint": e.endpoint, "reason": e.reason,
                         "link": e.link, "state": s} for e, s in zip(gaps.entries, states)]}


# -- reading ------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def _line_of(node: yaml.Node | None, path: Iterable[Any]) -> int | None:
    """The 1-based line of the YAML node at ``path`` (keys and list indexes) in the composed document, or of
    the deepest node on the way there."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for step in path:
        child, at = None, None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if getattr(key, "value", None) == step:
                    child, at = value, key.start_mark.line + 1     # a key's line (its value may start below)
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            child = node.value[step]
            at = child.start_mark.line + 1
        if child is None or at is None:
            break
        node, line = child, at
    return line


def load(path: str | Path) -> KnownGaps:
    """The known-gaps file at ``path``, checked against its schema, the kit's requirements, operations and
    capabilities; `KnownGapsError` naming ``path:line`` for the first thing wrong."""
    import jsonschema

    from ctk.catalog.cases import spec_operations

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise KnownGapsError(f"--ctk-known-gaps {path}: cannot read it: {exc}") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        node = yaml.compose(text, Loader=SAFE_LOADER)
        data = yaml.load(text, Loader=SAFE_LOADER)   # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise KnownGapsError(f"--ctk-known-gaps {where}: not YAML: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(data),
                    key=lambda e: _line_of(node, e.absolute_path) or 0)
    if errors:
        err = errors[0]
        at = list(err.absolute_path)
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):   # the line of the key
            at += [k for k in err.instance if k not in (err.schema.get("properties") or {})][:1]
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        raise KnownGapsError(f"--ctk-known-gaps {path}:{_line_of(node, at)}: {where}: "
                             f"{err.message[:300]} (the file holds `capabilities:` and `gaps:` only; "
                             "docs/known-gaps.md)")
    caps: dict[Capability, bool] = {}
    for name, value in (data.get("capabilities") or {}).items():
        try:
            caps[Capability.parse(str(name))] = value in (True, "yes")
        except ValueError as exc:
            raise KnownGapsError(f"--ctk-known-gaps {path}:{_line_of(node, ['capabilities', name])}: {exc}") from None
    operations = spec_operations()
    entries = []
    for i, e in enumerate(data.get("gaps") or []):
        line = _line_of(node, ["gaps", i])
        rid, op = e.get("requirement"), e.get("endpoint")
        if rid is not None and rid not in REQUIREMENTS:
            raise KnownGapsError(f"--ctk-known-gaps {path}:{line}: requirement {rid!r} is not a requirement of "
                                 "this kit (docs/requirements.md; `ctk list` shows which check judges which)")
        if op is not None and op not in operations:
            raise KnownGapsError(f"--ctk-known-gaps {path}:{line}: endpoint {op!r} is not an operationId of the "
                                 f"kit's OpenAPI document (known: {', '.join(sorted(operations))})")
        if op is not None and rid is None and e.get("check") is None:
            raise KnownGapsError(f"--ctk-known-gaps {path}:{line}: an endpoint needs a requirement or a check")
        entries.append(Entry(e.get("check"), rid, op, str(e["reason"]), e.get("link"), line))
    return KnownGaps(str(path), hashlib.sha256(raw).hexdigest(), caps, entries)


def unknown_checks(gaps: KnownGaps, check_ids: Iterable[str]) -> list[str]:
    """Usage errors ("FILE:LINE: ...") for the entries whose check is none of ``check_ids`` (every check this
    kit collected, before any selection)."""
    known = set(check_ids)
    return [f"--ctk-known-gaps {gaps.path}:{e.line}: check {e.check!r} is not a check of this kit (`ctk list` "
            "shows their ids)" for e in gaps.entries if e.check is not None and e.check not in known]


# -- judging ------------------------------------------------------------------------------------------------


def judge(gaps: KnownGaps, results: list[Any]) -> Judged:
    """Each result against the entries (the first entry that names it covers it; passes are covered too, to
    tell a stale entry from an unmatched one)."""
    j = Judged(gaps)
    matched: list[list[str]] = [[] for _ in gaps.entries]
    for i, r in enumerate(results):
        at = next((n for n, e in enumerate(gaps.entries) if e.matches(r)), None)
        if at is not None:
            matched[at].append(str(_get(r, "status")))
            if is_finding(r):
                j.covered[i] = at
        elif is_finding(r):
            j.new.append(i)
    for statuses in matched:
        if any(s in FINDINGS for s in statuses):
            j.states.append("known")
        elif statuses and all(s == "pass" for s in statuses):
            j.states.append("stale")
        else:
            j.states.append("unmatched")
    # the new findings first by how bad they are (a fail before a deviation), in the run's order otherwise
    rank = {s: n for n, s in enumerate(("error", "fail", "deviation", "inconclusive"))}
    j.new.sort(key=lambda i: rank.get(str(_get(results[i], "status")), 9))
    return j


def item_covered(gaps: KnownGaps, nodeid: str, verdicts: list[dict[str, Any]], strict: bool = False) -> str | None:
    """The reason(s) when every failing verdict of one test (fail, error; a deviation under --ctk-strict) is a
    known gap, so that the test is reported as an expected failure; None otherwise (or when none fails)."""
    failing = [v for v in verdicts if v.get("status") in ("fail", "error") or (strict and v.get("status") == "deviation")]
    if not failing:
        return None
    reasons: list[str] = []
    for v in failing:
        entry = next((e for e in gaps.entries if e.matches({**v, "nodeid": nodeid})), None)
        if entry is None:
            return None
        if entry.reason not in reasons:
            reasons.append(entry.reason)
    return "; ".join(reasons)


# -- `ctk known-gaps`: a file from a run ---------------------------------------------------------------------


def entries_from_run(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (check, requirement) with a finding, ``reason: TODO``."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for r in results:
        if not is_finding(r) or r.get("status") == "error":
            continue     # an error is the kit's own crash, not a gap of the catalog
        key = (check_id(str(r.get("nodeid") or "")), str(r.get("requirement")))
        seen.setdefault(key, {"check": key[0], "requirement": key[1], "reason": TODO})
    return list(seen.values())


def render(entries: list[dict[str, Any]], capabilities: dict[str, bool] | None = None, source: str = "") -> str:
    head = ("# Known gaps of this catalog for the Iceberg REST compatibility kit (ctk run --ctk-known-gaps FILE;\n"
            "# docs/known-gaps.md). Give each gap its reason (and a link where it is tracked); remove one the\n"
            "# run reports stale.\n" + (f"# Written by `ctk known-gaps` from {source}\n" if source else ""))
    doc: dict[str, Any] = {}
    if capabilities:
        doc["capabilities"] = {k: "yes" if v else "no" for k, v in capabilities.items()}
    doc["gaps"] = entries
    return head + yaml.safe_dump(doc, sort_keys=False, width=120, allow_unicode=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "ctk known-gaps reports/conformance.json -o FILE"
    parser.add_argument("report", help="a run's conformance.json")
    parser.add_argument("-o", "--output", metavar="FILE", help="the known-gaps file to write (default: stdout)")


def run(args: argparse.Namespace) -> int:
    try:
        data = json.loads(Path(args.report).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"ctk known-gaps: cannot read {args.report}: {exc}", file=sys.stderr)
        return 4
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        print(f"ctk known-gaps: {args.report} is not a conformance.json (no results)", file=sys.stderr)
        return 4
    entries = entries_from_run(data["results"])
    declared = {k: v for k, v in ((data.get("options") or {}).get("capabilities") or {}).items()
                if isinstance(v, bool)}
    text = render(entries, declared, str(args.report))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"ctk known-gaps: {len(entries)} gap(s) written to {args.output}, each with reason: {TODO}",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
