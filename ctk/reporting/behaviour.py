"""The target's behaviour profile: which of the paths the specs allow it takes, computed from the verdicts.

Where the merged spec leaves a choice open (the in-flight answer, payload binding, key scope, what a replay
shows) or states a rule a catalog may still break without losing data (terminal 4xx, key formats), the kit
classifies what it saw. This module gathers those classifications into rows - each with what was observed,
the requirement and verdict it came from, the endpoints, and the exchange that shows it - for the
``behaviour_profile`` object of conformance.json, a section of conformance.html and rows of ``ctk report``.
It also lists the verdicts the other judging profile (``--ctk-profile``) would give differently.

Input: verdict dicts as in conformance.json ``results`` (or objects with the same attributes).
"""

from __future__ import annotations

import html
from typing import Any, Callable, Iterable

from ctk.core.behaviours import Behaviour, checks_for
from ctk.core.requirements import active_profile, other_profile

# row id -> (title, requirement(s) it reads)
ROWS: list[tuple[str, str, tuple[str, ...]]] = [
    ("in-flight", "In-flight duplicate answer", ("INFLIGHT-01", "INFLIGHT-02")),
    ("payload-mismatch", "Same key, another payload", ("PAYLOAD-01",)),
    ("key-scope", "Key scope (the same key on another operation, another resource)", ("SCOPE-01", "SCOPE-02")),
    ("terminal-4xx", "Terminal 4xx on retry", ("REPLAY-02",)),
    ("5xx", "5xx answers", ("REPLAY-03",)),
    ("replay", "What a replay shows", ("REPLAY-05",)),
    ("key-formats", "Key formats accepted", ("KEY-01",)),
    ("lifetime", "Lifetime: value, placement, Java-parseable, grace", ("DISC-01", "DISC-02", "DISC-03", "LIFE-03")),
    ("endpoints", "Endpoints honouring keys", ("REPLAY-01",)),
    ("replay-headers", "Replay headers", ("REPLAY-01",)),
]
UNDECIDED = ("unsupported", "inconclusive", "error")
_NOISE = ("fault:", "setup", "interfere", "clear", "cleanup", "well-formed key", "observe")


def _get(v: Any, name: str, default: Any = None) -> Any:
    return v.get(name, default) if isinstance(v, dict) else getattr(v, name, default)


def _detail(v: Any, name: str, kind: type) -> Any:
    """``details[name]`` of a verdict when it is of type ``kind``, else None (a report written before trimming kept
    types has "[cut ...]" strings where dicts were)."""
    details = _get(v, "details")
    value = details.get(name) if isinstance(details, dict) else None
    return value if isinstance(value, kind) else None


# the kit's check behind each requirement a row reads; other verdicts of the same id (a scenario file's, say)
# carry classifications of their own and are used only when the check did not run
def check_behaviours(rid: str) -> set[Behaviour]:
    """The behaviours the kit's per-endpoint, key and discovery checks report ``rid`` under (the registry of
    ctk.core.behaviours); a network or database scenario's verdicts of the same id are not the row's check."""
    import ctk.checks  # noqa: F401 - importing the check modules fills the registry

    return {b for reg in checks_for(rid) if reg.area in ("idempotency", "keys", "discovery")
            for r, b in reg.reports if r == rid}


def _decided(results: Iterable[Any], rid: str) -> list[Any]:
    out = [v for v in results if _get(v, "requirement") == rid and _get(v, "status") not in UNDECIDED]
    ours = [v for v in out if _get(v, "behaviour") in check_behaviours(rid)]
    return ours or out


def key_exchange(v: Any) -> dict | None:
    """The exchange that shows the behaviour: the last one that is not a fault rule, setup, interference or
    state read; None where the verdict kept only such exchanges (a state read is not the behaviour's evidence)."""
    exs = [e for e in _get(v, "exchanges") or [] if isinstance(e, dict)]
    shown = [e for e in exs if not str(e.get("label") or "").lower().startswith(_NOISE)]
    keyed = [e for e in shown if any(k.lower() == "idempotency-key" for k in e.get("request_headers") or {})]
    if _get(v, "requirement") == "INFLIGHT-01":      # the duplicate's answer, not the first's
        keyed = [e for e in keyed if "duplicate" in str(e.get("label") or "")] or keyed
    found = keyed or shown
    return found[-1] if found else None


