"""Claims of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and Private Learning of Halfspaces" (AISTATS 2021,
arXiv:2011.14580), paper id ``robust-halfspaces``.

Every numbered statement is registered (Theorems 2-6 and 11, Lemmas 7, 9, 12-22, Observation 8, Claim 10),
plus Novikoff's perceptron bound, which the paper cites without a number, as ``robust-halfspaces/fact-novikoff``.
Definition 1 (DP) is a definition, not a claim, and is not registered. The checks live in one module per part of
the paper: :mod:`.preliminaries` (App. A), :mod:`.pure_dp_lower_bound` (Sec. 2.1, App. B),
:mod:`.approx_dp_lower_bound` (Sec. 2.2, App. C), :mod:`.non_robust_lower_bound` (Sec. 2.3, App. D),
:mod:`.exponential_mechanism` (Sec. 3.1, App. E), :mod:`.batch_perceptron` and :mod:`.batch_perceptron_privacy`
(Sec. 3.2, App. F) and :mod:`.certified_radius` (App. G.2.1); formulas used only here and by the checks are in
:mod:`.formulas`.

Reconstructed (``reconstructed=True``): ``fact-novikoff``, stated nowhere in the paper's text (the classical
(R/gamma)^2 bound). All other statements are in the text. The explicit form of Lemma 12's o(1/d) (Hoeffding
constants of the corrected proof) is our derivation and is labelled as such in its entry.

Each claim lists the errata it relies on (``errata``), each stated in words next to the statement it corrects.
The checks named ``as-printed*`` are expected to fail because of an erratum and say so in ``details['erratum']``,
each beside a corrected check that passes: ``observation-8`` (``as-printed``, ``as-printed-boosting``: the printed
number of runs), ``lemma-15`` (``as-printed``: the printed delta), ``lemma-12`` (``as-printed-proof-threshold``:
||q'|| >= 0.1), ``theorem-6`` (``as-printed-good-events``: the per-iteration good events with the printed n) and
``lemma-19`` (``as-printed-any-T``: T = 1, delta >~ 0.65). Every other check has mutants (:mod:`.mutants`).
"""

from __future__ import annotations

import math

from privbound.bounds.registry import Check, Claim, ClaimKind, Condition, register
from privbound.bounds.robust_halfspaces import (
    approx_dp_lower_bound,
    batch_perceptron,
    batch_perceptron_privacy,
    certified_radius,
    exponential_mechanism,
    non_robust_lower_bound,
    preliminaries,
    pure_dp_lower_bound,
)
from privbound.bounds.robust_halfspaces.formulas import (
    adv_composition_epsilon,
    lemma12_bound,
    lemma16_deviation,
    lemma17_bound,
    lemma15_delta,
    lemma19_accounting,
    obs8_runs,
    subsampled_epsilon,
    theorem5_sample_size,
    theorem6_sample_size,
)
from privbound.bounds.robust_halfspaces.mutants import MUTANTS
from privbound.learners.robust_halfspaces.instances import theorem4_dimension
from privbound.learners.robust_halfspaces.perceptron import lemma18_iterations

P = "robust-halfspaces/"

NUMBERED_STATEMENTS: tuple[str, ...] = tuple(
    P + s
    for s in (
        "theorem-2", "theorem-3", "theorem-4", "theorem-5", "theorem-6",
        "lemma-7", "observation-8", "lemma-9", "claim-10", "theorem-11",
        "lemma-12", "lemma-13", "lemma-14", "lemma-15", "lemma-16", "lemma-17",
        "lemma-18", "lemma-19", "lemma-20", "lemma-21", "lemma-22",
    )
)
"""Every numbered statement of the paper (Definition 1 excluded: it is a definition)."""

UNNUMBERED_STATEMENTS: tuple[str, ...] = (P + "fact-novikoff",)
"""Cited, unnumbered facts registered as well."""

ERRATA_PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "observation-8": (("as-printed", "corrected"), ("as-printed-boosting", "boosting-corrected")),
    "lemma-15": (("as-printed", "chain-bound"),),
    "lemma-12": (("as-printed-proof-threshold", "proof-threshold-corrected"),),
    "theorem-6": (("as-printed-good-events", "good-events-corrected"),),
    "lemma-19": (("as-printed-any-T", "corrected-regime"),),
}
"""Per claim (id without the paper prefix): (check of the printed form, which fails by the erratum; its corrected twin)."""

_LOWER_BOUND_REASON = (
    "lower bound over all {what} learners: it cannot be verified by running particular algorithms; "
    "the registered checks only demonstrate it on the paper's hard instance with the learners available (illustrations)"
)


def _opt(name: str, test):
    """A condition on an optional regime-only parameter (None = not given)."""
    return lambda p: p.get(name) is None or test(p[name])


# ----------------------------------------------------------------------- formulas


def _theorem2(d, epsilon, c=1.0, gamma=None, alpha=None, xi=None):
    """Theorem 2 (App. B): n >= ln(0.1 K)/epsilon with K = 2^{c d} (Lemma 9; c hidden)."""
    return (c * d * math.log(2) + math.log(0.1)) / epsilon


def _theorem3(d, gamma, c=1.0, epsilon=None, alpha=None, xi=None):
    """Theorem 3 (App. C): n = Omega(min{sqrt(d)/gamma, d}); c hidden."""
    return c * min(math.sqrt(d) / gamma, d)


def _theorem4(gamma, epsilon, alpha=None, xi=None, delta=None):
    """Theorem 4 (App. D): no learner with n <= floor(1e-5 floor(1/gamma^2)/epsilon); returns 1e-5 floor(1/gamma^2)/epsilon."""
    return 1e-5 * theorem4_dimension(gamma) / epsilon


def _theorem5(d, gamma, alpha, epsilon):
    """Theorem 5 (App. E): n = 1e4 Lambda^2/(eps alpha) + 1e10/(alpha^2 gamma^2), Lambda = 1e6 sqrt(ln(1/alpha)) max{sqrt d, 1/gamma}."""
    return theorem5_sample_size(d, gamma, alpha, epsilon)


