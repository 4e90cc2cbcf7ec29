"""Generated conformance: schemathesis over the OpenAPI document's mutations with a key and a replay of each
(GEN-01, SCHEMA-01), and a hypothesis state machine of the catalog against a model (GEN-02; SEM-01/02 for
what its plain mutations show). How much is generated is a count (--ctk-examples, --ctk-steps), never a time:
the same verdicts on a busy machine as on a quiet one; --ctk-gen-budget is only a hang backstop.
Deterministic (derandomized, or --ctk-seed)."""

from ctk.fuzzing import run_openapi_checks, run_stateful_check


def test_generated_openapi(ctk_session, ctk_context):
    o = ctk_session.options
    return run_openapi_checks(ctk_context, spec_path=o.openapi_spec, examples=o.examples, seed=o.seed,
                              backstop_s=o.gen_budget)


def test_generated_stateful(ctk_session, ctk_context):
    o = ctk_session.options
    return run_stateful_check(ctk_context, examples=o.examples, steps=o.steps, seed=o.seed,
                              backstop_s=o.gen_budget, report_dir=o.reports)
