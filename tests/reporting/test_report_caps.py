"""The report's trimming (how much evidence a result keeps) never changes a field's type, and every report writer
runs over results that hit every cap.

Issue 30, item 1: `ctk run ... -- -k 5xx-not-stored` ended with ``AttributeError: 'str' object has no attribute
'items'`` in ``infer_profile``: from the third finding of one kind, ``cap_details`` replaced the small ``profiles``
dict by a "[cut ...]" string, and conformance.json was left 0 bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctk.core.exchange import Exchange
from ctk.core.verdicts import Status, Verdict
from ctk.reporting import model
from ctk.reporting.model import RunReport, cap_details

PROFILES = {"spec": "fail", "design": "fail"}


def _exchange(i: int, status: int | None, body_len: int = 2000) -> dict[str, Any]:
    return Exchange(method="POST", url=f"http://127.0.0.1:8181/v1/ns/tables/t{i}",
                    request_headers={"Idempotency-Key": f"019b1a2c-0000-7000-8000-{i:012d}"},
                    request_body=json.dumps({"name": f"t{i}", "pad": "x" * body_len}), status=status,
                    response_body=json.dumps({"error": {"code": status, "type": "ServiceFailure",
                                                        "message": "y" * body_len}}),
                    error=None if status else "timeout: ReadTimeout: timed out", label=f"attempt {i}").to_dict()


def _details(size: int) -> dict[str, Any]:
    """Details with every JSON type, a few large values and the small ones the reports read."""
    return {"profiles": dict(PROFILES), "rule_broken": True, "rests_on": "the merged spec: " + "r" * 120,
            "executions": 2, "ratio": 0.5, "nothing": None, "replay_headers": {"Idempotency-Key-Replayed": "true"},
            "history": [{"op": "append", "value": i, "note": "h" * 40} for i in range(size // 50)],
            "statuses": {str(500 + i): i for i in range(size // 20)},
            "nested": {"inner": ["z" * (size // 4)], "flag": False, "deep": {"text": "q" * (size // 4)}},
            "log": "l" * size}


def _types(value: Any) -> Any:
    """The type skeleton of a JSON value: dict keys map to their skeletons, lists to their items' type set."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return ("list", frozenset(type(v).__name__ for v in value))
    return type(value).__name__


def _same_types(before: Any, after: Any, where: str = "details") -> None:
    """Every field kept in ``after`` has the type it has in ``before`` (dicts: key by key; lists: item types)."""
    assert type(after) is type(before), f"{where}: {type(before).__name__} became {type(after).__name__}"
    if isinstance(before, dict):
        for k, v in after.items():
            if k in before:
                _same_types(before[k], v, f"{where}.{k}")
    elif isinstance(before, list):
        kinds = {type(v).__name__ for v in before}
        assert {type(v).__name__ for v in after} <= kinds, where
        for b, a in zip(before, after):
            _same_types(b, a, f"{where}[]")


def _capped_report() -> RunReport:
    rep = RunReport.begin("http://127.0.0.1:8181", options={"timeout": 10.0})
    big = [_exchange(i, 503 if i % 2 else None) for i in range(model.FINDING_EXCHANGES + 4)]
    # the same finding on five endpoints: the third on are repeats (FULL_EVIDENCE_PER_KIND)
    for i, ep in enumerate(("createTable", "updateTable", "createNamespace", "createView", "renameTable")):
        rep.add(Verdict(
            "REPLAY-03", Status.FAIL, "expected: a 5xx is not stored\nhappened: the retry with the same key answered "
            "503 (the catalog fails before persisting): the retry with the same key answered 503 " + "m" * 3000,
            endpoint=ep, behaviour="5xx-not-stored", classification="5xx replayed", exchanges=big,
            details=_details(model.FINDING_DETAILS * 2)), f"t::five[{ep}]")
    rep.add(Verdict.ok("INFLIGHT-02", "classified, not judged under the spec profile: 409 without subtype",
                       endpoint="updateTable", behaviour="in-flight-duplicate", classification="plain 409",
                       exchanges=big, details={**_details(model.OTHER_DETAILS * 2),
                                               "profiles": {"spec": "pass", "design": "deviation"}}), "t::cls")
    rep.add(Verdict.inconclusive("OCC-01", "a setup step failed, so the requirement could not be exercised: "
                                 "createTable answered no answer (timeout: ReadTimeout: timed out)",
                                 exchanges=big, details=_details(model.OTHER_DETAILS * 2)), "t::occ")
    rep.add(Verdict.unsupported("RECON-02", "no control API", needs="--ctk-db-link", exchanges=big,
                                details=_details(model.OTHER_DETAILS * 2)), "t::recon")
    rep.finish()
    return rep


def test_cap_details_keeps_every_type_and_the_small_fields():
    """The reproduction: details of a repeated finding (limit REPEAT_DETAILS) kept ``profiles`` a dict."""
    for limit in (model.REPEAT_DETAILS, model.OTHER_DETAILS, model.FINDING_DETAILS, 50, 0):
        before = _details(5000)
        after = cap_details(json.loads(json.dumps(before)), limit)
        _same_types(before, after)
        assert after["profiles"] == PROFILES and after["rule_broken"] is True and after["executions"] == 2
        assert after["replay_headers"] == before["replay_headers"]
        kept = {k: v for k, v in after.items() if k != model.CUT_NOTE}
        assert len(json.dumps(kept)) < len(json.dumps(before)) // 4, limit
        assert set(after[model.CUT_NOTE]) >= {"log", "history"}, after[model.CUT_NOTE]
    small = {"a": 1, "b": "x"}
    assert cap_details(small, 1000) is small


