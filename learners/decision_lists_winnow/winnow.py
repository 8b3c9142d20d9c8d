"""Winnow, ConfidentWinnow and DP-Winnow (paper ``decision-lists-winnow``, Sec. 4).

Implements, following the reading notes ``dp-decision-lists-winnow.notes.md``:

* :class:`Winnow` -- normalised multiplicative weights, update on mistakes (notes Sec. 3.5);
* :class:`ConfidentWinnow` -- Algorithm of Sec. 4.1 (notes Sec. 3.6): update on mistakes
  and on unconfident rounds |<w,x>| <= c rho when the adversary's bit b = 1 (bits
  default to all ones); Lemma 9 bounds the number of updates;
* :class:`DPWinnow` -- Algorithm 4.2 (notes Sec. 3.8): AboveThreshold over the mistake
  count of the current window (a query every round, note 1), the cached first mistake,
  the multiplicative update of the hidden (shadow) weights, and the release of the
  empirical distribution of m samples; empty-cache branch (note 2) and the cap k < K
  (note 3). Calibration of Lemma 11 (with K* of the Lemma 14 note and m of Lemma 13
  [revised]) via :meth:`DPWinnow.from_privacy`, or any parametric (eps_hat, eta, m, L, K);
* batched runs: :func:`confident_winnow_batch` (many sequences at once, also against
  the greedy adaptive adversary) and :meth:`DPWinnow.run_batch` (many independent
  DP-Winnow runs on one oblivious sequence);
* instance generators G1--G5 of notes Sec. 8 (:func:`generate_instance`).

Conventions: x in {-1,1}^d, y in {-1,1}; sgn(0) counts as a mistake (notes Sec. 3.8
note 5, conservative); natural logarithms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special


from privbound.learners.validation import check_delta, check_epsilon, check_int, check_real, check_rng
from privbound.learners.decision_lists_winnow.decision_lists import (
    evaluate_monotone_dl,
    monotone_dl_to_halfspace,
    nonnegative_embedding,
    nonnegative_weights,
    random_monotone_dl,
)
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.learners.mechanisms import AboveThreshold, PrivacyGuarantee

__all__ = [
    "OnlineTrace",
    "BatchTrace",
    "Winnow",
    "ConfidentWinnow",
    "DPWinnow",
    "DPWinnowBatch",
    "confident_winnow_batch",
    "winnow_update_bound",
    "lemma13_m",
    "lemma14_k_star",
    "advanced_composition",
    "dp_winnow_epsilon_sharp",
    "dp_winnow_epsilon_two_part",
    "Instance",
    "generate_instance",
    "GENERATORS",
]


# ============================================================================ formulas (the learners' own accounting)


def winnow_update_bound(d: float, rho: float, eta: float, c: float = 0.0) -> float:
    """Lemma 9: ln d / ((1 - c) eta rho - eta^2/2) (inf when the denominator is <= 0)."""
    den = (1.0 - c) * eta * rho - eta * eta / 2.0
    return math.log(d) / den if den > 0 else math.inf


def lemma13_m(T: int, beta: float, c: float, rho: float) -> int:
    """Lemma 13 [RECON, revised]: m = ceil(2 ln(T^2/beta) / (c^2 rho^2))."""
    return int(math.ceil(2.0 * math.log(T * T / beta) / (c * c * rho * rho)))


def lemma14_k_star(epsilon: float, delta: float, d: float, rho: float, m: float, c: float) -> int:
    """Lemma 14 circularity note: K* = ceil(((ln d + a^2/2)/((1-c) a rho))^2), a = eps/(8 sqrt(2 m ln(2/delta)))."""
    a = epsilon / (8.0 * math.sqrt(2.0 * m * math.log(2.0 / delta)))
    return int(math.ceil(((math.log(d) + a * a / 2.0) / ((1.0 - c) * a * rho)) ** 2))


def advanced_composition(epsilon_0: float, k: float, delta_prime: float) -> float:
    """Dwork--Rothblum--Vadhan: eps0 sqrt(2k ln(1/delta')) + k eps0 (e^eps0 - 1)."""
    return epsilon_0 * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) + k * epsilon_0 * math.expm1(epsilon_0)


def dp_winnow_epsilon_sharp(epsilon_hat: float, eta: float, m: int, K: int, delta: float) -> float:
    """Notes Sec. 5.4 [revised]: one SVT instance pays eps_hat; mK draws, each 4 eta-DP, advanced composition at delta."""
    return epsilon_hat + advanced_composition(4.0 * eta, m * K, delta)


def dp_winnow_epsilon_two_part(epsilon_hat: float, eta: float, m: int, K: int, delta: float) -> float:
    """Notes Sec. 5.4: K+1 SVT instances and mK draws, advanced composition with delta/2 each."""
    return advanced_composition(epsilon_hat, K + 1, delta / 2.0) + advanced_composition(4.0 * eta, m * K, delta / 2.0)


# ============================================================================ traces


@dataclass(frozen=True)
class OnlineTrace:
    """One run of an online learner on a sequence of T rounds.

    ``update_rounds`` are the (0-based) rounds where an update happened; ``released``
    holds the released hypotheses' sufficient statistics: for (Confident)Winnow the
    weight vector after each update (U, d); for DP-Winnow the sample counts n_u
    (U, d) whose empirical distribution n_u/m is the released vector from round
    update_rounds[u] + 1 on. ``update_examples`` is the round whose example was
    used for each update (-1 for an empty-cache firing).
    """

    predictions: np.ndarray
    mistakes: int
    updates: int
    update_rounds: np.ndarray
    released: np.ndarray
    weights: np.ndarray
    update_examples: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    shadow_history: np.ndarray | None = None
    lemma13_violations: int = 0


@dataclass(frozen=True)
class BatchTrace:
    """Many runs at once: per-run ``mistakes`` and ``updates`` (B,) and the final log-weights (B, d)."""

    mistakes: np.ndarray
    updates: np.ndarray
    predictions: np.ndarray | None
    log_weights: np.ndarray
    min_potential_drop: np.ndarray | None = None
    max_update_margin: np.ndarray | None = None


def _log_normalise(a: np.ndarray) -> np.ndarray:
    """Rows of log-weights minus their log-sum-exp (a plain numpy logsumexp: scipy's per-call overhead
    dominates the many small calls of the per-round loops)."""
    mx = a.max(axis=-1, keepdims=True)
    return a - (mx + np.log(np.exp(a - mx).sum(axis=-1, keepdims=True)))


def _sgn(v: np.ndarray) -> np.ndarray:
    return np.sign(v).astype(np.int64)


def _check_sequence(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (T, d), got shape {X.shape}")
    if not np.all(np.abs(X) == 1):
        raise ValueError("X must have entries in {-1, 1} (Sec. 4 domain)")
    y = np.asarray(y)
    if y.shape != (X.shape[0],) or not np.all(np.abs(y) == 1):
        raise ValueError(f"y must have shape ({X.shape[0]},) and labels in {{-1, 1}}")
    return X, y.astype(np.int64)


# ============================================================================ (Confident)Winnow


def confident_winnow_batch(X: np.ndarray, y: np.ndarray, eta: float, c: float = 0.0, rho: float = 0.0,
                           b: np.ndarray | None = None, v: np.ndarray | None = None,
                           keep_predictions: bool = False) -> BatchTrace:
    """ConfidentWinnow on B sequences at once: X (B, T, d), y (B, T), bits b (B, T) (default all ones).

    Update iff sgn<w,x> != y (sgn(0) is a mistake) or (|<w,x>| <= c rho and b = 1).
    With ``v`` (B, d) given (a nonnegative, l1-normalised target), also records the
    smallest drop of the potential KL(v || w) over the updates of each run (Lemma 9's
    proof, check W3) and the largest y<w,x> at an update.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    B, T, d = X.shape
    logw = np.full((B, d), -math.log(d))
    mistakes = np.zeros(B, dtype=np.int64)
    updates = np.zeros(B, dtype=np.int64)
    preds = np.empty((B, T), dtype=np.int64) if keep_predictions else None
    min_drop = np.full(B, np.inf) if v is not None else None
    max_marg = np.full(B, -np.inf)
    if v is not None:
        v = np.asarray(v, dtype=float)
        with np.errstate(divide="ignore"):
            vlogv = np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0).sum(axis=1)
    for t in range(T):
        w = np.exp(logw)
        x = X[:, t, :]
        val = np.einsum("bd,bd->b", w, x)
        pred = _sgn(val)
        if preds is not None:
            preds[:, t] = pred
        mist = pred != y[:, t]
        mistakes += mist
        upd = mist
        if c > 0:
            bt = np.ones(B, dtype=bool) if b is None else np.asarray(b[:, t], dtype=bool)
            upd = upd | ((np.abs(val) <= c * rho) & bt)
        if not upd.any():
            continue
        yt = y[:, t]
        max_marg = np.where(upd, np.maximum(max_marg, yt * val), max_marg)
        new = _log_normalise(logw[upd] + eta * yt[upd, None] * x[upd])
        if v is not None:
            vv = v[upd]
            old_phi = vlogv[upd] - (vv * logw[upd]).sum(axis=1)
            new_phi = vlogv[upd] - (vv * new).sum(axis=1)
            min_drop[upd] = np.minimum(min_drop[upd], old_phi - new_phi)
        logw[upd] = new
        updates += upd
    return BatchTrace(mistakes, updates, preds, logw, min_drop, max_marg)


class ConfidentWinnow:
    """ConfidentWinnow (paper Sec. 4.1; notes Sec. 3.6) with learning rate ``eta``, ratio ``c`` and margin ``rho``.

    Lemma 9: for any sequence with a nonnegative rho-margin target and any bits,
    the number of updates is <= ln d / ((1-c) eta rho - eta^2/2). The boundary
    |<w,x>| = c rho is treated as unconfident (notes Sec. 3.6, for the Lemma 14 coupling).
    """

    def __init__(self, eta: float = 0.1, c: float = 0.25, rho: float = 0.1):
        self.eta = eta
        self.c = c
        self.rho = rho

    def _validate(self) -> None:
        check_real(self.eta, "eta", low=0.0, low_inclusive=False)
        check_real(self.c, "c", low=0.0, high=0.5, high_inclusive=False)
        check_real(self.rho, "rho", low=0.0)

    def update_bound(self, d: int) -> float:
        return winnow_update_bound(d, self.rho, self.eta, self.c)

    def run(self, X: Any, y: Any, b: Any = None) -> OnlineTrace:
        """Run on one sequence; ``b`` are the adversary's update bits (default all ones)."""
        self._validate()
        X, y = _check_sequence(X, y)
        T, d = X.shape
        bb = np.ones(T, dtype=bool) if b is None else np.asarray(b, dtype=bool)
        if bb.shape != (T,):
            raise ValueError(f"b must have shape ({T},), got {bb.shape}")
        logw = np.full(d, -math.log(d))
        preds = np.empty(T, dtype=np.int64)
        rounds, released = [], []
        mistakes = 0
        for t in range(T):
            w = np.exp(logw)
            val = float(w @ X[t])
            preds[t] = int(np.sign(val))
            mist = preds[t] != y[t]
            mistakes += int(mist)
            if mist or (self.c > 0 and abs(val) <= self.c * self.rho and bb[t]):
                logw = logw + self.eta * y[t] * X[t]
                logw -= special.logsumexp(logw)
                rounds.append(t)
                released.append(np.exp(logw))
        return OnlineTrace(preds, mistakes, len(rounds), np.array(rounds, dtype=np.int64),
                           np.array(released).reshape(len(rounds), d), np.exp(logw),
                           np.array(rounds, dtype=np.int64))

    def run_batch(self, X: np.ndarray, y: np.ndarray, b: np.ndarray | None = None, v: np.ndarray | None = None) -> BatchTrace:
        self._validate()
        return confident_winnow_batch(X, y, self.eta, self.c, self.rho, b, v)

    def run_greedy(self, pool_X: np.ndarray, pool_y: np.ndarray, T: int) -> BatchTrace:
        """Against the greedy adaptive adversary (notes Sec. 8): B independent games at once.

        Each round the adversary presents, from its pool (B, P, d) with labels (B, P),
        the point minimising y<w,x> against the current weights (bits all ones).
        """
        self._validate()
        pool_X = np.asarray(pool_X, dtype=float)
        pool_y = np.asarray(pool_y)
        B, P, d = pool_X.shape
        logw = np.full((B, d), -math.log(d))
        mistakes = np.zeros(B, dtype=np.int64)
        updates = np.zeros(B, dtype=np.int64)
        rows = np.arange(B)
        for _ in range(T):
            w = np.exp(logw)
            marg = pool_y * np.einsum("bpd,bd->bp", pool_X, w)
            k = marg.argmin(axis=1)
            x, yt, val = pool_X[rows, k], pool_y[rows, k], marg[rows, k] * pool_y[rows, k]
            mist = _sgn(val) != yt
            upd = mist | ((np.abs(val) <= self.c * self.rho) if self.c > 0 else False)
            mistakes += mist
            updates += upd
            if upd.any():
                logw[upd] = _log_normalise(logw[upd] + self.eta * yt[upd, None] * x[upd])
        return BatchTrace(mistakes, updates, None, logw)


class Winnow(ConfidentWinnow):
    """Classic normalised Winnow (Littlestone 1988; notes Sec. 3.5): ConfidentWinnow with c = 0.

    Mistake bound (Lemma 9 with c = 0): ln d / (eta rho - eta^2/2); 2 ln d / rho^2 at eta = rho.
    """

    def __init__(self, eta: float = 0.1, rho: float = 0.0):
        super().__init__(eta=eta, c=0.0, rho=rho)

    def _validate(self) -> None:
        check_real(self.eta, "eta", low=0.0, low_inclusive=False)


# ============================================================================ DP-Winnow


@dataclass(frozen=True)
class DPWinnowBatch:
    """Independent DP-Winnow runs on one sequence (arrays over trials).

    ``update_rounds`` (B, K) padded with -1; ``counts`` (B, K, d) the m-sample counts of
    each update; ``update_examples`` (B, K) the cached round used (-1: empty cache or no
    update); ``mistakes``/``updates`` (B,); ``lemma13_violations`` (B,) = rounds where the
    released vector erred although the shadow margin y<w,x> > c rho (needs c, rho);
    ``shadow_probabilities`` (B, K, d) with ``keep_shadow``: the hidden weight vector after
    each update, normalised to a probability vector (the distribution the m samples are drawn from).
    """

    update_rounds: np.ndarray
    counts: np.ndarray
    update_examples: np.ndarray
    mistakes: np.ndarray
    updates: np.ndarray
    lemma13_violations: np.ndarray
    capped: np.ndarray
    shadow_probabilities: np.ndarray | None = None


class DPWinnow:
    """DP-Winnow (paper Algorithm 4.2; notes Sec. 3.8), parametric form.

    Parameters: ``epsilon_hat`` (AboveThreshold), ``eta`` (learning rate), ``m``
    (samples per released vector), ``L`` (threshold), ``K`` (switching bound),
    ``beta`` (the SVT instances use beta/T; only for reporting alpha), ``delta``
    (for the accounting), and ``c``, ``rho`` (used only to record the Lemma 13 event).

    Privacy (event-level, replace-one; notes Sec. 5.4): the released sequence is
    (epsilon, delta)-DP with epsilon = min(sharp reconstructed accounting
    eps_hat + advanced composition of mK 4eta-DP draws at delta, pure basic
    composition eps_hat + 4 eta m K). Lemma 11's calibration: :meth:`from_privacy`.
    """

    def __init__(self, epsilon_hat: float = 1.0, eta: float = 0.1, m: int = 100, L: float = 10.0, K: int = 10,
                 *, beta: float = 0.05, delta: float = 1e-6, c: float = 0.25, rho: float = 0.0):
        self.epsilon_hat = epsilon_hat
        self.eta = eta
        self.m = m
        self.L = L
        self.K = K
        self.beta = beta
        self.delta = delta
        self.c = c
        self.rho = rho

    # ------------------------------------------------------------ calibration
    @classmethod
    def from_privacy(cls, epsilon: float, delta: float, d: int, rho: float, T: int, beta: float,
                     c: float = 0.25) -> "DPWinnow":
        """Lemma 11 calibration with m (Lemma 13 [revised]), K* (Lemma 14 note) and L = alpha = 8 ln(2T^2/beta)/eps_hat."""
        # Lemma 11 states epsilon in (0, 1); the notes' numerical example uses epsilon = 1, allowed here.
        epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0, low_inclusive=False)
        delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        m = lemma13_m(T, beta, c, rho)
        K = lemma14_k_star(epsilon, delta, d, rho, m, c)
        eta = epsilon / (8.0 * math.sqrt(2.0 * m * K * math.log(2.0 / delta)))
        eps_hat = epsilon / (4.0 * math.sqrt(2.0 * K * math.log(2.0 / delta)))
        alpha = 8.0 * math.log(2.0 * T * T / beta) / eps_hat
        return cls(eps_hat, eta, m, alpha, K, beta=beta, delta=delta, c=c, rho=rho)

    def _validate(self) -> None:
        check_epsilon(self.epsilon_hat, "epsilon_hat")
        check_real(self.eta, "eta", low=0.0, low_inclusive=False)
        check_int(self.m, "m", low=1)
        check_real(self.L, "L")
        check_int(self.K, "K", low=0)
        check_real(self.beta, "beta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        check_delta(self.delta)
        check_real(self.c, "c", low=0.0, high=0.5, high_inclusive=False)
        check_real(self.rho, "rho", low=0.0)

    def alpha(self, T: int) -> float:
        """Lemma 10 [RECON] with beta/T per instance: 8 ln(2T^2/beta)/eps_hat."""
        return 8.0 * math.log(2.0 * T * T / self.beta) / self.epsilon_hat

    def mistake_bound(self, T: int, updates: int | None = None) -> float:
        """Theorem 12, careful form (notes Sec. 2): (U+1)(L + alpha + 1), U = realised updates (default K)."""
        U = self.K if updates is None else updates
        return (U + 1) * (self.L + self.alpha(T) + 1.0)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        self._validate()
        mK = self.m * self.K
        pure = self.epsilon_hat + 4.0 * self.eta * mK
        if self.delta > 0 and mK > 0:
            sharp = dp_winnow_epsilon_sharp(self.epsilon_hat, self.eta, self.m, self.K, self.delta)
        else:
            sharp = math.inf
        if pure <= sharp:
            return PrivacyGuarantee(pure, 0.0, NeighbouringRelation.REPLACE_ONE_ROUND,
                                    "notes Sec. 5.4: eps_hat (one SVT instance) + basic composition of mK 4eta-DP draws",
                                    self.dp_event)
        return PrivacyGuarantee(sharp, self.delta, NeighbouringRelation.REPLACE_ONE_ROUND,
                                "Lemma 11 / notes Sec. 5.4 [revised]: eps_hat + advanced composition of mK 4eta-DP draws",
                                self.dp_event)

    def dp_event(self) -> dp_accounting.DpEvent:
        """A dominating description: pure eps0-DP steps are dominated by binary randomized response(eps0).

        One AboveThreshold instance (eps_hat; only the window containing the changed round
        pays, notes Sec. 5.4) composed with mK draws of 4 eta each.
        """
        import dp_accounting

        def rr(e):
            return dp_accounting.RandomizedResponseDpEvent(noise_parameter=2.0 / (1.0 + math.exp(e)), num_buckets=2)

        return dp_accounting.ComposedDpEvent([rr(self.epsilon_hat),
                                              dp_accounting.SelfComposedDpEvent(rr(4.0 * self.eta), self.m * self.K)])

    # ------------------------------------------------------------ single run
    def run(self, X: Any, y: Any, rng: np.random.Generator, *, query_every_round: bool = True) -> OnlineTrace:
        """One run of Algorithm 4.2, literally (a loop over rounds with ``AboveThreshold`` instances).

        ``query_every_round=False`` is the planted-bug variant of notes Sec. 3.8 note 1
        (AddQuery only on mistake rounds; NOT private).
        """
        self._validate()
        rng = check_rng(rng)
        X, y = _check_sequence(X, y)
        T, d = X.shape
        beta_inst = self.beta / T
        logw = np.full(d, -math.log(d))
        tw = np.full(d, 1.0 / d)
        k, cache, count = 0, -1, 0
        Q = AboveThreshold(self.epsilon_hat, self.L, beta_inst, rng)
        halted = False
        preds = np.empty(T, dtype=np.int64)
        rounds, counts, examples, history = [], [], [], [np.exp(logw)]
        mistakes = viol = 0
        for t in range(T):
            preds[t] = int(np.sign(tw @ X[t]))
            mist = preds[t] != y[t]
            mistakes += int(mist)
            if mist and self.rho > 0 and y[t] * float(np.exp(logw) @ X[t]) > self.c * self.rho:
                viol += 1
            if halted:
                continue
            if mist:
                count += 1
                if cache < 0:
                    cache = t
            if not query_every_round and not mist:
                continue
            Q.add_query(float(count))
            if Q.test_above_threshold():
                if k >= self.K:
                    halted = True
                    continue
                if cache >= 0:
                    logw = logw + self.eta * y[cache] * X[cache]
                    logw -= special.logsumexp(logw)
                n_u = rng.multinomial(self.m, np.exp(logw))
                tw = n_u / self.m
                rounds.append(t)
                counts.append(n_u)
                examples.append(cache)
                history.append(np.exp(logw))
                k += 1
                cache, count = -1, 0
                Q = AboveThreshold(self.epsilon_hat, self.L, beta_inst, rng)
        return OnlineTrace(preds, mistakes, k, np.array(rounds, dtype=np.int64),
                           np.array(counts, dtype=np.int64).reshape(len(rounds), d), tw,
                           np.array(examples, dtype=np.int64), np.array(history), viol)

    # ------------------------------------------------------------ batched runs
    def run_batch(self, X: Any, y: Any, rng: np.random.Generator, size: int, *, query_every_round: bool = True,
                  keep_shadow: bool = False, block: int | None = None) -> DPWinnowBatch:
        """``size`` independent runs on one (oblivious) sequence, vectorised over runs and over rounds.

        Same law as ``size`` calls of :meth:`run` (tested); the random numbers are drawn in
        a different order. Rounds are processed in blocks of ``block`` columns: between two
        firings of AboveThreshold a run's released vector is fixed, so its predictions on a
        whole block are one matrix product; the window's mistake count is a cumulative sum
        and the first round where ``count + Lap(4/eps_hat) >= L_hat`` is the firing round.
        Runs that fire inside a block are updated and re-processed from the next round of
        the block (fresh query noise for those rounds: the discarded noises were never
        used, so the law is unchanged).
        """
        self._validate()
        rng = check_rng(rng)
        size = check_int(size, "size", low=1)
        X, y = _check_sequence(X, y)
        T, d = X.shape
        K, m, eh = self.K, self.m, self.epsilon_hat
        if block is None:
            block = int(max(8, min(256, 4_000_000 // max(1, size * d))))
        block = check_int(block, "block", low=1)
        logw = np.full((size, d), -math.log(d))
        tw = np.full((size, d), 1.0 / d)
        k = np.zeros(size, dtype=np.int64)
        cache = np.full(size, -1, dtype=np.int64)
        count = np.zeros(size, dtype=np.int64)
        halted = np.zeros(size, dtype=bool)
        Lhat = self.L + rng.laplace(0.0, 2.0 / eh, size)
        mistakes = np.zeros(size, dtype=np.int64)
        viol = np.zeros(size, dtype=np.int64)
        rounds = np.full((size, max(K, 1)), -1, dtype=np.int64)
        examples = np.full((size, max(K, 1)), -1, dtype=np.int64)
        counts = np.zeros((size, max(K, 1), d), dtype=np.int64)
        shadow = np.zeros((size, max(K, 1), d)) if keep_shadow else None
        track = self.rho > 0
        thr = self.c * self.rho
        for t0 in range(0, T, block):
            t1 = min(t0 + block, T)
            nb = t1 - t0
            XbT = X[t0:t1].T
            yb = y[t0:t1][None, :]
            col = np.arange(nb)[None, :]
            off = np.zeros(size, dtype=np.int64)
            pend = np.arange(size)
            while pend.size:
                rows = np.arange(pend.size)
                valid = col >= off[pend][:, None]
                mist = ((tw[pend] @ XbT) * yb <= 0.0) & valid  # sgn(<w~,x>) != y, sgn(0) a mistake
                h = halted[pend][:, None]
                am = mist & ~h
                cnt = count[pend][:, None] + np.cumsum(am, axis=1)
                asked = (valid if query_every_round else am) & ~h
                # Lap(4/eps_hat) by inverse CDF of a uniform (same law as rng.laplace, several times faster)
                v = rng.random((pend.size, nb)) - 0.5
                nu = np.copysign(np.log1p(-2.0 * np.abs(v)), -v) * (4.0 / eh)
                fire = asked & (cnt + nu >= Lhat[pend][:, None])
                anyf = fire.any(axis=1)
                p = np.where(anyf, fire.argmax(axis=1), nb - 1)
                upto = col <= p[:, None]
                mu = mist & upto
                mistakes[pend] += mu.sum(axis=1)
                if track:
                    sm = yb * (np.exp(logw[pend]) @ XbT)
                    viol[pend] += (mu & (sm > thr)).sum(axis=1)
                amp = am & upto
                first = amp.argmax(axis=1)
                newc = (cache[pend] < 0) & amp.any(axis=1)
                cache[pend] = np.where(newc, t0 + first, cache[pend])
                count[pend] = cnt[rows, p]
                fi = anyf.nonzero()[0]
                if fi.size:
                    runs = pend[fi]
                    halted[runs[k[runs] >= K]] = True
                    ok = k[runs] < K
                    idx, t_f = runs[ok], t0 + p[fi][ok]
                    if idx.size:
                        ce = cache[idx]
                        has = ce >= 0
                        if has.any():
                            i2 = idx[has]
                            new = logw[i2] + self.eta * y[ce[has], None] * X[ce[has]]
                            logw[i2] = new - special.logsumexp(new, axis=1, keepdims=True)
                        pr = np.exp(logw[idx])
                        pr /= pr.sum(axis=1, keepdims=True)
                        n_u = rng.multinomial(m, pr)
                        tw[idx] = n_u / m
                        ku = k[idx]
                        rounds[idx, ku] = t_f
                        examples[idx, ku] = ce
                        counts[idx, ku] = n_u
                        if shadow is not None:
                            shadow[idx, ku] = pr
                        k[idx] += 1
                        cache[idx] = -1
                        count[idx] = 0
                        Lhat[idx] = self.L + rng.laplace(0.0, 2.0 / eh, idx.size)
                off[pend] = p + 1
                pend = pend[anyf & (p + 1 < nb)]
        return DPWinnowBatch(rounds[:, :K], counts[:, :K], examples[:, :K], mistakes, k, viol,
                             halted, None if shadow is None else shadow[:, :K])


# ============================================================================ instance generators (notes Sec. 8)


@dataclass(frozen=True)
class Instance:
    """An online sequence with a nonnegative, l1-normalised target ``v`` and its realised margin ``rho``."""

    X: np.ndarray
    y: np.ndarray
    v: np.ndarray
    rho: float
    name: str


def _realised(X: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float]:
    val = X @ v
    return np.sign(val).astype(np.int64), float(np.min(np.abs(val)))


def _rejection(rng, d, T, v, rho):
    """Uniform points of {-1,1}^d with |<v,x>| >= rho (rejection)."""
    out = []
    n = 0
    while n < T:
        Xc = rng.choice((-1.0, 1.0), size=(4 * T + 16, d))
        keep = np.abs(Xc @ v) >= rho - 1e-12
        out.append(Xc[keep])
        n += int(keep.sum())
    return np.concatenate(out)[:T]


def generate_instance(name: str, rng: np.random.Generator, d: int, T: int, **kw: Any) -> Instance:
    """Instance generators G1--G5 of notes Sec. 8 (i.i.d. points, labels from the target).

    * ``"majority"`` (G1): v = 1_S / k over k odd variables (k=3 default), margin 1/k on the cube.
    * ``"disjunction"`` (G2): k-disjunction with a constant bias coordinate (the last one);
      v = (1_S, k-1)/(2k-1), margin 1/(2k-1); relevant coordinates are +1 w.p. 1/k.
    * ``"sparse"`` (G3): random nonnegative v on s coordinates (Dirichlet), points kept if
      |<v,x>| >= rho (default 0.1).
    * ``"signed"`` (G4): random signed sparse v through the 2d embedding (dimension 2d).
    * ``"decision-list"`` (G5): a random monotone 1-DL (length r, D alternations) through
      Lemma 15 and the embedding (dimension 2(d+1)); margin = realised margin on the sequence.
    """
    rng = check_rng(rng)
    d = check_int(d, "d", low=2)
    T = check_int(T, "T", low=1)
    if name == "majority":
        k = kw.get("k", 3)
        S = rng.choice(d, size=k, replace=False)
        v = np.zeros(d)
        v[S] = 1.0 / k
        X = rng.choice((-1.0, 1.0), size=(T, d))
    elif name == "disjunction":
        k = kw.get("k", 3)
        S = rng.choice(d - 1, size=k, replace=False)
        v = np.zeros(d)
        v[S] = 1.0
        v[-1] = k - 1.0
        v /= 2 * k - 1.0
        X = rng.choice((-1.0, 1.0), size=(T, d))
        p = 1.0 / k
        X[:, S] = np.where(rng.random((T, k)) < p, 1.0, -1.0)
        X[:, -1] = 1.0
    elif name == "sparse":
        s = kw.get("s", 4)
        rho = kw.get("rho", 0.1)
        v = np.zeros(d)
        v[rng.choice(d, size=s, replace=False)] = rng.dirichlet(np.ones(s))
        X = _rejection(rng, d, T, v, rho)
    elif name == "signed":
        s = kw.get("s", 3)
        rho = kw.get("rho", 0.1)
        u = np.zeros(d)
        S = rng.choice(d, size=s, replace=False)
        u[S] = rng.dirichlet(np.ones(s)) * rng.choice((-1.0, 1.0), size=s)
        X0 = _rejection(rng, d, T, u, rho)
        X, v = nonnegative_embedding(X0), nonnegative_weights(u)
    elif name == "decision-list":
        r = kw.get("r", 4)
        D = kw.get("D", 1)
        vars_, bits, default = random_monotone_dl(rng, d, r, D)
        u = monotone_dl_to_halfspace(vars_, bits, default, d)
        X0 = rng.choice((-1.0, 1.0), size=(T, d))
        X1 = np.hstack([X0, np.ones((T, 1))])
        y_dl = evaluate_monotone_dl(X0, vars_, bits, default)
        X, v = nonnegative_embedding(X1), nonnegative_weights(u)
        y, rho = _realised(X, v)
        if not np.array_equal(y, y_dl):  # Lemma 15 exactness (never expected)
            raise AssertionError("decision list -> halfspace representation is not exact")
        return Instance(X, y, v, rho, name)
    else:
        raise ValueError(f"unknown generator {name!r}; choose one of {GENERATORS}")
    y, rho = _realised(X, v)
    return Instance(X, y, v, rho, name)


GENERATORS = ("majority", "disjunction", "sparse", "signed", "decision-list")
