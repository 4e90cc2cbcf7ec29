import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from reporting_sample import build_sample
from ctk.core.verdicts import Verdict
from ctk.reporting.junit import add_junit_statistics, finish_junit, verdict_properties
from ctk.reporting.model import RunReport

INNER = '''
import pytest
from ctk.core.verdicts import Verdict
from ctk.reporting.junit import attach_verdict, record_verdict

V = {"ok": Verdict.ok("REPLAY-01", endpoint="createTable", behaviour="finalized-duplicate",
                      classification="replayed 200"),
     "bad": Verdict.broken("KEY-01", "accepted", endpoint="updateTable", behaviour="malformed-key",
                           classification="200 <&> accepted")}

@pytest.mark.parametrize("name", list(V))
def test_verdict(request, name):
    attach_verdict(request.node, V[name])

def test_fixture(record_property):
    record_verdict(record_property, Verdict.ok("KEY-01"))
'''


def _run_inner(tmp_path, family):
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "test_inner.py").write_text(INNER)
    (tmp_path / "inner" / "pytest.ini").write_text("[pytest]\n")
    junit = tmp_path / f"junit-{family}.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:ctk", "-p", "no:randomly",
         "-c", str(tmp_path / "inner" / "pytest.ini"), "--rootdir", str(tmp_path / "inner"),
         f"--junitxml={junit}", "-o", f"junit_family={family}", str(tmp_path / "inner")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return junit


def _props(el):
    p = el.find("properties")
    return {} if p is None else {x.get("name"): x.get("value") for x in p.findall("property")}


def test_verdict_properties():
    props = dict(verdict_properties(Verdict.broken("LIFE-01", "forgotten", endpoint="updateTable",
                                                   behaviour="lifetime", classification="forgotten")))
    # the requirement's source is the requirement's (conformance.json, docs/requirements.md), not repeated per test
    assert props == {"ctk.requirement": "LIFE-01", "ctk.level": "SHOULD", "ctk.verdict": "deviation",
                     "ctk.classification": "forgotten", "ctk.endpoint": "updateTable", "ctk.behaviour": "lifetime"}
    assert dict(verdict_properties(Verdict.unsupported("REPLAY-03", "x", needs="--ctk-db-link")))["ctk.needs"] \
        == "--ctk-db-link"
    assert "ctk.endpoint" not in dict(verdict_properties(Verdict.ok("KEY-01")))


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_properties_and_statistics_in_real_pytest_junit(tmp_path, family):
    junit = _run_inner(tmp_path, family)
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert _props(cases["test_verdict[ok]"])["ctk.behaviour"] == "finalized-duplicate"
    bad = _props(cases["test_verdict[bad]"])
    assert bad["ctk.verdict"] == "deviation" and bad["ctk.classification"] == "200 <&> accepted"
    assert _props(cases["test_fixture"])["ctk.requirement"] == "KEY-01"

    report = build_sample()
    assert add_junit_statistics(str(junit), report) == 1
    assert add_junit_statistics(str(junit), report) == 1  # idempotent
    root = ET.parse(junit).getroot()  # still well-formed
    assert junit.read_text().startswith("<?xml")
    (suite,) = root.iter("testsuite")
    assert suite[0].tag == "properties"
    assert len(suite.findall("properties")) == 1
    stats = _props(suite)
    assert stats["ctk.overall"] == "fail"
    assert stats["ctk.count.fail"] == "1" and stats["ctk.count.deviation"] == "1"
    assert stats["ctk.count.pass"] == str(report.counts()["pass"])
    assert stats["ctk.requirements.not-run"] == str(report.requirement_counts()["not-run"])
    names = [p.get("name") for p in suite.find("properties")]
    assert len(names) == len(set(names))
    assert len(list(suite.iter("testcase"))) == 3 == int(suite.get("tests"))
    assert "hunter2pw" not in junit.read_text()


def test_statistics_merge_with_existing_suite_properties(tmp_path):
    junit = tmp_path / "j.xml"
    junit.write_text(textwrap.dedent("""\
        <?xml version="1.0" encoding="utf-8"?>
        <testsuite name="s" tests="1"><testcase name="a"/><properties><property name="keep" value="1"/>
        <property name="ctk.overall" value="stale"/></properties></testsuite>"""))
    add_junit_statistics(str(junit), build_sample())
    suite = ET.parse(junit).getroot()
    assert suite[0].tag == "properties"
    props = _props(suite)
    assert props["keep"] == "1" and props["ctk.overall"] == "fail"


def test_rejects_non_junit(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<testsuite><unclosed></testsuite>")
    with pytest.raises(ValueError, match="not well-formed"):
        add_junit_statistics(str(bad), build_sample())
    html = tmp_path / "x.xml"
    html.write_text("<html/>")
    with pytest.raises(ValueError, match="not JUnit XML"):
        add_junit_statistics(str(html), build_sample())
    assert html.read_text() == "<html/>"


def _unusable_report():
    rep = RunReport.begin("http://user:hunter2pw@127.0.0.1:9/cat")
    rep.state, rep.problem = "unusable-target", "catalog at http://127.0.0.1:9/cat is unreachable: connection refused"
    rep.finish()
    return rep


def test_unusable_target_written_when_pytest_wrote_nothing(tmp_path):
    junit = tmp_path / "sub" / "junit.xml"
    assert finish_junit(str(junit), _unusable_report()) == 1
    assert finish_junit(str(junit), _unusable_report()) == 1          # twice: still one failing case
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["target_usable"]
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")
    assert "connection refused" in cases[0].find("failure").get("message")
    assert "hunter2pw" not in junit.read_text()


def test_unusable_target_added_to_pytests_empty_file(tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="0" '
                     'skipped="0" tests="0" time="0.4"/></testsuites>')
    finish_junit(str(junit), _unusable_report())
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1") and suite.get("time") == "0.4"
    assert suite[0].tag == "properties" and suite.find("testcase/failure") is not None


def test_usable_run_without_junit_file_writes_none(tmp_path):
    junit = tmp_path / "junit.xml"
    assert finish_junit(str(junit), build_sample()) == 0 and not junit.exists()
    junit.write_text('<testsuite name="s" tests="1" failures="0"><testcase name="a"/></testsuite>')
    finish_junit(str(junit), build_sample())
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "0" and [c.get("name") for c in suite.iter("testcase")] == ["a"]


def test_failure_message_attribute_keeps_the_headline_when_the_text_holds_it(tmp_path):
    whole = "REPLAY-01 (MUST) FAIL [createTable, finalized-duplicate]\nrequirement: ...\n" + "x" * 900
    junit = tmp_path / "junit.xml"
    root = ET.Element("testsuite", name="s", tests="2", failures="2")
    ET.SubElement(ET.SubElement(root, "testcase", name="a"), "failure", message=whole).text = whole
    ET.SubElement(ET.SubElement(root, "testcase", name="b"), "failure", message="short").text = "other text"
    ET.ElementTree(root).write(junit)
    add_junit_statistics(str(junit), build_sample())
    a, b = ET.parse(junit).getroot().iter("failure")
    assert a.get("message").startswith("REPLAY-01 (MUST) FAIL [createTable, finalized-duplicate] (in full")
    assert a.text == whole                                            # nothing lost
    assert (b.get("message"), b.text) == ("short", "other text")      # a message not in the text stays
