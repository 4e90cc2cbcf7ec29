"""Reviewed expectations of the interop lane: what verdict each requirement should get on a real catalog,
and why; compared with the requirement verdicts of a run's conformance.json.

An expectation file has one line per requirement whose verdict on that catalog was reviewed::

    OCC-04       unsupported   # lakana does not route POST /v1/{prefix}/transactions/commit (404)

The verdict is a summary status of conformance.json (pass, fail, deviation, inconclusive, unsupported, error)
or ``not-run`` (the requirement got no result, e.g. the Spark ones without --ctk-spark). The reason after
``#`` is required: an expectation nobody can justify is not a reviewed one. Blank lines and lines starting
with ``#`` are comments.

A requirement of the registry without a line is *not expected yet* (a requirement added since the file was
reviewed, on a catalog its author may never have run): its verdict is reported in the lane's output
(`not_expected_yet`, `unexpected_table`), never a mismatch; the exit status a run may have then also allows what
those verdicts make of it (`exit_allowed`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

NOT_RUN = "not-run"
VERDICTS = ("pass", "fail", "deviation", "inconclusive", "unsupported", "error", NOT_RUN)
_LINE = re.compile(r"^(?P<req>\S+)\s+(?P<verdict>\S+)\s*(?:#\s*(?P<why>.*?))?\s*$")


class ExpectationError(ValueError):
    """An expectation file that cannot be used as it is (the message names the file and line)."""


@dataclass(frozen=True)
class Expectation:
    requirement: str
    verdict: str
    why: str
    line: int


def parse(text: str, known: Iterable[str], source: str = "<expectations>") -> dict[str, Expectation]:
    """The expectations of ``text``, at most one per requirement id of ``known``; ``ExpectationError`` on an
    unknown verdict or requirement, a missing reason or a duplicate. A requirement of ``known`` with no line is
    not expected yet (`missing`), not an error."""
    known = list(known)
    out: dict[str, Expectation] = {}
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            problems.append(f"{source}:{number}: expected 'REQ-ID  verdict  # why', got {raw!r}")
            continue
        req, verdict, why = m.group("req"), m.group("verdict"), (m.group("why") or "").strip()
        if req not in known:
            problems.append(f"{source}:{number}: unknown requirement {req!r} (known: {', '.join(known)})")
        if verdict not in VERDICTS:
            problems.append(f"{source}:{number}: unknown verdict {verdict!r} for {req} "
                            f"(one of {', '.join(VERDICTS)})")
        if not why:
            problems.append(f"{source}:{number}: {req} {verdict} has no reason; write why after '#'")
        if req in out:
            problems.append(f"{source}:{number}: {req} already expected on line {out[req].line}")
            continue
        out[req] = Expectation(req, verdict, why, number)
    if problems:
        raise ExpectationError("\n".join(problems))
    return out


def missing(expectations: dict[str, Expectation], known: Iterable[str]) -> list[str]:
    """The requirements of ``known`` that have no line: not expected yet."""
    return [r for r in known if r not in expectations]


def load(path: Path, known: Iterable[str]) -> dict[str, Expectation]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ExpectationError(f"cannot read expectation file {path}: {exc}") from exc
    return parse(text, known, source=str(path))


def expected_exit(expectations: dict[str, Expectation], musts: Iterable[str] = ()) -> int:
    """The exit status a run should have (ctk/plugin/exits.py): 1 when some requirement is expected to fail or
    error; else 7 when a MUST (one of ``musts``) is expected inconclusive (a setup that failed, a storage setting
    missing: undecided, not a green build); else 0. An inconclusive MUST that names what would decide it
    ("needs ...") does not make 7; no expectation file here has one."""
    if any(e.verdict in ("fail", "error") for e in expectations.values()):
        return 1
    musts = set(musts)
    return 7 if any(e.verdict == "inconclusive" and e.requirement in musts for e in expectations.values()) else 0


def exit_allowed(expectations: dict[str, Expectation], report: dict[str, Any],
                 musts: Iterable[str] = ()) -> tuple[int, ...]:
    """The exit statuses a run may have: the one its expectations imply (`expected_exit`), and the one they imply
    with the observed verdicts of the requirements not expected yet taken as their expectations (a requirement
    not expected yet that fails makes exit 1: said in the output, not a failure of the lane on the exit code
    alone)."""
    musts = list(musts)
    want = expected_exit(expectations, musts)
    unexpected = {rid: Expectation(rid, status, "not expected yet", 0)
                  for rid, status in observed(report).items() if rid not in expectations}
    with_them = expected_exit({**expectations, **unexpected}, musts)
    return (want,) if with_them == want else (want, with_them)


@dataclass(frozen=True)
class Mismatch:
    requirement: str
    expected: str
    got: str
    why: str
    messages: tuple[str, ...]


def observed(report: dict[str, Any]) -> dict[str, str]:
    """Each requirement's summary status in a conformance.json document (``not-run`` for none)."""
    requirements = report.get("requirements")
    if not isinstance(requirements, dict):
        raise ExpectationError("conformance.json has no 'requirements' object "
                               f"(format {report.get('format')!r})")
    return {rid: (entry or {}).get("status") or NOT_RUN for rid, entry in requirements.items()}


