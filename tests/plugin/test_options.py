"""Options, ini keys, activation, and the plugin being inert when not activated."""

from __future__ import annotations

import pytest

from ctk.plugin.options import is_loopback, parse_headers, OptionError

PROBE = """
from ctk.plugin.state import get_options, get_session

def test_probe(request):
    o = get_options(request.config)
    print("ACTIVE", o.active, "EMBEDDED", o.embedded, "STRICT", o.strict, "TIMEOUT", o.timeout,
          "MAXWAIT", o.max_wait, "PREFIX", o.namespace_prefix, "HEADERS", sorted(o.catalog_headers.items()),
          "URL", o.catalog_url, "SESSION", get_session(request.config) is not None)
"""


def test_inert_without_activation(pytester: pytest.Pytester):
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    assert "ctk conformance" not in result.stdout.str() and "ctk verdict" not in result.stdout.str()
    assert not (pytester.path / "reports").exists()


def test_options_in_help(pytester: pytest.Pytester):
    result = pytester.runpytest("--help")
    out = result.stdout.str()
    for opt in ("--catalog-url", "--catalog-prefix", "--warehouse", "--catalog-token", "--catalog-credential",
                "--catalog-header", "--openapi-spec", "--ctk-scenarios", "--ctk-namespace-prefix", "--ctk-timeout",
                "--ctk-max-wait", "--ctk-strict", "--ctk-reports", "--ctk-allow-remote"):
        assert opt in out, opt
    assert "ctk_autorun" in out


def test_options_parsed(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", "test_probe.py", "--catalog-url", "http://127.0.0.1:9/v1/", "--ctk-strict",
                                "--ctk-timeout", "2.5", "--ctk-max-wait", "7", "--ctk-namespace-prefix", "mine",
                                "--catalog-header", "X-A=1", "--catalog-header", "X-B=two=2", "-p", "no:html")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "ACTIVE True EMBEDDED False STRICT True TIMEOUT 2.5 MAXWAIT 7.0 PREFIX mine" in out
    assert "[('X-A', '1'), ('X-B', 'two=2')]" in out
    assert "URL http://127.0.0.1:9 SESSION True" in out


def test_ini_autorun_activates(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\nctk_autorun = true\nctk_timeout = 3\n")
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", "test_probe.py", "-p", "no:html")
    result.assert_outcomes(passed=1)
    assert "ACTIVE True EMBEDDED True STRICT False TIMEOUT 3.0" in result.stdout.str()


def test_not_active_without_flags(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", "test_probe.py")
    result.assert_outcomes(passed=1)
    assert "ACTIVE False" in result.stdout.str() and "SESSION False" in result.stdout.str()


def test_activation_collects_suites_and_scenarios(pytester: pytest.Pytester):
    pytester.makepyfile(test_mine="def test_mine():\n    pass\n")
    result = pytester.runpytest("--ctk", "--collect-only", "-q")
    out = result.stdout.str()
    assert "test_discovery.py::test_discovery" in out
    assert "test_idempotency.py::test_idempotency[createNamespace-finalized-duplicate]" in out
    assert "create_namespace.yaml::createNamespace_finalized_duplicate" in out
    assert "test_mine" not in out  # the kit's suites replace the default test paths


def test_explicit_args_are_respected(pytester: pytest.Pytester):
    pytester.makepyfile(test_mine="def test_mine():\n    pass\n")
    result = pytester.runpytest("--ctk", "test_mine.py", "--collect-only", "-q")
    out = result.stdout.str()
    assert "test_mine.py::test_mine" in out and "test_discovery" not in out


def test_remote_url_refused(pytester: pytest.Pytester):
    result = pytester.runpytest("--catalog-url", "http://192.0.2.10:8181", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "not a loopback address" in result.stderr.str() and "--ctk-allow-remote" in result.stderr.str()


def test_remote_url_allowed_explicitly(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-s", "test_probe.py", "--catalog-url", "http://192.0.2.10:8181",
                                "--ctk-allow-remote", "-p", "no:html")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("args,needle", [
    (["--ctk-timeout", "abc"], "must be a number"),
    (["--ctk-timeout", "0"], "--ctk-timeout must be positive, not '0'"),
    (["--catalog-header", "novalue"], "K=V"),
    (["--catalog-credential", "nocolon"], "CLIENT_ID:SECRET"),
    (["--catalog-token", "t", "--catalog-credential", "a:b"], "not both"),
    (["--ctk-namespace-prefix", "bad-prefix!"], "namespace-prefix"),
    (["--catalog-url", "ftp://127.0.0.1"], "http(s) URL"),
    (["--ctk-scenarios", "does/not/exist"], "not a directory"),
])
def test_bad_options_are_usage_errors(pytester: pytest.Pytester, args, needle):
    result = pytester.runpytest(*args, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert needle in result.stderr.str()


def test_helpers():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("10.0.0.1") and not is_loopback("example.com")
    assert parse_headers(["A=1", " B = x=y "]) == {"A": "1", "B": "x=y"}
    with pytest.raises(OptionError):
        parse_headers(["=1"])
