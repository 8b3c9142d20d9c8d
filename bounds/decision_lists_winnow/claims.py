"""Claims of "Privately Learning Decision Lists and a Differentially Private Winnow" (paper id ``decision-lists-winnow``).

Every numbered statement of the paper is registered here with its formula, regime, errata and
checks (Definitions 4, 5 and 8 are definitions, not claims; where the source text leaves a
statement unlabelled its number is inferred from the surrounding numbering). The checks live in
one module per part of the paper:

* :mod:`.exponential_mechanism` -- Lemma 3 (Sec. 2);
* :mod:`.greedy_cover` -- Theorem 1 (Sec. 1.1), Proposition 6 and Theorem 7 (Sec. 3);
* :mod:`.confident_winnow` -- Lemma 9 (Sec. 4.1) and the introduction's consequences;
* :mod:`.sparse_vector` -- Lemma 10 (Sec. 4.2);
* :mod:`.dp_winnow_privacy` -- Lemma 11 (Sec. 4.2.1);
* :mod:`.dp_winnow_regret` -- Theorem 12, Lemmas 13 and 14 (Sec. 4.2.2) and Theorem 2 (Sec. 1.2);
* :mod:`.decision_lists_via_winnow` -- Lemma 15 (Sec. 4.3);

the formulas in :mod:`.formulas` (those a learner runs with are the learner's) and the checks' mutants
in :mod:`.mutants`.

Reconstructed statements (``reconstructed=True``; the source text lost them): Theorem 7
(DP-GreedyCover privacy and accuracy), Lemma 10 (the value alpha = 8 ln(2T/beta)/epsilon and the
hypotheses), Theorem 12 (statement; the proof survives), Lemma 13 (statement and m), and
Theorem 2's explicit constants.

Errata relied on:

* Lemma 3: the printed sampling weight exp(-eps q/2) has the wrong sign for a maximised score;
  exp(+eps q/2) is used.
* Lemma 11: the two-part advanced-composition total exceeds epsilon from delta ~ 0.47; the sharp
  accounting (only the AboveThreshold instance of the changed round pays) is the formula.
* Theorem 12: the proof's count 16 ln(2T^2/beta) K / eps_hat omits the firing round of each
  window; the corrected (K+1)(L+alpha+1) with L = alpha is the formula.
* Lemma 13: m = ceil(2 ln(T^2/beta)/(c^2 rho^2)); the union bound runs over (sample, round) pairs.
* Lemma 15: the construction must give weight 0 to the final run of rules sharing the default's
  bit, otherwise the margin is only Theta(r^-(D+1)).
* Theorem 2 says "halfspaces over {-1,1}" meaning {-1,1}^d.

Each erratum is demonstrated by a pair of registered checks: the printed form fails where the paper
says the statement holds (``details['erratum']`` says why), the corrected form beside it passes.

=============  =================================  ==============================================
claim          printed form (fails)               corrected form (passes)
=============  =================================  ==============================================
lemma-3        ``printed-sign-utility``           ``exact-utility``
lemma-11       ``printed-two-part-grid``          ``calibration-grid``
lemma-13       ``printed-m-pairs-union``          ``pairs-union``
lemma-15       ``printed-recipe-margin``          ``exhaustive-construction``
theorem-12     ``window-count``                   ``parametric`` / ``parametric-tight``
=============  =================================  ==============================================

The printed formulas stay evaluable by name in :mod:`.formulas` (``em_log_probabilities_printed``,
``lemma11_two_part_total``, ``lemma13_m_printed``, ``monotone_dl_to_halfspace_printed``,
``theorem12_paper_bound``). Every other check carries mutants (:mod:`.mutants`): the learner or
formula it guards, broken, which the check must be seen to fail on.
"""

from __future__ import annotations

import math

from privbound.bounds.decision_lists_winnow import (
    confident_winnow,
    decision_lists_via_winnow,
    dp_winnow_privacy,
    dp_winnow_regret,
    exponential_mechanism,
    greedy_cover,
    sparse_vector,
)
from privbound.bounds.decision_lists_winnow.formulas import (
    em_slack,
    greedy_cover_samples,
    lemma11_total_epsilon,
    theorem2_mistakes,
    theorem12_corrected_bound,
)
from privbound.bounds.decision_lists_winnow.mutants import MUTANTS
from privbound.bounds.registry import Check, Claim, ClaimKind, Condition, register
from privbound.learners.decision_lists_winnow.winnow import lemma13_m, winnow_update_bound
from privbound.learners.mechanisms import above_threshold_alpha

