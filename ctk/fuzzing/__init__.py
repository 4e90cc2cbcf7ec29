"""Generated conformance checks: OpenAPI-driven (schemathesis, GEN-01 / SCHEMA-01) and a model-based
state machine (hypothesis, GEN-02).

    from ctk.fuzzing import run_openapi_checks, run_stateful_check
    verdicts = run_openapi_checks(ctx, spec_path=None, examples=10, seed=None, backstop_s=600.0)
    verdicts = run_stateful_check(ctx, examples=10, steps=15, seed=None, backstop_s=600.0, report_dir=None)

Both take a `ctk.checks.context.CheckContext`, touch only names under its run namespace, are bounded by counts
(examples, steps; ``backstop_s`` is only a hang backstop, --ctk-gen-budget), and are deterministic for a given
seed (``seed=None``: derandomized).
"""

from __future__ import annotations

from ctk.fuzzing.openapi_run import GenOptions, mutation_operations, resolve_spec_path, run_openapi_checks
from ctk.fuzzing.stateful import StatefulOptions, run_stateful_check

__all__ = ["GenOptions", "StatefulOptions", "mutation_operations", "resolve_spec_path", "run_openapi_checks",
           "run_stateful_check"]
