"""`ctk report` compares two or more runs: a single file is refused with the reason, nothing written."""

from __future__ import annotations

from ctk.cli import main


def test_report_demands_two_files(tmp_path, capsys):
    one = tmp_path / "conformance.json"
    one.write_text("{}")
    out = tmp_path / "compare.html"
    assert main(["report", str(one), "-o", str(out)]) == 2
    assert "give two or more conformance.json files" in capsys.readouterr().err
    assert not out.exists()
