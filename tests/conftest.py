"""Shared by all of the kit's own tests. pytester drives inner pytest runs of the plugin (tests/plugin,
tests/scenarios); pytest allows `pytest_plugins` only in this top-level conftest."""

pytest_plugins = ["pytester"]
