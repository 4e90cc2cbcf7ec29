"""The registry of the catalog-semantics checks: ``@semantic(...)`` registers a check with its requirement, its
area (the report column), the operation it judges, what else it sends, the capabilities it needs, the tests of
Iceberg's compatibility kit it covers, and whether it is the *baseline* of its operation (the plain operation
whose effect the retry checks of that operation rest on: ``ctk.checks.semantics.baseline``).

A check is ``fn(t: SemRun) -> Verdict | list[Verdict]``; ``run_semantic(ctx, check)`` runs it behind the gates
(operations advertised, capabilities known and present) and turns what a setup step showed broken into an
inconclusive verdict naming that finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ctk.catalog.capabilities import Capability
from ctk.catalog.cases import spec_operation
from ctk.core.behaviours import Behaviour, check
from ctk.core.rck import COVERS, NOT_OBSERVABLE, qualified
from ctk.core.requirements import REQUIREMENTS
from ctk.checks.semantics.trace import Assertion, trace_of

AREAS: dict[str, Behaviour] = {
    "namespaces": Behaviour.CATALOG_NAMESPACES,
    "tables": Behaviour.CATALOG_TABLES,
    "listing": Behaviour.CATALOG_LISTING,
    "evolution": Behaviour.CATALOG_EVOLUTION,
    "transactions": Behaviour.CATALOG_TRANSACTIONS,
    "views": Behaviour.CATALOG_VIEWS,
    "types": Behaviour.CATALOG_TYPES,
}


@dataclass(frozen=True)
class SemanticCheck:
    name: str                          # unique slug, e.g. "drop-empty-namespace"
    requirement: str
    behaviour: Behaviour               # the area's column
    operation: str                     # the operationId judged (the verdict's endpoint)
    uses: tuple[str, ...]              # further operationIds the check sends (gated by the advertised endpoints)
    needs: tuple[Capability, ...]      # capabilities without which the check is not applicable
    baseline: bool                     # the plain-operation baseline of `operation`
    fn: Callable[..., Any]

    @property
    def id(self) -> str:
        """The test id: requirement and name (``-k NS-06`` or ``-k drop-empty-namespace`` selects it)."""
        return f"{self.requirement}-{self.name}"

    @property
    def area(self) -> str:
        return REQUIREMENTS[self.requirement].area

    @property
    def rck(self) -> tuple[str, ...]:
        """The compatibility-kit tests it covers, "CatalogTests.testX" / "ViewCatalogTests.x"
        (``ctk.core.rck.COVERS``)."""
        return COVERS.get(self.name, ())

    @property
    def asserts(self) -> tuple[Assertion, ...]:
        """What the check asserts, each with the sentence that states it (``trace.TRACE``; docs/assertion-trace.md)."""
        return trace_of(self.name)


SEMANTIC_CHECKS: dict[str, SemanticCheck] = {}
_KNOWN_RCK = frozenset(qualified())


def semantic(requirement: str, operation: str, *, uses: tuple[str, ...] = (), needs: tuple[Capability, ...] = (),
             baseline: bool = False, name: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(t)`` as a semantic check. Unknown requirements, operations or areas are errors at import;
    the compatibility-kit tests it covers are ``ctk.core.rck.COVERS[slug]`` (checked by ``rck_problems``)."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        where = f"semantic check {fn.__module__}.{fn.__qualname__}"
        req = REQUIREMENTS.get(requirement)
        if req is None:
            raise ValueError(f"{where}: unknown requirement {requirement!r}")
        if req.area not in AREAS:
            raise ValueError(f"{where}: {requirement} is in area {req.area!r}, not a catalog-semantics area "
                             f"({', '.join(AREAS)})")
        for op in (operation, *uses):
            spec_operation(op)      # raises for an operationId the kit's OpenAPI document lacks
        slug = name or fn.__name__.removeprefix("check_").replace("_", "-")
        entry = SemanticCheck(slug, requirement, AREAS[req.area], operation, tuple(uses), tuple(needs),
                              baseline, fn)
        other = SEMANTIC_CHECKS.get(slug)
        if other is not None and (other.fn.__module__, other.fn.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(f"{where}: the name {slug!r} is already taken by {other.fn.__module__}."
                             f"{other.fn.__qualname__}")
        SEMANTIC_CHECKS[slug] = entry
        check(requirement=requirement, behaviour=entry.behaviour)(fn)
        fn.ctk_semantic = entry  # type: ignore[attr-defined]
        return fn

    return wrap


def semantic_checks(area: str | None = None) -> list[SemanticCheck]:
    """The registered semantic checks (of ``area``), by area column, then requirement, then registration."""
    order = {rid: i for i, rid in enumerate(REQUIREMENTS)}
    items = [c for c in SEMANTIC_CHECKS.values() if area is None or c.area == area]
    return sorted(items, key=lambda c: (c.behaviour.order, order[c.requirement]))


def baselines(operation: str) -> list[SemanticCheck]:
    """The baseline checks of ``operation`` (what its retry checks rest on)."""
    return [c for c in semantic_checks() if c.baseline and c.operation == operation]


def rck_coverage() -> dict[str, list[SemanticCheck]]:
    """Every compatibility-kit test -> the semantic checks covering it (empty: see NOT_OBSERVABLE)."""
    out: dict[str, list[SemanticCheck]] = {t: [] for t in qualified()}
    for c in semantic_checks():
        for t in c.rck:
            out[t].append(c)
    return out


def rck_problems() -> list[str]:
    """What ``ctk.core.rck.COVERS`` names wrongly: a slug no semantic check has, a name that is not a
    compatibility-kit test. Empty when every entry holds."""
    problems = [f"COVERS[{slug!r}]: no semantic check of that name" for slug in COVERS if slug not in SEMANTIC_CHECKS]
    problems += [f"COVERS[{slug!r}]: {t!r} is not a compatibility-kit test" for slug, tests in COVERS.items()
                 for t in tests if t not in _KNOWN_RCK]
    return problems


def uncovered() -> list[str]:
    """Compatibility-kit tests neither covered by a check nor listed as not observable over REST."""
    return [t for t, cs in rck_coverage().items() if not cs and t not in NOT_OBSERVABLE]


def untraced() -> list[str]:
    """What the assertion trace misses or names wrongly: a check declaring no assertion with a source, an entry
    naming no registered check, an unknown source or grade, an RCK test ``ctk.core.rck`` does not know, a note
    graded as a finding. Empty when every check's assertions are traced."""
    from ctk.checks.semantics.trace import GRADES, SOURCES, TRACE

    problems = [f"{c.id}: declares no assertion with a source (ctk/checks/semantics/trace.py)"
                for c in semantic_checks() if not any(a.source != "none" for a in c.asserts)]
    problems += [f"trace entry {name!r}: no semantic check of that name" for name in TRACE
                 if name not in SEMANTIC_CHECKS]
    for name, items in TRACE.items():
        for a in items:
            if a.source not in SOURCES or a.grade not in GRADES:
                problems.append(f"{name}: {a.what!r}: source {a.source!r} / grade {a.grade!r} unknown")
            if a.source == "rck" and a.where not in _KNOWN_RCK:
                problems.append(f"{name}: {a.what!r}: {a.where!r} is not a compatibility-kit test")
            if a.source == "none" and a.grade != "note":
                problems.append(f"{name}: {a.what!r}: what no source states can only be a note")
            if not a.quote.strip():
                problems.append(f"{name}: {a.what!r}: no sentence quoted")
    return problems

