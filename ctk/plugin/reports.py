"""Collects every verdict of the run (on the xdist controller too) and writes the reports at the end:
reports/conformance.json + conformance.html (ctk.reporting), statistics in junit.xml and the terminal."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Any

import pytest

from ctk.plugin.options import CtkOptions

STATUSES = ("pass", "fail", "deviation", "unsupported", "inconclusive", "error")


class VerdictCollector:
    def __init__(self, options: CtkOptions):
        self.options = options
        self.results: list[tuple[dict[str, Any], str, float, str]] = []   # verdict dict, nodeid, duration, outcome
        self.target_url: str | None = options.catalog_url
        self.discovery: Any = None
        self.server_info: dict[str, Any] = {}
        self.written: list[str] = []
        self.errors: list[str] = []
        self.report: Any = None                           # the RunReport (exits.decide reads it)
        self.record: dict[str, Any] | None = None         # its record, made once: every page renders it
        self.started_at = _now_iso()                       # when the run began (the plugin is configured)
        self.unusable: str | None = None                   # why the target could not be used at all
        self.interrupted = False                           # Ctrl-C / SIGTERM: partial results
        self.selection: dict[str, Any] = {}                # -k / -m / paths / deselected: a subset run
        self.cleanup_problems: list[str] = []
        self.fail_on_hits: dict[str, int] = {}
        self.undecided_musts: list[str] = []
        self.exit_code: int | None = None
        self.judging: dict[str, Any] = {}                  # --ctk-profile, --ctk-fail-on, workers (run_judging)
        self.usage_problems: list[str] = []                # a worker found the known-gaps file wrong (exit 4)

    def add_report(self, report: pytest.TestReport) -> None:
        for d in getattr(report, "ctk_verdicts", None) or []:
            self.results.append((d, report.nodeid, float(report.duration or 0.0), report.outcome))
        info = getattr(report, "ctk_target", None)
        if info:
            self.target_url = self.target_url or info.get("url")
            if info.get("discovery") and self.discovery is None:
                self.discovery = info["discovery"]
            if info.get("server_info"):
                self.server_info.update(info["server_info"])

    def counts(self) -> Counter:
        return Counter(d.get("status") for d, *_ in self.results)

    def build(self) -> Any:
        from ctk.reporting.model import RunReport

        rep = RunReport.begin(self.target_url, name=self.options.catalog_name,
                              options={**_options_dict(self.options), **self.judging}, started_at=self.started_at)
        rep.catalog_version = self.options.catalog_version
        rep.spec = spec_record(self.options.openapi_spec)
        rep.problem = self.unusable
        rep.state = "unusable-target" if self.unusable else ("interrupted" if self.interrupted else "complete")
        rep.selection = dict(self.selection)
        rep.cleanup_problems = list(self.cleanup_problems)
        if self.server_info:
            rep.set_server_info(self.server_info)
        if self.discovery is not None:
            rep.set_discovery(self.discovery)
        for d, nodeid, duration, outcome in self.results:
            try:
                rep.add(d, nodeid, duration, outcome=outcome)
            except (ValueError, KeyError, TypeError) as exc:
                self.errors.append(f"verdict of {nodeid} not recorded: {exc}")
        rep.finish()
        self._judge_gaps(rep)
        self.report = rep
        return rep

    def _judge_gaps(self, rep: Any) -> None:
        """--ctk-known-gaps: each result against the file (conformance.json known_gaps, new_findings);
        the certification record (requested or not: conformance.json certification)."""
        from ctk.reporting.certification import certification
        from ctk.reporting.known_gaps import judge

        gaps = self.options.known_gaps
        if gaps is not None:
            rep.gaps_judged = judge(gaps, rep.results)
            rep.known_gaps, rep.new_findings = rep.gaps_judged.record(rep.results)
        declared = {c.value: v for c, v in self.options.capabilities.items()}
        rep.certification = certification(rep, self.options.certify, len(gaps.entries) if gaps else 0, declared,
                                          self.options.openapi_spec)

    def write(self, directory: str) -> list[str]:
        os.makedirs(directory, exist_ok=True)
        try:
            rep = self.build()
        except Exception as exc:  # noqa: BLE001
            self.errors.append(f"run report not built: {type(exc).__name__}: {exc}")
            return self._write_fallback(directory)
        from ctk.reporting import write_conformance

        try:
            self.record = rep.to_dict()
            out = write_conformance(self.record, directory)
            paths = [str(p) for p in out] if isinstance(out, (list, tuple)) else (
                [str(v) for v in out.values()] if isinstance(out, dict) else [])
            self.written = paths or [os.path.join(directory, "conformance.json"),
                                     os.path.join(directory, "conformance.html")]
            return self.written
        except Exception as exc:  # noqa: BLE001
            self.errors.append(f"write_conformance failed: {type(exc).__name__}: {exc}")
        path = os.path.join(directory, "conformance.json")
        try:
            rep.save(path)
        except Exception as exc:  # noqa: BLE001 - the verdicts themselves are still written
            self.errors.append(f"run report not serialised: {type(exc).__name__}: {exc}")
            return self._write_fallback(directory)
        self.written = [path]
        return self.written

    def _write_fallback(self, directory: str) -> list[str]:
        path = os.path.join(directory, "conformance.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"target": self.target_url, "results": [
                {**d, "nodeid": n, "duration": t, "outcome": o} for d, n, t, o in self.results]}, f, indent=2,
                default=str)
        self.written = [path]
        return self.written

    def junit_properties(self) -> list[tuple[str, str]]:
        c = self.counts()
        props = [(f"ctk.verdicts.{s}", str(c.get(s, 0))) for s in STATUSES]
        props.append(("ctk.verdicts.total", str(sum(c.values()))))
        if self.target_url:
            props.append(("ctk.target", _safe_url(self.target_url)))
        props.append(("ctk.strict", str(self.options.strict).lower()))
        return props

    def summary_lines(self) -> list[str]:
        c = self.counts()
        total = sum(c.values())
        lines = [f"ctk verdicts ({total}): " + ", ".join(f"{c.get(s, 0)} {s}" for s in STATUSES)]
        if self.interrupted:
            lines.append("run interrupted: the results are partial")
        if self.selection:
            lines.append("subset run (" + ", ".join(f"{k}={v}" for k, v in self.selection.items())
                         + "): no overall verdict for the requirements it did not run")
        by_req: dict[str, Counter] = {}
        for d, *_ in self.results:
            by_req.setdefault(d.get("requirement", "?"), Counter())[d.get("status")] += 1
        for rid in sorted(by_req):
            cc = by_req[rid]
            lines.append(f"  {rid:<12} " + ", ".join(f"{n} {s}" for s, n in sorted(cc.items())))
        lines += self.undecided_lines()
        return lines

    def undecided_lines(self, most: int = 5) -> list[str]:
        """Why checks were not decided: the distinct reasons of the inconclusive verdicts (first line, run-unique
        names folded), most frequent first, with the requirements they held up. pytest shows skip reasons only
        with -rs; a user must not have to open the report to learn that, say, a storage setting is missing."""
        reasons: dict[str, tuple[str, set[str], int]] = {}
        for d, *_ in self.results:
            if d.get("status") != "inconclusive":
                continue
            text = (d.get("message") or "").strip().splitlines()
            text = text[0] if text else "(no reason given)"
            fold = _RUN_UNIQUE.sub("<name>", text)
            shown, reqs, n = reasons.get(fold, (text, set(), 0))
            reqs.add(d.get("requirement", "?"))
            reasons[fold] = (shown, reqs, n + 1)
        if not reasons:
            return []
        ranked = sorted(reasons.values(), key=lambda r: (-r[2], sorted(r[1])))
        lines = ["inconclusive, because:"]
        for shown, reqs, n in ranked[:most]:
            cut = shown if len(shown) <= 400 else shown[:400] + " ..."
            lines.append(f"  {n}x {', '.join(sorted(reqs))}: {cut}")
        if len(ranked) > most:
            lines.append(f"  ... and {len(ranked) - most} other reason(s): see conformance.html")
        return lines


    def final_lines(self, exit_code: int, cleanup_problems: list[str] | None = None) -> list[tuple[str, dict]]:
        """The last lines of the run, each with its terminal markup: the overall verdict and its counts, the
        root causes, what was left undecided and what would decide it, where the reports are, and what the exit
        code means."""
        from ctk.plugin import exits
        from ctk.reporting.capabilities import terminal_lines as capability_lines
        from ctk.reporting.html import overall_text
        from ctk.reporting.judged import judged_by
        from ctk.reporting.model import as_record

        out: list[tuple[str, dict]] = []
        rep = self.record if self.record is not None else (
            as_record(self.report) if self.report is not None else None)
        if rep is None:
            out.append((self.summary_lines()[0], {}))
        else:
            overall = rep.get("overall")
            colour = {"fail": "red", "error": "red", "deviation": "yellow", "inconclusive": "yellow",
                      "pass": "green"}.get(overall or "", "yellow")
            judged = judged_by(rep.get("options"))
            out.append((f"ctk: {overall_text(rep)}" + (f" [judged: {judged}]" if judged else ""),
                        {colour: True, "bold": True}))
            out += gap_lines(self.report)
            k = rep.get("kinds") or {}
            n, tests = len(rep.get("results") or []), rep.get("tests")
            of = f", from {tests} tests" if isinstance(tests, int) and tests != n else ""
            out.append((f"checks ({n}{of}): {k['pass']} pass, "
                        f"{k['classified']} classified (pass), "
                        f"{k['fail']} fail, {k['deviation']} deviation, {k['error']} error, {k['inconclusive']} "
                        f"inconclusive, {k['needs']} not decided by this setup, {k['not-applicable']} not applicable",
                        {}))
            for line in capability_lines(rep.get("catalog_capabilities") or {}):
                out.append((line, {}))
            if self.interrupted:
                out.append(("run interrupted: the results are partial", {"yellow": True}))
            if self.selection:
                out.append(("subset run (" + ", ".join(f"{a}={b}" for a, b in self.selection.items())
                            + "): no overall verdict for the requirements it did not run", {}))
            causes = rep.get("root_causes") or []
            if causes:
                out.append((f"root causes ({len(causes)}; fix the first, then run again):", {"bold": True}))
                for i, rc in enumerate(causes[:ROOT_CAUSES_SHOWN], 1):
                    out.append((f"  {i}. {rc.get('line')}", {"red": rc.get("status") in ("fail", "error"),
                                                             "yellow": rc.get("status") == "deviation"}))
                if len(causes) > ROOT_CAUSES_SHOWN:
                    out.append((f"  ... and {len(causes) - ROOT_CAUSES_SHOWN} more in conformance.html", {}))
            for note in rep.get("attention") or []:
                out.append((f"needs attention: {note['count']}x {note['what']} ("
                            + ", ".join(f"{k} x{v}" for k, v in note["requirements"].items()) + ")", {"yellow": True}))
            groups = rep.get("undecided") or []
            if groups:
                out.append(("undecided, and what would decide it:", {"bold": True}))
                for g in groups[:UNDECIDED_SHOWN]:
                    reqs = ", ".join(sorted(g["requirements"]))
                    must = " (a MUST)" if g["must"] else ""
                    if g["kind"] == "needs":
                        text = f"needs {g['what']}"
                    else:
                        what = " ".join(str(g["what"]).split())
                        text = "inconclusive: " + (what if len(what) <= 300 else what[:300] + " ...")
                        if g.get("hint") and g["hint"] not in what:
                            text += f" -> {g['hint']}"
                    if g.get("option") and g.get("must_checks"):
                        text += f" ({g['option']} would decide {_checks(g['must_checks'], 'MUST check')})"
                    out.append((f"  {g['count']}x {reqs}{must}: {text}", {"yellow": g["must"]}))
                if len(groups) > UNDECIDED_SHOWN:
                    out.append((f"  ... and {len(groups) - UNDECIDED_SHOWN} more reasons in conformance.html", {}))
        for p in cleanup_problems or []:
            out.append((f"cleanup problem: {p}", {"yellow": True}))
        if self.written:
            brief = rep is not None and any(r.get("status") in ("fail", "deviation", "error")
                                            for r in rep.get("results") or [])
            out.append(("reports: " + ", ".join(self.written)
                        + (" (every finding's evidence; the failures above are in brief)" if brief else ""), {}))
        for err in self.errors:
            out.append((f"report problem: {err}", {"red": True}))
        live = self.report                                 # the RunReport: the known-gaps judgement lives on it
        counted = {st: n for st, n in self.fail_on_hits.items() if st not in ("new", "stale")}
        if counted:
            gaps_judged = getattr(live, "gaps_judged", None)
            known = set(gaps_judged.covered) if gaps_judged is not None else set()
            out.append(("--ctk-fail-on counted: " + ", ".join(f"{n} {st}" for st, n in counted.items()),
                        {"red": True}))
            hits = [(r.to_dict(), r.nodeid) for i, r in enumerate(live.results) if r.status in counted
                    and i not in known] if live is not None else [
                (d, nodeid) for d, nodeid, *_ in self.results if d.get("status") in counted]
            for d, nodeid in hits[:FAIL_ON_SHOWN]:
                reason = " ".join(str(d.get("message") or "").split("\n\nexchanges:")[0].split())
                out.append((f"  {str(d.get('status')).upper()} {d.get('requirement')} {nodeid}: {reason[:200]}", {}))
            if len(hits) > FAIL_ON_SHOWN:
                out.append((f"  ... and {len(hits) - FAIL_ON_SHOWN} more in conformance.html", {}))
        gaps = getattr(live, "gaps_judged", None) if live is not None else None
        if gaps is not None and self.fail_on_hits.get("new"):
            out.append((f"{_checks(self.fail_on_hits['new'], 'new finding')} (not in {gaps.gaps.path}) fail the run",
                        {"red": True}))
        if gaps is not None and self.fail_on_hits.get("stale"):
            out.append((f"--ctk-fail-on stale counted: {_checks(self.fail_on_hits['stale'], 'stale known gap')} "
                        f"(fixed: remove them from {gaps.gaps.path})", {"red": True}))
        cert = getattr(live, "certification", None) if live is not None else None
        if cert and cert.get("requested"):
            from ctk.reporting.certification import line as certification_line

            out.append((certification_line(cert), {"green" if cert.get("certified") else "red": True, "bold": True}))
        if self.undecided_musts and exit_code == exits.EXIT_MUST_UNDECIDED:
            out.append(("MUSTs left undecided: " + ", ".join(self.undecided_musts), {"yellow": True}))
        colour = "green" if exit_code == 0 else ("yellow" if exit_code == exits.EXIT_MUST_UNDECIDED else "red")
        out.append((f"exit {exit_code}: {exits.meaning(exit_code)} (docs/verdicts.md)", {colour: True, "bold": True}))
        return out


KNOWN_GAPS_SHOWN = 10


def gap_lines(rep: Any) -> list[tuple[str, dict]]:
    """--ctk-known-gaps in the verdict block, new findings first: each new finding (status, requirement, check),
    then how many findings the file explains (with each entry's reason), then each stale entry ("fixed: remove
    it from FILE")."""
    judged = getattr(rep, "gaps_judged", None)
    if judged is None:
        return []
    out: list[tuple[str, dict]] = []
    path = judged.gaps.path
    if judged.new:
        out.append((f"NEW findings ({len(judged.new)}; not in {path}: they fail the run):", {"red": True, "bold": True}))
        for i in judged.new[:KNOWN_GAPS_SHOWN]:
            r = rep.results[i]
            msg = " ".join(str(r.message or "").split("\n\nexchanges:")[0].split())
            on = f" on {r.endpoint}" if r.endpoint else ""
            out.append((f"  NEW {r.status.upper()} {r.requirement}{on} {r.nodeid}: {msg[:200]}", {"red": True}))
        if len(judged.new) > KNOWN_GAPS_SHOWN:
            out.append((f"  ... and {len(judged.new) - KNOWN_GAPS_SHOWN} more new findings in conformance.json "
                        "(new_findings)", {}))
    else:
        out.append((f"no new findings: every finding is a known gap of {path}", {"green": True}))
    per_entry: dict[int, int] = {}
    for at in judged.covered.values():
        per_entry[at] = per_entry.get(at, 0) + 1
    if per_entry:
        out.append((f"known gaps ({sum(per_entry.values())} finding(s) under {len(per_entry)} entr"
                     f"{'y' if len(per_entry) == 1 else 'ies'} of {path}; they do not fail the run):", {}))
        for at, n in sorted(per_entry.items())[:KNOWN_GAPS_SHOWN]:
            e = judged.gaps.entries[at]
            out.append((f"  {e.names()}: {n}x, known gap: {e.reason}" + (f" ({e.link})" if e.link else ""), {}))
        if len(per_entry) > KNOWN_GAPS_SHOWN:
            out.append((f"  ... and {len(per_entry) - KNOWN_GAPS_SHOWN} more entries in conformance.json "
                        "(known_gaps)", {}))
    for e in judged.stale():
        out.append((f"STALE known gap {e.names()} (line {e.line}): its checks pass now: fixed: remove it from "
                    f"{path}", {"yellow": True, "bold": True}))
    return out


#: where the run keeps its collector (pytest's config stash; ctk.plugin.state keeps the other per-run objects)
COLLECTOR_KEY = pytest.StashKey[VerdictCollector]()


ROOT_CAUSES_SHOWN = 5
UNDECIDED_SHOWN = 6
FAIL_ON_SHOWN = 5


class FinalSummary:
    """Registered on the process that collects the verdicts: after pytest's own end of session (its statistics
    line, "N failed, M passed in ...", also on the xdist controller), the kit's lines end the output."""

    def __init__(self, config: pytest.Config, collector: VerdictCollector) -> None:
        self.config, self.collector = config, collector

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int):
        result = yield
        try:
            self.write(int(session.exitstatus))
        except Exception as exc:  # noqa: BLE001 - the summary never hides the run's own end
            print(f"ctk: summary not written: {type(exc).__name__}: {exc}")
        return result

    def write(self, exit_code: int) -> None:
        from ctk.plugin.state import get_session

        if self.collector.unusable and self.collector.report is None:
            return    # said where it was found (ctk.pytest_plugin._check_target_first)
        if self.collector.usage_problems:    # the known-gaps file is wrong: no verdicts, the lines that are
            from ctk.plugin import exits

            tr = self.config.pluginmanager.get_plugin("terminalreporter")
            for problem in [*self.collector.usage_problems, f"exit {exits.EXIT_USAGE}: {exits.meaning(exits.EXIT_USAGE)}"]:
                if tr is not None:
                    tr.write_line(problem, red=True)
                else:
                    print(problem)
            return
        own = get_session(self.config)
        # every process's cleanup problems (an xdist worker's come through the collector, the controller has no
        # run namespace of its own): what was left is said in the verdict block, as in every report
        own_problems = list(getattr(own, "cleanup_problems", None) or []) if own is not None else []
        problems = list(dict.fromkeys([*self.collector.cleanup_problems, *own_problems]))
        lines = self.collector.final_lines(exit_code, problems)
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is None:
            for text, _ in lines:
                print(text)
            return
        tr.write_sep("=", "ctk verdict", bold=True)
        for text, markup in lines:
            tr.write_line(text, **markup)


