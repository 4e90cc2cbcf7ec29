"""The "catalog capabilities" section of every report: what the catalog supports of what the spec leaves open
(each with where the kit learnt it: declared, /v1/config, a probe) and, per catalog-semantics area, how its
checks ended.

Built from the results alone (each semantic verdict carries the capabilities its check needed, in
``details.capabilities``), so that xdist workers' results merge without a side channel. conformance.json
(``catalog_capabilities``), conformance.html, junit.xml (``ctk.capability.NAME``, ``ctk.area.AREA``) and the
terminal's verdict block show the same section.
"""

from __future__ import annotations

from typing import Any, Iterable

from ctk.core.requirements import REQUIREMENTS

SEMANTIC_AREAS = ("namespaces", "tables", "listing", "evolution", "transactions", "views", "types")
STATUSES = ("pass", "fail", "deviation", "error", "inconclusive", "unsupported")


def _get(r: Any, name: str) -> Any:
    return r.get(name) if isinstance(r, dict) else getattr(r, name, None)


def capability_section(results: Iterable[Any]) -> dict[str, Any]:
    """{"capabilities": {name: {supported, source, why}}, "areas": {area: {status: count}}} (empty dicts when
    no semantic check ran)."""
    caps: dict[str, dict[str, Any]] = {}
    areas: dict[str, dict[str, int]] = {}
    for r in results:
        req = REQUIREMENTS.get(str(_get(r, "requirement")))
        if req is None or req.area not in SEMANTIC_AREAS:
            continue
        status = str(_get(r, "status"))
        counts = areas.setdefault(req.area, {s: 0 for s in STATUSES})
        counts[status] = counts.get(status, 0) + 1
        details = _get(r, "details")
        known = details.get("capabilities") if isinstance(details, dict) else None
        if isinstance(known, dict):
            for name, value in known.items():
                if isinstance(value, dict) and (name not in caps or caps[name].get("supported") is None):
                    caps[name] = {k: value.get(k) for k in ("supported", "source", "why")}
    order = {a: i for i, a in enumerate(SEMANTIC_AREAS)}
    return {"capabilities": dict(sorted(caps.items())),
            "areas": dict(sorted(areas.items(), key=lambda kv: order.get(kv[0], 99)))}


def _word(supported: Any) -> str:
    return {True: "yes", False: "no"}.get(supported, "unknown")


def area_word(counts: dict[str, int]) -> str:
    """An area's outcome in one word: fail / deviation / error / pass / inconclusive / not applicable."""
    for status in ("error", "fail", "deviation"):
        if counts.get(status):
            return status
    if counts.get("pass"):
        return "pass" + (" (some inconclusive)" if counts.get("inconclusive") else "")
    if counts.get("inconclusive"):
        return "inconclusive"
    return "not applicable"


def terminal_lines(section: dict[str, Any]) -> list[str]:
    """The section for the terminal's verdict block (nothing when no semantic check ran)."""
    if not section.get("areas"):
        return []
    areas = ", ".join(f"{a} {area_word(c)}" for a, c in section["areas"].items())
    lines = [f"catalog semantics: {areas}"]
    caps = section.get("capabilities") or {}
    if caps:
        lines.append("catalog capabilities: " + ", ".join(
            f"{name} {_word(v.get('supported'))} ({v.get('source')})" for name, v in caps.items()))
    return lines


def junit_pairs(section: dict[str, Any], prefix: str = "ctk.") -> list[tuple[str, str]]:
    pairs = [(f"{prefix}capability.{name}", f"{_word(v.get('supported'))} ({v.get('source')}: {v.get('why')})")
             for name, v in (section.get("capabilities") or {}).items()]
    pairs += [(f"{prefix}area.{area}", area_word(c)) for area, c in (section.get("areas") or {}).items()]
    return pairs


def html(section: dict[str, Any], escape: Any) -> str:
    """The HTML section (``escape``: the page's escaping function)."""
    if not section.get("areas"):
        return ""
    rows = "".join(
        f"<tr><td>{escape(a)}</td><td class='area-{escape(area_word(c).split()[0])}'>{escape(area_word(c))}</td>"
        f"<td>{', '.join(f'{n} {escape(s)}' for s, n in c.items() if n)}</td></tr>"
        for a, c in section["areas"].items())
    caps = "".join(
        f"<tr><td>{escape(name)}</td><td>{escape(_word(v.get('supported')))}</td><td>{escape(str(v.get('source')))}"
        f"</td><td>{escape(str(v.get('why')))}</td></tr>"
        for name, v in (section.get("capabilities") or {}).items())
    out = ("<section id='catalog-capabilities'><h2>Catalog semantics and capabilities</h2>"
           "<table class='areas'><tr><th>area</th><th>outcome</th><th>checks</th></tr>" + rows + "</table>")
    if caps:
        out += ("<table class='capabilities'><tr><th>capability</th><th>supported</th><th>learnt from</th>"
                "<th>observation</th></tr>" + caps + "</table>")
    return out + "</section>"
