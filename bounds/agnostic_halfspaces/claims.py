"""Claims of "Differentially private agnostic learning of halfspaces under Gaussian marginals".

Paper id ``agnostic-halfspaces``.

Source: ``papers/dp-agnostic-halfspaces.txt``; the text dump has lost the title page (authors, venue and
arXiv id are not known here), the body of Table 1 and the connecting words of most statements. Every
numbered statement of the paper is registered (:data:`NUMBERED_STATEMENTS`): Theorems 2.1, 3.1, 4.1, D.1;
Propositions 4.2, C.1, D.2, F.1; Lemmas 3.2-3.5, 4.4, B.1, B.3-B.5, B.7-B.10, B.14, B.15, C.2, D.3, F.3,
F.4; Claims 4.3, 4.5, 4.6; Facts B.6, B.11-B.13; Definition B.2; Remarks 1-3. (Assumption F.2 is
numbered too, but "assumption" is not a statement kind of the registry; it is the regime condition
``d >= 16 ln(n/beta)`` of Theorem 4.1, Proposition 4.2 and Lemma F.4.)

Reconstructed statements (``reconstructed=True``): the ones whose statement had to be rebuilt from the
surrounding text (words in [brackets] are reconstructed) are Theorem 2.1, Theorem 3.1 and Theorem D.1
(the rows of the lost Table 1 body), Lemma B.1 (independence / mean zero), Lemma B.4 (convexity, R =
diameter), Fact B.11 (unit ball) and Fact B.12 (unit normals).

Errata relied on (each is stated in the claim's ``errata``): Algorithm 2's degree p = ceil(C_0/(c alpha)^2)
(the box drops the square; check pair ``degree-printed`` / ``degree-corrected``); Remark 3's
T = sqrt(D_p/(c alpha)); Claim 4.3's sigma needs the factor L (the printed sigma FAILS its privacy check, and
the result says so in ``details['erratum']``); Algorithm 4's grid needs log base 2 (check pair
``grid-coverage-printed-log`` / ``grid-coverage``); Eq. (30)
uses sqrt(log(1/delta)); Lemma 3.4's middle term; Prop. F.1 proves (O(eps), O(delta)); Lemma F.4 holds at
1 - beta; Eq. (11) is a sufficient condition; Lemma 3.4's eps is in (0, 1); and the explicit constants of
the sample-size formulas (Lemma B.5's explicit m, C_n0 >= 2, the base-2 grid of Algorithm 4).

Each check's mutants, the bugs it must be seen to fail on, are declared in :mod:`.mutants` and attached at
registration (``register(Claim(...), mutants=MUTANTS)``). Logarithms are natural unless stated
(k = ceil(log2(2/beta)) and Algorithm 4's K use base 2).
Hidden constants are keyword arguments listed in each claim's ``hidden_constants``; where the
proof forces a lower bound on a hidden constant, the default is that lower bound (C_n0 = 2,
R_0 = 2), otherwise 1. The checks live in one module per part of the paper (:mod:`.auxiliary`,
:mod:`.improper_learner`, :mod:`.improper_scaling`, :mod:`.log_concave`, :mod:`.proper_learner`,
:mod:`.semi_agnostic`, :mod:`.remarks`); formulas that claims and checks share in :mod:`.formulas`.
"""

from __future__ import annotations

import math

from privbound.bounds.agnostic_halfspaces import (
    auxiliary,
    improper_learner,
    improper_scaling,
    log_concave,
    proper_learner,
    remarks,
    semi_agnostic,
)
from privbound.bounds.agnostic_halfspaces.formulas import (
    D_p,
    assumption_f2_min_d,
    ceil_or_inf,
    fact_b_6_bound,
    fact_b_11_size,
    fact_b_13_density,
    lemma_b_7_bound,
    lemma_f_3_upper,
    remark_1_exponent,
    remark_2_ratio,
    lemma_4_4_m0,
    lemma_b_1_bound,
    lemma_b_5_bound,
    lemma_b_5_validation_size,
    lemma_b_9_kernel,
    lemma_c_2_tail,
)
from privbound.bounds.agnostic_halfspaces.mutants import MUTANTS
from privbound.bounds.registry import Check, Claim, ClaimKind, Condition, register
from privbound.learners.agnostic_halfspaces.common import gaussian_clip_radius, remark3_clip_radius
from privbound.learners.agnostic_halfspaces.dpsas import dpsas_sigma
from privbound.learners.agnostic_halfspaces.proper import alg2_degree
from privbound.learners.agnostic_halfspaces.regression import alg1_grid

P = "agnostic-halfspaces/"

NUMBERED_STATEMENTS: tuple[str, ...] = tuple(P + s for s in (
    "theorem-2.1", "theorem-3.1", "theorem-4.1", "theorem-d.1",
    "proposition-4.2", "proposition-c.1", "proposition-d.2", "proposition-f.1",
    "lemma-3.2", "lemma-3.3", "lemma-3.4", "lemma-3.5", "lemma-4.4",
    "claim-4.3", "claim-4.5", "claim-4.6",
    "lemma-b.1", "definition-b.2", "lemma-b.3", "lemma-b.4", "lemma-b.5", "fact-b.6", "lemma-b.7",
    "lemma-b.8", "lemma-b.9", "lemma-b.10", "fact-b.11", "fact-b.12", "fact-b.13", "lemma-b.14",
    "lemma-b.15",
    "lemma-c.2", "lemma-d.3", "lemma-f.3", "lemma-f.4",
    "remark-1", "remark-2", "remark-3",
))


# ============================================================== regime conditions


def _in(lo, hi, lo_open=True, hi_open=False):
    def f(x):
        return (lo < x if lo_open else lo <= x) and (x < hi if hi_open else x <= hi)
    return f


def _cond(name: str, lo, hi, lo_open=True, hi_open=False) -> Condition:
    text = f"{name} in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
    test = _in(lo, hi, lo_open, hi_open)
    return Condition(text, lambda p, _n=name: test(p[_n]))


def _int_ge(name: str, low: int) -> Condition:
    return Condition(f"{name} is an integer >= {low}", lambda p, _n=name: float(p[_n]).is_integer() and p[_n] >= low)


def _pos(name: str) -> Condition:
    return Condition(f"{name} > 0", lambda p, _n=name: p[_n] > 0)


# ============================================================== Section 2: Theorem 2.1


def theorem_2_1_n(d, alpha, beta, epsilon, delta, c=0.25, C_p=1.0, C_M=1.0, C_n0=2.0):
    """Theorem 2.1 / Algorithm 1, Eqs. (15)-(17) with explicit constants: n = k n_0 + m.

    p = ceil(C_p/alpha^2), T = 2 sqrt(D_p), k = ceil(log2(2/beta)), M = ceil(max(C_M, 1/(2c))/alpha),
    n_0 = ceil(max(4 C_n0^2 D_p/(c alpha)^2, 2 C_n0 T sqrt(D_p ln(1/delta))/(c alpha eps), 2)) solving (16),
    m = Lemma B.5's explicit bound with K = kM, eta = beta/2, accuracy c alpha (not (17) with a guessed C).
    """
    p = math.ceil(C_p / alpha**2)
    D = D_p(d, p)
    T = gaussian_clip_radius(D)
    k, M = alg1_grid(alpha, beta, c, C_M)
    n0 = ceil_or_inf(max(4 * C_n0**2 * D / (c * alpha) ** 2,
                         2 * C_n0 * T * math.sqrt(D * math.log(1 / delta)) / (c * alpha * epsilon), 2))
    m = lemma_b_5_validation_size(k * M, beta / 2, epsilon, c * alpha)
    return k * n0 + m


def _dim_ok_alg1(p):
    q = math.ceil(p["C_p"] / p["alpha"] ** 2)
    return p["d"] >= 2 * q * q / (p["c"] * p["alpha"])


_PRIV_HALF = (_cond("alpha", 0, 0.5), _cond("beta", 0, 0.5), _cond("epsilon", 0, 0.5), _cond("delta", 0, 0.5))

