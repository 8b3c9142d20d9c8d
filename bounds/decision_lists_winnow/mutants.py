"""Mutants of the checks of "Privately Learning Decision Lists and a Differentially Private Winnow": for each
check, the learner or formula it guards broken the way a real bug would break it.

Each :class:`~privbound.mutation.Mutant` patches the guarded object in the module where the
check looks it up (:func:`privbound.mutation.patch`), for the duration of one run of the check
(:func:`privbound.bounds.run_mutants`). ``MUTANTS[(claim number, check name)]`` is the tuple attached
to that check in :mod:`.claims`. The broken variants are small wrappers around the real code
(the rate, a constant, a sign, a noise scale or a formula changed), so a mutant changes only what
it says.

Checks without a mutant (``WITHOUT_MUTANTS``): the printed-form (erratum) checks, which fail on the
real code by design, and ``calibrated-vacuity`` (Theorems 2 and 12), which is always inconclusive (the
calibrated bound exceeds T by 13 orders of magnitude; it reports, it cannot fail).
"""

from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import replace
from typing import Any, Callable, ContextManager

import numpy as np

from privbound.bounds.decision_lists_winnow import dp_winnow_regret
from privbound.bounds.decision_lists_winnow.formulas import monotone_dl_to_halfspace_printed
from privbound.audit.targets.decision_lists_winnow import (
    EM_HALF_DROPPED,
    FROM_PRIVACY_IGNORES_RELATION,
    ROUND1_BUDGET_DOUBLED,
)
from privbound.bounds.registry import PRINTED_FORM
from privbound.learners.decision_lists_winnow import winnow as _w
from privbound.learners.mechanisms import AboveThreshold
from privbound.mutation import Mutant, patch, together

__all__ = ["MUTANTS", "WITHOUT_MUTANTS"]

_B = "privbound.bounds.decision_lists_winnow."

# ----------------------------------------------------------------------------- Winnow's update


def _rate(factor: float):
    return patch(_w, "multiplicative_update",
                 lambda update: lambda logw, eta, y, x: update(logw, factor * eta, y, x))


RATE_HALVED = Mutant("update-rate-halved", "Winnow's multiplicative step uses eta/2 (w_j e^{eta y x_j / 2})",
                     _rate(0.5))
SIGN_FLIPPED = Mutant("update-sign-flipped", "Winnow's multiplicative step has the wrong sign (w_j e^{-eta y x_j})",
                      _rate(-1.0))


def _dp_winnow_variant(**change: Callable[[Any], Any]) -> Callable[[], ContextManager[Any]]:
    """DP-Winnow runs (single and batched) with parameters changed internally, e.g. L -> 2L, while the
    object (and so every bound a check computes from it) keeps the declared ones."""

    def variant(self):
        v = copy.copy(self)
        for k, f in change.items():
            setattr(v, k, f(getattr(self, k)))
        return v

    def on_variant(method):
        return lambda self, *a, **k: method(variant(self), *a, **k)

    return together(patch(_w.DPWinnow, "run_batch", on_variant), patch(_w.DPWinnow, "run", on_variant))


def _stale_release() -> Callable[[], ContextManager[Any]]:
    """run_batch forgets to install the new sample: the released vector stays the one of the previous update."""

    def make(update_fired):
        def broken(self, st, runs, t_fire, X, y, rng):
            before = st.tw.copy()
            update_fired(self, st, runs, t_fire, X, y, rng)
            st.tw[:] = before
        return broken

    return patch(_w.DPWinnow, "_update_fired", make)


def _count_not_reset() -> Callable[[], ContextManager[Any]]:
    """run_batch forgets to reset the window's mistake count after an update."""

    def make(update_fired):
        def broken(self, st, runs, t_fire, X, y, rng):
            before = st.count[runs].copy()
            update_fired(self, st, runs, t_fire, X, y, rng)
            st.count[runs] = before
        return broken

    return patch(_w.DPWinnow, "_update_fired", make)