def exchange_line(ex: dict | None) -> str:
    if not ex:
        return ""
    status = ex.get("status")
    body = str(ex.get("response_body") or "")
    text = f"{ex.get('method', '?')} {ex.get('url', '?')}"
    key = next((v for k, v in (ex.get("request_headers") or {}).items() if k.lower() == "idempotency-key"), None)
    if key:
        text += f" (Idempotency-Key {key})"
    text += " -> " + (str(status) if status is not None else f"no answer ({ex.get('error')})")
    if body:
        text += " " + (body[:160] + "..." if len(body) > 160 else body)
    if ex.get("label"):
        text = f"[{ex['label']}] " + text
    return text


def _classified(results: list[Any], rid: str, names: dict[str, str] | Callable[[str], str]) -> tuple[str, list]:
    """Observed text from the classifications of `rid`'s decided verdicts: "a (ep1, ep2); b (ep3)"."""
    by: dict[str, list[str]] = {}
    used = []
    for v in _decided(results, rid):
        cls = _get(v, "classification") or _get(v, "status")
        text = names(cls) if callable(names) else names.get(cls, cls)
        by.setdefault(text, []).append(_get(v, "endpoint") or "-")
        used.append(v)
    if not by:
        return "", []
    if len(by) == 1:
        [(text, eps)] = by.items()
        return text, used
    return "; ".join(f"{t} ({', '.join(sorted(set(e)))})" for t, e in by.items()), used


def _in_flight(cls: str) -> str:
    if cls.startswith("other: "):
        return f"answers {cls[len('other: '):]} (neither 409 nor a wait)"
    return {"wait-and-replay": "waits and replays", "409 request_in_progress": "409 with subtype request_in_progress",
            "plain 409": "409 without subtype", "second execution": "executes again"}.get(cls, cls)


def _payload(cls: str) -> str:
    if cls in ("400", "409", "422"):
        return f"rejects with {cls}"
    return {"undetected": "replays the first", "executed": "executes"}.get(cls, cls)


def _scope(cls: str) -> str:
    if cls.startswith("rejected"):
        return f"rejects the reused key ({cls.split()[-1]})"
    return cls


def _lifetime(results: list[Any]) -> tuple[str, list]:
    parts: list[str] = []
    used: list[Any] = []
    for rid in ("DISC-01", "DISC-02", "DISC-03", "LIFE-03"):
        vs = [v for v in results if _get(v, "requirement") == rid and _get(v, "status") != "error"]
        if not vs:
            continue
        v = vs[0]
        d = _get(v, "details") or {}
        cls = _get(v, "classification") or ""
        if rid == "DISC-01":
            raw = d.get("lifetime_raw")
            parts.append(f"lifetime {raw}" if raw else "no lifetime advertised")
        elif rid == "DISC-02" and cls:
            parts.append(f"placement: {cls}")
        elif rid == "DISC-03" and d.get("lifetime_raw"):
            parts.append("a Java client parses it" if d.get("java_parseable") else "a Java client cannot parse it")
        elif rid == "LIFE-03":
            decided = _decided(results, "LIFE-03")
            if not decided:
                continue
            text, _ = _classified(results, "LIFE-03", {})
            parts.append(text)
            v = decided[0]
        used.append(v)
    return "; ".join(parts), used


def _endpoints(results: list[Any]) -> tuple[str, list]:
    honoured: set[str] = set()
    not_honoured: set[str] = set()
    used: list[Any] = []
    for v in _decided(results, "REPLAY-01"):
        ep = _get(v, "endpoint") or "-"
        (honoured if _get(v, "status") == "pass" else not_honoured).add(ep)
        if _get(v, "status") != "pass":
            used.append(v)
    if not honoured and not not_honoured:
        return "", []
    text = f"honoured on {len(honoured)}: {', '.join(sorted(honoured)) or '-'}"
    if not_honoured:
        text += f"; NOT honoured on {len(not_honoured)}: {', '.join(sorted(not_honoured))}"
    return text, used or _decided(results, "REPLAY-01")[:1]


