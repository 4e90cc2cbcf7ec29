"""Command-line options and ini keys of the ctk pytest plugin, and the resolved settings object."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ctk.catalog.capabilities import Capability, parse_declared
from ctk.core.requirements import set_profile
from ctk.plugin.exits import FAIL_ON_CHOICES
from ctk.reporting.known_gaps import KnownGaps, KnownGapsError
from ctk.reporting.known_gaps import load as load_known_gaps

GROUP = "ctk"


# The groups of `ctk run --help` and of the kit's part of `pytest --help`, in this order: by purpose.
GROUPS: dict[str, str] = {
    "target": "target and auth",
    "storage": "storage",
    "placement": "placement",
    "faults": "faults and links",
    "judging": "judging",
    "run": "run and reports",
}


@dataclass(frozen=True)
class Option:
    """One option of the kit: a pytest command-line option (and ini key) of the plugin, which `ctk run`
    (ctk.runner) takes under the same name and passes on to pytest as it is (``forward``) or turns into what
    pytest needs itself (``--workers``: -n N). ``run`` False: pytest only (``--ctk``, which `ctk run` implies)."""
    flag: str
    dest: str
    ini: str | None            # the ini key; None: command line only
    help: str
    kind: str                  # str | float | int | bool | list (repeatable K=V)
    default: object = None
    metavar: str | None = None
    run: bool = True
    group: str = "run"         # a key of GROUPS
    forward: bool = True
    run_default: object = None   # `ctk run`'s default where it differs from pytest's


# The kit's options, the one table: the plugin registers them, `ctk run` forwards them.
OPTIONS: list[Option] = [
    Option("--catalog-url", "ctk_catalog_url", "ctk_catalog_url",
           "base URL of the Iceberg REST catalog under test (without /v1); activates the kit", "str", metavar="URL", group="target"),
    Option("--catalog-image", "ctk_catalog_image", "ctk_catalog_image",
           "start this catalog image with testcontainers (port 8181) and test it (needs a Docker engine; skipped with "
           "the reason where there is none)", "str", metavar="IMAGE", group="target"),
    Option("--catalog-prefix", "ctk_catalog_prefix", "ctk_catalog_prefix",
           "catalog prefix (path segment after /v1/); default: the one /v1/config advertises", "str", metavar="PREFIX", group="target"),
    Option("--warehouse", "ctk_warehouse", "ctk_warehouse", "warehouse to ask /v1/config for", "str", metavar="NAME", group="target"),
    Option("--catalog-token", "ctk_catalog_token", "ctk_catalog_token", "bearer token for the catalog", "str", metavar="TOKEN", group="target"),
    Option("--catalog-credential", "ctk_catalog_credential", "ctk_catalog_credential",
           "OAuth2 client credential CLIENT_ID:SECRET (token fetched from the catalog's token endpoint)", "str", metavar="ID:SECRET", group="target"),
    Option("--catalog-header", "ctk_catalog_header", "ctk_catalog_headers",
           "extra request header K=V (repeatable)", "list", group="target"),
    Option("--openapi-spec", "ctk_openapi_spec", "ctk_openapi_spec",
           "OpenAPI document to validate responses against (default: the kit's open-api/ctk-openapi.yaml)", "str", metavar="PATH", group="judging"),
    Option("--ctk-scenarios", "ctk_scenarios", "ctk_scenarios",
           "directory of scenario files (*.yaml) to run (default: the kit's scenarios/)", "str", metavar="DIR", group="run"),
    Option("--ctk-namespace-prefix", "ctk_namespace_prefix", "ctk_namespace_prefix",
           "prefix of the run namespace the kit creates and removes (default: ctk)", "str", "ctk", metavar="PREFIX", group="placement"),
    Option("--ctk-parent-namespace", "ctk_parent_namespace", "ctk_parent_namespace",
           "existing namespace (levels joined by '.', e.g. bronze or a.b) to create the run namespace in, for "
           "catalogs that allow tables only in fixed namespaces; the kit never creates or drops it", "str", metavar="NS", group="placement"),
    Option("--catalog-property", "ctk_catalog_property", "ctk_catalog_properties",
           "storage property K=V for the kit's own reads and writes of table files, in pyiceberg's names (repeatable; "
           "e.g. s3.endpoint=http://127.0.0.1:9000, s3.access-key-id=..., s3.secret-access-key=..., s3.region=...); "
           "wins over what the catalog vends with a table", "list", group="storage"),
    Option("--ctk-timeout", "ctk_timeout", "ctk_timeout", "timeout of each HTTP request in seconds (default 10)",
           "float", 10.0, metavar="SECONDS", group="target"),
    Option("--ctk-max-wait", "ctk_max_wait", "ctk_max_wait",
           "longest a check may wait in seconds, e.g. for a key lifetime to pass (default 30)", "float", 30.0, metavar="SECONDS", group="faults"),
    Option("--ctk-strict", "ctk_strict", "ctk_strict", "a deviation (SHOULD/MAY broken) fails the test", "bool", False, group="judging"),
    Option("--ctk-capability", "ctk_capability", "ctk_capabilities",
           "declare what the catalog supports where it misreports it or a probe cannot tell, NAME=yes|no "
           "(repeatable or comma-separated; names: namespace-properties, nested-namespaces, views, "
           "names-with-dot-or-slash, pagination, format-v3, storage, ...); the catalog-semantics checks that need "
           "a capability set to no are not applicable", "list", group="judging"),
    Option("--ctk-known-gaps", "ctk_known_gaps", "ctk_known_gaps",
           "the catalog's known-gaps file (YAML, docs/known-gaps.md): the capabilities it declares and its known "
           "gaps, each with a reason; a finding it lists is reported as a known gap and does not fail the run, a "
           "finding it does not list is new (exit 1), a gap whose checks pass is stale (--ctk-fail-on stale)",
           "str", metavar="FILE", group="judging"),
    Option("--ctk-certify", "ctk_certify", "ctk_certify",
           "a certified run: the whole kit, no known gaps, no declared capabilities, every MUST this setup can "
           "decide decided and no finding; the reports say \"certified run\" or which condition failed (exit 8)",
           "bool", False, group="judging"),
    Option("--ctk", "ctk_force", "ctk_autorun",
           "run the kit's suites even without --catalog-url (against the embedded reference catalog)", "bool", False,
           run=False, group="run"),   # `ctk run` adds it itself when no --catalog-url is given
    Option("--ctk-catalog-name", "ctk_catalog_name", "ctk_catalog_name",
           "the catalog's name in the reports and the matrix of `ctk report` (default: the target URL)", "str",
           metavar="NAME", group="run"),
    Option("--ctk-catalog-version", "ctk_catalog_version", "ctk_catalog_version",
           "the catalog's version in the reports and the matrix (default: what /v1/config says, if it says one)",
           "str", metavar="VERSION", group="run"),
    Option("--ctk-reports", "ctk_reports", "ctk_reports", "directory for the reports (default: reports/)", "str",
           "reports", metavar="DIR", group="run"),
    Option("--ctk-allow-remote", "ctk_allow_remote", "ctk_allow_remote",
           "allow a --catalog-url that is not a loopback address, and reads and writes of table files on storage "
           "whose endpoint is not loopback (by default the kit refuses them)", "bool", False, group="target"),
    Option("--ctk-examples", "ctk_examples", "ctk_examples",
           "generated checks: examples per operation (schemathesis) and sequences (stateful model), default 5",
           "float", 5.0, metavar="N", group="run"),
    Option("--ctk-steps", "ctk_steps", "ctk_steps", "stateful model: steps per sequence (default 10)", "float", 10.0, metavar="N", group="run"),
    Option("--ctk-seed", "ctk_seed", "ctk_seed", "seed of the generated checks (default: derandomized, same cases "
           "every run)", "float", metavar="SEED", group="run"),
    Option("--ctk-gen-budget", "ctk_gen_budget", "ctk_gen_budget",
           "hang backstop of the generated checks in seconds (default 600): the OpenAPI cases (GEN-01) and the "
           "stateful model (GEN-02) stop once no request was answered that long; how many cases run is set by "
           "--ctk-examples and --ctk-steps, never by time, so only a hang reaches it (what it cuts is inconclusive)",
           "float", 600.0, metavar="SECONDS", group="run"),
    Option("--ctk-profile", "ctk_profile", "ctk_profile",
           "judge by the levels of 'spec' (the merged OpenAPI spec; default) or 'design' (the design document)",
           "str", "spec", metavar="spec|design", group="judging"),
    Option("--ctk-spark", "ctk_spark", "ctk_spark",
           "also run the Spark pipeline checks (needs pyspark, Java and `ctk spark-jars`)", "bool", False, group="run"),
    Option("--ctk-spark-master", "ctk_spark_master", "ctk_spark_master",
           "Spark master of the pipeline checks: local[N] (default local[2], inside the kit's process) or "
           "spark://HOST:PORT, a standalone cluster (the driver stays here on 127.0.0.1; the table files must be "
           "where the executors reach them: docs/spark.md)", "str", "local[2]", metavar="URL", group="run"),
    Option("--ctk-spark-conf", "ctk_spark_conf", "ctk_spark_confs",
           "Spark setting K=V for the pipeline checks (repeatable; e.g. spark.executor.memory=2g, "
           "spark.driver.host=ADDRESS for a remote cluster; spark.jars given here are added to the kit's)",
           "list", group="run"),
    Option("--ctk-spark-writers", "ctk_spark_writers", "ctk_spark_writers",
           "concurrent writers of the Spark workloads SPARK-01, -02 and -04 (default: 3, 2 and 2)", "int",
           metavar="N", group="run"),
    Option("--ctk-spark-statements", "ctk_spark_statements", "ctk_spark_statements",
           "statements per writer: INSERTs per writer of SPARK-01, appends racing compaction in SPARK-03 "
           "(default: 2 and 2)", "int", metavar="N", group="run"),
    Option("--ctk-spark-rows", "ctk_spark_rows", "ctk_spark_rows",
           "rows per INSERT of SPARK-01 and SPARK-04 (default 5)", "int", metavar="N", group="run"),
    Option("--ctk-db-link", "ctk_db_link", "ctk_db_link",
           "control API of the `ctk interposer` proxy in front of the catalog's database, "
           "http://HOST:PORT/proxies/NAME (loopback): the kit fails, holds and cuts the database link (REPLAY-03, "
           "INFLIGHT-01/02, REPLAY-04 at the database) on any catalog", "str", metavar="URL", group="faults"),
    Option("--ctk-fail-on", "ctk_fail_on", None,
           "also exit 1 when a result has one of these statuses (comma-separated: "
           f"{', '.join(FAIL_ON_CHOICES)}); tests keep their outcome, only the exit code changes", "str",
           metavar="STATUS[,STATUS]", group="judging"),   # read by ctk.plugin.exits.fail_on
    Option("--ctk-requirement", "ctk_requirement", "ctk_requirement",
           "run only the checks that judge these requirements (comma-separated ids, e.g. REPLAY-01,INFLIGHT-02; "
           "`ctk list` shows them); -k also matches requirement ids (REPLAY-01 or REPLAY_01), endpoints and "
           "behaviours", "str", metavar="ID[,ID]", group="run"),
    Option("--workers", "ctk_workers", None,
           "pytest-xdist workers, each with its own run namespace (and embedded catalog); 0: one process. ctk run: "
           "default 3 (the checks mostly wait, so 3 beat 2 on 2 cores); pytest: default one process (as -n N)",
           "int", metavar="N", group="run", forward=False, run_default=3),
]


def _declared_capabilities(values: list[str] | None) -> dict[Capability, bool]:
    try:
        return parse_declared(values)
    except ValueError as exc:
        raise OptionError(f"ctk: {exc}") from None


def _known_gaps(path: object) -> KnownGaps | None:
    """The --ctk-known-gaps file, checked (a usage error naming its line otherwise); None when not given."""
    if not path:
        return None
    try:
        return load_known_gaps(str(path))
    except KnownGapsError as exc:
        raise OptionError(f"ctk: {exc}") from None


def grouped() -> list[tuple[str, list[Option]]]:
    """(title, options) per group of GROUPS, in its order."""
    return [(title, [o for o in OPTIONS if o.group == key]) for key, title in GROUPS.items()]


def add_options(parser: pytest.Parser) -> None:
    for title, options in grouped():
        group = parser.getgroup(f"{GROUP}-{title.replace(' ', '-')}", f"ctk: {title}")
        for o in options:
            _add(parser, group, o)


def _add(parser: pytest.Parser, group: Any, o: Option) -> None:
    if o.kind == "bool":
        group.addoption(o.flag, dest=o.dest, action="store_true", default=None, help=o.help)
    elif o.kind == "list":
        group.addoption(o.flag, dest=o.dest, action="append", default=None, metavar="K=V", help=o.help)
    else:
        group.addoption(o.flag, dest=o.dest, default=None, metavar=o.metavar, help=o.help)
    if o.ini is not None:
        ini_type: Literal["bool", "linelist", "string"] = (
            "bool" if o.kind == "bool" else "linelist" if o.kind == "list" else "string")
        parser.addini(o.ini, help=o.help, type=ini_type, default=None)


def apply_workers(config: pytest.Config) -> None:
    """``--workers N`` given to pytest: the same as ``-n N`` (pytest-xdist), before xdist reads it; a usage error
    naming the option when xdist is missing or -n is given too."""
    raw = config.getoption("ctk_workers", default=None)
    if raw is None or hasattr(config, "workerinput"):    # an xdist worker gets the controller's arguments
        return
    n = _value(config, next(o for o in OPTIONS if o.dest == "ctk_workers"))
    if not config.pluginmanager.hasplugin("xdist"):
        if n:
            raise OptionError(f"ctk: --workers {n} needs pytest-xdist, which is not installed; install it "
                              "(pip install pytest-xdist) or pass --workers 0 for one process")
        return
    given = getattr(config.option, "numprocesses", None)
    if given not in (None, n):
        raise OptionError(f"ctk: give either --workers {n} or -n {given}, not both")
    config.option.numprocesses = n


# a bad option is pytest's usage error (pytest.UsageError is final: this names it, it does not subclass it)
OptionError = pytest.UsageError


def _value(config: pytest.Config, o: Option) -> Any:
    """The option's value (command line, then ini, then its default), of the type its ``kind`` parses to."""
    value = config.getoption(o.dest, default=None)
    if (value is None or value == []) and o.ini is not None:
        try:
            value = config.getini(o.ini)
        except (ValueError, KeyError):
            value = None
        if value in ("", [], None):
            value = None
    if value is None:
        return o.default
    if o.kind == "float":
        raw = value
        try:
            value = float(value)
        except ValueError:
            raise OptionError(f"ctk: {o.flag} must be a number, not {raw!r}") from None
        if value <= 0:
            raise OptionError(f"ctk: {o.flag} must be positive, not {raw!r}")
    if o.kind == "int":
        raw = value
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise OptionError(f"ctk: {o.flag} must be a whole number, not {raw!r}") from None
        if value < 0:
            raise OptionError(f"ctk: {o.flag} must be 0 or more, not {raw!r}")
    if o.kind == "bool" and isinstance(value, str):
        value = value.strip().lower() in ("1", "true", "yes", "on")
    return value


