"""Tests of the robust-halfspaces learners' sphere mechanism (Theorem 5's exponential mechanism), robust risk and
certified radii (Lemmas 7, 22), instances (Theorems 2-4) and data loaders.

Statistical tests (the samplers' chi-square goodness of fit, level 0.001 each; the random Fourier features' kernel
approximation, > 5 standard deviations) state their error rates where they are; seeds are fixed.
"""

import bz2
import gzip
import math
import struct

import numpy as np
import pytest
from scipy import stats

from privbound.learners.robust_halfspaces.data import load_digits_unit, load_mnist_idx, load_usps, read_idx
from privbound.learners.robust_halfspaces.instances import (
    FingerprintingInstance,
    Theorem4Instance,
    fingerprinting_blocks,
    greedy_sign_packing,
    in_packing_cell,
    margin_realizable,
    sign_packing,
    theorem4_dimension,
)
from privbound.learners.robust_halfspaces.robustness import (
    RandomFourierFeatures,
    brute_force_robust_error,
    certified_radius_linear,
    halfspace_attack,
    linear_flip_attack,
    robust_risk,
)
from privbound.learners.robust_halfspaces.sphere import SphereExponentialMechanism, circle_arcs


# ------------------------------------------------------------------ sphere mechanism


def _data2(rng, n=12):
    X, y, _ = margin_realizable(n, 2, 0.2, rng)
    y[:2] *= -1  # two label errors so the score takes several values
    return X, y


def test_em_empty_dataset_is_uniform_and_density_normalised():
    # q = 0 everywhere on the empty dataset -> density 1 w.r.t. the uniform probability measure.
    em = SphereExponentialMechanism(0.2, 1.0)
    assert np.allclose(em.log_density((np.zeros((0, 2)), np.zeros(0)), np.eye(2)), 0.0)
    rng = np.random.default_rng(0)
    X, y = _data2(rng)
    starts, lengths, q = circle_arcs(X, y, 0.95 * 0.2)
    assert lengths.sum() == pytest.approx(2 * np.pi)
    mids = starts + lengths / 2
    ld = em.log_density((X, y), np.stack([np.cos(mids), np.sin(mids)], -1))
    assert np.sum(np.exp(ld) * lengths / (2 * np.pi)) == pytest.approx(1.0, rel=1e-12)


def test_em_one_point_density_by_hand():
    # One point x = (1, 0), y = +1, gamma = 0.5 (c = 0.475), eps = 2: q = -1 on the arc cos(theta) <= 0.475,
    # whose measure is a = 1 - arccos(0.475)/pi; density e^{-1}/Z there and 1/Z elsewhere, Z = (1 - a) + a e^{-1}.
    em = SphereExponentialMechanism(0.5, 2.0)
    a = 1 - math.acos(0.475) / math.pi
    Z = (1 - a) + a * math.exp(-1)
    ld = em.log_density((np.array([[1.0, 0.0]]), np.array([1.0])), np.array([[1.0, 0.0], [-1.0, 0.0]]))
    np.testing.assert_allclose(ld, [-math.log(Z), -1 - math.log(Z)], rtol=1e-12)


def test_em_samplers_match_exact_arc_probabilities():
    # Chi-square goodness of fit of the score value of 20000 angular and 20000 rejection samples against
    # the exact probabilities from the arcs; level 0.001 each (false alarm <= 0.002), seeds fixed.
    rng = np.random.default_rng(1)
    X, y = _data2(rng)
    em = SphereExponentialMechanism(0.2, 3.0)
    _, lengths, q = circle_arcs(X, y, 0.19)
    vals = np.unique(q)
    logp = np.log(lengths) + 1.5 * q
    p_arc = np.exp(logp - np.logaddexp.reduce(logp))
    expected = np.array([p_arc[q == v].sum() for v in vals])
    for method in ("angular", "rejection"):
        W = SphereExponentialMechanism(0.2, 3.0, method=method).sample((X, y), np.random.default_rng(2), 20000)
        assert np.allclose(np.linalg.norm(W, axis=1), 1.0)
        obs = np.array([np.sum(em.score(X, y, W) == v) for v in vals])
        keep = expected * 20000 >= 5
        f_exp = np.r_[expected[keep], expected[~keep].sum()] * 20000
        f_obs = np.r_[obs[keep], obs[~keep].sum()]
        if f_exp[-1] == 0:
            f_exp, f_obs = f_exp[:-1], f_obs[:-1]
        assert stats.chisquare(f_obs, f_exp).pvalue > 0.001, method