def _headers(results: list[Any]) -> tuple[str, list]:
    seen, used = {}, []
    for v in _decided(results, "REPLAY-01"):
        h = _detail(v, "replay_headers", dict)
        if h is None:
            continue
        text = "; ".join(f"{k}: {val}" for k, val in sorted(h.items())) or "none"
        if text not in seen:
            seen[text] = v
            used.append(v)
    return (" | ".join(seen) if seen else ""), used


def infer_profile(results: Iterable[Any]) -> str | None:
    """The profile a run's verdicts were judged by, where a broken rule shows it (its status is that profile's
    verdict and not the other's); None when no verdict tells."""
    for v in results:
        under = _detail(v, "profiles", dict) or {}
        matching = [p for p, s in under.items() if s == _get(v, "status")]
        if len(matching) == 1 and len(set(under.values())) > 1:
            return matching[0]
    return None


def behaviour_profile(results: Iterable[Any], profile: str | None = None) -> dict[str, Any]:
    """The behaviour profile of a run's verdicts (the ``behaviour_profile`` object of conformance.json)."""
    results = list(results)
    profile = profile or infer_profile(results) or active_profile()
    rows = []
    for row_id, title, reqs in ROWS:
        if row_id == "in-flight":
            observed, used = _classified(results, "INFLIGHT-01", _in_flight)
        elif row_id == "payload-mismatch":
            observed, used = _classified(results, "PAYLOAD-01", _payload)
        elif row_id == "key-scope":
            observed, used = _classified(results, "SCOPE-01", _scope)
            five = [v for v in _decided(results, "SCOPE-02") if _get(v, "status") != "pass"]
            if five:
                observed = "; ".join(x for x in (observed, "a reused key answered with a 5xx") if x)
                used = five + used
        elif row_id == "terminal-4xx":
            observed, used = _classified(results, "REPLAY-02", lambda c: "replayed" if c.startswith("replayed")
                                         else {"re-executed": "executed again"}.get(c, c))
        elif row_id == "5xx":
            observed, used = _classified(results, "REPLAY-03", {"executed": "not stored (the retry executes)",
                                                                "5xx replayed": "stored and replayed"})
        elif row_id == "replay":
            observed, used = _classified(results, "REPLAY-05", {"stored original": "the stored original answer"})
        elif row_id == "key-formats":
            vs = [v for v in results if _get(v, "requirement") == "KEY-01" and (_get(v, "details") or {}).get(
                "accepted")]
            observed, used = ((_get(vs[0], "details")["accepted"], vs[:1]) if vs else ("", []))
        elif row_id == "lifetime":
            observed, used = _lifetime(results)
        elif row_id == "endpoints":
            observed, used = _endpoints(results)
        else:
            observed, used = _headers(results)
        # the first verdict that kept an exchange showing the behaviour (none: no exchange is cited)
        evidence = next((line for v in used if (line := exchange_line(key_exchange(v)))), "")
        rows.append({
            "id": row_id, "title": title, "observed": observed or "not observed",
            "requirements": list(reqs),
            "verdicts": sorted({f"{_get(v, 'requirement')}: {_get(v, 'status')}" for v in used}),
            "endpoints": sorted({_get(v, "endpoint") for v in used if _get(v, "endpoint")}),
            "exchange": evidence,
        })
    return {"profile": profile, "rows": rows, "other_profile": other_profile(profile),
            "differences": profile_differences(results, profile)}


def profile_differences(results: Iterable[Any], profile: str | None = None) -> list[dict[str, Any]]:
    """Verdicts the other profile gives differently: (requirement, endpoint, behaviour, this, other)."""
    profile = profile or active_profile()
    other = other_profile(profile)
    out, seen = [], set()
    for v in results:
        under = _detail(v, "profiles", dict) or {}
        if other in under and under[other] != _get(v, "status"):
            k = (_get(v, "requirement"), _get(v, "endpoint"), _get(v, "behaviour"), _get(v, "status"), under[other])
            if k not in seen:
                seen.add(k)
                out.append({"requirement": k[0], "endpoint": k[1], "behaviour": k[2], "status": k[3],
                            "other_status": k[4], "classification": _get(v, "classification")})
    return out


