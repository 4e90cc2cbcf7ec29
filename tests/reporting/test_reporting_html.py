import json
import os
import re
from html.parser import HTMLParser

from reporting_sample import HOSTILE, SECRET_TOKEN, URL_PASSWORD, build_sample
from ctk.core.behaviours import Behaviour
from ctk.core.requirements import REQUIREMENTS
from ctk.core.verdicts import Verdict
from ctk.reporting.conformance import write_conformance
from ctk.reporting.html import render_conformance
from ctk.reporting.model import RunReport


class _Collect(HTMLParser):
    VOID = {"meta", "br", "img", "link", "input", "hr"}

    def __init__(self):
        super().__init__()
        self.tags, self.stack, self.errors, self.attrs, self.text = [], [], [], [], []
        self.cells = []  # (classes, text) of td/th
        self._cell = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag in ("td", "th"):
            self._cell = [dict(attrs).get("class") or "", ""]

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()
        if tag in ("td", "th") and self._cell:
            self.cells.append(tuple(self._cell))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell:
            self._cell[1] += data


def _parse(page):
    p = _Collect()
    p.feed(page)
    p.close()
    return p


def test_page_is_well_formed_and_self_contained(sample):
    page = render_conformance(sample)
    p = _parse(page)
    assert p.errors == [] and p.stack == []
    assert "script" not in p.tags and "link" not in p.tags and "img" not in p.tags
    assert "style" in p.tags
    for name, value in p.attrs:
        if name in ("src", "href"):
            assert value.startswith("#"), (name, value)


def test_every_requirement_id_is_listed(sample):
    page = render_conformance(sample)
    for rid in REQUIREMENTS:
        assert f'id="req-{rid}"' in page, rid
    assert "NOT RUN" in page  # OCC-* were not exercised


def test_hostile_message_is_escaped(sample):
    page = render_conformance(sample)
    assert "<script>" not in page and "<img" not in page
    assert re.search(r"&lt;script&gt;alert\((&quot;|\")pwned(&quot;|\")\)&lt;/script&gt;", page)  # quotes plain in text
    assert HOSTILE in "".join(_parse(page).text)  # the reader still sees the text literally


def test_no_secret_reaches_the_page(sample):
    page = render_conformance(sample)
    assert SECRET_TOKEN not in page
    assert URL_PASSWORD not in page
    assert "Authorization: &lt;redacted&gt;" in page
    # Even a verdict dict added without going through Exchange.to_dict stays redacted in HTML.
    rep = RunReport.begin("http://127.0.0.1:1")
    v = Verdict.broken("REPLAY-01", "dup").to_dict()
    v["exchanges"] = [{"method": "GET", "url": "http://u:pw@x/v1/config",
                       "request_headers": {"Authorization": "Bearer abcdef123456"}, "status": 200}]
    rep.add(v, "n")
    page = render_conformance(rep)
    assert "abcdef123456" not in page and ":pw@" not in page


def test_header_counts_colours_and_labels(sample):
    page = render_conformance(sample)
    p = _parse(page)
    assert 'id="overall"' in page and "Overall: FAIL" in page
    assert "reference (deviation: no-inflight)" in page
    text = " ".join(p.text)
    assert "Checks (" in text and "FAIL: 1" in text and "DEVIATION: 1" in text
    # Every coloured cell also spells its status.
    labels = {"s-pass": "PASS", "s-fail": "FAIL", "s-deviation": "DEVIATION", "s-unsupported": "NOT APPLICABLE",
              "s-inconclusive": "INCONCLUSIVE"}
    seen = set()
    for classes, content in p.cells:
        for cls, label in labels.items():
            if cls in classes.split():
                assert content.startswith(label), (classes, content)
                seen.add(cls)
    assert seen == set(labels)


def test_matrix_and_discovery(sample):
    page = render_conformance(sample)
    p = _parse(page)
    cells = {c[1] for c in p.cells}
    assert any(c.startswith("PASS") and "wait-and-replay" in c for c in cells)
    assert any(c.startswith("PASS") and "422" in c for c in cells)
    assert any(c.startswith("FAIL") and "re-executed" in c and "REPLAY-04" in c for c in cells)
    assert any(c.startswith("DEVIATION") and "409 (no subtype)" in c for c in cells)
    for col in ("finalized-duplicate", "terminal-4xx-replayed", "lost-answer-503", "in-flight-duplicate",
                "payload-mismatch", "key-scope"):
        assert f'<th data-behaviour="{col}" title="{col}">{Behaviour(col).display}</th>' in page
    assert page.index('data-behaviour="finalized-duplicate"') < page.index('data-behaviour="in-flight-duplicate"')
    text = " ".join(p.text)
    assert "PT30M = 1800 s" in text and "top level" in text
    assert "In-flight duplicate behaviour" in text
    assert "409 (updateTable); wait-and-replay (createTable)" in text
    assert "Payload-conflict answer" in text