@dataclass
class CtkOptions:
    catalog_url: str | None = None
    catalog_prefix: str | None = None
    warehouse: str | None = None
    catalog_token: str | None = None
    catalog_credential: str | None = None
    catalog_headers: dict[str, str] = field(default_factory=dict)
    openapi_spec: str | None = None
    scenarios: str | None = None
    namespace_prefix: str = "ctk"
    parent_namespace: tuple[str, ...] = ()
    catalog_properties: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0
    max_wait: float = 30.0
    strict: bool = False
    capabilities: dict[Capability, bool] = field(default_factory=dict)   # --ctk-capability NAME=yes|no
    force: bool = False
    autorun: bool = False
    reports: str = "reports"
    allow_remote: bool = False
    examples: int = 5
    steps: int = 10
    seed: int | None = None
    gen_budget: float = 600.0
    spark: bool = False
    spark_master: str = "local[2]"
    spark_conf: dict[str, str] = field(default_factory=dict)
    spark_writers: int | None = None
    spark_statements: int | None = None
    spark_rows: int | None = None
    catalog_image: str | None = None
    db_link: str | None = None
    workers: int | None = None
    requirements: tuple[str, ...] = ()    # --ctk-requirement: only the checks that judge these
    catalog_name: str | None = None       # --ctk-catalog-name (reports and matrix; default the URL)
    catalog_version: str | None = None    # --ctk-catalog-version
    known_gaps: KnownGaps | None = None   # --ctk-known-gaps FILE, read and checked (ctk.reporting.known_gaps)
    certify: bool = False                 # --ctk-certify

    @property
    def active(self) -> bool:
        return bool(self.catalog_url or self.force or self.autorun or self.catalog_image)

    @property
    def embedded(self) -> bool:
        return not self.catalog_url and not self.catalog_image

    @classmethod
    def from_config(cls, config: pytest.Config) -> "CtkOptions":
        values: dict[str, Any] = {}     # each option's value, of the type its kind parses to (see _value)
        for o in OPTIONS:
            values[o.dest] = _value(config, o)
        opts = cls(
            catalog_url=values["ctk_catalog_url"],
            catalog_prefix=values["ctk_catalog_prefix"],
            warehouse=values["ctk_warehouse"],
            catalog_token=values["ctk_catalog_token"],
            catalog_credential=values["ctk_catalog_credential"],
            catalog_headers=parse_headers(values["ctk_catalog_header"] or []),
            openapi_spec=values["ctk_openapi_spec"],
            scenarios=values["ctk_scenarios"],
            namespace_prefix=str(values["ctk_namespace_prefix"]),
            parent_namespace=parse_parent_namespace(values["ctk_parent_namespace"]),
            catalog_properties=parse_properties(values["ctk_catalog_property"] or []),
            timeout=float(values["ctk_timeout"]),
            max_wait=float(values["ctk_max_wait"]),
            strict=bool(values["ctk_strict"]),
            capabilities=_declared_capabilities(values["ctk_capability"]),
            known_gaps=_known_gaps(values["ctk_known_gaps"]),
            certify=bool(values["ctk_certify"]),
            force=bool(config.getoption("ctk_force", default=None)),
            autorun=bool(_ini_bool(config, "ctk_autorun")),
            reports=str(values["ctk_reports"]),
            allow_remote=bool(values["ctk_allow_remote"]),
            examples=int(values["ctk_examples"]),
            steps=int(values["ctk_steps"]),
            seed=None if values["ctk_seed"] is None else int(values["ctk_seed"]),
            gen_budget=float(values["ctk_gen_budget"]),
            spark=bool(values["ctk_spark"]),
            spark_master=str(values["ctk_spark_master"]),
            spark_conf=parse_spark_conf(values["ctk_spark_conf"] or []),
            spark_writers=values["ctk_spark_writers"],
            spark_statements=values["ctk_spark_statements"],
            spark_rows=values["ctk_spark_rows"],
            catalog_image=values["ctk_catalog_image"],
            db_link=values["ctk_db_link"],
            workers=values["ctk_workers"],
            requirements=tuple(_requirement_ids(values["ctk_requirement"])),
            catalog_name=values["ctk_catalog_name"], catalog_version=values["ctk_catalog_version"],
        )
        if opts.known_gaps is not None:     # the file's capabilities; --ctk-capability wins over it
            opts.capabilities = {**opts.known_gaps.capabilities, **opts.capabilities}
        opts.validate()
        try:   # the level every verdict is judged by (ctk.core.requirements)
            set_profile(str(values["ctk_profile"]))
        except ValueError as exc:
            raise OptionError(f"ctk: --ctk-profile: {exc}") from None
        return opts

    def validate(self) -> None:
        if self.catalog_url:
            self.catalog_url = catalog_base_url(self.catalog_url, self.allow_remote)
        if self.db_link:
            from ctk.interposer.client import ProxyLink

            try:
                ProxyLink(self.db_link).close()
            except ValueError as exc:
                raise OptionError(f"ctk: --ctk-db-link: {exc}") from None
        from ctk.spark.session import check_master

        try:
            self.spark_master = check_master(self.spark_master, allow_remote=self.allow_remote)
        except ValueError as exc:
            raise OptionError(f"ctk: --ctk-spark-master: {exc}") from None
        for flag, n in (("--ctk-spark-writers", self.spark_writers), ("--ctk-spark-statements", self.spark_statements),
                        ("--ctk-spark-rows", self.spark_rows)):
            if n is not None and n < 1:
                raise OptionError(f"ctk: {flag} must be 1 or more, not {n}")
        if self.catalog_credential and ":" not in self.catalog_credential:
            raise OptionError("ctk: --catalog-credential must be CLIENT_ID:SECRET")
        if self.catalog_token and self.catalog_credential:
            raise OptionError("ctk: give either --catalog-token or --catalog-credential, not both")
        if not self.namespace_prefix or not all(c.isalnum() or c == "_" for c in self.namespace_prefix):
            raise OptionError(f"ctk: --ctk-namespace-prefix must be letters, digits or '_', "
                              f"not {self.namespace_prefix!r}")
        if self.scenarios and not Path(self.scenarios).is_dir():
            raise OptionError(f"ctk: --ctk-scenarios {self.scenarios!r} is not a directory")
        if self.openapi_spec and not Path(self.openapi_spec).is_file():
            raise OptionError(f"ctk: --openapi-spec {self.openapi_spec!r} is not a file")


