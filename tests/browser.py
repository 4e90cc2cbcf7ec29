"""Headless Chromium for the tests that check the pages the kit writes: one way to start it, take a screenshot
and dump the DOM, and a PNG decoder to look at the screenshot's pixels.

    from browser import render
    pytestmark = pytest.mark.chromium      # tests/conftest.py skips it, saying why, where Chromium is missing
    png, shot, dom = render(tmp_path, html_path)

tests/ is on sys.path (tests/conftest.py is not in a package), so any test imports it as ``browser``.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import NamedTuple
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
WINDOW = "1400,2000"          # width,height of the screenshots unless a test passes its own --window-size
TIMEOUT_S = 180

def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium with ``args`` (e.g. ``--screenshot=PNG URL``, ``--dump-dom URL``), a profile of its own
    under ``tmp_path``, no network of its own (no updates, sync or QUIC); a later ``--window-size`` wins."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={Path(tmp_path) / 'profile'}", f"--window-size={WINDOW}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)


class Rendered(NamedTuple):
    png: Path                              # the screenshot (may be missing: see shot.stderr)
    shot: subprocess.CompletedProcess      # the screenshot run
    dom: subprocess.CompletedProcess       # the --dump-dom run: .stdout is the rendered DOM


def render(tmp_path: Path, html: str | os.PathLike, name: str = "page.png") -> Rendered:
    """The page at ``html`` (a file) as a reader sees it: a screenshot ``tmp_path/name`` and the rendered DOM."""
    url = "file://" + os.path.abspath(html)
    png = Path(tmp_path) / name
    shot = chromium(tmp_path, f"--screenshot={png}", url)
    return Rendered(png, shot, chromium(tmp_path, "--dump-dom", url))


def measured(tmp_path: Path, page: Path, script: str, window: str = "1400,1000") -> dict:
    """What ``script`` measured on ``page`` as Chromium lays it out: the script (a ``<script>`` that puts
    ``JSON.stringify(...)`` into a ``<pre id="measure">`` on load) runs in a copy of the page; its JSON, parsed."""
    import json
    import re

    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    dom = chromium(tmp_path, f"--window-size={window}", "--dump-dom", "file://" + str(probe))
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


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
