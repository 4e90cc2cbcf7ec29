"""What a catalog supports of what the REST spec leaves open: its capabilities, and where each was learnt.

Iceberg's compatibility kit asks a catalog's test class (``supportsNestedNamespaces()``, ``supportsNamesWithDot()``,
...); a catalog author sets them by hand. The kit learns them instead, in this order:

1. declared by the user (``--ctk-capability NAME=yes|no``): for a catalog that misreports one;
2. the ``endpoints`` list of ``/v1/config`` (views: the view endpoints are listed; without a list, the spec's
   default set is assumed, which has no views);
3. a probe the first check that needs the capability runs, in its own namespace (nested namespaces, names with
   '.' or '/', pagination, format v3, storage): what the catalog did, with the exchange that showed it.

A semantic check that needs a capability the catalog lacks is not applicable, with the reason and its source;
one whose capability is unknown (the probe itself failed) is inconclusive. ``Capabilities.summary()`` is what
the reports' "catalog capabilities" section shows.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Callable


class Capability(StrEnum):
    """A capability name (the value, as ``--ctk-capability`` and the reports spell it) and what it means."""

    description: str

    def __new__(cls, value: str, description: str = "") -> "Capability":
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.description = description
        return obj

    NAMESPACE_PROPERTIES = ("namespace-properties", "keeps the properties a namespace is created with")
    NESTED_NAMESPACES = ("nested-namespaces", "creates a namespace inside another and loads it back")
    VIEWS = ("views", "serves the view endpoints")
    NAMES_WITH_DOT_OR_SLASH = ("names-with-dot-or-slash", "accepts '.' and '/' inside a namespace level or name")
    PAGINATION = ("pagination", "pages listings by pageSize with a next-page-token")
    FORMAT_V3 = ("format-v3", "creates format-version 3 tables")
    STORAGE = ("storage", "table files the kit can read and write (a local warehouse, or one given by "
                          "--catalog-property)")
    PURGE = ("purge", "deletes a table's files on dropTable with purgeRequested")
    REGISTER_TABLE = ("register-table", "serves registerTable")
    REGISTER_VIEW = ("register-view", "serves registerView")

    @classmethod
    def parse(cls, name: str) -> "Capability":
        try:
            return cls(name)
        except ValueError:
            raise ValueError(f"unknown capability {name!r} (known: {', '.join(c.value for c in cls)})") from None


@dataclass(frozen=True)
class Known:
    """What the kit knows of one capability: supported or not (None: could not be learnt), how it was learnt
    ("declared", "config", "probe"), and the observation it rests on."""

    supported: bool | None
    source: str
    why: str

    def to_dict(self) -> dict[str, object]:
        return {"supported": self.supported, "source": self.source, "why": self.why}


def parse_declared(values: list[str] | tuple[str, ...] | None) -> dict[Capability, bool]:
    """``--ctk-capability`` values (``NAME=yes|no``, several separated by ',') -> {capability: supported}.
    A malformed value or an unknown name raises ValueError naming it and the known names."""
    out: dict[Capability, bool] = {}
    for raw in values or ():
        for item in str(raw).split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, flag = item.partition("=")
            if not sep or flag.strip().lower() not in ("yes", "no", "true", "false", "on", "off", "1", "0"):
                raise ValueError(f"--ctk-capability {item!r}: give NAME=yes or NAME=no")
            out[Capability.parse(name.strip())] = flag.strip().lower() in ("yes", "true", "on", "1")
    return out


@dataclass
class Capabilities:
    """The capabilities of one target as this process learnt them. ``get(cap, probe)`` answers from a
    declaration, else from what was learnt before, else runs ``probe`` once (thread-safe) and keeps its
    answer."""

    declared: dict[Capability, bool] = field(default_factory=dict)
    learnt: dict[Capability, Known] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self, cap: Capability, probe: Callable[[], Known] | None = None) -> Known:
        if cap in self.declared:
            return Known(self.declared[cap], "declared", f"--ctk-capability {cap.value}="
                                                         f"{'yes' if self.declared[cap] else 'no'}")
        with self._lock:
            known = self.learnt.get(cap)
            if known is not None:
                return known
            if probe is None:
                return Known(None, "unknown", f"nothing has shown whether the catalog {cap.description}")
            known = probe()
            self.learnt[cap] = known
            return known

    def note(self, cap: Capability, known: Known) -> None:
        """Record what a check learnt of ``cap`` on its way (a declaration still wins)."""
        with self._lock:
            self.learnt.setdefault(cap, known)

    def summary(self) -> dict[str, dict[str, object]]:
        """{capability: {supported, source, why}} for every capability learnt or declared."""
        out = {c.value: self.get(c).to_dict() for c in self.declared}
        out.update({c.value: k.to_dict() for c, k in self.learnt.items() if c not in self.declared})
        return dict(sorted(out.items()))
