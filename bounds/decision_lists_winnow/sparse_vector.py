"""Checks of Lemma 10 (Sec. 4.2, the sparse vector technique's AboveThreshold; Dwork & Roth 2014, Alg. 1,
Thm 3.23/3.24) for "Privately Learning Decision Lists and a Differentially Private Winnow".

[RECON] Lemma 10's hypotheses and the value of alpha are missing from the source text; only its
two conclusions survive. The reconstruction alpha = 8 ln(2T/beta)/epsilon
(:func:`privbound.learners.mechanisms.above_threshold_alpha`) matches the 16 ln(2T^2/beta)/eps_hat
quoted in Theorem 12's proof.

* Monte Carlo failure rate of the conclusions over adversarial query sequences
  (:func:`check_lemma10_accuracy`, through :func:`privbound.audit.engine.map_chunks`);
* exact epsilon-DP of the firing-time distribution by quadrature over the threshold noise
  (:func:`check_lemma10_dp`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
from scipy import integrate

from privbound.audit.engine import map_chunks
from privbound.bounds.checks import CheckContext, CheckResult, exact, failure_rate
from privbound.learners.mechanisms import SparseVector, above_threshold_alpha

__all__ = ["lemma10_failures", "above_threshold_firing_logprobs", "check_lemma10_accuracy", "check_lemma10_dp"]


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
    mech = SparseVector(epsilon, L, cutoff=1)
    per = {}
    for i, (name, q) in enumerate(seqs.items()):
        def fn(size, ss, q=q):
            out = mech.sample(q, np.random.default_rng(ss), size)
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


def above_threshold_firing_logprobs(q: np.ndarray, L: float, epsilon: float) -> np.ndarray:
    """log P[first TRUE at query k] (k = 1..T) and log P[never] for AboveThreshold (Dwork & Roth Alg. 1).

    Threshold noise Lap(2/eps), query noise Lap(4/eps): the scales are read from
    ``privbound.learners.mechanisms.SparseVector(epsilon, L)`` (cutoff 1, the mechanism the accuracy
    check samples; ``AboveThreshold`` uses the same), so the check guards the mechanism's calibration;
    P(k) = int p(z) prod_{i<k} F_i(z) (1 - F_k(z)) dz with F_i(z) = P[q_i + nu < L + z],
    integrated by scipy.integrate.quad piecewise between the kinks.
    """
    mech = SparseVector(epsilon, L, cutoff=1)
    b0, b1 = mech.threshold_scale, mech.query_scale
    T = q.size
    qs = [float(v) for v in q]
    kinks = sorted(set([0.0] + [v - L for v in qs]))

    def below(i, z):  # Laplace(0, b1) cdf at L + z - q_i (closed form; scipy.stats per call is too slow)
        u = L + z - qs[i]
        return 0.5 * math.exp(u / b1) if u < 0 else 1.0 - 0.5 * math.exp(-u / b1)

    def integrand(z, k):
        val = math.exp(-abs(z) / b0) / (2.0 * b0)
        for i in range(min(k, T)):
            val *= below(i, z)
        if k < T:
            val *= 1.0 - below(k, z)
        return val

    edges = [-np.inf] + kinks + [np.inf]
    out = np.empty(T + 1)
    for k in range(T + 1):  # k = T means "never"
        tot = 0.0
        for a, b in zip(edges[:-1], edges[1:]):
            tot += integrate.quad(integrand, a, b, args=(k,), epsabs=0.0, epsrel=1e-11, limit=200)[0]
        out[k] = math.log(tot)
    return out


def check_lemma10_dp(ctx: CheckContext) -> CheckResult:
    """Exact (quadrature) epsilon-DP of AboveThreshold's output (firing time) over neighbours |q - q'|_inf <= 1.

    Family: T = 3 queries, base vectors around the threshold, all 3^3 shifts in {-1, 0, 1}^3.
    """
    epsilon, L = 1.0, 2.0
    bases = [np.array(v, dtype=float) for v in ((0, 0, 0), (2, 2, 2), (1, 3, 0), (4, 0, 2), (-3, 5, 1))]
    shifts = [np.array(s, dtype=float) for s in itertools.product((-1, 0, 1), repeat=3)]
    cache: dict[tuple, np.ndarray] = {}

    def lp(v):
        key = tuple(v)
        if key not in cache:
            cache[key] = above_threshold_firing_logprobs(v, L, epsilon)
        return cache[key]

    worst, where = 0.0, None
    for q in bases:
        for s in shifts:
            r = float(np.max(np.abs(lp(q) - lp(q + s))))
            if r > worst:
                worst, where = r, dict(q=q.tolist(), shift=s.tolist())
    return exact(worst, epsilon, sense="<=", rtol=1e-7, worst_case=where,
                 looseness=epsilon / worst, note="max |log P_q(k) - log P_q'(k)| over firing times k")
