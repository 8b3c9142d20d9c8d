"""Source mutants of "Differentially private agnostic learning of halfspaces under Gaussian marginals" (paper id
``agnostic-halfspaces``): one-line bugs in its learners' calibrations, grids and selection, and in the bounds its
checks compare with. ``python benchmarks/mutation_score.py --only <names>`` applies each and reports whether the
default suite (and the smoke nightly) kills it; the score is in
benchmarks/README.md, 'Agnostic halfspaces source mutants'.
"""

from __future__ import annotations

from . import SourceMutant

_D = "learners/agnostic_halfspaces/dpsas.py"
_P = "learners/agnostic_halfspaces/proper.py"
_R = "learners/agnostic_halfspaces/regression.py"
_C = "learners/agnostic_halfspaces/common.py"
_S = "learners/agnostic_halfspaces/semi_agnostic.py"
_H = "learners/agnostic_halfspaces/hermite.py"
_F = "bounds/agnostic_halfspaces/formulas.py"

MUTANTS: list[SourceMutant] = [
    SourceMutant("ah-dpsas-sigma-ln-1.25", _D,
                 "* math.sqrt(2 * math.log(2 / delta)) / (epsilon * m_0)",
                 "* math.sqrt(2 * math.log(1.25 / delta)) / (epsilon * m_0)",
                 "DPSAS sigma with ln(1.25/delta) instead of ln(2/delta) (it once survived the default suite)"),
    SourceMutant("ah-dpsas-noise-multiplier-ln-1.25", _D,
                 "return math.sqrt(2 * math.log(2 / delta)) / epsilon",
                 "return math.sqrt(2 * math.log(1.25 / delta)) / epsilon",
                 "DPSAS noise multiplier (the audit target's calibration) with ln(1.25/delta)"),
    SourceMutant("ah-dpsas-laplace-factor-1", _D,
                 "def dpsas_laplace_scale(epsilon: float, m_0: int, factor: float = 2.0)",
                 "def dpsas_laplace_scale(epsilon: float, m_0: int, factor: float = 1.0)",
                 "the label mean's Laplace scale for sensitivity 1/m_0 instead of 2/m_0 (noise halved)"),
    SourceMutant("ah-dpsas-clip-norm", _D, "return 2 * math.sqrt(d)", "return math.sqrt(d)",
                 "Algorithm 3's clipping radius L = sqrt(d) instead of 2 sqrt(d)"),
    SourceMutant("ah-dpsas-ramp-schedule", _D, "(1 - s**2 / 64) ** t", "(1 - s**2 / 32) ** t",
                 "the angle schedule phi_t = (pi/2)(1 - s^2/32)^t (a constant changed)"),
    SourceMutant("ah-dpsas-threshold-sign", _D, "dpsas_clip_probability((1 + label_mean) / 2, kappa)",
                 "dpsas_clip_probability((1 - label_mean) / 2, kappa)", "tau^ from (1 - y^)/2: a sign flipped"),
    SourceMutant("ah-dpsas-dp-event-L", _D, "self.sigma_ * self.batch_size_ / (2 * self.clip_norm_)",
                 "self.sigma_ * self.batch_size_ / self.clip_norm_",
                 "DPSAS's dp_event with sensitivity L/m_0 for 2L/m_0 (accountant claims too little)"),
    SourceMutant("ah-alg2-sigma-ln", _P, "math.sqrt(2 * math.log(1.25 / delta)) / (epsilon * n)",
                 "math.sqrt(2 * math.log(1 / delta)) / (epsilon * n)",
                 "Algorithm 2's sigma with ln(1/delta) for ln(1.25/delta)"),
    SourceMutant("ah-alg2-degree-square", _P, "return math.ceil(C_0 / (c * alpha) ** 2)",
                 "return math.ceil(C_0 / (c * alpha))", "Algorithm 2's degree without the square (the printed box)"),
    SourceMutant("ah-alg2-sensitivity-attr", _P, "self.sensitivity_ = 4 * T / (2 * half)",
                 "self.sensitivity_ = 2 * T / (2 * half)",
                 "Algorithm 2's recorded sensitivity 2T/n (its dp_event then overstates the noise multiplier)"),
    SourceMutant("ah-alg1-blocks-log-base", _R, "k = math.ceil(math.log2(2 / beta))", "k = math.ceil(math.log(2 / beta))",
                 "Algorithm 1's k = ceil(ln(2/beta)) for ceil(log2(2/beta)) (log base changed)"),
    SourceMutant("ah-alg1-thresholds", _R, "return -1 + (2 * np.arange(1, M + 1) - 1) / M",
                 "return -1 + 2 * np.arange(1, M + 1) / M", "Algorithm 1's grid t_l = -1 + 2l/M (off by half a step)"),
    SourceMutant("ah-alg1-erm-sensitivity", _R, "return (2 * T / n0) * (math.sqrt(K) if compose else 1.0) * s_unit",
                 "return (T / n0) * (math.sqrt(K) if compose else 1.0) * s_unit",
                 "Algorithm 1's ERM noise for sensitivity T/n_0 instead of 2T/n_0 (noise halved)"),
    SourceMutant("ah-exp-mech-eps", _C, "return -(epsilon / (2.0 * SELECTION_SENSITIVITY)) * np.asarray(error_counts, dtype=float)",
                 "return -(epsilon / SELECTION_SENSITIVITY) * np.asarray(error_counts, dtype=float)",
                 "the selection at 2 eps (the 1/2 of exp(-eps err/2) dropped)"),
    SourceMutant("ah-remark3-printed", _C, "return math.sqrt(D / (c * alpha))", "return math.sqrt(D) / (c * alpha)",
                 "Remark 3's radius as printed, sqrt(D_p)/(c alpha)"),
    SourceMutant("ah-gaussian-clip-radius", _C, "return 2 * math.sqrt(D)", "return math.sqrt(D)",
                 "Lemma C.2's radius T = sqrt(D_p) for 2 sqrt(D_p)"),
    SourceMutant("ah-alg4-grid-log-base", _S, "return max(1, math.ceil(C_K * math.log2(1 / alpha)))",
                 "return max(1, math.ceil(C_K * math.log(1 / alpha)))", "Algorithm 4's grid with the natural log"),
    SourceMutant("ah-hermite-recurrence", _H, "(x * out[..., m] - math.sqrt(m) * out[..., m - 1]) / math.sqrt(m + 1)",
                 "(x * out[..., m] - m * out[..., m - 1]) / math.sqrt(m + 1)",
                 "the Hermite recurrence with m for sqrt(m)"),
    SourceMutant("ah-lemma-b5-union", _F, "return 2 * math.sqrt(math.log(4 * K / eta) / (2 * m))",
                 "return 2 * math.sqrt(math.log(4 / eta) / (2 * m))",
                 "Lemma B.5's Hoeffding term without the union over K (a union bound shrunk)"),
    SourceMutant("ah-c2-variance-bound", _F, "return math.expm1(2 * p**2 / d)", "return math.expm1(p**2 / d)",
                 "Lemma C.2's variance bound e^{p^2/d} - 1 (a constant changed)"),
]