# --- HTML ------------------------------------------------------------------------------------------------

def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def render_section(bp: dict[str, Any] | None) -> str:
    """The "Behaviour profile" section of conformance.html (self-contained markup)."""
    if not bp:
        return ""
    out = ['<section id="behaviour-profile"><h2>Behaviour profile</h2>',
           f'<p class="small">Which of the paths the specs allow this target takes, as observed. Judged by the '
           f'<b>{_e(bp.get("profile"))}</b> profile (<code>--ctk-profile</code>); classified behaviours are '
           'reported here, not failed.</p>',
           '<table class="bp"><thead><tr><th>behaviour</th><th>observed</th><th>from</th><th>exchange</th>'
           '</tr></thead><tbody>']
    for r in bp.get("rows") or []:
        cls = "bp-none" if r.get("observed") == "not observed" else "bp-seen"
        out.append(f'<tr class="{cls}" id="bp-{_e(r["id"])}"><th class="row">{_e(r["title"])}</th>'
                   f'<td><b>{_e(r["observed"])}</b></td>'
                   f'<td class="small">{_e(", ".join(r.get("verdicts") or r.get("requirements") or []))}'
                   f'{"<br>" + _e(", ".join(r["endpoints"])) if r.get("endpoints") else ""}</td>'
                   f'<td class="small"><code>{_e(r.get("exchange"))}</code></td></tr>')
    out.append("</tbody></table>")
    diffs = bp.get("differences") or []
    other = bp.get("other_profile")
    if diffs:
        out.append(f'<h3>Where the {_e(other)} profile differs</h3><table class="bp"><thead><tr><th>requirement'
                   f'</th><th>endpoint</th><th>behaviour</th><th>{_e(bp.get("profile"))}</th><th>{_e(other)}</th>'
                   '</tr></thead><tbody>')
        for d in diffs:
            out.append(f"<tr><td>{_e(d['requirement'])}</td><td>{_e(d['endpoint'])}</td><td>{_e(d['behaviour'])}"
                       f"{' (' + _e(d['classification']) + ')' if d.get('classification') else ''}</td>"
                       f"<td>{_e(d['status'])}</td><td>{_e(d['other_status'])}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append(f'<p class="small">The {_e(other)} profile gives the same verdicts.</p>')
    out.append("</section>")
    return "\n".join(out)


STYLE = ("table.bp td, table.bp th{vertical-align:top} table.bp code{white-space:pre-wrap;word-break:break-all}"
         " tr.bp-none td{color:#888}")


def compare_section(labelled: list[tuple[str, dict[str, Any] | None]]) -> str:
    """Rows of ``ctk report``: each behaviour row, one column per run."""
    if not any(bp for _, bp in labelled):
        return ""
    head = "".join(f"<th>{_e(label)}</th>" for label, _ in labelled)
    out = [f'<h2>Behaviour profile</h2><table class="cmp bp"><thead><tr><th>behaviour</th><th></th>{head}'
           "</tr></thead><tbody>"]
    for row_id, title, _ in ROWS:
        cells = []
        for _, bp in labelled:
            row = next((r for r in (bp or {}).get("rows") or [] if r.get("id") == row_id), None)
            cells.append(row)
        observed = [c.get("observed") if c else None for c in cells]
        tds = "".join(f'<td><b>{_e(c["observed"])}</b><br><code class="small">{_e(c.get("exchange"))}</code></td>'
                      if c else '<td class="s-none">—</td>' for c in cells)
        out.append(f'<tr><th class="row">{_e(title)}</th><td>{"≠" if len(set(observed)) > 1 else ""}</td>{tds}</tr>')
    out.append("</tbody></table>")
    return "\n".join(out)
