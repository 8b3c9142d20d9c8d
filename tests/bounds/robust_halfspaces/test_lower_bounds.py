"""Lower-bound demonstrations and the separation of robust-halfspaces: the exponential mechanism on the Theorem 2
packing (App. B), the Theorem 4 instance D_s and its error lower bound (App. D).

Expected values are derived by hand in the comments; statistical tests fix their seeds and state their error rate.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbound.bounds.robust_halfspaces import formulas as F
from privbound.bounds.robust_halfspaces.non_robust_lower_bound import check_theorem4_ds_scaling
from privbound.bounds.robust_halfspaces.pure_dp_lower_bound import check_theorem2_packing_em
from privbound.learners.robust_halfspaces.instances import Theorem4Instance, in_packing_cell, packing_sample, sign_packing
from privbound.learners.robust_halfspaces.sphere import SphereExponentialMechanism



def test_em_packing_success_by_hand_in_d3():
    # d = 3: by Archimedes' theorem <w, v> is uniform on [-1, 1] for w uniform on S^2, so S(t) = (1 - t)/2.
    # a = 0.95/1.01, r = 0.9/1.01; z = e^{-eps n/2}; success = (S(a) + z (S(r) - S(a))) / (S(a) + z (1 - S(a))).
    a, r = 0.95 / 1.01, 0.9 / 1.01
    Sa, Sr = (1 - a) / 2, (1 - r) / 2
    assert F.em_packing_success(0, 3, 1.0) == pytest.approx(Sr, rel=1e-12)  # z = 1: the uniform measure of G^(i)
    z = math.exp(-2.0)  # n = 4, eps = 1
    assert F.em_packing_success(4, 3, 1.0) == pytest.approx((Sa + z * (Sr - Sa)) / (Sa + z * (1 - Sa)), rel=1e-12)
    # needed n solves success = L exactly
    n = F.em_packing_needed_n(3, 1.0, 0.5)
    assert F.em_packing_success(n, 3, 1.0) == pytest.approx(0.5, rel=1e-9)


def test_em_packing_far_tail_matches_beta():
    # The quadrature fallback and scipy's Beta tail agree where both are finite (d = 400: log S(a) ~ -435).
    from scipy import stats, integrate, special

    d, t = 400, F.PACKING_A
    a = (d - 1) / 2
    direct = float(stats.beta.logsf((1 + t) / 2, a, a))
    k = (d - 3) / 2
    m = k * math.log1p(-t * t)
    val, _ = integrate.quad(lambda u: math.exp(k * math.log1p(-u * u) - m), t, 1.0, epsrel=1e-12)
    assert m + math.log(val) - special.betaln(0.5, a) == pytest.approx(direct, rel=1e-9)
    # Far beyond scipy's range the value stays finite and the needed n keeps growing ~ linearly:
    # -log S(a) ~ (d/2)(-ln(1 - a^2)) = (d/2)(2.16) per unit d, so n_0.5(4096)/n_0.5(2048) -> 2.
    r = F.em_packing_needed_n(4096, 1.0, 0.5) / F.em_packing_needed_n(2048, 1.0, 0.5)
    assert 1.98 < r < 2.0


def test_em_packing_formula_matches_the_rejection_sampler():
    # The closed form against the exact rejection sampler of the sphere mechanism on n samples of D^(1), d = 4,
    # eps = 1, n = 6: 4000 outputs, success indicator Bernoulli(p); the test fails a correct formula when
    # |p_hat - p| > 4.5 sd, probability < 1e-5 (normal approximation; seed fixed).
    rng = np.random.default_rng(5)
    d, n, eps, gamma = 4, 6, 1.0, 0.5
    w1 = sign_packing(1, d, rng)[0]
    X, y = packing_sample(w1, gamma, n, rng)
    W = SphereExponentialMechanism(gamma, eps, method="rejection").sample((X, y), rng, 4000)
    p_hat = float(np.mean(in_packing_cell(W, w1, gamma)))
    p = F.em_packing_success(n, d, eps)
    assert abs(p_hat - p) <= 4.5 * math.sqrt(p * (1 - p) / 4000), (p_hat, p)


def test_ds_error_lower_bound_by_hand():
    # n = 1, d = 1: k = 1 surely; bound = e^{-eps}/2 - delta e^{-eps}.
    assert F.ds_error_lower_bound(1, 1, 1.0, 0.01) == pytest.approx(0.5 * math.exp(-1) - 0.01 * math.exp(-1), rel=1e-12)
    # delta = 0: E[e^{-k eps}]/2 with k ~ Bin(n, 1/d) is (1 - (1 - e^{-eps})/d)^n / 2 (binomial generating function).
    n, d, eps = 37, 11, 0.7
    assert F.ds_error_lower_bound(n, d, eps, 0.0) == pytest.approx(0.5 * (1 - (1 - math.exp(-eps)) / d) ** n, rel=1e-12)


def test_ds_lower_bound_flags_a_non_private_learner():
    # The bound must be able to fail: the non-private learner w = sum of y x over the sample has w_i = k_i s_i, so
    # it is exact on every seen coordinate and errs (sgn(0)) on unseen ones: expected error (1 - 1/d)^n, at d = 100,
    # n = 2d: 0.99^200 = 0.134. The eps = 0.1 bound is 0.5 (1 - (1 - e^{-0.1})/100)^200 = 0.5 e^{-0.190} = 0.413
    # (delta = 1e-5 changes it by < 1e-4). 200 runs; the mean + 4 se stays below 0.413 except with negligible probability.
    rng = np.random.default_rng(0)
    inst = Theorem4Instance.random(0.1, rng)  # d = 100
    d, n = inst.d, 2 * inst.d
    errs = []
    for _ in range(200):
        X, y = inst.sample(n, rng)
        w = y @ X
        errs.append(np.mean(inst.s * w <= 0))
    assert np.mean(errs) + 4 * np.std(errs) / math.sqrt(200) < F.ds_error_lower_bound(n, d, 0.1, 1e-5)


def test_packing_check_passes_and_is_exact(check_context):
    out = check_theorem2_packing_em(check_context(0))
    assert out.status == "pass", out.details
    # linear in d: n_0.5 / d tends to (-ln(1 - a^2)) (from -log S(a) ~ (d/2)(-ln(1 - a^2)), n = (2/eps)(-log S(a)))
    lim = -math.log(1 - F.PACKING_A**2)
    assert out.details["n_over_d"][-1] == pytest.approx(lim, rel=0.01)
    for row in out.details["packing"]:
        assert row["cells_disjoint"] and row["em_n_for_success_0_1"] >= row["theorem2_lower_bound"]


def test_ds_scaling_check_smoke(check_context):
    # Seeded smoke run: the check passes (one-sided: needed n grows at least like gamma^-2); the reported two-sided
    # 95% CI of the slope contains -2 at this seed (a correct learner misses it with probability ~0.05 per seed, more
    # with the log factors of Theorem 6; at the fixed seed the outcome is deterministic) and excludes the wrong
    # exponents -1 and 0, which the one-sided test would flag.
    out = check_theorem4_ds_scaling(check_context(11))
    assert out.status == "pass", out.details
    assert out.details["sense"] == "at-most"
    lo, hi = out.details["two_sided_slope_ci"]
    assert lo <= -2 <= hi and hi < -1
    assert out.details["slope_ci"][0] <= -2
    assert not out.details["lower_bound_violations"]