def test_the_third_finding_of_a_kind_keeps_its_profiles_and_every_writer_runs(tmp_path):
    """Every report writer over results that hit every cap: conformance.json (and loading it back),
    conformance.html, junit statistics, the behaviour profile, root causes, ``ctk report``, the terminal."""
    from ctk.plugin.options import CtkOptions
    from ctk.plugin.reports import VerdictCollector
    from ctk.reporting.behaviour import behaviour_profile, infer_profile
    from ctk.reporting.compare import load_runs, write_matrix
    from ctk.reporting.conformance import write_conformance
    from ctk.reporting.junit import finish_junit, statistics, verdict_properties

    rep = _capped_report()
    findings = [r for r in rep.results if r.requirement == "REPLAY-03"]
    # every cap was hit
    assert [r.repeat for r in findings] == [False, False, True, True, True]
    assert all(r.exchanges_cut for r in rep.results)
    assert all(model.CUT_NOTE in r.details for r in rep.results)
    assert "[cut:" in findings[-1].message and len(findings[-1].message) < 700
    assert all("[cut:" in (x.get("response_body") or "") for r in rep.results for x in r.exchanges)
    for r in rep.results:
        _same_types(_details(10), r.details)
        assert isinstance(r.details["profiles"], dict)
    assert infer_profile(rep.results) == "spec"

    paths = write_conformance(rep, str(tmp_path))
    data = json.loads(Path(paths["json"]).read_text())
    assert len(data["results"]) == len(rep.results) and data["behaviour_profile"]["profile"] == "spec"
    html = Path(paths["html"]).read_text()
    assert 'id="root-causes"' in html and "REPLAY-03" in html
    back = RunReport.load(paths["json"])
    assert back.to_dict()["root_causes"] == data["root_causes"]
    assert behaviour_profile(back.results)["rows"]
    assert dict(statistics(back))["ctk.root_cause.1.rule"] == "5xx-stored"
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites><testsuite name="pytest"><testcase name="t"/></testsuite></testsuites>')
    assert finish_junit(str(junit), back) == 1 and "ctk.root_cause.1.rule" in junit.read_text()
    for r in back.results:
        assert verdict_properties(r.to_dict())
    other = tmp_path / "other.json"
    other.write_text(Path(paths["json"]).read_text())
    assert all(Path(p).read_text() for p in write_matrix(load_runs([paths["json"], str(other)]), str(tmp_path / "cmp")))

    c = VerdictCollector(CtkOptions())
    c.results = [(r.to_dict(), r.nodeid, 0.0, r.outcome) for r in rep.results]
    written = c.write(str(tmp_path / "terminal"))
    assert not c.errors and json.loads(Path(written[0]).read_text())["results"]
    lines = [text for text, _ in c.final_lines(1)]
    assert any("REPLAY-03" in ln for ln in lines) and lines[-1].startswith("exit 1")


def test_an_older_report_with_cut_strings_still_loads(tmp_path):
    """conformance.json files written before the fix carry "[cut ...]" strings where dicts were: the readers
    take them as absent instead of crashing."""
    from ctk.reporting.behaviour import behaviour_profile, infer_profile, profile_differences
    from ctk.reporting.html import render_conformance

    rep = _capped_report()
    data = rep.to_dict()
    for r in data["results"]:
        r["details"] = {k: "[cut: 2 items, 40 characters not kept in the report]" for k in r["details"]}
    old = RunReport.from_dict(data)
    assert infer_profile(old.results) is None and profile_differences(old.results) == []
    assert behaviour_profile(old.results)["rows"] and render_conformance(old)
    json.loads(old.to_json())


def test_save_never_leaves_an_empty_file(tmp_path, monkeypatch):
    """A report that cannot be serialised leaves the previous file (or none), never 0 bytes."""
    rep = _capped_report()
    path = tmp_path / "conformance.json"
    rep.save(str(path))
    before = path.read_text()

    def broken(*a: Any, **k: Any) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(RunReport, "to_json", broken)
    try:
        rep.save(str(path))
    except RuntimeError:
        pass
    assert path.read_text() == before


def test_a_report_that_cannot_be_serialised_still_leaves_the_verdicts(tmp_path, monkeypatch):
    """The run's end (VerdictCollector.write): a report writer that crashes leaves conformance.json with every
    verdict and a "report problem" line, not 0 bytes and a traceback."""
    from ctk.plugin.options import CtkOptions
    from ctk.plugin.reports import VerdictCollector

    rep = _capped_report()
    c = VerdictCollector(CtkOptions())
    c.results = [(r.to_dict(), r.nodeid, 0.0, r.outcome) for r in rep.results]

    def broken(*a: Any, **k: Any) -> Any:
        raise AttributeError("'str' object has no attribute 'items'")

    monkeypatch.setattr(model, "behaviour_profile", broken)
    [path] = c.write(str(tmp_path))
    assert len(json.loads(Path(path).read_text())["results"]) == len(rep.results)
    assert any("AttributeError" in e for e in c.errors)