def _theorem6(d, gamma, alpha, epsilon, delta):
    """Theorem 6 (App. F.3): the explicit n with T = ceil(1500/(alpha gamma_gap^2)), p = 1/sqrt T, sigma = 100 ln(T/delta)/eps.

    ``log T`` (base unspecified in the paper) is taken natural.
    """
    return theorem6_sample_size(d, gamma, alpha, epsilon, delta)


def _obs8(xi, xi_prime):
    """Observation 8 (App. A.2), corrected: number of runs T = ceil(log(0.5 xi')/log xi)."""
    return obs8_runs(xi, xi_prime)


def _lemma9(d, c=1.0):
    """Lemma 9: log2 of the packing size, log2 K = c d (K = 2^{Omega(d)}; c hidden)."""
    return c * d


def _theorem11(zeta, d, n=None):
    """Theorem 11 (Steinke & Ullman 2017, Thm 3): E[sum_j w_j (q_j - 1/2)] < zeta sqrt(d)."""
    return zeta * math.sqrt(d)


def _lemma12(d):
    """Lemma 12: explicit bound on E_q[d_TV(B_q, P_q)] from the corrected proof: e^{-0.1721 d} + e^{-0.01125 d}."""
    return lemma12_bound(d)


def _lemma13(d, gamma, beta, c=1.0):
    """Lemma 13 (App. C.1): n >= c sqrt(d) (c hidden)."""
    return c * math.sqrt(d)


def _lemma14(d, gamma_0, beta_0, c=1.0):
    """Lemma 14 (App. C.2): expected oracle samples >= c sqrt(d) (c hidden)."""
    return c * math.sqrt(d)


def _lemma15(epsilon):
    """Lemma 15 (App. D), corrected: the delta for which the one-bit bound holds, 0.001 (1 - e^{-epsilon})."""
    return lemma15_delta(epsilon)


def _lemma16(n, gamma_hat, xi_hat):
    """Lemma 16 (Bartlett & Mendelson): deviation term 400 sqrt(ln(4/xi_hat)/(n gamma_hat^2))."""
    return lemma16_deviation(n, gamma_hat, xi_hat)


def _lemma17(epsilon, t, mu):
    """Lemma 17 (McSherry & Talwar): Pr[w_hat not in S_{2t}] <= exp(-epsilon t/2)/mu(S_t)."""
    return lemma17_bound(epsilon, t, mu)


def _lemma18(alpha, gamma):
    """Lemma 18 (App. F.1): iteration budget T = ceil(1500/(alpha gamma_gap^2)), gamma_gap = 0.05 gamma."""
    return lemma18_iterations(alpha, gamma)


def _lemma19(epsilon, delta, T):
    """Lemma 19 (App. F.2): the accounted epsilon' = sqrt(2T ln(1/(p delta_0))) 2 p eps_0 + 2T (2 p eps_0)^2, <= epsilon."""
    return lemma19_accounting(epsilon, delta, T)["epsilon_acc"]


def _lemma20(p, epsilon_0, delta_0=None):
    """Lemma 20 (Balle et al. 2018): subsampled epsilon 2 p epsilon_0 (and delta p delta_0)."""
    return subsampled_epsilon(p, epsilon_0)


def _lemma21(T, epsilon_0, delta_0):
    """Lemma 21 (advanced composition): sqrt(2 T ln(1/delta_0)) epsilon_0 + 2 T epsilon_0^2."""
    return adv_composition_epsilon(T, epsilon_0, delta_0)


def _novikoff(gamma, R=1.0):
    """Novikoff (1963): the perceptron makes at most (R/gamma)^2 mistakes (R = 1 in the unit ball)."""
    return (R / gamma) ** 2


# ------------------------------------------------------------------------- claims

register(Claim(
    id=P + "theorem-2",
    statement="Any epsilon-DP (gamma, 0.9 gamma)-robust (possibly improper) learner has sample complexity Omega(d/epsilon). "
              "(Proof: for gamma <= 0.99, alpha <= 0.49, xi <= 0.9, n >= ln(0.1 K)/epsilon with K = 2^{Omega(d)} from Lemma 9.)",
    latex=r"n \ge \frac{\ln(0.1K)}{\epsilon} = \Omega\!\left(\frac{d}{\epsilon}\right),\quad K = 2^{\Omega(d)}",
    kind=ClaimKind.SAMPLE_COMPLEXITY_LOWER,
    source="Sec. 2, Theorem 2; App. B",
    formula=_theorem2,
    quantity="minimum sample size n (packing bound ln(0.1 K)/epsilon)",
    hidden_constants={"c": 1.0},
    exponents={"d": 1.0, "epsilon": -1.0},
    regime=(Condition("epsilon > 0", lambda p: p["epsilon"] > 0),
            Condition("d >= 1", lambda p: p["d"] >= 1),
            Condition("c d ln 2 > ln 10 (K > 10, bound positive)", lambda p: p["c"] * p["d"] * math.log(2) > math.log(10)),
            Condition("gamma <= 0.99", _opt("gamma", lambda v: 0 < v <= 0.99)),
            Condition("alpha <= 0.49", _opt("alpha", lambda v: 0 < v <= 0.49)),
            Condition("xi <= 0.9", _opt("xi", lambda v: 0 <= v <= 0.9))),
    errata=("Theorem 2 vs Sec. 2.1: G^(i) is defined with <= alpha in the proof and < 0.5 in the overview -- equivalent for "
            "a 2-point support with alpha <= 0.49.",
            "Sec. 2.1 overview: the second point should be (-1.01 gamma w^(j), -1) (cf. the proof of Claim 10)."),
    checks=(Check("packing-em-exact", "deterministic", pure_dp_lower_bound.check_theorem2_packing_em,
                  "illustration: exact success of the sphere EM on the packing D^(i) in any d; K P(n) <= e^{eps n} with a "
                  "greedy sign packing, needed n >= ln(0.1 K)/eps, needed n linear in d (illustration)"),),
    uncheckable_reason=_LOWER_BOUND_REASON.format(what="epsilon-DP robust")
    + "; its ingredients are checked in lemma-9 and claim-10",
), mutants=MUTANTS)

