"""Audit targets of "Privately Learning Decision Lists and a Differentially Private Winnow" (paper id
``decision-lists-winnow``): DP-GreedyCover (Sec. 3) and DP-Winnow (Algorithm 4.2, Sec. 4.2).

The correct learners are audited white-box: the output law of both learners is computable exactly, so each
target supplies the exact privacy loss L(o) = ln P_d0(o) - ln P_d1(o) of its whole output, computed by the
learner's own code, and the betting estimator (:class:`privbound.audit.estimators.WhiteBox`; Waudby-Smith &
Ramdas 2023) turns it into a lower bound that approaches the pair's exact epsilon (``Target.tight``): the
step-by-step observation of Nasr, Hayes, Steinke, Balle, Tramer, Jagielski, Carlini & Terzis (USENIX Security
2023, arXiv:2302.07956), every selection or firing and every draw read through its exact law.

Families:

* ``greedy-cover`` -- DP-GreedyCover (:mod:`privbound.learners.decision_lists_winnow.decision_lists`),
  replace-one neighbours, calibrated by ``DPGreedyCover.from_privacy`` when it runs
  (:class:`GreedyCoverMechanism`). Observation: the whole selection sequence; L(o) sums, over the rounds, the
  exponential mechanism's log-probability of the chosen rule given the history on each dataset
  (:func:`greedy_cover_log_likelihood_ratio`, :func:`~privbound.learners.decision_lists_winnow.decision_lists.greedy_cover_log_likelihood`,
  which runs the sampler's own round law). Pairs: ``greedy-cover-canary`` (a canary feature firing only on
  the changed record), ``greedy-cover-accumulation`` (the changed record fired by many features whose "bad"
  rules dominate, so the loss accumulates over rounds), and the planted bug ``greedy-cover-one-round-claim``
  (same mechanism and pair, claim computed as if the M rounds were one round: epsilon = epsilon_step). The
  tight value is the exact hockey-stick divergence of the selection law on the pair (the worst case over
  pairs has no exact method; Theorem 7 [RECON] bounds it).
* ``winnow`` -- DP-Winnow (:mod:`privbound.learners.decision_lists_winnow.winnow`), event-level neighbours
  differing at round 0, relaxed parameters. Observation: the transcript (update rounds and released counts);
  L(o) = the first window's AboveThreshold firing law (quadrature: its queries are fixed by the data until
  the first release) + every released sample's ln w^0_j - ln w^1_j under the replayed shadow weights
  (:func:`dp_winnow_log_likelihood_ratio`); the later windows' firing laws cancel. ``dp-winnow-replay`` runs
  on :func:`winnow_round0_canary_pair` with K = 1, whose output law is enumerable: its tight value is the
  exact epsilon on the pair (1.00 at delta = 1e-3), its claim the learner's pure 4 (a pure epsilon-DP
  mechanism is (epsilon, delta)-DP for every delta). The worst case over pairs (the PLD of eps_hat and the m K
  4 eta draws as randomized responses, 3.59 here) is out of reach of any pair: on DP-Winnow's cumulative
  count queries a changed round shifts the whole rest of its window by one, which costs AboveThreshold at
  most about eps_hat / 2, and a multiplicative-weights draw has loss at most about 2 eta at non-negligible
  probability (4 eta only on outputs of vanishing probability). Three planted bugs on the older pair
  :func:`winnow_pair`: (i) non-private Winnow releasing its weights, (ii) AddQuery only on mistake rounds,
  (iii) releasing the hidden (shadow) weights instead of the sampled ones.

Mutants (``Target.mutants``, each patching the code the learner runs, judged against the correct code's
tight value; flagged at the default nightly's trials, seed 0): DP-GreedyCover's first round at twice its
parameter (``round1-budget-doubled``), Lemma 3's 1/2 dropped in every round (``em-half-dropped``), and
``from_privacy`` calibrating for add/remove under replace-one; AboveThreshold's threshold or query noise
halved (read where every AboveThreshold reads its scales,
:meth:`~privbound.learners.mechanisms.AboveThreshold.noise_scales`), DP-Winnow's shadow update at 2 eta and
2 m samples released. ``Target.overspend(factor)``: every DP-GreedyCover round at factor eps_step; DP-Winnow at
factor eps_hat (both noise scales divided by factor) and factor eta. A mutant patching the learner's law is
read by the likelihood too, so its audit is a valid bound on the broken learner.

One-run canary designs (Steinke, Nasr & Jagielski, NeurIPS 2023, arXiv:2305.08846): m canaries,
each included independently with probability 1/2 (bits from ``SeedSequence([seed, 1])``), ONE
run of the learner (through :func:`privbound.audit.engine.map_chunks` with seed ``seed``), one
score per canary, then :func:`privbound.audit.one_run.one_run_audit`. Flipping one canary's
inclusion bit is one step of the learner's neighbouring relation, so that the learner's own
(epsilon, delta) covers each canary.

* **DP-Winnow, canary rounds** (:func:`dp_winnow_canary_one_run`; Algorithm 4.2, event-level
  replace-one neighbours). The stream has one round per canary over
  d = m + 1 coordinates: round i presents x_i with +1 on coordinate i and -1 elsewhere
  (the last coordinate is always -1), with label +1 if canary i is included and -1 if not.
  Flipping bit i replaces the example of round i: one event-level neighbour step. The
  uniform initial weights predict -1 on every x_i (<w, x_i> = (2 - d)/d < 0), so an included
  canary is a mistake, an excluded one is not; if canary i is the first cached mistake of
  its window, the shadow update raises coordinate i by 2 eta relative to the others. Score
  of canary i (lexicographic): whether AboveThreshold fired at round i (the count of the
  window rose by one at an included canary), then the length of that window (a firing after
  a short window is stronger evidence: the count there is small, so the +1 of the canary
  matters most), then the released counts on coordinate i from its round on. The score is
  a function of the released sequence only (update rounds and counts), as the audit requires.
  The firings rank above the counts because the counts are diluted over the d = m + 1
  coordinates (each sample hits coordinate i with probability about 1/d); ranked by counts
  first, noise hits crowd out the firings (benchmarks/README.md, 'Decision lists and DP-Winnow: measured values').
  Planted bugs, claiming the correct learner's guarantee: ``release="shadow"`` (the hidden
  weights are released; evidence = (ln w_i - median_j ln w_j)/(2 eta) of the last released
  shadow vector), ``query_every_round=False`` (AddQuery only on mistake rounds: a firing at
  round i then proves canary i was a mistake) and ``release="winnow"`` (non-private Winnow
  releasing its final weights).
* **DP-GreedyCover, canary features** (:func:`greedy_cover_canary_one_run`; Sec. 3.1, replace-one
  neighbours, Theorem 7 [RECON]). m canary records over m canary features: feature f_i fires
  only on record i (and the constant-true T fires on all). Record i has label 1 if canary i
  is included and 0 if not: flipping bit i replaces one record (replace-one). While record i
  is uncovered, the rule (f_i, 1 - label_i) makes one error and (f_i, label_i) none, so the
  bit attached to f_i leans towards the label by the factor e^{eps_step/2} (Lemma 3). Score
  of canary i: that bit (as +-1/2), weighted by how early f_i was chosen; 0 when f_i came
  after T (T covers every record, so the later bits are uniform and carry no evidence).
  Each canary is at most eps_step/2-randomised-response evidence, while the claim carries the
  set-cover factor ~ ln(1/delta) (Theorem 7 [RECON]), so one run shows little of a correct
  learner's claim; a claim must also stay below the largest bound one run with m canaries can
  give (about 4.6 at m = 1000). The planted bug runs the rounds with a larger per-round parameter
  (``epsilon_step_run``; e.g. the exponential mechanism replaced by a near-argmax) while
  claiming the guarantee computed from ``epsilon_step``.

One-run targets (``privbound audit NAME --one-run``): learners tuned so that their own canary
design carries evidence in ONE run (``Target.one_run_design``), each also auditable
by the many-trial auditor on a small canary pair (the same design with 20 / 12 canaries,
canary 0 flipped):

* ``dp-winnow-one-run`` -- DP-Winnow with eps_hat = 3, eta = 1e-4, m = 3, L = 1.5, K = 300
  (claim 3.06 at delta = 1e-6, almost all of it the single AboveThreshold instance's eps_hat:
  canary rounds carry evidence only through the firings, the samples being diluted over
  d = m + 1 coordinates), and its planted-bug twins ``dp-winnow-one-run-query-on-mistakes``,
  ``dp-winnow-one-run-release-shadow``, ``winnow-one-run-release-weights``, all claiming
  the correct learner's guarantee. L = 1.5 rather than 2: with AddQuery on mistakes only, the
  bug is caught only if the run fires at least 200 times (the all-correct r = 200 rule, bound
  3.68 > 3.06), and at L = 2 the number of firings comes too close to 200.
* ``greedy-cover-one-run`` -- DP-GreedyCover with eps_step = 0.4, delta = 1e-5 (claim 3.54,
  below the ~4.6 that one run with 1000 canaries can show), and the planted bug
  ``greedy-cover-one-run-step-40`` (rounds run at eps_step = 40, a near-argmax, under the
  eps_step = 0.4 claim).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from privbound.audit.engine import map_chunks
from privbound.audit.one_run import OneRunResult, default_guess_grid, one_run_audit
from privbound.audit.targets.registry import OneRunDesign, Target, TightEpsilon, register_target
from privbound.learners.decision_lists_winnow import decision_lists as _dl
from privbound.learners.decision_lists_winnow import winnow as _winnow
from privbound.learners.decision_lists_winnow.decision_lists import (
    DPGreedyCover,
    greedy_cover_epsilon_replace,
    greedy_cover_log_likelihood,
    greedy_cover_orbit_logprobs,
    greedy_cover_sample,
    exact_epsilon,
)
from privbound.learners.decision_lists_winnow.winnow import (
    DPWinnow,
    Winnow,
    dp_winnow_round0_log_likelihood_ratio,
    dp_winnow_round0_tight_epsilon,
    dp_winnow_round0_witness,
)
from privbound.learners.mechanisms import AboveThreshold
from privbound.mutation import Mutant, patch, together
from privbound.learners.neighbouring import NeighbouringRelation as NR
from privbound._validation import check_confidence, check_epsilon, check_int, check_real

__all__ = [
    "GreedyCoverMechanism",
    "DPWinnowMechanism",
    "WinnowReleaseWeights",
    "winnow_replay_llr",
    "greedy_cover_canary_pair",
    "greedy_cover_accumulation_pair",
    "winnow_pair",
    "WINNOW_PARAMS",
    "ONE_RUN_WINNOW_PARAMS",
    "ONE_RUN_GREEDY_COVER_PARAMS",
    "winnow_canary_pair",
    "greedy_cover_canary_features_pair",
    "WINNOW_CANARY_ROUNDS",
    "GREEDY_COVER_CANARY_FEATURES",
    "winnow_canary_stream",
    "winnow_canary_scores",
    "dp_winnow_canary_one_run",
    "greedy_cover_canary_data",
    "greedy_cover_canary_scores",
    "greedy_cover_canary_one_run",
]

PAPER = "decision-lists-winnow"

_RELEASES = ("sampled", "shadow", "winnow")

WINNOW_CANARY_ROUNDS = "dp-winnow-canary-rounds"
GREEDY_COVER_CANARY_FEATURES = "greedy-cover-canary-features"


def _inclusion_bits(m: int, seed: int) -> np.ndarray:
    return np.random.default_rng(np.random.SeedSequence([seed, 1])).random(m) < 0.5


# ============================================================================ one-run design: DP-Winnow canary rounds


def winnow_canary_stream(included) -> tuple[np.ndarray, np.ndarray]:
    """The canary stream: round i is x_i = (-1, ..., +1 at i, ..., -1) in {-1,1}^{m+1}, label +1 iff included."""
    inc = np.asarray(included, dtype=bool)
    m = inc.size
    X = -np.ones((m, m + 1))
    X[np.arange(m), np.arange(m)] = 1.0
    return X, np.where(inc, 1, -1).astype(np.int64)


def winnow_canary_scores(update_rounds, stats, m_canaries: int, *, release: str = "sampled",
                         m_samples: int = 1, eta: float = 1.0) -> np.ndarray:
    """Per-canary scores from one released DP-Winnow transcript (see the module docstring).

    ``update_rounds`` (U,) are the firing rounds with an update (padding -1 allowed);
    ``stats`` (U, d) the released statistics of each update: sample counts (``"sampled"``)
    or shadow probabilities (``"shadow"``); for ``"winnow"`` a single final weight vector (1, d).
    """
    n = int(m_canaries)
    r = np.asarray(update_rounds, dtype=np.int64).ravel()
    s = np.asarray(stats, dtype=float).reshape(-1, n + 1) if np.size(stats) else np.zeros((0, n + 1))
    if release != "winnow":
        keep = r >= 0
        r, s = r[keep], s[keep]
    fired = np.zeros(n)
    if release != "winnow" and r.size:
        fired[r[r < n]] = 1.0
    if release == "sampled":
        # window of each firing: rounds since the previous firing (the first window starts at round 0)
        rs = np.sort(r)
        win = np.diff(np.r_[-1, rs])
        inv_w = np.zeros(n)
        sel = rs < n
        inv_w[rs[sel]] = 1.0 / win[sel]
        if s.shape[0]:
            # counts on coordinate i in every release from canary i's round on (release u is in force after r_u >= i)
            mask = np.arange(n)[None, :] <= r[:, None]  # (U, n): release u could depend on canary i iff r_u >= i
            ev = (s[:, :n] * mask).sum(axis=0) / float(m_samples)
        else:
            ev = np.zeros(n)
        # lexicographic: fired (2), shorter window (1/w in (0, 1]), then counts (< 1e-3)
        return fired * (2.0 + inv_w) + 1e-3 * ev / (1.0 + ev.max(initial=0.0))
    if s.shape[0] == 0:
        return 0.5 * fired
    else:
        lw = np.log(np.maximum(s[-1, :n], 1e-300))
        ev = (lw - np.median(lw)) / (2.0 * float(eta))
    return ev + 0.5 * fired


def dp_winnow_canary_one_run(
    learner: DPWinnow,
    m: int,
    seed: int = 0,
    *,
    release: str = "sampled",
    query_every_round: bool = True,
    confidence: float = 0.95,
    grid: Sequence[tuple[int, int]] | None = None,
    epsilon_claimed: float | None = None,
    delta: float | None = None,
) -> OneRunResult:
    """One-run audit of DP-Winnow with m canary rounds (design: the module docstring).

    The claim defaults to the learner's own guarantee (``learner.guarantee``: its epsilon and
    delta for the parameters used). ``release`` / ``query_every_round`` select the planted
    bugs. The default guess grid is one-sided (only "+1" guesses): a canary that was
    included but not used by an update leaves no trace, so "-1" guesses carry little power.
    """
    if not isinstance(learner, DPWinnow):
        raise TypeError(f"learner must be a DPWinnow, got {type(learner).__name__}")
    m = check_int(m, "m", low=2)
    seed = check_int(seed, "seed", low=0)
    if release not in _RELEASES:
        raise ValueError(f"release must be one of {_RELEASES}, got {release!r}")
    g = learner.guarantee
    eps_claim = g.epsilon if epsilon_claimed is None else check_real(epsilon_claimed, "epsilon_claimed", low=0.0)
    d = g.delta if delta is None else check_real(delta, "delta", low=0.0, high=1.0, high_inclusive=False)
    included = _inclusion_bits(m, seed)
    X, y = winnow_canary_stream(included)

    def chunk(size, ss):
        if release == "winnow":
            return np.zeros(0, dtype=np.int64), Winnow(eta=learner.eta).run(X, y).weights[None, :]
        b = learner.run_batch(X, y, np.random.default_rng(ss), size, query_every_round=query_every_round,
                              keep_shadow=release == "shadow")
        st = b.counts[0] if release == "sampled" else b.shadow_probabilities[0]
        return b.update_rounds[0], st

    rounds, stats = map_chunks(chunk, 1, seed=seed)[0]
    scores = winnow_canary_scores(rounds, stats, m, release=release, m_samples=learner.m, eta=learner.eta)
    res = one_run_audit(scores, included, delta=d, confidence=confidence,
                        grid=default_guess_grid(m, one_sided=True) if grid is None else grid,
                        epsilon_claimed=eps_claim)
    res.details.update(design="DP-Winnow canary rounds (event-level replace-one)", seed=seed, release=release,
                       query_every_round=query_every_round, updates=int(np.count_nonzero(np.asarray(rounds) >= 0)),
                       claim_source=g.source)
    return res


# ============================================================================ one-run design: DP-GreedyCover canary features


def greedy_cover_canary_data(included) -> tuple[np.ndarray, np.ndarray]:
    """Feature matrix (m, m+1) (canary feature i fires on record i only; last column T) and labels (1 iff included)."""
    inc = np.asarray(included, dtype=bool)
    m = inc.size
    Phi = np.zeros((m, m + 1), dtype=bool)
    Phi[np.arange(m), np.arange(m)] = True
    Phi[:, -1] = True
    return Phi, inc.astype(np.int64)


def greedy_cover_canary_scores(order, bits, m_canaries: int) -> np.ndarray:
    """Score of canary i: (bit of f_i - 1/2) (2 - j/M) if f_i was chosen in round j before T, else 0.

    ``order``/``bits`` (M,) with M = m_canaries + 1 (index m_canaries = T). The sign is the
    bit DP-GreedyCover attached to f_i; earlier choices rank further from 0 (a tie-break
    that does not look at the inclusion bits); after T every record is covered and the bit
    is uniform, hence score 0.
    """
    n = int(m_canaries)
    order = np.asarray(order).ravel()
    bits = np.asarray(bits, dtype=float).ravel()
    M = order.size
    pos_T = np.flatnonzero(order == n)
    stop = int(pos_T[0]) if pos_T.size else M
    s = np.zeros(n)
    j = np.arange(stop)
    f = order[:stop]
    sel = f < n
    s[f[sel]] = (bits[:stop][sel] - 0.5) * (2.0 - j[sel] / M)
    return s


def greedy_cover_canary_one_run(
    learner: DPGreedyCover,
    m: int,
    seed: int = 0,
    *,
    epsilon_step_run: float | None = None,
    confidence: float = 0.95,
    grid: Sequence[tuple[int, int]] | None = None,
    epsilon_claimed: float | None = None,
    delta: float | None = None,
) -> OneRunResult:
    """One-run audit of DP-GreedyCover with m canary features (design: the module docstring).

    The claim defaults to the learner's replace-one guarantee for its ``epsilon_step`` and
    ``delta`` (Theorem 7 [RECON]); ``epsilon_step_run`` (default: the same) is the per-round
    parameter the mechanism actually uses -- a larger value is the planted bug.
    ``epsilon_claimed`` / ``delta`` override the claim (a registered target's own claim).
    """
    if not isinstance(learner, DPGreedyCover):
        raise TypeError(f"learner must be a DPGreedyCover, got {type(learner).__name__}")
    m = check_int(m, "m", low=2)
    seed = check_int(seed, "seed", low=0)
    confidence = check_confidence(confidence)
    if learner.neighbouring != "replace-one":
        raise ValueError("the canary-feature design flips a label: it needs neighbouring='replace-one'")
    # the learner's own claim, unless both parts are overridden (e.g. a target claiming delta = 0, which
    # DPGreedyCover's accounting does not allow)
    g = learner.guarantee if epsilon_claimed is None or delta is None else None
    eps_claim = g.epsilon if epsilon_claimed is None else check_real(epsilon_claimed, "epsilon_claimed", low=0.0)
    d = g.delta if delta is None else check_real(delta, "delta", low=0.0, high=1.0, high_inclusive=False)
    eps_run = learner.epsilon_step if epsilon_step_run is None else check_epsilon(epsilon_step_run, "epsilon_step_run")
    included = _inclusion_bits(m, seed)
    Phi, y = greedy_cover_canary_data(included)

    def chunk(size, ss):
        order, bits, _ = greedy_cover_sample(Phi, y, eps_run, np.random.default_rng(ss), size)
        return order[0], bits[0]

    order, bits = map_chunks(chunk, 1, seed=seed)[0]
    scores = greedy_cover_canary_scores(order, bits, m)
    res = one_run_audit(scores, included, delta=d, confidence=confidence, grid=grid, epsilon_claimed=eps_claim)
    res.details.update(design="DP-GreedyCover canary features (replace-one label flip)", seed=seed,
                       epsilon_step=learner.epsilon_step, epsilon_step_run=eps_run,
                       claim_source=g.source if g is not None else "given (epsilon_claimed, delta)")
    return res


# ============================================================================ many-trial targets: DP-GreedyCover


@dataclass(frozen=True)
class GreedyCoverMechanism:
    """DP-GreedyCover asked for the budget (epsilon, delta) under ``neighbouring``, on data = (Phi, y); output row =
    (order of features, their bits), length 2M.

    The per-round parameter comes from the learner's own calibration (:meth:`DPGreedyCover.from_privacy`),
    computed when the mechanism runs, so the audit runs the constructor a user calls.
    """

    epsilon: float
    delta: float
    neighbouring: str = "replace-one"

    @classmethod
    def at_step(cls, epsilon_step: float, delta: float) -> "GreedyCoverMechanism":
        """The mechanism whose replace-one calibration gives the per-round parameter ``epsilon_step``."""
        return cls(greedy_cover_epsilon_replace(epsilon_step, delta), delta)

    @property
    def learner(self) -> DPGreedyCover:
        return DPGreedyCover.from_privacy(self.epsilon, self.delta, neighbouring=self.neighbouring)

    @property
    def epsilon_step(self) -> float:
        return self.learner.epsilon_step

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
    """Replace-one pair where the loss accumulates over rounds (the effect Theorem 7's set-cover analysis bounds).

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


def greedy_cover_log_likelihood_ratio(mechanism: GreedyCoverMechanism, d0, d1):
    """White-box privacy loss of DP-GreedyCover's whole selection sequence: L(o) = ln P_d0(o) - ln P_d1(o), each term
    the learner's own law (:func:`greedy_cover_log_likelihood`: per round the exponential mechanism's probability
    of the chosen rule given the history) at the mechanism's calibrated per-round parameter."""
    (P0, y0), (P1, y1) = d0, d1

    def llr(outputs):
        o = np.asarray(outputs, dtype=float)
        M = o.shape[1] // 2
        order, bits = o[:, :M].astype(np.int64), o[:, M:].astype(np.int64)
        e = mechanism.epsilon_step
        return greedy_cover_log_likelihood(P0, y0, order, bits, e) - greedy_cover_log_likelihood(P1, y1, order, bits, e)

    return llr


# ============================================================================ many-trial targets: DP-Winnow

WINNOW_PARAMS = dict(epsilon_hat=1.0, eta=0.05, m=5, L=1.0, K=3)
REPLAY_PARAMS = dict(epsilon_hat=2.0, eta=0.05, m=10, L=5.0, K=1)
REPLAY_DELTA = 1e-3


def winnow_pair(d: int = 11, T: int = 60):
    """Event-level replace-one pair: a majority-of-3 sequence, label of round 0 flipped in d1.

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
    the m-sample counts); ``query_every_round=False`` is planted bug (ii). ``max_updates``
    (default: K) keeps the first ``max_updates`` update slots only; lossless when it is at
    least the sequence length (at most one update per round), and it keeps the output small
    when K is much larger than the audited sequence (K = 300 on 20 rounds: 6600 -> 440 columns).
    """

    learner: DPWinnow
    release: str = "sampled"
    query_every_round: bool = True
    max_updates: int | None = None

    def sample(self, data, rng, size):
        X, y = data
        b = self.learner.run_batch(X, y, rng, size, query_every_round=self.query_every_round,
                                   keep_shadow=self.release == "shadow")
        stats = b.counts if self.release == "sampled" else b.shadow_probabilities
        rounds = b.update_rounds
        if self.max_updates is not None:
            rounds, stats = rounds[:, :self.max_updates], stats[:, :self.max_updates]
        return np.hstack([rounds.astype(float), stats.reshape(size, -1).astype(float)])


@dataclass(frozen=True)
class WinnowReleaseWeights:
    """Planted bug (i): non-private Winnow releasing its final weights (deterministic)."""

    eta: float = 0.05

    def sample(self, data, rng, size):
        X, y = data
        w = Winnow(eta=self.eta).run(X, y).weights
        return np.tile(w, (size, 1))


def winnow_replay_llr(learner: DPWinnow, d0, d1):
    """White-box statistic: replay the shadow weights under each dataset.

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


def winnow_round0_canary_pair(T: int = 30):
    """Event-level pair built for DP-Winnow's exact privacy loss: round 0 replaced, every other round fixed.

    Over {-1,1}^4 with c = (1, 1, -1, -1): d0's round 0 is (1, 1, 1, 1; +1), which the uniform initial weights
    predict correctly; d1's is (c; +1), a mistake (sgn 0). Round 1 is (-c; +1), a mistake on both, and every
    later round is (1, 1, 1, 1; +1), which no released vector (entries >= 0, summing to 1) gets wrong. So the
    first window's mistake counts are 0, 1, 1, ... on d0 and 1, 2, 2, ... on d1 (the whole query sequence of
    the first AboveThreshold instance shifted by one), and when the first firing comes after round 0 the two
    shadow updates are opposite (e^{-eta c} on d0, e^{+eta c} on d1): each released sample then has privacy
    loss exactly +-2 eta, the most one multiplicative-weights draw can have at equal mass.
    """
    T = check_int(T, "T", low=2)
    c = np.array([1.0, 1.0, -1.0, -1.0])
    X = np.ones((T, 4))
    X[1] = -c
    y = np.ones(T, dtype=np.int64)
    X1 = X.copy()
    X1[0] = c
    return (X, y), (X1, y.copy())


def dp_winnow_log_likelihood_ratio(mechanism: "DPWinnowMechanism", d0, d1):
    """White-box privacy loss of a :class:`DPWinnowMechanism`'s outputs on a pair differing at round 0 (the
    learner's exact law, :func:`~privbound.learners.decision_lists_winnow.winnow.dp_winnow_round0_log_likelihood_ratio`)."""
    d = np.asarray(d0[0]).shape[1]

    def llr(outputs):
        o = np.asarray(outputs, dtype=float)
        U = o.shape[1] // (1 + d)
        # the law is built at each call, so that it is the law of the code that runs (a mutant's too)
        law = dp_winnow_round0_log_likelihood_ratio(mechanism.learner, d0, d1)
        return law(o[:, :U].astype(np.int64), o[:, U:].reshape(o.shape[0], U, d))

    return llr


def _first_update_at_zero(outputs):
    return (np.asarray(outputs)[:, 0] == 0).astype(float)


def _projection(direction):
    def score(outputs):
        return np.asarray(outputs, dtype=float) @ direction

    return score


# ============================================================================ privacy mutants of the learners


def _sharpened_rounds(factor: float, which: str = "all"):
    """DP-GreedyCover's exponential mechanism run at ``factor`` times its per-round parameter, in every round
    (``which="all"``) or in the first round only (``"first"``): a patch of the learner's one selection law
    (:func:`~privbound.learners.decision_lists_winnow.decision_lists._greedy_cover_rounds`), so the sampler and
    the likelihood the white-box audit reads both run the broken law."""

    def make(rounds):
        def broken(Phi, y, epsilon_step, size, sign=1.0):
            inner = rounds(Phi, y, epsilon_step, size, sign)
            step, j = next(inner), 0
            while True:
                logp, err = step
                if which == "all" or j == 0:
                    a = factor * logp  # the logits scaled by factor; -inf stays -inf
                    top = a.max(axis=1, keepdims=True)
                    logp = a - (top + np.log(np.exp(a - top).sum(axis=1, keepdims=True)))
                pick = yield logp, err
                j += 1
                try:
                    step = inner.send(pick)
                except StopIteration:
                    return

        return broken

    return patch(_dl, "_greedy_cover_rounds", make)


def _from_privacy_add_remove():
    """``DPGreedyCover.from_privacy`` calibrating for add/remove whatever relation it is asked for."""

    def make(_original):
        def from_privacy(cls, epsilon, delta, **kwargs):
            step = _dl.greedy_cover_step_for_epsilon(epsilon, delta, "add/remove")
            return cls(epsilon_step=step, delta=delta, **kwargs)

        return classmethod(from_privacy)

    return patch(DPGreedyCover, "from_privacy", make)


ROUND1_BUDGET_DOUBLED = Mutant("round1-budget-doubled", "DP-GreedyCover's first round runs its exponential "
                               "mechanism at 2 eps_step", _sharpened_rounds(2.0, "first"), profile="default")
EM_HALF_DROPPED = Mutant("em-half-dropped", "DP-GreedyCover samples with exp(eps q) (Lemma 3's 1/2 dropped) in every "
                         "round", _sharpened_rounds(2.0), profile="default")
FROM_PRIVACY_IGNORES_RELATION = Mutant(
    "from-privacy-ignores-relation", "DPGreedyCover.from_privacy calibrates eps_step for add/remove neighbours when "
    "asked for replace-one", _from_privacy_add_remove(), profile="default")
GREEDY_COVER_MUTANTS = (ROUND1_BUDGET_DOUBLED, EM_HALF_DROPPED, FROM_PRIVACY_IGNORES_RELATION)
"""The DP-GreedyCover mutants of the canary targets (greedy-cover-canary, greedy-cover-one-run). The accumulating
pair keeps ``em-half-dropped``: its tight epsilon (8.90 at delta = 1e-5) sits on 15 rounds of accumulated loss, to
which a sharper first round or the add/remove calibration (eps_step 4.003 instead of 4) adds less than its audit's
distance to the tight value (bound 8.69 and 8.19 at seed 0)."""


def greedy_cover_overspend(factor: float) -> Mutant:
    """DP-GreedyCover spending ``factor`` times its budget: every round's exponential mechanism at factor eps_step."""
    factor = check_real(factor, "factor", low=0.0, low_inclusive=False)
    return Mutant(f"overspend-x{factor:g}", f"every round of DP-GreedyCover at {factor:g} eps_step",
                  _sharpened_rounds(factor))


def _scaled_noise(threshold: float = 1.0, query: float = 1.0):
    """AboveThreshold's noise scales (threshold, query) multiplied by the factors, where every AboveThreshold that
    runs reads them (:meth:`~privbound.learners.mechanisms.AboveThreshold.noise_scales`)."""

    def make(scales):
        def broken(epsilon):
            b_thr, b_q = scales(epsilon)
            return threshold * b_thr, query * b_q

        return staticmethod(broken)

    return patch(AboveThreshold, "noise_scales", make)


def _update_rate(factor: float):
    """DP-Winnow's shadow (multiplicative-weights) update at ``factor`` eta."""
    return patch(_winnow, "multiplicative_update",
                 lambda update: lambda logw, eta, y, x: update(logw, factor * eta, y, x))


def _samples(factor: int):
    """DP-Winnow releasing the empirical distribution of ``factor`` m samples (its accounting assumes m)."""

    def make(run_batch):
        def broken(self, *a, **k):
            v = copy.copy(self)
            v.m = factor * self.m
            return run_batch(v, *a, **k)

        return broken

    return patch(DPWinnow, "run_batch", make)


THRESHOLD_NOISE_HALVED = Mutant("threshold-noise-halved", "AboveThreshold's threshold noise Lap(1/eps_hat) instead "
                                "of Lap(2/eps_hat)", _scaled_noise(threshold=0.5), profile="default")
DP_WINNOW_MUTANTS = (
    THRESHOLD_NOISE_HALVED,
    Mutant("query-noise-halved", "AboveThreshold's query noise Lap(2/eps_hat) instead of Lap(4/eps_hat)",
           _scaled_noise(query=0.5), profile="default"),
    Mutant("shadow-rate-doubled", "DP-Winnow's shadow update uses 2 eta (each draw 8 eta-DP, accounted as 4 eta)",
           _update_rate(2.0), profile="default"),
    Mutant("samples-doubled", "DP-Winnow releases 2 m samples per update (accounted as m)", _samples(2),
           profile="default"),
)
"""The DP-Winnow mutants of dp-winnow-replay. dp-winnow-one-run keeps ``threshold-noise-halved``: on its canary
pair the loss is the first window's threshold shift (eta = 1e-4 makes the draws negligible), which the query
noise, the shadow rate and the number of samples leave below its tight value."""


def dp_winnow_overspend(factor: float) -> Mutant:
    """DP-Winnow spending ``factor`` times its budget: AboveThreshold's noise scales divided by factor (eps_hat x
    factor) and the shadow update at factor eta (each draw factor x 4 eta)."""
    factor = check_real(factor, "factor", low=0.0, low_inclusive=False)
    return Mutant(f"overspend-x{factor:g}", f"DP-Winnow at {factor:g} eps_hat and {factor:g} eta",
                  together(_scaled_noise(1.0 / factor, 1.0 / factor), _update_rate(factor)))


# ============================================================================ tight epsilons of the targets


def _greedy_cover_tight(epsilon_step: float, d0, d1, delta: float) -> TightEpsilon:
    """The exact epsilon of DP-GreedyCover's run on the target's own pair (the worst case over pairs is not known)."""
    lp0, lp1 = greedy_cover_orbit_logprobs(*d0, *d1, epsilon_step)
    return TightEpsilon(exact_epsilon(lp0, lp1, delta),
                        f"exact hockey-stick divergence of the selection law at eps_step = {epsilon_step:g} on this pair "
                        f"({lp0.size} output classes of the pair's symmetries, replace-one); the worst case over "
                        "pairs has no exact method (Theorem 7 [RECON] bounds it)")


def _winnow_round0_tight(learner: DPWinnow, d0, d1, delta: float) -> TightEpsilon:
    """DP-Winnow's epsilon on the target's own pair (differing at round 0), with the worst case over pairs beside it."""
    eps, source = dp_winnow_round0_tight_epsilon(learner, d0, d1, delta)
    worst, _ = learner.tight_epsilon(delta)
    return TightEpsilon(eps, f"{source}; the worst case over event-level pairs is at most {worst:.4g} (PLD of "
                             "eps_hat and the m K 4 eta draws as randomized responses), which no pair reaches: on "
                             "DP-Winnow's count queries AboveThreshold's loss is at most about eps_hat/2 (a changed "
                             "round shifts every later count of its window by the same 1), and a multiplicative-"
                             "weights draw's loss at most about 2 eta at non-negligible probability")


def _winnow_witness_tight(mechanism: "DPWinnowMechanism", d0, d1, delta: float) -> TightEpsilon:
    """A planted DP-Winnow bug: an output event of probability 0 on d0 and above delta on d1 (no finite epsilon)."""
    p0, p1 = dp_winnow_round0_witness(mechanism.learner, d0, d1, release=mechanism.release,
                                      query_every_round=mechanism.query_every_round)
    event = ("the first shadow vector released is d1's round-0 update" if mechanism.release == "shadow"
             else "the first AboveThreshold instance fires at round 0")
    if p0 > 0 or p1 <= delta:
        raise ValueError(f"no witness of an infinite epsilon: P_d0 = {p0:g}, P_d1 = {p1:g} at delta = {delta:g}")
    return TightEpsilon(math.inf, f"exact on this pair: the event '{event}' has probability 0 on d0 and {p1:.4g} > "
                                  f"delta on d1 (no finite epsilon)")


def _deterministic_release_tight(w0: np.ndarray, w1: np.ndarray) -> TightEpsilon:
    """A deterministic release: epsilon 0 if the two outputs agree, no finite epsilon (delta < 1) otherwise."""
    same = np.array_equal(w0, w1)
    return TightEpsilon(0.0 if same else math.inf,
                        "exact: deterministic output, " + ("the same on both datasets" if same else
                                                           "different on the two datasets (delta(eps) = 1)"))


# ============================================================================ one-run targets

ONE_RUN_WINNOW_PARAMS = dict(epsilon_hat=3.0, eta=1e-4, m=3, L=1.5, K=300, delta=1e-6)
ONE_RUN_GREEDY_COVER_PARAMS = dict(epsilon_step=0.4, delta=1e-5)


def _fixed_bits(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(n) < 0.5


def winnow_canary_pair(n: int = 20):
    """Event-level pair of the canary-round design: n canary rounds, canary 0 excluded (d0) / included (d1).

    The other canaries' bits are fixed (seeded). Under d1 round 0 is a mistake of the uniform
    initial weights, hence the first cached example; under d0 it is not a mistake.
    """
    bits = _fixed_bits(n, 11)
    b0, b1 = bits.copy(), bits.copy()
    b0[0], b1[0] = False, True
    return winnow_canary_stream(b0), winnow_canary_stream(b1)


def _shadow_boost_of_round0(K: int, d: int):
    """ln w_0 - median_j ln w_j of the first released shadow vector (2 eta iff round 0 was the cached example)."""

    def score(outputs):
        o = np.asarray(outputs, dtype=float)
        has = o[:, 0] >= 0
        p = np.where(has[:, None], o[:, K:K + d], 1.0)
        lp = np.log(p)
        return np.where(has, lp[:, 0] - np.median(lp, axis=1), 0.0)

    return score


def greedy_cover_canary_features_pair(n: int = 12):
    """Replace-one pair of the canary-feature design: n canary records, record 0 labelled 0 (d0) / 1 (d1)."""
    bits = _fixed_bits(n, 12)
    b0, b1 = bits.copy(), bits.copy()
    b0[0], b1[0] = False, True
    return greedy_cover_canary_data(b0), greedy_cover_canary_data(b1)


def _feature_bit_before_T(feature: int):
    """The bit attached to ``feature`` if it was chosen before T (the last feature), else 1/2 (no evidence)."""

    def score(outputs):
        o = np.asarray(outputs)
        M = o.shape[1] // 2
        order, bits = o[:, :M], o[:, M:]
        rows = np.arange(o.shape[0])
        pos_f = (order == feature).argmax(axis=1)
        pos_T = (order == M - 1).argmax(axis=1)
        return np.where(pos_f < pos_T, bits[rows, pos_f], 0.5).astype(float)

    return score


# ============================================================================ one-run designs of the targets


def _winnow_canary_rounds(target: Target, m: int, seed: int, confidence: float) -> OneRunResult:
    """Canary rounds on a target's DP-Winnow learner (or non-private Winnow), against the target's claim."""
    mech = target.mechanism
    claim = dict(epsilon_claimed=target.epsilon, delta=target.delta, confidence=confidence)
    if isinstance(mech, DPWinnowMechanism):
        return dp_winnow_canary_one_run(mech.learner, m, seed, release=mech.release,
                                        query_every_round=mech.query_every_round, **claim)
    if isinstance(mech, WinnowReleaseWeights):
        # only eta is used by release="winnow"; the claim is the target's
        return dp_winnow_canary_one_run(DPWinnow(eta=mech.eta), m, seed, release="winnow", **claim)
    raise TypeError(f"target {target.name!r}: design {WINNOW_CANARY_ROUNDS!r} does not apply to a "
                    f"{type(mech).__name__} mechanism")


def _greedy_cover_canary_features(target: Target, m: int, seed: int, confidence: float) -> OneRunResult:
    """Canary features on a target's DP-GreedyCover rounds (its ``epsilon_step``), against the target's claim."""
    mech = target.mechanism
    if not isinstance(mech, GreedyCoverMechanism):
        raise TypeError(f"target {target.name!r}: design {GREEDY_COVER_CANARY_FEATURES!r} does not apply to a "
                        f"{type(mech).__name__} mechanism")
    learner = DPGreedyCover(epsilon_step=mech.epsilon_step)
    return greedy_cover_canary_one_run(learner, m, seed, confidence=confidence, epsilon_claimed=target.epsilon,
                                       delta=target.delta)


WINNOW_CANARY_ROUNDS_DESIGN = OneRunDesign(
    WINNOW_CANARY_ROUNDS, _winnow_canary_rounds, "one canary per round of a DP-Winnow stream (event-level)")
GREEDY_COVER_CANARY_FEATURES_DESIGN = OneRunDesign(
    GREEDY_COVER_CANARY_FEATURES, _greedy_cover_canary_features, "one canary feature per record (replace-one)")


def _register_one_run() -> None:
    """Targets tuned for the learners' own one-run canary designs (module docstring)."""
    w0, w1 = winnow_canary_pair()
    learner = DPWinnow(**ONE_RUN_WINNOW_PARAMS)
    g = learner.guarantee
    T, d = w0[0].shape
    K = min(learner.K, T)  # update slots kept in the many-trial outputs (lossless: <= 1 update per round)
    nb = NR.REPLACE_ONE_ROUND
    params = "eps_hat=3, eta=1e-4, m=3, L=1.5, K=300"
    common = dict(neighbouring=nb, canary="label of canary round 0 flipped", paper=PAPER, one_run_design=WINNOW_CANARY_ROUNDS_DESIGN)
    register_target(Target(
        "dp-winnow-one-run", "winnow", DPWinnowMechanism(learner, max_updates=K), w0, w1, g.epsilon, g.delta,
        description=f"DP-Winnow tuned for one-run canary rounds ({params}); many-trial pair: 20 canary "
                    "rounds, white-box: the exact log-likelihood ratio of the transcript",
        score=_first_update_at_zero, default_trials=10_000,
        log_likelihood_ratio=dp_winnow_log_likelihood_ratio(DPWinnowMechanism(learner, max_updates=K), w0, w1),
        claim_source="Lemma 11 [RECON accounting]: eps_hat + composition of mK 4eta-DP draws (learner's own accounting)", **common,
        tight_epsilon=lambda: _winnow_round0_tight(learner, w0, w1, g.delta),
        mutants=(THRESHOLD_NOISE_HALVED,), overspend=dp_winnow_overspend,
    ))
    register_target(Target(
        "dp-winnow-one-run-query-on-mistakes", "winnow", DPWinnowMechanism(learner, query_every_round=False, max_updates=K),
        w0, w1, g.epsilon, g.delta, planted_bug=True,
        description="BUG: AddQuery only on mistake rounds (not private), one-run parameters: "
                    "a firing at a canary round proves the canary is included",
        score=_first_update_at_zero, default_trials=10_000, claim_source="claims DP-Winnow's accounting", **common,
        tight_epsilon=lambda: _winnow_witness_tight(DPWinnowMechanism(learner, query_every_round=False), w0, w1, g.delta),
    ))
    register_target(Target(
        "dp-winnow-one-run-release-shadow", "winnow", DPWinnowMechanism(learner, release="shadow", max_updates=K),
        w0, w1, g.epsilon, g.delta, planted_bug=True,
        description="BUG: releases the hidden (shadow) weights, one-run parameters: the cached canary's "
                    "coordinate is visibly boosted by 2 eta",
        score=_shadow_boost_of_round0(K, d), default_trials=10_000,
        claim_source="claims DP-Winnow's accounting", **common,
        tight_epsilon=lambda: _winnow_witness_tight(DPWinnowMechanism(learner, release="shadow"), w0, w1, g.delta),
    ))
    wa = WinnowReleaseWeights(learner.eta).sample(w0, None, 1)[0]
    wb = WinnowReleaseWeights(learner.eta).sample(w1, None, 1)[0]
    register_target(Target(
        "winnow-one-run-release-weights", "winnow", WinnowReleaseWeights(learner.eta), w0, w1,
        g.epsilon, g.delta, planted_bug=True,
        description="BUG: non-private Winnow (eta = 1e-4) releasing its weights, claiming the one-run "
                    "DP-Winnow's budget",
        score=_projection(wb - wa), default_trials=10_000, claim_source="claims DP-Winnow's accounting", **common,
        tight_epsilon=lambda: _deterministic_release_tight(wa, wb),
    ))

    c0, c1 = greedy_cover_canary_features_pair()
    gc = DPGreedyCover(**ONE_RUN_GREEDY_COVER_PARAMS)
    gg = gc.guarantee
    n = c0[0].shape[0]
    common = dict(neighbouring=NR.REPLACE_ONE, canary="label of canary record 0 flipped", paper=PAPER, one_run_design=GREEDY_COVER_CANARY_FEATURES_DESIGN,
                  score=_feature_bit_before_T(0))
    register_target(Target(
        "greedy-cover-one-run", "greedy-cover", GreedyCoverMechanism(gg.epsilon, gg.delta), c0, c1, gg.epsilon, gg.delta,
        description=f"DP-GreedyCover, eps_step = 0.4, delta = 1e-5, tuned for one-run canary features; many-trial "
                    f"pair: {n} canary records, white-box: the exact log-likelihood ratio of the selection sequence",
        log_likelihood_ratio=greedy_cover_log_likelihood_ratio(GreedyCoverMechanism(gg.epsilon, gg.delta), c0, c1),
        default_trials=20_000, mutants=GREEDY_COVER_MUTANTS, overspend=greedy_cover_overspend,
        claim_source="Theorem 7 [RECON] replace-one: eps_AR + eps_step/2 (set-cover analysis)", **common,
        tight_epsilon=lambda: _greedy_cover_tight(gc.epsilon_step, c0, c1, gg.delta),
    ))
    register_target(Target(
        "greedy-cover-one-run-step-40", "greedy-cover", GreedyCoverMechanism.at_step(40.0, gg.delta), c0, c1,
        gg.epsilon, gg.delta,
        planted_bug=True,
        description="BUG: rounds run at eps_step = 40 (near-argmax) while claiming the eps_step = 0.4 guarantee",
        default_trials=10_000, claim_source="claims Theorem 7 [RECON] for eps_step = 0.4", **common,
        tight_epsilon=lambda: _greedy_cover_tight(40.0, c0, c1, gg.delta),
    ))


# ============================================================================ registration


def _register_greedy_cover() -> None:
    """The many-trial DP-GreedyCover targets: the canary pair, the accumulating pair and its one-round bug."""
    eps_step, delta = 1.0, 1e-3
    c0, c1 = greedy_cover_canary_pair()
    mech = GreedyCoverMechanism.at_step(eps_step, delta)
    register_target(Target(
        "greedy-cover-canary", "greedy-cover", mech, c0, c1,
        mech.epsilon, delta, neighbouring=NR.REPLACE_ONE, canary="canary label flipped",
        description="DP-GreedyCover, eps_step = 1 (from_privacy), canary feature firing only on the changed record; "
                    "white-box: the exact log-likelihood ratio of the whole selection sequence",
        paper=PAPER, score=_canary_bit, log_likelihood_ratio=greedy_cover_log_likelihood_ratio(mech, c0, c1),
        default_trials=20_000, mutants=GREEDY_COVER_MUTANTS, overspend=greedy_cover_overspend,
        claim_source="Theorem 7 [RECON] replace-one: eps_AR + eps_step/2 (set-cover analysis)",
        tight_epsilon=lambda e=eps_step, d=delta: _greedy_cover_tight(e, c0, c1, d),
    ))
    # accumulating pair: correct claim and the one-round planted bug
    eps_step, delta = 4.0, 1e-5
    a0, a1, k = greedy_cover_accumulation_pair()
    mech = GreedyCoverMechanism.at_step(eps_step, delta)
    register_target(Target(
        "greedy-cover-accumulation", "greedy-cover", mech, a0, a1,
        mech.epsilon, delta, neighbouring=NR.REPLACE_ONE,
        description="DP-GreedyCover, eps_step = 4 (from_privacy), changed record fired by 9 features; "
                    "white-box: the exact log-likelihood ratio of the whole selection sequence",
        paper=PAPER, score=_rounds_before_cover(k), log_likelihood_ratio=greedy_cover_log_likelihood_ratio(mech, a0, a1),
        default_trials=60_000, mutants=(EM_HALF_DROPPED,), overspend=greedy_cover_overspend,
        claim_source="Theorem 7 [RECON] replace-one: eps_AR + eps_step/2 (set-cover analysis)",
        one_run_design=GREEDY_COVER_CANARY_FEATURES_DESIGN,
        tight_epsilon=lambda e=eps_step, d=delta: _greedy_cover_tight(e, a0, a1, d),
    ))
    register_target(Target(
        "greedy-cover-one-round-claim", "greedy-cover", mech, a0, a1,
        eps_step, 0.0, neighbouring=NR.REPLACE_ONE, planted_bug=True,
        description="BUG: per-round eps_step = 4 but the overall claim computed as if one round (eps = 4)",
        paper=PAPER, score=_rounds_before_cover(k), default_trials=60_000,
        claim_source="claims Lemma 3 for the whole run",
        one_run_design=GREEDY_COVER_CANARY_FEATURES_DESIGN,
        tight_epsilon=lambda e=eps_step: _greedy_cover_tight(e, a0, a1, 0.0),
    ))


def _register_dp_winnow() -> None:
    """The many-trial DP-Winnow targets: relaxed parameters, the replay statistic and three planted bugs."""
    r0, r1 = winnow_round0_canary_pair()
    replay = DPWinnow(**REPLAY_PARAMS, delta=0.0)
    rg = replay.guarantee
    mech = DPWinnowMechanism(replay)
    register_target(Target(
        "dp-winnow-replay", "winnow", mech, r0, r1, rg.epsilon, REPLAY_DELTA,
        neighbouring=NR.REPLACE_ONE_ROUND, canary="round 0 replaced (winnow_round0_canary_pair)",
        description="DP-Winnow, relaxed parameters (eps_hat=2, eta=0.05, m=10, L=5, K=1), d=4, T=30; white-box: the "
                    "exact log-likelihood ratio of the transcript (first window's firing law + every draw, replayed)",
        paper=PAPER, score=winnow_replay_llr(replay, r0, r1),
        log_likelihood_ratio=dp_winnow_log_likelihood_ratio(mech, r0, r1), default_trials=20_000,
        claim_source=f"Lemma 11 [RECON accounting]: pure eps_hat + 4 eta m K = {rg.epsilon:g} (learner's own "
                     f"accounting), hence ({rg.epsilon:g}, delta)-DP for every delta; audited at delta = {REPLAY_DELTA:g}",
        tight_epsilon=lambda: _winnow_round0_tight(replay, r0, r1, REPLAY_DELTA),
        mutants=DP_WINNOW_MUTANTS, overspend=dp_winnow_overspend,
    ))
    w0, w1 = winnow_pair()
    learner = DPWinnow(**WINNOW_PARAMS, delta=1e-5)
    g = learner.guarantee
    register_target(Target(
        "dp-winnow-query-on-mistakes", "winnow", DPWinnowMechanism(learner, query_every_round=False), w0, w1,
        g.epsilon, g.delta, neighbouring=NR.REPLACE_ONE_ROUND, canary="label of round 0 flipped", planted_bug=True,
        description="BUG: AddQuery only on mistake rounds (not private): a firing at round 0 "
                    "is impossible on d0",
        paper=PAPER, score=_first_update_at_zero, default_trials=10_000,
        claim_source="claims DP-Winnow's accounting",
        tight_epsilon=lambda: _winnow_witness_tight(DPWinnowMechanism(learner, query_every_round=False), w0, w1, g.delta),
    ))
    direction = np.zeros(learner.K + learner.K * w0[0].shape[1])
    direction[learner.K:learner.K + w0[0].shape[1]] = w1[1][0] * w0[0][0]  # first update's log-weights . (y'_0 x_0)
    register_target(Target(
        "dp-winnow-release-shadow", "winnow", DPWinnowMechanism(learner, release="shadow"), w0, w1,
        g.epsilon, g.delta, neighbouring=NR.REPLACE_ONE_ROUND, canary="label of round 0 flipped", planted_bug=True,
        description="BUG: releases the hidden (shadow) weights instead of the m-sample empirical distribution",
        paper=PAPER, score=_projection(direction), default_trials=10_000,
        claim_source="claims DP-Winnow's accounting",
        tight_epsilon=lambda: _winnow_witness_tight(DPWinnowMechanism(learner, release="shadow"), w0, w1, g.delta),
    ))
    wa = WinnowReleaseWeights(learner.eta).sample(w0, None, 1)[0]
    wb = WinnowReleaseWeights(learner.eta).sample(w1, None, 1)[0]
    register_target(Target(
        "winnow-release-weights", "winnow", WinnowReleaseWeights(learner.eta), w0, w1, g.epsilon, g.delta,
        neighbouring=NR.REPLACE_ONE_ROUND, canary="label of round 0 flipped", planted_bug=True,
        description="BUG: non-private Winnow releasing its weights, claiming DP-Winnow's budget",
        paper=PAPER, score=_projection(wb - wa), default_trials=10_000,
        claim_source="claims DP-Winnow's accounting",
        tight_epsilon=lambda: _deterministic_release_tight(wa, wb),
    ))


def _register() -> None:
    _register_greedy_cover()
    _register_dp_winnow()
    _register_one_run()


_register()
