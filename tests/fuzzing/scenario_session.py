"""What ctk.scenarios.runner.run_scenario needs from a session, made from a check context (a module of its own:
`from conftest import ...` picks whichever directory's conftest was imported last when several test directories
run in one pytest session)."""

from __future__ import annotations

from types import SimpleNamespace

from ctk.checks.context import CheckContext


def session_for(ctx: CheckContext) -> SimpleNamespace:
    return SimpleNamespace(client=ctx.client, namespace=ctx.namespace[0], context=ctx, discovery=ctx.discovery,
                           options=ctx.options)
