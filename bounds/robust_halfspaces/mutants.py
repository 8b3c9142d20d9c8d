"""Mutants of the robust-halfspaces checks: each is the learner or formula a check guards, broken the way a real bug
would break it, and the check must fail while it is applied (:func:`privbound.bounds.run_mutants`).

Ghazi, Kumar, Manurangsi & Nguyen, AISTATS 2021, arXiv:2011.14580 (paper id ``robust-halfspaces``).

``MUTANTS[(claim number, check name)]`` holds the mutants :mod:`.claims` attaches to that check. Each mutant patches
a name where the check looks it up (the check module's global, or the learner module a learner reads at run time)
with :func:`privbound.mutation.patch`, for the duration of one run of the check. ``profile`` is the smallest profile
at which the check detects it; ``power`` is stated where the statement is too loose for a 2x deviation to be visible
on any instance (then the mutant uses the factor the check can detect). ``WITHOUT_MUTANTS`` lists the checks without
one: the ``as-printed*`` checks guard a printed formula and are expected to fail on the real code.
"""

from __future__ import annotations

import math

import numpy as np

from privbound.bounds.registry import PRINTED_FORM
from privbound.bounds.robust_halfspaces import (
    approx_dp_lower_bound as approx,
    batch_perceptron as bp,
    batch_perceptron_privacy as bpp,
    certified_radius as cr,
    exponential_mechanism as em,
    formulas as F,
    non_robust_lower_bound as nrl,
    preliminaries as pre,
    pure_dp_lower_bound as pure,
)
from privbound.learners.robust_halfspaces import boosting, instances, perceptron, robustness, sphere
from privbound.mutation import Mutant, patch, together

__all__ = ["MUTANTS", "WITHOUT_MUTANTS"]


# ------------------------------------------------------------------ learners broken like real bugs


class _PerceptronDoubleCount(perceptron.Perceptron):
    """Counts every mistake twice (the mistake count x2)."""

    def fit(self, X, y):
        super().fit(X, y)
        self.n_mistakes_ *= 2
        return self


class _PerceptronLostUpdate(perceptron.Perceptron):
    """Drops every other update (w += y x is lost on the 1st, 3rd, ... mistake): more mistakes."""

    def run(self, X, y, w0=None):
        X = np.asarray(X, float)
        w = np.zeros(X.shape[1]) if w0 is None else np.asarray(w0, float).copy()
        preds, mist = np.empty(X.shape[0]), np.zeros(X.shape[0], bool)
        self._lost = getattr(self, "_lost", 0)
        for t in range(X.shape[0]):
            s = float(X[t] @ w)
            preds[t] = 1.0 if s > 0 else -1.0
            if y[t] * s <= 0:
                mist[t] = True
                self._lost += 1
                if self._lost % 2 == 0:
                    w += y[t] * X[t]
        return perceptron.PerceptronTrace(preds, mist, np.flatnonzero(mist), w)


def _without_margin(cls):
    """Algorithm 1's Line 6 tested with margin 0 instead of gamma' (the plain perceptron's test)."""

    class NoMargin(cls):
        def parameters(self):
            from dataclasses import replace

            return replace(super().parameters(), gamma_prime=0.0)

    return NoMargin


class _NoiseNormFixed(perceptron.DPBatchPerceptron):
    """The Gaussian noise drawn with total norm ~sigma instead of std sigma per coordinate (std sigma/sqrt(d))."""

    def run_batch(self, X, y, rng, size, *, transcript=False):
        saved = self.noise_std
        self.noise_std = saved / math.sqrt(np.asarray(X).shape[1])
        try:
            return super().run_batch(X, y, rng, size, transcript=transcript)
        finally:
            self.noise_std = saved


def _noise_div(k):
    """The calibrated Gaussian noise divided by ``k`` (a ``make`` of :func:`privbound.mutation.patch`)."""
    return lambda calibrate: lambda *a, **kw: calibrate(*a, **kw) / k