def test_em_exact_privacy_in_d2():
    # Exact privacy: sup_theta |log p_X(theta) - log p_X'(theta)| <= eps for X' = X plus one point, exactly on every arc
    # of the common refinement (evaluated at the arc midpoints of the union of breakpoints).
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(30):
        X, y = _data2(rng, n=int(rng.integers(1, 20)))
        eps = float(rng.uniform(0.1, 5))
        em = SphereExponentialMechanism(0.2, eps)
        X1, y1 = X[:-1], y[:-1]
        s0, l0, _ = circle_arcs(X, y, 0.19)
        mids = s0 + l0 / 2
        W = np.stack([np.cos(mids), np.sin(mids)], -1)
        r = np.abs(em.log_density((X, y), W) - em.log_density((X1, y1), W)).max()
        assert r <= eps + 1e-9
        worst = max(worst, r / eps)
    assert worst > 0.3  # the bound is not vacuous on these instances


def test_em_rejection_raises_instead_of_inexact():
    rng = np.random.default_rng(4)
    X, y, _ = margin_realizable(400, 30, 0.1, rng)
    em = SphereExponentialMechanism(0.1, 5.0, max_proposals=5000)
    with pytest.raises(RuntimeError, match="acceptance rate"):
        em.sample((X, y), rng, 10)


# ------------------------------------------------------------------ robustness


def test_lemma7_robust_risk_matches_attacks():
    # Lemma 7: points with normalised margin <= gamma are fooled by the closed-form attack (sgn flips or 0);
    # the random-direction brute force never exceeds the exact robust risk (it is a lower bound) and in 2-d
    # with 4000 directions finds every point whose margin is not within 1e-2 gamma of the boundary.
    rng = np.random.default_rng(5)
    for _ in range(20):
        w = rng.standard_normal(2) * rng.uniform(0.1, 10)
        X = rng.uniform(-1, 1, (300, 2))
        y = rng.choice([-1.0, 1.0], 300)
        g = float(rng.uniform(0.01, 0.5))
        R = robust_risk(w, X, y, g)
        m = y * (X @ w) / np.linalg.norm(w)
        Z = halfspace_attack(w, X, y, g)
        fooled = y * (Z @ w) <= 1e-12 * np.linalg.norm(w)
        np.testing.assert_array_equal(fooled, m <= g + 1e-12)
        assert R == pytest.approx(np.mean(m <= g))
        bf = brute_force_robust_error(w, X, y, g, rng, 4000)
        assert bf <= R + 1e-12
        assert bf >= np.mean(m <= g * 0.99)


def test_certified_radius_linear_is_exact():
    # The attack of norm (1 + 1e-6) r flips the argmax; norm (1 - 1e-6) r does not (Lemma 22, strict <).
    rng = np.random.default_rng(6)
    W = rng.standard_normal((4, 5))
    X = rng.standard_normal((200, 5))
    y = np.argmax(X @ W.T, axis=1)
    r = certified_radius_linear(W, X, y)
    assert np.all(r > 0)
    assert np.all(np.argmax(linear_flip_attack(W, X, y, r, 1 + 1e-6) @ W.T, axis=1) != y)
    assert np.all(np.argmax(linear_flip_attack(W, X, y, r, 1 - 1e-6) @ W.T, axis=1) == y)
    # Random perturbations of norm 0.99 r never flip.
    D = rng.standard_normal((200, 5))
    D *= (0.99 * r / np.linalg.norm(D, axis=1))[:, None]
    assert np.all(np.argmax((X + D) @ W.T, axis=1) == y)
    # Misclassified points get a negative radius.
    y_wrong = (y + 1) % 4
    assert np.all(certified_radius_linear(W, X, y_wrong) < 0)


def test_rff_unit_norm_kernel_and_certified_radius():
    # App. G.2: ||phi(x)|| = 1 exactly; <phi, phi'> ~ exp(-||x - x'||^2/(2 bw^2)) with error O(1/sqrt(k)) (k = 4000:
    # std <= 1/sqrt(2k) ~ 0.011, tolerance 0.06 is > 5 std); the kernel certified radius never exceeds the
    # distance at which a line search along random directions changes the prediction.
    rng = np.random.default_rng(7)
    X = rng.uniform(0, 1, (30, 4))
    rff = RandomFourierFeatures(4000, bandwidth=1.0, random_state=0).fit(X)
    F = rff.transform(X)
    np.testing.assert_allclose(np.linalg.norm(F, axis=1), 1.0, rtol=1e-12)
    K = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=2) / 2)
    assert np.abs(F @ F.T - K).max() < 0.06
    small = RandomFourierFeatures(100, bandwidth=0.5, random_state=1).fit(X)
    W = rng.standard_normal((3, 200))
    y = np.argmax(small.transform(X) @ W.T, axis=1)
    r = small.certified_radius(W, X, y)
    ts = np.linspace(0, 2, 201)
    flips = 0
    for i in range(10):
        U = rng.standard_normal((20, 4))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        Z = (X[i][None, None, :] + ts[None, :, None] * U[:, None, :]).reshape(-1, 4)
        preds = np.argmax(small.transform(Z) @ W.T, axis=1).reshape(20, len(ts))
        for row in preds:
            if np.any(row != y[i]):
                flips += 1
                assert r[i] <= ts[np.argmax(row != y[i])] + 1e-12
    assert flips > 0  # the comparison is not vacuous