__all__ = ["NUMBERED_STATEMENTS", "PAPER"]

PAPER = "decision-lists-winnow"

NUMBERED_STATEMENTS: tuple[str, ...] = (
    "decision-lists-winnow/theorem-1",
    "decision-lists-winnow/theorem-2",
    "decision-lists-winnow/lemma-3",
    "decision-lists-winnow/proposition-6",
    "decision-lists-winnow/theorem-7",
    "decision-lists-winnow/lemma-9",
    "decision-lists-winnow/lemma-10",
    "decision-lists-winnow/lemma-11",
    "decision-lists-winnow/theorem-12",
    "decision-lists-winnow/lemma-13",
    "decision-lists-winnow/lemma-14",
    "decision-lists-winnow/lemma-15",
)


# ------------------------------------------------------------------- regime helpers


def _eps_pos(p):
    return p["epsilon"] > 0


def _delta_01(p):
    return 0 < p["delta"] < 1


def _beta_01(p):
    return 0 < p["beta"] < 1


def _T_pos(p):
    return p["T"] >= 1 and float(p["T"]).is_integer()


# ------------------------------------------------------------------- formulas (named parameters)


def _thm1_samples(F, epsilon, delta, C_1=1.0):
    """Theorem 1: n = C_1 |F| ln(1/delta) / epsilon (tilde-O; C_1 hidden, polylog factors hidden)."""
    return C_1 * F * math.log(1.0 / delta) / epsilon


def _thm2_mistakes(epsilon, delta, d, rho, T, beta, c=0.25):
    """Theorem 2 with the reconstructed explicit calibration and the corrected Theorem 12 count."""
    return theorem2_mistakes(epsilon, delta, d, rho, T, beta, c)


def _lemma3_slack(epsilon, H, tau):
    """Lemma 3: (2/epsilon)(ln|H| + tau)."""
    return em_slack(epsilon, H, tau)


def _thm7_samples(F, epsilon_step, alpha, beta):
    """Theorem 7 [RECON]: max{2E/alpha, (8/alpha)(M ln 2M + ln(2/beta))}, M = |F| + 1."""
    return greedy_cover_samples(F, epsilon_step, alpha, beta)


def _lemma9_updates(d, rho, eta, c=0.0):
    """Lemma 9: ln d / ((1-c) eta rho - eta^2/2)."""
    return winnow_update_bound(d, rho, eta, c)


def _lemma10_alpha(epsilon, T, beta):
    """Lemma 10 [RECON]: alpha = 8 ln(2T/beta)/epsilon (T is an integer in the regime)."""
    return above_threshold_alpha(epsilon, int(T), beta)


def _lemma11_total(epsilon, delta, K, m):
    """Lemma 11: accounted epsilon of DP-Winnow at the lemma's eps_hat and eta (reconstructed sharp accounting)."""
    return lemma11_total_epsilon(epsilon, delta, K, m)


def _thm12_mistakes(T, beta, epsilon_hat, K):
    """Theorem 12 corrected: (K+1)(2 alpha + 1), alpha = L = 8 ln(2T^2/beta)/eps_hat."""
    return theorem12_corrected_bound(T, beta, epsilon_hat, K)


def _lemma13_m(T, beta, c, rho):
    """Lemma 13 [RECON]: m = ceil(2 ln(T^2/beta)/(c^2 rho^2))."""
    return float(lemma13_m(T, beta, c, rho))


def _lemma14_updates(d, rho, eta, c):
    """Lemma 14: DP-Winnow makes fewer than ln d / ((1-c) eta rho - eta^2/2) updates w.p. >= 1 - beta."""
    return winnow_update_bound(d, rho, eta, c)


def _lemma15_margin(r, D, C_15=1.0):
    """Lemma 15: margin Omega(1/r^D) = C_15 / r^D (C_15 hidden; 1/3 suffices for the construction used)."""
    return C_15 / r**D