def _requirement_ids(text: object) -> list[str]:
    """``--ctk-requirement ID[,ID]`` as known requirement ids (case and '_' for '-' forgiven); a usage error
    names an unknown one."""
    from ctk.core.requirements import REQUIREMENTS

    out = []
    for raw in str(text or "").split(","):
        rid = raw.strip().upper().replace("_", "-")
        if not rid:
            continue
        if rid not in REQUIREMENTS:
            raise OptionError(f"ctk: --ctk-requirement: unknown requirement {raw.strip()!r} (known: "
                              f"{', '.join(REQUIREMENTS)}; `ctk list` shows which check judges which)")
        out.append(rid)
    return out


def catalog_base_url(url: str, allow_remote: bool = False) -> str:
    """The base URL the kit tests for ``--catalog-url`` (a trailing '/' and '/v1' dropped: the kit adds /v1/...);
    a usage error for a URL that is not http(s) with a host, or not loopback without --ctk-allow-remote."""
    base = url.strip().rstrip("/")
    if base.endswith("/v1"):
        base = base[:-3]
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OptionError(f"ctk: --catalog-url must be an http(s) URL with a host (e.g. http://127.0.0.1:8181), "
                          f"not {url!r}")
    if not allow_remote and not is_loopback(parts.hostname):
        raise OptionError(
            f"ctk: --catalog-url {base} is not a loopback address; the kit creates and drops "
            "namespaces there. Pass --ctk-allow-remote to run against it anyway.")
    return base