# names the kit makes unique per run or per case (ctk_1a2b3c4d_gw0, occ_race_2_27c7f9): folded when reasons are grouped
_RUN_UNIQUE = re.compile(r"\b\w*?_[0-9a-f]{6,}(?:_\w+)?\b|\b\d{4,}\b")


def _checks(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _now_iso() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _safe_url(url: str) -> str:
    try:
        from ctk.reporting.model import redact_url

        return redact_url(url) or url
    except ImportError:
        return url


def run_judging(config: pytest.Config) -> dict[str, Any]:
    """How the run is judged and spread, from pytest's configuration (ctk.reporting.judged): the judging profile,
    the statuses --ctk-fail-on adds to the exit code, the xdist workers (0: one process)."""
    from ctk.core.requirements import active_profile
    from ctk.plugin import exits

    n = getattr(config.option, "numprocesses", None)
    return {"profile": active_profile(), "fail_on": sorted(exits.fail_on(config)),
            "workers": n if isinstance(n, int) else 0}


def spec_record(path: str | None) -> dict[str, Any]:
    """The OpenAPI document the run used (--openapi-spec, else the kit's): its file name, ``info.version`` and
    the sha256 of its bytes, for the record (a matrix tells runs judged by different documents apart)."""
    import hashlib

    from ctk.core.yamlfile import load_yaml
    from ctk.openapi import SpecError, default_spec_path

    try:
        where = path or str(default_spec_path())
        with open(where, "rb") as f:
            data = f.read()
    except (OSError, SpecError):
        return {}
    try:
        info = (load_yaml(data.decode("utf-8")) or {}).get("info") or {}
    except Exception:  # noqa: BLE001 - the hash stands without the version
        info = {}
    version = info.get("version") if isinstance(info, dict) else None
    return {"file": os.path.basename(where), "version": None if version is None else str(version),
            "sha256": hashlib.sha256(data).hexdigest()}


def _options_dict(o: CtkOptions) -> dict[str, Any]:
    from ctk.core.requirements import active_profile

    return {
        "profile": active_profile(), "fail_on": [], "workers": o.workers or 0,
        "spark": o.spark, "spark_master": o.spark_master,
        "catalog_url": o.catalog_url, "catalog_prefix": o.catalog_prefix, "warehouse": o.warehouse,
        "catalog_token": o.catalog_token, "catalog_credential": o.catalog_credential,
        "catalog_headers": {k: "<redacted>" for k in o.catalog_headers},
        "openapi_spec": o.openapi_spec, "scenarios": o.scenarios, "namespace_prefix": o.namespace_prefix,
        "timeout": o.timeout, "max_wait": o.max_wait, "strict": o.strict, "embedded": o.embedded,
        "catalog_name": o.catalog_name, "catalog_version": o.catalog_version,
        "capabilities": {c.value: v for c, v in o.capabilities.items()},
        "requirements": list(o.requirements), "examples": o.examples, "steps": o.steps, "seed": o.seed,
        "db_link": o.db_link,
        "known_gaps": o.known_gaps.path if o.known_gaps is not None else None, "certify": o.certify,
    }