def test_instances():
    rng = np.random.default_rng(8)
    X, y, w = margin_realizable(500, 20, 0.3, rng)
    assert np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-12) and np.all(y * (X @ w) >= 0.3 - 1e-12)
    # Theorem 2 packing: |<w_i, w_j>| <= 0.5 <= 0.588 makes the cells G^(i) disjoint (Claim 10): no w_i is in another cell.
    P = sign_packing(20, 64, rng, max_inner=0.5)
    G = P @ P.T
    assert np.all(np.abs(G[~np.eye(20, dtype=bool)]) <= 0.5)
    cells = np.stack([in_packing_cell(P, P[i], 0.5) for i in range(20)])
    np.testing.assert_array_equal(cells, np.eye(20, dtype=bool))
    # Theorem 4 instance (corrected realiser with the signs s_i): z = s/sqrt(d) has margin exactly 1/sqrt(d) >= gamma
    # and zero error.
    inst = Theorem4Instance.random(0.1, rng)
    assert inst.d == 100
    Xs, ys = inst.sample(1000, rng)
    np.testing.assert_allclose(ys * (Xs @ inst.realiser), 0.1)
    assert inst.error(inst.realiser) == 0.0 and inst.error(-inst.realiser) == 1.0
    # Theorem 3 embedding: ||w*|| <= 1 and margin >= 0.01/T >= gamma on samples.
    fp = FingerprintingInstance.random(0.005, 400, rng)
    assert fp.T == 2 and fp.q.shape == (4, 100)
    Xf, yf = fp.sample(300, rng)
    assert np.linalg.norm(fp.w_star) <= 1 + 1e-12
    assert np.all(fp.margins(Xf) >= 0.01 / fp.T - 1e-12) and np.all(yf == 1)
    assert np.allclose(np.linalg.norm(Xf, axis=1), 1.0)


def test_instance_dimensions_by_hand():
    # d = floor(1/gamma^2): 1/0.1**2 = 99.99999999999999 in floating point, so the guard is needed for d = 100;
    # T = floor(0.01/gamma): 0.01/0.005 = 2, 0.01/0.003 = 3.33 -> 3.
    assert [theorem4_dimension(g) for g in (0.5, 0.3, 0.1, 0.01)] == [4, 11, 100, 10_000]
    assert [fingerprinting_blocks(g) for g in (0.01, 0.005, 0.003)] == [1, 2, 3]


def test_greedy_sign_packing_keeps_only_nearly_orthogonal_vectors():
    # Every kept pair has |<w_i, w_j>| <= max_inner, and a vector far from all kept ones is never dropped: at d = 4
    # the inner products are multiples of 1/2, so with max_inner = 0.5 only +-w_i repeats are excluded.
    V = greedy_sign_packing(16, 300, np.random.default_rng(0), max_inner=0.5)
    G = np.abs(V @ V.T - np.eye(len(V)))
    assert len(V) > 1 and G.max() <= 0.5 + 1e-12
    assert np.allclose(np.linalg.norm(V, axis=1), 1.0)
    V4 = greedy_sign_packing(4, 200, np.random.default_rng(1), max_inner=0.5)
    assert len(V4) == 8  # the 16 sign vectors in pairs +-v: 8 directions with |<v, v'>| <= 1/2


# ------------------------------------------------------------------ data


def test_digits_loader():
    ds = load_digits_unit()
    assert ds.X_train.shape[1] == 64 and ds.X_train.min() >= 0 and ds.X_train.max() <= 1
    assert ds.X_train.shape[0] + ds.X_test.shape[0] == 1797
    assert set(np.unique(ds.y_train)) == set(range(10))


def _write_idx(path, arr, opener=open):
    codes = {np.uint8: 0x08}
    with opener(path, "wb") as f:
        f.write(bytes([0, 0, codes[arr.dtype.type], arr.ndim]))
        f.write(struct.pack(">" + "I" * arr.ndim, *arr.shape))
        f.write(arr.astype(">u1").tobytes())


