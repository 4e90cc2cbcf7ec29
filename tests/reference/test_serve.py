"""`ctk serve` as a subprocess: prints its URL, answers /v1/config, stops on SIGTERM with exit 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import pytest

from ctk.reference.server import ReferenceServer, check_loopback
from ctk.reference.settings import ReferenceSettings

pytestmark = pytest.mark.timeout(90)


def start(args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    proc = subprocess.Popen([sys.executable, "-m", "ctk", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline().strip()  # the server prints its URL once it listens
    return proc, line


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_subprocess(tmp_path, sig):
    proc, url = start(["--warehouse", str(tmp_path / "wh"), "--prefix", "p1", "--lifetime", "PT10M"])
    try:
        assert url.startswith("http://127.0.0.1:"), (url, proc.stderr.read() if proc.poll() is not None else "")
        body = httpx.get(url + "/v1/config", timeout=10).json()
        assert body["idempotency-key-lifetime"] == "PT10M" and body["overrides"]["prefix"] == "p1"
        assert httpx.post(url + "/v1/p1/namespaces", json={"namespace": ["a"]}, timeout=10).status_code == 200
        assert (tmp_path / "wh" / "catalog.db").exists()
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_serve_env_fallback(tmp_path):
    proc, url = start([], {"CTK_REF_WAREHOUSE": str(tmp_path / "envwh"), "CTK_REF_DEVIATION": "lifetime-weeks"})
    try:
        assert httpx.get(url + "/v1/config", timeout=10).json()["idempotency-key-lifetime"] == "P1W"
        assert (tmp_path / "envwh" / "catalog.db").exists()
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_serve_refuses_non_loopback():
    proc = subprocess.run([sys.executable, "-m", "ctk", "serve", "--host", "0.0.0.0"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "loopback" in proc.stderr
    with pytest.raises(ValueError):
        ReferenceServer(ReferenceSettings(host="10.1.2.3"))
    check_loopback("127.0.0.1")
    check_loopback("::1")


def test_server_stop_and_restart(tmp_path):
    settings = ReferenceSettings(warehouse=str(tmp_path / "wh"))
    server = ReferenceServer(settings)
    url = server.start()
    assert httpx.post(url + "/v1/namespaces", json={"namespace": ["kept"]}, timeout=10).status_code == 200
    server.stop()
    assert server.url is None
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "/v1/config", timeout=2)
    with ReferenceServer(settings) as again:  # same warehouse: the catalog state persists
        assert httpx.get(again.url + "/v1/namespaces", timeout=10).json()["namespaces"] == [["kept"]]


def test_serve_planning_flags(tmp_path):
    import argparse

    from ctk.reference.server import add_arguments, settings_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    s = settings_from_args(parser.parse_args(["--planning-mode", "async", "--plan-task-size", "0"]))
    assert (s.planning_mode, s.plan_task_size) == ("async", 0)
    s = settings_from_args(parser.parse_args([]))
    assert (s.planning_mode, s.plan_task_size) == ("sync", 1)
    bad = subprocess.run([sys.executable, "-m", "ctk", "serve", "--plan-task-size", "-1"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "plan_task_size" in bad.stderr
