import json

from reporting_sample import build_sample
from reporting_cli import ctk as main
from ctk.core.requirements import REQUIREMENTS
from ctk.core.verdicts import Verdict
from ctk.reporting.compare import compare_rows, load_runs
from ctk.reporting.conformance import write_conformance
from ctk.reporting.model import RunReport


def _second_run():
    rep = RunReport.begin("http://127.0.0.1:9999", name="other-catalog")
    rep.add(Verdict.ok("REPLAY-04", endpoint="createTable", behaviour="lost-answer-503", classification="replayed 200"), "a")
    rep.add(Verdict.ok("INFLIGHT-01", endpoint="createTable", behaviour="in-flight-duplicate", classification="409"), "b")
    rep.add(Verdict.ok("OCC-01"), "c")
    rep.finish()
    return rep


def _write_two(tmp_path):
    a = write_conformance(build_sample(), str(tmp_path / "a"))["json"]
    b = write_conformance(_second_run(), str(tmp_path / "b"))["json"]
    return a, b


def test_compare_two_runs_side_by_side(tmp_path, capsys):
    a, b = _write_two(tmp_path)
    out = tmp_path / "cmp" / "compare.html"
    assert main(["report", a, b, "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    page = out.read_text()
    assert "reference (deviation: no-inflight)" in page and "other-catalog" in page
    for rid in REQUIREMENTS:
        assert f"<b>{rid}</b>" in page
    # REPLAY-04: FAIL in run A, PASS in run B, marked as differing.
    row = page[page.index("<b>REPLAY-04</b>"):]
    row = row[: row.index("</tr>")]
    assert "≠" in row and row.index("FAIL") < row.index("PASS")
    assert "<script" not in page and "hunter2pw" not in page


def test_compare_rows_data(tmp_path):
    a, b = _write_two(tmp_path)
    runs = load_runs([a, b])
    data = compare_rows(runs)
    reqs = dict(data["requirements"])
    assert reqs["REPLAY-04"] == ["fail", "pass"]
    assert reqs["OCC-01"] == [None, "pass"]
    assert reqs["KEY-01"] == [None, None]
    cells = dict(data["matrix"])
    assert cells[("createTable", "in-flight-duplicate")][0]["classifications"] == ["wait-and-replay"]
    assert cells[("createTable", "in-flight-duplicate")][1]["classifications"] == ["409"]
    assert cells[("updateTable", "terminal-4xx-replayed")][1] is None


def test_same_target_labels_are_made_unique(tmp_path):
    a = write_conformance(_second_run(), str(tmp_path / "x"))["json"]
    b = write_conformance(_second_run(), str(tmp_path / "y"))["json"]
    labels = [label for label, _ in load_runs([a, b])]
    assert len(set(labels)) == 2 and all(l.startswith("other-catalog") for l in labels)


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    a, _ = _write_two(tmp_path)
    assert main(["report", a, str(tmp_path / "nope.json"), "-o", str(tmp_path / "c.html")]) == 2
    err = capsys.readouterr().err
    assert "nope.json: no such file" in err
    assert not (tmp_path / "c.html").exists()


def test_non_conformance_json_is_a_clear_error(tmp_path, capsys):
    a, _ = _write_two(tmp_path)
    other = tmp_path / "junit.json"
    other.write_text(json.dumps({"tests": 3}))
    assert main(["report", a, str(other), "-o", str(tmp_path / "c.html")]) == 2
    assert "junit.json: not a ctk conformance report" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert main(["report", str(broken), a, "-o", str(tmp_path / "c.html")]) == 2
    assert "broken.json: not a ctk conformance report (invalid JSON" in capsys.readouterr().err
