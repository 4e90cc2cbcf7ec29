"""The interop lane's own logic, without any catalog: expectation files (parsing, bad input, comparison with a
conformance.json), the connection trace reader and the argv shown in the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctk.core.requirements import REQUIREMENTS
from interop import expectations
from interop.expectations import ExpectationError
from interop import lane
from interop.lane import remote_connections, shown, split_options

KNOWN = ["OCC-01", "OCC-04", "SPARK-01"]
GOOD = """
# a comment
OCC-01    pass          # stale assert-ref-snapshot-id gets 409
OCC-04    unsupported   # transactions/commit is not routed (404)

SPARK-01  not-run       # no --ctk-spark
"""


def report(statuses: dict[str, str | None], results: list[dict] | None = None) -> dict:
    return {"format": "ctk-conformance/1",
            "requirements": {rid: {"status": s, "counts": {}} for rid, s in statuses.items()},
            "results": results or []}


def test_parse_reads_verdict_and_reason_per_requirement():
    parsed = expectations.parse(GOOD, KNOWN)
    assert {r: e.verdict for r, e in parsed.items()} == {"OCC-01": "pass", "OCC-04": "unsupported",
                                                        "SPARK-01": "not-run"}
    assert parsed["OCC-04"].why == "transactions/commit is not routed (404)"
    assert parsed["OCC-04"].line == 4


@pytest.mark.parametrize("text, needle", [
    (GOOD.replace("# stale assert-ref-snapshot-id gets 409", ""), "OCC-01 pass has no reason"),
    (GOOD.replace("OCC-01    pass", "OCC-01    passed"), "unknown verdict 'passed' for OCC-01"),
    (GOOD.replace("OCC-04", "OCC-40"), "unknown requirement 'OCC-40'"),
    (GOOD + "OCC-01 fail # again\n", "OCC-01 already expected on line 3"),
    (GOOD + "OCC-01\n", "expected 'REQ-ID  verdict  # why'"),
], ids=["no-reason", "unknown-verdict", "unknown-requirement", "duplicate", "malformed"])
def test_parse_rejects_bad_files_naming_the_line(text, needle):
    with pytest.raises(ExpectationError) as err:
        expectations.parse(text, KNOWN, source="x.txt")
    assert needle in str(err.value)
    assert "x.txt" in str(err.value)


def test_load_of_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ExpectationError, match="cannot read expectation file .*nope.txt"):
        expectations.load(tmp_path / "nope.txt", KNOWN)


def test_compare_finds_each_differing_requirement_with_its_messages():
    expected = expectations.parse(GOOD, KNOWN)
    results = [
        {"requirement": "OCC-04", "status": "inconclusive", "nodeid": "t[tx]",
         "message": "a setup step failed: create table answered 422\nexchanges:\n--> POST ..."},
        {"requirement": "OCC-04", "status": "pass", "nodeid": "t[other]", "message": "fine"},
    ]
    got = report({"OCC-01": "pass", "OCC-04": "inconclusive", "SPARK-01": None, "NEW-01": "fail"}, results)
    mismatches = expectations.compare(expected, got)
    assert [(m.requirement, m.expected, m.got) for m in mismatches] == [("OCC-04", "unsupported", "inconclusive")]
    assert mismatches[0].messages == ("inconclusive [t[tx]]: a setup step failed: create table answered 422",)
    text = expectations.table(mismatches)
    assert "OCC-04" in text and "unsupported" in text and "inconclusive" in text
    assert "transactions/commit is not routed (404)" in text
    assert "--> POST" not in text                     # exchanges stay in the report, not in the table


def test_a_requirement_without_a_line_is_not_expected_yet_reported_not_failed():
    """A requirement added to the registry after the file was reviewed has no line: parsing accepts the file,
    the comparison has no mismatch for it, and the lane's output names it with its verdict and messages."""
    text = GOOD.replace("SPARK-01  not-run       # no --ctk-spark", "")
    parsed = expectations.parse(text, KNOWN)
    assert set(parsed) == {"OCC-01", "OCC-04"} and expectations.missing(parsed, KNOWN) == ["SPARK-01"]
    results = [{"requirement": "NEW-01", "status": "fail", "nodeid": "t[new]", "message": "broken\nexchanges:\n-->"}]
    got = report({"OCC-01": "pass", "OCC-04": "unsupported", "SPARK-01": "pass", "NEW-01": "fail"}, results)
    assert expectations.compare(parsed, got) == []
    rows = expectations.not_expected_yet(parsed, got, KNOWN)
    assert [(m.requirement, m.expected, m.got) for m in rows] == [
        ("SPARK-01", expectations.NOT_EXPECTED, "pass"), ("NEW-01", expectations.NOT_EXPECTED, "fail")]
    text = expectations.unexpected_table(rows)
    assert "2 requirement(s) not expected yet" in text and "NEW-01" in text and "fail [t[new]]: broken" in text
    assert "-->" not in text
    assert expectations.unexpected_table([]) == "every requirement has an expectation"
    # a requirement of the registry the report lacks is reported as not run
    assert [m.got for m in expectations.not_expected_yet(parsed, report({"OCC-01": "pass"}), KNOWN)] == ["not-run"]


