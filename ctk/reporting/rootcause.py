"""Root causes: a run's findings grouped by the broken rule that explains them.

One rule broken on an endpoint shows up in many checks: a catalog that executes every duplicate again fails
REPLAY-01 (finalized duplicate), REPLAY-04 (lost answer), RECON-01 (unreadable record), LIFE-01, GEN-01 and
GEN-02 on each endpoint. A user needs the rule first, then the checks it shows in. ``root_causes(results)``
gives that list, worst and broadest first; conformance.json (``root_causes``), conformance.html (top of the
page), the terminal's last lines and junit.xml's suite properties (``ctk.root_cause.N``) all show it.

How a finding (fail, deviation or error) finds its rule:

1. its *symptom*, read from what the check observed (its classification, else its message): the retry was
   executed again, a replay answered differently, a 5xx was replayed, ... (``symptom``);
2. the rule for (requirement, symptom) in ``RULES_BY_SYMPTOM``: the rule whose sentence states it (e.g. a
   REPLAY-04 retry executed again breaks REPLAY-01's rule: a duplicate is replayed, not executed);
   a requirement's own rule otherwise (``Rule.of_requirement``);
3. per endpoint, a rule the evidence there explains better: a duplicate that executes again both after the
   first answer and while the first is in flight means the key is ignored on that operation (KEY_IGNORED); a
   LIFE-01, RECON-01 or REPLAY-02 retry executed again, or a replay answered differently (a re-execution
   answers 409 or 404), on an endpoint where a plain duplicate already executes again is that same rule, not a
   short lifetime, a missing reconcile or a replay of its own;
4. a finding without an endpoint of its own (the model-based GEN-02, history checks) joins the root cause
   that already holds a finding with its symptom, else its requirement's rule; where duplicates execute again
   and no REPLAY-02 finding stands on its own, a terminal 4xx's retry executed again is that rule too; where
   commit requirements are not checked, lost concurrent updates and partial transactions are that rule.

The deviation profiles of the reference catalog (ctk/reference/deviations.py) each break one rule; under each,
the first root cause is that rule (tests/reporting/test_root_causes.py).

Each root cause is shown with the status, requirement and level of its worst findings (a rule a MUST states that
explains only SHOULD deviations is a DEVIATION of that SHOULD, never "(MUST)"), and its endpoints with the
variant of the operation where the findings concern one only (``Result.variant``: "createTable (stage-create)").
The order of the list is decided in one place, ``order_key``: ``precedence`` first (a family of rules whose
findings explain others goes first), then the worst status, the most findings, the most requirements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ctk.core.requirements import REQUIREMENTS

FINDING_STATUSES = ("error", "fail", "deviation")
_STATUS_RANK = {"error": 0, "fail": 1, "deviation": 2}


@dataclass(frozen=True)
class Rule:
    """A rule a catalog can break: an id (stable, for JSON and tests), one sentence, and the requirement whose
    statement states it."""

    id: str
    title: str
    requirement: str

    @classmethod
    def of_requirement(cls, rid: str) -> "Rule":
        req = REQUIREMENTS.get(rid)
        return cls(f"req:{rid}", req.statement if req else f"{rid} (a requirement this kit does not know)", rid)


# -- the rules findings are explained by ----------------------------------------------------------------------
DUPLICATE_EXECUTED = Rule("duplicate-executed-again", "A retry with the same Idempotency-Key executes the request "
                          "again instead of replaying the first answer", "REPLAY-01")
KEY_IGNORED = Rule("key-ignored", "The Idempotency-Key has no effect on this operation although support is "
                   "advertised: duplicates execute again after the first answer and while it is in flight",
                   "REPLAY-01")
REPLAY_DIFFERS = Rule("replay-differs", "A replay answers with another status or body than the first answer",
                      "REPLAY-01")
TERMINAL_4XX = Rule("terminal-4xx-not-finalized", "A terminal 4xx is not finalized: after its cause is removed, "
                    "the retry with the same key executes", "REPLAY-02")
STORED_5XX = Rule("5xx-stored", "A 5xx is stored and replayed instead of executing the retry", "REPLAY-03")
INFLIGHT_TWICE = Rule("in-flight-executed-twice", "A duplicate arriving while the first is in flight executes a "
                      "second time", "INFLIGHT-01")
FORGOTTEN_EARLY = Rule("key-forgotten-early", "A key is forgotten before the advertised lifetime: a later duplicate "
                       "executes again", "LIFE-01")
UNREADABLE_REEXECUTES = Rule("unreadable-record-reexecutes", "A finalized record whose answer cannot be produced "
                             "makes the retry execute again instead of answering 5xx", "RECON-01")
CRASH_REEXECUTES = Rule("crash-record-reexecuted", "A record left IN_PROGRESS by a crash is executed again instead "
                        "of reconciled from state", "RECON-02")
REQUIREMENTS_UNCHECKED = Rule("commit-requirements-unchecked", "A commit whose requirements do not hold is "
                              "accepted instead of answered 409", "OCC-01")
NOT_SERIALIZED = Rule("concurrent-commits-not-serialized", "Concurrent commits on the same base are not serialized: "
                      "more than one succeeds and an update is lost", "OCC-02")
TRANSACTION_PARTIAL = Rule("transaction-not-atomic", "A multi-table transaction is applied in part", "OCC-04")
REQUIRED_FIELD_MISSING = Rule("required-field-missing", "An answer lacks a field its response schema requires, so a "
                              "client cannot read it (the effect itself held)", "EVO-01")
CHECK_CRASHED = Rule("check-crashed", "A check of the kit crashed: its requirement went unjudged (a kit problem, "
                     "not evidence against the catalog)", "(kit)")

# (requirement or "*", symptom) -> rule; first match wins
RULES_BY_SYMPTOM: tuple[tuple[str, str, Rule], ...] = (
    ("INFLIGHT-01", "executed-again", INFLIGHT_TWICE),
    ("RECON-02", "executed-again", CRASH_REEXECUTES),
    ("RECON-01", "executed-again", UNREADABLE_REEXECUTES),
    ("LIFE-01", "executed-again", FORGOTTEN_EARLY),
    ("*", "4xx-executed-again", TERMINAL_4XX),
    ("REPLAY-03", "5xx-replayed", STORED_5XX),
    ("*", "5xx-replayed", STORED_5XX),
    ("*", "executed-again", DUPLICATE_EXECUTED),
    ("*", "replay-differs", REPLAY_DIFFERS),
)
# a requirement's findings that one rule explains whatever their symptom
BY_REQUIREMENT = {"OCC-01": REQUIREMENTS_UNCHECKED, "OCC-02": NOT_SERIALIZED, "OCC-03": NOT_SERIALIZED,
                  "HIST-01": NOT_SERIALIZED, "OCC-04": TRANSACTION_PARTIAL}
# where the first rule is broken at all, it explains the findings of the others (a catalog that does not check
# a commit's requirements also loses concurrent updates and applies stale transactions)
EXPLAINED_BY = {REQUIREMENTS_UNCHECKED: {NOT_SERIALIZED, TRANSACTION_PARTIAL}}
# where a plain duplicate already executes again on the same endpoint, these are that rule (a replay that answers
# another status there is a re-execution answering: 409 to a create, 404 to a drop)
EXPLAINED_BY_DUPLICATE = {FORGOTTEN_EARLY, UNREADABLE_REEXECUTES, TERMINAL_4XX, REPLAY_DIFFERS}

# The order of the root causes: a lower precedence goes first, before the status. A family of requirements whose
# broken rule explains findings of others on the same endpoint (a plain catalog operation that does not work
# explains the retry findings there) gets a negative number here, by the area of the rule's requirement
# (ctk.core.requirements). Empty: every rule has precedence 0.
# Semantics first (issue 28): a catalog whose plain operation does not work (a drop that keeps the table, a load
# that misses the last commit) is told that before anything its retries or concurrency showed; the checks of
# those rest on the plain operation and are inconclusive naming it (details.blocked_by, `RootCause.blocked`).
SEMANTIC_AREAS = ("namespaces", "tables", "listing", "evolution", "transactions", "views", "types")
PRECEDENCE_BY_AREA: dict[str, int] = {area: -1 for area in SEMANTIC_AREAS}


_EXECUTED = re.compile(r"re-?executed|executed (?:again|twice|a second time)|second execution|forgotten"
                       r"|duplicated|applied twice", re.I)
_DIFFERS = re.compile(r"different response|replay-status|replay-body|^retry \d{3}$|replays? (?:with )?another",
                      re.I)
_5XX_REPLAYED = re.compile(r"5xx replayed|stored (?:and replayed|5xx)|replayed the stored 5", re.I)


_4XX_EXECUTED = re.compile(r"answered 4\d\d but executed again", re.I)
_5XX_KEPT = re.compile(r"fails before persisting\): the retry with the same key answered 5\d\d", re.I)
_MODEL_DIFFERS = re.compile(r"the retry with the same key answered (2\d\d); the model expects (2\d\d)", re.I)
_FIRST_ANSWER = re.compile(r"^<-- (\d{3})", re.M)
_PROBLEM_LINE = re.compile(r"^(\(replay\) )?[A-Z]+ /\S* -> \d{3}", re.M)


def symptom(result: Any) -> str | None:
    """What the check observed, in a few words the rules are keyed by: "executed-again", "4xx-executed-again"
    (the retry of a 4xx answer), "replay-differs", "5xx-replayed", or None (the requirement's own rule)."""
    sym = _symptom(result)
    if sym == "executed-again":
        message = str(_get(result, "message") or "")
        first = _FIRST_ANSWER.search(message.split("minimal failing example", 1)[-1]) \
            if "minimal failing example" in message else None
        if _get(result, "requirement") == "REPLAY-02" or _4XX_EXECUTED.search(_happened(message)) \
                or (first and first.group(1).startswith("4")):
            return "4xx-executed-again"
    return sym


# scenario files (scenarios/*.yaml) say in each step what a re-execution would show; a committed request whose
# retry met a conflict (REPLAY-04's seed 1b, INTEG-01's example 1b) was executed again against the new state
_SCENARIO_REEXECUTED = re.compile(r"\(a replay [^()]*, a re-execution [^()]*\)|\(retry with the same key \(a "
                                  r"re-execution would answer", re.I)
_SCENARIO_4XX = re.compile(r"expected the status of '[^']+' \(4\d\d\), got 2\d\d", re.I)
_RETRY_CONFLICT = re.compile(r"the retry got 409 \w+, not 2\d\d|attempts \[5\d\d, 409\]", re.I)


def _symptom(result: Any) -> str | None:
    message = str(_get(result, "message") or "")
    happened = _happened(message)
    if (_get(result, "details") or {}).get("from_scenario"):    # a scenario file's step (ctk.scenarios.runner)
        first = message.split("\n\nexchanges:")[0]
        if _SCENARIO_4XX.search(first):
            return "4xx-executed-again"
        if _SCENARIO_REEXECUTED.search(first):
            return "executed-again"
    if _RETRY_CONFLICT.search(happened):
        return "executed-again"
    if _5XX_KEPT.search(happened):
        return "5xx-replayed"
    m = _MODEL_DIFFERS.search(happened)
    if m and m.group(1) != m.group(2):
        return "replay-differs"
    if _get(result, "requirement") == "SCHEMA-01":      # every nonconforming answer was a replay's
        lines = _PROBLEM_LINE.findall(message.split("\n\nexchanges:")[0])
        if lines and all(lines):
            return "replay-differs"
        return None
    cls = str(_get(result, "classification") or "")
    if cls:
        for pattern, name in ((_5XX_REPLAYED, "5xx-replayed"), (_EXECUTED, "executed-again"),
                              (_DIFFERS, "replay-differs")):
            if pattern.search(cls):
                return name
    for pattern, name in ((_5XX_REPLAYED, "5xx-replayed"), (_EXECUTED, "executed-again")):
        if pattern.search(happened):
            return name
    return None


# classifications of findings that show a required field missing from an answer (the real client's cause)
FIELD_MISSING_CLASSES = ("required field missing", "metadata-location missing")


_SCHEMA_PROBLEM = re.compile(r"^\s*(?:\d+x )?-?\s*(?:-> \d{3}: )?\(body\)[^:]*: (.*)$", re.M)
_REQUIRED = re.compile(r"'[^']+' is a required property")


def _only_required_missing(message: str) -> bool:
    """A SCHEMA-01 finding whose every listed body problem is a required property missing."""
    problems = _SCHEMA_PROBLEM.findall(message.split("\n\nexchanges:")[0])
    return bool(problems) and all(_REQUIRED.search(p) for p in problems)


def rule_of(result: Any) -> Rule:
    """The rule a finding breaks by its own evidence (steps 1-2 of the module docstring). Two kinds are known by a
    field of the finding, whatever its requirement's family: a required field missing from an answer
    (``details.missing_field``) and a stale requirement answered as a success
    (``details.stale_requirement_accepted``, the semantic checks' conflict steps): one rule each, one root cause."""
    rid = str(_get(result, "requirement") or "?")
    if _get(result, "status") == "error":
        return CHECK_CRASHED
    details = _get(result, "details")
    details = details if isinstance(details, dict) else {}
    if details.get("missing_field") or _get(result, "classification") in FIELD_MISSING_CLASSES \
            or (rid == "SCHEMA-01" and _only_required_missing(str(_get(result, "message") or ""))):
        return REQUIRED_FIELD_MISSING
    if details.get("stale_requirement_accepted"):
        return REQUIREMENTS_UNCHECKED
    if rid in BY_REQUIREMENT:
        return BY_REQUIREMENT[rid]
    sym = symptom(result)
    for req, s, rule in RULES_BY_SYMPTOM:
        if sym == s and req in ("*", rid):
            return rule
    return Rule.of_requirement(rid)


@dataclass
class RootCause:
    """One broken rule and the findings it explains."""

    rule: Rule
    status: str                                   # the worst status of its findings
    level: str                                    # the level that status comes from ("MUST" for a fail, ...)
    endpoints: list[str] = field(default_factory=list)            # "createTable (stage-create)": a variant only
    findings: list[int] = field(default_factory=list)             # indexes into the run's results
    requirements: dict[str, int] = field(default_factory=dict)    # requirement -> findings
    requirement: str = ""                         # whose finding gives status and level: the rule's, if it has one
    finding: str = ""                             # what that finding saw (its message's ``happened:``), in short
    blocked: list[int] = field(default_factory=list)  # inconclusive results that rest on it (details.blocked_by)
    _blocked_counts: dict[str, int] = field(default_factory=dict, repr=False)   # their requirement -> results

    def line(self) -> str:
        """One line for the terminal and junit.xml: the finding first (what broke, on which operation), then the
        rule it breaks - never the rule alone, which a reader takes for what was seen."""
        where = ""
        if self.endpoints:
            shown = ", ".join(self.endpoints[:4]) + (f" and {len(self.endpoints) - 4} more"
                                                     if len(self.endpoints) > 4 else "")
            where = f" on {shown}"
        reqs = ", ".join(f"{r}" + (f" x{n}" if n > 1 else "") for r, n in self.requirements.items())
        held = (f"; {len(self.blocked)} verdict(s) undecided until it is fixed ({self.blocked_requirements()})"
                if self.blocked else "")
        seen = f"{self.finding} - rule: " if self.finding else ""
        return (f"{self.status.upper()} {self.shown} ({self.level}){where}: {seen}{self.rule.title}; "
                f"{len(self.findings)} finding(s): {reqs}{held}")

    def blocked_requirements(self) -> str:
        """The requirements of the verdicts left undecided by this root cause, with counts."""
        return ", ".join(f"{r}" + (f" x{n}" if n > 1 else "") for r, n in self._blocked_counts.items())

    @property
    def shown(self) -> str:
        """The requirement the line names with the status and level."""
        return self.requirement or self.rule.requirement

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule.id, "title": self.rule.title, "finding": self.finding, "requirement": self.shown,
                "rule_requirement": self.rule.requirement,
                "level": self.level, "status": self.status, "endpoints": list(self.endpoints),
                "findings": len(self.findings), "requirements": dict(self.requirements),
                "results": list(self.findings), "blocked": len(self.blocked),
                "blocked_requirements": dict(self._blocked_counts), "blocked_results": list(self.blocked)}


