"""Storage settings for the kit's own reads and writes of table files, and the loopback guard in front of them.

The kit writes data files, manifests and manifest lists (staged appends) and reads them back (integrity) with
pyiceberg's FileIO. Which object store that FileIO talks to is decided by properties:

* what the catalog returned with the table: ``config`` and the ``storage-credentials`` whose prefix matches
  (asked for with ``X-Iceberg-Access-Delegation: vended-credentials``, as the Java client and pyiceberg do);
* what the user gave with ``--catalog-property K=V`` (pyiceberg names: ``s3.endpoint``, ``s3.region``,
  ``s3.access-key-id``, ``s3.secret-access-key``, ``gcs.service.host``, ``adls.account-host`` ...). These win
  over vended ones: they are the user's explicit word about where storage is.

`StorageSettings.file_io(location)` builds the FileIO, but first `guard_problem()` refuses every object-store
location whose endpoint is not a loopback address, including the store's default public endpoint when no
endpoint is set (pyiceberg/pyarrow would then go for AWS, Google or Azure), unless remote storage was allowed
(``--ctk-allow-remote``). The refusal is a `StorageGuardError` (a `PrerequisiteError`: the check that needed
storage is inconclusive with the message, never failed). The returned FileIO checks every path it is handed
as well, so a manifest pointing at another bucket or scheme is caught too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ctk.client.errors import PrerequisiteError
from ctk.client.config import is_loopback_host

DELEGATION_HEADER = "X-Iceberg-Access-Delegation"
DELEGATION_VALUE = "vended-credentials"

S3_SCHEMES = frozenset({"s3", "s3a", "s3n", "oss"})
GCS_SCHEMES = frozenset({"gs", "gcs"})
ADLS_SCHEMES = frozenset({"abfs", "abfss", "wasb", "wasbs"})
HDFS_SCHEMES = frozenset({"hdfs", "viewfs"})
LOCAL_SCHEMES = frozenset({"", "file"})

ALLOW_HINT = "or --ctk-allow-remote"
REMOTE_HINT = "pass --ctk-allow-remote to let the kit go there"


class StorageGuardError(PrerequisiteError):
    """A read or write of table files would leave loopback (or cannot be placed): the kit did not do it."""


def _host(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    return parts.hostname


def _nonloopback(url: str | None) -> str | None:
    """The host of ``url`` when it is set and not loopback, else None."""
    host = _host(url)
    return host if host and not is_loopback_host(host) else None


def vended_properties(loaded: dict[str, Any] | None, location: str | None = None) -> dict[str, str]:
    """A LoadTableResult's ``config`` plus the ``storage-credentials`` config whose prefix matches ``location``
    (longest prefix wins; all of them when no location is known)."""
    if not isinstance(loaded, dict):
        return {}
    props = {str(k): str(v) for k, v in (loaded.get("config") or {}).items()} \
        if isinstance(loaded.get("config"), dict) else {}
    creds = loaded.get("storage-credentials")
    if isinstance(creds, list):
        matching = [c for c in creds if isinstance(c, dict) and isinstance(c.get("config"), dict)
                    and (location is None or str(location).startswith(str(c.get("prefix") or "")))]
        for cred in sorted(matching, key=lambda c: len(str(c.get("prefix") or ""))):
            props.update({str(k): str(v) for k, v in cred["config"].items()})
    return props


def guard_problem(path: str, props: dict[str, str], what: str = "table files") -> str | None:
    """Why reading/writing ``path`` with these properties could contact a non-loopback address (None: safe)."""
    scheme = urlsplit(path).scheme.lower() if "://" in path else ""
    if len(scheme) == 1:          # a Windows drive letter, not a scheme
        scheme = ""
    if scheme in LOCAL_SCHEMES:
        return None
    lead = f"{what} live at {path}; "

    def hint(*names: str, also: str = "") -> str:
        return ("pass " + " ".join(f"--catalog-property {n}" for n in names) + (f" {also}" if also else "")
                + f" {ALLOW_HINT}")

    def endpoint_problem(endpoint: str | None, name: str, missing: str, public: str, example: str,
                         also: str = "") -> str | None:
        """The storage endpoint is missing (pyiceberg would contact the provider's public one) or not loopback."""
        if not endpoint:
            return (lead + f"{missing}, so pyiceberg would contact the public {public} endpoint; "
                    + hint(example, also=also))
        if host := _nonloopback(endpoint):
            return lead + f"{name} {endpoint} is not a loopback address ({host}); " + hint(example)
        return None

    if scheme in S3_SCHEMES:
        problem = endpoint_problem(props.get("s3.endpoint"), "s3.endpoint", "no s3.endpoint is set", "AWS",
                                   "s3.endpoint=http://127.0.0.1:PORT",
                                   also="(and s3.access-key-id / s3.secret-access-key)")
        if problem:
            return problem
        for key in ("s3.proxy-uri", "s3.signer.uri", "s3.signer.endpoint"):
            value = props.get(key)
            if key == "s3.signer.endpoint" and value and "://" not in value:
                continue  # a path relative to s3.signer.uri
            if host := _nonloopback(value):
                return lead + f"{key} {value} is not a loopback address ({host}); {REMOTE_HINT}"
        if props.get("s3.role-arn") or props.get("client.role-arn"):
            return lead + "an S3 role ARN is set, so pyarrow would ask the public AWS STS endpoint for credentials; " \
                + f"pass static keys (s3.access-key-id / s3.secret-access-key) {ALLOW_HINT}"
        return None
    if scheme in GCS_SCHEMES:
        return endpoint_problem(props.get("gcs.service.host"), "gcs.service.host", "no gcs.service.host is set",
                                "Google Cloud Storage", "gcs.service.host=http://127.0.0.1:PORT")
    if scheme in ADLS_SCHEMES:
        endpoint = props.get("adls.account-host")
        conn = props.get("adls.connection-string") or ""
        if not endpoint and "blobendpoint=" in conn.lower():
            endpoint = next((p.split("=", 1)[1] for p in conn.split(";") if p.lower().startswith("blobendpoint=")), "")
        return endpoint_problem(endpoint, "the Azure endpoint",
                                "no adls.account-host (or adls.connection-string with BlobEndpoint) is set", "Azure",
                                "adls.account-host=127.0.0.1:PORT")
    if scheme in HDFS_SCHEMES:
        host = props.get("hdfs.host") or urlsplit(path).hostname
        if not host or not is_loopback_host(host):
            return lead + f"the HDFS name node {host or '(default)'} is not a loopback address; " + \
                hint("hdfs.host=127.0.0.1")
        return None
    return lead + f"the kit cannot tell where {scheme}:// storage is, so it does not touch it; {REMOTE_HINT}"


@dataclass
class StorageSettings:
    """Properties for pyiceberg's FileIO and whether the loopback guard is lifted."""

    properties: dict[str, str] = field(default_factory=dict)
    allow_remote: bool = False

    def check(self, path: str, what: str = "table files") -> None:
        if self.allow_remote:
            return
        problem = guard_problem(path, self.properties, what)
        if problem:
            raise StorageGuardError(problem)

    def io_properties(self, location: str | None) -> dict[str, str]:
        """The properties handed to pyiceberg; for S3 with a loopback endpoint, settings that keep pyarrow from
        asking AWS for anything (the bucket region, instance metadata credentials)."""
        props = dict(self.properties)
        scheme = urlsplit(location or "").scheme.lower()
        if scheme in S3_SCHEMES and not self.allow_remote:
            props.setdefault("s3.region", props.get("client.region") or "us-east-1")
            props["s3.resolve-region"] = "false"
            if not (props.get("s3.access-key-id") or props.get("client.access-key-id")):
                props.setdefault("s3.anonymous", "true")
            os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
        return props

    def file_io(self, location: str | None, what: str = "table files") -> Any:
        """A FileIO for a table at ``location`` that refuses paths the guard refuses (StorageGuardError)."""
        from pyiceberg.io import load_file_io

        if location:
            self.check(location, what)
        io = load_file_io(self.io_properties(location), location)
        return io if self.allow_remote else GuardedFileIO(io, self)


def _guarded_io_class() -> type:
    from pyiceberg.io import FileIO

    class _GuardedFileIO(FileIO):
        """Delegates to a FileIO after checking each path with the storage guard."""

        def __init__(self, inner: Any, settings: StorageSettings):
            self.inner = inner
            self.settings = settings
            super().__init__(properties=inner.properties)

        def new_input(self, location: str) -> Any:
            self.settings.check(location)
            return self.inner.new_input(location)

        def new_output(self, location: str) -> Any:
            self.settings.check(location)
            return self.inner.new_output(location)

        def delete(self, location: Any) -> None:
            self.settings.check(location if isinstance(location, str) else location.location)
            return self.inner.delete(location)

    return _GuardedFileIO


def GuardedFileIO(inner: Any, settings: StorageSettings) -> Any:  # noqa: N802 - reads as a class
    return _guarded_io_class()(inner, settings)


def settings_for(client: Any, loaded: dict[str, Any] | None, location: str | None = None) -> StorageSettings:
    """The storage settings for a table the catalog returned as ``loaded``: vended properties, then the
    client's ``storage_properties`` (--catalog-property) on top; the guard as the client says."""
    md = (loaded or {}).get("metadata") if isinstance(loaded, dict) else None
    location = location or (md.get("location") if isinstance(md, dict) else None)
    props = dict(vended_properties(loaded, location))
    props.update(getattr(client, "storage_properties", None) or {})
    return StorageSettings(props, bool(getattr(client, "storage_allow_remote", False)))