def test_a_failing_requirement_not_expected_yet_allows_exit_1_and_nothing_else():
    """The exit status the expectations imply is 0; a requirement not expected yet that fails makes the run end
    1, which the lane then allows (and says why); one that passes allows only 0; an inconclusive MUST not
    expected yet allows 7."""
    parsed = expectations.parse(GOOD.replace("SPARK-01  not-run       # no --ctk-spark", ""), KNOWN)
    base = {"OCC-01": "pass", "OCC-04": "unsupported"}
    assert expectations.exit_allowed(parsed, report({**base, "SPARK-01": "pass"})) == (0,)
    assert expectations.exit_allowed(parsed, report({**base, "SPARK-01": "fail"})) == (0, 1)
    assert expectations.exit_allowed(parsed, report({**base, "SPARK-01": "inconclusive"}), musts=["SPARK-01"]) \
        == (0, 7)
    # an expected failure still makes 1 the exit status the expectations imply, whatever is not expected yet
    failing = expectations.parse(GOOD.replace("OCC-01    pass", "OCC-01 fail"), KNOWN)
    assert expectations.exit_allowed(failing, report({**base, "OCC-01": "fail", "NEW-01": "fail"})) == (1,)


def test_compare_counts_a_requirement_missing_from_the_report_as_not_run():
    expected = expectations.parse(GOOD, KNOWN)
    assert [m.requirement for m in expectations.compare(expected, report({"OCC-01": "pass"}))] == ["OCC-04"]
    assert expectations.table([]) == "all requirements as expected"


def test_compare_refuses_a_document_that_is_not_a_conformance_report():
    with pytest.raises(ExpectationError, match="no 'requirements'"):
        expectations.compare(expectations.parse(GOOD, KNOWN), {"format": "other"})


def test_expected_exit_follows_the_expected_failures():
    parsed = expectations.parse(GOOD, KNOWN)
    assert expectations.expected_exit(parsed) == 0
    assert expectations.expected_exit(expectations.parse(GOOD.replace("OCC-01    pass", "OCC-01 fail"), KNOWN)) == 1


def test_expected_exit_is_7_for_an_inconclusive_must_and_1_still_wins():
    undecided = expectations.parse(GOOD.replace("OCC-01    pass", "OCC-01 inconclusive"), KNOWN)
    assert expectations.expected_exit(undecided, musts=["OCC-01"]) == 7
    assert expectations.expected_exit(undecided, musts=[]) == 0          # a SHOULD left undecided: exit 0
    both = expectations.parse(GOOD.replace("OCC-01    pass", "OCC-01 inconclusive").replace(
        "OCC-04    unsupported", "OCC-04 fail"), KNOWN)
    assert expectations.expected_exit(both, musts=["OCC-01"]) == 1