# ------------------------------------------------------------------- claims


register(Claim(
    id="decision-lists-winnow/theorem-1",
    statement=("Let F be a set of features and F-decision lists the class of decision lists whose conditional "
               "rules are members of F. There is an (epsilon, delta)-differentially private learner for "
               "F-decision lists using O~(|F| log(1/delta)/epsilon) samples and running in poly(|F|) time."),
    latex=r"n = \tilde O\!\left(\frac{|\mathcal F|\log(1/\delta)}{\epsilon}\right)",
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 1.1, Theorem 1 (number inferred)",
    formula=_thm1_samples,
    quantity="number of samples (accuracy alpha suppressed, polylog factors hidden)",
    hidden_constants={"C_1": 1.0},
    exponents={"F": 1.0, "epsilon": -1.0},
    regime=(Condition("|F| = F >= 1", lambda p: p["F"] >= 1),
            Condition("epsilon > 0", _eps_pos),
            Condition("0 < delta < 1", _delta_01)),
    errata=("The accuracy parameter alpha is suppressed in the statement; the natural full form is "
            "O~(|F| log(1/delta)/(alpha epsilon)).",),
    checks=(Check("sample-size-scaling", "scaling", greedy_cover.check_theorem1_scaling,
                  "needed n of DPGreedyCover vs |F| (O~(|F|)) and vs epsilon_step (exponent -1), OLS fits"),),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/theorem-2",
    statement=("Let C be the class of halfspaces over {-1,1}^d with margin rho. There is an (epsilon, delta)-"
               "differentially private online learner for C incurring regret O(polylog(d, T, 1/delta)/"
               "(rho^6 epsilon^4)) against an oblivious adversary."),
    latex=r"\mathrm{regret} = O\!\left(\frac{\mathrm{polylog}(d,T,1/\delta)}{\rho^6\epsilon^4}\right)",
    kind=ClaimKind.MISTAKE_BOUND,
    source="Sec. 1.2, Theorem 2 (number inferred); explicit constants reconstructed from Sec. 4.2",
    formula=_thm2_mistakes,
    quantity=("mistake bound at the reconstructed calibration (m from Lemma 13, K* from Lemma 14, eps_hat and "
              "eta from Lemma 11, L = alpha), failure probability 2 beta"),
    exponents={"rho": -6.0, "epsilon": -4.0},
    regime=(Condition("0 < epsilon < 1", lambda p: 0 < p["epsilon"] < 1),
            Condition("0 < delta < 1", _delta_01),
            Condition("d >= 2", lambda p: p["d"] >= 2),
            Condition("0 < rho <= 1", lambda p: 0 < p["rho"] <= 1),
            Condition("T >= 1 integer", _T_pos),
            Condition("0 < beta < 1/2", lambda p: 0 < p["beta"] < 0.5),
            Condition("0 < c < 1/2", lambda p: 0 < p["c"] < 0.5)),
    errata=("Text says 'halfspaces over {-1,1}'; meant {-1,1}^d.",
            "Explicit constants are reconstructed (Theorem 12 at Lemma 11's calibration): ~3.7e5 ln(2T^2/b) ln^{3/2}(T^2/b) ln^3 d "
            "ln^2(2/delta)/(c^3 (1-c)^3 eps^4 rho^6); the formula uses the corrected Theorem 12 count.",
            "Signed targets need the 2d transform, so ln d -> ln 2d."),
    reconstructed=True,
    checks=(Check("exponents", "deterministic", dp_winnow_regret.check_theorem2_exponents,
                  "log-log slopes of the calibrated bound in rho (-6) and epsilon (-4)"),
            Check("calibrated-vacuity", "deterministic", dp_winnow_regret.check_calibrated_vacuity,
                  "calibrated value vs T (inconclusive: vacuous at practical sizes)")),
    # The empirical (parametric) check of the mistake bound is registered under theorem-12.
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/lemma-3",
    statement=("Let q be a sensitivity-1 score function. The Exponential Mechanism samples each h with "
               "probability proportional to exp(epsilon q(S,h)/2) [printed: exp(-epsilon q(S,h)/2)]. It is "
               "epsilon-differentially private, and for every tau > 0 it outputs h with q(S,h) >= "
               "max_f q(S,f) - (2/epsilon)(log|H| + tau) with probability at least 1 - e^-tau."),
    latex=r"q(S,h)\ge\max_{f\in H}q(S,f)-\frac{2}{\epsilon}\left(\log|H|+\tau\right)\ \text{w.p.}\ \ge 1-e^{-\tau}",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="Sec. 2, Lemma 3 (number inferred; McSherry & Talwar 2007)",
    formula=_lemma3_slack,
    quantity="utility slack (2/epsilon)(ln|H| + tau)",
    regime=(Condition("epsilon > 0", _eps_pos),
            Condition("|H| = H >= 1", lambda p: p["H"] >= 1),
            Condition("tau > 0", lambda p: p["tau"] > 0)),
    errata=("Printed sampling weight exp(-epsilon q/2) has the wrong sign for a maximised score: it selects "
            "the worst candidate and the utility claim fails (check printed-sign-utility); implemented with "
            "exp(+epsilon q/2).",),
    checks=(Check("exact-dp", "exact", exponential_mechanism.check_lemma3_dp,
                  "max log-ratio over neighbouring score vectors (vertex enumeration) <= epsilon"),
            Check("exact-utility", "exact", exponential_mechanism.check_lemma3_utility,
                  "exact tail mass of bad candidates <= e^-tau over a family of score vectors"),
            Check("printed-sign-utility", "exact", exponential_mechanism.check_lemma3_printed_sign,
                  "erratum: the same utility check with the printed weight exp(-eps q/2) fails", erratum_form='printed')),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/proposition-6",
    statement=("Let S be a sample labeled by a decision list c* = [(f_1,b_1),...,(f_m,b_m),(T,b_{m+1})] with "
               "m <= M. For every iteration of running DP-GreedyCover over S, there exists a decision list c_j "
               "over the remaining candidate functions F_j that is consistent with the remaining sample S_j."),
    latex=r"\forall j\ \exists c_j \text{ over } \mathcal F_j:\ c_j \text{ consistent with } S_j",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="Sec. 3.1, Proposition 6",
    quantity="(existence statement; consequence: max score 0 in every round)",
    checks=(Check("proof-witness", "deterministic", greedy_cover.check_prop6_witness,
                  "the proof's witness lists are consistent for random and adversarial choice sequences"),
            Check("em-choices", "deterministic", greedy_cover.check_prop6_em_choices,
                  "max score 0 in every round along DPGreedyCover's own exponential-mechanism choices")),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/theorem-7",
    statement=("[Reconstructed] DP-GreedyCover with per-round EM parameter epsilon_step is (eps_AR, delta)-DP "
               "under add/remove with eps_AR = (e^{eps_step/2}-1)(e^{eps_step/2} ln(1/delta)+1) and "
               "(eps_AR + eps_step/2, delta)-DP under replace-one; with probability >= 1 - beta its output has "
               "error <= alpha once n >= max{2E/alpha, (8/alpha)(M ln 2M + ln(2/beta))}, "
               "E = (2M/eps_step)(ln 2M + ln(2M/beta)), M = |F| + 1."),
    latex=(r"n\ge\max\Big\{\frac{2E}{\alpha},\frac{8}{\alpha}\big(M\ln 2M+\ln\frac2\beta\big)\Big\},\ "
           r"E=\frac{2M}{\epsilon_{\rm step}}\big(\ln 2M+\ln\frac{2M}{\beta}\big)"),
    kind=ClaimKind.SAMPLE_COMPLEXITY_UPPER,
    source="Sec. 3.2, Theorem 7 (statement missing; reconstructed from the set-cover analysis of Gupta et al. 2010)",
    formula=_thm7_samples,
    quantity="sufficient sample size n (privacy: see greedy_cover_epsilon_add_remove / _replace)",
    regime=(Condition("|F| = F >= 1", lambda p: p["F"] >= 1),
            Condition("epsilon_step > 0", lambda p: p["epsilon_step"] > 0),
            Condition("0 < alpha < 1", lambda p: 0 < p["alpha"] < 1),
            Condition("0 < beta < 1", _beta_01)),
    errata=("Statement missing from the text; reconstructed from the set-cover analysis the paper follows "
            "(Gupta et al. 2010).",
            "Replace-one epsilon is eps_AR + eps_step/2 with the same delta (remove, then add).",
            "Gupta et al.'s epsilon' corresponds to eps_step/2."),
    reconstructed=True,
    checks=(Check("training-error", "probabilistic", greedy_cover.check_theorem7_training_error,
                  "training errors <= E w.p. >= 1 - beta/2 (Monte Carlo over EM coins)"),
            Check("exact-privacy", "exact", greedy_cover.check_theorem7_exact_privacy,
                  "exact hockey-stick delta at the claimed replace-one epsilon <= delta (enumeration)"),
            Check("from-privacy", "exact", greedy_cover.check_theorem7_from_privacy,
                  "DPGreedyCover.from_privacy under each relation: reports (epsilon, delta, relation); exact delta "
                  "at epsilon <= delta over that relation's neighbours"),
            Check("audit", "deterministic", greedy_cover.check_theorem7_audit,
                  "auditor's lower bound on the canary target <= exact epsilon <= claim"),
            Check("pac-accuracy", "probabilistic", greedy_cover.check_theorem7_pac,
                  "true error <= alpha w.p. >= 1 - beta at the reconstructed n (exact error on {0,1}^4)"),
            Check("error-identity", "exact", greedy_cover.check_theorem7_error_identity,
                  "training errors of the output = sum over rounds of -q(S_j, h_j)")),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/lemma-9",
    statement=("Let x^(1..T) in {-1,1}^d be arbitrary points and b^(1..T) arbitrary update instructions. If "
               "some v >= 0 with ||v||_1 = 1 and margin rho >= 0 satisfy y^(t)(v . x^(t)) >= rho for all t, then "
               "ConfidentWinnow with learning rate eta and confidence ratio c < 1/2 makes at most "
               "log d / ((1-c) eta rho - eta^2/2) updates."),
    latex=r"\#\text{updates}\le\frac{\log d}{(1-c)\eta\rho-\eta^2/2}",
    kind=ClaimKind.UPDATE_BOUND,
    source="Sec. 4.1, Lemma 9",
    formula=_lemma9_updates,
    quantity="number of updates",
    regime=(Condition("d >= 2", lambda p: p["d"] >= 2),
            Condition("0 < eta < 2 (1 - c) rho", lambda p: 0 < p["eta"] < 2 * (1 - p["c"]) * p["rho"]),
            Condition("0 <= c < 1/2", lambda p: 0 <= p["c"] < 0.5)),
    checks=(Check("sequences", "deterministic", confident_winnow.check_lemma9_sequences,
                  "Winnow/ConfidentWinnow on every instance generator and the greedy adversary; KL drop per update"),
            Check("winnow-sweep", "deterministic", confident_winnow.check_winnow_sweep,
                  "classic Winnow over d in {10..10^4} and eta in (0, 2 rho), majority and disjunction streams"),
            Check("intro-consequences", "deterministic", confident_winnow.check_intro_consequences,
                  "k-disjunction margin 1/(2k-1) exhaustively; Winnow O(k^2 log d) on disjunctions "
                  "(i.i.d. and greedy) and O(r^{2D} log d) on decision lists")),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/lemma-10",
    statement=("[Reconstructed hypotheses] AboveThreshold initialised with (epsilon, L, beta) and run on at "
               "most T sensitivity-1 queries is epsilon-DP, and with probability >= 1 - beta, where k is the "
               "first query answered TRUE (k = T+1 if none): (1) q^(t)(D) <= L + alpha for all t < k, and "
               "(2) q^(k)(D) >= L - alpha or k = T+1, with alpha = 8 ln(2T/beta)/epsilon."),
    latex=r"\alpha=\frac{8\ln(2T/\beta)}{\epsilon}",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="Sec. 4.2, Lemma 10 (hypotheses and alpha missing; Dwork & Roth 2014, Thm 3.23/3.24)",
    formula=_lemma10_alpha,
    quantity="accuracy slack alpha",
    regime=(Condition("epsilon > 0", _eps_pos),
            Condition("T >= 1 integer", _T_pos),
            Condition("0 < beta < 1", _beta_01)),
    errata=("alpha and the hypotheses are lost in the text; reconstructed, consistent with the "
            "16 ln(2T^2/beta)/eps_hat of Theorem 12's proof.",),
    reconstructed=True,
    checks=(Check("mc-accuracy", "probabilistic", sparse_vector.check_lemma10_accuracy,
                  "failure rate of conclusions (1)-(2) over adversarial sequences vs beta (SparseVector)"),
            Check("quadrature-dp", "exact", sparse_vector.check_lemma10_dp,
                  "exact firing-time distribution by quadrature; max log-ratio over neighbours <= epsilon")),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/lemma-11",
    statement=("Let epsilon, delta in (0,1). If eps_hat = epsilon/(4 sqrt(2K log(2/delta))) and "
               "eta = epsilon/(8 sqrt(2mK log(2/delta))), then DP-Winnow is (epsilon, delta)-differentially private."),
    latex=(r"\hat\epsilon=\frac{\epsilon}{4\sqrt{2K\log(2/\delta)}},\ "
           r"\eta=\frac{\epsilon}{8\sqrt{2mK\log(2/\delta)}}\Rightarrow(\epsilon,\delta)\text{-DP}"),
    kind=ClaimKind.PRIVACY,
    source="Sec. 4.2.1, Lemma 11 (number inferred; proof missing, accounting reconstructed)",
    formula=_lemma11_total,
    quantity=("epsilon accounted by the reconstructed sharp composition (one SVT instance eps_hat + advanced "
              "composition of mK 4eta-DP draws at delta); the claim is that it is <= epsilon"),
    regime=(Condition("0 < epsilon < 1", lambda p: 0 < p["epsilon"] < 1),
            Condition("0 < delta < 1", _delta_01),
            Condition("K >= 1", lambda p: p["K"] >= 1),
            Condition("m >= 1", lambda p: p["m"] >= 1)),
    errata=("Proof missing; reconstructed accounting. The two-part total with K+1 SVT "
            "instances and delta/2 each exceeds epsilon from delta ~ 0.47 (1.18 eps at delta = 0.999; check "
            "printed-two-part-grid); the sharp single-instance total (registered) is <= 0.61 epsilon on all of (0,1)^2.",
            "SVT privacy requires AddQuery every round, not only on mistake rounds (the presence of a query "
            "must not depend on a label)."),
    checks=(Check("calibration-grid", "deterministic", dp_winnow_privacy.check_lemma11_grid,
                  "reconstructed totals <= epsilon over a grid of (epsilon, delta, K, m)"),
            Check("printed-two-part-grid", "deterministic", dp_winnow_privacy.check_lemma11_printed_two_part,
                  "erratum: the two-part total over a grid with delta -> 1 exceeds epsilon from delta ~ 0.47", erratum_form='reconstructed'),
            Check("from-privacy", "deterministic", dp_winnow_privacy.check_lemma11_from_privacy,
                  "DPWinnow.from_privacy (its one relation, event-level replace-one): reported epsilon <= epsilon"),
            Check("dp-accounting", "deterministic", dp_winnow_privacy.check_lemma11_accountants,
                  "RDP and PLD accountants on a randomized-response model of the composition"),
            Check("audit", "deterministic", dp_winnow_privacy.check_lemma11_audit,
                  "white-box replay audit of the released weights (relaxed parameters) <= own accounting")),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/theorem-12",
    statement=("[Reconstructed statement; proof in text] For an oblivious sequence consistent with a rho-margin "
               "halfspace with v >= 0, c in (0,1/2), m = ceil(2 ln(T^2/beta)/(c^2 rho^2)), "
               "L = alpha = 8 ln(2T^2/beta)/eps_hat, K = log d/((1-c) eta rho - eta^2/2) and eps_hat, eta as in "
               "Lemma 11, DP-Winnow is (epsilon, delta)-DP and with probability >= 1 - 2 beta makes at most "
               "(K+1)(L+alpha+1) mistakes [printed: 16 log(2T^2/beta) K / eps_hat]."),
    latex=r"\#\text{mistakes}\le (K+1)(L+\alpha+1),\quad L=\alpha=\frac{8\ln(2T^2/\beta)}{\hat\epsilon}",
    kind=ClaimKind.MISTAKE_BOUND,
    source="Sec. 4.2.2, Theorem 12 (statement missing; proof in the text)",
    formula=_thm12_mistakes,
    quantity="number of mistakes (corrected count), probability >= 1 - 2 beta",
    regime=(Condition("T >= 1 integer", _T_pos),
            Condition("0 < beta < 1/2", lambda p: 0 < p["beta"] < 0.5),
            Condition("epsilon_hat > 0", lambda p: p["epsilon_hat"] > 0),
            Condition("K >= 1", lambda p: p["K"] >= 1)),
    errata=("Printed count 16 ln(2T^2/beta) K / eps_hat omits the firing round of each window (+1), the final "
            "window and the empty-cache case; corrected (K+1)(L+alpha+1) registered.",
            "The calibrated bound is vacuous (>> T) at practical sizes."),
    reconstructed=True,
    checks=(Check("window-count", "deterministic", dp_winnow_regret.check_theorem12_window_count,
                  "worst case consistent with Lemmas 10 and 14 vs the count the proof implies (erratum; the "
                  "statement is missing from the text)", erratum_form='reconstructed'),
            Check("calibrated-vacuity", "deterministic", dp_winnow_regret.check_calibrated_vacuity,
                  "calibrated value vs T (inconclusive)"),
            Check("parametric", "probabilistic", dp_winnow_regret.check_theorem12_parametric,
                  "mistakes <= (U+1)(L+alpha+1) w.p. >= 1 - 2 beta, relaxed parameters, >= 1000 runs"),
            Check("parametric-tight", "probabilistic", dp_winnow_regret.check_theorem12_parametric_tight,
                  "the same at L = 4 alpha, where the worst run reaches ~0.75 of the bound")),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/lemma-13",
    statement=("[Reconstructed] Against an oblivious sequence, if m >= 2 ln(T min(K,T)/beta)/(c^2 rho^2) "
               "(use m = ceil(2 ln(T^2/beta)/(c^2 rho^2))), then with probability >= 1 - beta, for all t: "
               "y^(t)<w^(t), x^(t)> > c rho implies sgn<w~^(t), x^(t)> = y^(t)."),
    latex=r"m=\left\lceil\frac{2\ln(T^2/\beta)}{c^2\rho^2}\right\rceil",
    kind=ClaimKind.PROBABILISTIC_LEMMA,
    source="Sec. 4.2.2, Lemma 13 (statement missing; Hoeffding and a union bound)",
    formula=_lemma13_m,
    quantity="normalization parameter m (number of samples per released vector)",
    regime=(Condition("T >= 1 integer", _T_pos),
            Condition("0 < beta < 1", _beta_01),
            Condition("0 < c < 1/2", lambda p: 0 < p["c"] < 0.5),
            Condition("0 < rho <= 1", lambda p: 0 < p["rho"] <= 1)),
    errata=("m = 2 ln(T/beta)/(c^2 rho^2) is not justified: the union bound runs over (sample, round) pairs, "
            "<= T^2 of them; use ln(T^2/beta). On a constructed stream (T = 200, beta = 0.1) the pairs' union "
            "fails in ~34% of runs at the printed m = 152 and in none at m = 257 (checks printed-m-pairs-union, "
            "pairs-union).",),
    reconstructed=True,
    checks=(Check("single-draw-hoeffding", "exact", dp_winnow_regret.check_lemma13_single_draw,
                  "exact binomial tail <= e^{-m mu^2/2}; T^2 e^{-m c^2 rho^2/2} <= beta at the registered m"),
            Check("runs", "probabilistic", dp_winnow_regret.check_lemma13_runs,
                  "runs where a released-vector mistake has shadow margin > c rho, rate vs beta"),
            Check("pairs-union", "probabilistic", dp_winnow_regret.check_lemma13_pairs_union,
                  "some released sample errs on a round with shadow margin > c rho (the proof's union over "
                  "(sample, round) pairs), constructed stream, rate vs beta at the registered m"),
            Check("printed-m-pairs-union", "probabilistic", dp_winnow_regret.check_lemma13_printed_m_pairs_union,
                  "erratum: the same at the printed m = 2 ln(T/beta)/(c^2 rho^2) fails", erratum_form='reconstructed')),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/lemma-14",
    statement=("For any (obliviously chosen) sequence of examples consistent with a rho-margin halfspace, with "
               "probability at least 1 - beta, DP-Winnow performs fewer than log d/((1-c) eta rho - eta^2/2) "
               "updates. Thus with K = log d/((1-c) eta rho - eta^2/2) the condition k < K is never violated."),
    latex=r"\#\text{updates}<\frac{\log d}{(1-c)\eta\rho-\eta^2/2}\ \text{w.p.}\ \ge1-\beta",
    kind=ClaimKind.UPDATE_BOUND,
    source="Sec. 4.2.2, Lemma 14 (K <-> eta circularity with Lemma 11 resolved in closed form)",
    formula=_lemma14_updates,
    quantity="update bound K (the closed form K* = lemma14_k_star resolves the K <-> eta circularity)",
    regime=(Condition("d >= 2", lambda p: p["d"] >= 2),
            Condition("0 < eta < 2 (1 - c) rho", lambda p: 0 < p["eta"] < 2 * (1 - p["c"]) * p["rho"]),
            Condition("0 <= c < 1/2", lambda p: 0 <= p["c"] < 0.5)),
    errata=("K depends on eta (Lemma 14) and eta on K (Lemma 11); the text does not solve this. Closed form "
            "K* = ceil(((ln d + a^2/2)/((1-c) a rho))^2), a = eps/(8 sqrt(2 m ln(2/delta))) (derived here).",),
    checks=(Check("k-star", "deterministic", dp_winnow_regret.check_lemma14_k_star,
                  "g(K) <= K at K*, 2K*, 10K* over a grid"),
            Check("runs", "probabilistic", dp_winnow_regret.check_lemma14_runs,
                  "runs with >= K updates (or the cap reached), rate vs beta"),
            Check("coupling", "exact", dp_winnow_regret.check_lemma14_coupling,
                  "ConfidentWinnow (b = 1) replayed on the update examples reproduces the shadow weights")),
), mutants=MUTANTS)

