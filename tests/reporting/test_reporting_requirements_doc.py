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


def test_markdown_lists_every_behaviour_in_column_order_with_its_check():
    import re

    from ctk.core.behaviours import Behaviour
    from ctk.reporting.requirements_doc import render_markdown

    text = render_markdown().split("## Behaviours", 1)[1]
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+) \| (\w+) \| ([^|]*) \|$", text, flags=re.M)
    assert [r[0] for r in rows] == [b.value for b in Behaviour]
    by = {r[0]: r for r in rows}
    assert by["finalized-duplicate"][3].strip() == "REPLAY-01" and by["replay-original-state"][3].strip() == "REPLAY-05"
    assert by["lost-answer"][1].strip() == Behaviour.LOST_ANSWER.display and by["lost-answer"][3].strip() == "REPLAY-04"