def _messages(report: dict[str, Any], requirement: str, got: str, limit: int = 4,
              width: int = 600) -> tuple[str, ...]:
    """The messages of the results of ``requirement`` that gave it the summary status ``got``."""
    results = [r for r in report.get("results") or [] if r.get("requirement") == requirement
               and r.get("status") == got]
    out = []
    for r in results[:limit]:
        message = " ".join((r.get("message") or "").split("\nexchanges:")[0].split())
        if len(message) > width:
            message = message[:width] + " ..."
        out.append(f"{r.get('status')} [{r.get('nodeid')}]: {message}")
    if len(results) > limit:
        out.append(f"... and {len(results) - limit} more {got} result(s)")
    return tuple(out)


def compare(expectations: dict[str, Expectation], report: dict[str, Any]) -> list[Mismatch]:
    """Every expected requirement whose observed verdict differs from its expectation (a requirement without
    an expectation is not expected yet: `not_expected_yet`, not a mismatch)."""
    got = observed(report)
    mismatches = []
    for rid, exp in expectations.items():
        status = got.get(rid, NOT_RUN)
        if status != exp.verdict:
            mismatches.append(Mismatch(rid, exp.verdict, status, exp.why, _messages(report, rid, status)))
    return mismatches


NOT_EXPECTED = "(not expected yet)"


def not_expected_yet(expectations: dict[str, Expectation], report: dict[str, Any],
                     known: Iterable[str] = ()) -> list[Mismatch]:
    """The verdict of every requirement without an expectation: those of ``known`` (the registry), and any
    other the report has; each as a row whose ``expected`` is "(not expected yet)"."""
    got = observed(report)
    ids = list(dict.fromkeys([*known, *got]))
    return [Mismatch(rid, NOT_EXPECTED, got.get(rid, NOT_RUN), "", _messages(report, rid, got.get(rid, NOT_RUN)))
            for rid in ids if rid not in expectations]


def unexpected_table(rows: list[Mismatch]) -> str:
    """The requirements not expected yet and what each got (the messages of those that did not pass), for the
    lane's output: a line to add to the expectation file once reviewed."""
    if not rows:
        return "every requirement has an expectation"
    out = [f"{len(rows)} requirement(s) not expected yet (no line in the expectation file; reported, not failed):"]
    for m in rows:
        out.append(f"  {m.requirement:<12} {m.got}")
        if m.got not in ("pass", NOT_RUN):
            out += [f"      {line}" for line in m.messages]
    return "\n".join(out)


def table(mismatches: list[Mismatch]) -> str:
    """Expected vs got, one row per differing requirement, then each one's messages."""
    if not mismatches:
        return "all requirements as expected"
    width = max(len("requirement"), *(len(m.requirement) for m in mismatches)) + 2
    rows = [f"{'requirement':<{width}}{'expected':<18}{'got':<14}why expected",
            *(f"{m.requirement:<{width}}{m.expected:<18}{m.got:<14}{m.why}" for m in mismatches)]
    details = []
    for m in mismatches:
        details.append(f"{m.requirement}: expected {m.expected}, got {m.got}")
        details += [f"    {line}" for line in m.messages] or ["    (no result recorded)"]
    return "\n".join(rows + [""] + details)
