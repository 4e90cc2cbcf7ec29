"""CLIENT-01: a real Iceberg client works against the target end to end.

pyiceberg's `RestCatalog`, pointed at the target with the kit's settings (URI, prefix, warehouse, token or
OAuth2 credential, extra headers), creates a table in the run namespace, appends twice, reloads the table and
reads every row back. pyiceberg sends its own requests (create bodies, commit bodies, the access-delegation
header); the table files are written and read with the kit's storage settings (what the catalog vends with the
table + ``--catalog-property``) behind the kit's loopback guard.

Judging (what is observed, for the observed cause):
* setup the client cannot get past through no fault of the requirement - pyiceberg missing, storage outside
  loopback (the guard), no place to create tables (the kit's own create-table is refused too), the catalog
  pointing clients at a non-loopback URI, storage or the connection failing (an OSError, not a catalog
  answer) - is inconclusive with the reason;
* the table created but an append, the reload or the read failing, or rows missing/extra, fails, naming the
  step and the error, and the causes in the order they happen: first appends the catalog acknowledged but the
  table it loads does not record (fewer snapshots than acknowledged appends: the rows were never committed),
  then a load answer for the committed table that lacks ``metadata-location`` (e.g. calls it
  ``metadata_location`` or ``metadataLocation``): clients compare metadata locations to refresh and then commit
  on a stale base.
"""

from __future__ import annotations

import threading
from typing import Any

from ctk.checks.common import guarded
from ctk.core.behaviours import Behaviour, check
from ctk.core import needs
from ctk.core.verdicts import Verdict
from ctk.client.transport import table_path
from ctk.catalog import Catalog, Endpoint, PrerequisiteError, readback
from ctk.client.errors import EffectMissing
from ctk.client.storage import StorageGuardError, StorageSettings
from ctk.client.config import is_loopback_host
from ctk.checks.context import CheckContext
from ctk.checks.common import Run

REQ = "CLIENT-01"
ROWS = ([1, 2, 3], [4, 5, 6])
MISNAMED = ("metadata_location", "metadataLocation", "metadata-Location", "metadatalocation")


class _Inconclusive(Exception):
    """A setup step of the real client failed for a reason that is not the requirement's."""


def catalog_properties(client: Any) -> dict[str, str]:
    """RestCatalog properties for the kit's target (the URI the kit talks to, the discovered prefix)."""
    t = client.target
    props: dict[str, str] = {"uri": t.base_url}
    if client.prefix:
        props["prefix"] = client.prefix
    if t.warehouse:
        props["warehouse"] = t.warehouse
    if t.token:
        props["token"] = t.token
    if t.credential:
        props["credential"] = t.credential
        props["oauth2-server-uri"] = t.base_url.rstrip("/") + "/v1/oauth/tokens"
        props["scope"] = t.oauth_scope
    for k, v in (t.headers or {}).items():
        props[f"header.{k}"] = v
    props.update(getattr(client, "storage_properties", None) or {})
    return props


def _config_redirects(discovery: Any, allow_remote: bool) -> str | None:
    """A /v1/config that points clients at a non-loopback URI or token endpoint (pyiceberg would follow it)."""
    if allow_remote:
        return None
    for block in (getattr(discovery, "overrides", None) or {}, getattr(discovery, "defaults", None) or {}):
        for key in ("uri", "oauth2-server-uri"):
            value = block.get(key)
            if isinstance(value, str) and value:
                from urllib.parse import urlsplit

                host = urlsplit(value).hostname
                if host and not is_loopback_host(host):
                    return (f"/v1/config sets {key} = {value}, which is not a loopback address; pyiceberg would "
                            "go there (pass --ctk-allow-remote to let it)")
    return None


def misnamed_location(body: Any) -> str | None:
    """The cause when a load answer lacks ``metadata-location``: the spelling it used instead, if any."""
    if not isinstance(body, dict) or body.get("metadata-location"):
        return None
    other = next((k for k in MISNAMED if body.get(k)), None)
    if other:
        return (f"the load answer for the committed table names the field `{other}` instead of "
                "`metadata-location` (LoadTableResult), so clients cannot tell the metadata changed and commit "
                "on a stale base")
    return ("the load answer for the committed table has no `metadata-location` (LoadTableResult: it is returned "
            "unless the metadata is not yet committed), so clients cannot tell the metadata changed")


