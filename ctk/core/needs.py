"""What would decide a check that this setup could not (``Verdict.needs``): one phrase per kind, named where a
check makes the undecided verdict (``needs=``), never read back from the reason's words.

An unsupported or inconclusive verdict with ``needs`` is "not decided: needs X"; one without is "not applicable"
(or a setup that failed). tests/core/test_needs.py holds the producers of each kind.
"""

from __future__ import annotations

CONTROL_API = "the reference control API (/_ctk: `ctk serve --control-api`), which a third-party catalog lacks"
DB_LINK_OR_CONTROL_API = ("--ctk-db-link (a `ctk interposer` in front of the catalog's database) or "
                          + CONTROL_API)
EXECUTION_COUNTERS = "execution counters: " + CONTROL_API
CONTROL_API_OR_INTERPOSER = (CONTROL_API + ", or the interposer (`ctk run` puts one in front of the catalog unless "
                             "told otherwise)")
INTERPOSER = "the interposer between the kit and the catalog (`ctk run` and the plugin start one)"
SPARK = "--ctk-spark and Spark's jars (`ctk spark-jars`)"
PYICEBERG = "pyiceberg and pyarrow installed (pip install 'iceberg-rest-ctk[all]')"


def max_wait(seconds: float) -> str:
    """A wait of ``seconds`` that --ctk-max-wait does not allow."""
    return f"--ctk-max-wait {seconds:.0f}"


def wall_clock(limit: str) -> str:
    """A check that a wall-clock limit (``limit``: which one, e.g. pytest-timeout's --timeout) stopped."""
    return f"no wall-clock limit on the checks, or a larger one than {limit} (--timeout 0: none)"


ALLOW_REMOTE = "--ctk-allow-remote (the catalog's /v1/config sends clients to a non-loopback address)"
TIMEOUT = "a larger --ctk-timeout (a hang backstop of 6 x --ctk-timeout, at least 60 s, cut the run)"
