"""Conformance checks: functions returning `Verdict`s, each naming a requirement id.

Entry points for the pytest plugin and the CLI (all return ``list[Verdict]``):

- ``CheckContext.create(client, interposer=None, options=CheckOptions(...))`` (ctk.checks.context)
- ``run_global_checks(ctx)``                 DISC-01..04, KEY-01, KEY-02
- ``run_endpoint_checks(ctx, operation)``    every per-endpoint behaviour for one operationId
- ``run_all(ctx)``                           both, for every endpoint in the catalog
- ``ENDPOINT_CHECKS`` / ``GLOBAL_CHECKS``    (behaviour, function) pairs; ``function(ctx, endpoint)``
"""

from __future__ import annotations

from ctk.checks.context import CheckContext, CheckOptions
from ctk.checks.discovery import DISCOVERY_CHECKS
from ctk.checks.idempotency import ENDPOINT_CHECKS
from ctk.checks.keys import KEY_CHECKS
import ctk.checks.semantics  # noqa: F401 - registers the catalog-semantics checks and installs their baseline gate
from ctk.core.verdicts import Verdict
from ctk.catalog import ENDPOINTS, Endpoint, get_endpoint

GLOBAL_CHECKS = DISCOVERY_CHECKS + KEY_CHECKS


def run_global_checks(ctx: CheckContext, behaviours: list[str] | None = None) -> list[Verdict]:
    out: list[Verdict] = []
    for behaviour, fn in GLOBAL_CHECKS:
        if behaviours is None or behaviour in behaviours:
            out += fn(ctx)
    return out


def run_endpoint_checks(ctx: CheckContext, operation: str | Endpoint,
                        behaviours: list[str] | None = None) -> list[Verdict]:
    endpoint = operation if isinstance(operation, Endpoint) else get_endpoint(operation)
    out: list[Verdict] = []
    for behaviour, fn in ENDPOINT_CHECKS:
        if behaviours is None or behaviour in behaviours:
            out += fn(ctx, endpoint)
    return out


def run_all(ctx: CheckContext, operations: list[str] | None = None,
            behaviours: list[str] | None = None) -> list[Verdict]:
    out = run_global_checks(ctx, behaviours)
    for op in operations or list(ENDPOINTS):
        out += run_endpoint_checks(ctx, op, behaviours)
    return out


__all__ = ["CheckContext", "CheckOptions", "ENDPOINT_CHECKS", "GLOBAL_CHECKS", "run_all", "run_endpoint_checks",
           "run_global_checks"]
