"""Write a run's conformance.json and conformance.html: the record once, and the page rendered from it.

The record is ``RunReport.to_dict()`` (the one object every page renders: conformance.html, JUnit, the matrix of
``ctk report``). Before it is written, the record of the previous run in the same directory (its
conformance.json, where one is there) gives ``changes``: what moved since that run, which the page shows first.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ctk.reporting.html import render_conformance
from ctk.reporting.model import FORMAT, RunReport, as_record


def _write(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def previous_record(path: str) -> dict[str, Any] | None:
    """The record at ``path`` (an earlier run's conformance.json), or None (none, unreadable, another format)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def changes_since(previous: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """What changed from ``previous`` to ``record``: each requirement whose verdict moved (before, after), and
    the run that was before. Only requirements both runs judged, or that one of them judged, are compared."""
    before = previous.get("requirements") or {}
    after = record.get("requirements") or {}
    moved = []
    for rid in list(after) + [r for r in before if r not in after]:
        a = (before.get(rid) or {}).get("status")
        b = (after.get(rid) or {}).get("status")
        if a != b:
            moved.append({"requirement": rid, "before": a, "after": b})
    return {"previous": {"catalog": (previous.get("catalog") or {}).get("name"),
                         "started_at": previous.get("started_at"), "kit_version": previous.get("kit_version"),
                         "overall": previous.get("overall"),
                         "spec_sha256": (previous.get("spec") or {}).get("sha256")},
            "requirements": moved}


def write_conformance(report: RunReport | dict[str, Any], out_dir: str = "reports") -> dict[str, str]:
    """Write ``out_dir/conformance.json`` and ``out_dir/conformance.html`` from the run's record (a RunReport
    makes it once); returns {"json": path, "html": path}.

    The directory is created if needed; each file is written to a temporary name and renamed, so a reader
    never sees half a report.
    """
    os.makedirs(out_dir, exist_ok=True)
    paths = {"json": os.path.join(out_dir, "conformance.json"), "html": os.path.join(out_dir, "conformance.html")}
    record = as_record(report)
    previous = previous_record(paths["json"])
    if previous is not None and "changes" not in record:
        record["changes"] = changes_since(previous, record)
    if isinstance(report, RunReport):
        report.changes = record.get("changes")
    # compact: a run can hold thousands of exchanges
    _write(paths["json"], json.dumps(record, default=str, separators=(",", ":")) + "\n")
    _write(paths["html"], render_conformance(record))
    return paths
