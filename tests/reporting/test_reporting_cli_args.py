"""`ctk report` writes the matrix into a directory: a file that is not a run report is refused, nothing written."""

from __future__ import annotations

from ctk.cli import main


def test_report_refuses_what_is_not_a_run(tmp_path, capsys):
    one = tmp_path / "conformance.json"
    one.write_text("{}")
    out = tmp_path / "matrix"
    assert main(["report", str(one), "-o", str(out)]) == 2
    assert "not a ctk conformance report" in capsys.readouterr().err
    assert not out.exists()
