"""The one grading rule of the catalog-semantics checks: each kind of behaviour a plain operation shows maps to one
status and one level, here and nowhere else (`GRADES`). Every semantic check judges through `grade` (SemRun.judge
and its shorthands `broken`, `status_broken`, `lenient`, `server_error`); tests/oddserver/test_semantics_grading.py
holds parallel checks (tables, views, namespaces) to the same grade for the same kind.

The kinds, and why each is graded as it is:

* ``REFUSED`` - refused as documented, nothing changed: pass.
* ``DONE`` - acknowledged and done: pass.
* ``WRONG_STATUS`` - the effect is right (done, or nothing changed) but the status or error type is not the one
  documented: the documents' level (the spec, else Iceberg's compatibility kit): no client loses data.
* ``LENIENT`` - acknowledged and done, with a lenient extra effect where the documents say refuse (a create in a
  missing namespace that creates the namespace too; a drop of a namespace that is not empty): the documents'
  level - nothing acknowledged went missing, nothing refused took effect.
* ``NOT_DONE`` - acknowledged and not done, or answered with the old object (a second create answered 200 with
  the existing table or view, the new schema or SQL dropped): the requirement's level - the kit's MUST where a
  client told "done" reads otherwise.
* ``REFUSED_CHANGED`` - refused, yet something changed: the requirement's level - the kit's MUST where a client
  told "failed" keeps a state that is gone.
* ``SERVER_ERROR`` - a valid request answered 5xx on every try: the documents' level (the spec documents no 5xx
  for a valid request; Iceberg's kit fails the test): a finding, never "inconclusive".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from ctk.core.requirements import Level, active_profile, get
from ctk.core.verdicts import Status, Verdict
from ctk.checks.common import Run
from ctk.checks.judging import annotate


class Kind(Enum):
    REFUSED = "refused, nothing changed"
    DONE = "acknowledged and done"
    WRONG_STATUS = "the effect held, the status or error type is not the documented one"
    LENIENT = "acknowledged and done, with a lenient extra effect"
    NOT_DONE = "acknowledged and not done, or answered with the old object"
    REFUSED_CHANGED = "refused, yet something changed"
    SERVER_ERROR = "a valid request answered 5xx on every try"


PASS, DOCUMENTS, REQUIREMENT = "pass", "documents", "requirement"


@dataclass(frozen=True)
class Grade:
    level: str                      # PASS, DOCUMENTS (the spec's, else the compatibility kit's) or REQUIREMENT
    classification: str | None      # what the report's behaviour profile calls it
    why: str                        # what ``judged_at`` says of a documents-level verdict


GRADES: dict[Kind, Grade] = {
    Kind.REFUSED: Grade(PASS, None, ""),
    Kind.DONE: Grade(PASS, None, ""),
    Kind.WRONG_STATUS: Grade(DOCUMENTS, "wrong status", "status only: the effect held"),
    Kind.LENIENT: Grade(DOCUMENTS, "lenient", "lenient: nothing acknowledged went missing, nothing refused took "
                                              "effect"),
    Kind.NOT_DONE: Grade(REQUIREMENT, None, ""),
    Kind.REFUSED_CHANGED: Grade(REQUIREMENT, None, ""),
    Kind.SERVER_ERROR: Grade(DOCUMENTS, "server error", "a valid request answered 5xx on every try"),
}

SERVER_ERROR_TRIES = 3      # a valid request answered 5xx is sent this many times in all before it is a finding


def grade(run: Run, kind: Kind, expected: str, happened: str, classification: str | None = None,
          details: dict | None = None) -> Verdict:
    """The verdict of ``kind`` (GRADES): a pass saying ``happened``, or the broken rule judged at the kind's
    level. ``classification`` names a documents-level finding more closely than the kind's own."""
    g = GRADES[kind]
    details = {**(details or {}), "kind": kind.name}
    if g.level == PASS:
        return run.ok(happened, details=details)
    v = annotate(Run.broken(run, expected, happened, classification or g.classification, details))
    if g.level == DOCUMENTS:
        req = get(run.requirement)
        doc = req.saying("spec") or req.saying("rck")
        if v.status is Status.FAIL and doc is not None and doc.effective is not Level.MUST:
            v.status = Status.DEVIATION
            # the documents' level holds under either profile (the design document speaks of keys, not of this)
            under = {p: ("deviation" if s == "fail" else s) for p, s in (v.details.get("profiles") or {}).items()}
            v.details = {**v.details, "profiles": under,
                         "judged_at": f"{doc.effective.value} ({g.why}; {active_profile()} profile)"}
    return v
