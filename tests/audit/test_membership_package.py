"""privbound.audit.membership as a package: the public names it exports, and modules that share no private names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import privbound
import privbound.audit.membership as membership
from privbound.audit.targets import membership as membership_targets

PUBLIC = ["ATTACKS", "AttackMetrics", "FprPoint", "MembershipResult", "ModelOutputs", "MembershipGame",
          "membership_audit", "train_models", "derived_seed", "model_statistics", "lira_scores", "rmia_scores",
          "loss_scores", "record_risk", "attack_metrics", "membership_epsilon_lower_bound", "guess_grid"]
MODULES = ["game", "attacks", "metrics", "bound", "result", "auditing"]


def test_every_public_name_is_exported_by_the_package():
    assert sorted(membership.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(membership, name) is not None, name
    assert privbound.membership_audit is membership.membership_audit
    assert privbound.audit.MembershipResult is membership.MembershipResult


def test_each_module_exports_what_it_defines():
    for mod in MODULES:
        m = importlib.import_module(f"privbound.audit.membership.{mod}")
        for name in m.__all__:
            obj = getattr(m, name)
            assert getattr(obj, "__module__", m.__name__) == m.__name__, (mod, name)


def _private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
            for a in n.names if a.name.startswith("_") and n.module and n.module.startswith("privbound")
            and not n.module.startswith("privbound._")]


def test_no_private_name_is_imported_across_modules():
    root = Path(membership.__file__).parent
    files = [root / f"{m}.py" for m in MODULES] + [root / "__init__.py", Path(membership_targets.__file__)]
    assert {p.name for p in root.glob("*.py")} == {f.name for f in files[:-1]}
    assert [f for p in files for f in _private_imports(p)] == []


def test_no_module_is_left_behind():
    audit_dir = Path(membership.__file__).parent.parent
    assert not (audit_dir / "membership.py").exists() and not (audit_dir / "membership_targets.py").exists()
