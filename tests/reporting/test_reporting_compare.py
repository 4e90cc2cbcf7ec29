"""`ctk report RUN.json ... -o DIR`: the compatibility matrix of several catalogs (issue 35 item 3), rendered from
their records alone, as HTML and Markdown; Chromium reads its cells as a person would."""

import json
import re
from pathlib import Path

import pytest

from reporting_sample import build_sample
from reporting_cli import ctk as main
from ctk.core.requirements import REQUIREMENTS
from ctk.core.verdicts import Verdict
from ctk.reporting.compare import load_runs, matrix_rows
from ctk.reporting.conformance import write_conformance
from ctk.reporting.model import RunReport


def _second_run():
    rep = RunReport.begin("http://127.0.0.1:9999", name="other-catalog")
    rep.catalog_version = "1.2.3"
    rep.add(Verdict.ok("REPLAY-04", endpoint="createTable", behaviour="lost-answer-503", classification="replayed 200"), "a")
    rep.add(Verdict.ok("INFLIGHT-01", endpoint="createTable", behaviour="in-flight-duplicate", classification="409"), "b")
    rep.add(Verdict.ok("OCC-01"), "c")
    rep.known_gaps = {"file": "known-gaps.yaml", "sha256": "0" * 64, "entries": [
        {"check": None, "requirement": "OCC-01", "endpoint": None, "reason": "REASON-OF-THE-GAP", "link": None,
         "state": "known"}]}
    rep.certification = {"requested": True, "certified": False, "why_not": ["a known-gaps file was given"],
                         "kit_version": rep.kit_version, "spec_version": None, "spec_sha256": None,
                         "target": "http://127.0.0.1:9999", "date": rep.started_at}
    rep.finish()
    return rep


def _write_two(tmp_path):
    a = write_conformance(build_sample(), str(tmp_path / "a"))["json"]
    b = write_conformance(_second_run(), str(tmp_path / "b"))["json"]
    return a, b


def test_matrix_of_two_catalogs(tmp_path, capsys):
    a, b = _write_two(tmp_path)
    out = tmp_path / "matrix"
    assert main(["report", a, b, "-o", str(out)]) == 0
    assert capsys.readouterr().out.split() == [str(out / "matrix.html"), str(out / "matrix.md")]
    page = (out / "matrix.html").read_text()
    assert "reference (deviation: no-inflight)" in page and "other-catalog" in page and "1.2.3" in page
    for rid in REQUIREMENTS:
        assert f'data-requirement="{rid}"' in page
    # REPLAY-04: FAIL in run A (linked to its finding), PASS in run B, marked as differing
    row = re.search(r'<tr data-requirement="REPLAY-04">(.*?)</tr>', page, re.S).group(1)
    assert "≠" in row and row.index("FAIL") < row.index("PASS")
    assert 'href="../a/conformance.html#finding-1"' in row and 'href="../b/conformance.html#req-REPLAY-04"' in row
    assert "REASON-OF-THE-GAP" in page and "not certified: a known-gaps file was given" in page
    assert "<script" not in page and "hunter2pw" not in page
    md = (out / "matrix.md").read_text()
    assert "| REPLAY-04 | MUST | [FAIL](../a/conformance.html#finding-1) | [PASS](../b/conformance.html#req-REPLAY-04) |" in md
    assert "REASON-OF-THE-GAP" in md


def test_one_run_is_a_matrix_of_one(tmp_path):
    a, _ = _write_two(tmp_path)
    assert main(["report", a, "-o", str(tmp_path / "one")]) == 0
    assert (tmp_path / "one" / "matrix.md").read_text().count("[FAIL]") >= 1


def test_rows_are_grouped_by_area(tmp_path):
    a, b = _write_two(tmp_path)
    areas = dict(matrix_rows(load_runs([a, b]), str(tmp_path)))
    for rid, req in REQUIREMENTS.items():
        assert rid in [row[0] for row in areas[req.area]], rid


def test_same_target_labels_are_made_unique(tmp_path):
    a = write_conformance(_second_run(), str(tmp_path / "x"))["json"]
    b = write_conformance(_second_run(), str(tmp_path / "y"))["json"]
    labels = [label for label, _, _ in load_runs([a, b])]
    assert len(set(labels)) == 2 and all(label.startswith("other-catalog") for label in labels)


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    a, _ = _write_two(tmp_path)
    assert main(["report", a, str(tmp_path / "nope.json"), "-o", str(tmp_path / "c")]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_non_conformance_json_is_a_clear_error(tmp_path, capsys):
    a, _ = _write_two(tmp_path)
    other = tmp_path / "junit.json"
    other.write_text(json.dumps({"tests": 3}))
    assert main(["report", a, str(other), "-o", str(tmp_path / "c")]) == 2
    assert "junit.json: not a ctk conformance report" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert main(["report", str(broken), a, "-o", str(tmp_path / "c")]) == 2
    assert "broken.json: not a ctk conformance report (invalid JSON" in capsys.readouterr().err


READ_CELLS = """<script>
window.addEventListener("load", () => {
  const heads = [...document.querySelectorAll("#catalog-matrix thead tr")].map(
    tr => [...tr.querySelectorAll("th")].map(th => th.innerText.trim()));
  const row = document.querySelector('tr[data-requirement="REPLAY-04"]');
  const cells = [...row.querySelectorAll("td")].slice(4).map(td => {
    const a = td.querySelector("a"), r = td.getBoundingClientRect();
    return {text: td.innerText.trim(), href: a.getAttribute("href"), visible: r.width > 20 && r.height > 10};
  });
  const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = JSON.stringify({heads, cells});
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.chromium
def test_matrix_cells_read_in_chromium(tmp_path):
    from browser import measured

    a, b = _write_two(tmp_path)
    assert main(["report", a, b, "-o", str(tmp_path / "m")]) == 0
    m = measured(tmp_path, tmp_path / "m" / "matrix.html", READ_CELLS)
    catalogs = m["heads"][0]
    assert "reference (deviation: no-inflight)" in catalogs and "other-catalog" in catalogs, m["heads"]
    assert any(h[0] == "certified" and "not certified: a known-gaps file was given" in h for h in m["heads"])
    assert [c["text"] for c in m["cells"]] == ["FAIL", "PASS"], m["cells"]
    assert all(c["visible"] for c in m["cells"]), m["cells"]
    target = (tmp_path / "m" / m["cells"][0]["href"].split("#")[0]).resolve()
    assert target == Path(a).parent.resolve() / "conformance.html" and target.exists()
    assert 'id="finding-1"' in target.read_text()
