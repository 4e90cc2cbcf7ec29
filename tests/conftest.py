"""Shared by all of the kit's own tests.

pytester drives inner pytest runs of the plugin (tests/plugin, tests/scenarios); pytest allows
`pytest_plugins` only in this top-level conftest. The reference-catalog and PostgreSQL fixtures used by
several test trees live here once."""

import contextlib
import itertools
import os

import pytest
from required import require

pytest_plugins = ["pytester", "skip_guard"]  # skip_guard: under CI=true, a skip not allowed fails


def pytest_runtest_setup(item):
    """A test marked `chromium` (it renders a page with tests/browser.py) is skipped, saying why, where there is
    no Chromium."""
    if item.get_closest_marker("chromium") is not None:
        from browser import CHROMIUM

        if not os.path.exists(CHROMIUM):
            require("Chromium", f"chromium is not installed ({CHROMIUM}); `apt-get install -y chromium`")


def pytest_collection_modifyitems(items):
    """The slow modules that xdist spreads test by test go first (tests/xdist_lanes.py)."""
    import xdist_lanes

    xdist_lanes.order_items(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under `-n`: one unit of work per module, per test in the slow modules (tests/xdist_lanes.py)."""
    import xdist_lanes

    return xdist_lanes.make_scheduler(config, log)


def _schema_problems(where, checked: set | None = None) -> dict:
    """conformance.json files under `where` that claim format ctk-conformance/1 and break the published schema."""
    import json
    from pathlib import Path

    from ctk.reporting.report_schema import problems

    bad = {}
    for path in itertools.islice(Path(where).rglob("conformance.json"), 500):
        if checked is not None:
            if path in checked:
                continue
            checked.add(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == "ctk-conformance/1":
            found = problems(data, limit=5)
            if found:
                bad[str(path)] = found
    return bad


_SCHEMA_CHECKED: set = set()


@pytest.fixture(autouse=True)
def _reports_follow_the_schema(request):
    """Every conformance.json a test leaves in its tmp_path (a `ctk run`, the plugin in pytester, the reporting
    tests) claiming format ctk-conformance/1 validates against the published schema (issue 29 item 8)."""
    yield
    tmp = request.node.funcargs.get("tmp_path") if hasattr(request.node, "funcargs") else None
    if tmp is None or not os.path.isdir(tmp):
        return
    bad = _schema_problems(tmp, _SCHEMA_CHECKED)
    if bad:
        pytest.fail(f"conformance.json breaks docs/conformance.schema.json: {bad}", pytrace=False)


@pytest.fixture(autouse=True, scope="session")
def _session_reports_follow_the_schema(tmp_path_factory):
    """The same for the reports of module- and session-scoped runs (tmp_path_factory), at the session's end."""
    yield
    base = tmp_path_factory.getbasetemp()
    bad = _schema_problems(base, _SCHEMA_CHECKED) if os.path.isdir(base) else {}
    if bad:
        pytest.fail(f"conformance.json breaks docs/conformance.schema.json: {bad}", pytrace=False)


_MATRIX_ROWS: dict[str, dict[str, dict]] = {}


def pytest_runtest_logreport(report):
    """Rows of the sensitivity matrices (tests/checks/conftest.py puts them on each report, so that they reach
    this process from xdist workers too)."""
    for key, value in getattr(report, "user_properties", ()):
        if key == "sensitivity-rows":
            name, tables = value
            for table, rows in tables.items():
                _MATRIX_ROWS.setdefault(name, {}).setdefault(table, {}).update(rows)


def pytest_terminal_summary(terminalreporter):
    """The sensitivity matrices of the session, after the test results: each module's `summary()` over the rows
    every worker reported."""
    import importlib
    import sys

    checks = os.path.join(os.path.dirname(__file__), "checks")
    for name, tables in _MATRIX_ROWS.items():
        if checks not in sys.path:     # an xdist controller collected nothing: the module is not imported here
            sys.path.insert(0, checks)
        module = importlib.import_module(name)
        for table, rows in tables.items():
            getattr(module, table).update(rows)
        text = module.summary()
        if text:
            terminalreporter.section(name, sep="-")
            terminalreporter.line(text)


@pytest.fixture
def ref_server(tmp_path):
    """A started reference catalog (control API on) on a fresh warehouse; stopped at teardown."""
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    with ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / "warehouse"), control_api=True)) as srv:
        yield srv


@pytest.fixture
def ref_client(ref_server):
    """A CatalogClient on `ref_server` (10 s timeout)."""
    from ctk.client.transport import CatalogClient
    from ctk.client.config import TargetConfig

    with CatalogClient(TargetConfig(ref_server.url, timeout=10)) as c:
        yield c


@pytest.fixture
def start_catalog(tmp_path):
    """start_catalog(front=None, interposer=False, options=None, **settings) -> CheckContext.

    A reference catalog with ``settings`` (ReferenceSettings) on a fresh warehouse; ``front(upstream_url)``, when
    given, makes a server to put in front of it (``start() -> url``, ``stop()``; the context keeps it as
    ``test_front``); with ``interposer`` an Interposer in front of all that (``test_interposer``, also the
    context's fault injector); a CheckContext with ``options`` on the outermost URL. What one test started is
    stopped in reverse order at its teardown. The check, odd-server and generated-check tests build on it."""
    from ctk.checks.context import CheckContext
    from ctk.client.config import TargetConfig
    from ctk.client.transport import CatalogClient
    from ctk.reference.server import ReferenceServer
    from ctk.reference.settings import ReferenceSettings

    warehouses = itertools.count()

    with contextlib.ExitStack() as started:
        def start(front=None, interposer: bool = False, options=None, **settings) -> CheckContext:
            ref = ReferenceServer(ReferenceSettings(warehouse=str(tmp_path / f"wh{next(warehouses)}"), **settings))
            url = ref.start()
            started.callback(ref.stop)
            server = None
            if front is not None:
                server = front(url)
                url = server.start()
                started.callback(server.stop)
            ip = None
            if interposer:
                from ctk.interposer import Interposer

                host, port = url.rsplit("//", 1)[1].split(":")
                ip = Interposer(upstream=(host, int(port)))
                h, p = ip.start()
                started.callback(ip.stop)
                url = f"http://{h}:{p}"
            client = CatalogClient(TargetConfig(url, timeout=20.0))
            started.callback(client.close)
            ctx = CheckContext.create(client, interposer=ip, options=options)
            ctx.test_front = server
            ctx.test_interposer = ip            # for tests that add toxics of their own
            return ctx

        yield start


@pytest.fixture(scope="module")
def pg():
    """A throwaway PostgreSQL cluster from Debian's packages on 127.0.0.1 (ctk.interposer.postgres), one per
    test module (catalogs of different modules never share a database); skips with the reason where it cannot be
    started, and fails instead under CI (CI=true), which installs it."""
    from ctk.interposer.postgres import PostgresUnavailable, TemporaryPostgres

    server = TemporaryPostgres()
    try:
        server.start()
    except PostgresUnavailable as exc:
        require("PostgreSQL", f"PostgreSQL cannot be started here: {exc}")
    yield server
    server.stop()
