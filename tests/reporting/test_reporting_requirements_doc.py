import pathlib

from reporting_cli import ctk as main
from ctk.core.requirements import REQUIREMENTS, markdown_table
from ctk.reporting.requirements_doc import render_markdown

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "requirements.md"


def test_docs_requirements_md_is_up_to_date():
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/requirements.md is out of date: run `ctk requirements --markdown -o docs/requirements.md`")


def test_markdown_lists_every_requirement_and_explains_levels_and_verdicts():
    text = render_markdown()
    assert markdown_table() in text
    for rid in REQUIREMENTS:
        assert f"| {rid} |" in text
    for word in ("MUST", "SHOULD", "MAY", "pass", "fail", "deviation", "unsupported", "inconclusive"):
        assert word in text
    assert "fail > deviation > inconclusive > pass > unsupported" in text


def test_cli_text_and_markdown(tmp_path, capsys):
    assert main(["requirements"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == len(REQUIREMENTS) and "LIFE-02" in out and "subject client" in out
    assert main(["requirements", "--markdown"]) == 0
    assert capsys.readouterr().out == render_markdown()
    target = tmp_path / "req.md"
    assert main(["requirements", "--markdown", "-o", str(target)]) == 0
    assert target.read_text() == render_markdown()
