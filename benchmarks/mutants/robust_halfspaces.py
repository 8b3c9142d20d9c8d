"""Mutants of "Robust and Private Learning of Halfspaces" (paper id ``robust-halfspaces``): one-line bugs in its
learners (DP Batch Perceptron, the perceptrons, the sphere exponential mechanism, Observation 8's boosting, the
instances, robust risk and certified radii) and in the formulas its checks use.

The first three are killed by pinned values (the stopping test's batched Laplace noise halved,
``gdp_mu_of_pure_dp`` without its factor 2, the theory variant's accounting ignoring the Laplace stopping test);
``python benchmarks/mutation_score.py --only <names> --no-nightly`` applies them (results in
benchmarks/README.md, 'Robust halfspaces source mutants').
"""

from __future__ import annotations

from . import SourceMutant

_P = "learners/robust_halfspaces/perceptron.py"

MUTANTS: list[SourceMutant] = [
    SourceMutant(
        "rh-batch-stop-laplace-halved", _P,
        "nu = rng.laplace(0.0, P.b, idx.size) if P.b > 0 else np.zeros(idx.size)",
        "nu = rng.laplace(0.0, P.b / 2, idx.size) if P.b > 0 else np.zeros(idx.size)",
        "DP Batch Perceptron, batched runs: the stopping test's Laplace noise scale halved"),
    SourceMutant(
        "rh-gdp-mu-without-factor-2", _P,
        "return float(-2 * special.ndtri(special.expit(-epsilon)))",
        "return float(-special.ndtri(special.expit(-epsilon)))",
        "gdp_mu_of_pure_dp without its factor 2 (the Laplace step's GDP mu halved)"),
    SourceMutant(
        "rh-theory-accounting-ignores-laplace", _P,
        "mu = math.hypot(1 / sigma, gdp_mu_of_pure_dp(1 / b))",
        "mu = 1 / sigma",
        "Algorithm 1's DpEvent ignores the Laplace stopping test (only the Gaussian is accounted)"),
    SourceMutant(
        "rh-fit-stop-laplace-halved", _P,
        "nu = rng.laplace(0.0, P.b) if P.b > 0 else 0.0",
        "nu = rng.laplace(0.0, P.b / 2) if P.b > 0 else 0.0",
        "DP Batch Perceptron, single runs (fit): the stopping test's Laplace noise scale halved"),
    SourceMutant(
        "rh-lemma19-sigma-halved", _P,
        "return 1 / math.sqrt(T), 100 * L / epsilon, 100 * math.sqrt(L) / epsilon",
        "return 1 / math.sqrt(T), 50 * L / epsilon, 100 * math.sqrt(L) / epsilon",
        "Lemma 19's sigma = 50 ln(T/delta)/eps (noise halved)"),
    SourceMutant(
        "rh-lemma18-T-constant", _P,
        "quotient = Fraction(1500) / (Fraction(repr(alpha))",
        "quotient = Fraction(1000) / (Fraction(repr(alpha))",
        "Lemma 18's T with 1000 instead of 1500"),
    SourceMutant(
        "rh-stopping-threshold-x2", _P,
        "return 0.3 * alpha * p * n",
        "return 0.6 * alpha * p * n",
        "Algorithm 1's stopping threshold 0.6 alpha p n (constant doubled)"),
    SourceMutant(
        "rh-batch-margin-test-zero", _P,
        "mist = np.where(What @ rows.T <= margin, _poisson_counts(rng, mult, P.p, idx.size), 0)",
        "mist = np.where(What @ rows.T <= 0, _poisson_counts(rng, mult, P.p, idx.size), 0)",
        "DP Batch Perceptron, batched runs: Line 6 tests margin 0 instead of gamma'"),
    SourceMutant(
        "rh-fit-margin-test-zero", _P,
        "mist = batch & (y * (X @ what) <= margin)",
        "mist = batch & (y * (X @ what) <= 0)",
        "DP Batch Perceptron, single runs: Line 6 tests margin 0 instead of gamma'"),
    SourceMutant(
        "rh-perceptron-ties-not-mistakes", _P,
        "            if y[t] * s <= 0:",
        "            if y[t] * s < 0:",
        "Perceptron: a zero score is not a mistake (it never leaves w = 0)"),
    SourceMutant(
        "rh-calibration-ignores-repeats", _P,
        "lambda s: algorithm1_dp_event(p, s, None, T, repeats),",
        "lambda s: algorithm1_dp_event(p, s, None, T, 1),",
        "noise calibration for K one-vs-rest runs accounts for one run only"),
    SourceMutant(
        "rh-boosting-runs-as-printed", "learners/robust_halfspaces/boosting.py",
        "return max(1, math.ceil(math.log(0.5 * xi_prime) / math.log(xi) - 1e-12))",
        "return max(1, math.ceil(math.log(0.5 * xi_prime) / math.log(1 - xi) - 1e-12))",
        "Observation 8's T with log(1 - xi) (the printed formula)"),
    SourceMutant(
        "rh-boosting-selects-largest-error", "learners/robust_halfspaces/boosting.py",
        "self.coef_ = W[int(np.argmin(errs))]",
        "self.coef_ = W[int(np.argmax(errs))]",
        "Observation 8's selection picks the largest empirical error"),
    SourceMutant(
        "rh-margin-data-outside-ball", "learners/robust_halfspaces/instances.py",
        "np.sqrt(1 - s**2)[:, None] * r * U",
        "np.sqrt(1 + s**2)[:, None] * r * U",
        "margin_realizable draws points outside the unit ball (orthogonal part sqrt(1 + s^2))"),
    SourceMutant(
        "rh-theorem4-realiser-without-signs", "learners/robust_halfspaces/instances.py",
        "return self.s / math.sqrt(self.d)",
        "return np.ones(self.d) / math.sqrt(self.d)",
        "D_s's realiser without the signs s_i (the printed one)"),
    SourceMutant(
        "rh-robust-risk-unnormalised", "learners/robust_halfspaces/robustness.py",
        "return margin_error(w / nrm, X, y, gamma)",
        "return margin_error(w, X, y, gamma)",
        "robust risk on the raw w (Lemma 7's normalisation dropped)"),
    SourceMutant(
        "rh-rff-radius-without-sigma-max", "learners/robust_halfspaces/robustness.py",
        "return math.sqrt(self.projection_.shape[1]) / self.sigma_max_ * r",
        "return math.sqrt(self.projection_.shape[1]) * r",
        "kernel certified radius without the 1/sigma_max(Pi) factor"),
    SourceMutant(
        "rh-sphere-em-sign-flipped", "learners/robust_halfspaces/sphere.py",
        "logits = np.log(lengths) + scale * eps * q",
        "logits = np.log(lengths) - scale * eps * q",
        "sphere exponential mechanism (angular sampler): the score's sign flipped"),
    SourceMutant(
        "rh-lemma20-without-factor-2", "bounds/robust_halfspaces/formulas.py",
        "return 2 * p * epsilon_0",
        "return p * epsilon_0",
        "Lemma 20's subsampled epsilon 2 p eps_0 as p eps_0"),
    SourceMutant(
        "rh-lemma15-delta-as-printed", "bounds/robust_halfspaces/formulas.py",
        "return 0.001 * -math.expm1(-epsilon)",
        "return 0.001 / -math.expm1(-epsilon)",
        "Lemma 15's delta 0.001/(1 - e^-eps) (the printed one)"),
]
