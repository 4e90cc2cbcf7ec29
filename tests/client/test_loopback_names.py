"""Loopback in the spellings a resolver takes: `localhost.` (fully qualified) and short IPv4 forms like
`127.1`; nothing else, and no address-looking name with a trailing dot (that would go to DNS)."""

from __future__ import annotations

import pytest

from ctk.plugin.options import is_loopback
from ctk.client.config import TargetConfig, TargetError, is_loopback_host


@pytest.mark.parametrize("host", ["localhost", "localhost.", "LOCALHOST", "a.localhost", "127.0.0.1", "127.1",
                                  "127.0.1", "127.255.255.254", "::1", "[::1]", "2130706433"])
def test_loopback(host):
    assert is_loopback_host(host) and is_loopback(host)


@pytest.mark.parametrize("host", ["example.com", "10.1", "1.2.3.4", "127.0.0.1.", "localhost..", "128.1",
                                  "localhost.example.com", "", "::2"])
def test_not_loopback(host):
    assert not is_loopback_host(host) and not is_loopback(host)


def test_target_accepts_the_short_forms():
    assert TargetConfig("http://127.1:8181").url == "http://127.1:8181"
    assert TargetConfig("http://localhost.:8181").url == "http://localhost.:8181"
    with pytest.raises(TargetError):
        TargetConfig("http://10.1:8181")


def test_the_short_form_reaches_a_loopback_server():
    import httpx

    from ctk.reference.server import ReferenceServer

    with ReferenceServer() as srv:
        port = srv.url.rsplit(":", 1)[1]
        r = httpx.get(f"http://127.1:{port}/v1/config", timeout=10, trust_env=False)
        assert r.status_code == 200
