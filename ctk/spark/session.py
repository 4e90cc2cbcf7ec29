"""A SparkSession wired to a REST catalog under test, plus a record of what the Iceberg client sent.

`spark_session(catalog_url, ...)` returns a SparkSession (`master`, default local[2]; 1g driver, UI off, the
driver bound to 127.0.0.1) with the Iceberg SQL extensions and a catalog of type `rest` named `name` (also the default
catalog), configured with the kit's URL, prefix, warehouse and auth. The jars come from `ctk spark-jars`
(`ctk.spark.jars.classpath`); when they are missing the error says so. With Maven access instead, set
CTK_SPARK_PACKAGES=org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:<version> (spark.jars.packages).

`master` may be a Spark standalone cluster, ``spark://HOST:PORT`` (`check_master` says which URLs are taken):
the driver stays here, bound to 127.0.0.1; executors get the Iceberg jars through `spark.jars` (the driver
serves them) and 512m each unless `extra_conf` says otherwise; the table files must be where the executors can
reach them (docs/spark.md).

One JVM serves a Python process: the first call starts it; later calls get a `newSession()` on the same
SparkContext (own SQL conf, own catalog instances), so several targets or catalog names can coexist. Use
distinct `name`s for distinct targets in one session.

What the client did: with `record=True` (the default) Spark talks to the catalog through an interposer on
127.0.0.1 with a tap (`RequestRecorder`), which forwards every request unchanged and notes method, path,
status and duration. `session_info(spark).recorder` gives the records; `commit_stats(records)` counts
commit attempts (POST to a table or /transactions/commit) and their 409s, which is how optimistic-concurrency
retries of the Java client show up. This sees exactly what went over the wire, for any catalog. Against the
reference catalog with its control API, `reference_executions(url)` reads `GET /_ctk/executions` as well.

`through`: a proxy between Spark and the catalog (e.g. the interposer, "http://127.0.0.1:PORT" or
(host, port)): Spark (and the recorder) send to it instead of `catalog_url`.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ctk.spark import jars as _jars

SPARK_CATALOG_CLASS = "org.apache.iceberg.spark.SparkCatalog"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"

_lock = threading.Lock()


class SparkUnavailable(RuntimeError):
    """Java, pyspark or the assembled jars are missing; the message says what to do."""


DEFAULT_MASTER = "local[2]"
_LOCAL = re.compile(r"^local(\[(\d+|\*)(,\d+)?\])?$")
_STANDALONE = re.compile(r"^spark://([^/:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$")


def check_master(master: str, *, allow_remote: bool = False) -> str:
    """`master` as given when it is local, local[N], local[*], local[N,F] or spark://HOST:PORT (a standalone
    cluster; HOST a loopback address unless `allow_remote`); ValueError saying what is taken otherwise."""
    master = (master or "").strip()
    if _LOCAL.match(master):
        return master
    m = _STANDALONE.match(master)
    if not m:
        raise ValueError(f"{master!r} is not a Spark master URL the kit takes: local[N] or spark://HOST:PORT "
                         "(a standalone cluster)")
    host = m.group(1).strip("[]")
    if not 0 < int(m.group(2)) < 65536:
        raise ValueError(f"{master!r}: the port must be 1..65535")
    from ctk.client.config import is_loopback_host

    if not allow_remote and not is_loopback_host(host):
        raise ValueError(f"{master!r} is not a loopback address; the kit contacts only 127.0.0.0/8 unless "
                         "--ctk-allow-remote is given")
    return master


# ----------------------------------------------------------------------------------------------- recorder


@dataclass
class RecordedRequest:
    method: str
    path: str  # path and query as sent by the client
    status: int | None  # None: the upstream could not be reached / the exchange broke
    seconds: float
    started: float  # time.time()
    error: str | None = None


class RequestRecorder:
    """What the Iceberg client sent: a tap on an interposer (ctk.interposer) on 127.0.0.1 in front of
    `upstream` (an http:// base URL). The interposer forwards every byte unchanged (no toxic is ever added to
    it); the tap notes each exchange when its answer went out, or when the connection ended before it."""

    def __init__(self, upstream: str, *, timeout: float = 120.0) -> None:
        from ctk.interposer import Interposer

        parts = urlsplit(upstream)
        if parts.scheme != "http":
            raise ValueError(f"the recorder forwards plain http only, got {upstream!r}")
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or 80
        self.upstream_path = parts.path.rstrip("/")
        self.timeout = timeout
        self.records: list[RecordedRequest] = []
        self._records_lock = threading.Lock()
        self._interposer = Interposer(upstream=(self.upstream_host, self.upstream_port), name="ctk-spark-recorder",
                                      protocol="http")
        self._interposer.add_tap(self._tap)
        self.address = self._interposer.start()

    def _tap(self, request: Any, status: int | None, error: str | None) -> None:
        """Called on the interposer's thread, once per request."""
        seconds = time.monotonic() - request.began
        path = request.target
        if self.upstream_path and path.startswith(self.upstream_path + "/"):
            path = path[len(self.upstream_path):]
        record = RecordedRequest(request.method, path, status, seconds, time.time() - seconds, error)
        with self._records_lock:
            self.records.append(record)

    @property
    def url(self) -> str:
        """Where a client sends what it would send to `upstream` (the upstream's path included)."""
        return f"http://{self.address[0]}:{self.address[1]}{self.upstream_path}"

    def snapshot(self) -> list[RecordedRequest]:
        with self._records_lock:
            return list(self.records)

    def clear(self) -> None:
        with self._records_lock:
            self.records.clear()

    def stop(self) -> None:
        self._interposer.stop()