_NOISE_DIV_100 = Mutant(
    "dp-noise-div-100", "DP Batch Perceptron's calibrated Gaussian noise divided by 100",
    patch(perceptron, "calibrate_gaussian_noise", _noise_div(100)),
    power="Theorem 11's cap zeta sqrt(d) binds every (1, zeta/n)-DP mechanism and this one stays 25x below it (mean "
          "correlation ~0.5 of 12.8 at d = 4096): noise divided by 10 passes at the default profile; divided by "
          ">= 30-100 the correlation exceeds the cap")
"""The mutant of the two fingerprinting checks (Theorem 11's and its embedding in Theorem 3)."""


class _LaplaceHalfScale(nrl.LaplaceMechanism):
    @property
    def scale(self):
        return super().scale / 2


def _lemma19_scaled(sigma=1.0, b=1.0):
    """Lemma 19's parameters (p, sigma, b) with the Gaussian sigma and the Laplace scale b multiplied."""
    return lambda params: lambda e, d, T: (lambda p, s, scale: (p, sigma * s, b * scale))(*params(e, d, T))


def _lemma19_swapped(accounting):
    """Lemma 19's accounting with epsilon_0 and delta_0 swapped in the composition (a transposed-argument bug)."""

    def broken(epsilon, delta, T):
        P = dict(accounting(epsilon, delta, T))
        step = F.subsampled_epsilon(P["p"], P["delta_0"])
        P["epsilon_acc"] = F.adv_composition_epsilon(T, step, P["p"] * P["epsilon_0"])
        return P

    return broken


def _theorem5_n_div100(d, gamma, alpha, epsilon):
    return 1e2 * F.theorem5_lambda(d, gamma, alpha) ** 2 / (epsilon * alpha) + 1e10 / (alpha**2 * gamma**2)


def _rff_radius_without_sigma_max(radius):
    """The kernel certified radius without the Lipschitz factor 1/sigma_max(Pi) of the random features."""
    return lambda self, W, X, y: radius(self, W, X, y) * self.sigma_max_


def _risk_unnormalised(w, X, y, gamma):
    return robustness.margin_error(w, X, y, gamma)


# ------------------------------------------------------------------ the mutants, per (claim number, check name)

