"""Generated conformance: schemathesis over the OpenAPI document's mutations with a key and a replay of each
(GEN-01, SCHEMA-01), and a hypothesis state machine of the catalog against a model (GEN-02). Bounded by
--ctk-examples, --ctk-steps and --ctk-gen-budget; deterministic (derandomized, or --ctk-seed)."""

from ctk.fuzzing import run_openapi_checks, run_stateful_check


def test_generated_openapi(ctk_session, ctk_context):
    o = ctk_session.options
    return run_openapi_checks(ctk_context, spec_path=o.openapi_spec, examples=o.examples, seed=o.seed,
                              time_budget=o.gen_budget)


def test_generated_stateful(ctk_session, ctk_context):
    o = ctk_session.options
    return run_stateful_check(ctk_context, examples=o.examples, steps=o.steps, seed=o.seed,
                              time_budget=o.gen_budget, report_dir=o.reports)
