"""`ctk report RUN.json [RUN.json ...] -o DIR`: the compatibility matrix of several runs (catalogs), rendered from
their records (conformance.json) alone: DIR/matrix.html and the same as DIR/matrix.md for a README.

Columns are the catalogs (name, version, kit version, spec hash, date, certified or not); rows are the
requirements grouped by area, each cell the verdict in the pages' words with a link to its evidence (the run's
conformance.html: the first finding of it, else the requirement's row); known gaps with their reasons and the
capabilities of each catalog follow. Rows whose verdicts differ between catalogs are marked.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ctk.reporting.behaviour import compare_section as compare_behaviour
from ctk.reporting.html import (esc, finding_anchors, kind_class, kind_text, legend, level_text, page,
                                requirement_anchor, status_class)
from ctk.reporting.model import FORMAT


class CompareError(Exception):
    """A run could not be loaded; the message says which file and why."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="CONFORMANCE_JSON",
                        help="conformance.json files written by `ctk run`, one per catalog (a column each)")
    parser.add_argument("-o", "--output", default="reports",
                        help="directory to write matrix.html and matrix.md into (default: reports/)")


def run(args: argparse.Namespace) -> int:
    try:
        runs = load_runs(args.runs)
    except CompareError as exc:
        print(f"ctk report: {exc}", file=sys.stderr)
        return 2
    for path in write_matrix(runs, args.output):
        print(path)
    return 0


def load_runs(paths: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """(column label, path, record) per file. Raises CompareError naming the file."""
    loaded: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        if not os.path.isfile(path):
            raise CompareError(f"{path}: no such file")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, UnicodeDecodeError) as exc:
            raise CompareError(f"{path}: cannot read ({exc})") from None
        except ValueError as exc:
            raise CompareError(f"{path}: not a ctk conformance report (invalid JSON: {exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise CompareError(f"{path}: not a ctk conformance report (expected format {FORMAT!r}, found {found!r})")
        loaded.append((path, data))
    base = [_name(rec) or os.path.basename(path) for path, rec in loaded]
    labels: list[str] = []
    for (path, _), label in zip(loaded, base):
        if base.count(label) > 1:
            label = f"{label} ({path})"
        n, first = 2, label
        while label in labels:
            label, n = f"{first} #{n}", n + 1
        labels.append(label)
    return [(label, path, rec) for label, (path, rec) in zip(labels, loaded)]


def _name(rec: dict[str, Any]) -> str | None:
    return (rec.get("catalog") or {}).get("name") or (rec.get("target") or {}).get("name") or \
        (rec.get("target") or {}).get("url")


def certified_text(rec: dict[str, Any]) -> str:
    c = rec.get("certification")
    if not isinstance(c, dict) or not c.get("requested"):
        return "not certified (not a certified run)"
    if c.get("certified"):
        return "certified"
    return "not certified: " + "; ".join(map(str, c.get("why_not") or [])) if c.get("why_not") else "not certified"


def _gaps_by_requirement(rec: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """requirement id -> the known-gap entries of the run's file that name it (or a check of it)."""
    out: dict[str, list[dict[str, Any]]] = {}
    entries = (rec.get("known_gaps") or {}).get("entries") or []
    results = rec.get("results") or []
    for e in entries:
        reqs = {e["requirement"]} if e.get("requirement") else {
            r["requirement"] for r in results if e.get("check") and str(e["check"]) in str(r.get("nodeid") or "")}
        for rid in reqs:
            out.setdefault(rid, []).append(e)
    return out


def matrix_rows(runs: list[tuple[str, str, dict[str, Any]]], out_dir: str) -> list[tuple[str, list[Any]]]:
    """[(area, [(id, level, statement, [cell per run])])]; a cell: {kind, status, href, gap}."""
    ids: list[str] = []
    meta: dict[str, dict[str, Any]] = {}
    for _, _, rec in runs:
        for rid, s in (rec.get("requirements") or {}).items():
            if rid not in meta:
                ids.append(rid)
                meta[rid] = s
    per_run = []
    for _, path, rec in runs:
        anchors = finding_anchors(rec)
        first: dict[str, str] = {}
        for i, a in anchors.items():
            first.setdefault(rec["results"][i]["requirement"], a)
        html = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(path)), "conformance.html"),
                               os.path.abspath(out_dir))
        per_run.append((rec.get("requirements") or {}, first, html, _gaps_by_requirement(rec)))
    areas: dict[str, list[Any]] = {}
    for rid in ids:
        cells = []
        for reqs, first, html, gaps in per_run:
            s = reqs.get(rid) or {}
            known = [g for g in gaps.get(rid, []) if g.get("state") == "known"]
            cells.append({"kind": s.get("kind", s.get("status")), "status": s.get("status"),
                          "href": f"{html}#{first.get(rid) or requirement_anchor(rid)}",
                          "gap": "; ".join(str(g.get("reason") or "") for g in known) or None})
        m = meta[rid]
        areas.setdefault(str(m.get("area") or "other"), []).append(
            (rid, m.get("level"), m.get("statement") or "", cells))
    return list(areas.items())


