"""Optional container mode (testcontainers): skipped with a clear reason where no Docker engine exists."""

import subprocess
import sys

import pytest

from ctk.plugin.containers import ContainersUnavailable, ContainerTarget, docker_unavailable

REASON = docker_unavailable()
IMAGE = "apache/iceberg-rest-fixture:1.10.0"


@pytest.mark.skipif(REASON is None, reason="a Docker engine is present; the no-engine path is not reachable")
def test_start_without_engine_says_why():
    with pytest.raises(ContainersUnavailable, match="Docker engine"):
        ContainerTarget(IMAGE).start()


@pytest.mark.skipif(REASON is None, reason="a Docker engine is present; the no-engine path is not reachable")
def test_plugin_skips_every_check_with_the_reason(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--catalog-image", IMAGE, "-q", "-rs", "-p",
                           "no:cacheprovider", "-k", "discovery or keys", "--ctk-reports", str(tmp_path / "r")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "failed" not in proc.stdout.splitlines()[-1]
    assert "unsupported: container mode for" in proc.stdout and "Docker engine" in proc.stdout


@pytest.mark.skipif(REASON is not None, reason=f"container mode needs a Docker engine: {REASON}")
def test_catalog_image_behind_toxiproxy():
    with ContainerTarget(IMAGE, toxiproxy=True) as target:
        import httpx

        assert httpx.get(f"{target.url}/v1/config", timeout=10).status_code == 200
        target.toxiproxy.add_toxic("catalog", "latency", attributes={"latency": 200})
        r = httpx.get(f"{target.url}/v1/config", timeout=10)
        assert r.status_code == 200 and r.elapsed.total_seconds() >= 0.2