def test_mnist_idx_loader(tmp_path):
    rng = np.random.default_rng(9)
    imgs = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    labs = np.array([0, 1, 2, 3, 9], dtype=np.uint8)
    _write_idx(tmp_path / "train-images-idx3-ubyte", imgs)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", labs)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", imgs[:2], gzip.open)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", labs[:2], gzip.open)
    ds = load_mnist_idx(tmp_path)
    np.testing.assert_allclose(ds.X_train, imgs.reshape(5, -1) / 255.0)
    np.testing.assert_array_equal(ds.y_test, [0, 1])
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="IDX"):
        read_idx(tmp_path / "bad")


def test_usps_libsvm_loader(tmp_path):
    # LIBSVM lines "label idx:value ..." with labels 1..10 and values in [-1, 1] -> labels 0..9, pixels in [0, 1].
    lines = "10 1:-1 2:1 256:0\n1 3:0.5\n"
    for name in ("usps.bz2", "usps.t.bz2"):
        with bz2.open(tmp_path / name, "wb") as f:
            f.write(lines.encode())
    ds = load_usps(tmp_path)
    assert ds.X_train.shape == (2, 256)
    np.testing.assert_array_equal(ds.y_train, [9, 0])
    np.testing.assert_allclose(ds.X_train[0, :3], [0.0, 1.0, 0.5])
    np.testing.assert_allclose(ds.X_train[0, 255], 0.5)
    np.testing.assert_allclose(ds.X_train[1, 2], 0.75)
    with pytest.raises(FileNotFoundError):
        load_usps(tmp_path / "missing.bz2")


# ------------------------------------------------------------------ tight epsilon of the sphere mechanism


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_sphere_tight_epsilon_matches_the_two_arc_closed_form(scale):
    # d0 = one point (e_1, +1), d1 = the same point twice: the scores are 0 / -1 (d0) and 0 / -2 (d1) on the arc
    # A = {<w, e_1> > c} (uniform measure a = arccos(c)/pi, c = 0.95 * 0.5) and its complement, so
    # P_d(A) = a / (a + (1 - a) e^{-s eps k_d}) with k = 1, 2, and the pure epsilon is the larger |log ratio| of
    # the two arcs (closed form, independent of circle_arcs and log_density).
    em = SphereExponentialMechanism(0.5, 2.0, exponent_scale=scale)
    X = np.array([[1.0, 0.0]])
    d0, d1 = (X, np.ones(1)), (np.vstack([X, X]), np.ones(2))
    a, se = math.acos(0.475) / math.pi, scale * 2.0
    P0, P1 = a / (a + (1 - a) * math.exp(-se)), a / (a + (1 - a) * math.exp(-2 * se))
    closed = max(abs(math.log(P0 / P1)), abs(math.log((1 - P0) / (1 - P1))))
    tight, source = em.tight_epsilon(d0, d1, 0.0)
    assert tight == pytest.approx(closed, rel=1e-9)
    assert f"{se:g}" in source


def test_sphere_worst_case_is_approached_and_never_exceeded():
    # The worst case over add-or-remove-one pairs is s eps: approached when the added point fails on a region the
    # base dataset makes unlikely (20 copies of (e_1, +1), then (-e_1, -1): it fails exactly where the copies
    # fail, of probability ~ e^{-20 s eps}), and never exceeded on random pairs (12 random base datasets of 1-4
    # points in the unit disc, each with a random added point; seed 5). On those pairs the pure epsilon is also
    # the largest |log p_d0 - log p_d1| of the densities on a grid of 200000 angles (an independent route that
    # needs no arcs; the grid hits every arc longer than 2 pi / 200000).
    em = SphereExponentialMechanism(0.5, 1.0)
    se = 0.5
    X = np.tile([1.0, 0.0], (20, 1))
    d0 = (X, np.ones(20))
    d1 = (np.vstack([X, [-1.0, 0.0]]), np.r_[np.ones(20), -1.0])
    assert se - 1e-4 < em.tight_epsilon(d0, d1, 0.0)[0] <= se + 1e-12
    rng = np.random.default_rng(5)
    for _ in range(12):
        k = int(rng.integers(1, 5))
        Xr = rng.uniform(-0.7, 0.7, size=(k + 1, 2))
        yr = rng.choice([-1.0, 1.0], size=k + 1)
        tight = em.tight_epsilon((Xr[:k], yr[:k]), (Xr, yr), 0.0)[0]
        assert tight <= se + 1e-12
        theta = np.linspace(0.0, 2 * np.pi, 200_000, endpoint=False)
        W = np.stack([np.cos(theta), np.sin(theta)], -1)
        grid = np.max(np.abs(em.log_density((Xr[:k], yr[:k]), W) - em.log_density((Xr, yr), W)))
        assert tight == pytest.approx(grid, abs=1e-9)
