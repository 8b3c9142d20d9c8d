"""The optional Opacus example (``benchmarks/opacus_train.py``) through the adapter; skipped without torch and opacus.

Seeded; the Opacus run is (2, 1e-5)-DP by its noise calibration, so the audit flags it with probability <= 0.05.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("opacus")


def _load(repo_root):
    spec = importlib.util.spec_from_file_location("_bench_opacus_train", repo_root / "benchmarks" / "opacus_train.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_opacus_train_is_audited_black_box(repo_root):
    from privbound.audit.canaries import InputCanary, audit_training

    mod = _load(repo_root)
    rng = np.random.default_rng(0)
    X = np.c_[rng.uniform(-0.7, 0.7, size=(20, 2)), np.zeros(20)]
    y = (X[:, 0] > 0).astype(float)
    train = mod.make_train()
    model = train((X, y), np.random.default_rng(1))
    assert model.loss(X[:3], y[:3]).shape == (3,)
    r = audit_training(train, (X, y), InputCanary([0.0, 0.0, 10.0], 1.0), epsilon=2.0, delta=1e-5, trials=100)
    assert r.details["threat_model"] == "black-box-last-iterate" and not r.violation