register(Claim(
    id=P + "theorem-3",
    statement="Let epsilon < 1. Any (epsilon, o(1/n))-DP (gamma, 0.9 gamma)-robust proper learner has sample complexity "
              "n = Omega(min{sqrt(d)/gamma, d}).",
    latex=r"n = \Omega\!\left(\min\{\sqrt d/\gamma,\ d\}\right)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_LOWER,
    source="Sec. 2, Theorem 3; App. C.2",
    formula=_theorem3,
    quantity="minimum sample size n (up to the hidden constant c)",
    hidden_constants={"c": 1.0},
    exponents={"d": 0.5, "gamma": -1.0},  # branch sqrt(d)/gamma, i.e. d >= 1/gamma^2 (Table 1 regime)
    regime=(Condition("0 < gamma <= 0.01", lambda p: 0 < p["gamma"] <= 0.01),
            Condition("d >= 1", lambda p: p["d"] >= 1),
            Condition("epsilon < 1", _opt("epsilon", lambda v: 0 < v < 1)),
            Condition("alpha <= 3e-7 (corrected; paper: 1e-6)", _opt("alpha", lambda v: 0 < v <= 3e-7)),
            Condition("xi <= 3e-7 (corrected; paper: 1e-6)", _opt("xi", lambda v: 0 <= v <= 3e-7))),
    errata=("Proof of Theorem 3: the margin step is inconsistent (gamma_0/T >= gamma); with gamma_0 = 0.0045, beta_0 = 6e-7 the "
            "explicit regime becomes alpha, xi <= 3e-7 (paper: 1e-6); the asymptotic bound is unaffected.",
            "Sec. 2.2 overview vs App. C.2: d' = floor(d/T^2) and only (x, +1) (appendix), not d/T and both signs (overview).",
            "Proof of Theorem 3: e_i is a basis vector of R^{T^2}, not R^{d'}."),
    checks=(Check("embedded-fingerprinting", "probabilistic", approx_dp_lower_bound.check_theorem3_fingerprinting,
                  "illustration: on the block embedding (gamma = 0.005, T = 2, d = 4096) the proof's reduction B "
                  "applied to a (1, zeta/n)-DP DP Batch Perceptron with 6 < zeta sqrt(d') samples per block keeps the "
                  "fingerprinting correlation under Theorem 11's cap zeta sqrt(d'); robust errors DP vs non-private reported"),),
    uncheckable_reason=_LOWER_BOUND_REASON.format(what="approximate-DP robust proper")
    + "; the explicit regime alpha, xi <= 3e-7 (corrected) is beyond Monte Carlo resolution, and at measurable alpha the embedded "
      "instance is easy for the DP Batch Perceptron (no 0.9 gamma-robust errors from a few hundred samples at d = 4096), "
      "so the growth of the required n like sqrt(d)/gamma is not demonstrated on this instance (its constant-margin core, "
      "n ~ sqrt(d), is illustrated by lemma-13's check; theorem-6's scaling checks show the matching upper-bound growth)",
), mutants=MUTANTS)

register(Claim(
    id=P + "theorem-4",
    statement="For any epsilon > 0 there exists delta > 0 such that any (epsilon, delta)-DP (gamma, 0)-robust (possibly improper) "
              "learner has sample complexity Omega(1/(epsilon gamma^2)), even when d = O(1/gamma^2). (Proof: gamma < 1, alpha <= 0.4, "
              "xi <= 1e-4, d = floor(1/gamma^2): no such learner with n <= floor(1e-5 d/epsilon).)",
    latex=r"n > \left\lfloor 10^{-5}\lfloor 1/\gamma^2\rfloor/\epsilon \right\rfloor = \Omega\!\left(\frac{1}{\epsilon\gamma^2}\right)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_LOWER,
    source="Sec. 2, Theorem 4; App. D",
    formula=_theorem4,
    quantity="sample-size threshold 1e-5 floor(1/gamma^2)/epsilon (no learner with n <= its floor)",
    exponents={"gamma": -2.0, "epsilon": -1.0},
    regime=(Condition("0 < gamma < 1", lambda p: 0 < p["gamma"] < 1),
            Condition("epsilon > 0", lambda p: p["epsilon"] > 0),
            Condition("alpha <= 0.4", _opt("alpha", lambda v: 0 < v <= 0.4)),
            Condition("xi <= 1e-4", _opt("xi", lambda v: 0 <= v <= 1e-4)),
            Condition("0 <= delta <= 0.001 (1 - e^-epsilon) (Lemma 15, corrected)",
                      lambda p: p.get("delta") is None or 0 <= p["delta"] <= _lemma15(p["epsilon"]))),
    errata=("Theorem 4: delta is Lemma 15's, corrected to 0.001 (1 - e^{-epsilon}).",
            "Proof of Theorem 4: the realiser is z = (1/sqrt d) sum_i s_i e_i (printed without s_i).",
            "Sec. 2.3 overview: the 1-D instance is Unif{(+1, s), (-1, -s)}."),
    checks=(Check("hard-instance", "deterministic", non_robust_lower_bound.check_theorem4_instance,
                  "proof step: the corrected realiser (with the signs s_i) has margin 1/sqrt(d) >= gamma on D_s"),
            Check("ds-dp-perceptron-scaling", "scaling", non_robust_lower_bound.check_theorem4_ds_scaling,
                  "illustration: DP Batch Perceptron on D_s, d = floor(1/gamma^2): needed n grows at least like gamma^-2 (one-sided "
                  "slope test; two-sided CI reported) "
                  "and the measured error never below the corrected Lemma 15 chain bound (illustration)")),
    uncheckable_reason=_LOWER_BOUND_REASON.format(what="(epsilon, delta)-DP non-robust"),
), mutants=MUTANTS)
register(Claim(
    id=P + "theorem-5",
    statement="There is an epsilon-DP (gamma, 0.9 gamma)-robust learner with sample complexity O_alpha(max{d, 1/gamma^2}/epsilon) "
              "(exponential mechanism over the unit sphere; n = 1e4 Lambda^2/(epsilon alpha) + 1e10/(alpha^2 gamma^2), "
              "Lambda = 1e6 sqrt(log(1/alpha)) max{sqrt d, 1/gamma}).",
    latex=r"n=\frac{10^4\Lambda^2}{\epsilon\alpha}+\frac{10^{10}}{\alpha^2\gamma^2},\ "
          r"\Lambda=10^6\sqrt{\log(1/\alpha)}\max\{\sqrt d,1/\gamma\}",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 2, Theorem 5; App. E",
    formula=_theorem5,
    quantity="sample size n of the exponential mechanism (explicit constants, natural log)",
    exponents={"d": 1.0, "epsilon": -1.0},  # for d >= 1/gamma^2; gamma^-2 otherwise
    regime=(Condition("0 < alpha < 1", lambda p: 0 < p["alpha"] < 1),
            Condition("0 < gamma <= 1", lambda p: 0 < p["gamma"] <= 1),
            Condition("epsilon > 0", lambda p: p["epsilon"] > 0),
            Condition("d >= 1", lambda p: p["d"] >= 1)),
    errata=("Proof of Theorem 5: Eq. (7) should read -0.01 Lambda gamma and < -1e4 sqrt(log(1/alpha)); the final step gives <= 0.01, not <= 0.99; "
            "'xi = 0.9' is not an erratum (the proof gives success ~0.9).",),
    checks=(Check("proof-tail-facts", "exact", exponential_mechanism.check_theorem5_tails,
                  "proof steps (7), (8), (10) and the final EM step, exact in log space (not the learner)"),
            Check("em-accuracy-scaled", "probabilistic", exponential_mechanism.check_theorem5_scaled,
                  "SphereExponentialMechanism in d = 2 (exact angular sampler), n = 4 max{d, 1/gamma^2} ln(1/alpha)/(alpha eps): "
                  "err^X_{0.95 gamma} <= 0.5 alpha with probability >= 0.99 (scaled constants)")),
), mutants=MUTANTS)

