"""The modules of privbound.reports import each other without a cycle, counting imports inside functions.

The graph is built from the source (ast), so an import that runs only when a function is called counts
as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "privbound.reports"
ROOT = Path(__file__).resolve().parents[2] / "reports"


def module_names(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted name -> source file of every module of the package (``__init__`` as the package itself)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join([package, *parts])] = path
    return names


def imported_modules(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` (module ``name``) imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from package import module`` depends on that module, ``from module import name`` on the module.
            candidates = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                          for alias in node.names]
        else:
            continue
        for candidate in candidates:
            # ``import a.b.c`` also imports a.b and a: the longest known prefix is the module depended on.
            parts = candidate.split(".")
            for i in range(len(parts), 0, -1):
                prefix = ".".join(parts[:i])
                if prefix in known:
                    if prefix != name:
                        found.add(prefix)
                    break
    return found


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (top-level and function-level imports alike)."""
    names = module_names(root, package)
    return {name: imported_modules(path, name, set(names)) for name, path in names.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_reports_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) >= 10  # the package was found and parsed
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in privbound.reports: " + " -> ".join(cycle)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_graph_sees_imports_inside_functions_and_relative_imports(tmp_path):
    root = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "def f():\n    from pkg.b import g\n    return g\n",
        "b.py": "from . import c\n",
        "c.py": "import pkg.sub.d\n",
        "sub/__init__.py": "",
        "sub/d.py": "from ..a import f\n",
        "e.py": "import os\nfrom pkg import e\n",
    })
    graph = import_graph(root, "pkg")
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.sub.d"}
    assert graph["pkg.sub.d"] == {"pkg.a"} and graph["pkg.e"] == set()
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.c", "pkg.sub.d", "pkg.a"]


@pytest.mark.parametrize("graph", [{}, {"a": {"b"}, "b": {"c"}, "c": set()}, {"a": {"b", "c"}, "b": {"c"}, "c": set()}])
def test_no_cycle_in_an_acyclic_graph(graph):
    assert find_cycle(graph) is None
