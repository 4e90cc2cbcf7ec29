"""conformance.html: one self-contained page (inline CSS, no scripts, no external assets).

Every value that reaches the page goes through ``esc`` (html.escape); exchanges are rendered with
``ctk.core.exchange.render_exchanges`` (which redacts) and scrubbed once more for tokens and URL userinfo.
Colour is never the only signal: every coloured cell also carries its status as text.
"""

from __future__ import annotations

from pathlib import Path

import html as _html
import json
from typing import Any, Iterable

from ctk.core.behaviours import column_order, display_name
from ctk.reporting.behaviour import STYLE as BP_STYLE
from ctk.reporting.behaviour import render_section as render_behaviour
from ctk.reporting.gaps_html import section as gaps_section
from ctk.reporting.capabilities import html as render_capabilities
from ctk.core.exchange import render_exchanges
from ctk.reporting.judged import judged_by
from ctk.reporting.model import MUST_UNDECIDED, STATUS_ORDER, RunReport, as_record, redact_url, scrub_text


STATUS_TEXT = {
    "error": "ERROR",
    "pass": "PASS",
    "fail": "FAIL",
    "deviation": "DEVIATION",
    "unsupported": "NOT APPLICABLE",
    "inconclusive": "INCONCLUSIVE",
    None: "NOT RUN",
}

STATUS_MEANING = {
    "error": "the check crashed (exception below): the requirement went unjudged and the run failed",
    "pass": "the requirement held in every check that applied",
    "fail": "a MUST requirement is broken (evidence below)",
    "deviation": "a SHOULD or MAY requirement is not met (evidence below)",
    "inconclusive": "a check ran but could not decide (e.g. timing); not counted as a pass",
    "unsupported": "the target lacks a capability the check assumes; no evidence either way",
    None: "no check of this requirement ran",
}

OVERALL_TEXT = {
    "error": "ERROR: a check crashed, so the run did not judge every requirement",
    "fail": "FAIL: at least one MUST requirement is broken",
    "deviation": "DEVIATIONS: no MUST failed, but SHOULD/MAY requirements are not met",
    "inconclusive": "INCONCLUSIVE: nothing failed, but some checks could not decide",
    "pass": "PASS: every check that applied passed",
    "unsupported": "NOT APPLICABLE: no check applied to this target",
    None: "NO RESULTS: no check ran",
}

KIND_TEXT = {"classified": "CLASSIFIED (PASS)", "not-applicable": "NOT APPLICABLE",
             "needs": "NOT DECIDED BY THIS SETUP"}
#: the header's counts of checks: the kinds in the terminal's order and words (ctk.plugin.reports.final_lines), so
#: that no result is counted under two names (an unsupported one is either not applicable or not decided)
CHECK_KINDS = ("pass", "classified", "fail", "deviation", "error", "inconclusive", "needs", "not-applicable")
KIND_CLASS = {"classified": "k-classified", "not-applicable": "k-na", "needs": "k-needs"}
KIND_MEANING = {
    "classified": "a pass that records a behaviour the sources of the judging profile leave open (e.g. an "
                  "in-flight 409 without subtype under the merged spec); the behaviour profile names it, and "
                  "--ctk-profile design judges it",
    "not-applicable": "UNSUPPORTED without a need: the check does not apply (the catalog does not offer the "
                      "operation, does not advertise idempotency, the operation has no body)",
    "needs": "UNSUPPORTED or INCONCLUSIVE because this setup cannot observe the outcome; the result names what "
             "would decide it (--ctk-db-link, --ctk-max-wait N, the reference control API, Spark)",
}

CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Helvetica,Arial,sans-serif;color:#1f2328;
 margin:0;background:#fff}
