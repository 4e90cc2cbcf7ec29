"""Render conformance.html in headless Chromium: the screenshot is a real page, the DOM shows what matters."""

import os
import shutil
import struct
import subprocess
import zlib

import pytest

from reporting_sample import SECRET_TOKEN, build_sample
from ctk.core.requirements import REQUIREMENTS
from ctk.reporting.conformance import write_conformance

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(not (os.path.exists(CHROMIUM) or shutil.which("chromium")),
                       reason="chromium is not installed (/usr/bin/chromium); `apt-get install -y chromium`"),
]


def _chromium(tmp_path, *args):
    exe = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,2000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def decode_png(data: bytes, every: int = 1):
    """(width, height, rows of (r, g, b) tuples) for 8-bit RGB/RGBA non-interlaced PNGs.

    Every ``every``-th row and column are returned (all rows are decoded: filters chain rows).
    """
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, ihdr
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for y in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 0xFF
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 0xFF
        elif f == 3:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((a + prev[x]) >> 1)) & 0xFF
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif f != 0:
            raise AssertionError(f"bad PNG filter {f}")
        if y % every == 0:
            rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp * every)])
        prev = line
    return width, height, rows


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chromium")
    paths = write_conformance(build_sample(), str(tmp / "reports"))
    url = "file://" + os.path.abspath(paths["html"])
    png = tmp / "conformance.png"
    shot = _chromium(tmp, f"--screenshot={png}", url)
    dom = _chromium(tmp, "--dump-dom", url)
    return png, shot, dom


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