register(Claim(
    id="decision-lists-winnow/lemma-15",
    statement=("(Blum--Singh; Dhagat--Hellerstein; Valiant) Every monotone 1-decision list over d variables with "
               "length r and D alternations can be represented by a halfspace over d+1 variables with margin "
               "Omega(1/r^D). The d -> 2d transform z = (x, -x), v' = (v+, v-) gives nonnegative weights with "
               "the same margin."),
    latex=r"\rho=\Omega\!\left(1/r^{D}\right)",
    kind=ClaimKind.STRUCTURAL_IDENTITY,
    source="Sec. 4.3, Lemma 15 (number inferred; Blum & Singh 1990, Dhagat & Hellerstein 1994, Valiant 1999)",
    formula=_lemma15_margin,
    quantity="margin lower bound C_15 / r^D (exponent of r is -D)",
    hidden_constants={"C_15": 1.0},
    regime=(Condition("r >= 2", lambda p: p["r"] >= 2),
            Condition("1 <= D <= r - 1", lambda p: 1 <= p["D"] <= p["r"] - 1)),
    errata=("The 2d transform formula is missing from the text (reconstructed: z = (x, -x), v' = (v+, v-)).",
            "The construction must give weight 0 to the final run of rules sharing the default's bit, "
            "otherwise the margin is Theta(r^-(D+1)) (check printed-recipe-margin: 0.31 of the bound at r = 13).",
            "For the construction, C_15 = 1/3 suffices: margin >= (1/3)(D/(r+D-1))^D (derived here)."),
    checks=(Check("exhaustive-construction", "exact", decision_lists_via_winnow.check_lemma15_construction,
                  "exact representation and margin >= (1/3)(D/(r+D-1))^D on all inputs, d <= 11; 2d transform"),
            Check("printed-recipe-margin", "exact", decision_lists_via_winnow.check_lemma15_printed_recipe,
                  "erratum: the recipe without the final-run deletion falls below the margin bound", erratum_form='reconstructed'),
            Check("dp-winnow-end-to-end", "probabilistic", decision_lists_via_winnow.check_decision_list_dp_winnow,
                  "DP-Winnow on encoded decision-list streams (dimension 2(d+1)), parametric Theorem 12 "
                  "bound with rho = realised margin, failure rate vs 2 beta")),
), mutants=MUTANTS)