def _noise_scales(threshold: float = 1.0, query: float = 1.0) -> Callable[[], ContextManager[Any]]:
    """AboveThreshold's (threshold, query) noise scales multiplied by the factors, where every AboveThreshold that
    runs reads them (:meth:`~privbound.learners.mechanisms.AboveThreshold.noise_scales`)."""

    def make(scales):
        def broken(epsilon):
            b_thr, b_q = scales(epsilon)
            return threshold * b_thr, query * b_q

        return staticmethod(broken)

    return patch(AboveThreshold, "noise_scales", make)


# ----------------------------------------------------------------------------- exponential mechanism / DP-GreedyCover


def _em(make):
    return patch(_B + "exponential_mechanism", "exponential_mechanism_log_probabilities", make)


def _greedy(module: str, make):
    return patch(module, "greedy_cover_sample", make)


def _greedy_eps(factor: float, module: str = _B + "greedy_cover"):
    return _greedy(module, lambda f: (lambda Phi, y, eps, rng, size, **kw: f(Phi, y, factor * eps, rng, size, **kw)))


def _greedy_sign(module: str = _B + "greedy_cover"):
    return _greedy(module, lambda f: (lambda Phi, y, eps, rng, size, **kw: f(Phi, y, eps, rng, size, sign=-1.0)))


def _greedy_split(module: str = _B + "greedy_cover"):
    """The privacy budget split evenly over the M rounds (eps_step / M per round: naive composition)."""
    return _greedy(module, lambda f: (lambda Phi, y, eps, rng, size, **kw:
                                      f(Phi, y, eps / np.asarray(Phi).shape[1], rng, size, **kw)))


def _greedy_flipped_bits(module: str = _B + "greedy_cover"):
    def make(f):
        def broken(*a, **kw):
            order, bits, errors = f(*a, **kw)
            return order, (1 - bits).astype(bits.dtype), errors
        return broken
    return _greedy(module, make)


