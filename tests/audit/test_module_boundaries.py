"""No private name crosses a module boundary inside audit/: each module uses the others' public names only.

Deterministic source scans: no error rate to state.
"""

from __future__ import annotations

import ast
from pathlib import Path


def private_crossings(path: Path) -> list[str]:
    """``line: module.name`` for every private name (one leading underscore) ``path`` takes from a privbound module:
    imported by name, or read as an attribute of a privbound module it imported."""
    tree = ast.parse(path.read_text(), str(path))
    modules, bad = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("privbound"):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    bad.append(f"{node.lineno}: {node.module}.{a.name}")
                else:
                    modules.add(a.asname or a.name)  # a submodule imported by name is read below
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("privbound") and a.asname:
                    modules.add(a.asname)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            bad.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return bad


def test_no_private_name_crosses_a_module_boundary_inside_audit(repo_root):
    bad = [f"{path.relative_to(repo_root)}:{hit}" for path in sorted((repo_root / "audit").rglob("*.py"))
           for hit in private_crossings(path)]
    assert bad == []


def test_the_scan_sees_a_private_import_and_a_private_attribute(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from privbound.audit.statistics import _shortlist, Split\n"
                   "from privbound.audit import statistics as S\n"
                   "import privbound.audit.engine as E\n"
                   "x = S._FAMILIES, E._check_seed, S.Split, _local\n")
    assert private_crossings(src) == ["1: privbound.audit.statistics._shortlist", "4: S._FAMILIES", "4: E._check_seed"]
