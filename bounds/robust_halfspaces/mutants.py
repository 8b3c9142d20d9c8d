"""Mutants of the robust-halfspaces checks: each is the learner or formula a check guards, broken the way a real bug
would break it, and the check must fail while it is applied (:func:`privbound.bounds.run_mutants`).

Ghazi, Kumar, Manurangsi & Nguyen, AISTATS 2021, arXiv:2011.14580 (paper id ``robust-halfspaces``).

Each mutant patches a name where the check looks it up (the check module's global, or the learner module a learner
reads at run time) for the duration of a ``with`` block. ``profile`` is the smallest profile at which the check
detects it; ``power`` is stated where the statement is too loose for a 2x deviation to be visible on any instance
(then the mutant uses the factor the check can detect). The ``as-printed*`` checks have no mutant: they guard a
printed formula and are expected to fail on the real code.
"""

from __future__ import annotations

import contextlib
import math
from unittest import mock

import numpy as np

from privbound.bounds.registry import Mutant
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

__all__ = ["MUTANTS", "mutants_of"]


@contextlib.contextmanager
def _patched(*triples):
    with contextlib.ExitStack() as stack:
        for obj, attr, new in triples:
            stack.enter_context(mock.patch.object(obj, attr, new))
        yield


def _patch(*triples):
    """``apply`` for a Mutant: patch each (object, attribute, new value) while the check runs."""
    return lambda: _patched(*triples)


def _m(name, description, *triples, profile="smoke", power=""):
    return Mutant(name, description, _patch(*triples), profile=profile, power=power)


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


_stop = perceptron.stopping_threshold
_calibrate = perceptron.calibrate_gaussian_noise


def _noise_div(k):
    return lambda *a, **kw: _calibrate(*a, **kw) / k


class _LaplaceHalfScale(nrl.LaplaceMechanism):
    @property
    def scale(self):
        return super().scale / 2


_em_success, _em_needed = F.em_packing_success, F.em_packing_needed_n
_l19 = F.lemma19_parameters
_acc = F.lemma19_accounting


def _lemma19_swapped(epsilon, delta, T):
    """Lemma 19's accounting with epsilon_0 and delta_0 swapped in the composition (a transposed-argument bug)."""
    P = dict(_acc(epsilon, delta, T))
    step = F.subsampled_epsilon(P["p"], P["delta_0"])
    P["epsilon_acc"] = F.adv_composition_epsilon(T, step, P["p"] * P["epsilon_0"])
    return P


def _theorem5_n_div100(d, gamma, alpha, epsilon):
    return 1e2 * F.theorem5_lambda(d, gamma, alpha) ** 2 / (epsilon * alpha) + 1e10 / (alpha**2 * gamma**2)


_arcs = sphere.circle_arcs
_radius_linear = cr.certified_radius_linear
_rff_radius = robustness.RandomFourierFeatures.certified_radius


def _rff_radius_without_sigma_max(self, W, X, y):
    """The kernel certified radius without the Lipschitz factor 1/sigma_max(Pi) of the random features."""
    return _rff_radius(self, W, X, y) * self.sigma_max_


def _risk_unnormalised(w, X, y, gamma):
    return robustness.margin_error(w, X, y, gamma)


# ------------------------------------------------------------------ the mutants, per (claim, check)

P = "robust-halfspaces/"