def _greedy_reuse(module: str = _B + "greedy_cover"):
    """Every round's exponential mechanism runs over all features, not only the remaining ones."""

    def make(_f):
        def broken(Phi, y, eps, rng, size, **kw):
            from privbound.learners.mechanisms import exponential_mechanism_log_probabilities as lp

            Phi = np.asarray(Phi, dtype=bool)
            y = np.asarray(y)
            n, M = Phi.shape
            order = np.empty((size, M), dtype=np.int64)
            bits = np.empty((size, M), dtype=np.int8)
            errors = np.empty((size, M), dtype=np.int64)
            for r in range(size):
                alive = np.ones(n, dtype=bool)
                for j in range(M):
                    err = np.array([[np.count_nonzero(alive & Phi[:, f] & (y != b)) for b in (0, 1)] for f in range(M)])
                    p = np.exp(lp(-err.ravel().astype(float), eps))
                    k = int(rng.choice(2 * M, p=p / p.sum()))
                    order[r, j], bits[r, j], errors[r, j] = k // 2, k % 2, err[k // 2, k % 2]
                    alive &= ~Phi[:, k // 2]
            return order, bits, errors
        return broken

    return _greedy(module, make)


# ----------------------------------------------------------------------------- the table


def _m_printed(T, beta, c, rho):
    return int(math.ceil(2.0 * math.log(T / beta) / (c * c * rho * rho)))


def _k_star_without_a2(epsilon, delta, d, rho, m, c):
    a = epsilon / (8.0 * math.sqrt(2.0 * m * math.log(2.0 / delta)))
    return int(math.ceil((math.log(d) / ((1.0 - c) * a * rho)) ** 2))


def _m_linear(T, beta, c, rho):
    return int(math.ceil(2.0 * math.log(T * T / beta) / (c * rho)))


def _eps_hat_without_4(epsilon, delta, K):
    return epsilon / math.sqrt(2.0 * K * math.log(2.0 / delta))


def _witness_truncated(cj, fz):
    """The proof's witness deleting f_z and every later rule."""
    idx = [f for f, _ in cj].index(fz) if fz in [f for f, _ in cj] else len(cj)
    return cj[:idx]


def _embedding_unsigned(X):
    return np.concatenate([np.asarray(X), np.asarray(X)], axis=-1)




def _fresh(apply: Callable[[], ContextManager[Any]]) -> Callable[[], ContextManager[Any]]:
    """``apply`` with the shared DP-Winnow simulation of :mod:`.dp_winnow_regret` dropped before and after, so
    that a check run under the mutant simulates the broken learner (and the real one is simulated afresh)."""

    @contextlib.contextmanager
    def cm():
        dp_winnow_regret._RUNS_CACHE.clear()
        try:
            with apply():
                yield
        finally:
            dp_winnow_regret._RUNS_CACHE.clear()

    return cm


_TABLE: dict[tuple[str, str], tuple[Mutant, ...]] = {
    ("theorem-1", "sample-size-scaling"): (
        Mutant("eps-split-over-rounds", "DP-GreedyCover runs each round at eps_step / M (naive composition): "
               "n ~ |F|^2 log|F|", _greedy_split(), profile="default",
               power="smoke fits 3 points (1 degree of freedom): its 99.9% slope interval cannot exclude 2"),),
    ("theorem-2", "exponents"): (
        Mutant("lemma13-m-linear-in-c-rho", "Lemma 13's m with c rho instead of (c rho)^2: the rho exponent "
               "becomes -4.5", patch(_w, "lemma13_m", lambda _: _m_linear)),),
    ("lemma-3", "exact-dp"): (
        Mutant("em-weight-exp-eps-q", "the exponential mechanism samples with exp(eps q) (factor 1/2 dropped)",
               _em(lambda f: (lambda q, eps: f(q, 2.0 * eps)))),),
    ("lemma-3", "exact-utility"): (
        Mutant("em-printed-sign", "the exponential mechanism samples with exp(-eps q/2) (the printed sign)",
               _em(lambda f: (lambda q, eps: f(-np.asarray(q, dtype=float), eps)))),
        Mutant("em-eps-halved", "the exponential mechanism samples with exp(eps q/4)",
               _em(lambda f: (lambda q, eps: f(q, eps / 2.0))))),
    ("proposition-6", "proof-witness"): (
        Mutant("witness-truncated", "the proof's witness deletes f_z and every later rule (the default too)",
               patch(_B + "greedy_cover", "prop6_witness_next", lambda _: _witness_truncated)),),
    ("proposition-6", "em-choices"): (
        Mutant("features-reused", "DP-GreedyCover offers already chosen features again in later rounds",
               _greedy_reuse()),),
    ("theorem-7", "training-error"): (
        Mutant("em-printed-sign", "DP-GreedyCover samples with the printed sign exp(-eps q/2)", _greedy_sign(),
               power="E is 8.3x the largest training error seen (8 of E = 66.5 on the noisy-block sample): "
                     "eps_step/8 (64 errors at most) still passes; an 8x worse learner is the limit"),),
    ("theorem-7", "exact-privacy"): (
        Mutant("one-round-claim", "the replace-one claim is eps_step, one exponential-mechanism round's "
               "guarantee, for the whole run",
               patch(_B + "greedy_cover", "greedy_cover_epsilon_replace", lambda _: lambda eps_step, delta: eps_step),
               power="the set-cover claim is loose on these small samples: dropping its + eps_step/2 term or its "
                     "ln(1/delta) factor still covers the exact delta; claiming one round's eps_step does not"),),
    ("theorem-7", "from-privacy"): (FROM_PRIVACY_IGNORES_RELATION,),
    ("theorem-7", "audit"): (EM_HALF_DROPPED, ROUND1_BUDGET_DOUBLED),
    ("theorem-7", "pac-accuracy"): (
        Mutant("em-printed-sign", "DP-GreedyCover samples with the printed sign exp(-eps q/2)", _greedy_sign(),
               power="the reconstructed n = 1382 is far above what this 16-point instance needs: the true error "
                     "is 0 in every run even at eps_step/8, so only a broken selection rule is visible"),),
    ("theorem-7", "error-identity"): (
        Mutant("output-bits-flipped", "DP-GreedyCover reports 1 - b for the chosen rules' bits",
               _greedy_flipped_bits()),),
    ("lemma-9", "sequences"): (RATE_HALVED, SIGN_FLIPPED),
    ("lemma-9", "winnow-sweep"): (RATE_HALVED,),
    ("lemma-9", "intro-consequences"): (
        Mutant("update-rate-doubled", "Winnow's multiplicative step uses 2 eta", _rate(2.0),
               power="a halved rate is not visible here: at the optimal eta = rho it costs only 4/3 in the count "
                     "(ln d/(rho^2/2 - ...) vs ln d/(3 rho^2/8)); the check sees 0.92 of the bound under it"),),
    ("lemma-10", "mc-accuracy"): (
        Mutant("query-noise-x4", "AboveThreshold's query noise Lap(16/eps) instead of Lap(4/eps)",
               _noise_scales(query=4.0),
               power="Lemma 10's alpha is loose: with alpha halved (4 ln(2T/beta)/eps) the worst failure rate is "
                     "0.0025 and with the query noise doubled 0.002, against beta = 0.2; the check sees a query "
                     "noise x4"),),
    ("lemma-10", "quadrature-dp"): (
        Mutant("query-noise-halved", "AboveThreshold's query noise Lap(2/eps) instead of Lap(4/eps)",
               _noise_scales(query=0.5)),
        Mutant("threshold-noise-halved", "AboveThreshold's threshold noise Lap(1/eps) instead of Lap(2/eps)",
               _noise_scales(threshold=0.5))),
    ("lemma-11", "calibration-grid"): (
        Mutant("eps-hat-without-4", "Lemma 11's eps_hat = eps/sqrt(2K ln(2/delta)) (the factor 4 dropped)",
               patch(_B + "dp_winnow_privacy", "lemma11_epsilon_hat", lambda _: _eps_hat_without_4)),),
    ("lemma-11", "from-privacy"): (
        Mutant("eta-without-m", "DPWinnow.from_privacy's eta = eps/(8 sqrt(2K ln(2/delta))) (m dropped)",
               patch(_w, "lemma11_eta", lambda eta: lambda e, d, K, m: eta(e, d, K, 1)),
               power="eps_hat without its factor 4 is not visible here: Lemma 14's K is in the thousands at every "
                     "grid point, so eps_hat stays below 0.02 epsilon either way (calibration-grid sees it)"),),
    ("lemma-11", "dp-accounting"): (
        Mutant("eta-without-m", "Lemma 11's eta = eps/(8 sqrt(2K ln(2/delta))) (m dropped from the composition count)",
               patch(_B + "dp_winnow_privacy", "lemma11_eta", lambda eta: lambda e, d, K, m: eta(e, d, K, 1)),
               power="the accountants are ~1.7x below the claim here: eps_hat without its factor 4 gives 0.93 eps "
                     "and eta x2 (8 -> 4) 0.86 eps, both pass"),),
    ("lemma-11", "audit"): (
        Mutant("m-x1000", "DP-Winnow releases the empirical distribution of 1000 m samples (the accounting "
               "assumes m)", _dp_winnow_variant(m=lambda m: 1000 * m),
               power="the claim (basic composition, 4.0) is ~9x the auditor's 0.44: only a release close to the "
                     "shadow weights crosses it"),),
    ("theorem-12", "parametric"): (
        Mutant("svt-threshold-tripled", "DP-Winnow's AboveThreshold uses the threshold 3L",
               _dp_winnow_variant(L=lambda L: 3.0 * L),
               power="at L = alpha a window may hold 2 alpha + 1 mistakes and holds ~alpha: the threshold doubled "
                     "reaches 0.98 of the bound, tripled fails; parametric-tight (L = 4 alpha) sees the doubling"),),
    ("theorem-12", "parametric-tight"): (
        Mutant("svt-threshold-doubled", "DP-Winnow's AboveThreshold uses the threshold 2L",
               _dp_winnow_variant(L=lambda L: 2.0 * L)),),
    ("lemma-13", "single-draw-hoeffding"): (
        Mutant("m-union-over-rounds", "Lemma 13's m with ln(T/beta) (union over rounds only)",
               patch(_B + "dp_winnow_regret", "lemma13_m", lambda _: _m_printed)),),
    ("lemma-13", "runs"): (
        Mutant("m-divided-by-50", "DP-Winnow draws m/50 samples per released vector",
               _dp_winnow_variant(m=lambda m: max(1, m // 50))),
        Mutant("released-vector-not-refreshed",
               "DP-Winnow draws the m samples but keeps releasing the previous vector (uniform forever)",
               _stale_release())),
    ("lemma-13", "pairs-union"): (
        Mutant("m-union-over-rounds", "Lemma 13's m with ln(T/beta) (union over rounds only)",
               patch(_B + "dp_winnow_regret", "lemma13_m", lambda _: _m_printed)),),
    ("lemma-14", "k-star"): (
        Mutant("k-star-without-a2-term", "the closed-form K* without the a^2/2 term",
               patch(_B + "dp_winnow_regret", "lemma14_k_star", lambda _: _k_star_without_a2)),),
    ("lemma-14", "runs"): (
        Mutant("window-count-not-reset", "DP-Winnow does not reset the window's mistake count after an update "
               "(the next instance fires at once, with an empty cache)", _count_not_reset(),
               power="a learner that never converges (update sign flipped) is not visible at T <= 20000: a window "
                     "holds ~alpha = 83 mistakes, so <= ~120 windows fit, fewer than K = 167"),),
    ("lemma-14", "coupling"): (
        Mutant("shadow-rate-doubled", "DP-Winnow's shadow update uses 2 eta",
               _dp_winnow_variant(eta=lambda e: 2.0 * e)),),
    ("lemma-15", "exhaustive-construction"): (
        Mutant("no-final-run-deletion", "the construction keeps the final run of rules sharing the default's bit",
               patch(_B + "decision_lists_via_winnow", "monotone_dl_to_halfspace",
                     lambda _: monotone_dl_to_halfspace_printed)),
        Mutant("embedding-unsigned", "the d -> 2d embedding z = (x, x) instead of (x, -x)",
               patch(_B + "decision_lists_via_winnow", "nonnegative_embedding", lambda _: _embedding_unsigned))),
    ("lemma-15", "dp-winnow-end-to-end"): (
        Mutant("svt-threshold-tripled", "DP-Winnow's AboveThreshold uses the threshold 3L",
               _dp_winnow_variant(L=lambda L: 3.0 * L),
               power="as theorem-12:parametric (L = alpha): windows must hold > 2 alpha + 1 mistakes to fail"),),
}


MUTANTS: dict[tuple[str, str], tuple[Mutant, ...]] = {
    key: tuple(replace(mu, apply=_fresh(mu.apply)) for mu in muts) for key, muts in _TABLE.items()
}
"""Each check's mutants (``_TABLE``), each run on a fresh DP-Winnow simulation (:func:`_fresh`)."""

WITHOUT_MUTANTS: dict[tuple[str, str], str] = {
    **{key: PRINTED_FORM
       for key in (("lemma-3", "printed-sign-utility"), ("lemma-11", "printed-two-part-grid"),
                   ("lemma-13", "printed-m-pairs-union"), ("lemma-15", "printed-recipe-margin"),
                   ("theorem-12", "window-count"))},
    **{key: "always inconclusive: the calibrated bound exceeds T by 13 orders of magnitude (it reports, it cannot fail)"
       for key in (("theorem-2", "calibrated-vacuity"), ("theorem-12", "calibrated-vacuity"))},
}
"""The checks without a mutant, each with the reason."""
