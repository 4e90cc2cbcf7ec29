"""CLIENT-01 (pyiceberg end to end) and the storage guard on a catalog that vends nothing: nothing the kit or its
real client does leaves loopback, every storage-dependent check is inconclusive naming the property to set."""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

import pytest

from ctk.checks import concurrency, real_client
from ctk.checks.context import CheckContext, CheckOptions
from ctk.core.verdicts import Status
from ctk.client.transport import CatalogClient
from ctk.catalog import PrerequisiteError, append_file
from ctk.client.storage import StorageGuardError
from ctk.client.config import TargetConfig


# --------------------------------------------------------------------------------------------- reference

def test_pyiceberg_round_trip_passes_on_the_reference_catalog(make_ctx):
    ctx = make_ctx()
    [v] = real_client.check_pyiceberg(ctx)
    assert v.requirement == "CLIENT-01"
    assert v.status is Status.PASS, v.message
    assert v.details["rows"] == [1, 2, 3, 4, 5, 6] and v.details["snapshots"] == 2


def test_no_place_for_tables_is_inconclusive_not_failed(make_ctx):
    ctx = make_ctx()
    ctx = CheckContext(ctx.client, ctx.discovery, ("no_such_namespace",), ctx.faults, ctx.options)
    [v] = real_client.check_pyiceberg(ctx)
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "create table" in v.message


def test_catalog_properties_carry_the_kits_settings():
    c = CatalogClient(TargetConfig("http://127.0.0.1:1", prefix="dev", warehouse="wh", credential="id:secret",
                                   headers={"X-Tenant": "t1"}))
    c.storage_properties = {"s3.endpoint": "http://127.0.0.1:9000"}
    props = real_client.catalog_properties(c)
    assert props["uri"] == "http://127.0.0.1:1" and props["prefix"] == "dev" and props["warehouse"] == "wh"
    assert props["credential"] == "id:secret" and props["oauth2-server-uri"] == "http://127.0.0.1:1/v1/oauth/tokens"
    assert props["header.X-Tenant"] == "t1" and props["s3.endpoint"] == "http://127.0.0.1:9000"
    c.close()


@pytest.mark.parametrize("body,named", [
    ({"metadata_location": "s3://x/m.json", "metadata": {}}, "`metadata_location`"),
    ({"metadataLocation": "s3://x/m.json", "metadata": {}}, "`metadataLocation`"),
    ({"metadata": {}}, "has no `metadata-location`"),
])
def test_missing_metadata_location_is_named(body, named):
    assert named in real_client.misnamed_location(body)
    assert real_client.misnamed_location({"metadata-location": "s3://x/m.json"}) is None


# ------------------------------------------------------------------- a catalog that vends nothing (S3)

class _S3Catalog:
    """A tiny REST catalog on 127.0.0.1 whose tables live at s3://bucket/... and which vends no storage settings
    (like SeaweedFS `weed mini`). Commits are recorded (there should be none) and answered 409."""

    def __init__(self) -> None:
        self.tables: dict[tuple[str, str], dict] = {}
        self.commits = 0
        self.delegation_headers: list[str | None] = []
        cat = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # noqa: D401 - quiet
                pass

            def _send(self, status, payload=None):
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self):
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n) or b"null") if n else None

            def do_GET(self):
                path = urlsplit(self.path).path
                if path == "/v1/config":
                    return self._send(200, {"defaults": {}, "overrides": {}})
                if path == "/v1/namespaces":
                    return self._send(200, {"namespaces": []})
                m = re.fullmatch(r"/v1/namespaces/([^/]+)/tables/([^/]+)", path)
                if m:
                    cat.delegation_headers.append(self.headers.get("X-Iceberg-Access-Delegation"))
                    t = cat.tables.get((unquote(m[1]), unquote(m[2])))
                    return self._send(200, t) if t else self._send(404, {"error": {
                        "message": "no such table", "type": "NoSuchTableException", "code": 404}})
                if re.fullmatch(r"/v1/namespaces/([^/]+)/(tables|views)", path):
                    return self._send(200, {"identifiers": []})
                if re.fullmatch(r"/v1/namespaces/([^/]+)", path):
                    return self._send(200, {"namespace": unquote(path.rsplit("/", 1)[1]).split("\x1f"),
                                            "properties": {}})
                return self._send(404, {"error": {"message": "no route", "type": "NotFound", "code": 404}})

            def do_POST(self):
                path = urlsplit(self.path).path
                body = self._body()
                if path == "/v1/namespaces":
                    return self._send(200, {"namespace": body["namespace"], "properties": {}})
                m = re.fullmatch(r"/v1/namespaces/([^/]+)/tables", path)
                if m:
                    cat.delegation_headers.append(self.headers.get("X-Iceberg-Access-Delegation"))
                    ns = unquote(m[1])
                    loaded = cat.make_table(ns, body["name"])
                    cat.tables[(ns, body["name"])] = loaded
                    return self._send(200, loaded)
                if re.fullmatch(r"/v1/namespaces/([^/]+)/tables/([^/]+)", path):
                    # appends (a plain set-properties commit, updateTable's baseline, carries no data)
                    cat.commits += any(u.get("action") == "add-snapshot" for u in (body or {}).get("updates") or [])
                    return self._send(409, {"error": {"message": "no", "type": "CommitFailedException",
                                                      "code": 409}})
                return self._send(404, {"error": {"message": "no route", "type": "NotFound", "code": 404}})

            def do_DELETE(self):
                self._send(204)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def make_table(ns: str, name: str) -> dict:
        from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
        from pyiceberg.schema import Schema
        from pyiceberg.table.metadata import new_table_metadata
        from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
        from pyiceberg.types import LongType, NestedField, StringType

        schema = Schema(NestedField(1, "id", LongType(), required=False),
                        NestedField(2, "data", StringType(), required=False))
        location = f"s3://bucket/{ns.replace(chr(31), '/')}/{name}"
        md = new_table_metadata(schema, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, location, {})
        return {"metadata-location": f"{location}/metadata/00000-x.metadata.json",
                "metadata": json.loads(md.model_dump_json(by_alias=True)), "config": {}}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def loopback_only(monkeypatch):
    """Socket-level guard: any connect or name lookup of a non-loopback address is recorded and refused; pyarrow's
    S3 filesystem (C++ sockets the guard cannot see) and its region lookup must never be built at all."""
    attempts: list[str] = []
    real_connect, real_connect_ex, real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def check(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(str(address[0])):
            attempts.append(f"connect {address}")
            raise OSError(f"test guard: non-loopback connect to {address}")

    def connect(sock, address):
        check(sock, address)
        return real_connect(sock, address)

    def connect_ex(sock, address):
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host, *a, **kw):
        if host is not None and not _loopback(str(host)):
            attempts.append(f"resolve {host}")
            raise socket.gaierror(f"test guard: lookup of {host}")
        return real_getaddrinfo(host, *a, **kw)

    import pyarrow.fs

    def no_s3(*a, **kw):
        attempts.append("pyarrow S3FileSystem built")
        raise OSError("test guard: S3FileSystem")

    def no_region(*a, **kw):
        attempts.append("pyarrow resolve_s3_region")
        raise OSError("test guard: resolve_s3_region")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(pyarrow.fs, "S3FileSystem", no_s3)
    monkeypatch.setattr(pyarrow.fs, "resolve_s3_region", no_region)
    return attempts