main{max-width:1360px;margin:0 auto;padding:16px 24px 40px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid #d0d7de}
h3{font-size:15px;margin:18px 0 6px}
code,pre{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:8px;white-space:pre-wrap;
 word-break:break-word;margin:4px 0 10px}
table{border-collapse:collapse;width:100%;margin:6px 0 12px}
th,td{border:1px solid #d0d7de;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
.head{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;justify-content:space-between;
 border-bottom:3px solid #1f2328;padding-bottom:12px}
.meta{color:#57606a}
.meta b{color:#1f2328}
.overall{font-size:20px;font-weight:700;padding:10px 16px;border-radius:6px;border:2px solid}
.chips{display:flex;flex-wrap:wrap;gap:6px;margin-top:8px}
.chip{padding:2px 8px;border-radius:12px;border:1px solid;font-weight:600;font-size:13px}
.s{font-weight:700;white-space:nowrap}
.s-pass{background:#dafbe1;color:#0f5323;border-color:#1a7f37}
.s-fail{background:#ffcecb;color:#82071e;border-color:#cf222e}
.s-error{background:#82071e;color:#fff;border-color:#82071e}
.s-error .small{color:#ffd8d3}
.s-deviation{background:#ffe796;color:#4d2d00;border-color:#bf8700}
.s-unsupported{background:#e6e9ed;color:#424a53;border-color:#8c959f}
.s-inconclusive{background:#cae8ff;color:#0a3069;border-color:#0969da}
.s-none{background:#fff;color:#6e7781;border-color:#d0d7de}
.k-classified{background:#eefbf1;color:#0f5323;border-color:#1a7f37;border-style:dashed}
.k-na{background:#f3f4f6;color:#424a53;border-color:#8c959f;border-style:dashed}
.k-needs{background:#e8f4ff;color:#0a3069;border-color:#0969da;border-style:dashed}
td.s,th.s,td.s-none{border-color:#d0d7de}
td.id{white-space:nowrap}
ul.glance{margin:8px 0 0;padding-left:0;list-style:none}
ul.glance li{margin:3px 0}
td.s-none{color:#8c959f}
.small{font-size:12px;color:#57606a}
.cls{display:block;font-weight:400;font-size:12px}
.scroll{overflow:auto;max-width:100%;max-height:80vh;border:1px solid #d0d7de;margin:6px 0 12px}
.scroll table.matrix{width:max-content;min-width:100%}
.scroll table{margin:0;border-collapse:separate;border-spacing:0}
.matrix td{text-align:center;width:86px;min-width:86px;max-width:86px;font-size:11px;overflow-wrap:anywhere}
.matrix td .cls{white-space:normal}
.matrix thead th{position:sticky;top:0;z-index:2;font-size:12px}
.matrix th.row{position:sticky;left:0;z-index:1;background:#f6f8fa;box-shadow:2px 0 0 #d0d7de;min-width:150px;max-width:210px}
.matrix th.row .cls{overflow-wrap:anywhere}
.matrix thead th{width:86px;max-width:86px;overflow-wrap:anywhere}
.matrix th.corner{left:0;z-index:3;min-width:150px;max-width:210px}
.finding{border:1px solid #d0d7de;border-left:6px solid;border-radius:4px;padding:6px 12px;margin:10px 0}
.finding.s-fail{border-left-color:#cf222e;background:#fff}
.finding.s-error{border-left-color:#82071e;background:#fff}
.finding.s-deviation{border-left-color:#bf8700;background:#fff}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:6px 0}
dl.kv dt{font-weight:600}
dl.kv dd{margin:0}
footer{margin-top:32px;border-top:1px solid #d0d7de;padding-top:8px;color:#57606a}
.legend td:first-child{width:140px}
.banner{border:1px solid;border-left:6px solid;border-radius:4px;padding:8px 12px;margin:12px 0}
.banner pre{background:#fff}
"""


def esc(value: Any) -> str:
    """HTML-escape anything (None -> empty)."""
    return "" if value is None else _html.escape(str(value), quote=True)


def esc_text(value: Any) -> str:
    """HTML-escape text that goes into element content, never an attribute: ``&``, ``<`` and ``>`` only (quotes
    are plain there, and JSON bodies are full of them: ``&quot;`` made a page of exchanges a tenth bigger)."""
    return "" if value is None else _html.escape(str(value), quote=False)


def status_class(status: str | None) -> str:
    return f"s-{status}" if status in STATUS_ORDER else "s-none"


def badge(status: str | None, extra: str = "") -> str:
    return f'<span class="chip s {status_class(status)}">{esc(STATUS_TEXT.get(status, status))}</span>{extra}'


def status_cell(status: str | None, inner: str = "", tag: str = "td", title: str | None = None) -> str:
    """A coloured table cell that also spells its status."""
    t = f' title="{esc(title)}"' if title else ""
    return (f'<{tag} class="s {status_class(status)}"{t}>{esc(STATUS_TEXT.get(status, status))}'
            f"{inner}</{tag}>")


def page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body><main>\n{body}\n</main></body></html>\n"
    )


def legend() -> str:
    rows = "".join(
        f"<tr>{status_cell(s)}<td>{esc(STATUS_MEANING[s])}</td></tr>" for s in (*STATUS_ORDER, None)
        if s != "unsupported") + "".join(
        f'<tr><td class="{KIND_CLASS[k]}"><b>{esc(KIND_TEXT[k])}</b></td><td>{esc(KIND_MEANING[k])}</td></tr>'
        for k in ("classified", "not-applicable", "needs"))
    return (
        "<footer><h3>Legend</h3><table class=\"legend\">" + rows + "</table>"
        "<p>A requirement's verdict is the worst of its checks, in the order "
        "error &gt; fail &gt; deviation &gt; inconclusive &gt; pass &gt; unsupported: one counterexample outweighs any "
        "number of passes, a check that could not decide keeps a requirement from counting as a pass, and "
        "a check that does not apply (NOT APPLICABLE, conformance.json's status unsupported) carries no evidence. "
        "A broken MUST is a fail; a broken SHOULD or MAY is a deviation; a requirement no source of the judging "
        "profile states has no level and its checks only classify. Checks and requirements are counted in the "
        "terminal's words: CLASSIFIED (PASS) passes apart, NOT DECIDED BY THIS SETUP apart from INCONCLUSIVE and "
        "NOT APPLICABLE; a check is one verdict, and one test (what pytest and the progress lines count) can report "
        "several. docs/verdicts.md explains every verdict and the exit codes. Credentials (Authorization headers, tokens, URL userinfo) are redacted.</p></footer>"
    )


def matrix_columns(matrix: dict[str, dict[str, Any]]) -> list[str]:
    """The behaviours of the matrix in the registry's column order (ctk.core.behaviours.Behaviour); names it
    does not know (a report of another kit version) follow alphabetically."""
    return column_order(b for cells in matrix.values() for b in cells)


def matrix_heading(behaviour: str) -> str:
    """A column heading: the display name once; the behaviour's name as conformance.json and the test ids spell
    it is the heading's tooltip (shown beneath it, it repeated the heading in other words)."""
    return f'<th data-behaviour="{esc(behaviour)}" title="{esc(behaviour)}">{esc(display_name(behaviour))}</th>'


def render_exchanges_html(exchanges: list[dict[str, Any]], limit: int = 20, cut: int = 0,
                          printed: dict[str, str] | None = None, anchor: str | None = None) -> str:
    """The exchanges, once each; ``cut``: how many the report left out (see ctk.reporting.model.cap_exchanges).
    ``printed`` (exchange -> the anchor of the finding that printed it) makes each exchange appear once per page:
    one that an earlier finding printed in full is a line naming it, with a link there; this one's are added
    under ``anchor``."""
    if not exchanges:
        return '<p class="small">No HTTP exchanges recorded.</p>'
    shown = exchanges[:limit]
    blocks = []
    for ex in shown:
        key = json.dumps(ex, sort_keys=True, default=str)
        first = printed.get(key) if printed is not None else None
        if first is None:
            blocks.append(esc_text(scrub_text(render_exchanges([ex])) or ""))
            if printed is not None and anchor:
                printed[key] = anchor
        else:
            head = f"--> {ex.get('method') or ''} {redact_url(ex.get('url')) or ''}"
            if ex.get("label"):
                head += f"   [{ex['label']}]"
            answer = ex.get("status") if ex.get("status") is not None else (ex.get("error") or "no answer")
            blocks.append(esc_text(scrub_text(head)) + f"\n&lt;-- {esc_text(scrub_text(str(answer)))}   "
                          f'(the same exchange as in <a href="#{esc(first)}">{esc(first)}</a>, shown there in full)')
    text = "\n\n".join(blocks)
    notes = []
    if len(exchanges) > limit:
        notes.append(f"{len(exchanges) - limit} more exchanges in conformance.json.")
    if cut:
        notes.append(f"{cut} further exchanges of this check are not kept in the report (kept: the first, the "
                     "last, then the latest with no answer or an error status, then with an Idempotency-Key); bodies longer "
                     "than the limit are cut where marked.")
    more = "".join(f'<p class="small">{esc(n)}</p>' for n in notes)
    return f"<pre class=\"exchanges\">{text}</pre>{more}"


# --- conformance.html -----------------------------------------------------------------------------------
#
# Rendered from the run's record (conformance.json, ``RunReport.to_dict()``) and nothing else: the record is made
# once; this module reads its fields. The first screen is what a catalog author acts on: the verdict, what is new,
# the known gaps, what changed since the last run, the root causes and the findings; passes fold away.

LEVEL_TEXT = {"CLASSIFIED": "no level (classifies)"}


def level_text(level: Any) -> str:
    """A level as the pages say it: MUST, SHOULD, MAY; a requirement no source of the profile judges has no level
    (CLASSIFIED is a kind of verdict on these pages, not a level)."""
    return LEVEL_TEXT.get(str(level or ""), str(level or ""))


def kind_text(kind: str | None, status: str | None = None) -> str:
    """The word of a kind (Result.kind, ctk.reporting.model.requirement_kind): KIND_TEXT, else the status's."""
    return KIND_TEXT.get(kind or "", STATUS_TEXT.get(status if kind is None else kind, str(kind)))


def kind_class(kind: str | None, status: str | None = None) -> str:
    return KIND_CLASS[kind] if kind in KIND_CLASS else status_class(status if kind is None else kind)


def kind_cell(kind: str | None, status: str | None, inner: str = "") -> str:
    """A table cell of a requirement's verdict in the kinds' words, coloured by its status."""
    return f'<td class="s {status_class(status)} {kind_class(kind, status)}">{esc(kind_text(kind, status))}{inner}</td>'


def findings_of(record: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index in the record's results, result) of every finding: fail, deviation, error."""
    return [(i, r) for i, r in enumerate(record.get("results") or []) if r.get("status") in ("error", "fail", "deviation")]


def finding_anchors(record: dict[str, Any]) -> dict[int, str]:
    """result index -> the id of its evidence on conformance.html ("finding-1" ...); the matrix links to these."""
    return {i: f"finding-{n + 1}" for n, (i, _) in enumerate(findings_of(record))}


def requirement_anchor(rid: str) -> str:
    return f"req-{rid}"


def _statement(record: dict[str, Any], r: dict[str, Any]) -> str:
    return str(r.get("statement") or (record.get("requirements") or {}).get(r.get("requirement"), {}).get("statement")
               or "")


def render_conformance(report: RunReport | dict[str, Any]) -> str:
    """The whole conformance.html page for one run, from its record (a RunReport makes it once)."""
    rec = as_record(report)
    results: list[dict[str, Any]] = rec.get("results") or []
    requirements: dict[str, dict[str, Any]] = rec.get("requirements") or {}
    findings = findings_of(rec)
    anchor = finding_anchors(rec)
    options = rec.get("options") or {}
    catalog = rec.get("catalog") or {}
    spec = rec.get("spec") or {}
    target = rec.get("target") or {}
    state = rec.get("state")

    out: list[str] = []
    # header ---------------------------------------------------------------------------------------
    rkinds = rec.get("requirement_kinds") or {}
    chips_req = "".join(
        f'<span class="chip {kind_class(None if k == "not-run" else k)}">'
        f'{esc(kind_text(None if k == "not-run" else k))}: {n}</span>' for k, n in rkinds.items() if n)
    kinds = rec.get("kinds") or {}
    chips_res = "".join(
        f'<span class="chip {KIND_CLASS[k]}" title="{esc(KIND_MEANING[k])}">{esc(KIND_TEXT[k])}: {kinds[k]}</span>'
        if k in KIND_CLASS else f'<span class="chip {status_class(k)}">{esc(STATUS_TEXT[k])}: {kinds[k]}</span>'
        for k in CHECK_KINDS if kinds.get(k))
    version = f' version <b>{esc(catalog["version"])}</b>' if catalog.get("version") else ""
    spec_line = (f' · OpenAPI <b>{esc(spec.get("version") or "?")}</b> <code title="sha256 of the OpenAPI document">'
                 f'{esc(str(spec["sha256"])[:12])}</code>' if spec.get("sha256") else "")
    judged = judged_by(options)
    out.append(
        '<header class="head"><div>'
        "<h1>Iceberg REST catalog conformance</h1>"
        f'<div class="meta" id="catalog">Catalog <b>{esc(catalog.get("name") or target.get("name") or "")}</b>{version}'
        f' <code>{esc(target.get("url"))}</code></div>'
        f'<div class="meta">Run <b>{esc(rec.get("started_at"))}</b> to <b>{esc(rec.get("finished_at") or "(unfinished)")}</b>'
        f' · kit <b>{esc((rec.get("kit") or {}).get("version") or rec.get("kit_version"))}</b>{spec_line}'
        f' · <span id="verdict-count">{checks_phrase(len(results), rec.get("tests"))}</span></div>'
        + (f'<div class="meta" id="judged">Judged by <b>{esc(judged)}</b></div>' if judged else "")
        + f'<div class="chips"><span class="small">Requirements ({len(requirements)}):</span>'
        f'{chips_req or "<span class=small>none</span>"}</div>'
        f'<div class="chips" id="check-counts"><span class="small">Checks ({len(results)}):</span>'
        f'{chips_res or "<span class=small>none</span>"}</div>'
        "</div>"
        f'<div class="overall {"s-fail" if state == "unusable-target" else status_class(rec.get("overall"))}" '
        f'id="overall">Overall: {esc(overall_text(rec))}</div>'
        "</header>"
    )
    out.append(_run_state(rec))
    out.append(gaps_section(rec.get("known_gaps"), rec.get("new_findings"), rec.get("certification"), esc))  # gaps_html.py
    out.append(_changes(rec))
    out.append(_root_causes(rec, anchor))
    attention = "".join(
        f'<li class="attention"><span class="chip s s-inconclusive">{esc(n["count"])}×</span> <b>{esc(n["what"])}</b> '
        f'({esc(", ".join(f"{k} ×{v}" for k, v in n["requirements"].items()))}): '
        f'<span class="small">{esc(n["why"])}</span></li>' for n in rec.get("attention") or [])
    if attention or findings:
        out.append('<section id="attention"><h3>Needs attention</h3><ul class="glance">' + attention + "".join(
            f'<li>{badge(r["status"])} <a href="#{anchor[i]}"><b>{esc(r["requirement"])}</b></a> '
            f'{esc(" · ".join(x for x in (r.get("endpoint"), r.get("behaviour")) if x))}: '
            f'{_what_happened(r.get("message") or "")}</li>'
            for i, r in findings[:12]) + (f"<li>… and {len(findings) - 12} more below</li>" if len(findings) > 12 else "")
            + "</ul></section>")
    out.append(_undecided(rec))

    # findings, with their evidence ------------------------------------------------------------------
    out.append(f'<h2 id="findings">Failures and deviations ({len(findings)})</h2>')
    if not findings:
        out.append("<p>None.</p>")
    printed: dict[str, str] = {}
    for i, r in findings:
        out.append(_finding(rec, r, anchor[i], printed))

    out.append(render_capabilities(rec.get("catalog_capabilities") or {}, esc))

    # requirements: what did not pass in view, the passes folded ---------------------------------------
    first_finding: dict[str, str] = {}
    for i, r in findings:
        first_finding.setdefault(r["requirement"], anchor[i])
    shown: list[str] = []
    folded: list[str] = []
    for rid, s in requirements.items():
        (folded if s.get("kind") in ("pass", "classified", "not-applicable", None) else shown).append(
            _requirement_row(rid, s, first_finding.get(rid)))
    head = ('<table class="reqs"><thead><tr><th>id</th><th>level</th><th>statement</th><th>source</th>'
            "<th>verdict</th><th>checks</th></tr></thead><tbody>")
    out.append(f'<h2 id="requirements">Requirements ({len(requirements)})</h2>')
    if shown:
        out.append(f'<p class="small">{len(shown)} not passed (broken, undecided or not decided by this setup):</p>'
                   + head + "".join(shown) + "</tbody></table>")
    if folded:
        what = ", ".join(f"{esc(kind_text(None if k == 'not-run' else k))} {n}" for k, n in rkinds.items()
                         if n and k in ("pass", "classified", "not-applicable", "not-run"))
        out.append(f'<details id="requirements-passed"><summary>{len(folded)} requirements passed, not applicable '
                   f"or not run ({what}): open to list them</summary>" + head + "".join(folded)
                   + "</tbody></table></details>")

    # matrix, folded -----------------------------------------------------------------------------------
    out.append(_matrix(rec, anchor))

    # behaviour profile (ctk.reporting.behaviour) ------------------------------------------------------
    out.append(f"<style>{BP_STYLE}</style>" + render_behaviour(rec.get("behaviour_profile") or {}))

    # target and discovery -------------------------------------------------------------------------
    disc = {**(target.get("discovery") or {}), **(target.get("observed") or {})}
    out.append("<h2>Target and discovery</h2>")
    out.append(_kv([
        ("URL", target.get("url")),
        ("Catalog", catalog.get("name")),
        ("Catalog version", (f'{catalog["version"]} (from {catalog.get("version_source")})'
                             if catalog.get("version") else None)),
        ("OpenAPI document", (f'{spec.get("file") or ""} version {spec.get("version")}, sha256 {spec.get("sha256")}'
                              if spec.get("sha256") else None)),
        ("Idempotency advertised", _fmt(disc.get("idempotency_supported"))),
        ("Key lifetime", _lifetime(disc)),
        ("Lifetime placement", "top level" if disc.get("lifetime_raw") and not disc.get("misplaced_in")
         else (f"misplaced in {_fmt(disc.get('misplaced_in'))}" if disc.get("misplaced_in") else None)),
        ("Java-parseable lifetime", _fmt(disc.get("java_parseable"))),
        ("In-flight duplicate behaviour", disc.get("in_flight")),
        ("Payload-conflict answer", disc.get("payload_conflict")),
        ("Advertised endpoints", _endpoints(disc.get("endpoints"))),
        *[(f"Server: {k}", _fmt(v)) for k, v in (target.get("server_info") or {}).items()],
    ]))
    out.append(_endpoints_by_resource(disc.get("endpoints")))

    # undecided, one line each, folded -------------------------------------------------------------
    undecided = [r for r in results if r.get("status") in ("inconclusive", "unsupported")]
    out.append(f'<details id="undecided-list"><summary><b>Inconclusive, not decided by this setup and not applicable '
               f"({len(undecided)})</b>: each check with its reason</summary>")
    if undecided:
        out.append("<table><thead><tr><th>requirement</th><th>verdict</th><th>test</th><th>reason</th></tr></thead><tbody>")
        for r in undecided:
            needs = f"<br><b>needs {esc(r['needs'])}</b>" if r.get("needs") else ""
            out.append(f"<tr><td>{esc(r['requirement'])}</td>{kind_cell(r.get('kind'), r['status'])}"
                       f"<td><code>{esc(r.get('nodeid'))}</code></td><td>{esc(r.get('message'))}{needs}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>None.</p>")
    out.append("</details>")

    # options --------------------------------------------------------------------------------------
    if options:
        out.append("<h2>Options</h2>")
        out.append(_kv([(k, _fmt(v)) for k, v in options.items()]))

    out.append(legend())
    return page(f"CTK conformance: {catalog.get('name') or target.get('url') or 'run'}", "\n".join(out))


def checks_phrase(verdicts: int, tests: Any) -> str:
    """"593 checks (verdicts) from 416 tests": a test (what pytest and the progress lines count) can report several
    checks; the counts of checks below count verdicts."""
    of = f" from {tests} tests" if isinstance(tests, int) and tests != verdicts else ""
    return f"{verdicts} checks{of}"


def _requirement_row(rid: str, s: dict[str, Any], first: str | None) -> str:
    link = f'<br><a href="#{first}">evidence</a>' if first else ""
    if s.get("status") is None:
        link = f'<br><span class="cls small">{esc(s.get("not_run") or "")}</span>'
    cnt = ", ".join(f"{n} {st}" for st, n in (s.get("counts") or {}).items() if n) or "—"
    return (f'<tr id="{requirement_anchor(rid)}"><td class="id"><b>{esc(rid)}</b></td><td>{esc(level_text(s.get("level")))}'
            f'</td><td>{esc(s.get("statement"))}</td><td class="small">{esc(s.get("source"))}</td>'
            f'{kind_cell(s.get("kind"), s.get("status"), link)}<td class="small">{esc(cnt)}</td></tr>')


def _matrix(rec: dict[str, Any], anchor: dict[int, str]) -> str:
    """The endpoint × behaviour matrix, folded: its summary says how many cells of each verdict it holds."""
    matrix: dict[str, dict[str, Any]] = rec.get("matrix") or {}
    if not matrix:
        return ('<h2 id="matrix">Endpoint × behaviour matrix</h2>'
                '<p class="small">No check reported an endpoint and behaviour.</p>')
    cols = matrix_columns(matrix)
    first_finding: dict[tuple[Any, Any], str] = {}
    for i, r in findings_of(rec):
        first_finding.setdefault((r.get("endpoint"), r.get("behaviour")), anchor[i])
    tally: dict[str | None, int] = {}
    for cells in matrix.values():
        for cell in cells.values():
            tally[cell.get("status")] = tally.get(cell.get("status"), 0) + 1
    counts = ", ".join(f"{n} {STATUS_TEXT.get(s, s)}" for s, n in sorted(
        tally.items(), key=lambda kv: STATUS_ORDER.index(kv[0]) if kv[0] in STATUS_ORDER else 99))
    out = [f'<details id="matrix-section"><summary><h2 id="matrix" style="display:inline">Endpoint × behaviour '
           f"matrix</h2> ({len(matrix)} endpoints × {len(cols)} behaviours; cells: {esc(counts)})</summary>",
           f'<p class="small" id="matrix-hint">The matrix scrolls sideways in its box (the endpoint column stays in '
           "view); an endpoint only the plain-semantics checks judge has one cell.</p>",
           '<div class="scroll"><table class="matrix"><thead><tr><th class="corner">endpoint (operationId)</th>'
           + "".join(matrix_heading(c) for c in cols) + "</tr></thead><tbody>"]
    registry = _endpoint_registry()
    order = {op: i for i, op in enumerate(registry)}
    for ep, cells in sorted(matrix.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])):
        known = registry.get(ep)
        where = (f'<span class="cls small">{esc(known.method)} {esc(known.template)}</span>' if known else "")
        row = [f'<th class="row">{esc(ep)}{where}</th>']
        for c in cols:
            cell = cells.get(c)
            if not cell:
                row.append('<td class="s-none">—</td>')
                continue
            inner = "".join(f'<span class="cls">{esc(x)}</span>' for x in cell.get("classifications") or [])
            inner += f'<span class="cls small">{esc(", ".join(cell.get("requirements") or []))}</span>'
            target = first_finding.get((ep, c)) if cell.get("status") in ("fail", "deviation") else None
            if target:
                inner += f'<a class="cls" href="#{esc(target)}">finding →</a>'
            row.append(status_cell(cell.get("status"), inner))
        out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</tbody></table></div></details>")
    return "".join(out)


def _root_causes(rec: dict[str, Any], anchor: dict[int, str]) -> str:
    """Root causes first: each broken rule, where, and the findings it explains (links to their evidence)."""
    causes = rec.get("root_causes") or []
    if not causes:
        return ""
    items = []
    for n, rc in enumerate(causes, 1):
        first = next((anchor[i] for i in rc.get("results") or [] if i in anchor), None)
        reqs = ", ".join(f"{r}" + (f" ×{k}" if k > 1 else "") for r, k in (rc.get("requirements") or {}).items())
        where = f" on <b>{esc(', '.join(rc.get('endpoints') or []))}</b>" if rc.get("endpoints") else ""
        link = f' <a href="#{esc(first)}">evidence →</a>' if first else ""
        blocked = rc.get("blocked") or 0
        held = ", ".join(f"{r}" + (f" x{k}" if k > 1 else "") for r, k in (rc.get("blocked_requirements") or {}).items())
        seen = f'{esc(rc.get("finding"))} &mdash; rule: ' if rc.get("finding") else ""
        items.append(f'<li id="cause-{n}" data-rule="{esc(rc.get("rule"))}">{badge(rc.get("status"))} '
                     f'<b>{esc(rc.get("requirement"))}</b> ({esc(level_text(rc.get("level")))}){where}: {seen}'
                     f'{esc(rc.get("title"))}. <span class="small">Explains {rc.get("findings")} finding(s): {esc(reqs)}'
                     + (f"; {blocked} verdict(s) undecided until it is fixed: {esc(held)}" if blocked else "")
                     + f'</span>{link}</li>')
    return (f'<section id="root-causes"><h3>Root causes ({len(causes)})</h3><p class="small">Each finding below is '
            "grouped under the broken rule that explains it; fix the first and run again.</p>"
            f'<ol class="glance">{"".join(items)}</ol></section>')


def _undecided(rec: dict[str, Any]) -> str:
    """What was left undecided and what would decide it."""
    groups = rec.get("undecided") or []
    if not groups:
        return ""
    items = []
    for g in groups[:15]:
        reqs = ", ".join(f"{r}" + (f" ×{k}" if k > 1 and len(g["requirements"]) > 1 else "")
                         for r, k in g["requirements"].items())
        must = " <b>(a MUST)</b>" if g["must"] else ""
        if g["kind"] == "needs":
            text = f"not decided by this setup: needs {esc(g['what'])}"
        else:
            text = f"inconclusive: {esc(_first_line(g['what'], 300))}" + (
                f" <b>→ {esc(g['hint'])}</b>" if g.get("hint") else "")
        if g.get("option") and g.get("must_checks"):
            text += f" <span class=\"small\">({esc(g['option'])} would decide {g['must_checks']} MUST check(s))</span>"
        items.append(f"<li>{g['count']}× {esc(reqs)}{must}: {text}</li>")
    more = f"<li>… and {len(groups) - 15} more reasons below</li>" if len(groups) > 15 else ""
    return (f'<section id="undecided-top"><h3>Undecided, and what would decide it</h3>'
            f'<ul class="glance">{"".join(items)}{more}</ul></section>')


def _changes(rec: dict[str, Any]) -> str:
    """What changed since the last run in the same reports directory (the record's ``changes``)."""
    ch = rec.get("changes")
    if not isinstance(ch, dict):
        return ""
    prev = ch.get("previous") or {}
    moved = ch.get("requirements") or []
    since = (f'since the run of {esc(prev.get("started_at"))}'
             + (f' ({esc(prev.get("catalog"))})' if prev.get("catalog") else ""))
    if not moved:
        return f'<section id="changes"><h3>Changed since the last run</h3><p>Nothing: every verdict is as {since}.</p></section>'
    rows = "".join(f'<li><a href="#{requirement_anchor(m["requirement"])}"><b>{esc(m["requirement"])}</b></a>: '
                   f'{esc(STATUS_TEXT.get(m.get("before"), m.get("before")))} → {badge(m.get("after"))}</li>'
                   for m in moved[:20])
    more = f"<li>… and {len(moved) - 20} more</li>" if len(moved) > 20 else ""
    return (f'<section id="changes"><h3>Changed since the last run ({len(moved)})</h3><p class="small">Verdicts that '
            f'moved {since}.</p><ul class="glance">{rows}{more}</ul></section>')


def _endpoint_registry() -> dict[str, Any]:
    """The kit's endpoint registry (operationId -> Endpoint, in the spec's order); empty where unavailable."""
    try:
        from ctk.catalog import ENDPOINTS
    except ImportError:
        return {}
    return ENDPOINTS


def overall_text(report: RunReport | dict[str, Any]) -> str:
    """The overall line of a run's record: the verdict, or why there is none (unusable target, subset,
    interrupted)."""
    rec = as_record(report)
    claim, state, worst_seen = rec.get("overall"), rec.get("state"), rec.get("worst_observed")
    partial = bool(rec.get("subset")) or state != "complete"
    if state == "unusable-target":
        return "UNUSABLE TARGET: no check ran (see below why)"
    undecided = (rec.get("undecided_musts") or []) if state == "complete" and worst_seen not in ("fail", "error") else []
    if undecided:      # exit 7 (ctk.plugin.exits): said first, whatever else the run found
        also = "; deviations too: SHOULD/MAY requirements are not met" if worst_seen == "deviation" else ""
        ids = ", ".join(undecided[:5]) + (f" and {len(undecided) - 5} more" if len(undecided) > 5 else "")
        text = f"MUST UNDECIDED: {MUST_UNDECIDED} ({ids}){also}"
        return text + (" (in the checks of this subset run)" if partial else "")
    if not partial:
        return _with_known_gaps(rec, OVERALL_TEXT[claim])
    what = "interrupted run" if state == "interrupted" else "subset run"
    if claim is not None:
        return f"{OVERALL_TEXT[claim]} (in the checks of this {what})"
    return (f"NO OVERALL VERDICT: {what}, {rec.get('requirements_run')} of {len(rec.get('requirements') or {})} "
            "requirements had checks")


def _with_known_gaps(rec: dict[str, Any], verdict: str) -> str:
    """The headline of a run judged against a known-gaps file (--ctk-known-gaps): whether the gate holds comes
    first, so that the headline says what the exit code says; the catalog's own verdict follows, unchanged."""
    gaps, new = rec.get("known_gaps"), rec.get("new_findings")
    if not gaps or new is None or rec.get("overall") not in ("fail", "deviation"):
        return verdict
    file = Path(str(gaps.get("file") or "the known-gaps file")).name
    if not new:
        return f"KNOWN GAPS ONLY: every finding is a known gap of {file}; the catalog's verdict: {verdict}"
    return f"NEW FINDINGS: {len(new)} not in {file}; {verdict}"


def _run_state(rec: dict[str, Any]) -> str:
    """Banners for a run that is not a complete one, and cleanup problems."""
    out = []
    state = rec.get("state")
    if state == "unusable-target":
        out.append('<section class="banner s-fail" id="unusable"><b>The target is unusable; no check ran.</b> '
                   f'<pre>{esc(scrub_text(rec.get("problem")))}</pre>'
                   '<span class="small">Fix the cause and run again; the exit code was 6.</span></section>')
    if state == "interrupted":
        out.append('<section class="banner s-inconclusive" id="interrupted"><b>Interrupted.</b> The run was stopped '
                   "(Ctrl-C or SIGTERM) before every check ran: the results below are partial, and requirements "
                   "without results were not judged.</section>")
    selection = rec.get("selection") or {}
    if selection:
        sel = "; ".join(f"{k}: {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in selection.items())
        out.append('<section class="banner s-unsupported" id="subset"><b>Subset run.</b> '
                   f"Selection: <code>{esc(sel)}</code>. {rec.get('requirements_run')} of "
                   f"{len(rec.get('requirements') or {})} requirements had checks; the others show NOT RUN and no "
                   "overall verdict is claimed for them.</section>")
    if rec.get("cleanup_problems"):
        out.append('<section class="banner s-deviation" id="cleanup"><b>Cleanup problems</b> (left in the target):'
                   "<ul>" + "".join(f"<li>{esc(p)}</li>" for p in rec["cleanup_problems"]) + "</ul></section>")
    return "\n".join(out)


def _finding(rec: dict[str, Any], r: dict[str, Any], anchor: str, printed: dict[str, str] | None = None) -> str:
    where = " · ".join(x for x in (r.get("endpoint"), r.get("behaviour"), r.get("classification")) if x)
    return (
        f'<section class="finding {status_class(r["status"])}" id="{esc(anchor)}">'
        f"<h3>{badge(r['status'])} {esc(r['requirement'])} ({esc(level_text(r.get('level')))}) "
        f'<span class="small">{esc(where)}</span></h3>'
        f'<div class="small">{esc(_statement(rec, r))}</div>'
        f'<div class="small">test <code>{esc(r.get("nodeid"))}</code> · {float(r.get("duration") or 0):.2f} s · '
        f'outcome {esc(r.get("outcome"))}</div>'
        f"<pre class=\"message\">{esc_text(r.get('message'))}</pre>"
        + (f'<p class="small">The same finding ({esc(r["requirement"])}, {esc(r.get("classification") or "")}) is '
           "shown with its exchanges above; this one's exchange is in conformance.json.</p>" if r.get("repeat") else
           render_exchanges_html(r.get("exchanges") or [], cut=r.get("exchanges_cut") or 0, printed=printed,
                                 anchor=anchor))
        + "</section>"
    )



def _what_happened(message: str) -> str:
    """For "Needs attention": what happened first (the check's "happened:" line), then what was expected."""
    fields = {}
    for line in (message or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("expected", "happened") and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    if "happened" in fields:
        text = f"<b>happened:</b> {esc(_first_line(fields['happened'], 200))}"
        if "expected" in fields:
            text += f' <span class="small">(expected: {esc(_first_line(fields["expected"], 160))})</span>'
        return text
    return esc(_first_line(message))


def _first_line(text: str, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _kv(pairs: Iterable[tuple[str, Any]]) -> str:
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in pairs if v not in (None, "", [], {}))
    return f'<dl class="kv">{rows}</dl>' if rows else '<p class="small">Nothing recorded.</p>'


def _fmt(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    return scrub_text(redact_url(str(v)) if "://" in str(v) else str(v))


def _lifetime(d: dict[str, Any]) -> str | None:
    raw, secs, err = d.get("lifetime_raw"), d.get("lifetime"), d.get("lifetime_error")
    parts = []
    if raw:
        parts.append(str(raw))
    if isinstance(secs, (int, float)):
        parts.append(f"= {secs:g} s")
    if err:
        parts.append(f"(error: {err})")
    return " ".join(parts) or None


def _endpoints(eps: Any) -> str | None:
    if not eps:
        return None
    if isinstance(eps, (list, tuple)):
        return f"{len(eps)}, by resource below"
    return str(eps)


#: the resources an endpoint can be about, the innermost first ("namespaces/{namespace}/tables" is a table's)
_RESOURCES = (("functions", "functions"), ("views", "views"), ("register-view", "views"), ("tables", "tables"),
              ("register", "tables"), ("transactions", "transactions"), ("namespaces", "namespaces"))


def endpoint_resource(endpoint: str) -> str:
    """The resource an advertised endpoint ("POST /v1/{prefix}/namespaces/{namespace}/register") is about:
    tables there; the first fixed path segment for one that names none of _RESOURCES (config, oauth)."""
    words = [w for w in endpoint.split(" ", 1)[-1].split("/") if w and not w.startswith("{") and w != "v1"]
    return next((resource for word, resource in _RESOURCES if word in words), words[0] if words else "(root)")


def _endpoints_by_resource(eps: Any) -> str:
    """The advertised endpoints grouped by resource, collapsed: one line per resource when opened."""
    if not isinstance(eps, (list, tuple)) or not eps:
        return ""
    groups: dict[str, list[str]] = {}
    for e in eps:
        groups.setdefault(endpoint_resource(str(e)), []).append(str(e).replace(" /v1/{prefix}/", " /"))
    rows = "".join(f'<tr><th>{esc(name)} ({len(items)})</th><td class="small">'
                   + "<br>".join(esc(i) for i in items) + "</td></tr>" for name, items in sorted(groups.items()))
    return (f'<details id="advertised-endpoints"><summary>Advertised endpoints: {len(eps)} in {len(groups)} '
            f"resources ({esc(', '.join(f'{n} {len(v)}' for n, v in sorted(groups.items())))}); paths under "
            f"/v1/{{prefix}}</summary><table>{rows}</table></details>")