register(Claim(
    id=P + "theorem-6",
    statement="There is an (epsilon, delta)-DP (gamma, 0.9 gamma)-robust learner with sample complexity "
              "n = O~_alpha(max{sqrt(d)/gamma, 1/gamma^2}/epsilon) and running time O~_alpha(n d/gamma) (DP Batch Perceptron).",
    latex=r"n=\left\lceil\frac{100\sqrt d\,\sigma\log T}{p\sqrt\alpha}+\frac{1000\,\sigma\sqrt{\log T}}{p\alpha\gamma}"
          r"+\frac{100\log T}{\alpha}+\frac{10^{10}}{\alpha^2\gamma^2}\right\rceil",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 2, Theorem 6; App. F.3",
    formula=_theorem6,
    quantity="sample size n of DP Batch Perceptron (explicit F.3 constants, natural log)",
    exponents={"d": 0.5, "gamma": -1.0, "epsilon": -1.0},  # up to polylog factors, for d >= 1/gamma^2
    regime=(Condition("0 < alpha < 1", lambda p: 0 < p["alpha"] < 1),
            Condition("0 < gamma <= 1", lambda p: 0 < p["gamma"] <= 1),
            Condition("0 < epsilon <= 1", lambda p: 0 < p["epsilon"] <= 1),
            Condition("0 < delta < 1", lambda p: 0 < p["delta"] < 1),
            Condition("d >= 1", lambda p: p["d"] >= 1)),
    errata=("Proof of Theorem 6 (F.3): the per-iteration good events E_opt-noise / E_parallel fail at small epsilon with the F.3 constants; "
            "use their summed form or raise 1000 to ~4000.",
            "Remark on Theorem 6: O~ hides ln(T/delta) and (log T)^2.",
            "Sec. 1 vs Theorem 6: the running time is O~_alpha(n d/gamma)."),
    checks=(Check("accuracy-scaled", "probabilistic", batch_perceptron.check_theorem6_scaled,
                  "DPBatchPerceptron at scaled constants (kappa = 0.01 on sigma, b; 1e-5 on T) on a tilted instance where "
                  "it makes ~22 updates: err^X_{0.95 gamma} <= 0.5 alpha with probability >= 0.99 (FAIL counts as failure)"),
            Check("scaling-sqrt-d", "scaling", batch_perceptron.check_theorem6_scaling_d,
                  "needed n vs d (d >= 1/gamma^2) at fixed scaled privacy parameters: log-log slope CI contains 1/2; "
                  "the noiseless reference is reported (flat)"),
            Check("good-events-corrected", "exact", batch_perceptron.check_theorem6_good_events,
                  "Lemma 18's E_opt-noise / E_parallel, exact Gaussian tails: summed form at the printed n and the "
                  "per-iteration union with constant 4000 both fail w.p. <= 0.01"),
            Check("as-printed-good-events", "exact", batch_perceptron.check_theorem6_good_events_as_printed,
                  "per-iteration events with the printed n (constant 1000): violated w.p. ~1 at epsilon <= 0.1 "
                  "(an erratum) -- expected to fail", erratum_form='printed')),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-7",
    statement="For any non-zero w in R^d, gamma >= 0 and D, R_gamma(w, D) = err^D_gamma(w/||w||_2).",
    latex=r"\mathcal R_\gamma(\mathbf w,\mathcal D)=\mathrm{err}^{\mathcal D}_\gamma(\mathbf w/\|\mathbf w\|_2)",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. A.1, Lemma 7",
    checks=(Check("brute-force-2d", "exact", preliminaries.check_lemma7,
                  "robust risk by a grid adversary over the perturbation disc vs normalised margin error"),),
    errata=("Ignores the domain restriction z in X; the check perturbs in R^d.",),
), mutants=MUTANTS)

