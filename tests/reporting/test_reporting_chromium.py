"""Render conformance.html in headless Chromium: the screenshot is a real page, the DOM shows what matters."""

import struct
import zlib

import pytest

from browser import decode_png, render
from reporting_sample import SECRET_TOKEN, build_sample
from ctk.core.requirements import REQUIREMENTS
from ctk.reporting.conformance import write_conformance

pytestmark = pytest.mark.chromium   # skipped where there is no Chromium (tests/conftest.py)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chromium")
    paths = write_conformance(build_sample(), str(tmp / "reports"))
    return render(tmp, paths["html"], "conformance.png")


def test_screenshot_is_a_real_page(rendered):
    png, shot, _ = rendered
    assert png.exists(), shot.stderr[-2000:]
    data = png.read_bytes()
    assert len(data) > 20_000
    width, height, rows = decode_png(data, every=5)
    assert (width, height) == (1400, 2000)
    colours = {px for row in rows for px in row}
    assert len(colours) > 50, "screenshot is (nearly) one colour"

    def near(px, ref, tol=12):
        return all(abs(a - b) <= tol for a, b in zip(px, ref))

    # The status colours are on screen, above the fold: fail red, pass green, deviation amber.
    visible = {name: any(near(px, ref) for px in colours) for name, ref in
               {"fail": (0xFF, 0xCE, 0xCB), "pass": (0xDA, 0xFB, 0xE1), "deviation": (0xFF, 0xE7, 0x96)}.items()}
    assert all(visible.values()), visible


def test_dom_shows_verdict_requirements_and_evidence(rendered):
    _, _, dom = rendered
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert "Overall: FAIL: at least one MUST requirement is broken" in html
    for rid in REQUIREMENTS:
        assert f'id="req-{rid}"' in html, rid
    assert 'id="finding-1"' in html
    assert "--&gt; POST http://127.0.0.1:8181/v1/ns/tables   [first attempt]" in html
    assert "no response: connection dropped after commit" in html
    assert "wait-and-replay" in html
    assert "<script>" not in html and SECRET_TOKEN not in html


def test_decoder_detects_a_blank_image():
    # A 4x2 single-colour PNG built by hand must decode to one colour (the check above can fail).
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = b"".join(b"\x00" + b"\xff\xff\xff" * 4 for _ in range(2))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 2, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    w, h, rows = decode_png(png)
    assert (w, h) == (4, 2) and {px for row in rows for px in row} == {(255, 255, 255)}


def test_shared_exchange_renders_as_a_link_to_its_first_finding(tmp_path):
    """In Chromium: the second finding's line for an exchange the first printed links to it, and the DOM keeps
    the arrows and the JSON body as text (quotes plain, nothing parsed as markup)."""
    from ctk.core.verdicts import Verdict
    from ctk.reporting.model import RunReport

    shared = {"method": "POST", "url": "http://127.0.0.1:1/v1/namespaces/db/tables/t", "status": 200,
              "label": "first attempt", "request_body": '{"marker":"SHARED-BODY"}'}
    rep = RunReport.begin("http://127.0.0.1:1")
    for i in range(2):
        v = Verdict.broken("REPLAY-01", f"re-executed {i}").to_dict()
        v["exchanges"] = [shared]
        rep.add(v, f"t{i}")
    paths = write_conformance(rep, str(tmp_path / "reports"))
    png, shot, dom = render(tmp_path, paths["html"], "shared.png")
    assert png.exists() and dom.returncode == 0, shot.stderr[-2000:]
    html = dom.stdout
    assert html.count("SHARED-BODY") == 1 and '{"marker":"SHARED-BODY"}' in html
    assert '&lt;-- 200   (the same exchange as in <a href="#finding-1">finding-1</a>, shown there in full)' in html


FIRST_SCREEN = """<script>
window.addEventListener("load", () => {
  const top = sel => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect().top : null; };
  const out = {attention: top("#attention"), causes: top("#root-causes"), changes: top("#changes"),
               firstFinding: top("#finding-1"),
               passesOpen: document.querySelector("#requirements-passed").open,
               matrixOpen: document.querySelector("#matrix-section").open,
               height: window.innerHeight,
               greenAbove: [...document.querySelectorAll("td.s-pass")].filter(
                 td => { const r = td.getBoundingClientRect(); return r.height > 0 && r.top < window.innerHeight; }).length};
  const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def test_first_screen_is_what_a_catalog_author_acts_on(tmp_path):
    """Issue 35 item 5, read as a catalog author opens conformance.html after a second run: the root causes, the
    findings and what changed since the last run are above the fold; the passes and the matrix are folded."""
    from browser import measured
    from pathlib import Path

    reports = tmp_path / "reports"
    write_conformance(build_sample(), str(reports))          # the last run
    paths = write_conformance(build_sample(), str(reports))  # this run: the same verdicts
    m = measured(tmp_path, Path(paths["html"]), FIRST_SCREEN, window="1400,900")
    for name in ("causes", "attention", "changes"):
        assert m[name] is not None and 0 <= m[name] < m["height"], (name, m)
    assert not m["passesOpen"] and not m["matrixOpen"], m
    assert m["greenAbove"] == 0, m     # no green matrix of passes on the first screen