register(Claim(
    id=P + "theorem-2.1",
    statement=("Let alpha, beta, eps_DP, delta_DP in (0, 1/2], p = ceil(C alpha^-2), D_p = C(d+p, p), and "
               "d >= C_dim alpha^-5. For P on R^d x {+-1} with marginal N(0, I_d), Algorithm 1 is "
               "(eps_DP, delta_DP)-DP and, given n = O~(D_p/alpha^2 + D_p/(eps_DP alpha)) i.i.d. samples, outputs h "
               "with err_P(h) <= OPT + alpha with probability >= 1 - beta, in poly(n) time."),
    latex=r"n=\widetilde O\!\left(\frac{D_p}{\alpha^2}+\frac{D_p}{\varepsilon_{\rm DP}\alpha}\right),\ D_p=\binom{d+p}{p}",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 2, Theorem 2.1; Table 1 row 1; App. C Eqs. (15)-(24)",
    formula=theorem_2_1_n,
    quantity="sample size n = k n_0 + m of Algorithm 1 (explicit constants of the proof)",
    hidden_constants={"C_p": 1.0, "C_M": 1.0, "C_n0": 2.0},
    exponents={"D_p": 1.0, "alpha": -2.0, "epsilon": -1.0},
    regime=_PRIV_HALF + (_cond("c", 0, 0.25), _int_ge("d", 1),
                         Condition("d >= 2 p^2 / (c alpha) with p = ceil(C_p/alpha^2) (Lemma C.2; C_dim >= 2(C+1)^2/c)",
                                   _dim_ok_alg1)),
    errata=("Explicit constants: the single hidden C of (15)-(17) is split into C_p (degree), "
            "C_M >= 1/(2c) (grid, Eq. (21)), C_n0 >= max(2, C_B4) (Eq. (19) adds Lemma B.7's 2 sqrt(D_p/n_0)); "
            "m is Lemma B.5's explicit bound with K = kM, eta = beta/2.",
            "Lemma B.4's R is the diameter (R = 2 for the unit ball)."),
    reconstructed=True,
    checks=(Check("accuracy-small-d", "probabilistic", improper_learner.check_thm21_accuracy,
                  "at d = 5, p = 1 (D_p = 6): Pr[err > OPT + alpha] <= beta over independent runs"),
            Check("n-star-scaling", "scaling", improper_scaling.check_thm21_scaling,
                  "empirical n*(alpha) (err <= OPT + alpha w.p. >= 1 - xi, xi = 0.2; doubling grid + bisection) at "
                  "d = 5, p = 1, eps = 100 (statistical term dominates): OLS slope of log n* on log(1/alpha) vs "
                  "-exponents['alpha'] = 2"),
            Check("accuracy-applicable-degree", "probabilistic", improper_learner.check_thm21_accuracy_applicable_degree,
                  "at the prescribed degree p = ceil(C_p/alpha^2) = 12 (alpha = 0.3, C_p = 1), d = 2, Remark 3's T, "
                  "t = 0, 10% noise: Pr[err > OPT + alpha] <= beta; 250 runs at full detect a rate of 2 beta")),
), mutants=MUTANTS)


# ============================================================== Section 3: proper learner


def theorem_3_1_n(d, alpha, beta, epsilon, delta, c=0.1, C_0=1.0, K=1.0, C_sel=1.0):
    """Theorem 3.1 / Algorithm 2: n = ceil(max(n_poly (Eq. (34)), n_sel (Eq. (11)))), p = ceil(C_0/(c alpha)^2).

    n_poly = K (D_p l/alpha^2 + D_p l sqrt(L_delta)/(eps alpha)), l = ln(8/beta), L_delta = ln(1.25/delta);
    n_sel = C_sel (alpha^-4 ln(1/alpha) + ln(1/beta)) (alpha^-2 + (eps alpha)^-1).
    """
    p = alg2_degree(alpha, c, C_0)
    n_poly = lemma_3_4_n(d, p, alpha, beta, epsilon, delta, K)
    n_sel = C_sel * (alpha**-4 * math.log(1 / alpha) + math.log(1 / beta)) * (1 / alpha**2 + 1 / (epsilon * alpha))
    return ceil_or_inf(max(n_poly, n_sel))


def _dim_ok_alg2(p):
    q = alg2_degree(p["alpha"], p["c"], p["C_0"])
    return p["d"] >= 2 * q * q / (p["c"] * p["alpha"])


register(Claim(
    id=P + "theorem-3.1",
    statement=("Let alpha, beta, delta_DP in (0, 1/2), eps_DP in (0, 1), p = ceil(C_0/(c alpha)^2), d >= C_dim alpha^-5, "
               "mu = N(0, I_d). Algorithm 2 is (eps_DP, delta_DP)-DP and, given n = O~(D_p/alpha^2 + D_p/(eps_DP alpha) + "
               "1/alpha^6 + 1/(eps_DP alpha^5)) samples, outputs a halfspace h with err_P(h) <= OPT + alpha w.p. >= 1 - beta, "
               "in time poly(n) exp(O(alpha^-4 log(1/alpha)))."),
    latex=(r"n=\widetilde O\!\left(\frac{D_p}{\alpha^2}+\frac{D_p}{\varepsilon_{\rm DP}\alpha}+\frac1{\alpha^6}"
           r"+\frac1{\varepsilon_{\rm DP}\alpha^5}\right)"),
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 3, Theorem 3.1; Table 1 row 3; Eqs. (11), (34)",
    formula=theorem_3_1_n,
    quantity="sample size n = max(Eq. (34), Eq. (11))",
    hidden_constants={"C_0": 1.0, "K": 1.0, "C_sel": 1.0},
    exponents={"D_p": 1.0, "alpha": -6.0, "epsilon": -1.0},
    regime=(_cond("alpha", 0, 0.5, hi_open=True), _cond("beta", 0, 0.5, hi_open=True),
            _cond("delta", 0, 0.5, hi_open=True), _cond("epsilon", 0, 1, hi_open=True), _pos("c"), _int_ge("d", 1),
            Condition("d >= 2 p^2 / (c alpha) with p = ceil(C_0/(c alpha)^2) (Lemma 3.5; C_dim >= 2(C_0+1)^2 c^-5)",
                      _dim_ok_alg2)),
    errata=("Erratum: Algorithm 2's box prints p = ceil(C_0/(c alpha)); the theorem and proof use "
            "ceil(C_0/(c alpha)^2), which is registered (learners...proper.alg2_degree). The printed form is "
            "formulas.theorem_3_1_degree_printed; check 'degree-printed' fails by design, 'degree-corrected' passes.",
            "Erratum: Eq. (11) is written n = Omega(.) but used as a sufficient condition.",
            "T = 2 sqrt(D_p) is the only T analysed for Algorithm 2 (it needs the dimension condition)."),
    reconstructed=True,
    checks=(Check("accuracy-small-d", "probabilistic", proper_learner.check_thm31_accuracy,
                  "at d = 5, p = 2 (D_p = 21): proper output, Pr[err > OPT + alpha] <= beta"),
            Check("degree-corrected", "exact", proper_learner.check_alg2_degree_corrected,
                  "p = ceil(C_0/(c alpha)^2) (C_0 = 4): the degree-p projection of every halfspace is c alpha-accurate "
                  "in L^1 with ||w|| <= 1 (Lemma B.10, as Lemma 3.2 needs)"),
            Check("degree-printed", "exact", proper_learner.check_alg2_degree_printed,
                  "the box's printed p = ceil(C_0/(c alpha)): no degree-p polynomial is c alpha-accurate "
                  "(LP lower bound) -- documented erratum", erratum_form='printed')),
), mutants=MUTANTS)


def lemma_3_2_log_cover(alpha, C=1.0):
    """Lemma 3.2: log |H(q)| <= C alpha^-4 ln(1/alpha)."""
    return C * alpha**-4 * math.log(1 / alpha)


