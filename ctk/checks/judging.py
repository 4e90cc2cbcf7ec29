"""Judging a broken rule by the active profile (``--ctk-profile``; ctk.core.requirements).

`broken(run, expected, happened, classification, details)` is what the checks call when the rule a requirement
states did not hold: a fail under a MUST, a deviation under a SHOULD, and - where the profile's sources do not
state the rule (CLASSIFIED) - a pass that carries the behaviour's classification, says so, and names the other
profile's verdict. Every such verdict's details say what each profile makes of it (``profiles``) and the
sentence the active one rests on (``rests_on``); the reports use them to note where the other profile differs.
"""

from __future__ import annotations

from ctk.core.requirements import PROFILES, active_profile, get, other_profile, status_if_broken
from ctk.core.verdicts import Status, Verdict
from ctk.checks.common import Run


def annotate(verdict: Verdict) -> Verdict:
    """Set a broken rule's verdict to the active profile's status and record what each profile makes of it."""
    req = get(verdict.requirement)
    profile = active_profile()
    under = {p: status_if_broken(verdict.requirement, p) for p in PROFILES}
    verdict.details = {**(verdict.details or {}), "rule_broken": True, "profiles": under,
                       "rests_on": req.rests_on(profile)}
    verdict.status = Status(under[profile])
    if verdict.status is Status.PASS:
        verdict.message = verdict.message.split(": ", 1)[1] if verdict.message.startswith("classified, not judged") \
            else verdict.message
        other = other_profile(profile)
        verdict.message = (f"classified, not judged under the {profile} profile ({req.rests_on(profile)}); under "
                           f"the {other} profile: {under[other]}\n{verdict.message}")
    return verdict


def broken(run: Run, expected: str, happened: str, classification: str | None = None,
           details: dict | None = None) -> Verdict:
    """`run.broken(...)` (ctk.checks.common.Run) judged by the active profile."""
    return annotate(run.broken(expected, happened, classification, details))
