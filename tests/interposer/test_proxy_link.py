"""ProxyLink: one proxy of a running interposer, named by its control-API URL (--ctk-db-link)."""

from __future__ import annotations

import pytest

from ctk.interposer import Interposer, InterposerError
from ctk.interposer.client import ProxyLink


@pytest.mark.parametrize("url,why", [
    ("http://127.0.0.1:8474", "expected http://HOST:PORT/proxies/NAME"),
    ("http://127.0.0.1:8474/proxies", "expected"),
    ("https://127.0.0.1:8474/proxies/db", "expected"),
    ("http://127.0.0.1:8474/toxics/db", "expected"),
    ("http://10.0.0.5:8474/proxies/db", "loopback"),
    ("http://example.org:8474/proxies/db", "loopback"),
])
def test_bad_urls_are_refused_with_the_reason(url, why):
    with pytest.raises(ValueError, match=why):
        ProxyLink(url)


def test_drives_a_proxy_of_a_running_interposer(echo_server):
    with Interposer(upstream=echo_server.address, api=("127.0.0.1", 0), name="catalog-db") as ip:
        link = ProxyLink(f"{ip.api_url}/proxies/catalog-db")
        try:
            assert link.check()["name"] == "catalog-db"
            name = link.add_toxic(type="latency", attributes={"latency": 10})
            assert [t["name"] for t in ip.toxics()] == [name]
            link.remove_toxic(name)
            assert ip.toxics() == []
            link.disable()
            assert link.check()["enabled"] is False
            link.enable()
            assert link.counters["connections"] == 0 and link.events_of("nothing") == []
            with pytest.raises(InterposerError):
                ProxyLink(f"{ip.api_url}/proxies/other").check()
        finally:
            link.close()
