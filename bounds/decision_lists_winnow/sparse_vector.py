"""Checks of Lemma 10 (Sec. 4.2, the sparse vector technique's AboveThreshold; Dwork & Roth 2014, Alg. 1,
Thm 3.23/3.24) for "Privately Learning Decision Lists and a Differentially Private Winnow".

[RECON] Lemma 10's hypotheses and the value of alpha are missing from the source text; only its
two conclusions survive. The reconstruction alpha = 8 ln(2T/beta)/epsilon
(:func:`privbound.learners.mechanisms.above_threshold_alpha`) matches the 16 ln(2T^2/beta)/eps_hat
quoted in Theorem 12's proof.

* Monte Carlo failure rate of the conclusions over adversarial query sequences
  (:func:`check_lemma10_accuracy`, through :func:`privbound.audit.engine.map_chunks`), sampled by
  :func:`privbound.learners.mechanisms.above_threshold_first_firing`;
* exact epsilon-DP of the firing-time distribution by quadrature over the threshold noise
  (:func:`check_lemma10_dp`, :func:`privbound.learners.mechanisms.above_threshold_firing_logprobs`).

Both read the noise scales where every AboveThreshold that runs reads them
(:meth:`privbound.learners.mechanisms.AboveThreshold.noise_scales`: the class, DP-Winnow's batched runs).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
from scipy import integrate

from privbound.audit.engine import map_chunks
from privbound.bounds.checks import CheckContext, CheckResult, exact, failure_rate
from privbound.learners.mechanisms import (
    above_threshold_alpha,
    above_threshold_firing_logprobs,
    above_threshold_first_firing,
)

__all__ = ["lemma10_failures", "check_lemma10_accuracy", "check_lemma10_dp"]


def _lemma10_sequences(L: float, alpha: float, T: int) -> dict[str, np.ndarray]:
    t = np.arange(T, dtype=float)
    spike = np.full(T, L - alpha - 0.5)
    spike[T // 2] = L + 2.0 * alpha
    return {
        "ramp": L - 2.0 * alpha + t * (4.0 * alpha / (T - 1)),
        "plateau-under-L+alpha": np.full(T, L + alpha - 0.5),
        "plateau-under-L-alpha": np.full(T, L - alpha - 0.5),
        "spike": spike,
        "far-below": np.full(T, L - 3.0 * alpha),
    }


def lemma10_failures(q: np.ndarray, out: np.ndarray, L: float, alpha: float) -> int:
    """Count runs violating Lemma 10's conclusions: (1) q_t <= L+alpha for t < k; (2) q_k >= L-alpha or k = T+1."""
    T = q.size
    fired = out == 1
    has = fired.any(axis=1)
    k = np.where(has, fired.argmax(axis=1), T)  # 0-based firing index, T = never
    before = np.arange(T)[None, :] < k[:, None]
    c1 = np.any(before & (q[None, :] > L + alpha), axis=1)
    qk = np.where(has, q[np.minimum(k, T - 1)], np.inf)
    c2 = has & (qk < L - alpha)
    return int(np.count_nonzero(c1 | c2))


def check_lemma10_accuracy(ctx: CheckContext) -> CheckResult:
    """Monte Carlo: failure rate of Lemma 10's conclusions vs beta, worst of 5 adversarial sequences.

    Each sequence is tested at level (1 - 0.999)/5 (Bonferroni); the reported p-value is
    the smallest one times 5.
    """
    epsilon, beta, T, L = 1.0, 0.2, 40, 10.0
    alpha = above_threshold_alpha(epsilon, T, beta)
    trials = ctx.trials(20_000)
    seqs = _lemma10_sequences(L, alpha, T)
    per = {}
    for i, (name, q) in enumerate(seqs.items()):
        def fn(size, ss, q=q):
            k = above_threshold_first_firing(q, L, epsilon, np.random.default_rng(ss), size)
            out = np.where(np.arange(T)[None, :] == k[:, None], 1, 0)
            return lemma10_failures(q, out, L, alpha)

        fails = sum(map_chunks(fn, trials, seed=ctx.seed + i, chunk_size=5_000, n_jobs=ctx.n_jobs))
        per[name] = failure_rate(fails, trials, beta, confidence=1 - 0.001 / len(seqs))
    worst_name = min(per, key=lambda n: per[n].p_value)
    worst = per[worst_name]
    worst = replace(worst, p_value=min(1.0, worst.p_value * len(seqs)))
    worst.details.update(sequence=worst_name, alpha=alpha, epsilon=epsilon, T=T, L=L,
                         rates={n: o.observed for n, o in per.items()},
                         looseness=beta / max(max(o.observed for o in per.values()), 1.0 / trials))
    return worst


def check_lemma10_dp(ctx: CheckContext) -> CheckResult:
    """Exact (quadrature) epsilon-DP of AboveThreshold's output (firing time) over neighbours |q - q'|_inf <= 1.

    Families: T = 3 queries, base vectors around the threshold, all 3^3 shifts in {-1, 0, 1}^3; and the
    proof's worst direction on T = 10 constant queries at and above the threshold (q' = q - 1 before the last
    query, q + 1 at it; the firing at the last query then costs 0.98 epsilon, which the threshold noise and
    the query noise each bring above epsilon when halved: 1.43 and 1.46 epsilon).
    """
    epsilon, L = 1.0, 2.0
    pairs = [(np.array(b, dtype=float), np.array(s, dtype=float))
             for b in ((0, 0, 0), (2, 2, 2), (1, 3, 0), (4, 0, 2), (-3, 5, 1))
             for s in itertools.product((-1, 0, 1), repeat=3)]
    down_up = np.r_[-np.ones(9), 1.0]
    pairs += [(np.full(10, base), down_up) for base in (2.0, 4.0)]
    cache: dict[tuple, np.ndarray] = {}

    def lp(v):
        key = tuple(v)
        if key not in cache:
            cache[key] = above_threshold_firing_logprobs(v, L, epsilon)
        return cache[key]

    worst, where = 0.0, None
    for q, s in pairs:
        r = float(np.max(np.abs(lp(q) - lp(q + s))))
        if r > worst:
            worst, where = r, dict(q=q.tolist(), shift=s.tolist())
    return exact(worst, epsilon, sense="<=", rtol=1e-7, worst_case=where,
                 looseness=epsilon / worst, note="max |log P_q(k) - log P_q'(k)| over firing times k")
