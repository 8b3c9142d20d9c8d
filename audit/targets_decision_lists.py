"""Audit targets of the decision-lists / DP-Winnow paper (paper id ``decision-lists-winnow``).

Families (notes Sec. 8, checks G6c and D5):

* ``greedy-cover`` -- DP-GreedyCover (:mod:`learners.decision_lists`), replace-one neighbours:
  ``greedy-cover-canary`` (a canary feature firing only on the changed record; statistic:
  the bit attached to it), ``greedy-cover-accumulation`` (the changed record is fired by
  many features whose "bad" rules dominate, so the privacy loss accumulates over rounds;
  statistic: the number of rounds before the record is covered), and the planted bug
  ``greedy-cover-one-round-claim`` (same mechanism and pair, overall claim computed as if
  the M rounds were one exponential-mechanism round: epsilon = epsilon_step).
* ``winnow`` -- DP-Winnow (:mod:`learners.winnow`), event-level neighbours (the label of
  round 0 flipped, so that it is cached and used for the first update under d1), relaxed
  parameters so that the audit has power, the white-box replay log-likelihood statistic of
  notes Sec. 8 D5, and the planted bugs of notes Sec. 8 D5.6: (i) non-private Winnow
  releasing its weights, (ii) AddQuery only on mistake rounds, (iii) releasing the hidden
  (shadow) weights instead of the sampled ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audit.targets import Target, register_target
from learners.decision_lists import greedy_cover_epsilon_replace, greedy_cover_sample
from learners.winnow import DPWinnow, Winnow

__all__ = [
    "GreedyCoverMechanism",
    "DPWinnowMechanism",
    "WinnowReleaseWeights",
    "winnow_replay_llr",
    "greedy_cover_canary_pair",
    "greedy_cover_accumulation_pair",
    "winnow_pair",
    "WINNOW_PARAMS",
]

PAPER = "decision-lists-winnow"


# ============================================================================ DP-GreedyCover


@dataclass(frozen=True)
class GreedyCoverMechanism:
    """DP-GreedyCover on data = (Phi, y); output row = (order of features, their bits), length 2M."""

    epsilon_step: float

    def sample(self, data, rng, size):
        Phi, y = data
        order, bits, _ = greedy_cover_sample(Phi, y, self.epsilon_step, rng, size)
        return np.hstack([order, bits]).astype(float)

    def __call__(self, data, rng):
        return self.sample(data, rng, 1)[0]


def greedy_cover_canary_pair():
    """Replace-one pair: 12 realizable records over {0,1}^4 (coordinate features) plus a canary record.

    The canary record x_c = 0000 is fired only by the canary feature (column 4) and by T;
    its label is 0 in d0 and 1 in d1 (both samples are realizable: (canary, label) first).
    """
    rng = np.random.default_rng(2024)
    X = rng.integers(0, 2, size=(12, 4))
    X[X.sum(axis=1) == 0, 0] = 1  # only the canary record is all-zero
    y = np.where(X[:, 0] == 1, 1, np.where(X[:, 1] == 1, 0, 1))
    Phi = np.hstack([X == 1, np.zeros((12, 1), bool), np.ones((12, 1), bool)])
    canary = np.array([[False] * 4 + [True, True]])
    Phi = np.vstack([Phi, canary])
    y0 = np.append(y, 0)
    y1 = np.append(y, 1)
    return (Phi, y0), (Phi, y1)


def _canary_bit(outputs):
    o = np.asarray(outputs)
    M = o.shape[1] // 2
    pos = (o[:, :M] == 4).argmax(axis=1)
    return o[np.arange(o.shape[0]), M + pos]


def greedy_cover_accumulation_pair(k: int = 9, h: int = 5, r: int = 2, P: int = 3):
    """Replace-one pair where the loss accumulates over rounds (the set-cover effect of notes Sec. 5.2).

    Features g_1..g_k each fire on their own block of r records labelled 0; h_1..h_h each fire on
    one record labelled 0; P records labelled 1 are fired only by T. The changed record has
    label 1: in d1 it is fired by every g_i (so every rule (g_i, 0) has one error until it is
    covered), in d0 it is fired by T only. Under d1 the exponential mechanism avoids the g's for
    several rounds, under d0 it does not: each round multiplies the likelihood ratio by up to
    e^{eps/2}.
    """
    n = 1 + k * r + h + P
    M = k + h + 1
    Phi = np.zeros((n, M), dtype=bool)
    Phi[:, -1] = True
    y = np.zeros(n, dtype=np.int64)
    for i in range(k):
        Phi[1 + i * r:1 + (i + 1) * r, i] = True
    for j in range(h):
        Phi[1 + k * r + j, k + j] = True
    y[1 + k * r + h:] = 1
    y[0] = 1
    Phi1 = Phi.copy()
    Phi1[0, :k] = True
    return (Phi, y), (Phi1, y.copy()), k


def _rounds_before_cover(k: int):
    def score(outputs):
        o = np.asarray(outputs)
        M = o.shape[1] // 2
        return (o[:, :M] < k).argmax(axis=1).astype(float)

    return score


# ============================================================================ DP-Winnow

WINNOW_PARAMS = dict(epsilon_hat=1.0, eta=0.05, m=5, L=1.0, K=3)


def winnow_pair(d: int = 11, T: int = 60):
    """Event-level replace-one pair: a majority-of-3 sequence (G1), label of round 0 flipped in d1.

    x_0 is chosen so that the initial uniform weights predict its label correctly under d0
    (sum(x_0) > 0 = majority label +1) and so that the update with (x_0, -1) changes the
    normalised weights (x_0 is not constant). Under d1 round 0 is a mistake, cached first.
    """
    rng = np.random.default_rng(7)
    X = rng.choice((-1.0, 1.0), size=(T, d))
    X[0] = 1.0
    X[0, [2, 5, 7, 9]] = -1.0  # majority of coordinates 0..2 is +1, sum(x_0) = 3 > 0
    y0 = np.sign(X[:, :3].sum(axis=1)).astype(np.int64)
    y1 = y0.copy()
    y1[0] = -y0[0]
    return (X, y0), (X, y1)


@dataclass(frozen=True)
class DPWinnowMechanism:
    """DP-Winnow on data = (X, y); output row = (update rounds padded with -1 (K), released counts (K*d)).

    ``release="shadow"`` is planted bug (iii) (the hidden weights are released instead of
    the m-sample counts); ``query_every_round=False`` is planted bug (ii).
    """

    learner: DPWinnow
    release: str = "sampled"
    query_every_round: bool = True

    def sample(self, data, rng, size):
        X, y = data
        b = self.learner.run_batch(X, y, rng, size, query_every_round=self.query_every_round,
                                   keep_shadow=self.release == "shadow")
        stats = b.counts if self.release == "sampled" else b.shadow_log_weights
        return np.hstack([b.update_rounds.astype(float), stats.reshape(size, -1).astype(float)])


@dataclass(frozen=True)
class WinnowReleaseWeights:
    """Planted bug (i): non-private Winnow releasing its final weights (deterministic)."""

    eta: float = 0.05

    def sample(self, data, rng, size):
        X, y = data
        w = Winnow(eta=self.eta).run(X, y).weights
        return np.tile(w, (size, 1))


def winnow_replay_llr(learner: DPWinnow, d0, d1):
    """White-box statistic of notes Sec. 8 D5: replay the shadow weights under each dataset.

    From the released update rounds and counts, the auditor recomputes, for each dataset,
    the released vector of every window, its first mistake inside the window (the cached
    example), the shadow update and thus the shadow weights w^D_u each sample was drawn
    from. Score = sum_u sum_j n_{u,j} (ln w^{d1}_{u,j} - ln w^{d0}_{u,j}) (the sampling part of
    the log-likelihood ratio; higher means d1).
    """
    (X, y0), (_, y1) = d0, d1
    X = np.asarray(X, dtype=float)
    T, d = X.shape
    K, m, eta = learner.K, learner.m, learner.eta

    def score(outputs):
        o = np.asarray(outputs, dtype=float)
        B = o.shape[0]
        rounds = o[:, :K].astype(np.int64)
        counts = o[:, K:].reshape(B, K, d)
        logw = [np.full((B, d), -np.log(d)) for _ in (0, 1)]
        tw = np.full((B, d), 1.0 / d)
        start = np.zeros(B, dtype=np.int64)
        llr = np.zeros(B)
        t_idx = np.arange(T)
        for u in range(K):
            has = rounds[:, u] >= 0
            if not has.any():
                break
            pred = np.sign(tw @ X.T)  # (B, T)
            win = (t_idx[None, :] >= start[:, None]) & (t_idx[None, :] <= rounds[:, u][:, None])
            for s, yy in enumerate((y0, y1)):
                mist = (pred != yy[None, :]) & win
                any_m = mist.any(axis=1) & has
                first = mist.argmax(axis=1)
                if any_m.any():
                    i = np.flatnonzero(any_m)
                    new = logw[s][i] + eta * yy[first[i], None] * X[first[i]]
                    logw[s][i] = new - np.logaddexp.reduce(new, axis=1, keepdims=True)
            llr += np.where(has, (counts[:, u] * (logw[1] - logw[0])).sum(axis=1), 0.0)
            tw = np.where(has[:, None], counts[:, u] / m, tw)
            start = np.where(has, rounds[:, u] + 1, start)
        return llr

    return score


def _first_update_at_zero(outputs):
    return (np.asarray(outputs)[:, 0] == 0).astype(float)


def _projection(direction):
    def score(outputs):
        return np.asarray(outputs, dtype=float) @ direction

    return score


# ============================================================================ registration


def _register() -> None:
    # ---- DP-GreedyCover, canary feature
    eps_step, delta = 1.0, 1e-3
    c0, c1 = greedy_cover_canary_pair()
    register_target(Target(
        "greedy-cover-canary", "greedy-cover", GreedyCoverMechanism(eps_step), c0, c1,
        greedy_cover_epsilon_replace(eps_step, delta), delta, neighbouring="replace-one (canary label flipped)",
        description="DP-GreedyCover, eps_step = 1, canary feature firing only on the changed record; "
                    "statistic = bit attached to the canary feature",
        paper=PAPER, score=_canary_bit, default_trials=20_000,
        claim_source="Theorem 7 [RECON] replace-one: eps_AR + eps_step/2 (notes Sec. 5.2)",
    ))
    # ---- DP-GreedyCover, accumulating pair: correct claim and the one-round planted bug
    eps_step, delta = 4.0, 1e-5
    a0, a1, k = greedy_cover_accumulation_pair()
    register_target(Target(
        "greedy-cover-accumulation", "greedy-cover", GreedyCoverMechanism(eps_step), a0, a1,
        greedy_cover_epsilon_replace(eps_step, delta), delta, neighbouring="replace-one",
        description="DP-GreedyCover, eps_step = 4, changed record fired by 9 features; "
                    "statistic = rounds before the record is covered",
        paper=PAPER, score=_rounds_before_cover(k), default_trials=60_000,
        claim_source="Theorem 7 [RECON] replace-one: eps_AR + eps_step/2 (notes Sec. 5.2)",
    ))
    register_target(Target(
        "greedy-cover-one-round-claim", "greedy-cover", GreedyCoverMechanism(eps_step), a0, a1,
        eps_step, 0.0, neighbouring="replace-one", planted_bug=True,
        description="BUG: per-round eps_step = 4 but the overall claim computed as if one round (eps = 4)",
        paper=PAPER, score=_rounds_before_cover(k), default_trials=60_000,
        claim_source="claims Lemma 3 for the whole run",
    ))
    # ---- DP-Winnow
    w0, w1 = winnow_pair()
    learner = DPWinnow(**WINNOW_PARAMS, delta=1e-5)
    g = learner.guarantee
    register_target(Target(
        "dp-winnow-replay", "winnow", DPWinnowMechanism(learner), w0, w1, g.epsilon, g.delta,
        neighbouring="event-level replace-one (label of round 0 flipped)",
        description="DP-Winnow, relaxed parameters (eps_hat=1, eta=0.05, m=5, L=1, K=3), d=11, T=60; "
                    "white-box replay log-likelihood statistic (notes D5)",
        paper=PAPER, score=winnow_replay_llr(learner, w0, w1), default_trials=20_000,
        claim_source="notes Sec. 5.4: eps_hat + composition of mK 4eta-DP draws (learner's own accounting)",
    ))
    register_target(Target(
        "dp-winnow-query-on-mistakes", "winnow", DPWinnowMechanism(learner, query_every_round=False), w0, w1,
        g.epsilon, g.delta, neighbouring="event-level replace-one (label of round 0 flipped)", planted_bug=True,
        description="BUG: AddQuery only on mistake rounds (notes Sec. 3.8 note 1): a firing at round 0 "
                    "is impossible on d0",
        paper=PAPER, score=_first_update_at_zero, default_trials=10_000,
        claim_source="claims DP-Winnow's accounting",
    ))
    direction = np.zeros(learner.K + learner.K * w0[0].shape[1])
    direction[learner.K:learner.K + w0[0].shape[1]] = w1[1][0] * w0[0][0]  # first update's log-weights . (y'_0 x_0)
    register_target(Target(
        "dp-winnow-release-shadow", "winnow", DPWinnowMechanism(learner, release="shadow"), w0, w1,
        g.epsilon, g.delta, neighbouring="event-level replace-one (label of round 0 flipped)", planted_bug=True,
        description="BUG: releases the hidden (shadow) weights instead of the m-sample empirical distribution",
        paper=PAPER, score=_projection(direction), default_trials=10_000,
        claim_source="claims DP-Winnow's accounting",
    ))
    wa = WinnowReleaseWeights(learner.eta).sample(w0, None, 1)[0]
    wb = WinnowReleaseWeights(learner.eta).sample(w1, None, 1)[0]
    register_target(Target(
        "winnow-release-weights", "winnow", WinnowReleaseWeights(learner.eta), w0, w1, g.epsilon, g.delta,
        neighbouring="event-level replace-one (label of round 0 flipped)", planted_bug=True,
        description="BUG: non-private Winnow releasing its weights, claiming DP-Winnow's budget",
        paper=PAPER, score=_projection(wb - wa), default_trials=10_000,
        claim_source="claims DP-Winnow's accounting",
    ))


_register()
