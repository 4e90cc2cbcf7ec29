"""JUnit XML: per-test verdict properties and suite-level statistics.

Per test, the plugin attaches the verdict's properties to the pytest item::

    attach_verdict(item, verdict)            # item.user_properties, from a hook (no xunit2 warning)
    record_verdict(record_property, verdict) # or from a test through the record_property fixture

pytest writes ``user_properties`` as ``<properties>`` of each ``<testcase>`` whatever ``junit_family`` is
(the ``record_property`` *fixture* additionally warns under xunit2; appending to ``item.user_properties``
does not). Property names are prefixed ``ctk.``: requirement, level, source, verdict, classification,
endpoint, behaviour (absent values are left out).

After pytest has written the XML (``pytest_sessionfinish`` / ``pytest_unconfigure`` with trylast, or from
``ctk run`` afterwards), ``add_junit_statistics(junit_path, report)`` puts suite-level statistics
(``ctk.count.<status>`` per check and ``ctk.requirements.<status>`` per requirement, overall verdict,
target, kit version) in a ``<properties>`` element as the first child of every ``<testsuite>``, as the
JUnit schema wants, merging with properties already there.

A run that stopped because the target is unusable (``report.state == "unusable-target"``) ran no test, so
pytest's file holds zero tests (without workers) or is never written at all (the xdist controller exits
before its session starts). ``finish_junit(junit_path, report)`` then writes or completes the file with one
failing ``<testcase>`` naming the cause, so a CI job that reads only junit.xml sees the run fail and why.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from typing import Any, Callable, Sequence

from ctk.reporting.capabilities import junit_pairs
from ctk.reporting.judged import KEYS, judged_parts
from ctk.core.verdicts import Verdict
from ctk.reporting.model import RunReport, as_record, scrub_text

PREFIX = "ctk."
UNUSABLE_CLASSNAME = "ctk"
UNUSABLE_NAME = "target_usable"


def verdict_properties(verdict: Verdict | dict[str, Any]) -> list[tuple[str, str]]:
    """(name, value) pairs describing a verdict, for JUnit ``<property>`` elements."""
    d = verdict.to_dict() if isinstance(verdict, Verdict) else verdict
    status = d.get("status")
    status = getattr(status, "value", status)
    pairs = [
        ("requirement", d.get("requirement")),
        ("level", d.get("level")),
        ("verdict", status),
        ("classification", d.get("classification")),
        ("endpoint", d.get("endpoint")),
        ("behaviour", d.get("behaviour")),
        ("needs", d.get("needs")),
    ]
    return [(PREFIX + k, str(v)) for k, v in pairs if v not in (None, "")]


#: the verdict properties a testcase has once each, whatever number of verdicts it reports
VERDICT_NAMES = tuple(PREFIX + k for k in ("requirement", "level", "verdict", "classification", "endpoint",
                                           "behaviour", "needs"))
_WORST_FIRST = ("error", "fail", "deviation", "inconclusive", "pass", "unsupported")


def merged_properties(verdicts: Sequence[Verdict | dict[str, Any]]) -> list[tuple[str, str]]:
    """The properties of a testcase that reports these verdicts, each name once (CI viewers that meet a name
    twice keep the first): one verdict's are verdict_properties'; with several, each property lists the distinct
    values in order (``ctk.requirement`` "REPLAY-01, REPLAY-04"), ``ctk.verdict`` is the worst, and each
    requirement id has one property of its own, ``ctk.verdict.<id>``, its worst verdict here."""
    each = [dict(verdict_properties(v)) for v in verdicts]
    if len(each) == 1:
        return list(each[0].items())
    rank = {s: i for i, s in enumerate(_WORST_FIRST)}
    out: list[tuple[str, str]] = []
    for name in VERDICT_NAMES:
        values = list(dict.fromkeys(p[name] for p in each if name in p))
        if name == PREFIX + "verdict":
            values = sorted(values, key=lambda s: rank.get(s, len(rank)))[:1]
        if values:
            out.append((name, ", ".join(values)))
    per_id: dict[str, str] = {}
    for p in each:
        rid, status = p.get(PREFIX + "requirement"), p.get(PREFIX + "verdict", "")
        if rid and (rid not in per_id or rank.get(status, len(rank)) < rank.get(per_id[rid], len(rank))):
            per_id[rid] = status
    if len(per_id) > 1:
        out += [(f"{PREFIX}verdict.{rid}", status) for rid, status in per_id.items()]
    return out


def attach_verdict(item: Any, verdict: Verdict | dict[str, Any]) -> None:
    """Record the verdict in ``item.user_properties`` (a pytest Item): its properties, or, from the second verdict
    of one test on, every name once (merged_properties)."""
    d = verdict.to_dict() if isinstance(verdict, Verdict) else dict(verdict)
    seen: list[dict[str, Any]] = getattr(item, "ctk_verdicts", None) or []
    seen.append(d)
    item.ctk_verdicts = seen
    kept = [(n, v) for n, v in item.user_properties
            if n not in VERDICT_NAMES and not str(n).startswith(PREFIX + "verdict.")]
    item.user_properties[:] = kept + merged_properties(seen)


def record_verdict(record_property: Callable[[str, object], None], verdict: Verdict | dict[str, Any]) -> None:
    """Record the verdict's properties through pytest's ``record_property`` fixture."""
    for name, value in verdict_properties(verdict):
        record_property(name, value)


def statistics(report: RunReport | dict[str, Any]) -> list[tuple[str, str]]:
    """Suite-level (name, value) pairs for a run, from its record."""
    rec = as_record(report)
    options = rec.get("options") or {}
    catalog, spec = rec.get("catalog") or {}, rec.get("spec") or {}
    target = rec.get("target") or {}
    pairs = [
        (PREFIX + "overall", rec.get("worst_observed") or "none"),
        (PREFIX + "target", target.get("name") or target.get("url") or ""),
        (PREFIX + "kit_version", (rec.get("kit") or {}).get("version") or rec.get("kit_version") or ""),
    ]
    pairs += [(PREFIX + name, str(value)) for name, value in (
        ("catalog.name", catalog.get("name")), ("catalog.version", catalog.get("version")),
        ("spec.version", spec.get("version")), ("spec.sha256", spec.get("sha256"))) if value]
    # how the run was judged and run (ctk.reporting.judged): ctk.option.profile, ctk.option.fail_on, ...
    if judged_parts(options):
        pairs += [(f"{PREFIX}option.{k}", _option_text(options.get(k))) for k in KEYS]
    pairs += [(f"{PREFIX}count.{s}", str(n)) for s, n in (rec.get("counts") or {}).items()]
    pairs += [(f"{PREFIX}requirements.{s}", str(n)) for s, n in (rec.get("requirement_counts") or {}).items()]
    pairs += [(f"{PREFIX}kind.{k}", str(n)) for k, n in (rec.get("kinds") or {}).items()]
    pairs += junit_pairs(rec.get("catalog_capabilities") or {}, PREFIX)   # catalog capabilities, semantics per area
    # the broken rules, the one to fix first as ctk.root_cause.1 (ctk.reporting.rootcause)
    for i, rc in enumerate(rec.get("root_causes") or [], 1):
        pairs += [(f"{PREFIX}root_cause.{i}", str(rc.get("line") or rc.get("title"))),
                  (f"{PREFIX}root_cause.{i}.rule", str(rc.get("rule")))]
    # what the run's cleanup left behind, as the verdict block and conformance.json/html say it
    pairs += [(f"{PREFIX}cleanup_problem.{i}", p) for i, p in enumerate(rec.get("cleanup_problems") or [], 1)]
    pairs += gap_and_certification_pairs(rec)
    return pairs


def gap_and_certification_pairs(report: RunReport | dict[str, Any]) -> list[tuple[str, str]]:
    """--ctk-known-gaps (ctk.known_gaps.file/.sha256, ctk.known_gap.N with its state, ctk.new_finding.N) and
    --ctk-certify (ctk.certification: "certified run" or "not certified", with kit, spec, target and date)."""
    rec = as_record(report)
    pairs: list[tuple[str, str]] = []
    gaps = rec.get("known_gaps")
    if gaps:
        pairs += [(PREFIX + "known_gaps.file", str(gaps.get("file"))), (PREFIX + "known_gaps.sha256",
                                                                         str(gaps.get("sha256")))]
        for i, e in enumerate(gaps.get("entries") or [], 1):
            what = e.get("check") or e.get("requirement") or "?"
            if e.get("check") and e.get("requirement"):
                what += f" ({e['requirement']})"
            what += f" on {e['endpoint']}" if e.get("endpoint") else ""
            pairs.append((f"{PREFIX}known_gap.{i}", f"{e.get('state')}: {what}: {e.get('reason')}"))
        for i, f in enumerate(rec.get("new_findings") or [], 1):
            pairs.append((f"{PREFIX}new_finding.{i}", f"{f.get('status')} {f.get('requirement')} {f.get('check')}"))
    cert = rec.get("certification")
    if cert and cert.get("requested"):
        pairs.append((PREFIX + "certification", "certified run" if cert.get("certified") else "not certified"))
        pairs += [(f"{PREFIX}certification.{k}", str(cert.get(k))) for k in
                  ("kit_version", "spec_version", "spec_sha256", "target", "date")]
        pairs += [(f"{PREFIX}certification.why_not.{i}", w) for i, w in enumerate(cert.get("why_not") or [], 1)]
    return pairs


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value)) or "none"
    return "" if value is None else str(value)


def add_junit_statistics(junit_path: str, report: RunReport | dict[str, Any]) -> int:
    """Insert the run's statistics as ``<properties>`` on each ``<testsuite>`` of ``junit_path``.

    Existing ``ctk.*`` properties of the suite are replaced (so calling it twice is harmless), others are
    kept; ``<properties>`` becomes the suite's first child. The file is rewritten atomically. Returns the
    number of suites updated; raises ValueError if the file is not JUnit XML.
    """
    try:
        tree = ET.parse(junit_path)
    except ET.ParseError as exc:
        raise ValueError(f"{junit_path}: not well-formed XML ({exc})") from None
    root = tree.getroot()
    if root.tag == "testsuite":
        suites = [root]
    elif root.tag == "testsuites":
        suites = list(root.iter("testsuite"))
    else:
        raise ValueError(f"{junit_path}: not JUnit XML (root element <{root.tag}>)")
    stats = statistics(report)
    for suite in suites:
        props = suite.find("properties")
        if props is None:
            props = ET.Element("properties")
        else:
            suite.remove(props)
            for p in list(props):
                if p.get("name", "").startswith(PREFIX):
                    props.remove(p)
        for name, value in stats:
            ET.SubElement(props, "property", name=name, value=value)
        suite.insert(0, props)
        for case in suite.iter("testcase"):
            for outcome in (*case.findall("failure"), *case.findall("error")):
                _headline_only(outcome)
    tmp = f"{junit_path}.tmp{os.getpid()}"
    tree.write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, junit_path)
    return len(suites)


HEADLINE = 300   # characters of a failure's ``message`` attribute when its text holds the whole message


def _headline_only(outcome: ET.Element) -> None:
    """pytest writes a failing check's whole text twice: as the ``message`` attribute and as the element's
    text. When the text holds all of the message, the attribute keeps its first line (what a CI page lists)."""
    message, text = outcome.get("message") or "", outcome.text or ""
    lines = message.strip().splitlines()
    if not lines or len(message) <= HEADLINE or message.strip() not in text:
        return
    head = lines[0] if len(lines[0]) <= HEADLINE else lines[0][:HEADLINE] + "…"
    outcome.set("message", head + " (in full in this element's text)")


def finish_junit(junit_path: str, report: RunReport | dict[str, Any]) -> int:
    """Add the run's statistics to ``junit_path`` and, when the target was unusable, one failing testcase
    naming the cause (replacing an earlier one: harmless twice). The file is created when pytest wrote none
    (an unusable target under xdist); otherwise a missing file is left missing (junitxml switched off).
    Returns the number of suites updated (0: nothing written)."""
    rec = as_record(report)
    unusable = rec.get("state") == "unusable-target"
    if not os.path.isfile(junit_path):
        if not unusable:
            return 0
        os.makedirs(os.path.dirname(os.path.abspath(junit_path)), exist_ok=True)
        root = ET.Element("testsuites", name="ctk")
        ET.SubElement(root, "testsuite", name="ctk", errors="0", failures="0", skipped="0", tests="0",
                      time="0", timestamp=rec.get("started_at") or "")
        tmp = f"{junit_path}.tmp{os.getpid()}"
        ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
        os.replace(tmp, junit_path)
    n = add_junit_statistics(junit_path, rec)
    if unusable:
        _add_unusable_case(junit_path, rec)
    return n


def _add_unusable_case(junit_path: str, report: dict[str, Any]) -> None:
    tree = ET.parse(junit_path)
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    problem = scrub_text(report.get("problem")) or "the target could not be used"
    target = (report.get("target") or {}).get("name") or (report.get("target") or {}).get("url") or "the target"
    message = f"the target is unusable, no check ran: {problem}"
    for i, suite in enumerate(suites):
        for old in suite.findall("testcase"):
            if old.get("classname") == UNUSABLE_CLASSNAME and old.get("name") == UNUSABLE_NAME:
                suite.remove(old)
                _bump(suite, -1)
        if i:   # one failing case for the run, in its first suite
            continue
        case = ET.SubElement(suite, "testcase", classname=UNUSABLE_CLASSNAME, name=UNUSABLE_NAME, time="0")
        failure = ET.SubElement(case, "failure", message=message, type="ctk.UnusableTarget")
        failure.text = (f"{message}\ntarget: {target}\nexit code 6; conformance.json and conformance.html in the "
                        "same directory say the same.")
        _bump(suite, +1)
    tmp = f"{junit_path}.tmp{os.getpid()}"
    tree.write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, junit_path)


def _bump(suite: ET.Element, by: int) -> None:
    for attr in ("tests", "failures"):
        try:
            suite.set(attr, str(max(0, int(suite.get(attr) or 0) + by)))
        except ValueError:
            suite.set(attr, str(max(0, by)))
