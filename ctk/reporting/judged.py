"""How a run was judged and run, said the same way in the verdict block's first line, conformance.html,
conformance.json (`options`) and JUnit (suite properties): the judging profile (--ctk-profile), what makes the
exit code 1 (--ctk-fail-on), --ctk-strict, the workers, and whether the Spark checks ran and on which master.
A design-profile or `--ctk-fail-on ci` run must not read like a default one.

And why a requirement without a result was NOT RUN."""

from __future__ import annotations

from typing import Any

#: the keys of a report's `options` that say how the run was judged and run, in the order they are said
KEYS = ("profile", "fail_on", "strict", "workers", "spark", "spark_master")


def judged_parts(options: Any) -> list[tuple[str, str]]:
    """(key, text) for each of KEYS; [] for a report that does not record them (one of an older kit)."""
    if not isinstance(options, dict) or "profile" not in options:
        return []
    fail_on = options.get("fail_on") or []
    workers = options.get("workers") or 0
    return [
        ("profile", f"--ctk-profile {options.get('profile')}"),
        ("fail_on", "--ctk-fail-on " + (",".join(map(str, fail_on)) if fail_on else "none")),
        ("strict", "--ctk-strict" if options.get("strict") else "not strict"),
        ("workers", f"{workers} workers" if workers else "one process"),
        ("spark", f"Spark on {options.get('spark_master')}" if options.get("spark") else "no Spark checks"),
    ]


def judged_by(options: Any) -> str:
    """One line: "--ctk-profile spec, --ctk-fail-on none, not strict, 3 workers, no Spark checks"."""
    return ", ".join(text for _, text in judged_parts(options))


def not_run_reason(requirement: str, options: Any, state: str, selection: dict[str, Any]) -> str:
    """Why no check of `requirement` has a result in a run with these options, state and selection."""
    if state == "unusable-target":
        return "the target was unusable: no check ran"
    if state == "interrupted":
        return "the run was interrupted before a check of it ran"
    if requirement.startswith("SPARK-") and isinstance(options, dict) and not options.get("spark"):
        return "the Spark pipeline checks run only with --ctk-spark"
    if selection:
        return "not in this subset run's selection"
    return "no check of it ran in this run"