def _ini_bool(config: pytest.Config, name: str) -> bool:
    try:
        value = config.getini(name)
    except (ValueError, KeyError):
        return False
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def parse_headers(items: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise OptionError(f"ctk: --catalog-header expects K=V, not {item!r}")
        headers[name.strip()] = value.strip()
    return headers


def parse_spark_conf(items: list[str]) -> dict[str, str]:
    """--ctk-spark-conf K=V items as a dict; K a Spark setting (spark.*)."""
    conf: dict[str, str] = {}
    for item in items:
        name, sep, value = str(item).partition("=")
        if not sep or not name.strip().startswith("spark."):
            raise OptionError(f"ctk: --ctk-spark-conf expects K=V with a Spark setting K (e.g. "
                              f"spark.executor.memory=2g), not {item!r}")
        conf[name.strip()] = value.strip()
    return conf


def parse_parent_namespace(text: object) -> tuple[str, ...]:
    """("a", "b") from "a.b"; () when not given."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return ()
    parts = tuple(p.strip() for p in str(text).strip().split("."))
    if any(not p for p in parts):
        raise OptionError(f"ctk: --ctk-parent-namespace must be namespace levels joined by '.', each non-empty, "
                          f"not {text!r}")
    return parts


def parse_properties(items: list[str]) -> dict[str, str]:
    """--catalog-property K=V items (also an ini linelist) as a dict; K must not be empty."""
    props: dict[str, str] = {}
    for item in items:
        name, sep, value = str(item).partition("=")
        if not sep or not name.strip():
            raise OptionError(f"ctk: --catalog-property expects K=V (e.g. s3.endpoint=http://127.0.0.1:9000), "
                              f"not {item!r}")
        props[name.strip()] = value.strip()
    return props


def is_loopback(host: str) -> bool:
    from ctk.client.config import is_loopback_host

    return is_loopback_host(host)


def default_scenarios_dir() -> Path | None:
    """The kit's own scenarios/: next to the package in a checkout, or shipped as package data."""
    here = Path(__file__).resolve().parent.parent  # ctk/
    for candidate in (here.parent / "scenarios", here / "data" / "scenarios"):
        if candidate.is_dir():
            return candidate
    return None


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
