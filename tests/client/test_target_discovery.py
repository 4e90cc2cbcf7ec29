from datetime import timedelta

import httpx
import pytest

from ctk.client.transport import CatalogClient
from ctk.client.config import TargetConfig
from ctk.client.discovery import (Discovery, DiscoveryError, discover, java_duration_parseable,
                                  parse_lifetime)


def client_answering(handler, **target_kw):
    return CatalogClient(TargetConfig("http://127.0.0.1:9", **target_kw), transport=httpx.MockTransport(handler))


def config_client(body, status=200, **kw):
    seen = []

    def handler(req):
        seen.append(req)
        if isinstance(body, (dict, list)):
            return httpx.Response(status, json=body)
        return httpx.Response(status, text=body)
    c = client_answering(handler, **kw)
    c.seen = seen
    return c


def test_valid_lifetime_and_endpoints():
    c = config_client({"defaults": {}, "overrides": {"prefix": "wh1"}, "idempotency-key-lifetime": "PT30M",
                       "endpoints": ["GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces/{namespace}/views"]},
                      warehouse="my wh")
    d = discover(c)
    assert d.lifetime == timedelta(minutes=30) and d.lifetime_error is None
    assert d.idempotency_supported and d.java_parseable and d.misplaced_in is None
    assert d.prefix == "wh1" and c.prefix == "wh1"
    assert c.url_for("namespaces") == "http://127.0.0.1:9/v1/wh1/namespaces"
    assert c.seen[0].url.params["warehouse"] == "my wh"
    assert c.seen[0].url.path == "/v1/config"
    assert d.supports("get", "namespaces")
    assert d.supports("POST", "/v1/{prefix}/namespaces/{namespace}/views")
    assert not d.supports("POST", "namespaces")
    assert d.exchange.status == 200


def test_absent_lifetime_and_default_endpoints():
    d = discover(config_client({"defaults": {}, "overrides": {}}))
    assert d.lifetime is None and not d.idempotency_supported
    assert d.lifetime_error == "absent" and d.java_parseable is None and d.endpoints is None
    assert d.supports("POST", "namespaces/{namespace}/tables/{table}")
    assert not d.supports("POST", "namespaces/{namespace}/views")


@pytest.mark.parametrize("raw, valid, java", [
    ("30m", False, False), ("P1W", True, False), ("PT30M", True, True), ("P1D", True, True),
    ("P1Y", True, False), ("P1M", True, False), ("PT0S", False, True), ("-PT5M", False, True),
    ("", False, False), (" PT30M", False, False), ("PT", False, False), (1800, False, False),
    ("P1DT", False, False), ("PT1.5S", True, True), ("1800", False, False),
])
def test_lifetime_values(raw, valid, java):
    d = Discovery.from_config({"idempotency-key-lifetime": raw})
    assert (d.lifetime is not None) is valid, d.lifetime_error
    assert d.idempotency_supported is valid
    assert d.java_parseable is java
    assert (d.lifetime_error is None) is valid
    assert d.lifetime_raw == raw


def test_invalid_lifetime_error_text():
    d = Discovery.from_config({"idempotency-key-lifetime": "30m"})
    assert "not an ISO-8601 duration" in d.lifetime_error and "'30m'" in d.lifetime_error


@pytest.mark.parametrize("where", ["overrides", "defaults"])
def test_misplaced_lifetime(where):
    d = Discovery.from_config({"defaults": {}, "overrides": {}} | {where: {"idempotency-key-lifetime": "PT30M"}})
    assert d.misplaced_in == where and d.lifetime is None and not d.idempotency_supported
    assert where in d.lifetime_error and d.lifetime_raw == "PT30M" and d.java_parseable


def test_java_parser_rules():
    assert java_duration_parseable("PT1H30M") and java_duration_parseable("p2dt3h")
    assert not java_duration_parseable("P1W") and not java_duration_parseable("P1Y2M")
    assert parse_lifetime("P1W")[0] == timedelta(days=7)


def test_non_json_config_is_clear_error():
    with pytest.raises(DiscoveryError, match="non-JSON") as e:
        discover(config_client("<html>hi</html>"))
    assert e.value.exchange.status == 200
    with pytest.raises(DiscoveryError, match="instead of an object"):
        discover(config_client([1, 2]))


def test_non_200_config_is_clear_error():
    with pytest.raises(DiscoveryError, match="401"):
        discover(config_client({"error": {"message": "no", "type": "NotAuthorized", "code": 401}}, status=401))


def test_target_prefix_used_when_no_override():
    c = config_client({"defaults": {"prefix": "fromdefaults"}, "overrides": {}}, prefix="mine")
    assert discover(c).prefix == "mine"
    c = config_client({"defaults": {"prefix": "fromdefaults"}, "overrides": {}})
    assert discover(c).prefix == "fromdefaults"
