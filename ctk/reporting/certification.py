"""A certified run (``--ctk-certify``, docs/known-gaps.md): whether a run qualifies, and what it certifies.

A run qualifies when it is the whole kit (no -k, no --ctk-requirement, no paths; not interrupted), with no known
gaps (a --ctk-known-gaps file with entries), no declared capabilities (the kit takes what /v1/config and its probes
show), every MUST this setup can decide decided, and no finding (no fail, error, deviation or inconclusive: the
run passes --ctk-fail-on ci). The record names the kit version, the OpenAPI document's version and sha256, the
target and the date; conformance.json ``certification``, junit.xml ``ctk.certification.*``, the verdict block and
conformance.html show it.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ctk import __version__
from ctk.core.yamlfile import load_yaml

BLOCKING_KINDS = ("fail", "error", "deviation", "inconclusive")


def spec_identity(path: str | None) -> tuple[str | None, str | None]:
    """(info.version, sha256 of the file) of the OpenAPI document the run judged by (``--openapi-spec``, else the
    kit's); (None, None) where it cannot be read."""
    from ctk.openapi import SpecError, default_spec_path

    try:
        p = Path(path) if path else default_spec_path()
        raw = p.read_bytes()
    except (OSError, SpecError):
        return None, None
    try:
        doc = load_yaml(raw.decode("utf-8", errors="replace"))
        version = str(((doc or {}).get("info") or {}).get("version")) if isinstance(doc, dict) else None
    except Exception:  # noqa: BLE001 - the hash still identifies it
        version = None
    return version, hashlib.sha256(raw).hexdigest()


def why_not(report: Any, known_gap_entries: int, declared: dict[str, bool]) -> list[str]:
    """The conditions of a certified run this run fails, each in a sentence; [] when it qualifies."""
    out: list[str] = []
    if report.state != "complete":
        out.append(f"the run is {report.state}: a certified run is a whole run")
    if report.selection:
        shown = ", ".join(f"{k}={v}" for k, v in report.selection.items())
        out.append(f"a subset run ({shown}): a certified run is the whole kit (no -k, no --ctk-requirement, "
                   "no paths)")
    if known_gap_entries:
        out.append(f"the known-gaps file lists {known_gap_entries} gap(s): a certified run has none")
    if declared:
        out.append("capabilities declared (" + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in declared.items())
                   + "): a certified run takes what /v1/config and the probes show")
    undecided = report.undecided_musts()
    if undecided:
        out.append("MUSTs left undecided that this setup can decide: " + ", ".join(undecided))
    kinds = report.kind_counts()
    found = {k: kinds.get(k, 0) for k in BLOCKING_KINDS if kinds.get(k, 0)}
    if found:
        out.append("findings: " + ", ".join(f"{n} {k}" for k, n in found.items())
                   + ": a certified run has none (it passes --ctk-fail-on ci)")
    if not report.results:
        out.append("no check ran")
    return out


def certification(report: Any, requested: bool, known_gap_entries: int, declared: dict[str, bool],
                  spec_path: str | None) -> dict[str, Any]:
    """conformance.json's ``certification``: certified only when requested and nothing in ``why_not``."""
    version, digest = spec_identity(spec_path)
    reasons = why_not(report, known_gap_entries, declared)
    return {"requested": bool(requested), "certified": bool(requested) and not reasons, "why_not": reasons,
            "kit_version": __version__, "spec_version": version, "spec_sha256": digest,
            "target": report.target_url, "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def line(cert: dict[str, Any]) -> str:
    """The verdict block's line: "certified run: ..." or "NOT certified: ..."."""
    what = (f"ctk {cert.get('kit_version')}, OpenAPI {cert.get('spec_version')} (sha256 "
            f"{str(cert.get('spec_sha256'))[:12]}), target {cert.get('target')}, {cert.get('date')}")
    if cert.get("certified"):
        return f"certified run: {what}"
    return f"NOT a certified run ({what}): " + "; ".join(cert.get("why_not") or ["not requested"])
