"""Boosting the success probability of a robust learner: Observation 8 (App. A.2) of Ghazi, Kumar, Manurangsi &
Nguyen, "Robust and Private Learning of Halfspaces" (AISTATS 2021, arXiv:2011.14580), paper id ``robust-halfspaces``.

A (gamma, gamma')-robust learner A with failure probability xi, accuracy alpha and m samples yields one with
failure probability xi' and accuracy 1.1 alpha: run A ``T`` times, each on m fresh samples, then draw ``M`` fresh
samples and output the candidate with the smallest empirical gamma'-margin error.

Errata (Observation 8), both corrected here:

* the paper sets T = ceil(log(0.5 xi')/log(1 - xi)) and argues "1 - (1 - xi)^T >= 1 - 0.5 xi'", which reads xi as
  the *success* probability; with xi the failure probability (the paper's own definition) all T runs fail with
  probability xi^T, so T = ceil(log(0.5 xi')/log xi) (e.g. xi = 0.9, xi' = 0.01: T = 51, the printed formula gives
  3 and all three runs fail with probability 0.729);
* the selection must use the gamma'-margin error (printed: the gamma-margin).

The selection step reads the data, so the boosted learner is not differentially private as written (the paper
does not discuss it; a private selection would be needed) -- this class makes no privacy claim.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Callable

import numpy as np

from privbound._validation import Interval, check_int, check_rng, validate_parameters
from privbound.learners.robust_halfspaces.robustness import margin_error

__all__ = ["obs8_runs", "obs8_selection_size", "BoostedLearner"]


def obs8_runs(xi: float, xi_prime: float) -> int:
    """Observation 8's number of runs, corrected: T = ceil(ln(0.5 xi') / ln xi), so that xi^T <= 0.5 xi'.

    Erratum (Observation 8): the paper sets T = ceil(log(0.5 xi')/log(1 - xi)), reading the failure
    probability xi as a success probability.
    """
    return max(1, math.ceil(math.log(0.5 * xi_prime) / math.log(xi) - 1e-12))


def obs8_selection_size(alpha: float, T: int, constant: float = 1e6) -> int:
    """Observation 8's selection sample size M = ceil(constant log T / alpha) (paper: constant = 1e6, natural log).

    ``max(T, 2)`` is used inside the log so that a single run still gets a positive M.
    """
    return max(1, math.ceil(constant * math.log(max(T, 2)) / alpha))


class BoostedLearner:
    """Observation 8: T runs of a base learner on fresh samples, selection by empirical gamma'-margin error.

    Parameters
    ----------
    make_learner : callable ``() -> learner`` with ``fit(X, y)`` setting ``coef_`` (a fresh learner per run).
    xi, xi_prime : the base learner's failure probability and the target one (T = :func:`obs8_runs` unless ``n_runs``).
    alpha : the accuracy parameter (M = :func:`obs8_selection_size` unless ``n_select``).
    gamma_prime : the margin of the selection's error (the corrected Observation 8: gamma', not gamma).
    n_runs, n_select : override T and M (e.g. scaled-down constants).
    selection_constant : the constant 1e6 of M = ceil(1e6 log T / alpha).

    ``fit_oracle(sample, m, rng)`` draws samples with ``sample(size, rng) -> (X, y)`` (fresh i.i.d. samples from the
    distribution D; App. A's learners may ask an oracle for samples). Fitted attributes: ``coef_`` (the selected
    candidate), ``candidates_`` (T, d), ``selection_errors_`` (T,), ``n_runs_``, ``n_select_``,
    ``samples_used_`` = T m + M.
    """

    _parameter_constraints = {
        "xi": [Interval(Real, 0, 1, closed="neither")],
        "xi_prime": [Interval(Real, 0, 1, closed="neither")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "gamma_prime": [Interval(Real, 0, 1, closed="both")],
        "n_runs": [Interval(Integral, 1, None, closed="left"), None],
        "n_select": [Interval(Integral, 1, None, closed="left"), None],
        "selection_constant": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, make_learner: Callable[[], Any], *, xi: float, xi_prime: float, alpha: float, gamma_prime: float,
                 n_runs: int | None = None, n_select: int | None = None, selection_constant: float = 1e6):
        self.make_learner = make_learner
        self.xi = xi
        self.xi_prime = xi_prime
        self.alpha = alpha
        self.gamma_prime = gamma_prime
        self.n_runs = n_runs
        self.n_select = n_select
        self.selection_constant = selection_constant

    def runs(self) -> int:
        """T: ``n_runs`` if given, else the corrected Observation 8 count."""
        validate_parameters(self)
        return obs8_runs(float(self.xi), float(self.xi_prime)) if self.n_runs is None else int(self.n_runs)

    def selection_size(self) -> int:
        """M: ``n_select`` if given, else ceil(selection_constant log T / alpha)."""
        validate_parameters(self)
        if self.n_select is not None:
            return int(self.n_select)
        return obs8_selection_size(float(self.alpha), self.runs(), float(self.selection_constant))

    def fit_oracle(self, sample: Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]], m: int,
                   rng: np.random.Generator) -> "BoostedLearner":
        """Run the base learner T times on m fresh samples each, then select on M fresh samples."""
        rng = check_rng(rng)
        m = check_int(m, "m", low=1)
        T, M = self.runs(), self.selection_size()
        cands = []
        for _ in range(T):
            X, y = sample(m, rng)
            cands.append(np.asarray(self.make_learner().fit(X, y).coef_, float))
        W = np.stack(cands)
        Xs, ys = sample(M, rng)
        nrm = np.linalg.norm(W, axis=1)
        unit = np.divide(W, nrm[:, None], out=np.zeros_like(W), where=nrm[:, None] > 0)  # robust risk = err of w/||w||
        errs = np.atleast_1d(margin_error(unit, Xs, ys, float(self.gamma_prime)))
        self.candidates_ = W
        self.selection_errors_ = errs
        self.coef_ = W[int(np.argmin(errs))]
        self.n_runs_, self.n_select_ = T, M
        self.samples_used_ = T * m + M
        return self
