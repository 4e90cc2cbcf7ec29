"""`ctk serve` rough edges: a port in use gives one line, its temporary warehouse is removed on Ctrl-C and
SIGTERM, and --help lists the deviation profiles."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest


def _serve(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ctk", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_port_in_use_is_one_line():
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        proc = _serve("--port", str(busy.getsockname()[1]))
        out, err = proc.communicate(timeout=60)
    finally:
        busy.close()
    assert proc.returncode == 1
    assert re.fullmatch(r"ctk serve: cannot listen on 127\.0\.0\.1:\d+: the port is in use", err.strip()), err
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_temp_warehouse_removed_on_exit(sig):
    proc = _serve()
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:")
    line = proc.stderr.readline()
    m = re.match(r"warehouse: (.+)", line.strip())
    assert m, line
    warehouse = Path(m.group(1))
    import httpx

    assert httpx.post(f"{url}/v1/namespaces", json={"namespace": ["n"]}, timeout=10).status_code == 200
    assert warehouse.is_dir()
    proc.send_signal(sig)
    assert proc.wait(30) == 0
    assert not warehouse.exists(), warehouse


def test_given_warehouse_is_kept(tmp_path):
    proc = _serve("--warehouse", str(tmp_path / "wh"))
    assert proc.stdout.readline().startswith("http://")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert (tmp_path / "wh").is_dir()


def test_help_lists_the_deviation_profiles():
    from ctk.reference.deviations import PROFILES

    out = subprocess.run([sys.executable, "-m", "ctk", "serve", "--help"], capture_output=True, text=True,
                         check=True).stdout
    for name, profile in PROFILES.items():
        assert re.search(rf"^  {re.escape(name)} +{re.escape(profile.breaks[:30])}", out, re.M), name
    assert f"({len(PROFILES)} profiles" in out


def test_unknown_deviation_is_a_usage_error():
    r = subprocess.run([sys.executable, "-m", "ctk", "serve", "--deviation", "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice: 'nope'" in r.stderr
