"""Write a run's conformance.json and conformance.html."""

from __future__ import annotations

import os

from ctk.reporting.html import render_conformance
from ctk.reporting.model import RunReport


def _write(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_conformance(report: RunReport, out_dir: str = "reports") -> dict[str, str]:
    """Write ``out_dir/conformance.json`` and ``out_dir/conformance.html``; returns {"json": path, "html": path}.

    The directory is created if needed; each file is written to a temporary name and renamed, so a reader
    never sees half a report.
    """
    os.makedirs(out_dir, exist_ok=True)
    paths = {"json": os.path.join(out_dir, "conformance.json"), "html": os.path.join(out_dir, "conformance.html")}
    _write(paths["json"], report.to_json(indent=None) + "\n")   # compact: a run can hold thousands of exchanges
    _write(paths["html"], render_conformance(report))
    return paths
