"""The installed package: one top-level name, the public face, and the one-way layering.

Deterministic (subprocesses, a wheel build and source scans): no error rate to state.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import privbound

LAYERS = ("learners", "audit", "bounds", "reports")  # each may import only those before it
OLD_TOP_LEVEL = ("audit", "learners", "bounds", "reports")


def _run(args, cwd, timeout=300):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _sources(repo_root: Path, layer: str) -> list[Path]:
    return sorted((repo_root / layer).rglob("*.py"))


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module named by an import statement of ``path`` (inside functions too), with its line."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def test_public_face_names_resolve():
    for name in privbound.__all__:
        assert getattr(privbound, name) is not None, name
    assert privbound.audit_mechanism is privbound.audit.core.audit_mechanism
    assert callable(privbound.bounds.claims) and callable(privbound.bounds.evaluate) and callable(privbound.bounds.check)
    assert privbound.get_target("laplace-eps1").name == "laplace-eps1"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        privbound.nope


def test_importing_privbound_loads_no_heavy_module(tmp_path):
    code = ("import sys, privbound; heavy = [m for m in ('numpy', 'scipy', 'sklearn', 'dp_accounting', "
            "'privbound.audit') if m in sys.modules]; print(heavy)")
    proc = _run(["-c", code], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_old_top_level_names_are_not_importable_outside_the_repository(tmp_path):
    for name in OLD_TOP_LEVEL:
        proc = _run(["-c", f"import {name}"], tmp_path)
        assert proc.returncode != 0 and "No module named" in proc.stderr, name


def test_a_downstream_project_with_its_own_audit_bounds_reports_modules_runs_its_tests(tmp_path):
    # privbound's pytest plugins load in every pytest session of the environment; they must not
    # shadow (or be shadowed by) a project's own modules of the same generic names.
    for name in ("audit", "bounds", "reports"):
        (tmp_path / f"{name}.py").write_text(f"NAME = {name!r}\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_project.py").write_text(
        "import audit, bounds, reports\n"
        "from privbound.audit.pytest_plugin import assert_dp\n\n"
        "def test_own_modules():\n"
        "    assert (audit.NAME, bounds.NAME, reports.NAME) == ('audit', 'bounds', 'reports')\n\n"
        "def test_privacy(dp_audit):\n"
        "    dp_audit(lambda x, rng: x + rng.laplace(scale=1.0), 0.0, 1.0, epsilon=1.0, trials=2000)\n"
    )
    proc = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_the_wheel_installs_only_the_privbound_package(tmp_path, repo_root):
    # built from a copy without build artefacts: a stale build/ folder would hide a missing subpackage
    source = tmp_path / "source"
    shutil.copytree(repo_root, source, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "__pycache__", ".hypothesis", ".benchmarks", "*.whl"))
    proc = _run(["-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
                 str(source)], tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("privbound-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"privbound", f"privbound-{privbound.__version__}.dist-info"}, top
    # every module of every layer ships (a subpackage missing from pyproject's list would not)
    missing = [str(path.relative_to(repo_root)) for layer in LAYERS for path in _sources(repo_root, layer)
               if f"privbound/{path.relative_to(repo_root).as_posix()}" not in names]
    assert not missing, f"modules not in the wheel: {missing}"
    entry_points = zipfile.ZipFile(wheel).read(f"privbound-{privbound.__version__}.dist-info/entry_points.txt")
    assert b"privbound = privbound.reports.cli:main" in entry_points
    assert b"privbound.audit.pytest_plugin" in entry_points and b"privbound.bounds.pytest_plugin" in entry_points


@pytest.mark.parametrize("layer", LAYERS)
def test_no_module_imports_a_layer_above_its_own_or_an_old_top_level_name(layer, repo_root):
    forbidden = {f"privbound.{up}" for up in LAYERS[LAYERS.index(layer) + 1:]}
    bad = []
    for path in _sources(repo_root, layer):
        for line, module in _imported_modules(path):
            root = module.split(".")[0]
            if root in OLD_TOP_LEVEL or any(module == f or module.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(repo_root)}:{line}: {module}")
    assert bad == []


def test_what_every_layer_shares_imports_no_layer(repo_root):
    # privbound/'s shared helper modules (privbound/_*.py) import no layer of privbound and no private
    # scikit-learn module; the public face imports layers only lazily, in its __getattr__.
    def forbidden(module: str) -> bool:
        parts = module.split(".")
        return (parts[0] in OLD_TOP_LEVEL or module.startswith("privbound.")
                or (parts[0] == "sklearn" and any(p.startswith("_") for p in parts[1:])))

    bad = [f"{path.relative_to(repo_root)}:{line}: {module}"
           for path in sorted((repo_root / "privbound").glob("_*.py")) if path.name not in ("__init__.py", "__main__.py")
           for line, module in _imported_modules(path) if forbidden(module)]
    assert bad == []


def test_the_scans_above_see_an_upward_import(tmp_path):
    # The layering test must be able to fail: an upward import inside a function is found.
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from privbound.reports import cli\n    import audit.core\n")
    assert _imported_modules(src) == [(2, "privbound.reports"), (2, "privbound.reports.cli"), (3, "audit.core")]