@pytest.mark.parametrize("name", ["lakana", "seaweedfs"])
def test_committed_expectation_files_parse_with_a_reason_per_line(name):
    """Every line names a registered requirement, a verdict and a reason; a requirement without a line is not
    expected yet (the lane reports it), so a new requirement does not touch these files."""
    parsed = expectations.load(Path(__file__).parent / "expectations" / f"{name}.txt", REQUIREMENTS)
    assert parsed and set(parsed) <= set(REQUIREMENTS)
    assert all(e.why for e in parsed.values())


def test_remote_connections_lists_only_non_loopback_addresses(tmp_path):
    trace = tmp_path / "connect.trace"
    trace.write_text(
        '10 connect(3, {sa_family=AF_INET, sin_port=htons(8181), sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
        '10 connect(4, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("52.216.1.2")}, 16) = -1\n'
        '11 connect(5, {sa_family=AF_INET6, sin6_port=htons(53), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1\n'
        '11 connect(6, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = 0\n'
        '12 connect(7, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110) = 0\n')
    assert remote_connections(trace) == ["2001:db8::1:53", "52.216.1.2:443"]
    assert remote_connections(tmp_path / "absent") == []


def test_shown_redacts_tokens_credentials_and_secret_properties():
    argv = ["ctk", "run", "--catalog-token", "lakana_pat_x_y", "--catalog-credential", "ak:sk",
            "--catalog-property", "s3.secret-access-key=sk", "--catalog-property", "s3.endpoint=http://127.0.0.1:1"]
    out = " ".join(shown(argv))
    assert "lakana_pat_x_y" not in out and "ak:sk" not in out and "=sk" not in out
    assert "s3.endpoint=http://127.0.0.1:1" in out


def test_split_options_hands_flags_ctk_run_does_not_forward_to_pytest():
    kept, direct, unknown = split_options(["--catalog-url", "u", "--catalog-property", "a=1",
                                           "--catalog-property", "b=2"], {"--catalog-url"})
    assert kept == ["--catalog-url", "u"]
    assert direct == ["--catalog-property", "a=1", "--catalog-property", "b=2"]
    assert unknown == ["--catalog-property"]


def test_no_strace_means_an_untraced_run_not_a_broken_one(monkeypatch, tmp_path):
    monkeypatch.setattr(lane.shutil, "which", lambda name: None)
    assert lane.strace_argv(tmp_path / "t") == []


def test_leftovers_lists_kit_namespaces_however_the_catalog_joins_levels():
    """The lane's own listing of what the kit left: nested below a parent (lakana: bronze.ctk_...), and joined
    with '.' into one level (a catalog that does not nest), found by listing from the top; other namespaces
    are not leftovers."""
    import json as _json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlparse

    from interop.catalogs import Catalog

    tree = {"": [["bronze"], ["silver"], ["ctk_ab12cd34_main.ctk_nesting_probe"]],
            "bronze": [["bronze", "x"], ["bronze", "ctk_ab12cd34_gw0"]],
            "bronze\x1fx": [], "silver": [["silver"]]}   # silver: a catalog that ignores ?parent=

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):   # noqa: N802
            parent = parse_qs(urlparse(self.path).query).get("parent", [""])[0]
            body = _json.dumps({"namespaces": tree.get(parent, [])}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    class Stub(Catalog):
        def rest(self):
            return f"http://127.0.0.1:{server.server_address[1]}/v1/p", None

    try:
        found = Stub(Path("."), Path(".")).leftovers()
    finally:
        server.shutdown()
    assert sorted(found) == ["bronze.ctk_ab12cd34_gw0", "ctk_ab12cd34_main.ctk_nesting_probe"]
    # lakana and SeaweedFS list every level at once without ?parent=: each leftover once, what is below it its own
    tree.clear()
    tree[""] = [["bronze"], ["bronze", "ctk_ab12cd34_main"], ["bronze", "ctk_ab12cd34_main", "ctk_nesting_probe"],
                ["bronze", "keep"], ["gold"]]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert Stub(Path("."), Path(".")).leftovers() == ["bronze.ctk_ab12cd34_main"]
    finally:
        server.shutdown()
