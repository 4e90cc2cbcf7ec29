"""No import circle among the modules of one ctk package: inside a package (a room of the layer table) the
modules import one way, so each can be read, tested and replaced after the ones it builds on. Every import
counts: module level, inside a function, and under ``if TYPE_CHECKING`` (a circle of types is a circle of
ideas). The check is shown to fail on a package with a circle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package(module: str, is_init: bool) -> str:
    return module if is_init else module.rpartition(".")[0]


def import_graph(root: Path, top: str = "ctk") -> tuple[dict[str, set[str]], dict[str, str]]:
    """(module -> the modules of ``top`` it imports, module -> its package), from the source under ``root``."""
    modules: dict[str, Path] = {_module_name(p, root): p for p in (root / top).rglob("*.py")}
    package = {m: _package(m, p.name == "__init__.py") for m, p in modules.items()}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:   # relative: from the module's package, up level-1 more
                    anchor = package[mod].split(".")
                    anchor = anchor[:len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                # `from pkg import sub` names a submodule when one exists, else a name of pkg
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                while t and t not in modules:       # `import ctk.a.b.c` of an attribute: the module that has it
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    graph[mod].add(t)
    return graph, package


def cycles_within_packages(graph: dict[str, set[str]], package: dict[str, str]) -> list[list[str]]:
    """The import circles (strongly connected components of two or more modules) among the modules of each
    package, sorted; edges between packages are the layer contract's matter, not this one's."""
    inner = {m: {t for t in ts if package[t] == package[m]} for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:     # Tarjan, iterative over the (small) graph's recursion depth
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(inner[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(inner):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_circle_inside_a_package():
    graph, package = import_graph(ROOT)
    assert len(graph) > 50 and "ctk.interposer.link" in graph
    found = cycles_within_packages(graph, package)
    assert found == [], "import circles inside a package (make one module of each pair the lower one):\n" + \
        "\n".join(" <-> ".join(c) for c in found)


def test_a_circle_inside_a_package_is_found(tmp_path):
    pkg = tmp_path / "ctk" / "room"
    pkg.mkdir(parents=True)
    (tmp_path / "ctk" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from ctk.room.b import B\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ctk.room import c\n")
    (pkg / "c.py").write_text("def f():\n    from .a import A\n")        # function-level and relative
    (pkg / "d.py").write_text("import ctk.room.a\n")                       # one way: no circle
    other = tmp_path / "ctk" / "other"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "x.py").write_text("import ctk.room.d\n")
    (pkg / "e.py").write_text("import ctk.other.x\n")                      # across packages: not this check's
    graph, package = import_graph(tmp_path)
    assert cycles_within_packages(graph, package) == [["ctk.room.a", "ctk.room.b", "ctk.room.c"]]