_COMMIT_PATH = re.compile(r"^/v1/(?:.+/)?(?:namespaces/[^/]+/tables/[^/?]+|transactions/commit)(?:\?.*)?$")


def is_commit(rec: RecordedRequest) -> bool:
    """A table commit (updateTable) or a multi-table commit; createTable (POST .../tables) is not one."""
    return rec.method == "POST" and bool(_COMMIT_PATH.match(rec.path)) and not rec.path.split("?")[0].endswith("/tables")


def commit_stats(records: list[RecordedRequest]) -> dict[str, int]:
    """Counts over commit requests: attempts, ok (2xx), conflicts (409), server errors (5xx), broken."""
    commits = [r for r in records if is_commit(r)]
    return {
        "attempts": len(commits),
        "ok": sum(1 for r in commits if r.status is not None and 200 <= r.status < 300),
        "conflicts": sum(1 for r in commits if r.status == 409),
        "server_errors": sum(1 for r in commits if r.status is not None and r.status >= 500),
        "broken": sum(1 for r in commits if r.status is None),
        "requests": len(records),
    }


def reference_executions(catalog_url: str, timeout: float = 10.0) -> dict | None:
    """`GET /_ctk/executions` of the reference catalog (None when the target has no control API)."""
    parts = urlsplit(catalog_url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", parts.path.rstrip("/") + "/_ctk/executions")
        resp = conn.getresponse()
        data = resp.read()
        return json.loads(data) if resp.status == 200 else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()


# ----------------------------------------------------------------------------------------------- session


@dataclass
class SessionInfo:
    catalog: str  # Spark catalog name
    catalog_url: str  # the catalog itself
    spark_uri: str  # what Spark was told (recorder, `through`, or the catalog)
    recorder: RequestRecorder | None = None
    started_seconds: float = 0.0  # time spent in spark_session()
    conf: dict[str, str] = field(default_factory=dict)


def session_info(spark: Any) -> SessionInfo:
    info = getattr(spark, "_ctk_info", None)
    if info is None:
        raise ValueError("this SparkSession was not made by ctk.spark.session.spark_session")
    return info


def _check_prerequisites() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise SparkUnavailable("pyspark is not installed: pip install 'iceberg-rest-ctk[spark]'") from exc
    try:
        _jars.java_tool("java")
    except _jars.BuildError as exc:
        raise SparkUnavailable(f"Java is not available: {exc} (Java 17 is needed)") from exc


def _through_url(through: Any) -> str:
    if isinstance(through, (tuple, list)):
        host, port = through
        return f"http://{host}:{port}"
    return str(through).rstrip("/")


def catalog_conf(
    name: str,
    uri: str,
    *,
    prefix: str | None = None,
    warehouse: str | None = None,
    token: str | None = None,
    credential: str | None = None,
    scope: str | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, str]:
    """The spark.sql.catalog.<name>.* settings for a REST catalog."""
    base = f"spark.sql.catalog.{name}"
    conf = {
        base: SPARK_CATALOG_CLASS,
        f"{base}.type": "rest",
        f"{base}.uri": uri,
        # no client-side table cache: every statement sees the catalog's current metadata
        f"{base}.cache-enabled": "false",
    }
    if prefix:
        conf[f"{base}.prefix"] = prefix.strip("/")
    if warehouse:
        conf[f"{base}.warehouse"] = warehouse
    if token:
        conf[f"{base}.token"] = token
    if credential:
        conf[f"{base}.credential"] = credential
        if scope:
            conf[f"{base}.scope"] = scope
    for k, v in (headers or {}).items():
        conf[f"{base}.header.{k}"] = v
    return conf


def spark_session(
    catalog_url: Any,
    *,
    name: str = "ctk",
    prefix: str | None = None,
    warehouse: str | None = None,
    token: str | None = None,
    credential: str | None = None,
    headers: dict[str, str] | None = None,
    jars_dir: str | Path | None = None,
    through: Any = None,
    record: bool = True,
    extra_conf: dict[str, str] | None = None,
    master: str | None = None,
    spark_conf: dict[str, str] | None = None,
) -> Any:
    """A SparkSession with an Iceberg `rest` catalog called `name` (also the default catalog).

    `catalog_url` is a base URL without /v1 (or a `TargetConfig`, whose prefix/warehouse/auth/headers are used
    unless given here). Raises `SparkUnavailable` when Java, pyspark or the jars are missing.
    `extra_conf`: more spark.sql.* settings of this session; `master` and `spark_conf` (any Spark setting, e.g.
    spark.executor.memory, spark.driver.host) apply when this call starts the SparkContext of the process.
    """
    t0 = time.monotonic()
    scope = None
    if not isinstance(catalog_url, str):  # a TargetConfig
        target = catalog_url
        catalog_url = target.url
        prefix = prefix if prefix is not None else target.prefix
        warehouse = warehouse if warehouse is not None else target.warehouse
        token = token if token is not None else target.token
        credential = credential if credential is not None else target.credential
        headers = {**(target.headers or {}), **(headers or {})}
        scope = getattr(target, "oauth_scope", None)
    master = check_master(master or DEFAULT_MASTER, allow_remote=True)
    catalog_url = catalog_url.rstrip("/")
    if catalog_url.endswith("/v1"):
        catalog_url = catalog_url[: -len("/v1")]
    _check_prerequisites()
    packages = os.environ.get("CTK_SPARK_PACKAGES") if jars_dir is None else None
    classpath: list[Path] = []
    if not packages:
        try:
            classpath = _jars.classpath(Path(jars_dir) if jars_dir else None)
        except _jars.JarsMissing as exc:
            raise SparkUnavailable(
                f"{exc} (or, with Maven access, set CTK_SPARK_PACKAGES="
                "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:<version>)"
            ) from exc

    upstream = _through_url(through) if through is not None else catalog_url
    recorder = RequestRecorder(upstream) if record else None
    uri = recorder.url if recorder else upstream
    conf = catalog_conf(name, uri, prefix=prefix, warehouse=warehouse, token=token, credential=credential,
                        scope=scope, headers=headers)
    conf["spark.sql.defaultCatalog"] = name
    conf.update(extra_conf or {})

    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    try:
        with _lock:
            active = SparkContext._active_spark_context  # noqa: SLF001 - the documented way to detect it
            if active is None:
                os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
                os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
                os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
                scratch = Path(tempfile.mkdtemp(prefix="ctk-spark-"))
                builder = (
                    SparkSession.builder.master(master)
                    .appName(f"ctk-{name}")
                    .config(*(("spark.jars.packages", packages) if packages
                              else ("spark.jars", ",".join(str(p) for p in classpath))))
                    .config("spark.driver.host", "127.0.0.1")
                    .config("spark.driver.bindAddress", "127.0.0.1")
                    .config("spark.ui.enabled", "false")
                    .config("spark.ui.showConsoleProgress", "false")
                    .config("spark.driver.memory", "1g")
                    .config("spark.sql.shuffle.partitions", "2")
                    .config("spark.sql.extensions", EXTENSIONS)
                    .config("spark.sql.catalogImplementation", "in-memory")
                    .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
                    .config("spark.local.dir", str(scratch / "tmp"))
                    .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
                )
                if master.startswith("spark://"):   # executors of a standalone cluster: small, like its workers
                    builder = builder.config("spark.executor.memory", "512m")
                settings = {**conf, **(spark_conf or {})}
                user_jars = (spark_conf or {}).get("spark.jars")
                if packages is None and user_jars:   # the user's jars go with the kit's
                    settings["spark.jars"] = ",".join([*(str(p) for p in classpath), user_jars])
                for k, v in settings.items():
                    builder = builder.config(k, v)
                spark = builder.getOrCreate()
                spark.sparkContext.setLogLevel("ERROR")
            else:
                running = active.master
                if master != DEFAULT_MASTER and running != master:
                    raise SparkUnavailable(
                        f"a SparkContext on {running} is already running in this process, not on {master}; "
                        "stop it first (spark.stop())")
                loaded = active.getConf().get("spark.jars", "") + active.getConf().get("spark.jars.packages", "")
                if not ("iceberg-spark-runtime" in loaded and all(p.name in loaded for p in classpath)):
                    raise SparkUnavailable(
                        "a SparkContext without the ctk Iceberg jars is already running in this process; "
                        "stop it first (spark.stop())"
                    )
                spark = SparkSession(active).newSession()
                for k, v in conf.items():
                    spark.conf.set(k, v)
    except BaseException:
        if recorder:
            recorder.stop()
        raise
    # the kit's record rides on the session object (read back by session_info); SparkSession does not declare it
    setattr(spark, "_ctk_info", SessionInfo(name, catalog_url, uri, recorder, time.monotonic() - t0, conf))
    return spark


def stop_session(spark: Any, *, stop_spark: bool = False) -> None:
    """Stop the recorder of `spark`; with `stop_spark` also the SparkContext (every session of the process)."""
    info = getattr(spark, "_ctk_info", None)
    if info is not None and info.recorder is not None:
        info.recorder.stop()
    if stop_spark:
        spark.stop()