MUTANTS: dict[tuple[str, str], tuple[Mutant, ...]] = {
    (P + "fact-novikoff", "perceptron-runs"): (
        _m("mistakes-x2", "Perceptron counts every mistake twice", (bp, "Perceptron", _PerceptronDoubleCount)),
        _m("lost-update", "Perceptron drops every other update w += y x", (bp, "Perceptron", _PerceptronLostUpdate)),
    ),
    (P + "lemma-18", "proof-arithmetic"): (
        _m("T-constant-1000", "Lemma 18's T with 1000 instead of 1500 (a constant changed)",
           (bp, "lemma18_iterations", lambda a, g: math.ceil(1000 / (a * (0.05 * g) ** 2)))),
    ),
    (P + "lemma-18", "noiseless-margin-perceptron"): (
        _m("stopping-threshold-x2", "stopping threshold 0.6 alpha p n instead of 0.3 alpha p n",
           (perceptron, "stopping_threshold", lambda a, p, n: 2 * _stop(a, p, n)),
           power="Lemma 18's T exceeds the iterations of every constructed instance by >= 1e5: an iteration count "
                 "2x too large is invisible; the stopping rule's error part detects a threshold >= 2x too large on the "
                 "tilted instance"),
    ),
    (P + "theorem-6", "accuracy-scaled"): (
        _m("margin-test-without-gamma-prime", "Line 6 tests y <w_hat, x> <= 0 instead of <= gamma'",
           (bp, "DPBatchPerceptron", _without_margin(perceptron.DPBatchPerceptron))),
        _m("stopping-threshold-x2", "stopping threshold 0.6 alpha p n instead of 0.3 alpha p n",
           (perceptron, "stopping_threshold", lambda a, p, n: 2 * _stop(a, p, n))),
    ),
    (P + "theorem-6", "scaling-sqrt-d"): (
        _m("noise-norm-fixed", "Gaussian noise of total norm ~sigma (std sigma/sqrt(d) per coordinate)",
           (bp, "DPBatchPerceptron", _NoiseNormFixed)),
    ),
    (P + "theorem-6", "good-events-corrected"): (
        _m("opt-noise-constant-2000", "the corrected opt-noise constant 4000 halved",
           (bp, "THEOREM6_OPT_NOISE_CONSTANT_CORRECTED", 2000.0)),
    ),
    (P + "lemma-19", "accounting-arithmetic"): (
        _m("laplace-scale-div-4", "Lemma 19's Laplace scale b divided by 4",
           (F, "lemma19_parameters", lambda e, d, T: (lambda p, s, b: (p, s, b / 4))(*_l19(e, d, T))),
           power="b is 2.5x the requirement 2/epsilon_0 on every grid point: a scale divided by < 2.5 passes; "
                 "divided by 4 is detected"),
    ),
    (P + "lemma-19", "corrected-regime"): (
        _m("sigma-halved", "Lemma 19's Gaussian noise sigma divided by 2",
           (F, "lemma19_parameters", lambda e, d, T: (lambda p, s, b: (p, s / 2, b))(*_l19(e, d, T)))),
    ),
    (P + "lemma-19", "dp-accounting"): (
        _m("epsilon0-delta0-swapped", "epsilon_0 and delta_0 swapped in the accounting's composition",
           (bpp, "lemma19_accounting", _lemma19_swapped),
           power="epsilon' is >= 100x above the lower reference (the Gaussian part's optimistic PLD): an accounting "
                 "understated by < ~140x passes"),
    ),
    (P + "lemma-20", "tight-amplification"): (
        _m("amplification-without-factor-2", "Lemma 20's 2 p epsilon_0 as p epsilon_0",
           (bpp, "subsampled_epsilon", lambda p, e0: p * e0)),
    ),
    (P + "lemma-20", "dp-accounting"): (
        _m("amplification-without-factor-2", "Lemma 20's 2 p epsilon_0 as p epsilon_0",
           (bpp, "subsampled_epsilon", lambda p, e0: p * e0)),
    ),
    (P + "lemma-21", "dp-accounting"): (
        _m("composition-without-T-in-sqrt", "advanced composition sqrt(2 ln(1/delta_0)) eps_0 + 2 T eps_0^2",
           (bpp, "adv_composition_epsilon", lambda T, e0, d0: math.sqrt(2 * math.log(1 / d0)) * e0 + 2 * T * e0**2)),
    ),
    (P + "lemma-22", "linear-brute-force"): (
        _m("radius-x2", "linear certified radius doubled", (cr, "certified_radius_linear",
                                                             lambda W, X, y: 2 * _radius_linear(W, X, y))),
    ),
    (P + "lemma-22", "kernel-rff-brute-force"): (
        _m("radius-without-sigma-max", "kernel certified radius without the 1/sigma_max(Pi) Lipschitz factor",
           (robustness.RandomFourierFeatures, "certified_radius", _rff_radius_without_sigma_max),
           power="the kernel certificate is >= 3x below the minimal adversarial distance found (not tight; found / "
                 "certified >= 4.1 at the smoke seed, >= 3.1 at default): a radius inflated < 3x passes; without "
                 "sigma_max (2.7-27x) it is detected"),
    ),
    (P + "lemma-7", "brute-force-2d"): (
        _m("robust-risk-unnormalised", "robust_risk computed on the raw w (normalisation dropped)",
           (pre, "robust_risk", _risk_unnormalised)),
    ),
    (P + "observation-8", "corrected"): (
        _m("runs-as-printed", "Observation 8's T with log(1 - xi) (the printed formula)",
           (pre, "obs8_runs", F.obs8_runs_as_printed)),
        _m("runs-minus-one", "Observation 8's T one too small (floor instead of ceil)",
           (pre, "obs8_runs", lambda xi, xp: max(1, math.floor(math.log(0.5 * xp) / math.log(xi))))),
    ),
    (P + "observation-8", "boosting-corrected"): (
        _m("runs-as-printed", "the boosted learner runs the printed T = ceil(log(0.5 xi')/log(1 - xi))",
           (boosting, "obs8_runs", F.obs8_runs_as_printed)),
        _m("selection-by-largest-error", "the selection picks the largest empirical gamma'-margin error (sign flipped)",
           (boosting, "margin_error", lambda W, X, y, g: -robustness.margin_error(W, X, y, g))),
    ),
    (P + "lemma-9", "random-sign-packing"): (
        _m("hoeffding-exponent-without-half", "Lemma 9's union bound with e^{-d t^2} instead of e^{-d t^2/2}",
           (pure, "lemma9_union_bound", lambda K, d, t: K * (K - 1) * math.exp(-d * t * t)), profile="default",
           power="the Hoeffding union bound is ~12x above the true failure rate (2.2e-4 per trial vs 2.5e-3): a bound "
                 "understated < 12x passes; e^{-d t^2} (2e4x) is detected from the default profile (4000 trials) on"),
    ),
    (P + "claim-10", "intersection-point"): (
        _m("point-sign-flipped", "Claim 10's point 0.505 gamma (w_i + w_j) (sign of w_j flipped)",
           (pure, "claim10_point", lambda a, b, g: 0.505 * g * (np.asarray(a) + np.asarray(b)))),
    ),
    (P + "theorem-2", "packing-em-exact"): (
        _m("em-exponent-x20", "the exponential mechanism with exp(10 eps q) instead of exp(eps q/2)",
           (pure, "em_packing_success", lambda n, d, e: _em_success(n, d, 20 * e)),
           (pure, "em_packing_needed_n", lambda d, e, lv: _em_needed(d, 20 * e, lv)),
           power="an illustration with slack: the EM needs n 15-40x above Theorem 2's ln(0.1 K)/eps on the greedy "
                 "packings (K <= 300 at d <= 64), so an exponent < 15x too large (e.g. 2x, a 2 eps-DP EM) passes; "
                 "20x is detected"),
    ),
    (P + "lemma-12", "tv-decay-exact"): (
        _m("conditioning-threshold-0.3", "P_q conditioned on <q', x> >= 0.3 instead of 0.01 (a constant changed)",
           (approx, "LEMMA12_MARGIN", 0.3)),
    ),
    (P + "lemma-12", "tv-montecarlo-d400"): (
        _m("conditioning-threshold-0.3", "P_q conditioned on <q', x> >= 0.3 instead of 0.01 (a constant changed)",
           (approx, "LEMMA12_MARGIN", 0.3)),
    ),
    (P + "lemma-12", "proof-threshold-corrected"): (
        _m("proof-norm-as-printed", "the proof's threshold ||q'|| >= 0.1 (the printed one) instead of 0.2",
           (approx, "LEMMA12_PROOF_NORM", F.LEMMA12_PROOF_NORM_AS_PRINTED)),
        _m("conditioning-threshold-0.04", "P_q conditioned on <q', x> >= 0.04 = ||q'||^2 at the proof's threshold",
           (approx, "LEMMA12_MARGIN", 0.04)),
    ),
    (P + "lemma-13", "dp-perceptron-sqrt-d"): (
        _m("noise-norm-fixed", "Gaussian noise of total norm ~sigma (std sigma/sqrt(d) per coordinate)",
           (approx, "DPBatchPerceptron", _NoiseNormFixed),
           power="a learner with less noise still needs n ~ sqrt(d) (the check tests the exponent, not the constant): "
                 "noise divided by 10 passes; noise that does not grow with d is detected"),
    ),
    (P + "lemma-14", "reduction-parameters"): (
        _m("reduction-without-sqrt", "Lemma 14's gamma = gamma_0 beta_0/2 (sqrt dropped)",
           (approx, "lemma14_reduction", lambda g0, b0: (g0 * b0 / 2, 2 * b0))),
        _m("regime-constant-2", "Lemma 14's regime gamma_0 > 2 sqrt(2 beta_0) (constant 4 -> 2)",
           (approx, "lemma14_min_gamma0", lambda b0: 2 * math.sqrt(2 * b0))),
    ),
    (P + "theorem-11", "dp-perceptron-correlation"): (
        _m("dp-noise-div-100", "DP Batch Perceptron's calibrated Gaussian noise divided by 100",
           (perceptron, "calibrate_gaussian_noise", _noise_div(100)),
           power="Theorem 11's cap zeta sqrt(d) binds every (1, zeta/n)-DP mechanism and this one stays 25x below it "
                 "(mean correlation ~0.5 of 12.8 at d = 4096): noise divided by 10 passes at the default profile; "
                 "divided by >= 30-100 the correlation exceeds the cap"),
    ),
    (P + "theorem-3", "embedded-fingerprinting"): (
        _m("dp-noise-div-100", "DP Batch Perceptron's calibrated Gaussian noise divided by 100",
           (perceptron, "calibrate_gaussian_noise", _noise_div(100)),
           power="Theorem 11's cap zeta sqrt(d) binds every (1, zeta/n)-DP mechanism and this one stays 25x below it "
                 "(mean correlation ~0.5 of 12.8 at d = 4096): noise divided by 10 passes at the default profile; "
                 "divided by >= 30-100 the correlation exceeds the cap"),
    ),
    (P + "lemma-15", "chain-bound"): (
        _m("delta-as-printed", "Lemma 15's delta 0.001/(1 - e^{-eps}) (the printed one)",
           (nrl, "lemma15_delta", F.lemma15_delta_as_printed),
           power="the chain bound has slack (0.505 against 0.509): only a delta >= ~400x the corrected one fails"),
    ),
    (P + "lemma-15", "laplace-tightness"): (
        _m("laplace-scale-halved", "the bit guesser's Laplace noise scale halved (1/(2 eps))",
           (nrl, "LaplaceMechanism", _LaplaceHalfScale)),
    ),
    (P + "theorem-4", "hard-instance"): (
        _m("realiser-without-signs", "D_s realised by (1/sqrt d) sum_i e_i (the printed realiser, signs dropped)",
           (instances.Theorem4Instance, "realiser", property(lambda self: np.ones(self.d) / math.sqrt(self.d)))),
        _m("dimension-ceil", "d = ceil(1/gamma^2) instead of floor",
           (nrl, "theorem4_dimension", lambda g: math.ceil(1 / g**2 * (1 - 1e-12)))),
    ),
    (P + "theorem-4", "ds-dp-perceptron-scaling"): (
        _m("dp-noise-div-10", "DP Batch Perceptron's calibrated Gaussian noise divided by 10",
           (nrl, "calibrate_gaussian_noise", _noise_div(10))),
    ),
    (P + "lemma-16", "finite-support-simulation"): (
        _m("deviation-constant-div-1e5", "Lemma 16's deviation term with 0.004 instead of 400",
           (em, "lemma16_deviation", lambda n, g, xi: F.lemma16_deviation(n, g, xi) / 1e5),
           power="the constant 400 is loose by ~5e3x at n = 4e7 (largest observed deviation 4.3e-5 against 0.243): a "
                 "deviation term understated < ~1e4x passes; 1e5x is detected"),
    ),
    (P + "lemma-17", "exact-circle"): (
        _m("exponent-without-half", "Lemma 17's bound exp(-eps t)/mu(S_t) instead of exp(-eps t/2)/mu(S_t)",
           (em, "lemma17_bound", lambda e, t, mu: math.exp(-e * t) / mu)),
    ),
    (P + "theorem-5", "proof-tail-facts"): (
        _m("sample-size-constant-div-100", "Theorem 5's n with 1e2 instead of 1e4 in 1e4 Lambda^2/(eps alpha)",
           (em, "theorem5_sample_size", _theorem5_n_div100),
           power="the final step exp(-0.125 eps alpha n) 2^{20 Lambda^2} <= 0.01 has a ~90x margin in the constant "
                 "1e4: a constant reduced < 90x passes"),
    ),
    (P + "theorem-5", "em-accuracy-scaled"): (
        _m("score-sign-flipped", "the exponential mechanism's score with the sign flipped (prefers errors)",
           (sphere, "circle_arcs", lambda X, y, c: (lambda s, l, q: (s, l, -q))(*_arcs(X, y, c)))),
    ),
}


def mutants_of(claim_id: str, check: str) -> tuple[Mutant, ...]:
    """The registered mutants of a (claim, check) (empty for the as-printed checks)."""
    return MUTANTS.get((claim_id, check), ())