register(Claim(
    id=P + "lemma-3.2",
    statement=("There are universal C_0, C, c_0 > 0 such that: if X ~ N(0, I_d), |U| <= 1, alpha in (0, 1/2), "
               "p = ceil(C_0 alpha^-2) and q in P_p satisfies E(U - q(X))^2 <= inf_Q E(U - Q(X))^2 + c_0^2 alpha^2 (8), "
               "then from q and alpha one can construct a finite H(q) of halfspaces with log|H(q)| <= C alpha^-4 log(1/alpha) "
               "such that for every halfspace f some h in H(q) has E[U(f(X) - h(X))] <= C alpha."),
    latex=r"\log\lvert\mathcal H(q)\rvert\le C\alpha^{-4}\log(1/\alpha),\quad \mathbb E[U(f-h)]\le C\alpha",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="Sec. 3, Lemma 3.2; proof App. E",
    formula=lemma_3_2_log_cover,
    quantity="log of the cover size |H(q)|",
    hidden_constants={"C": 1.0},
    exponents={"alpha": -4.0},
    regime=(_cond("alpha", 0, 0.5, hi_open=True),),
    checks=(Check("subspace-dimension", "deterministic", proper_learner.check_32_subspace_dimension,
                  "#{eig(M) >= alpha^2/C_0} <= C_0 p ||q||^2/alpha^2 and tr M <= p ||w||^2 (closed-form M)"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-3.3",
    statement=("Let X ~ N(0, I_d), |U| <= 1 and m_T = E[U psi_p(X)]. Then q_{m_T}(x) = <m_T, psi_p(x)> minimises "
               "L_s(Q) = E(U - Q(X))^2 over P_p; for q_w = <w, psi_p>, L_s(q_w) = E U^2 - ||m_T||^2 + ||w - m_T||^2 (9)."),
    latex=r"L_s(q_w)=\mathbb E[U^2]-\lVert m_T\rVert_2^2+\lVert w-m_T\rVert_2^2",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="Sec. 3, Lemma 3.3, Eq. (9)",
    checks=(Check("identity-9-quadrature", "exact", proper_learner.check_33_identity,
                  "Eq. (9), minimality and the clipping-bias bound, exactly on a Gauss-Hermite measure"),),
), mutants=MUTANTS)


def lemma_3_4_n(d, p, alpha, beta, epsilon, delta, K=1.0):
    """Lemma 3.4's sufficient condition (34): n >= K (D_p l/alpha^2 + D_p l sqrt(L_delta)/(eps alpha))."""
    D = D_p(d, p)
    ell, Ld = math.log(8 / beta), math.log(1.25 / delta)
    return K * (D * ell / alpha**2 + D * ell * math.sqrt(Ld) / (epsilon * alpha))


register(Claim(
    id=P + "lemma-3.4",
    statement=("(alpha, beta, delta_DP in (0, 1/2), eps_DP in (0, 1) [corrected from (0, 1]].) The polynomial q computed from the n/2 "
               "samples S_1 of Algorithm 2 is (eps_DP, delta_DP)-DP and ||q||_{L2(mu)} <= 1. If n/2 = Omega~(D_p/alpha^2 + "
               "D_p/(eps_DP alpha)), then with probability >= 1 - beta/2, L_s(q) <= inf_Q L_s(Q) + c_0^2 c^2 alpha^2 (10)."),
    latex=(r"n\ge K\left(\frac{D_p\ell}{\alpha^2}+\frac{D_p\ell\sqrt{L_\delta}}{\varepsilon_{\rm DP}\alpha}\right),"
           r"\ \ell=\log\frac8\beta,\ L_\delta=\log\frac{1.25}{\delta_{\rm DP}}"),
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 3, Lemma 3.4; proof App. E, Eq. (34)",
    formula=lemma_3_4_n,
    quantity="sufficient sample size n of Eq. (34)",
    hidden_constants={"K": 1.0},
    exponents={"D_p": 1.0, "alpha": -2.0, "epsilon": -1.0},
    regime=(_int_ge("d", 1), _int_ge("p", 1), _cond("alpha", 0, 0.5, hi_open=True), _cond("beta", 0, 0.5, hi_open=True),
            _cond("delta", 0, 0.5, hi_open=True), _cond("epsilon", 0, 1, hi_open=True)),
    errata=("Erratum: printed eps_DP in (0, 1]; the log(1.25/delta) calibration is the classical "
            "Gaussian mechanism, proved for eps < 1; registered eps in (0, 1). (Numerically the calibration still holds "
            "at eps = 1; the check reports where it first breaks.)",
            "Erratum: the proof's middle term is sqrt(D_p) l/n, printed sqrt(D_p l)/n (lower order)."),
    checks=(Check("gaussian-mechanism-calibration", "exact", proper_learner.check_alg2_gaussian_mechanism,
                  "sigma = 4T sqrt(2 ln(1.25/delta))/(eps n) for sensitivity 4T/n: exact privacy curve <= delta"),
            Check("learner-step-sensitivity", "exact", proper_learner.check_alg2_step_sensitivity,
                  "the learner's step on rows far outside the clipping ball: the mean moves by <= 4T/n, curve <= delta"),
            Check("gaussian-norm-tail", "exact", proper_learner.check_gaussian_norm_tail,
                  "||Z|| <= sigma(sqrt(D) + sqrt(2 l)) w.p. 1 - e^-l, exactly via the chi distribution"),
            Check("gaussian-norm-tail-mc", "probabilistic", proper_learner.check_gaussian_norm_tail_mc,
                  "the same tail by simulation, failure rate vs e^-l"),
            Check("accuracy-scaling", "scaling", proper_learner.check_34_accuracy_scaling,
                  "||m~ - m_T|| of the release against n, log-log slope vs -1/2")),
), mutants=MUTANTS)


def lemma_3_5_excess(alpha, c, C=1.0):
    """Lemma 3.5: min_{h in H(q)} err_P(h) - OPT <= (C/2 + 1) c alpha."""
    return (C / 2 + 1) * c * alpha


register(Claim(
    id=P + "lemma-3.5",
    statement=("Assume d >= C_dim alpha^-5, let C be the constant of Lemma 3.2 and build H(q) with accuracy c alpha. "
               "On the event (10), min_{h in H(q)} err_P(h) <= OPT + (C/2 + 1) c alpha."),
    latex=r"\min_{h\in\mathcal H(q)}\operatorname{err}_P(h)\le\mathrm{OPT}+(C/2+1)c\alpha",
    kind=ClaimKind.ACCURACY,
    source="Sec. 3, Lemma 3.5",
    formula=lemma_3_5_excess,
    quantity="excess error of the best hypothesis in H(q)",
    hidden_constants={"C": 1.0},
    regime=(_cond("alpha", 0, 0.5, hi_open=True), _pos("c")),
    checks=(Check("accuracy-small-d", "probabilistic", proper_learner.check_thm31_accuracy,
                  "the selected member of H(q) has err <= OPT + alpha w.p. >= 1 - beta (d = 5, p = 2)"),),
), mutants=MUTANTS)


# ============================================================== Section 4: semi-agnostic


def theorem_4_1_n(d, alpha, beta, epsilon, delta, C_n=1.0):
    """Theorem 4.1: n = C_n (d/alpha^2 + d/(eps alpha)) (the O~ with its hidden constant/log factors as C_n)."""
    return C_n * (d / alpha**2 + d / (epsilon * alpha))


register(Claim(
    id=P + "theorem-4.1",
    statement=("Let alpha, beta, eps_DP, delta_DP in (0, 1), mu = N(0, I_d). Algorithm 4 is (eps_DP, delta_DP)-DP and, given "
               "n = O~(d/alpha^2 + d/(eps_DP alpha)) samples with d >= 16 log(n/beta), outputs a halfspace h with "
               "err_P(h) <= C OPT + alpha w.p. >= 1 - beta, for a universal C, in time O(n d log(1/alpha))."),
    latex=r"n=\widetilde O\!\left(\frac{d}{\alpha^2}+\frac{d}{\varepsilon_{\rm DP}\alpha}\right)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 4, Theorem 4.1; Table 1 row 4; App. F",
    formula=theorem_4_1_n,
    quantity="sample size n",
    hidden_constants={"C_n": 1.0},
    exponents={"d": 1.0, "alpha": -2.0, "epsilon": -1.0},
    regime=(_cond("alpha", 0, 1, hi_open=True), _cond("beta", 0, 1, hi_open=True), _cond("epsilon", 0, 1, hi_open=True),
            _cond("delta", 0, 1, hi_open=True), _int_ge("d", 1),
            Condition("d >= 16 ln(n / beta) (Assumption F.2)",
                      lambda p: p["d"] >= assumption_f2_min_d(theorem_4_1_n(p["d"], p["alpha"], p["beta"], p["epsilon"],
                                                                            p["delta"], p["C_n"]), p["beta"]))),
    errata=("Erratum: Prop F.1 proves only (O(eps), O(delta))-DP; rescale eps, delta by constants.",
            "Algorithm 4's grid K = ceil(C_K log2(1/alpha)) must use base 2 (or C_K >= 1/ln 2) to reach 1/2 "
            "(learners...semi_agnostic.alg4_grid_size); the natural-log reading is formulas.alg4_grid_size_printed: "
            "check 'grid-coverage-printed-log' fails by design, 'grid-coverage' passes.",
            "The top grid point eta_K > 1/2 is outside Prop 4.2; kappa must be capped."),
    checks=(Check("ratio-bounded", "deterministic", semi_agnostic.check_thm41_ratio,
                  "(err - alpha)/OPT <= C = 2 for OPT in {0.05, 0.1, 0.2, 0.3}, d = 5"),
            Check("grid-coverage", "deterministic", semi_agnostic.check_alg4_grid_coverage,
                  "the learner's base-2 grid reaches eta_K >= 1/2 >= OPT for alpha in [1e-4, 0.45]"),
            Check("grid-coverage-printed-log", "deterministic", semi_agnostic.check_alg4_grid_coverage_printed,
                  "the printed K = ceil(C_K log(1/alpha)) read with the natural log: eta_K < 1/2 -- documented erratum", erratum_form='printed')),
), mutants=MUTANTS)


def proposition_4_2_m0(d, eta, epsilon, C_m=1.0):
    """Proposition 4.2: per-batch size m_0 = C_m (d/eta^2 + d/(eps eta)); total n_0 = (T+2) m_0."""
    return C_m * (d / eta**2 + d / (epsilon * eta))


register(Claim(
    id=P + "proposition-4.2",
    statement=("Let eta in (0, 1/2), beta, eps_DP, delta_DP in (0, 1), mu = N(0, I_d) and OPT <= eta. Algorithm 3 (DPSAS) is "
               "(eps_DP, delta_DP)-DP and, given m_0 = O~(d/eta^2 + d/(eps_DP eta)) samples per batch (n_0 = (T+2) m_0) and "
               "d >= 16 log(n_0/beta), outputs a halfspace h with err_P(h) <= C eta w.p. >= 1 - beta."),
    latex=r"m_0=\widetilde O\!\left(\frac d{\eta^2}+\frac d{\varepsilon_{\rm DP}\eta}\right)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 4, Proposition 4.2",
    formula=proposition_4_2_m0,
    quantity="samples per batch m_0",
    hidden_constants={"C_m": 1.0},
    exponents={"d": 1.0, "eta": -2.0, "epsilon": -1.0},
    regime=(_cond("eta", 0, 0.5, hi_open=True), _cond("epsilon", 0, 1, hi_open=True), _int_ge("d", 1)),
    errata=("The step size lambda = e^{pi^2/2} s is printed so in Algorithm 3; unconfirmed against [17]. "
            "On Gaussian data it overshoots (benchmarks/README.md, 'Agnostic halfspaces: measured values'); "
            "DPSAS uses lambda = s.",),
    checks=(Check("error-vs-eta", "probabilistic", semi_agnostic.check_prop42_dpsas,
                  "Pr[err > C eta] <= beta with C = 2, OPT = 0.1 <= eta = 0.11, d = 5"),),
), mutants=MUTANTS)


def claim_4_3_sigma(L, epsilon, delta, m_0):
    """Claim 4.3 [corrected] / Algorithm 3 line 6: sigma = 2 L sqrt(2 ln(2/delta)) / (eps m_0), the learner's sigma."""
    return dpsas_sigma(L, epsilon, delta, m_0)


register(Claim(
    id=P + "claim-4.3",
    statement=("For any unit w, the update is w' = (w - lambda grad L~_t(w)) / ||w - lambda grad L~_t(w)|| with "
               "grad L~_t(w) = E_{D_t}[-y 1{|w.x - b_t| <= a_t} grad_w (w.x/||w||)] + z_{t+1}, "
               "z_{t+1} ~ N(0, (I - w w^T) sigma^2), sigma = 2 L sqrt(2 log(2/delta_DP)) / (eps_DP m_0) [corrected]."),
    latex=r"\sigma=\frac{2L\sqrt{2\log(2/\delta_{\rm DP})}}{\varepsilon_{\rm DP}m_0}",
    kind=ClaimKind.PRIVACY,
    source="Sec. 4, Claim 4.3 (modifies Claim C.2 of [17]); Algorithm 3 line 6",
    formula=claim_4_3_sigma,
    quantity="noise scale sigma of each gradient step",
    regime=(_pos("L"), _cond("epsilon", 0, 1, hi_open=True), _cond("delta", 0, 1, hi_open=True), _pos("m_0")),
    errata=("Erratum: Claim 4.3 prints sigma = 2 sqrt(2 log(2/delta))/(eps m_0) without the factor L; "
            "Algorithm 3, Prop F.1 and Claim 4.5 use 2 L sqrt(2 log(2/delta))/(eps m_0), which is registered. "
            "The 'printed-sigma' check fails by design and says so in details['erratum'].",),
    checks=(Check("gaussian-mechanism-calibration", "exact", semi_agnostic.check_alg3_gaussian_mechanism,
                  "corrected sigma with sensitivity 2L/m_0: exact privacy curve <= delta"),
            Check("learner-step-sensitivity", "exact", semi_agnostic.check_dpsas_step_sensitivity,
                  "the learner's Gaussian steps on rows far outside the clipping ball: moves <= 2L/m_0, curve <= delta"),
            Check("printed-sigma", "exact", semi_agnostic.check_claim43_printed_sigma,
                  "the printed sigma (no L) at d = 10: not (eps, delta)-DP -- documented erratum", erratum_form='printed'),
            Check("perp-noise-norm", "deterministic", semi_agnostic.check_claim43_norm,
                  "noise and gradient in w-perp keep ||w - lambda grad|| >= 1")),
), mutants=MUTANTS)


register(Claim(
    id=P + "lemma-4.4",
    statement=("Let q = Pr_mu[w.x in B_phi]. If m_0 >= O(d q log(1/beta_0)/eta^2 + log(d/beta_0)/q^2 + "
               "d sqrt(log(1/delta_DP) log(1/beta_0))/(eta eps_DP)), then w.p. >= 1 - beta_0, for all unit u with "
               "E_P[g.u] >= 0: f.u >= E_P[g.u]/2 - O(eta) and ||f|| <= 2||E_P[g]|| + O(eta)."),
    latex=(r"m_0\ge O\!\left(\frac{dq\log(1/\beta_0)}{\eta^2}+\frac{\log(d/\beta_0)}{q^2}+"
           r"\frac{d\sqrt{\log(1/\delta_{\rm DP})\log(1/\beta_0)}}{\eta\varepsilon_{\rm DP}}\right)"),
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="Sec. 4, Lemma 4.4 (modifies Lemma C.12 of [17])",
    formula=lemma_4_4_m0,
    quantity="per-batch sample size m_0",
    hidden_constants={"C": 1.0},
    exponents={"d": 1.0, "q": -2.0, "eta": -2.0, "epsilon": -1.0},
    regime=(_int_ge("d", 1), _cond("q", 0, 1), _cond("eta", 0, 0.5, hi_open=True), _pos("epsilon"),
            _cond("delta", 0, 1, hi_open=True), _cond("beta_0", 0, 1, hi_open=True)),
    errata=("q depends on the iteration (q_t shrinks with phi_t); use a lower bound over all t.",),
    checks=(Check("noisy-gradient-event", "probabilistic", semi_agnostic.check_44_noisy_gradient,
                  "at m_0 = the bound with C = 4 (derived) and exact q: Pr[the two inequalities fail for some u] <= beta_0, O(eta) = eta"),),
), mutants=MUTANTS)


def claim_4_5_m0(d, eta, epsilon, delta, C=1.0):
    """Claim 4.5: m_0 >= C (d/eta^2 + sqrt(d ln(1/delta))/(eps eta))."""
    return C * (d / eta**2 + math.sqrt(d * math.log(1 / delta)) / (epsilon * eta))


register(Claim(
    id=P + "claim-4.5",
    statement=("Suppose e^{-tau_hat^2/2}/|tau_hat| >= c eta. Then w.p. 1 - O(beta), if m_0 >= O~(d/eta^2 + "
               "sqrt(d log(1/delta_DP))/(eps_DP eta)), the private initializer satisfies w*.w_hat_0 > 0. (In the "
               "complementary case e^{-tau_hat^2/2}/|tau_hat| < C eta the threshold classifier has error O(eta).)"),
    latex=r"m_0\ge\widetilde O\!\left(\frac d{\eta^2}+\frac{\sqrt{d\log(1/\delta_{\rm DP})}}{\varepsilon_{\rm DP}\eta}\right)",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="Sec. 4, Claim 4.5",
    formula=claim_4_5_m0,
    quantity="per-batch sample size m_0",
    hidden_constants={"C": 1.0},
    exponents={"d": 1.0, "eta": -2.0, "epsilon": -1.0},
    regime=(_int_ge("d", 1), _cond("eta", 0, 0.5, hi_open=True), _cond("epsilon", 0, 1, hi_open=True),
            _cond("delta", 0, 1, hi_open=True)),
    errata=("c eta in the condition vs C eta in the complementary case is harmless for c <= C; "
            "Algorithm 3 never branches on it.",),
    checks=(Check("sign-preservation", "probabilistic", semi_agnostic.check_45_initializer,
                  "Pr[w*.w_0 <= 0] <= beta for the private initializer (d = 5, m_0 = 2000)"),),
), mutants=MUTANTS)


def claim_4_6_m0(eta, epsilon, beta_0, C=1.0):
    """Claim 4.6: m_0 >= C (ln(1/beta_0)/eta^2 + ln(1/beta_0)/(eps eta))."""
    return C * (math.log(1 / beta_0) / eta**2 + math.log(1 / beta_0) / (epsilon * eta))


register(Claim(
    id=P + "claim-4.6",
    statement=("Let eta, beta_0 in (0, 1/2), w* unit and tau with Pr_P[sign(w*.x + tau) != y] <= eta; "
               "tau_hat = Phi^{-1}(clip_[kappa, 1-kappa]([1 + E_D[y] + z_tau]/2)), kappa = O(eta), z_tau ~ Lap(2/(m_0 eps)). "
               "If m_0 >= O(log(1/beta_0)/eta^2 + log(1/beta_0)/(eps_DP eta)), then w.p. >= 1 - beta_0, "
               "Pr_P[sign(w*.x + tau_hat) != y] <= O(eta)."),
    latex=r"m_0\ge O\!\left(\frac{\log(1/\beta_0)}{\eta^2}+\frac{\log(1/\beta_0)}{\varepsilon_{\rm DP}\eta}\right)",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="Sec. 4, Claim 4.6 (modifies Claim C.9 of [17])",
    formula=claim_4_6_m0,
    quantity="per-batch sample size m_0",
    hidden_constants={"C": 1.0},
    exponents={"eta": -2.0, "epsilon": -1.0},
    regime=(_cond("eta", 0, 0.5, hi_open=True), _cond("beta_0", 0, 0.5, hi_open=True), _pos("epsilon")),
    checks=(Check("laplace-tail-exact", "exact", semi_agnostic.check_laplace_tail_exact,
                  "P[|Lap(b)| > b ln(1/beta_0)] = beta_0 exactly"),
            Check("laplace-tail-mc", "probabilistic", semi_agnostic.check_laplace_tail_mc,
                  "the Laplace tail by simulation, failure rate vs beta_0"),
            Check("clipping-step", "deterministic", semi_agnostic.check_clip_step,
                  "|clip(p~) - p| <= |p~ - p| + kappa over random instances"),
            Check("threshold-error", "probabilistic", semi_agnostic.check_46_threshold,
                  "Pr[err(sign(w*.x + tau^)) > C eta] <= beta_0, exact error given tau^, C = 2")),
), mutants=MUTANTS)


# ============================================================== Appendix B


register(Claim(
    id=P + "lemma-b.1",
    statement=("Let U_1..U_n in R^d be [independent, mean zero] with ||U_i||_2 <= B and sum_i E||U_i||^2 <= v. Then w.p. "
               ">= 1 - beta, ||(1/n) sum_i U_i||_2 <= sqrt(2 v log(2/beta))/n + 2 B log(2/beta)/(3n)."),
    latex=r"\Big\lVert\frac1n\sum_iU_i\Big\rVert_2\le\frac{\sqrt{2v\log(2/\beta)}}{n}+\frac{2B\log(2/\beta)}{3n}",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. B, Lemma B.1 (vector Bernstein)",
    formula=lemma_b_1_bound,
    quantity="high-probability bound on the norm of the mean",
    regime=(_cond("beta", 0, 1, hi_open=True), Condition("n >= 1", lambda p: p["n"] >= 1),
            Condition("B >= 0", lambda p: p["B"] >= 0), Condition("v >= 0", lambda p: p["v"] >= 0)),
    reconstructed=True,
    checks=(Check("bernstein-failure-rate", "probabilistic", auxiliary.check_b1_bernstein,
                  "two bounded mean-zero families (d = 1 Rademacher, d = 5 sphere), failure rate vs beta = 0.1"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "definition-b.2",
    statement=("(Differential privacy.) A: Z^n -> Y is (eps_DP, delta_DP)-DP if Pr[A(S) in E] <= e^{eps_DP} Pr[A(S') in E] "
               "+ delta_DP for all measurable E and all S, S' differing in one element (replace-one)."),
    latex=r"\Pr[\mathcal A(S)\in E]\le e^{\varepsilon_{\rm DP}}\Pr[\mathcal A(S')\in E]+\delta_{\rm DP}",
    kind=ClaimKind.PRIVACY,
    source="App. B, Definition B.2",
    uncheckable_reason="a definition, not a claim; it is what every privacy check of this module tests",
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-b.3",
    statement="If M is (eps_DP, delta_DP)-DP and f is any (randomised) map, then f o M is (eps_DP, delta_DP)-DP.",
    latex=r"\mathcal M\ (\varepsilon,\delta)\text{-DP}\Rightarrow f\circ\mathcal M\ (\varepsilon,\delta)\text{-DP}",
    kind=ClaimKind.PRIVACY,
    source="App. B, Lemma B.3 (post-processing, Dwork and Roth [20])",
    checks=(Check("hockey-stick-data-processing", "exact", auxiliary.check_b3_postprocessing,
                  "finite mechanisms and random Markov kernels: delta_eps never increases"),),
), mutants=MUTANTS)


def lemma_b_4_excess(T, R, D, n, epsilon, delta, C=1.0):
    """Lemma B.4: E[L^_S(v^)] - min L^_S <= C T R sqrt(D ln(1/delta)) / (n eps)."""
    return C * T * R * math.sqrt(D * math.log(1 / delta)) / (n * epsilon)


register(Claim(
    id=P + "lemma-b.4",
    statement=("Let Omega in R^D be [convex with diameter] R, l(.; z) [convex and] T-Lipschitz, n >= 2, 0 < eps_DP, delta_DP "
               "<= 1/2. There is an (eps_DP, delta_DP)-DP algorithm with E[L^_S(v^)] - min_Omega L^_S <= "
               "O(T R sqrt(D log(1/delta_DP))/(n eps_DP)), using O(n^2) steps."),
    latex=r"\mathbb E[\widehat L_S(\hat v)]-\min_{v\in\Omega}\widehat L_S(v)\le O\!\left(\frac{TR\sqrt{D\log(1/\delta_{\rm DP})}}{n\varepsilon_{\rm DP}}\right)",
    kind=ClaimKind.ACCURACY,
    source="App. B, Lemma B.4 (Kulkarni et al. [36], Thm 1.1)",
    formula=lemma_b_4_excess,
    quantity="expected excess empirical risk",
    hidden_constants={"C": 1.0},
    exponents={"T": 1.0, "R": 1.0, "D": 0.5, "n": -1.0, "epsilon": -1.0},
    regime=(_pos("T"), _pos("R"), Condition("D >= 1", lambda p: p["D"] >= 1), Condition("n >= 2", lambda p: p["n"] >= 2),
            _cond("epsilon", 0, 0.5), _cond("delta", 0, 0.5)),
    errata=("R is the diameter of Omega (R = 2 for the unit ball; 2 R_0 in App. D).",),
    reconstructed=True,
    checks=(Check("implemented-erm-rate", "deterministic", improper_learner.check_b4_rate,
                  "the DP-ERM's mean excess over a non-private reference stays below its reported rate bound"),),
), mutants=MUTANTS)


register(Claim(
    id=P + "lemma-b.5",
    statement=("Candidates h_1..h_K, S_val ~ P^m independent of them; sample j^ w.p. proportional to "
               "exp(-eps_DP m err^_{S_val}(h_j)/2) (eps_DP-DP). For 0 < eta < 1, w.p. >= 1 - eta, err_P(h_j^) <= "
               "min_j err_P(h_j) + 2 sqrt(log(4K/eta)/(2m)) + 2 log(2K/eta)/(eps_DP m)."),
    latex=(r"\operatorname{err}_P(h_{\hat j})\le\min_j\operatorname{err}_P(h_j)+2\sqrt{\frac{\log(4K/\eta)}{2m}}"
           r"+\frac{2\log(2K/\eta)}{\varepsilon_{\rm DP}m}"),
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. B, Lemma B.5",
    formula=lemma_b_5_bound,
    quantity="excess error of the selected candidate",
    regime=(Condition("K >= 1", lambda p: p["K"] >= 1), _cond("eta", 0, 1, hi_open=True), _pos("epsilon"),
            Condition("m >= 1", lambda p: p["m"] >= 1)),
    checks=(Check("selection-failure-rate", "probabilistic", auxiliary.check_b5_selection,
                  "worst case: one good and K - 1 candidates just beyond the bound, independent counts, failure "
                  "rate vs eta = 0.1 (observed ~0.4 eta)"),
            Check("exp-mech-privacy", "deterministic", auxiliary.check_b5_privacy,
                  "exact log-probability ratios over random neighbouring score vectors <= eps")),
), mutants=MUTANTS)




register(Claim(
    id=P + "fact-b.6",
    statement="For tau ~ Unif[-1, 1], z in R and y in {-1, 1}: Pr_tau[sign(z - tau) != y] <= |z - y| / 2.",
    latex=r"\Pr_\tau[\operatorname{sign}(z-\tau)\ne y]\le\tfrac12\lvert z-y\rvert",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. B, Fact B.6 (random thresholding; Kalai et al. [29])",
    formula=fact_b_6_bound,
    quantity="bound on the misclassification probability",
    regime=(Condition("y in {-1, 1}", lambda p: p["y"] in (-1, 1)),),
    checks=(Check("quadrature", "exact", auxiliary.check_b6_threshold, "integral over tau on a grid of z, both labels"),),
), mutants=MUTANTS)




register(Claim(
    id=P + "lemma-b.7",
    statement=("For a feature map phi with E||phi(X)||^2 <= D and L_P(v) = E|<v, phi(X)> - Y|: "
               "E_{S ~ P^n} sup_{||v||_2 <= R} (L_P(v) - L^_S(v)) <= 2 R sqrt(D/n)."),
    latex=r"\mathbb E\sup_{\lVert v\rVert_2\le R}(L_P(v)-\widehat L_S(v))\le2R\sqrt{D/n}",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. B, Lemma B.7",
    formula=lemma_b_7_bound,
    quantity="expected uniform deviation",
    exponents={"R": 1.0, "D": 0.5, "n": -0.5},
    regime=(_pos("R"), _pos("D"), Condition("n >= 1", lambda p: p["n"] >= 1)),
    checks=(Check("lower-bound-sanity", "deterministic", auxiliary.check_b7_rademacher,
                  "Gaussian features, closed-form L_P; a lower bound on the supremum must stay below the bound"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-b.8",
    statement=("With h_m defined by e^{tx - t^2/2} = sum_m h_m(x) t^m / sqrt(m!), the products h_kappa(x) = prod_j "
               "h_{kappa_j}(x_j), |kappa| <= p, form an orthonormal basis of the polynomials of degree <= p in "
               "L^2(N(0, I_d)), of size C(d+p, p)."),
    latex=r"\{h_\kappa\}_{\lvert\kappa\rvert\le p}\ \text{orthonormal},\ \lvert\{\kappa\}\rvert=\binom{d+p}{p}=D_p",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Lemma B.8 (Hermite basis, O'Donnell [44])",
    formula=D_p,
    quantity="number of basis functions D_p",
    regime=(_int_ge("d", 1), _int_ge("p", 0)),
    checks=(Check("gram-quadrature", "exact", auxiliary.check_b8_orthonormal,
                  "Gram matrix = I by exact Gauss-Hermite quadrature; count = C(d+p, p)"),),
), mutants=MUTANTS)


register(Claim(
    id=P + "lemma-b.9",
    statement=("For rho in (-1, 1): sum_kappa rho^{|kappa|} h_kappa(x) h_kappa(y) = (1 - rho^2)^{-d/2} "
               "exp((2 rho <x, y> - rho^2 (||x||^2 + ||y||^2)) / (2 (1 - rho^2)))."),
    latex=(r"\sum_{\kappa}\rho^{\lvert\kappa\rvert}h_\kappa(x)h_\kappa(y)=\frac{1}{(1-\rho^2)^{d/2}}"
           r"\exp\!\Big(\frac{2\rho\langle x,y\rangle-\rho^2(\lVert x\rVert^2+\lVert y\rVert^2)}{2(1-\rho^2)}\Big)"),
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Lemma B.9 (Mehler's formula)",
    formula=lemma_b_9_kernel,
    quantity="Mehler kernel value (d = 1)",
    regime=(Condition("-1 < rho < 1", lambda p: -1 < p["rho"] < 1),),
    checks=(Check("series", "exact", auxiliary.check_b9_mehler_series, "truncated series vs closed form, d = 1, 2"),
            Check("quadrature", "exact", auxiliary.check_b9_mehler_quadrature,
                  "int K_rho(x, y) h_m(y) dN(y) = rho^m h_m(x) by adaptive quadrature")),
), mutants=MUTANTS)


def lemma_b_10_degree(alpha, C=1.0):
    """Lemma B.10: degree p <= C alpha^-2 suffices for L^1 error alpha with ||w||_2 <= 1."""
    return C * alpha**-2


register(Claim(
    id=P + "lemma-b.10",
    statement=("There is C > 0 such that for every d >= 1, alpha in (0, 1) and halfspace c there is q = sum_{|kappa|<=p} "
               "w_kappa h_kappa with p <= C alpha^-2, ||w||_2 <= 1 and ||c - q||_{L1(N(0, I_d))} <= alpha."),
    latex=r"p\le C\alpha^{-2},\ \lVert w\rVert_2\le1,\ \lVert c-q\rVert_{L^1(\mathcal N(0,I_d))}\le\alpha",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Lemma B.10 (via Pesenti et al. [45] and the mollifier of [11])",
    formula=lemma_b_10_degree,
    quantity="sufficient polynomial degree p",
    hidden_constants={"C": 1.0},
    exponents={"alpha": -2.0},
    regime=(_cond("alpha", 0, 1, hi_open=True),),
    uncheckable_reason=("existence statement with an unspecified universal C and an unspecified mollifier B of [11]; "
                        "a finite computation with one construction gives only an upper bound on the best error, and "
                        "the plain projection Pi_p f_theta does not reach C/sqrt(p) (its err*sqrt(p) grows with p), "
                        "so it can neither confirm nor refute the lemma"),
), mutants=MUTANTS)




register(Claim(
    id=P + "fact-b.11",
    statement="For k >= 1 and gamma in (0, 1), the [unit ball of] R^k has a gamma-cover in l_2 of size (C/gamma)^k.",
    latex=r"N(B_2^k,\gamma)\le(C/\gamma)^k",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Fact B.11 (Euclidean covers, [15])",
    formula=fact_b_11_size,
    quantity="cover size",
    hidden_constants={"C": 1.0},
    regime=(_int_ge("k", 1), _cond("gamma", 0, 1, hi_open=True)),
    reconstructed=True,
    checks=(Check("greedy-net", "deterministic", auxiliary.check_b11_cover,
                  "greedy gamma-separated nets of sampled balls: size <= (3/gamma)^k and cover radius <= gamma"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "fact-b.12",
    statement=("Let X ~ N(0, I_d) and h_{u,t}(x) = sign(<u, x> + t) for unit u, v. Then E|h_{u,t1} - h_{v,t1}| = O(||u - v||_2), "
               "E|h_{u,t1} - h_{u,t2}| = O(|t1 - t2|), and if |t| >= C sqrt(log(1/gamma)) then E|h_{v,t} - sign(t)| = O(gamma)."),
    latex=(r"\mathbb E\lvert h_{u,t}-h_{v,t}\rvert=O(\lVert u-v\rVert_2),\ \mathbb E\lvert h_{u,t_1}-h_{u,t_2}\rvert"
           r"=O(\lvert t_1-t_2\rvert),\ \lvert t\rvert\ge C\sqrt{\log(1/\gamma)}\Rightarrow\mathbb E\lvert h_{v,t}-\operatorname{sign}t\rvert=O(\gamma)"),
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. B, Fact B.12 (Gaussian halfspace discretisation, [15])",
    reconstructed=True,
    checks=(Check("explicit-constants", "exact", auxiliary.check_b12_discretisation,
                  "disagreement probabilities in closed form vs ||u-v||/2, |t1-t2|/sqrt(2 pi), gamma/2 (C = sqrt 2)"),),
), mutants=MUTANTS)




register(Claim(
    id=P + "fact-b.13",
    statement="An [isotropic] log-concave density g on R satisfies g(x) <= e * e^{-|x|/16}.",
    latex=r"g(x)\le e\cdot e^{-\lvert x\rvert/16}",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Fact B.13 ([29], Lemma 6)",
    formula=fact_b_13_density,
    quantity="density upper bound at x",
    checks=(Check("isotropic-examples", "deterministic", auxiliary.check_b13_density,
                  "Gaussian, Laplace, logistic, uniform, exponential (all standardised)"),),
), mutants=MUTANTS)


def lemma_b_14_factor(p, C=1.0):
    """Lemma B.14: ||q W||_inf <= C ln(p+1) ||q W||_1 for deg q = p, W = e^{-|x|}; returns C ln(p+1)."""
    return C * math.log(p + 1)


register(Claim(
    id=P + "lemma-b.14",
    statement="With W(x) = e^{-|x|} and q of degree p >= 1: ||q W||_{L^inf} <= C log(p+1) ||q W||_{L^1}.",
    latex=r"\lVert qW\rVert_{L^\infty}\le C\log(p+1)\lVert qW\rVert_{L^1}",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Lemma B.14 (weighted Nikolskii; Lubinsky [40] / Mhaskar-Saff [42])",
    formula=lemma_b_14_factor,
    quantity="Nikolskii factor",
    hidden_constants={"C": 1.0},
    regime=(_int_ge("p", 1),),
    errata=("Attributed to Lubinsky [40] in the statement but to Mhaskar-Saff [42] in D.3's proof.",),
    uncheckable_reason=("a supremum over all polynomials of degree p with an unspecified universal C: sampled "
                        "polynomials only lower-bound the implied constant and cannot refute a bound with unknown C"),
), mutants=MUTANTS)


def lemma_b_15_error(p, C=1.0):
    """Lemma B.15: ||(q - f_theta) W||_1 <= C / ln(p+1)."""
    return C / math.log(p + 1)


register(Claim(
    id=P + "lemma-b.15",
    statement=("For f_theta = sign(. - theta) and p >= 2 there is q of degree p with ||(q - f_theta) W||_{L^1} <= C/log(p+1); "
               "the proof bounds it by C[sup_{|h|<=1/log p} ||H(.+h) - H||_1 + ||H||_1/log p + int_{|z|>=sqrt p}|H|] with "
               "H = f_theta W, ||H(.+h) - H||_1 <= 4|h|, ||H||_1 = 2, tail 2 e^{-sqrt p}."),
    latex=r"\lVert(q-f_\theta)W\rVert_{L^1}\le\frac{C}{\log(p+1)}",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Lemma B.15 (weighted Jackson; Freud et al. [24])",
    formula=lemma_b_15_error,
    quantity="weighted L1 approximation error",
    hidden_constants={"C": 1.0},
    regime=(_int_ge("p", 2),),
    checks=(Check("proof-steps-quadrature", "exact", auxiliary.check_b15_pieces,
                  "the explicit-constant steps of the proof by quadrature"),),
), mutants=MUTANTS)


# ============================================================== Appendix C / D


register(Claim(
    id=P + "proposition-c.1",
    statement=("Algorithm 1 is (eps_DP, delta_DP)-DP: the loss is T-Lipschitz, each ERM run is DP on a disjoint block "
               "(parallel composition), thresholding is post-processing, the exponential mechanism on S_val is eps-DP."),
    latex=r"\text{Algorithm 1 is }(\varepsilon_{\rm DP},\delta_{\rm DP})\text{-DP}",
    kind=ClaimKind.PRIVACY,
    source="App. C, Proposition C.1",
    checks=(Check("selection-exact-and-accounting", "exact", improper_learner.check_c1_privacy,
                  "the selection on a fitted learner's counts (exact log ratios <= eps) and PLD eps of its ERM <= eps"),
            Check("erm-step-sensitivity", "exact", improper_learner.check_c1_erm_step_sensitivity,
                  "the learner's DP-ERM on rows far outside the clipping ball: subgradients move by <= 2T/n_0, "
                  "K-step curve <= delta")),
), mutants=MUTANTS)


register(Claim(
    id=P + "lemma-c.2",
    statement="For d, p >= 1 and alpha in (0, 1) with d >= 2p^2/alpha: P[||psi_p(X)||_2 > 2 sqrt(D_p)] <= alpha.",
    latex=r"\mathbb P\big[\lVert\psi_p(X)\rVert_2>2\sqrt{D_p}\big]\le\frac{e^{2p^2/d}-1}{9}\le\alpha",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. C, Lemma C.2 and Eq. (14)",
    formula=lemma_c_2_tail,
    quantity="Chebyshev bound on the feature-norm tail probability",
    regime=(_int_ge("d", 1), _int_ge("p", 1), _cond("alpha", 0, 1, hi_open=True),
            Condition("d >= 2 p^2 / alpha", lambda p: p["d"] >= 2 * p["p"] ** 2 / p["alpha"])),
    checks=(Check("second-moment-quadrature", "exact", improper_learner.check_c2_second_moment,
                  "exact E[K_p^2] formula vs Gauss-Hermite quadrature"),
            Check("variance-bound", "exact", improper_learner.check_c2_variance, "Var(V) <= e^{2p^2/d} - 1 on a grid"),
            Check("tail-mc", "probabilistic", improper_learner.check_c2_tail_mc, "feature-norm tail by simulation vs alpha"),
            Check("tail-mc-chebyshev", "probabilistic", improper_learner.check_c2_tail_chebyshev,
                  "the same tail vs the registered Chebyshev bound (e^{2p^2/d} - 1)/9 at d = 16, p = 2")),
), mutants=MUTANTS)


def theorem_d_1_n(d, alpha, beta, epsilon, delta, T, c=0.25, C_p=1.0, C=2.0, R_0=2.0, C_M=1.0):
    """Theorem D.1: n = k n_0 + m with p = ceil(exp(C_p/alpha)), n_0 from Eq. (30) [corrected sqrt(log)],
    n_0 = ceil(max(4 C^2 R_0^2 D_p/(c alpha)^2, 2 C R_0 T sqrt(D_p ln(1/delta))/(c alpha eps), 2)), m as in Thm 2.1."""
    p = math.ceil(math.exp(C_p / alpha))
    D = D_p(d, p)
    k, M = alg1_grid(alpha, beta, c, C_M)
    n0 = ceil_or_inf(max(4 * C**2 * R_0**2 * D / (c * alpha) ** 2,
                         2 * C * R_0 * T * math.sqrt(D * math.log(1 / delta)) / (c * alpha * epsilon), 2))
    return k * n0 + lemma_b_5_validation_size(k * M, beta / 2, epsilon, c * alpha)


def _t_range(p):
    q = math.ceil(math.exp(p["C_p"] / p["alpha"]))
    return 1 - p["c"] * p["alpha"] <= p["T"] <= remark3_clip_radius(D_p(p["d"], q), p["c"], p["alpha"])


register(Claim(
    id=P + "theorem-d.1",
    statement=("Let alpha, beta in (0, 1), eps_DP, delta_DP in (0, 1/2], p = ceil(exp(C/alpha)), T as in (25), mu a known "
               "full-dimensional log-concave marginal. [Algorithm 1 with the G_p^{-1/2} basis] is (eps, delta)-DP and, given "
               "n = O~(D_p/alpha^2 + T sqrt(D_p)/(eps_DP alpha)) samples, outputs h with err_P(h) <= OPT + alpha w.p. "
               ">= 1 - beta; since T <= sqrt(D_p/(c alpha)), n = O~(D_p/alpha^2 + D_p/(eps_DP alpha^{3/2}))."),
    latex=r"n=\widetilde O\!\left(\frac{D_p}{\alpha^2}+\frac{T\sqrt{D_p}}{\varepsilon_{\rm DP}\alpha}\right)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="App. D, Theorem D.1, Eqs. (25), (30); Table 1 row 2",
    formula=theorem_d_1_n,
    quantity="sample size n = k n_0 + m",
    hidden_constants={"C_p": 1.0, "C": 2.0, "R_0": 2.0, "C_M": 1.0},
    exponents={"D_p": 1.0, "alpha": -2.0, "epsilon": -1.0, "T": 1.0},
    regime=(_cond("alpha", 0, 1, hi_open=True), _cond("beta", 0, 1, hi_open=True), _cond("epsilon", 0, 0.5),
            _cond("delta", 0, 0.5), _cond("c", 0, 0.25), _int_ge("d", 1),
            Condition("1 - c alpha <= T <= sqrt(D_p / (c alpha)) (Eq. (25) and Markov)", _t_range)),
    errata=("Erratum: Eq. (30) has log(1/delta); the proof uses sqrt(log(1/delta)), which is registered.",
            "Explicit constants: C >= max(2, C_B4) (the proof adds 2 R_0 sqrt(D_p/n_0)); R_0 = sqrt(C_D3) + 1 >= 2.",
            "Erratum: the projection ball is B_2^{D_p}(R_0), printed B_{D_p^2}(R_0)."),
    reconstructed=True,
    checks=(Check("accuracy-log-concave", "probabilistic", log_concave.check_d1_accuracy,
                  "Laplace/logistic/uniform marginals, d = 3, p = 2, T from Eq. (25): Pr[err > OPT + alpha] <= beta"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "proposition-d.2",
    statement="The modified Algorithm 1 of Theorem D.1 is (eps_DP, delta_DP)-DP, by the argument of Proposition C.1.",
    latex=r"\text{Algorithm 1 (log-concave variant) is }(\varepsilon_{\rm DP},\delta_{\rm DP})\text{-DP}",
    kind=ClaimKind.PRIVACY,
    source="App. D, Proposition D.2",
    checks=(Check("premises-exact-and-accounting", "exact", log_concave.check_d2_privacy,
                  "clipped norms <= T, exact selection log ratios <= eps, PLD eps of the ERM <= eps (G_p^{-1/2} basis)"),),
), mutants=MUTANTS)


def lemma_d_3_degree(alpha, C=1.0):
    """Lemma D.3: p = ceil(exp(C/alpha)) gives L^1(mu) error <= alpha (from C/log(p+1) <= alpha)."""
    return float(math.ceil(math.exp(C / alpha)))


register(Claim(
    id=P + "lemma-d.3",
    statement=("There are universal C, R_0 >= 1 such that for every full-dimensional log-concave mu on R^d, every p >= 2 and "
               "halfspace c there is q of degree <= p with ||q - c||_{L1(mu)} <= C/log(p+1) and ||q||_{L2(mu)} <= R_0; "
               "p = ceil(e^{C/alpha}) gives error <= alpha."),
    latex=r"\lVert q-c\rVert_{L^1(\mu)}\le\frac{C}{\log(p+1)},\ \lVert q\rVert_{L^2(\mu)}\le R_0",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. D, Lemma D.3, Eqs. (26)-(29), (31)",
    formula=lemma_d_3_degree,
    quantity="sufficient degree p",
    hidden_constants={"C": 1.0},
    regime=(_cond("alpha", 0, 1, hi_open=True),),
    uncheckable_reason=("existence over every log-concave measure and every halfspace with unspecified universal C, R_0; "
                        "its explicit ingredients are checked under fact-b.13 (density bound) and lemma-b.15 (Jackson steps)"),
), mutants=MUTANTS)


# ============================================================== Appendix F


register(Claim(
    id=P + "proposition-f.1",
    statement="Algorithm 4 is (O(eps_DP), O(delta_DP))-DP.",
    latex=r"\text{Algorithm 4 is }(O(\varepsilon_{\rm DP}),O(\delta_{\rm DP}))\text{-DP}",
    kind=ClaimKind.PRIVACY,
    source="App. F, Proposition F.1",
    errata=("Erratum: Theorem 4.1 states (eps, delta) while this proves (O(eps), O(delta)).",),
    checks=(Check("part-accounting", "exact", semi_agnostic.check_f1_privacy,
                  "PLD epsilon of every DPSAS Gaussian part <= eps (so Alg. 4 is (eps, delta) by parallel composition)"),),
), mutants=MUTANTS)




register(Claim(
    id=P + "lemma-f.3",
    statement=("Let X ~ N(0, I) and Sigma = A^T A. Then Pr[||AX||^2 > tr Sigma + 2 sqrt(tr(Sigma^2) t) + 2 t ||Sigma||] <= e^{-t} "
               "and Pr[||AX||^2 < tr Sigma - 2 sqrt(tr(Sigma^2) t)] <= e^{-t}."),
    latex=r"\Pr[\lVert AX\rVert^2>\operatorname{tr}\Sigma+2\sqrt{\operatorname{tr}(\Sigma^2)t}+2t\lVert\Sigma\rVert]\le e^{-t}",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. F, Lemma F.3 (Laurent-Massart)",
    formula=lemma_f_3_upper,
    quantity="upper tail threshold for ||AX||^2",
    regime=(Condition("t >= 0", lambda p: p["t"] >= 0), Condition("tr_Sigma >= 0", lambda p: p["tr_Sigma"] >= 0),
            Condition("tr_Sigma_sq >= 0", lambda p: p["tr_Sigma_sq"] >= 0),
            Condition("norm_Sigma >= 0", lambda p: p["norm_Sigma"] >= 0)),
    checks=(Check("chi2-exact", "exact", semi_agnostic.check_f3_laurent_massart_exact, "A = I: both tails exactly via chi^2"),
            Check("anisotropic-mc", "probabilistic", semi_agnostic.check_f3_laurent_massart_mc,
                  "fixed anisotropic A, both tails, failure rate vs e^{-t}")),
), mutants=MUTANTS)


def lemma_f_4_probability(d, n, beta):
    """Lemma F.4: P[for all i, ||X_i|| in [sqrt(d)/2, 2 sqrt(d)]] >= 1 - beta under d >= 16 ln(n/beta)."""
    return 1 - beta


register(Claim(
    id=P + "lemma-f.4",
    statement=("For X_1..X_n ~ N(0, I_d) under Assumption F.2 (d >= 16 log(n/beta)): "
               "Pr[for all i: ||X_i|| in [sqrt(d)/2, 2 sqrt(d)]] >= 1 - beta."),
    latex=r"\Pr\big[\forall i:\lVert X_i\rVert\in[\sqrt d/2,2\sqrt d]\big]\ge1-\beta",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. F, Lemma F.4 and Assumption F.2",
    formula=lemma_f_4_probability,
    quantity="lower bound on the probability that no clipping occurs",
    regime=(_int_ge("d", 1), _int_ge("n", 1), _cond("beta", 0, 1, hi_open=True),
            Condition("d >= 16 ln(n / beta) (Assumption F.2)", lambda p: p["d"] >= assumption_f2_min_d(p["n"], p["beta"]))),
    errata=("A naive union bound with t = ln(n/beta) gives 1 - 2 beta; t = ln(2n/beta) "
            "gives the stated 1 - beta for d >= 9 (smaller d forces n = 1, beta > 0.6).",),
    checks=(Check("chi2-exact", "exact", semi_agnostic.check_f4_norms_exact,
                  "exact failure probability 1 - (F(4d) - F(d/4))^n over a grid at the smallest allowed d"),),
), mutants=MUTANTS)


# ============================================================== Remarks




register(Claim(
    id=P + "remark-1",
    statement="d^{O(1/alpha^2)} * 1/alpha^c = d^{O(1/alpha^2)}: any poly(1/alpha) factor is absorbed into the power of d.",
    latex=r"d^{O(1/\alpha^2)}\cdot\alpha^{-c}=d^{O(1/\alpha^2)}",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="Sec. 1, Remark 1",
    formula=remark_1_exponent,
    quantity="exponent of d after absorbing alpha^{-c} (valid for d >= 2)",
    hidden_constants={"C": 1.0},
    regime=(_cond("alpha", 0, 1, hi_open=True), Condition("c >= 0", lambda p: p["c"] >= 0)),
    checks=(Check("grid", "deterministic", remarks.check_remark1, "c ln(1/alpha) <= (c/alpha^2) ln d on a grid, d >= 2"),),
), mutants=MUTANTS)




register(Claim(
    id=P + "remark-2",
    statement=("The added cost in the sample complexity due to DP matches the non-private sample complexity when "
               "eps_DP = Omega(alpha): privacy comes for free."),
    latex=r"\varepsilon_{\rm DP}\ge\alpha\Rightarrow\frac{D_p}{\varepsilon_{\rm DP}\alpha}\le\frac{D_p}{\alpha^2}",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="Sec. 1, Remark 2",
    formula=remark_2_ratio,
    quantity="ratio of the privacy term to the statistical term (Eq. (1))",
    regime=(_pos("alpha"), _pos("epsilon")),
    checks=(Check("grid", "deterministic", remarks.check_remark2,
                  "privacy terms <= statistical terms for eps >= alpha (Thms 2.1, 3.1, 4.1); Thm D.1 reported"),
            Check("measured-table", "deterministic", remarks.check_remark2_table,
                  "n needed at eps in {alpha, 2 alpha, 0.9} vs eps = inf for Algorithm 2's release")),
), mutants=MUTANTS)


def remark_3_T(d, p, c, alpha):
    """Remark 3 [corrected]: clipping radius T = sqrt(D_p / (c alpha)), so that Pr[||psi_p|| > T] <= D_p/T^2 = c alpha (7)."""
    return remark3_clip_radius(D_p(d, p), c, alpha)


register(Claim(
    id=P + "remark-3",
    statement=("The dimension assumption of Theorem 2.1 allows T = 2 sqrt(D_p). Without it use T = sqrt(D_p/(c alpha)); "
               "Markov gives Pr_mu(||psi_p(X)||_2 > T) <= D_p/T^2 = c alpha (7), and Theorem 2.1 holds for every d >= 1 "
               "with an extra alpha^{-1/2} in the privacy term."),
    latex=r"T=\sqrt{D_p/(c\alpha)},\quad\Pr_\mu(\lVert\psi_p(X)\rVert_2>T)\le\frac{D_p}{T^2}=c\alpha",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="Sec. 2, Remark 3, Eq. (7)",
    formula=remark_3_T,
    quantity="clipping radius T",
    regime=(_int_ge("d", 1), _int_ge("p", 1), _pos("c"), _cond("alpha", 0, 1, hi_open=True)),
    errata=("Erratum: printed T = sqrt(D_p)/(c alpha); D_p/T^2 = c alpha requires T = sqrt(D_p/(c alpha)), "
            "which is registered.",),
    checks=(Check("markov-tail-mc", "probabilistic", improper_learner.check_remark3_markov,
                  "Pr[||psi_p|| > T] vs c alpha by simulation at d = 2, p = 3"),),
), mutants=MUTANTS)
