"""Key format: KEY-01 (malformed keys rejected) and KEY-02 (header given twice rejected)."""

import pytest

from ctk.checks.keys import KEY_CHECKS


@pytest.mark.parametrize("behaviour,check", KEY_CHECKS, ids=[b for b, _ in KEY_CHECKS])
def test_keys(ctk_context, behaviour, check):
    return check(ctk_context)