register(Claim(
    id=P + "observation-8",
    statement="For any xi, xi' in (0,1): a (gamma, gamma')-robust learner with failure probability xi, accuracy alpha and "
              "sample complexity m yields one with failure probability xi', accuracy 1.1 alpha and sample complexity "
              "O_{xi,xi'}(m + 1/alpha^2) (run it T times, select on M fresh samples).",
    latex=r"T=\left\lceil\frac{\log(0.5\xi')}{\log\xi}\right\rceil,\ M=\left\lceil\frac{10^6\log T}{\alpha}\right\rceil",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="App. A.2, Observation 8",
    formula=_obs8,
    quantity="number of independent runs T (corrected)",
    regime=(Condition("0 < xi < 1", lambda p: 0 < p["xi"] < 1),
            Condition("0 < xi_prime < 1", lambda p: 0 < p["xi_prime"] < 1)),
    errata=("Observation 8: the paper sets T = ceil(log(0.5 xi')/log(1 - xi)) (xi read as success probability); corrected to "
            "ceil(log(0.5 xi')/log xi). Selection should use the gamma'-margin; the selection step is not private.",
            "App. A.2 has lower/upper bounds reversed."),
    checks=(Check("corrected", "exact", preliminaries.check_obs8_corrected, "xi^T <= 0.5 xi' with the corrected T"),
            Check("as-printed", "exact", preliminaries.check_obs8_as_printed,
                  "the printed T fails (an erratum) -- expected to fail", erratum_form='printed'),
            Check("boosting-corrected", "probabilistic", preliminaries.check_obs8_boosting,
                  "BoostedLearner with the corrected T = 51 on a base learner failing w.p. xi = 0.9: boosted failure "
                  "rate <= xi' = 0.01 (accuracy 1.1 alpha)"),
            Check("as-printed-boosting", "probabilistic", preliminaries.check_obs8_boosting_as_printed,
                  "the same with the printed T = 3: fails w.p. ~0.73 (an erratum) -- expected to fail", erratum_form='printed')),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-9",
    statement="There exist w^(1), ..., w^(K) in R^d with K = 2^{Omega(d)}, ||w^(i)||_2 = 1 and |<w^(i), w^(j)>| < 0.01 for i != j.",
    latex=r"K=2^{\Omega(d)},\ \|\mathbf w^{(i)}\|=1,\ |\langle\mathbf w^{(i)},\mathbf w^{(j)}\rangle|<0.01",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. B, Lemma 9",
    formula=_lemma9,
    quantity="log2 of the packing size K",
    hidden_constants={"c": 1.0},
    exponents={"d": 1.0},
    regime=(Condition("d >= 1", lambda p: p["d"] >= 1), Condition("c > 0", lambda p: p["c"] > 0)),
    errata=("Proof of Lemma 9: it prints <= 0.01 d; the code gives <= 0.001.",),
    checks=(Check("random-sign-packing", "probabilistic", pure_dp_lower_bound.check_lemma9_random_signs,
                  "random +-1/sqrt(d) vectors: failure rate vs the Hoeffding union bound K(K-1) e^{-d t^2/2}"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "claim-10",
    statement="For every i != j, G^(i) and G^(j) are disjoint (G^(i): hypotheses with R_{0.9 gamma}(h, D^(i)) <= alpha); "
              "the point 0.505 gamma (w^(i) - w^(j)) lies in both perturbation balls.",
    latex=r"G^{(i)}\cap G^{(j)}=\emptyset",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. B, Claim 10",
    checks=(Check("intersection-point", "deterministic", pure_dp_lower_bound.check_claim10,
                  "z = 0.505 gamma (w_i - w_j) is within 0.9 gamma of 1.01 gamma w_i and -1.01 gamma w_j"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "theorem-11",
    statement="(Steinke & Ullman 2017, Thm 3) Let zeta > 0 and n < zeta sqrt(d). For any (1, zeta/n)-DP M with output in the unit "
              "ball and x_i i.i.d. from B_q, E_{q ~ U[0,1]^d, w ~ M}[sum_j w_j (q_j - 0.5)] < zeta sqrt(d).",
    latex=r"\mathbb E\Big[\sum_j w_j(q_j-\tfrac12)\Big]<\zeta\sqrt d",
    kind=ClaimKind.SAMPLE_COMPLEXITY_LOWER,
    source="App. C, Theorem 11 (cited)",
    formula=_theorem11,
    quantity="bound zeta sqrt(d) on the fingerprinting correlation",
    exponents={"d": 0.5},
    regime=(Condition("zeta > 0", lambda p: p["zeta"] > 0), Condition("d >= 1", lambda p: p["d"] >= 1),
            Condition("n < zeta sqrt(d)", lambda p: p.get("n") is None or p["n"] < p["zeta"] * math.sqrt(p["d"]))),
    checks=(Check("dp-perceptron-correlation", "probabilistic", approx_dp_lower_bound.check_theorem11_fingerprinting,
                  "evidence for one mechanism: d = 4096, n = 12 < 0.2 sqrt(d); the DP Batch "
                  "Perceptron (replace-one (1, zeta/n)-DP) stays under zeta sqrt(d), the non-private perceptron exceeds it"),),
    uncheckable_reason="cited fingerprinting lower bound over all (1, zeta/n)-DP algorithms; the registered check is evidence "
                       "for one specific mechanism, not a verification",
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-12",
    statement="E_{q ~ U[0,1]^d}[d_TV(B_q, P_q)] <= o(1/d), where P_q is B_q conditioned on <q', x> >= 0.01, q' = (2q - 1)/sqrt(d). "
              "Explicit form (our derivation from the corrected proof): <= e^{-2d(1/3-0.04)^2} + e^{-0.01125 d}.",
    latex=r"\mathbb E_{\mathbf q}[d_{TV}(\mathcal B_{\mathbf q},\mathcal P_{\mathbf q})]\le o(1/d)"
          r"\ \ (\le e^{-2d(1/3-0.04)^2}+e^{-0.01125d})",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. C.1, Lemma 12",
    formula=_lemma12,
    quantity="explicit upper bound on E_q[d_TV] (Hoeffding constants of the corrected proof)",
    regime=(Condition("d >= 1", lambda p: p["d"] >= 1),),
    errata=("Proof of Lemma 12: its inequalities are flipped and its threshold ||q'|| >= 0.1 is too small (at 0.1 the conditional "
            "probability is ~1/2); use 0.2. The lemma is true.",),
    checks=(Check("tv-decay-exact", "exact", approx_dp_lower_bound.check_lemma12_decay,
                  "exact enumeration over x, QMC over q, d in {4, 8, 12, 16}: d E[d_TV] decreases, below the explicit bound"),
            Check("tv-montecarlo-d400", "probabilistic", approx_dp_lower_bound.check_lemma12_montecarlo,
                  "Monte Carlo failure rate at d = 400 vs the explicit bound"),
            Check("proof-threshold-corrected", "exact", approx_dp_lower_bound.check_lemma12_proof_threshold,
                  "proof step, corrected threshold ||q'|| >= 0.2: Pr_x[<q', x> < 0.01] = o(1/d), exact binomial, d <= 6400"),
            Check("as-printed-proof-threshold", "exact", approx_dp_lower_bound.check_lemma12_proof_threshold_as_printed,
                  "the printed threshold 0.1: the probability stays ~1/2 (an erratum) -- expected to fail", erratum_form='printed')),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-13",
    statement="For constants gamma, beta in (0,1) with gamma > 2 beta: if a (1, o(1/n))-DP algorithm with outputs in the unit ball has "
              "E_{q, w}[err_gamma^{P~_q}(w)] <= beta, then n >= Omega(sqrt(d)).",
    latex=r"n\ge\Omega(\sqrt d)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_LOWER,
    source="App. C.1, Lemma 13",
    formula=_lemma13,
    quantity="minimum sample size (up to the hidden constant c)",
    hidden_constants={"c": 1.0},
    exponents={"d": 0.5},
    regime=(Condition("0 < gamma < 1", lambda p: 0 < p["gamma"] < 1), Condition("0 < beta < 1", lambda p: 0 < p["beta"] < 1),
            Condition("gamma > 2 beta", lambda p: p["gamma"] > 2 * p["beta"])),
    checks=(Check("dp-perceptron-sqrt-d", "scaling", approx_dp_lower_bound.check_lemma13_sqrt_d,
                  "illustration: on P~_q with gamma = 0.3, beta = 0.1 the DP Batch Perceptron's needed n grows at "
                  "least like sqrt(d) (one-sided slope test, d = 256..4096; two-sided CI reported), the non-private "
                  "perceptron's stays flat"),),
    uncheckable_reason=_LOWER_BOUND_REASON.format(what="(1, o(1/n))-DP"),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-14",
    statement="For constants gamma_0, beta_0 in (0,1) with gamma_0 > 4 sqrt(2 beta_0), no (1, o(1/n))-DP B with oracle access to "
              "P~_q has simultaneously o(sqrt d) expected samples, E||w||^2 <= 1 and E[err_{gamma_0}(w)] <= beta_0.",
    latex=r"\gamma_0>4\sqrt{2\beta_0}\Rightarrow \mathbb E[\#\text{samples}]=\Omega(\sqrt d)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_LOWER,
    source="App. C.2, Lemma 14",
    formula=_lemma14,
    quantity="minimum expected number of oracle samples (up to the hidden constant c)",
    hidden_constants={"c": 1.0},
    exponents={"d": 0.5},
    regime=(Condition("0 < gamma_0 < 1", lambda p: 0 < p["gamma_0"] < 1), Condition("0 < beta_0 < 1", lambda p: 0 < p["beta_0"] < 1),
            Condition("gamma_0 > 4 sqrt(2 beta_0)", lambda p: p["gamma_0"] > 4 * math.sqrt(2 * p["beta_0"]))),
    checks=(Check("reduction-parameters", "deterministic", approx_dp_lower_bound.check_lemma14_reduction,
                  "proof step: beta = 2 beta_0, gamma = gamma_0 sqrt(beta_0/2) satisfy Lemma 13's gamma > 2 beta"),),
    uncheckable_reason=_LOWER_BOUND_REASON.format(what="(1, o(1/n))-DP"),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-15",
    statement="For any epsilon > 0 there is a delta such that no (epsilon, delta)-DP algorithm taking at most 1e-5/epsilon samples in "
              "expectation from O_s (s uniform in {+-1}) outputs s correctly with probability 0.51. (Corrected: delta = 0.001 (1 - e^-eps).)",
    latex=r"\delta=0.001(1-e^{-\epsilon})",
    kind=ClaimKind.SAMPLE_COMPLEXITY_LOWER,
    source="App. D, Lemma 15",
    formula=_lemma15,
    quantity="delta for which the one-bit lower bound holds (corrected)",
    regime=(Condition("epsilon > 0", lambda p: p["epsilon"] > 0),),
    errata=("Lemma 15: the statement's delta = Omega(1/epsilon) and the proof's delta = 0.001/(1 - e^{-epsilon}) are wrong; corrected "
            "delta = 0.001 (1 - e^{-epsilon}) = Theta(epsilon).",
            "Proof of Lemma 15: it bounds only s = 1; apply the chain to both s (average success < 0.506 < 0.509)."),
    checks=(Check("chain-bound", "deterministic", non_robust_lower_bound.check_lemma15_chain, "corrected delta: average success bound < 0.509"),
            Check("laplace-tightness", "exact", non_robust_lower_bound.check_lemma15_tightness,
                  "sgn(c + Lap(1/eps)) attains 1 - e^{-k eps}/2 (add/remove adjacency)"),
            Check("as-printed", "deterministic", non_robust_lower_bound.check_lemma15_as_printed,
                  "the printed delta admits a counterexample (an erratum) -- expected to fail", erratum_form='printed')),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-16",
    statement="For gamma_hat, xi_hat in [0,1] and any D on B^d x {+-1}, with X ~ D^n, with probability 1 - xi_hat: for all w in B^d, "
              "err^D_{0.95 gamma_hat}(w) <= err^X_{gamma_hat}(w) + 400 sqrt(ln(4/xi_hat)/(n gamma_hat^2)).",
    latex=r"\mathrm{err}^{\mathcal D}_{0.95\hat\gamma}(\mathbf w)\le\mathrm{err}^{\mathbf X}_{\hat\gamma}(\mathbf w)"
          r"+400\sqrt{\frac{\ln(4/\hat\xi)}{n\hat\gamma^2}}",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. E, Lemma 16 (Bartlett & Mendelson 2002)",
    formula=_lemma16,
    quantity="uniform deviation term",
    exponents={"n": -0.5, "gamma_hat": -1.0},
    regime=(Condition("n >= 1", lambda p: p["n"] >= 1), Condition("0 < gamma_hat <= 1", lambda p: 0 < p["gamma_hat"] <= 1),
            Condition("0 < xi_hat <= 1", lambda p: 0 < p["xi_hat"] <= 1)),
    checks=(Check("finite-support-simulation", "probabilistic", exponential_mechanism.check_lemma16,
                  "exact err^D on a finite support, multinomial samples at n = 4e7, failure rate vs xi_hat; looseness reported"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-17",
    statement="(McSherry & Talwar) For the exponential mechanism output w_hat and S_t = {w : q(X, w) >= -t}, for any t >= 0: "
              "Pr[w_hat not in S_{2t}] <= exp(-epsilon t/2)/mu(S_t).",
    latex=r"\Pr[\hat{\mathbf w}\notin S_{2t}]\le \frac{e^{-\epsilon t/2}}{\mu(S_t)}",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="App. E, Lemma 17",
    formula=_lemma17,
    quantity="upper bound on Pr[w_hat not in S_{2t}]",
    regime=(Condition("epsilon > 0", lambda p: p["epsilon"] > 0), Condition("t >= 0", lambda p: p["t"] >= 0),
            Condition("0 < mu <= 1", lambda p: 0 < p["mu"] <= 1)),
    checks=(Check("exact-circle", "exact", exponential_mechanism.check_lemma17, "exact arc integration of the EM in d = 2"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-18",
    statement="Let T = ceil(1500/(alpha gamma_gap^2)). If E_batch-size, E_noise-norm, E_parallel, E_opt-noise, E_mistake-noise and "
              "E_sampled-mistake all occur, DP Batch Perceptron outputs w with err^X_{gamma'}(w) <= 0.5 alpha.",
    latex=r"T=\left\lceil\frac{1500}{\alpha\gamma_{\rm gap}^2}\right\rceil\Rightarrow \mathrm{err}^{\mathbf X}_{\gamma'}(\mathbf w)\le0.5\alpha",
    kind=ClaimKind.UPDATE_BOUND,
    source="App. F.1, Lemma 18",
    formula=_lemma18,
    quantity="iteration budget T (gamma_gap = 0.05 gamma)",
    exponents={"alpha": -1.0, "gamma": -2.0},
    regime=(Condition("0 < alpha < 1", lambda p: 0 < p["alpha"] < 1), Condition("0 < gamma <= 1", lambda p: 0 < p["gamma"] <= 1)),
    errata=("Proof of Lemma 18: m_i = sum_{j <= i} |M_j| (printed |M_i|).",
            "Proof of Lemma 18: Line 10 returns w_{i-1}/||w_{i-1}|| (printed w_i/||w_i||).",
            "Proof of Lemma 18: Eq. (12) needs err_gamma(w*) = 0 (printed err_gamma'(w*) = 0).",
            "Algorithm 1: w_0/||w_0|| is undefined at i = 1; w_hat = 0 is used (every sampled point is a mistake)."),
    checks=(Check("proof-arithmetic", "deterministic", batch_perceptron.check_lemma18_arithmetic,
                  "proof step: the mistake bound 250 B/gamma_gap^2 contradicts 0.2 alpha B T (not the learner)"),
            Check("noiseless-margin-perceptron", "deterministic", batch_perceptron.check_lemma18_noiseless,
                  "MarginPerceptron (sigma = 0, b -> 0) stops within T iterations with err_{gamma'} <= 0.5 alpha, on "
                  "random margin data and on tilted instances that need ~20-50 updates")),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-19",
    statement="For any epsilon, delta in (0,1) and T in N, with p = 1/sqrt(T), sigma = 100 ln(T/delta)/epsilon and "
              "b = 100 sqrt(ln(T/delta))/epsilon, Algorithm 1 is (epsilon, delta)-DP.",
    latex=r"\epsilon'=\sqrt{2T\ln\frac{1}{p\delta_0}}\,(2p\epsilon_0)+2T(2p\epsilon_0)^2\le\epsilon,\ "
          r"\epsilon_0=\frac{\epsilon}{20\sqrt{\ln(T/\delta)}},\ \delta_0=\frac{\delta}{2\sqrt T}",
    kind=ClaimKind.PRIVACY,
    source="App. F.2, Lemma 19",
    formula=_lemma19,
    quantity="epsilon' of the paper's accounting (must be <= epsilon)",
    regime=(Condition("0 < epsilon < 1", lambda p: 0 < p["epsilon"] < 1),
            Condition("0 < delta < 1", lambda p: 0 < p["delta"] < 1),
            Condition("T >= 1", lambda p: p["T"] >= 1),
            Condition("T >= 2 or delta <= 0.5 (the proof's classic Gaussian step)",
                      lambda p: p["T"] >= 2 or p["delta"] <= 0.5, refuses=False)),
    errata=("Proof of Lemma 19: the composition uses ln(1/(p delta_0)), printed ln(1/(p delta)).",
            "Lemma 19: 'any T in N' -- with the cited classic Gaussian calibration it fails at T = 1, delta >~ 0.65 "
            "(the analytic Gaussian still gives privacy, so the lemma holds): the proof's regime, T >= 2 or delta <= 0.5, "
            "is marked, not refused."),
    checks=(Check("accounting-arithmetic", "deterministic", batch_perceptron_privacy.check_lemma19_arithmetic,
                  "epsilon' <= epsilon, delta' <= delta, exact Gaussian and Laplace calibration over a grid"),
            Check("dp-accounting", "deterministic", batch_perceptron_privacy.check_lemma19_accountants,
                  "paper's epsilon' vs RDP and PLD on Algorithm 1's DpEvent tree; looseness reported"),
            Check("corrected-regime", "deterministic", batch_perceptron_privacy.check_lemma19_corrected_regime,
                  "T >= 2 or delta <= 0.5, delta up to 0.99: the proof's classic-Gaussian step and epsilon' <= epsilon hold"),
            Check("as-printed-any-T", "deterministic", batch_perceptron_privacy.check_lemma19_any_T_as_printed,
                  "'for any T in N': at T = 1, delta >= 0.65 the classic-Gaussian step fails (an erratum) -- expected to fail", erratum_form='printed')),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-20",
    statement="(Balle et al. 2018) If A is (epsilon_0, delta_0)-DP with epsilon_0, delta_0 in (0,1), running A on a Poisson subsample "
              "with rate p is (2 p epsilon_0, p delta_0)-DP.",
    latex=r"(2p\epsilon_0,\ p\delta_0)",
    kind=ClaimKind.PRIVACY,
    source="App. F.2, Lemma 20",
    formula=_lemma20,
    quantity="epsilon of the subsampled mechanism",
    regime=(Condition("0 < p <= 1", lambda p: 0 < p["p"] <= 1),
            Condition("0 < epsilon_0 < 1", lambda p: 0 < p["epsilon_0"] < 1),
            Condition("0 < delta_0 < 1", _opt("delta_0", lambda v: 0 < v < 1))),
    checks=(Check("tight-amplification", "exact", batch_perceptron_privacy.check_lemma20_exact, "2 p eps0 >= ln(1 + p (e^eps0 - 1)) over a grid"),
            Check("dp-accounting", "deterministic", batch_perceptron_privacy.check_lemma20_accountants,
                  "PLD (RDP reported) on Poisson-subsampled Laplace / calibrated Gaussian")),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-21",
    statement="(Dwork et al. 2010) T adaptive runs of an (epsilon_0, delta_0)-DP algorithm, epsilon_0, delta_0 in (0,1), are "
              "(epsilon', (T+1) delta_0)-DP with epsilon' = sqrt(2 T ln(1/delta_0)) epsilon_0 + 2 T epsilon_0^2.",
    latex=r"\epsilon'=\sqrt{2T\ln(1/\delta_0)}\,\epsilon_0+2T\epsilon_0^2",
    kind=ClaimKind.PRIVACY,
    source="App. F.2, Lemma 21",
    formula=_lemma21,
    quantity="epsilon' of the T-fold composition",
    regime=(Condition("T >= 1", lambda p: p["T"] >= 1),
            Condition("0 < epsilon_0 < 1", lambda p: 0 < p["epsilon_0"] < 1),
            Condition("0 < delta_0 < 1", lambda p: 0 < p["delta_0"] < 1)),
    checks=(Check("dp-accounting", "deterministic", batch_perceptron_privacy.check_lemma21_accountants,
                  "optimal composition (PLD of the worst (eps0, delta0) mechanism), Laplace and Gaussian PLD/RDP"),),
), mutants=MUTANTS)

register(Claim(
    id=P + "lemma-22",
    statement="(Hein & Andriushchenko 2017, Thm 2.1, simplified) For a k-class classifier predicting argmax_y f^y: if "
              "||Delta|| < min_{y' != y} (f^y(x) - f^{y'}(x)) / sup_x' ||grad f^y(x') - grad f^{y'}(x')||, then x + Delta is predicted y.",
    latex=r"\|\Delta\|<\min_{y'\ne y}\frac{f^y(\mathbf x)-f^{y'}(\mathbf x)}{\sup_{\mathbf x'}\|\nabla f^y(\mathbf x')-\nabla f^{y'}(\mathbf x')\|}",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="App. G.2.1, Lemma 22",
    errata=("Lemma 22: the classifier maximises f^y (printed: minimises).",
            "Lemma 22: strict < (printed <=); at equality a linear classifier can tie."),
    checks=(Check("linear-brute-force", "exact", certified_radius.check_lemma22,
                  "certified radius of linear one-vs-rest models vs brute-force flip distance in 2-3 dimensions"),
            Check("kernel-rff-brute-force", "exact", certified_radius.check_lemma22_kernel,
                  "unit-norm random Fourier features; the kernel certified radius of App. G.2.1 is never "
                  "larger than the brute-force minimal adversarial distance (dense polar grid, d = 2)")),
), mutants=MUTANTS)

register(Claim(
    id=P + "fact-novikoff",
    statement="(Novikoff 1963, cited in Sec. 3 and App. F without a number) On a sequence with ||x|| <= R that some unit w* "
              "separates with margin gamma, the perceptron makes at most (R/gamma)^2 mistakes.",
    latex=r"\#\text{mistakes}\le (R/\gamma)^2",
    kind=ClaimKind.MISTAKE_BOUND,
    source="Sec. 3 (overview of Theorem 6) and App. F, cited",
    formula=_novikoff,
    quantity="number of mistakes",
    exponents={"gamma": -2.0},
    regime=(Condition("0 < gamma <= R", lambda p: 0 < p["gamma"] <= p["R"]),),
    reconstructed=True,
    checks=(Check("perceptron-runs", "deterministic", batch_perceptron.check_novikoff,
                  "Perceptron on the orthogonal sequences x_j = e_j (which attain (R/gamma)^2 exactly) and on random "
                  "gamma-margin data, natural and adversarial orders: mistakes <= (R/gamma)^2"),),
), mutants=MUTANTS)