def root_causes(results: Iterable[Any]) -> list[RootCause]:
    """The run's findings grouped by the rule that explains them; worst status first, then the most findings,
    then the most requirements."""
    results = list(results)
    findings = [(i, r) for i, r in enumerate(results) if _get(r, "status") in FINDING_STATUSES]
    own = {i: rule_of(r) for i, r in findings}
    by_endpoint: dict[str, set[Rule]] = {}
    for i, r in findings:
        if _get(r, "endpoint"):
            by_endpoint.setdefault(str(_get(r, "endpoint")), set()).add(own[i])

    def refined(i: int, r: Any) -> Rule:
        rule, ep = own[i], _get(r, "endpoint")
        there = by_endpoint.get(str(ep), set()) if ep else set()
        if DUPLICATE_EXECUTED not in there:
            return rule
        # duplicates also executing a second time while the first is in flight: the key has no effect there
        if INFLIGHT_TWICE in there and ("executed-again" in (symptom(r) or "") or rule in EXPLAINED_BY_DUPLICATE):
            return KEY_IGNORED
        return DUPLICATE_EXECUTED if rule in EXPLAINED_BY_DUPLICATE else rule

    chosen = {i: refined(i, r) for i, r in findings}
    # a terminal 4xx's retry executed again where no REPLAY-02 shows it as a rule of its own (each is explained
    # by a duplicate executing again on its endpoint) and duplicates execute again: that rule
    duplicates = [rule for rule in chosen.values() if rule in (DUPLICATE_EXECUTED, KEY_IGNORED)]
    if duplicates and not any(chosen[i] is TERMINAL_4XX and _get(r, "requirement") == "REPLAY-02"
                              for i, r in findings):
        widest = max(set(duplicates), key=lambda x: (duplicates.count(x), x.id))
        chosen = {i: widest if rule is TERMINAL_4XX else rule for i, rule in chosen.items()}
    for first, explained in EXPLAINED_BY.items():
        if first in chosen.values():
            chosen = {i: first if rule in explained else rule for i, rule in chosen.items()}
    # a finding without an endpoint joins a rule that already explains its symptom elsewhere
    seen_symptoms: dict[str, list[Rule]] = {}
    for i, r in findings:
        if _get(r, "endpoint") and symptom(r):
            seen_symptoms.setdefault(symptom(r) or "", []).append(chosen[i])
    for i, r in findings:
        if not _get(r, "endpoint") and symptom(r) in seen_symptoms and chosen[i] is not CHECK_CRASHED:
            rules = seen_symptoms[symptom(r) or ""]
            chosen[i] = max(set(rules), key=lambda x: (rules.count(x), x.id))

    groups: dict[Rule, RootCause] = {}
    for i, r in findings:
        rule = chosen[i]
        req = REQUIREMENTS.get(rule.requirement)
        rc = groups.setdefault(rule, RootCause(rule, str(_get(r, "status")),
                                               req.level.value if req else "MUST"))
        rc.findings.append(i)
        if _STATUS_RANK[str(_get(r, "status"))] < _STATUS_RANK[rc.status]:
            rc.status = str(_get(r, "status"))
        ep = _where(r)
        if ep and ep not in rc.endpoints:
            rc.endpoints.append(ep)
        rid = str(_get(r, "requirement") or "?")
        rc.requirements[rid] = rc.requirements.get(rid, 0) + 1
    for rc in groups.values():
        _name_the_worst(rc, results)
    _attach_blocked(groups.values(), results)
    return sorted(groups.values(), key=order_key)


