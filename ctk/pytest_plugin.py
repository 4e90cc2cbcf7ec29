"""The ctk pytest plugin (thin; the work is in the library modules). Inert unless activated."""


def pytest_addoption(parser):  # pragma: no cover - replaced by the plugin proper
    pass
