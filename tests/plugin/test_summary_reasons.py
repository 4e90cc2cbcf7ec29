"""The terminal summary says why checks were not decided, so a user need not open the report (pytest shows skip
reasons only with -rs): distinct reasons, run-unique names folded, most frequent first, bounded."""

from __future__ import annotations

from ctk.plugin.options import CtkOptions
from ctk.plugin.reports import VerdictCollector

GUARD = ("table bronze.ctk_{run}_main.{table} lives at s3://warehouse/x; no s3.endpoint is set, so pyiceberg would "
         "contact the public AWS endpoint; pass --catalog-property s3.endpoint=http://127.0.0.1:PORT")


def _collector(*verdicts: dict) -> VerdictCollector:
    c = VerdictCollector(CtkOptions())
    c.results = [(v, f"t::{i}", 0.1, "skipped") for i, v in enumerate(verdicts)]
    return c


def test_inconclusive_reasons_are_grouped_and_named_in_the_summary():
    c = _collector(
        {"requirement": "OCC-01", "status": "inconclusive", "message": GUARD.format(run="1a2b3c4d", table="occ_1_ab12cd")
         + "\n\nexchanges: ..."},
        {"requirement": "OCC-02", "status": "inconclusive", "message": GUARD.format(run="1a2b3c4d", table="occ_2_ffee00")},
        {"requirement": "HIST-01", "status": "inconclusive", "message": "0 acknowledged appends: nothing to judge"},
        {"requirement": "OCC-04", "status": "pass", "message": "all or nothing"},
    )
    lines = c.summary_lines()
    at = lines.index("inconclusive, because:")
    assert lines[at + 1].startswith("  2x OCC-01, OCC-02: table bronze.ctk_1a2b3c4d_main.occ_1_ab12cd lives at")
    assert "s3.endpoint" in lines[at + 1] and "exchanges" not in lines[at + 1]
    assert lines[at + 2] == "  1x HIST-01: 0 acknowledged appends: nothing to judge"
    assert len(lines) == at + 3


def test_no_reasons_line_when_everything_was_decided_and_the_list_is_bounded():
    assert "inconclusive, because:" not in _collector(
        {"requirement": "OCC-01", "status": "pass", "message": "ok"}).summary_lines()
    many = _collector(*({"requirement": f"R-{i}", "status": "inconclusive", "message": f"reason number {i}"}
                        for i in range(8)))
    lines = many.summary_lines()
    at = lines.index("inconclusive, because:")
    assert len(lines[at + 1:]) == 6 and lines[-1] == "  ... and 3 other reason(s): see conformance.html"


def _full(requirement: str, status: str, message: str, **kw) -> dict:
    from ctk.core.verdicts import Status, Verdict

    return Verdict(requirement, Status(status), message, **kw).to_dict()


def test_forgotten_storage_settings_end_with_exit_7_naming_the_property():
    """A catalog whose storage settings were not given: nothing failed, but no OCC check ran. The last lines say
    which MUSTs were left undecided, the property to pass, and exit 7 - not "no MUST failed" and 0."""
    from ctk.plugin import exits

    c = _collector(
        _full("OCC-01", "inconclusive", "a setup step failed, so the requirement could not be exercised: "
              + GUARD.format(run="1a2b3c4d", table="occ_1_ab12cd")),
        _full("OCC-02", "inconclusive", "a setup step failed, so the requirement could not be exercised: "
              + GUARD.format(run="1a2b3c4d", table="occ_2_ffee00")),
        _full("REPLAY-01", "pass", "replayed"),
    )
    rep = c.build()
    code, _, undecided = exits.decide(exits.EXIT_OK, rep, frozenset())
    assert code == exits.EXIT_MUST_UNDECIDED and undecided == ["OCC-01", "OCC-02"]
    c.undecided_musts = undecided
    lines = [text for text, _ in c.final_lines(code)]
    assert lines[0].startswith("ctk: MUST UNDECIDED: no MUST broken, but a MUST was left undecided")   # as exit 7
    [why] = [ln for ln in lines if ln.startswith("  2x OCC-01, OCC-02 (a MUST): inconclusive: a setup step failed")]
    assert "--catalog-property s3.endpoint=http://127.0.0.1:PORT" in why
    assert "MUSTs left undecided: OCC-01, OCC-02" in lines
    assert lines[-1].startswith("exit 7: no MUST broken, but a MUST was left undecided")