def _attach_blocked(causes: Iterable[RootCause], results: list[Any]) -> None:
    """Each inconclusive result that names the finding it rests on (``details.blocked_by``: a broken plain
    operation) goes under the root cause holding a finding of that requirement: decided once it is fixed."""
    by_requirement: dict[str, RootCause] = {}
    for rc in sorted(causes, key=order_key):
        for rid in rc.requirements:
            by_requirement.setdefault(rid, rc)
    for i, r in enumerate(results):
        details = _get(r, "details")
        finding = details.get("blocked_by") if isinstance(details, dict) else None
        if _get(r, "status") == "inconclusive" and finding in by_requirement:
            rc = by_requirement[finding]
            rc.blocked.append(i)
            req = str(_get(r, "requirement") or "?")
            rc._blocked_counts[req] = rc._blocked_counts.get(req, 0) + 1


def precedence(rc: RootCause) -> int:
    """Where a root cause's family goes in the list, before its status (PRECEDENCE_BY_AREA; 0 by default); within
    a family that has a precedence, a finding other verdicts rest on (``blocked``: a broken baseline) first."""
    req = REQUIREMENTS.get(rc.rule.requirement)
    family = PRECEDENCE_BY_AREA.get(req.area, 0) if req is not None else 0
    return family - 1 if family and rc.blocked else family