MUTANTS: dict[tuple[str, str], tuple[Mutant, ...]] = {
    ("fact-novikoff", "perceptron-runs"): (
        Mutant("mistakes-x2", "Perceptron counts every mistake twice",
               patch(bp, "Perceptron", lambda _: _PerceptronDoubleCount)),
        Mutant("lost-update", "Perceptron drops every other update w += y x",
               patch(bp, "Perceptron", lambda _: _PerceptronLostUpdate)),
    ),
    ("lemma-18", "proof-arithmetic"): (
        Mutant("T-constant-1000", "Lemma 18's T with 1000 instead of 1500 (a constant changed)",
               patch(bp, "lemma18_iterations", lambda _: lambda a, g: math.ceil(1000 / (a * (0.05 * g) ** 2)))),
    ),
    ("lemma-18", "noiseless-margin-perceptron"): (
        Mutant("stopping-threshold-x2", "stopping threshold 0.6 alpha p n instead of 0.3 alpha p n",
               patch(perceptron, "stopping_threshold", lambda stop: lambda a, p, n: 2 * stop(a, p, n)),
               power="Lemma 18's T exceeds the iterations of every constructed instance by >= 1e5: an iteration "
                     "count 2x too large is invisible; the stopping rule's error part detects a threshold >= 2x too "
                     "large on the tilted instance"),
    ),
    ("theorem-6", "accuracy-scaled"): (
        Mutant("margin-test-without-gamma-prime", "Line 6 tests y <w_hat, x> <= 0 instead of <= gamma'",
               patch(bp, "DPBatchPerceptron", lambda _: _without_margin(perceptron.DPBatchPerceptron))),
        Mutant("stopping-threshold-x2", "stopping threshold 0.6 alpha p n instead of 0.3 alpha p n",
               patch(perceptron, "stopping_threshold", lambda stop: lambda a, p, n: 2 * stop(a, p, n))),
    ),
    ("theorem-6", "scaling-sqrt-d"): (
        Mutant("noise-norm-fixed", "Gaussian noise of total norm ~sigma (std sigma/sqrt(d) per coordinate)",
               patch(bp, "DPBatchPerceptron", lambda _: _NoiseNormFixed)),
    ),
    ("theorem-6", "good-events-corrected"): (
        Mutant("opt-noise-constant-2000", "the corrected opt-noise constant 4000 halved",
               patch(bp, "THEOREM6_OPT_NOISE_CONSTANT_CORRECTED", lambda _: 2000.0)),
    ),
    ("lemma-19", "accounting-arithmetic"): (
        Mutant("laplace-scale-div-4", "Lemma 19's Laplace scale b divided by 4",
               patch(F, "lemma19_parameters", _lemma19_scaled(b=1 / 4)),
               power="b is 2.5x the requirement 2/epsilon_0 on every grid point: a scale divided by < 2.5 passes; "
                     "divided by 4 is detected"),
    ),
    ("lemma-19", "corrected-regime"): (
        Mutant("sigma-halved", "Lemma 19's Gaussian noise sigma divided by 2",
               patch(F, "lemma19_parameters", _lemma19_scaled(sigma=1 / 2))),
    ),
    ("lemma-19", "dp-accounting"): (
        Mutant("epsilon0-delta0-swapped", "epsilon_0 and delta_0 swapped in the accounting's composition",
               patch(bpp, "lemma19_accounting", _lemma19_swapped),
               power="epsilon' is >= 100x above the lower reference (the Gaussian part's optimistic PLD): an "
                     "accounting understated by < ~140x passes"),
    ),
    ("lemma-20", "tight-amplification"): (
        Mutant("amplification-without-factor-2", "Lemma 20's 2 p epsilon_0 as p epsilon_0",
               patch(bpp, "subsampled_epsilon", lambda _: lambda p, e0: p * e0)),
    ),
    ("lemma-20", "dp-accounting"): (
        Mutant("amplification-without-factor-2", "Lemma 20's 2 p epsilon_0 as p epsilon_0",
               patch(bpp, "subsampled_epsilon", lambda _: lambda p, e0: p * e0)),
    ),
    ("lemma-21", "dp-accounting"): (
        Mutant("composition-without-T-in-sqrt", "advanced composition sqrt(2 ln(1/delta_0)) eps_0 + 2 T eps_0^2",
               patch(bpp, "adv_composition_epsilon",
                     lambda _: lambda T, e0, d0: math.sqrt(2 * math.log(1 / d0)) * e0 + 2 * T * e0**2)),
    ),
    ("lemma-22", "linear-brute-force"): (
        Mutant("radius-x2", "linear certified radius doubled",
               patch(cr, "certified_radius_linear", lambda radius: lambda W, X, y: 2 * radius(W, X, y))),
    ),
    ("lemma-22", "kernel-rff-brute-force"): (
        Mutant("radius-without-sigma-max", "kernel certified radius without the 1/sigma_max(Pi) Lipschitz factor",
               patch(robustness.RandomFourierFeatures, "certified_radius", _rff_radius_without_sigma_max),
               power="the kernel certificate is >= 3x below the minimal adversarial distance found (not tight; found / "
                     "certified >= 4.1 at the smoke seed, >= 3.1 at default): a radius inflated < 3x passes; without "
                     "sigma_max (2.7-27x) it is detected"),
    ),
    ("lemma-7", "brute-force-2d"): (
        Mutant("robust-risk-unnormalised", "robust_risk computed on the raw w (normalisation dropped)",
               patch(pre, "robust_risk", lambda _: _risk_unnormalised)),
    ),
    ("observation-8", "corrected"): (
        Mutant("runs-as-printed", "Observation 8's T with log(1 - xi) (the printed formula)",
               patch(pre, "obs8_runs", lambda _: F.obs8_runs_as_printed)),
        Mutant("runs-minus-one", "Observation 8's T one too small (floor instead of ceil)",
               patch(pre, "obs8_runs", lambda _: lambda xi, xp: max(1, math.floor(math.log(0.5 * xp) / math.log(xi))))),
    ),
    ("observation-8", "boosting-corrected"): (
        Mutant("runs-as-printed", "the boosted learner runs the printed T = ceil(log(0.5 xi')/log(1 - xi))",
               patch(boosting, "obs8_runs", lambda _: F.obs8_runs_as_printed)),
        Mutant("selection-by-largest-error",
               "the selection picks the largest empirical gamma'-margin error (sign flipped)",
               patch(boosting, "margin_error", lambda _: lambda W, X, y, g: -robustness.margin_error(W, X, y, g))),
    ),
    ("lemma-9", "random-sign-packing"): (
        Mutant("hoeffding-exponent-without-half", "Lemma 9's union bound with e^{-d t^2} instead of e^{-d t^2/2}",
               patch(pure, "lemma9_union_bound", lambda _: lambda K, d, t: K * (K - 1) * math.exp(-d * t * t)),
               profile="default",
               power="the Hoeffding union bound is ~12x above the true failure rate (2.2e-4 per trial vs 2.5e-3): a "
                     "bound understated < 12x passes; e^{-d t^2} (2e4x) is detected from the default profile (4000 "
                     "trials) on"),
    ),
    ("claim-10", "intersection-point"): (
        Mutant("point-sign-flipped", "Claim 10's point 0.505 gamma (w_i + w_j) (sign of w_j flipped)",
               patch(pure, "claim10_point", lambda _: lambda a, b, g: 0.505 * g * (np.asarray(a) + np.asarray(b)))),
    ),
    ("theorem-2", "packing-em-exact"): (
        Mutant("em-exponent-x20", "the exponential mechanism with exp(10 eps q) instead of exp(eps q/2)",
               together(patch(pure, "em_packing_success", lambda success: lambda n, d, e: success(n, d, 20 * e)),
                        patch(pure, "em_packing_needed_n", lambda needed: lambda d, e, lv: needed(d, 20 * e, lv))),
               power="an illustration with slack: the EM needs n 15-40x above Theorem 2's ln(0.1 K)/eps on the greedy "
                     "packings (K <= 300 at d <= 64), so an exponent < 15x too large (e.g. 2x, a 2 eps-DP EM) passes; "
                     "20x is detected"),
    ),
    ("lemma-12", "tv-decay-exact"): (
        Mutant("conditioning-threshold-0.3", "P_q conditioned on <q', x> >= 0.3 instead of 0.01 (a constant changed)",
               patch(approx, "LEMMA12_MARGIN", lambda _: 0.3)),
    ),
    ("lemma-12", "tv-montecarlo-d400"): (
        Mutant("conditioning-threshold-0.3", "P_q conditioned on <q', x> >= 0.3 instead of 0.01 (a constant changed)",
               patch(approx, "LEMMA12_MARGIN", lambda _: 0.3)),
    ),
    ("lemma-12", "proof-threshold-corrected"): (
        Mutant("proof-norm-as-printed", "the proof's threshold ||q'|| >= 0.1 (the printed one) instead of 0.2",
               patch(approx, "LEMMA12_PROOF_NORM", lambda _: F.LEMMA12_PROOF_NORM_AS_PRINTED)),
        Mutant("conditioning-threshold-0.04", "P_q conditioned on <q', x> >= 0.04 = ||q'||^2 at the proof's threshold",
               patch(approx, "LEMMA12_MARGIN", lambda _: 0.04)),
    ),
    ("lemma-13", "dp-perceptron-sqrt-d"): (
        Mutant("noise-norm-fixed", "Gaussian noise of total norm ~sigma (std sigma/sqrt(d) per coordinate)",
               patch(approx, "DPBatchPerceptron", lambda _: _NoiseNormFixed),
               power="a learner with less noise still needs n ~ sqrt(d) (the check tests the exponent, not the "
                     "constant): noise divided by 10 passes; noise that does not grow with d is detected"),
    ),
    ("lemma-14", "reduction-parameters"): (
        Mutant("reduction-without-sqrt", "Lemma 14's gamma = gamma_0 beta_0/2 (sqrt dropped)",
               patch(approx, "lemma14_reduction", lambda _: lambda g0, b0: (g0 * b0 / 2, 2 * b0))),
        Mutant("regime-constant-2", "Lemma 14's regime gamma_0 > 2 sqrt(2 beta_0) (constant 4 -> 2)",
               patch(approx, "lemma14_min_gamma0", lambda _: lambda b0: 2 * math.sqrt(2 * b0))),
    ),
    ("theorem-11", "dp-perceptron-correlation"): (
        _NOISE_DIV_100,
    ),
    ("theorem-3", "embedded-fingerprinting"): (
        _NOISE_DIV_100,
    ),
    ("lemma-15", "chain-bound"): (
        Mutant("delta-as-printed", "Lemma 15's delta 0.001/(1 - e^{-eps}) (the printed one)",
               patch(nrl, "lemma15_delta", lambda _: F.lemma15_delta_as_printed),
               power="the chain bound has slack (0.505 against 0.509): only a delta >= ~400x the corrected one fails"),
    ),
    ("lemma-15", "laplace-tightness"): (
        Mutant("laplace-scale-halved", "the bit guesser's Laplace noise scale halved (1/(2 eps))",
               patch(nrl, "LaplaceMechanism", lambda _: _LaplaceHalfScale)),
    ),
    ("theorem-4", "hard-instance"): (
        Mutant("realiser-without-signs", "D_s realised by (1/sqrt d) sum_i e_i (the printed realiser, signs dropped)",
               patch(instances.Theorem4Instance, "realiser",
                     lambda _: property(lambda self: np.ones(self.d) / math.sqrt(self.d)))),
        Mutant("dimension-ceil", "d = ceil(1/gamma^2) instead of floor",
               patch(nrl, "theorem4_dimension", lambda _: lambda g: math.ceil(1 / g**2 * (1 - 1e-12)))),
    ),
    ("theorem-4", "ds-dp-perceptron-scaling"): (
        Mutant("dp-noise-div-10", "DP Batch Perceptron's calibrated Gaussian noise divided by 10",
               patch(nrl, "calibrate_gaussian_noise", _noise_div(10))),
    ),
    ("lemma-16", "finite-support-simulation"): (
        Mutant("deviation-constant-div-1e5", "Lemma 16's deviation term with 0.004 instead of 400",
               patch(em, "lemma16_deviation", lambda _: lambda n, g, xi: F.lemma16_deviation(n, g, xi) / 1e5),
               power="the constant 400 is loose by ~5e3x at n = 4e7 (largest observed deviation 4.3e-5 against "
                     "0.243): a deviation term understated < ~1e4x passes; 1e5x is detected"),
    ),
    ("lemma-17", "exact-circle"): (
        Mutant("exponent-without-half", "Lemma 17's bound exp(-eps t)/mu(S_t) instead of exp(-eps t/2)/mu(S_t)",
               patch(em, "lemma17_bound", lambda _: lambda e, t, mu: math.exp(-e * t) / mu)),
    ),
    ("theorem-5", "proof-tail-facts"): (
        Mutant("sample-size-constant-div-100", "Theorem 5's n with 1e2 instead of 1e4 in 1e4 Lambda^2/(eps alpha)",
               patch(em, "theorem5_sample_size", lambda _: _theorem5_n_div100),
               power="the final step exp(-0.125 eps alpha n) 2^{20 Lambda^2} <= 0.01 has a ~90x margin in the constant "
                     "1e4: a constant reduced < 90x passes"),
    ),
    ("theorem-5", "em-accuracy-scaled"): (
        Mutant("score-sign-flipped", "the exponential mechanism's score with the sign flipped (prefers errors)",
               patch(sphere, "circle_arcs", lambda arcs: lambda X, y, c: (lambda s, l, q: (s, l, -q))(*arcs(X, y, c)))),
    ),
}

WITHOUT_MUTANTS: dict[tuple[str, str], str] = {
    ("observation-8", "as-printed"): PRINTED_FORM,
    ("observation-8", "as-printed-boosting"): PRINTED_FORM,
    ("lemma-12", "as-printed-proof-threshold"): PRINTED_FORM,
    ("lemma-15", "as-printed"): PRINTED_FORM,
    ("lemma-19", "as-printed-any-T"): PRINTED_FORM,
    ("theorem-6", "as-printed-good-events"): PRINTED_FORM,
}
"""The checks without a mutant, each with the reason."""
