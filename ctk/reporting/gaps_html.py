"""conformance.html's section on --ctk-known-gaps and --ctk-certify, rendered from the run's records alone
(conformance.json ``certification``, ``new_findings``, ``known_gaps``): the certification first, then the new
findings, then the known gaps with their reasons and states (stale ones: remove them from the file)."""

from __future__ import annotations

from typing import Any, Callable

STATE_TEXT = {"known": "known gap", "stale": "stale: fixed, remove it from the file",
              "unmatched": "not concerned by this run"}


def section(known_gaps: dict[str, Any] | None, new_findings: list[dict[str, Any]] | None,
            certification: dict[str, Any] | None, esc: Callable[[Any], str]) -> str:
    out: list[str] = []
    if certification and certification.get("requested"):
        what = (f"ctk {esc(certification.get('kit_version'))} · OpenAPI {esc(certification.get('spec_version'))} "
                f"(sha256 <code>{esc(certification.get('spec_sha256'))}</code>) · target "
                f"<code>{esc(certification.get('target'))}</code> · {esc(certification.get('date'))}")
        if certification.get("certified"):
            out.append(f'<div class="certified s-pass" id="certification"><b>Certified run</b>: {what}</div>')
        else:
            why = "".join(f"<li>{esc(w)}</li>" for w in certification.get("why_not") or [])
            out.append(f'<div class="certified s-fail" id="certification"><b>Not a certified run</b>: {what}'
                       f"<ul>{why}</ul></div>")
    if known_gaps:
        new = new_findings or []
        rows = "".join(f"<tr><td>{esc(f.get('status'))}</td><td>{esc(f.get('requirement'))}</td>"
                       f"<td>{esc(f.get('endpoint') or '')}</td><td><code>{esc(f.get('check'))}</code></td></tr>"
                       for f in new)
        out.append(f"<section id='known-gaps'><h2>Known gaps (<code>{esc(known_gaps.get('file'))}</code>)</h2>")
        out.append(f"<h3>New findings: {len(new)}</h3>" + (
            "<table class='new-findings'><tr><th>status</th><th>requirement</th><th>endpoint</th><th>check</th></tr>"
            + rows + "</table>" if new else "<p>none: every finding is a known gap</p>"))
        gaps = "".join(
            f"<tr class='gap-{esc(e.get('state'))}'><td>{esc(STATE_TEXT.get(e.get('state'), e.get('state')))}</td>"
            f"<td><code>{esc(e.get('check') or '')}</code></td><td>{esc(e.get('requirement') or '')}</td>"
            f"<td>{esc(e.get('endpoint') or '')}</td><td>{esc(e.get('reason'))}</td>"
            f"<td>{_link(e.get('link'), esc)}</td></tr>" for e in known_gaps.get("entries") or [])
        out.append("<table class='known-gaps'><tr><th>state</th><th>check</th><th>requirement</th><th>endpoint</th>"
                   "<th>reason</th><th>link</th></tr>" + gaps + "</table></section>")
    return "".join(out)


def _link(link: str | None, esc: Callable[[Any], str]) -> str:
    if not link:
        return ""
    text = esc(link)
    return f'<a href="{text}">{text}</a>' if str(link).startswith(("http://", "https://")) else text
