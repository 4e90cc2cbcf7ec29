"""Where the kit puts what it creates: the run namespace (inside ``--ctk-parent-namespace`` when given) and the
namespaces checks need besides it.

`Placement.child(name)` is the namespace a check creates for a case: a child of the run namespace when the
target supports nested namespaces, else a sibling of the run namespace whose name starts with the run
namespace's own (run-unique) name. Siblings are registered (`siblings`) so that cleanup drops exactly them and
nothing else outside the run namespace.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


def parse_namespace(text: str | None) -> tuple[str, ...]:
    """``("a", "b")`` from ``"a.b"``; ``()`` from None or an empty string. Levels must not be empty."""
    if not text:
        return ()
    parts = tuple(p.strip() for p in text.split("."))
    if any(not p for p in parts):
        raise ValueError(f"namespace {text!r} has an empty level")
    return parts


@dataclass
class Placement:
    run: tuple[str, ...]                     # the run namespace (parent levels included)
    nested: bool | None = None               # whether a child of the run namespace can be created and loaded
    nesting_note: str | None = None          # what the probe saw
    siblings: list[tuple[str, ...]] = field(default_factory=list)
    probe: Any = None                        # the probe's full record (ctk.catalog.facade.NestingProbe)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def parent(self) -> tuple[str, ...]:
        return self.run[:-1]

    def child(self, name: str) -> tuple[str, ...]:
        """The namespace for a check's ``name``: run + (name,), or a registered run-unique sibling."""
        if self.nested is not False:
            return self.run + (name,)
        ns = self.parent + (f"{self.run[-1]}_{name}",)
        with self._lock:
            self.siblings.append(ns)
        return ns

    def owns(self, ns: tuple[str, ...]) -> bool:
        """Whether ``ns`` is the run namespace, inside it, or a sibling the kit registered."""
        ns = tuple(ns)
        if ns[: len(self.run)] == self.run:
            return True
        with self._lock:
            return any(ns[: len(s)] == s for s in self.siblings)
