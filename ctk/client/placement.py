"""Where the kit puts what it creates: the run namespace (inside ``--ctk-parent-namespace`` when given) and the
namespaces checks need besides it.

`Placement.child(name)` is the namespace a check creates for a case: a child of the run namespace when the
target supports nested namespaces, else a sibling of the run namespace whose name starts with the run
namespace's own (run-unique) name. Siblings are registered (`siblings`) so that cleanup drops exactly them and
nothing else outside the run namespace.

`Placement.absent()` is a namespace a check needs NOT to exist (a create or rename into a missing namespace): named
``ctk_absent_{n}`` (n counts from 1 per run namespace), placed like a child, and whatever a catalog makes there
anyway is named `STRAY`. A lenient catalog may store a table there without the namespace: no listing shows it, so
the run's cleanup, and `ctk cleanup` after a run that could not clean up, drop `STRAY` by name in each of those
namespaces (`ctk.catalog.facade.drop_strays`). `left` collects what a step of the run (a probe) made and could not
remove, for the run's cleanup problems.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

ABSENT = "ctk_absent"      # the stem of the namespaces the kit needs not to exist (`Placement.absent`)
STRAY = "ctk_stray"        # the name of a table or view a check creates or renames into such a namespace
MAX_ABSENT = 16            # the most absent namespaces a run uses (`ctk cleanup` looks at that many)


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
    absents: int = 0                         # absent namespaces handed out (`absent`)
    left: list[str] = field(default_factory=list)   # what the run's own steps made and could not remove
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

    def absent(self) -> tuple[str, ...]:
        """A namespace the kit never creates, placed like a child: ``ctk_absent_{n}``, n from 1 (at most
        MAX_ABSENT; past that the last one again: a check that needs a missing namespace finds it missing either way,
        and the cleanup looks at every name it may be)."""
        with self._lock:
            self.absents = min(self.absents + 1, MAX_ABSENT)
            n = self.absents
        return self.child(f"{ABSENT}_{n}")

    def leave(self, problem: str) -> None:
        """Note what a step of the run made and could not remove (reported with the cleanup problems)."""
        with self._lock:
            if problem not in self.left:
                self.left.append(problem)

    def owns(self, ns: tuple[str, ...]) -> bool:
        """Whether ``ns`` is the run namespace, inside it, or a sibling the kit registered."""
        ns = tuple(ns)
        if ns[: len(self.run)] == self.run:
            return True
        with self._lock:
            return any(ns[: len(s)] == s for s in self.siblings)
