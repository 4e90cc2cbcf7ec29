"""Fixtures of the reporting tests."""

import pytest

from reporting_sample import build_sample
from ctk.reporting.model import RunReport


@pytest.fixture
def sample() -> RunReport:
    return build_sample()