def test_failure_section_shows_message_and_exchanges(sample):
    page = render_conformance(sample)
    start = page.index('id="finding-1"')
    section = page[start:page.index("</section>", start)]
    assert "REPLAY-04" in section and "2 executions, expected 1" in section
    assert "--&gt; POST http://127.0.0.1:8181/v1/ns/tables   [first attempt]" in section
    assert "no response: connection dropped after commit" in section
    assert "&lt;-- 200" in section and "[retry, same key]" in section
    assert 'href="#finding-1"' in page  # the requirements table links to the evidence
    assert "Failures and deviations (2)" in page
    assert "Inconclusive, not decided by this setup and not applicable (2)" in page and "target has no control API" in page


def test_write_conformance(tmp_path, sample):
    out = tmp_path / "reports"
    paths = write_conformance(sample, str(out))
    assert paths == {"json": str(out / "conformance.json"), "html": str(out / "conformance.html")}
    assert json.loads((out / "conformance.json").read_text())["overall"] == "fail"
    assert RunReport.load(paths["json"]).to_json() == sample.to_json()
    assert (out / "conformance.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(os.listdir(out)) == ["conformance.html", "conformance.json"]


def test_empty_run_renders():
    page = render_conformance(RunReport.begin(None))
    assert "NO RESULTS" in page and _parse(page).errors == []


def test_matrix_rows_follow_the_endpoint_registry():
    from ctk.core.verdicts import Verdict
    from ctk.catalog import ENDPOINTS
    from ctk.reporting.html import render_conformance
    from ctk.reporting.model import RunReport

    rep = RunReport.begin("http://127.0.0.1:1")
    for op in ("updateTable", "createNamespace", "zzUnknown", "createTable"):
        rep.add(Verdict.ok("REPLAY-01", "ok", endpoint=op, behaviour="finalized-duplicate"), f"t::{op}")
    page = render_conformance(rep)
    matrix = page.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<th class="row">(\w+)', matrix)
    known = [op for op in ENDPOINTS if op in rows]
    assert rows == known + ["zzUnknown"] and known == ["createNamespace", "createTable", "updateTable"]
    assert f'createTable<span class="cls small">POST {ENDPOINTS["createTable"].template}</span>' in page


def test_matrix_columns_are_every_behaviour_in_the_registry_order():
    """Verdicts added in reverse order, plus a name from another kit version: the columns follow the registry
    (Behaviour declaration order) with their display names, and the unknown name comes last."""
    import random

    rep = RunReport.begin("http://127.0.0.1:1")
    names = [b.value for b in Behaviour]
    random.Random(7).shuffle(names)
    for i, name in enumerate(names):
        rep.add(Verdict.ok("REPLAY-01", "ok", endpoint="createTable" if i % 2 else "updateTable", behaviour=name),
                f"t::{name}")
    foreign = Verdict.ok("REPLAY-01", "ok", endpoint="createTable").to_dict()
    rep.add({**foreign, "behaviour": "aaa-from-an-older-kit"}, "t::old")   # a dict, as a loaded report has
    page = render_conformance(rep)
    matrix = page.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    heads = re.findall(r'<th data-behaviour="([^"]+)" title="[^"]*">([^<]*)', matrix)
    assert [h for h, _ in heads] == [b.value for b in Behaviour] + ["aaa-from-an-older-kit"]
    assert [d for _, d in heads[:-1]] == [b.display for b in Behaviour]
    assert _parse(page).errors == []


def test_an_exchange_shared_by_findings_is_printed_once_and_linked():
    """The same exchange in several findings (one setup read serving two checks): printed in full in the first
    finding, a line with a link in the others; an exchange of its own still in full."""
    shared = {"method": "POST", "url": "http://127.0.0.1:1/v1/namespaces/db/tables/t", "status": 200,
              "request_headers": {"Idempotency-Key": "k-shared"}, "label": "first attempt",
              "request_body": '{"marker":"SHARED-BODY"}', "response_body": '{"x":1}'}
    own = {**shared, "label": "retry", "request_body": '{"marker":"OWN-BODY"}'}
    rep = RunReport.begin("http://127.0.0.1:1")
    for i, exchanges in enumerate(([shared], [shared, own])):
        v = Verdict.broken("REPLAY-01", f"re-executed {i}").to_dict()
        v["exchanges"] = exchanges
        rep.add(v, f"t{i}")
    page = render_conformance(rep)
    assert page.count("SHARED-BODY") == 1 and page.count("OWN-BODY") == 1
    assert page.count('{"marker":"SHARED-BODY"}') == 1                # quotes plain in element text
    first, second = re.findall(r'<section class="finding[^"]*" id="([^"]+)"', page)
    assert f'the same exchange as in <a href="#{first}">{first}</a>' in page
    assert "[first attempt]" in page.split(f'id="{second}"', 1)[1]     # the line still names it
    assert "<--" not in page and "-->" not in page.replace("<!--", "")   # arrows escaped like the full ones
    assert not _parse(page).errors
