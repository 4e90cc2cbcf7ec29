"""`ctk report A.json B.json ... [-o reports/compare.html]`: several runs' conformance.json side by side.

Rows are the requirements (registry order, then any other ids found) and the endpoint × behaviour matrix
cells; columns are the runs, labelled by target name (else URL, else file name; made unique). Rows whose
verdicts differ between runs are marked.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ctk.core.behaviours import column_order
from ctk.core.requirements import REQUIREMENTS
from ctk.reporting.behaviour import behaviour_profile
from ctk.reporting.behaviour import compare_section as compare_behaviour
from ctk.reporting.html import OVERALL_TEXT, esc, legend, page, status_cell
from ctk.reporting.model import RunReport


class CompareError(Exception):
    """A run could not be loaded; the message says which file and why."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="CONFORMANCE_JSON",
                        help="conformance.json files written by `ctk run` (two or more to compare)")
    parser.add_argument("-o", "--output", default=os.path.join("reports", "compare.html"),
                        help="HTML file to write (default: reports/compare.html)")


def run(args: argparse.Namespace) -> int:
    if len(args.runs) < 2:
        print(f"ctk report: give two or more conformance.json files to compare (got {len(args.runs)}); "
              "one run's report is its own conformance.html", file=sys.stderr)
        return 2
    try:
        runs = load_runs(args.runs)
    except CompareError as exc:
        print(f"ctk report: {exc}", file=sys.stderr)
        return 2
    out = write_compare(runs, args.output)
    print(out)
    return 0


def load_runs(paths: list[str]) -> list[tuple[str, RunReport]]:
    """Load each file as a RunReport; returns (column label, report) pairs. Raises CompareError."""
    loaded: list[tuple[str, RunReport]] = []
    for path in paths:
        if not os.path.isfile(path):
            raise CompareError(f"{path}: no such file")
        try:
            with open(path, encoding="utf-8") as f:
                rep = RunReport.from_json(f.read())
        except (OSError, UnicodeDecodeError) as exc:
            raise CompareError(f"{path}: cannot read ({exc})") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise CompareError(f"{path}: {exc}") from None
        loaded.append((path, rep))
    base = [rep.target_name or rep.target_url or os.path.basename(path) for path, rep in loaded]
    labels: list[str] = []
    for (path, _), label in zip(loaded, base):
        if base.count(label) > 1:
            label = f"{label} ({path})"
        n, first = 2, label
        while label in labels:
            label, n = f"{first} #{n}", n + 1
        labels.append(label)
    return list(zip(labels, (rep for _, rep in loaded)))


def compare_rows(runs: list[tuple[str, RunReport]]) -> dict[str, Any]:
    """The comparison as data: {"requirements": [(id, [status...])], "matrix": [((ep, bh), [cell|None...])]}."""
    summaries = [rep.summary() for _, rep in runs]
    ids = list(REQUIREMENTS) + sorted({rid for s in summaries for rid in s} - set(REQUIREMENTS))
    reqs = [(rid, [s[rid].status if rid in s else None for s in summaries]) for rid in ids]
    matrices = [rep.matrix() for _, rep in runs]
    keys = {(ep, bh) for m in matrices for ep, cells in m.items() for bh in cells}
    order = {b: i for i, b in enumerate(column_order(bh for _, bh in keys))}   # the registry's column order
    keys_sorted = sorted(keys, key=lambda k: (k[0], order[k[1]]))
    cells = [((ep, bh), [m.get(ep, {}).get(bh) for m in matrices]) for ep, bh in keys_sorted]
    return {"requirements": reqs, "matrix": cells}


def render_compare(runs: list[tuple[str, RunReport]]) -> str:
    data = compare_rows(runs)
    head = "".join(f"<th>{esc(label)}</th>" for label, _ in runs)
    out = ["<header class=\"head\"><div><h1>Iceberg REST catalog conformance: comparison</h1>"
           f'<div class="meta">{len(runs)} runs · rows marked ≠ differ between runs</div></div></header>']

    out.append("<h2>Runs</h2><table><thead><tr><th>run</th><th>target URL</th><th>date</th><th>kit</th>"
               "<th>checks</th><th>overall</th></tr></thead><tbody>")
    for label, rep in runs:
        ov = rep.overall()
        out.append(f"<tr><td><b>{esc(label)}</b></td><td><code>{esc(rep.target_url)}</code></td>"
                   f"<td>{esc(rep.started_at)}</td><td>{esc(rep.kit_version)}</td><td>{len(rep.results)}</td>"
                   f"{status_cell(ov, title=OVERALL_TEXT[ov])}</tr>")
    out.append("</tbody></table>")

    out.append(f"<h2>Requirements</h2><table class=\"cmp\"><thead><tr><th>id</th><th>level</th>"
               f"<th>statement</th><th></th>{head}</tr></thead><tbody>")
    for rid, statuses in data["requirements"]:
        req = REQUIREMENTS.get(rid)
        differs = len(set(statuses)) > 1
        out.append(f"<tr><td class=\"id\"><b>{esc(rid)}</b></td><td>{esc(req.level.value if req else '')}</td>"
                   f"<td class=\"small\">{esc(req.statement if req else '')}</td>"
                   f"<td>{'≠' if differs else ''}</td>"
                   + "".join(status_cell(s) for s in statuses) + "</tr>")
    out.append("</tbody></table>")

    out.append(compare_behaviour([(label, behaviour_profile(rep.results)) for label, rep in runs]))

    out.append(f"<h2>Endpoint × behaviour</h2>")
    if data["matrix"]:
        out.append(f"<table class=\"cmp matrix\"><thead><tr><th>endpoint</th><th>behaviour</th><th></th>{head}"
                   "</tr></thead><tbody>")
        for (ep, bh), cells in data["matrix"]:
            sig = {(c["status"], tuple(c["classifications"])) if c else None for c in cells}
            tds = []
            for c in cells:
                if c is None:
                    tds.append('<td class="s-none">—</td>')
                else:
                    inner = "".join(f'<span class="cls">{esc(x)}</span>' for x in c["classifications"])
                    tds.append(status_cell(c["status"], inner))
            out.append(f"<tr><th class=\"row\">{esc(ep)}</th><td>{esc(bh)}</td><td>{'≠' if len(sig) > 1 else ''}</td>"
                       + "".join(tds) + "</tr>")
        out.append("</tbody></table>")
    else:
        out.append('<p class="small">No run reported endpoint × behaviour cells.</p>')
    out.append(legend())
    return page("CTK conformance comparison", "\n".join(out))


def write_compare(runs: list[tuple[str, RunReport]], output: str) -> str:
    d = os.path.dirname(output)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(output, "w", encoding="utf-8") as f:
        f.write(render_compare(runs))
    return output