def order_key(rc: RootCause) -> tuple[int, int, int, int, str]:
    """The one place the order of the root causes is decided: the worst status, then precedence (the catalog's
    plain semantics first: a wrong status code of a plain operation does not outrank a broken MUST elsewhere,
    and the retry checks a broken plain operation would mislead are inconclusive, not failed), the most findings,
    the most requirements, then the rule's id (a stable order)."""
    return (_STATUS_RANK[rc.status], precedence(rc), -len(rc.findings), -len(rc.requirements), rc.rule.id)


def _name_the_worst(rc: RootCause, results: list[Any]) -> None:
    """The requirement and level a root cause is shown with: those of its findings with its (worst) status - the
    rule's own requirement when it has one of them - so that the status and the level agree (a fail is a MUST, a
    deviation a SHOULD or MAY)."""
    if rc.rule is CHECK_CRASHED:
        return
    worst = [results[i] for i in rc.findings if _get(results[i], "status") == rc.status]
    ids = [str(_get(r, "requirement") or "?") for r in worst]
    rc.requirement = rc.rule.requirement if rc.rule.requirement in ids else (ids[0] if ids else "")
    rc.finding = next((seen for r in worst if str(_get(r, "requirement")) == rc.requirement
                       and (seen := seen_of(r))), "")
    if rc.status == "fail":
        rc.level = "MUST"
    elif rc.status == "deviation":
        levels = [str(_get(r, "level") or "") or _registry_level(str(_get(r, "requirement")))
                  for r in worst if str(_get(r, "requirement")) == rc.requirement]
        rc.level = next((lv for lv in levels if lv in ("SHOULD", "MAY")), "SHOULD")


