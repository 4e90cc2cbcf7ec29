import pytest

from ctk.client.config import TargetConfig, TargetError, is_loopback_host


def test_loopback_accepted_and_normalized():
    t = TargetConfig("http://127.0.0.1:8181/v1/", prefix="/wh/")
    assert t.base_url == "http://127.0.0.1:8181"
    assert t.prefix == "wh"
    assert TargetConfig("http://localhost:1").base_url == "http://localhost:1"
    assert TargetConfig("http://[::1]:1").base_url == "http://[::1]:1"


@pytest.mark.parametrize("url", ["http://example.com", "http://10.0.0.5:8181", "https://catalog.internal/api"])
def test_remote_refused_unless_allowed(url):
    with pytest.raises(TargetError, match="non-loopback"):
        TargetConfig(url)
    assert TargetConfig(url, allow_remote=True).url.startswith("http")


@pytest.mark.parametrize("url", ["", "ftp://127.0.0.1", "127.0.0.1:8181", "http://", "http://127.0.0.1/?a=b"])
def test_bad_urls(url):
    with pytest.raises(TargetError):
        TargetConfig(url)


def test_bad_credential_and_timeouts():
    with pytest.raises(TargetError, match="client_id:secret"):
        TargetConfig("http://127.0.0.1", credential="nocolon")
    with pytest.raises(TargetError):
        TargetConfig("http://127.0.0.1", token="t", credential="a:b")
    with pytest.raises(TargetError):
        TargetConfig("http://127.0.0.1", timeout=0)


def test_repr_hides_secrets():
    t = TargetConfig("http://127.0.0.1", token="s3cr3t-token")
    assert "s3cr3t" not in repr(t) and "s3cr3t" not in str(t)
    t = TargetConfig("http://127.0.0.1", credential="id:s3cr3t")
    assert "s3cr3t" not in repr(t)


def test_is_loopback_host():
    assert is_loopback_host("127.0.0.2") and is_loopback_host("LOCALHOST") and is_loopback_host("::1")
    assert not is_loopback_host("192.168.1.1") and not is_loopback_host("evil.localhost.com")
