"""A local wheelhouse made from the distributions this interpreter has installed, so that a test can run a
`pip install` as a user writes it (`pip install nox`, `pip install -e '.[all]'`) without the package index:
`PIP_NO_INDEX=1 PIP_FIND_LINKS=<wheelhouse>`. The tests never contact anything but loopback.

Each installed distribution is packed back into a wheel from the files its RECORD lists inside site-packages
(scripts and data outside it are left out: pip writes console scripts again from entry_points.txt), with the tag
its WHEEL file names and a fresh RECORD. Stored, not compressed: a gigabyte of pyspark and pyarrow packs in
seconds; file modes kept (pip restores the executable bits)."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as md
import re
import zipfile
from pathlib import Path
from typing import Iterable

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# what pip writes at install time, which a wheel does not carry
_INSTALL_ONLY = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _tag(dist: md.Distribution) -> str:
    """The compressed tag set of the distribution's WHEEL file ("py2.py3-none-any" from its two Tag lines)."""
    wheel = dist.read_text("WHEEL") or ""
    tags = [t.split("-") for t in re.findall(r"^Tag:\s*(\S+)", wheel, re.M)]
    if not tags:
        return "py3-none-any"
    return "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))


def pack(dist: md.Distribution, into: Path) -> Path:
    """One installed distribution as a wheel in `into`; returns its path."""
    name = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    version = dist.version
    info = f"{name}-{version}.dist-info"
    out = into / f"{name}-{version}-{_tag(dist)}.whl"
    site = Path(str(dist.locate_file(""))).resolve()
    record: list[str] = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for entry in dist.files or ():
            path = Path(str(dist.locate_file(entry))).resolve()
            parts = Path(entry).parts
            if ".." in parts or "__pycache__" in parts or not path.is_file():
                continue
            if not path.is_relative_to(site):
                continue
            if parts[0].endswith(".dist-info"):
                if parts[-1] in _INSTALL_ONLY:
                    continue
                arcname = "/".join((info, *parts[1:]))
            else:
                arcname = "/".join(parts)
            data = path.read_bytes()
            member = zipfile.ZipInfo(arcname)
            # type and mode: pip makes a member executable only where both say a regular file with an x bit (pyspark's bin/)
            member.external_attr = (path.stat().st_mode & 0xFFFF) << 16
            zf.writestr(member, data)
            record.append(f"{arcname},{_digest(data)},{len(data)}")
        record.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return out


def closure(requirements: Iterable[str]) -> list[md.Distribution]:
    """The installed distributions `requirements` need, with their dependencies (markers evaluated, extras
    followed); a requirement that is not installed here raises LookupError naming it."""
    seen: dict[str, md.Distribution] = {}
    followed: set[tuple[str, str]] = set()        # (distribution, extra or "" for its plain requirements)
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        key = canonicalize_name(req.name)
        if key not in seen:
            try:
                seen[key] = md.distribution(req.name)
            except md.PackageNotFoundError:
                raise LookupError(f"{req.name} is not installed in this interpreter") from None
        for extra in sorted({"", *req.extras}):
            if (key, extra) in followed:
                continue
            followed.add((key, extra))
            for raw in seen[key].requires or ():
                sub = Requirement(raw)
                if (sub.marker is None and not extra) or (sub.marker is not None
                                                           and sub.marker.evaluate({"extra": extra})):
                    todo.append(sub)
    return list(seen.values())


def build(requirements: Iterable[str], into: Path, *, leave_out: Iterable[str] = ()) -> list[Path]:
    """A wheelhouse in `into` holding every installed distribution `requirements` need but those named in
    `leave_out` (a project the test builds from its source)."""
    into.mkdir(parents=True, exist_ok=True)
    skip = {canonicalize_name(n) for n in leave_out}
    return [pack(dist, into) for dist in closure(requirements)
            if canonicalize_name(dist.metadata["Name"]) not in skip]