SEEN_LIMIT = 200      # characters of a finding a root-cause line shows


def seen_of(result: Any) -> str:
    """What a finding saw, in one short line: its message's ``happened:`` (the checks' `Run.broken`), else the
    message's first line; "" for a message that says nothing."""
    message = str(_get(result, "message") or "").split("\n\nexchanges:")[0]
    happened = _happened(message)
    lines = [x for x in message.strip().splitlines() if x.strip()]
    # a first line that announces a list ("responses do not conform:") with the list's first item
    text = happened[len("happened:"):] if happened else " ".join(lines[:2] if lines and lines[0].endswith(":")
                                                                 else lines[:1])
    text = " ".join(text.split()).rstrip(".")
    if re.match(r"(it|its|they)\b", text.strip(), re.I):     # "it shows None": what "it" is, from the expectation
        expected = next((x[len("expected:"):].strip() for x in lines if x.startswith("expected:")), "")
        if expected:
            text = f"expected {expected}, but {text.strip()}"
    return text if len(text) <= SEEN_LIMIT else text[:SEEN_LIMIT - 3].rstrip() + "..."


def _registry_level(rid: str) -> str:
    req = REQUIREMENTS.get(rid)
    return req.level.value if req is not None else ""


def _where(result: Any) -> str | None:
    """A finding's endpoint, with the variant of the operation it concerns where it concerns one only."""
    ep = _get(result, "endpoint")
    if not ep:
        return None
    variant = _get(result, "variant")
    return f"{ep} ({variant})" if variant else str(ep)


def _get(result: Any, name: str) -> Any:
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


def _happened(message: str) -> str:
    for line in message.split("\n\nexchanges:")[0].splitlines():
        if line.startswith("happened:"):
            return line
    return ""