def _head_rows(runs: list[tuple[str, str, dict[str, Any]]]) -> list[tuple[str, list[str]]]:
    rows = [("catalog", [label for label, _, _ in runs]),
            ("version", [str((rec.get("catalog") or {}).get("version") or "—") for _, _, rec in runs]),
            ("kit", [str((rec.get("kit") or {}).get("version") or rec.get("kit_version") or "") for _, _, rec in runs]),
            ("OpenAPI sha256", [str((rec.get("spec") or {}).get("sha256") or "—")[:12] for _, _, rec in runs]),
            ("date", [str(rec.get("started_at") or "")[:10] for _, _, rec in runs]),
            ("certified", [certified_text(rec) for _, _, rec in runs])]
    return rows


def render_matrix(runs: list[tuple[str, str, dict[str, Any]]], out_dir: str) -> str:
    out = ["<header class=\"head\"><div><h1>Iceberg REST catalog compatibility matrix</h1>"
           f'<div class="meta">{len(runs)} catalogs · each cell links to its evidence · rows marked ≠ differ'
           "</div></div></header>", '<table class="cmp" id="catalog-matrix"><thead>']
    for name, values in _head_rows(runs):
        out.append(f'<tr class="head-{esc(name.split()[0].lower())}"><th colspan="3">{esc(name)}</th><th></th>'
                   + "".join(f"<th>{esc(v)}</th>" for v in values) + "</tr>")
    out.append("</thead><tbody>")
    for area, rows in matrix_rows(runs, out_dir):
        out.append(f'<tr class="area"><th colspan="{4 + len(runs)}">{esc(area)}</th></tr>')
        for rid, level, statement, cells in rows:
            differs = len({c["kind"] for c in cells}) > 1
            tds = []
            for c in cells:
                gap = f'<span class="cls small">known gap: {esc(c["gap"])}</span>' if c["gap"] else ""
                tds.append(f'<td class="s {status_class(c["status"])} {kind_class(c["kind"], c["status"])}">'
                           f'<a href="{esc(c["href"])}">{esc(kind_text(c["kind"], c["status"]))}</a>{gap}</td>')
            out.append(f'<tr data-requirement="{esc(rid)}"><td class="id"><b>{esc(rid)}</b></td>'
                       f"<td>{esc(level_text(level))}</td><td class=\"small\">{esc(statement)}</td>"
                       f"<td>{'≠' if differs else ''}</td>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    out.append(_known_gaps_html(runs))
    out.append(_capabilities_html(runs))
    out.append(compare_behaviour([(label, rec.get("behaviour_profile") or {}) for label, _, rec in runs]))
    out.append(legend())
    return page("CTK compatibility matrix", "\n".join(out))


def _capabilities(runs: list[tuple[str, str, dict[str, Any]]]) -> tuple[list[str], list[list[str]]]:
    names: list[str] = []
    for _, _, rec in runs:
        for n in ((rec.get("catalog_capabilities") or {}).get("capabilities") or {}):
            if n not in names:
                names.append(n)
    table = []
    for n in names:
        row = []
        for _, _, rec in runs:
            v = ((rec.get("catalog_capabilities") or {}).get("capabilities") or {}).get(n)
            row.append("—" if not v else f"{ {True: 'yes', False: 'no'}.get(v.get('supported'), 'unknown')} "
                                         f"({v.get('source')})")
        table.append(row)
    return names, table


def _capabilities_html(runs: list[tuple[str, str, dict[str, Any]]]) -> str:
    names, table = _capabilities(runs)
    if not names:
        return ""
    head = "".join(f"<th>{esc(label)}</th>" for label, _, _ in runs)
    rows = "".join(f"<tr><td>{esc(n)}</td>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>"
                   for n, row in zip(names, table))
    return (f'<h2 id="capabilities">Capabilities per catalog</h2><table><thead><tr><th>capability</th>{head}</tr>'
            f"</thead><tbody>{rows}</tbody></table>")


def _known_gaps_html(runs: list[tuple[str, str, dict[str, Any]]]) -> str:
    parts = []
    for label, _, rec in runs:
        entries = (rec.get("known_gaps") or {}).get("entries") or []
        if entries:
            parts.append(f"<h3>{esc(label)}</h3><ul>" + "".join(
                f"<li><b>{esc(e.get('check') or e.get('requirement'))}</b> {esc(e.get('endpoint') or '')}: "
                f"{esc(e.get('reason') or '')} <span class=\"small\">({esc(e.get('state'))})</span></li>"
                for e in entries) + "</ul>")
    return '<h2 id="known-gaps">Known gaps</h2>' + ("".join(parts) or "<p>No catalog keeps a known-gaps file.</p>")


def render_markdown(runs: list[tuple[str, str, dict[str, Any]]], out_dir: str) -> str:
    """The same matrix as Markdown, for a README."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["# Iceberg REST catalog compatibility matrix", ""]
    heads = _head_rows(runs)
    lines.append("| | " + " | ".join(cell(v) for v in heads[0][1]) + " |")
    lines.append("|---|" + "---|" * len(runs))
    for name, values in heads[1:]:
        lines.append(f"| {name} | " + " | ".join(cell(v) for v in values) + " |")
    for area, rows in matrix_rows(runs, out_dir):
        lines += ["", f"## {area}", "", "| requirement | level | " + " | ".join(cell(label) for label, _, _ in runs)
                  + " |", "|---|---|" + "---|" * len(runs)]
        for rid, level, _statement, cells in rows:
            shown = [f"[{kind_text(c['kind'], c['status'])}]({c['href']})" + (f" (known gap: {cell(c['gap'])})"
                                                                             if c["gap"] else "") for c in cells]
            lines.append(f"| {rid} | {level_text(level)} | " + " | ".join(shown) + " |")
    names, table = _capabilities(runs)
    if names:
        lines += ["", "## Capabilities per catalog", "", "| capability | " + " | ".join(
            cell(label) for label, _, _ in runs) + " |", "|---|" + "---|" * len(runs)]
        lines += [f"| {n} | " + " | ".join(cell(v) for v in row) + " |" for n, row in zip(names, table)]
    gaps = [(label, e) for label, _, rec in runs for e in (rec.get("known_gaps") or {}).get("entries") or []]
    if gaps:
        lines += ["", "## Known gaps", ""]
        lines += [f"- {cell(label)}: **{e.get('check') or e.get('requirement')}** {e.get('endpoint') or ''}: "
                  f"{cell(str(e.get('reason') or ''))} ({e.get('state')})" for label, e in gaps]
    return "\n".join(lines) + "\n"


def write_matrix(runs: list[tuple[str, str, dict[str, Any]]], out_dir: str) -> list[str]:
    """Write ``out_dir/matrix.html`` and ``out_dir/matrix.md``; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, text in (("matrix.html", render_matrix(runs, out_dir)), ("matrix.md", render_markdown(runs, out_dir))):
        path = os.path.join(out_dir, name)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        paths.append(path)
    return paths