def unrecorded_appends(acknowledged: int, body: Any) -> str | None:
    """The cause when appends the catalog acknowledged are not in the table it loads: its load answer after the
    appends records fewer snapshots than appends were acknowledged (None when it cannot tell or they are)."""
    if not acknowledged or not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
        return None
    snaps = body["metadata"].get("snapshots") or []
    if len(snaps) >= acknowledged:
        return None
    return (f"the catalog acknowledged {acknowledged} append(s) (each commit answered success) but the table it "
            f"loads afterwards records {'no snapshot' if not snaps else f'{len(snaps)} snapshot(s)'}: the appended "
            "rows were never recorded")


def _cause_class(unrecorded: str | None, misnamed: str | None) -> str | None:
    """The classification of the first cause."""
    if unrecorded:
        return "appends not recorded"
    return "metadata-location missing" if misnamed else None


def _with_kit_io(table: Any, client: Any, ns: tuple[str, ...], name: str) -> tuple[Any, Any]:
    """pyiceberg's table with the kit's guarded FileIO (vended settings + --catalog-property) and the kit's
    own load answer for it (recorded, asked with the access-delegation header)."""
    from pyiceberg.table import Table

    ex = client.request("GET", table_path(ns, name), label="real client: load table (kit)")
    body = ex.json() if ex.status == 200 else None
    if isinstance(body, dict):
        settings = client.storage_settings(body, table.metadata.location)
    else:   # still behind the guard: pyiceberg's own properties for the table, the user's on top
        settings = StorageSettings({**dict(table.io.properties), **(client.storage_properties or {})},
                                   bool(client.storage_allow_remote))
        body = None
    io = settings.file_io(table.metadata.location, f"table {'.'.join(ns)}.{name}'s files")
    return Table(table.name(), table.metadata, table.metadata_location, io, table.catalog), body