def test_the_guard_sees_an_attempt(loopback_only):
    """The guard itself can fail: a connect to a non-loopback address is caught and recorded."""
    s = socket.socket()
    with pytest.raises(OSError, match="test guard"):
        s.connect(("192.0.2.1", 9))
    s.close()
    assert loopback_only == ["connect ('192.0.2.1', 9)"]


def test_nothing_leaves_loopback_when_the_catalog_vends_nothing(loopback_only):
    with _S3Catalog() as cat:
        client = CatalogClient(TargetConfig(cat.url, timeout=10.0))
        try:
            ctx = CheckContext.create(client, namespace=("ctk_guard",), options=CheckOptions(max_wait=5.0))
            verdicts = (concurrency.check_requirements(ctx) + concurrency.check_race(ctx, 2)
                        + concurrency.check_serial_appends(ctx, 2, 2) + real_client.check_pyiceberg(ctx))
            for v in verdicts:
                if v.requirement == "OCC-01" and v.status is Status.PASS:
                    continue       # decided on a table without a snapshot: no data file needed (the commits are 409)
                assert v.status is Status.INCONCLUSIVE, (v.requirement, v.status, v.message)
                assert "no s3.endpoint is set" in v.message and "--catalog-property s3.endpoint=" in v.message, \
                    v.message
            assert [v.behaviour.value for v in verdicts if v.requirement == "OCC-01"
                    and v.status is Status.INCONCLUSIVE] == ["requirement:assert-ref-snapshot-id-null"]
            assert {v.requirement for v in verdicts} >= {"OCC-01", "OCC-02", "OCC-03", "HIST-01", "HIST-02",
                                                          "INTEG-01", "CLIENT-01"}
            # the kit's own writers and readers, directly
            from ctk.history.integrity import check_integrity
            from ctk.history.writer import StageError, stage_append

            Catalog = __import__("ctk.catalog", fromlist=["Catalog"]).Catalog
            Catalog(client).create_table(("ctk_guard",), "t")
            with pytest.raises(StageError, match="s3://bucket/ctk_guard/t"):
                stage_append(client, ("ctk_guard",), "t", marker="m")
            with pytest.raises(PrerequisiteError, match="no s3.endpoint"):
                append_file(client, ("ctk_guard",), "t", [1])
            md = dict(cat.tables[("ctk_guard", "t")]["metadata"])
            md["snapshots"] = [{"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1,
                                "manifest-list": "s3://bucket/ctk_guard/t/metadata/snap-1.avro",
                                "summary": {"operation": "append"}, "schema-id": 0}]
            md["current-snapshot-id"] = 1
            with pytest.raises(StorageGuardError, match="no s3.endpoint"):
                check_integrity(md, count_rows=True, check_data_files=True)
            assert cat.commits == 0                       # nothing was committed either
            assert "vended-credentials" in cat.delegation_headers   # asked for vended settings, as clients do
        finally:
            client.close()
    assert loopback_only == [], loopback_only


def test_storage_failure_is_inconclusive(make_ctx, monkeypatch):
    """The client's files cannot be written (storage refuses): not the catalog's fault."""
    from ctk.client.storage import StorageSettings

    class Refusing(StorageSettings):
        def file_io(self, location, what="table files"):
            inner = super().file_io(location, what)

            class IO(type(inner)):
                def new_output(self, path):
                    raise ConnectionRefusedError(f"storage refused {path}")

            inner.__class__ = IO
            return inner

    ctx = make_ctx()
    monkeypatch.setattr(ctx.client, "storage_settings", lambda loaded, location=None: Refusing())
    [v] = real_client.check_pyiceberg(ctx)
    assert v.status is Status.INCONCLUSIVE, v.message
    assert "I/O failed at step 'append 1'" in v.message and "storage refused" in v.message
