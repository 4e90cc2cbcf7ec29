"""Redaction of recorded bodies: secrets go, everything else stays exactly as sent."""

from __future__ import annotations

import json

import pytest

from ctk.core.exchange import REDACTED, Exchange, redact_text


@pytest.mark.parametrize("body", [
    '{"token": "abc", "x": 1}',
    '{"config": {"s3.secret-access-key": "abc"}}',
    '{"\\u0074oken": "abc"}',                       # a field name spelt with an escape
    '{"a": [{"Client_Secret": "abc"}]}',
])
def test_secret_values_are_redacted(body):
    out = redact_text(body)
    assert "abc" not in out and REDACTED in out
    assert json.loads(out)                          # still JSON


def test_form_bodies_are_redacted():
    out = redact_text("grant_type=client_credentials&client_secret=abc&scope=x")
    assert "abc" not in out and "scope=x" in out


@pytest.mark.parametrize("body", ['{"metadata": {"format-version": 2, "schemas": []}}', '{ "a" : 1 }', "plain text"])
def test_bodies_without_secret_names_are_kept_as_sent(body):
    assert redact_text(body) == body


def test_exchange_to_dict_redacts_headers_and_bodies():
    ex = Exchange("POST", "http://127.0.0.1/v1/oauth/tokens", {"Authorization": "Bearer abc"}, '{"password": "abc"}',
                  200, {}, '{"access_token": "abc"}')
    d = ex.to_dict()
    assert "abc" not in json.dumps(d)
