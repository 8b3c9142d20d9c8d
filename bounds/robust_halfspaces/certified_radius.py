"""Checks of the certified radius (Lemma 22, App. G.2.1) of "Robust and Private Learning of Halfspaces": for a
classifier predicting argmax_y f^y, a perturbation smaller than min_{y'} (f^y - f^{y'}) / sup ||grad f^y - grad f^{y'}||
keeps the prediction (Hein & Andriushchenko 2017, Thm 2.1, simplified), for linear one-vs-rest models and for the
random-Fourier-feature (Gaussian kernel) models of App. G.2.

Ghazi, Kumar, Manurangsi & Nguyen, AISTATS 2021, arXiv:2011.14580 (paper id ``robust-halfspaces``).

Errata (Lemma 22): the classifier *maximises* f^y (printed: minimises), and the condition is strict (printed <=;
at equality a linear classifier can tie).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from privbound.bounds import checks as C
from privbound.learners.robust_halfspaces.robustness import RandomFourierFeatures, certified_radius_linear

__all__ = ["check_lemma22", "check_lemma22_kernel"]


def _fibonacci_sphere(m: int) -> np.ndarray:
    i = np.arange(m) + 0.5
    phi = np.arccos(1 - 2 * i / m)
    th = np.pi * (1 + 5**0.5) * i
    return np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], -1)


def check_lemma22(ctx: C.CheckContext) -> C.CheckResult:
    """Lemma 22 for linear one-vs-rest models (argmax of <w^(y), x>), k = 4 classes, d in {2, 3}.

    Certified radius r = min_{y'} (f^y - f^{y'}) / ||w^(y) - w^(y')|| (gradient differences are constant), as computed
    by :func:`~privbound.learners.robust_halfspaces.robustness.certified_radius_linear`.
    Brute force: for each direction u of a fine grid (7200 angles in 2-D, 40000 Fibonacci points in 3-D)
    the exact flip distance along u is min over y' with a = <w^(y) - w^(y'), u> < 0 of (f^y - f^{y'}) / (-a);
    its minimum over u must be >= r (soundness) and <= r / cos(grid gap) (tightness for linear f).
    Also the attack -r (1 + 1e-9) (w^(y) - w^(y*))/||.|| flips the argmax and -r (1 - 1e-9) does not.
    Observed: max over instances of the relative violation (0 when everything holds).
    """
    rng = ctx.rng
    worst = 0.0
    flips_ok = True
    gaps = []
    grids = {2: np.stack([np.cos(a := np.linspace(0, 2 * np.pi, 7200, endpoint=False)), np.sin(a)], -1),
             3: _fibonacci_sphere(40_000)}
    slack = {2: 1 / math.cos(np.pi / 7200) - 1, 3: 0.02}
    for d, U in grids.items():
        for _ in range(ctx.trials(40, minimum=5)):
            Wc = rng.normal(size=(4, d))
            x = rng.normal(size=d)
            f = Wc @ x
            yv = int(np.argmax(f))
            others = [k for k in range(4) if k != yv]
            diffs = np.array([Wc[yv] - Wc[k] for k in others])
            m = np.array([f[yv] - f[k] for k in others])
            norms = np.linalg.norm(diffs, axis=1)
            r = float(certified_radius_linear(Wc, x[None, :], [yv])[0])  # the learners' Lemma 22 radius
            a = U @ diffs.T  # directions x others
            with np.errstate(divide="ignore", invalid="ignore"):
                dist = np.where(a < 0, m[None, :] / -a, np.inf)
            brute = float(np.min(dist))
            worst = max(worst, max(0.0, (r - brute) / r), max(0.0, brute / r - 1 - slack[d]))
            gaps.append(brute / r - 1)
            ks = int(np.argmin(m / norms))
            u = -diffs[ks] / norms[ks]
            out_hi = Wc @ (x + r * (1 + 1e-9) * u)
            out_lo = Wc @ (x + r * (1 - 1e-9) * u)
            flips_ok &= int(np.argmax(out_hi)) != yv and int(np.argmax(out_lo)) == yv
    out = C.exact(worst, 0.0, sense="==", atol=1e-9, attack_at_radius_flips=flips_ok,
                  brute_over_formula_minus_1=[float(min(gaps)), float(max(gaps))],
                  errata="corrected Lemma 22: argmax (printed: minimises) and strict < (at ||Delta|| = r the two scores tie)")
    if not flips_ok:
        out = replace(out, status="fail")
    return out


def check_lemma22_kernel(ctx: C.CheckContext) -> C.CheckResult:
    """Lemma 22 for the kernel models of App. G.2 / G.2.1: random Fourier features and the kernel certified radius,
    brute force in d = 2.

    phi(x) = (cos <rho_i, x>, sin <rho_i, x>)_i / sqrt(d_hat) must have norm exactly 1 (sensitivity 1). For a
    k = 3 class model f^y(x) = <w^(y), phi(x)> the certified radius
    r = sqrt(d_hat)/sigma_max(Pi) * min_{y'} (f^y - f^{y'}) / ||w^(y) - w^(y')|| (Lemma 22 with the gradient bound
    of G.2.1) must be <= the minimal adversarial distance. Brute force: a polar grid around x, 360 angles x
    (300 radii in (0, r], spacing r/300, then 400 radii up to 20 r) -- no grid point strictly inside radius r may
    change the argmax (soundness); the first flip found along a ray is an upper bound on the true minimal distance, so
    ``found / r`` reports how loose the (non-tight) certificate is. The gradient-difference bound
    ||grad f^y - grad f^{y'}|| <= sigma_max ||w^(y) - w^(y')|| / sqrt(d_hat) is also checked at random points.
    Observed: the largest violation max(0, (r - found)/r) and of the gradient bound (0 when all hold).
    """
    rng = ctx.rng
    angles = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    U = np.stack([np.cos(angles), np.sin(angles)], -1)
    worst, worst_grad, norm_err, ratios, n_flipped = 0.0, 0.0, 0.0, [], 0
    n_inst = ctx.trials(8, minimum=3)
    for it in range(n_inst):
        d_hat = int(rng.choice([16, 64]))
        bw = float(rng.choice([0.5, 1.0, 2.0]))
        rff = RandomFourierFeatures(d_hat, bandwidth=bw, random_state=rng).fit(np.zeros((1, 2)))
        W = rng.standard_normal((3, 2 * d_hat))
        x = rng.uniform(0, 1, (1, 2))
        norm_err = max(norm_err, float(abs(np.linalg.norm(rff.transform(x)) - 1.0)))
        yv = np.argmax(rff.transform(x) @ W.T, axis=1)
        r = float(rff.certified_radius(W, x, yv)[0])
        if not r > 0:  # an exact tie at x (probability 0); nothing to certify
            continue
        ts = np.concatenate([np.linspace(0, r, 301)[1:], np.linspace(r, 20 * r, 401)[1:]])
        Z = (x[0][None, None, :] + ts[None, :, None] * U[:, None, :]).reshape(-1, 2)
        pred = np.argmax(rff.transform(Z) @ W.T, axis=1).reshape(len(U), len(ts))
        flip = pred != yv[0]
        if flip.any():
            n_flipped += 1
            found = float(ts[np.argmax(flip.any(axis=0))])
            ratios.append(found / r)
            worst = max(worst, max(0.0, (r - found) / r))
        # gradient-difference bound at random points: grad f^y(x') = Pi (-w_c sin(Pi^T x') + w_s cos(Pi^T x')) / sqrt(d_hat)
        Pi = rff.projection_
        Xp = rng.uniform(-3, 4, (200, 2))
        A = Xp @ Pi
        for a, b in ((0, 1), (0, 2), (1, 2)):
            dw = W[a] - W[b]
            g = (-np.sin(A) * dw[:d_hat] + np.cos(A) * dw[d_hat:]) @ Pi.T / math.sqrt(d_hat)
            bound = rff.sigma_max_ * np.linalg.norm(dw) / math.sqrt(d_hat)
            worst_grad = max(worst_grad, float(np.max(np.linalg.norm(g, axis=1)) / bound - 1))
    observed = max(worst, max(0.0, worst_grad), norm_err)
    out = C.exact(observed, 0.0, sense="==", atol=1e-9, instances=n_inst, instances_with_a_flip_within_20r=n_flipped,
                  found_over_certified=[float(min(ratios)), float(np.median(ratios)), float(max(ratios))] if ratios else None,
                  max_unit_norm_error=norm_err, max_gradient_bound_excess=worst_grad,
                  note="the certificate is sound but not tight (found/certified >= 1 is its looseness)")
    if n_flipped == 0:
        out = replace(out, status="inconclusive")
        out.details["reason"] = "no flip found within 20 r: the brute force had no power"
    return out