# semantics first: a client that appends and reads back rests on plain commits that work (a create that does not
# shows at the client's own steps, and its finding goes first of the root causes anyway)
@guarded(REQ, Behaviour.PYICEBERG, needs_support=False, needs_endpoint=False, gate_on=("updateTable",))
def _pyiceberg(run: Run, ctx: CheckContext, endpoint: Endpoint, budget_s: float) -> Verdict:
    try:
        import pyarrow as pa
        from pyiceberg.catalog.rest import RestCatalog
        from pyiceberg.schema import Schema
        from pyiceberg.types import LongType, NestedField, StringType
    except ImportError as exc:
        return run.unsupported(f"pyiceberg/pyarrow not installed: {exc}", needs=needs.PYICEBERG)
    client = ctx.client
    redirect = _config_redirects(ctx.discovery, bool(getattr(client, "storage_allow_remote", False)))
    if redirect:
        return run.inconclusive(redirect, needs=needs.ALLOW_REMOTE)
    ns = tuple(ctx.namespace)
    name = ctx.unique("rc")
    # a place to create tables: the kit's own create-table (the Java client's body) first
    probe = ctx.unique("rc_probe")
    Catalog(client).create_table(ns, probe)

    steps: list[str] = []
    state: dict[str, Any] = {}

    def work() -> None:
        try:
            steps.append("connect (GET /v1/config)")
            catalog = RestCatalog("ctk-real-client", **catalog_properties(client))
            schema = Schema(NestedField(1, "id", LongType(), required=False),
                            NestedField(2, "data", StringType(), required=False))
            steps.append("create table")
            table = catalog.create_table((*ns, name), schema=schema)
            table, body = _with_kit_io(table, client, ns, name)
            state["after_create"] = body
            for i, ids in enumerate(ROWS, 1):
                steps.append(f"append {i}")
                table.append(pa.table({"id": pa.array(ids, pa.int64()), "data": pa.array([f"r{x}" for x in ids])}))
                state["appended"] = i          # pyiceberg's commit of this append was acknowledged
            steps.append("reload")
            table, body = _with_kit_io(catalog.load_table((*ns, name)), client, ns, name)
            state["after_appends"] = body
            steps.append("read")
            got = table.scan().to_arrow()
            state["rows"] = sorted(got.column("id").to_pylist())
            state["snapshots"] = len(table.metadata.snapshots)
        except BaseException as exc:  # noqa: BLE001 - judged below by the step it happened in
            state["error"] = exc

    worker = threading.Thread(target=work, name="ctk-real-client", daemon=True)
    worker.start()
    worker.join(budget_s)
    step = steps[-1] if steps else "start"
    details = {"steps": list(steps), "rows": state.get("rows"), "snapshots": state.get("snapshots")}
    if worker.is_alive():
        return run.inconclusive(f"pyiceberg did not finish within {budget_s:.0f} s (at step: {step}); "
                                "this hang backstop is 6 x --ctk-timeout (at least 60 s): raise --ctk-timeout",
                                "timed out", details, needs=needs.TIMEOUT)
    # the causes in the order they happen: appends acknowledged but never recorded come before how the load
    # answer spells the metadata location
    # appends the client was told landed, whose snapshots main never points at: a broken plain append (EVO-06)
    # the client's verdict would rest on, not a client finding (EffectMissing: inconclusive naming it)
    after = state.get("after_appends")
    if after is None and state.get("appended"):     # the client stopped before its reload: the kit reads it
        got = client.request("GET", table_path(ns, name), label="real client: load table (kit) after the appends")
        after = got.json() if got.status == 200 else None
    partly = readback.append_in_part((after or {}).get("metadata") if isinstance(after, dict) else None,
                                     state.get("appended", 0))
    if partly is not None:
        raise EffectMissing("EVO-06", f"the real client's appends: {partly}")
    unrecorded = unrecorded_appends(state.get("appended", 0), state.get("after_appends"))
    misnamed = misnamed_location(state.get("after_appends")) or misnamed_location(state.get("after_create"))
    causes = [c for c in (unrecorded, misnamed) if c]
    cause = "\ncause: ".join(causes) if causes else None
    if unrecorded:
        details["appends_acknowledged"] = state.get("appended", 0)
    error = state.get("error")
    if isinstance(error, StorageGuardError):
        return run.inconclusive(f"the real client's table files were not touched: {error}", "storage guard", details)
    if error is not None:
        text = f"{type(error).__name__}: {error}"
        details["error"] = text[:2000]
        if step.startswith("connect"):
            return run.inconclusive(f"pyiceberg could not connect to the catalog: {text}", "connect", details)
        if isinstance(error, OSError) and not cause:   # storage or transport (requests' errors are OSErrors too)
            return run.inconclusive(f"pyiceberg's I/O failed at step '{step}' (storage or connection, not a "
                                    f"catalog answer): {text}", "I/O failed", details)
        if step == "create table" and _is_http_4xx(error):
            return run.broken("pyiceberg's create-table request accepted where the kit's own create-table was",
                              f"pyiceberg's create-table failed: {text}", "create rejected", details)
        happened = f"pyiceberg failed at step '{step}': {text}"
        if cause:
            happened += f"\ncause: {cause}"
        return run.broken("pyiceberg creates a table, appends twice, reloads and reads every row back", happened,
                          _cause_class(unrecorded, misnamed) or f"failed at {step}", details)
    want = sorted(ROWS[0] + ROWS[1])
    if state.get("rows") != want:
        happened = f"read back ids {state.get('rows')}, not {want}"
        if cause:
            happened += f"\ncause: {cause}"
        return run.broken(f"the {len(want)} appended rows read back", happened,
                          _cause_class(unrecorded, misnamed) or "rows differ", details)
    if cause:
        return run.broken("the load answer of a committed table carries `metadata-location`", cause,
                          _cause_class(unrecorded, misnamed), details)
    return run.ok(f"pyiceberg created a table, appended twice ({state.get('snapshots')} snapshots), reloaded it and "
                  f"read all {len(want)} rows back", "round trip", details)


def _is_http_4xx(exc: BaseException) -> bool:
    """pyiceberg's mapped REST errors for a 4xx answer (BadRequest, NoSuchNamespace, Forbidden, ...)."""
    name = type(exc).__name__
    return name in ("BadRequestError", "NoSuchNamespaceError", "ForbiddenError", "UnauthorizedError",
                    "TableAlreadyExistsError", "ValidationError", "NotFoundError")


@check(requirement=REQ, behaviour=Behaviour.PYICEBERG)
def check_pyiceberg(ctx: CheckContext) -> list[Verdict]:
    """CLIENT-01 with pyiceberg; a refused kit create-table (no place for tables) is inconclusive."""
    budget = max(60.0, float(getattr(ctx.client.target, "timeout", 10.0)) * 6)
    try:
        return _pyiceberg(ctx, None, budget)
    except PrerequisiteError as exc:  # pragma: no cover - guarded() already turns these into inconclusive
        return [Verdict.inconclusive(REQ, f"setup failed: {exc}", behaviour=Behaviour.PYICEBERG)]


__all__ = ["check_pyiceberg", "catalog_properties", "misnamed_location"]
