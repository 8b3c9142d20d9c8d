"""Decision lists, Rivest's learner and DP-GreedyCover (Sec. 3 of "Privately Learning Decision Lists
and a Differentially Private Winnow"; paper id ``decision-lists-winnow``), and Lemma 15 (Sec. 4.3).

* :class:`DecisionList` -- an F-decision list ``[(f_1,b_1), ..., (T,b)]`` over Boolean
  feature functions (Sec. 2), evaluated on a whole feature matrix at once;
* :class:`RivestDecisionList` -- Rivest's greedy consistent learner (Rivest 1987, Sec. 1.1);
* :class:`DPGreedyCover` -- the iterative exponential mechanism of Sec. 3.1 with score
  ``q = -#errors`` on the remaining sample and ``M = |F| + 1`` rounds, and the (epsilon, delta)
  of Theorem 7 [RECON] for add/remove and replace-one neighbours. Erratum: Lemma 3 prints the
  sampling weight exp(-eps q/2), which selects the worst rule for a maximised score; the
  exponential mechanism here samples with exp(+eps q/2);
* batched runs of DP-GreedyCover (:func:`greedy_cover_sample`, arrays over trials) and
  a plain single run (:func:`greedy_cover_run`, a Python loop) for the distribution
  test, and the exact output distribution by enumeration
  (:func:`greedy_cover_exact_logprobs`) or, for larger pairs, by the pair's symmetries
  (:func:`greedy_cover_orbit_logprobs`), with the hockey-stick divergence of
  :mod:`privbound.learners.accounting`;
* Lemma 15 (monotone decision list -> large-margin halfspace) and the d -> 2d nonnegative
  embedding of Sec. 4.3, whose formula the source text lost [RECON].

Theorem 7's statement is missing from the source text; its privacy part is reconstructed from
the set-cover analysis the paper follows (Gupta, Ligett, McSherry, Roth & Talwar,
"Differentially Private Combinatorial Optimization", SODA 2010).

Conventions: in Sec. 3 the domain is {0,1}^d and labels/bits are in {0,1}; in Sec. 4
(Lemma 15) the domain is {-1,1}^d and labels are in {-1,1}. Natural logarithms throughout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from scipy import optimize, special

from privbound.learners.accounting import exact_epsilon, hockey_stick_delta
from privbound.learners.mechanisms import PrivacyGuarantee, exponential_mechanism_log_probabilities
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import (
    Interval,
    StrOptions,
    check_delta,
    check_epsilon,
    check_int,
    check_rng,
    validate_parameters,
)

if TYPE_CHECKING:  # annotations only: dp_accounting is imported when an accountant is asked for
    import dp_accounting


__all__ = [
    "feature_matrix",
    "DecisionList",
    "RivestDecisionList",
    "DPGreedyCover",
    "greedy_cover_epsilon_add_remove",
    "greedy_cover_epsilon_replace",
    "greedy_cover_step_for_epsilon",
    "greedy_cover_sample",
    "greedy_cover_log_likelihood",
    "greedy_cover_run",
    "greedy_cover_exact_logprobs",
    "hockey_stick_delta",
    "exact_epsilon",
    "greedy_cover_exchangeable_groups",
    "greedy_cover_orbit_logprobs",
    "greedy_cover_pair_epsilon",
    "monotone_dl_to_halfspace",
    "halfspace_of_rule_runs",
    "evaluate_monotone_dl",
    "random_monotone_dl",
    "nonnegative_embedding",
    "nonnegative_weights",
]


# ============================================================================ features


def feature_matrix(X: Any, features: Sequence[Callable[[np.ndarray], Any]] | None = None) -> np.ndarray:
    """The (n, |F| + 1) Boolean matrix ``Phi[i, j] = f_j(x_i)``; the last column is the constant-true T.

    ``features=None`` uses the d coordinate functions ``f_j(x) = [x_j = 1]`` on {0,1}^d.
    Each feature is a vectorised callable ``f(X) -> (n,)`` array of 0/1.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (n, d), got shape {X.shape}")
    n = X.shape[0]
    if features is None:
        cols = (X == 1)
    else:
        if len(features) < 1:
            raise ValueError("features must contain at least one feature function")
        cols = np.empty((n, len(features)), dtype=bool)
        for j, f in enumerate(features):
            v = np.asarray(f(X))
            if v.shape != (n,):
                raise ValueError(f"feature {j} must return an array of shape ({n},), got {v.shape}")
            cols[:, j] = v.astype(bool)
    return np.hstack([cols.astype(bool), np.ones((n, 1), dtype=bool)])


def _check_labels01(y: Any, n: int) -> np.ndarray:
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y must contain labels in {0, 1} (Sec. 3 convention)")
    return y.astype(np.int8)


# ============================================================================ decision lists


@dataclass(frozen=True)
class DecisionList:
    """An F-decision list (Sec. 2): rules ``(j, b)``, feature index j (|F| = the constant T), bit b.

    Evaluation: the bit of the first rule whose feature fires; ``default`` if none fires
    (never happens once T is in the list).
    """

    rules: tuple[tuple[int, int], ...]
    n_features: int
    features: tuple[Callable, ...] | None = None
    default: int = 0

    def predict_phi(self, Phi: np.ndarray) -> np.ndarray:
        """Predictions from a feature matrix (n, |F| + 1), vectorised over examples."""
        Phi = np.asarray(Phi, dtype=bool)
        if Phi.shape[1] != self.n_features + 1:
            raise ValueError(f"Phi must have {self.n_features + 1} columns, got {Phi.shape[1]}")
        if not self.rules:
            return np.full(Phi.shape[0], self.default, dtype=np.int8)
        idx = np.array([j for j, _ in self.rules])
        bits = np.array([b for _, b in self.rules], dtype=np.int8)
        fires = Phi[:, idx]
        first = fires.argmax(axis=1)
        out = bits[first]
        return np.where(fires.any(axis=1), out, np.int8(self.default))

    def predict(self, X: Any) -> np.ndarray:
        return self.predict_phi(feature_matrix(X, self.features))

    def truncated(self) -> "DecisionList":
        """The list up to and including the first T rule (later rules never fire)."""
        out = []
        for j, b in self.rules:
            out.append((j, b))
            if j == self.n_features:
                break
        return DecisionList(tuple(out), self.n_features, self.features, self.default)


class RivestDecisionList:
    """Rivest's greedy consistent learner for F-decision lists (Rivest 1987, described in Sec. 1.1).

    Repeatedly appends a rule (f, b) that is consistent with the not-yet-covered
    examples (every covered example with f = 1 has label b), preferring rules that
    cover at least one example, and removes the covered examples. Raises
    ``ValueError`` when no consistent rule exists (the sample is not labelled by any
    F-decision list). Runtime O(|F|^2 n).
    """

    def __init__(self, features: Sequence[Callable] | None = None):
        self.features = features

    def fit(self, X: Any, y: Any) -> "RivestDecisionList":
        Phi = feature_matrix(X, self.features)
        yy = _check_labels01(y, Phi.shape[0])
        self.rules_ = rivest_rules(Phi, yy)
        self.n_features_ = Phi.shape[1] - 1
        self.list_ = DecisionList(tuple(self.rules_), self.n_features_,
                                  None if self.features is None else tuple(self.features))
        return self

    def predict(self, X: Any) -> np.ndarray:
        return self.list_.predict(X)


def rivest_rules(Phi: np.ndarray, y: np.ndarray, available: np.ndarray | None = None,
                 alive: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Rivest on a feature matrix; ``available`` / ``alive`` restrict features / examples (F_j, S_j)."""
    M = Phi.shape[1]
    avail = np.ones(M, dtype=bool) if available is None else available.copy()
    alive = np.ones(Phi.shape[0], dtype=bool) if alive is None else alive.copy()
    rules: list[tuple[int, int]] = []
    while alive.any():
        fire = Phi[alive] & avail[None, :]
        ya = y[alive]
        pos = (fire & (ya[:, None] == 1)).sum(axis=0)
        neg = (fire & (ya[:, None] == 0)).sum(axis=0)
        cand = [(j, b) for j in np.flatnonzero(avail) for b in (0, 1)
                if (neg[j] if b == 1 else pos[j]) == 0]
        if not cand:
            raise ValueError("the sample is not consistent with any F-decision list over the remaining "
                             "features (Rivest's learner needs a realizable sample)")
        covering = [(j, b) for j, b in cand if (pos[j] + neg[j]) > 0]
        j, b = (covering or cand)[0]
        rules.append((int(j), int(b)))
        alive &= ~Phi[:, j]
        avail[j] = False
    return rules


def is_realizable(Phi: np.ndarray, y: np.ndarray) -> bool:
    try:
        rivest_rules(Phi, y)
        return True
    except ValueError:
        return False


# ============================================================================ DP-GreedyCover accounting


def greedy_cover_epsilon_add_remove(epsilon_step: float, delta: float) -> float:
    """Theorem 7 [RECON]: (e^{eps/2} - 1)(e^{eps/2} ln(1/delta) + 1), add/remove neighbours (set-cover analysis)."""
    h = math.exp(epsilon_step / 2.0)
    return (h - 1.0) * (h * math.log(1.0 / delta) + 1.0)


def greedy_cover_epsilon_replace(epsilon_step: float, delta: float) -> float:
    """Theorem 7 [RECON]: replace-one epsilon = eps_AR + eps_step/2 with the same delta.

    Replace-one = remove then add: (eps_AR, delta) one way and the pure e^{eps_step/2} of the
    reverse direction the other.
    """
    return greedy_cover_epsilon_add_remove(epsilon_step, delta) + epsilon_step / 2.0


def greedy_cover_step_for_epsilon(epsilon: float, delta: float, neighbouring: str = "replace-one") -> float:
    """The per-round eps_step whose reconstructed overall epsilon equals ``epsilon`` (root of a monotone map)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta <= 0:
        raise ValueError("delta must be in (0, 1) for the set-cover accounting")
    f = greedy_cover_epsilon_replace if neighbouring == "replace-one" else greedy_cover_epsilon_add_remove
    return float(optimize.brentq(lambda e: f(e, delta) - epsilon, 1e-12, 50.0, xtol=1e-14, rtol=1e-14))


class DPGreedyCover:
    """DP-GreedyCover (Sec. 3.1), realizable inputs only.

    Round j = 1..M (M = |F| + 1, no early stopping): exponential mechanism over the
    2|F_j| candidates (f, b) of the remaining features with score
    q(S_j, (f, b)) = -#{x in S_j : f(x) = 1, label != b} and per-round parameter
    ``epsilon_step`` (P ~ exp(+eps q / 2); Lemma 3's printed sign is an erratum), then
    removal of the examples the chosen feature covers.

    Privacy (Theorem 7 [RECON]): (eps_AR, delta) under add/remove with
    eps_AR = (e^{eps/2}-1)(e^{eps/2} ln(1/delta)+1), and (eps_AR + eps/2, delta) under
    replace-one (the paper's definition); ``guarantee_`` reports the one for
    ``neighbouring``. No dp_accounting building block expresses the set-cover analysis,
    so :meth:`dp_event` is ``UnsupportedDpEvent``.

    ``fit`` raises ``ValueError`` when the sample is not labelled by any F-decision
    list (the accuracy analysis, Prop. 6, needs realizability). NOTE: that check is a
    data-dependent refusal outside the privacy analysis; the privacy audits use the
    mechanism functions (:func:`greedy_cover_sample`) directly.
    """

    _parameter_constraints: dict = {
        "epsilon_step": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],  # the set-cover analysis needs delta > 0
        "neighbouring": [StrOptions({"replace-one", "add/remove"})],
    }

    def __init__(self, epsilon_step: float = 0.5, delta: float = 1e-6, features: Sequence[Callable] | None = None,
                 neighbouring: str = "replace-one", random_state: Any = None):
        self.epsilon_step = epsilon_step
        self.delta = delta
        self.features = features
        self.neighbouring = neighbouring
        self.random_state = random_state

    @classmethod
    def from_privacy(cls, epsilon: float, delta: float, **kwargs: Any) -> "DPGreedyCover":
        """Choose epsilon_step so that the reconstructed overall guarantee is exactly (epsilon, delta)."""
        nb = kwargs.get("neighbouring", "replace-one")
        return cls(epsilon_step=greedy_cover_step_for_epsilon(epsilon, delta, nb), delta=delta, **kwargs)

    def fit(self, X: Any, y: Any) -> "DPGreedyCover":
        validate_parameters(self)
        rng = self.random_state if isinstance(self.random_state, np.random.Generator) else np.random.default_rng(self.random_state)
        Phi = feature_matrix(X, self.features)
        yy = _check_labels01(y, Phi.shape[0])
        if not is_realizable(Phi, yy):
            raise ValueError("DPGreedyCover needs a realizable sample: no F-decision list is consistent with "
                             "(X, y) (Prop. 6 / the accuracy analysis assume realizability)")
        order, bits, errors = greedy_cover_sample(Phi, yy, self.epsilon_step, rng, 1)
        self.n_features_ = Phi.shape[1] - 1
        self.rules_ = [(int(j), int(b)) for j, b in zip(order[0], bits[0])]
        self.round_errors_ = errors[0].astype(int)  # -q(S_j, (f_j, b_j)) per round; they sum to the training error
        self.list_ = DecisionList(tuple(self.rules_), self.n_features_,
                                  None if self.features is None else tuple(self.features))
        self.guarantee_ = self.guarantee
        return self

    def predict(self, X: Any) -> np.ndarray:
        return self.list_.predict(X)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        validate_parameters(self)
        if self.neighbouring == "replace-one":
            eps = greedy_cover_epsilon_replace(self.epsilon_step, self.delta)
        else:
            eps = greedy_cover_epsilon_add_remove(self.epsilon_step, self.delta)
        relation = NeighbouringRelation.REPLACE_ONE if self.neighbouring == "replace-one" else NeighbouringRelation.ADD_OR_REMOVE_ONE
        return PrivacyGuarantee(eps, self.delta, relation,
                                "Theorem 7 [RECON] (set-cover analysis)", self.dp_event)

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.UnsupportedDpEvent()


def _greedy_cover_rounds(Phi: np.ndarray, y: np.ndarray, epsilon_step: float, size: int, sign: float = 1.0):
    """DP-GreedyCover's rounds on ``size`` runs at once, as a generator: the one home of its selection law.

    Round j yields the normalised log-probabilities (size, 2M) of the candidates (f, b) (index 2f + b; features
    already chosen at -inf) and the error counts (size, M, 2) of every rule on the remaining sample S_j; it is
    sent back the chosen candidates (size,) and removes the records they cover. The sampler
    (:func:`greedy_cover_sample`) sends draws, the likelihood (:func:`greedy_cover_log_likelihood`) sends
    given outputs, so both run the same law. Logits ``sign * eps * q / 2`` with q = -#errors (``sign=-1`` is
    the paper's literal, wrong sign -- for negative controls only). Samples of up to 63 records use a bitset
    representation of the remaining sample (popcounts).
    """
    eps = check_epsilon(epsilon_step, "epsilon_step")
    Phi = np.asarray(Phi, dtype=bool)
    y = np.asarray(y)
    n, M = Phi.shape
    # Error sets of the rules: (f, 0) errs on {f = 1, y = 1}; (f, 1) errs on {f = 1, y = 0}.
    E = np.stack([Phi & (y[:, None] == 1), Phi & (y[:, None] == 0)], axis=2)  # (n, M, 2)
    used = np.zeros((size, M), dtype=bool)
    rows = np.arange(size)
    if n <= 63:
        w = (np.uint64(1) << np.arange(n, dtype=np.uint64))
        Emask = np.bitwise_or.reduce(np.where(E, w[:, None, None], np.uint64(0)), axis=0)  # (M, 2)
        cover = np.bitwise_or.reduce(np.where(Phi, w[:, None], np.uint64(0)), axis=0)  # (M,)
        alive = np.full(size, np.bitwise_or.reduce(w), dtype=np.uint64)

        def count(alive):
            return np.bitwise_count(alive[:, None, None] & Emask[None]).astype(np.float64)
    else:
        Ef = E.reshape(n, 2 * M).astype(np.float64)
        alive = np.ones((size, n), dtype=np.float64)
        PhiF = Phi.astype(np.float64)

        def count(alive):
            return (alive @ Ef).reshape(size, M, 2)
    for j in range(M):
        err = count(alive)  # (size, M, 2)
        logits = sign * (eps / 2.0) * (-err)
        logits[used] = -np.inf
        logits = logits.reshape(size, 2 * M)
        top = logits.max(axis=1, keepdims=True)
        logp = logits - (top + np.log(np.exp(logits - top).sum(axis=1, keepdims=True)))
        pick = yield logp, err
        f = pick // 2
        used[rows, f] = True
        if n <= 63:
            alive = alive & ~cover[f]
        else:
            alive *= 1.0 - PhiF[:, f].T


def greedy_cover_sample(Phi: np.ndarray, y: np.ndarray, epsilon_step: float, rng: np.random.Generator,
                        size: int, *, sign: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``size`` independent runs of DP-GreedyCover at once (arrays over trials).

    Returns ``(order, bits, errors)``, each (size, M): the feature chosen in round j
    (index M-1 = T), its bit, and its number of errors on S_j (= -q). Exact inverse-CDF
    sampling of each round's exponential mechanism (:func:`_greedy_cover_rounds`; ``sign=-1``
    is the paper's literal, wrong sign -- for negative controls only).
    """
    rng = check_rng(rng)
    size = check_int(size, "size", low=1)
    M = np.asarray(Phi).shape[1]
    order = np.empty((size, M), dtype=np.int64)
    bits = np.empty((size, M), dtype=np.int8)
    errors = np.empty((size, M), dtype=np.int64)
    rows = np.arange(size)
    rounds = _greedy_cover_rounds(Phi, y, epsilon_step, size, sign)
    step = next(rounds)
    for j in range(M):
        logp, err = step
        # Inverse-CDF sampling of the exponential mechanism (exact; cheaper than Gumbel-max here).
        cum = np.cumsum(np.exp(logp), axis=1)
        u = rng.random(size) * cum[:, -1]
        pick = np.minimum((cum <= u[:, None]).sum(axis=1), 2 * M - 1)
        pick = np.where(np.isfinite(logp[rows, pick]), pick, logp.argmax(axis=1))  # round-off at the top end
        f, b = pick // 2, pick % 2
        order[:, j], bits[:, j] = f, b
        errors[:, j] = err[rows, f, b].astype(np.int64)
        step = rounds.send(pick) if j + 1 < M else None
    rounds.close()
    return order, bits, errors


def greedy_cover_log_likelihood(Phi: np.ndarray, y: np.ndarray, order: Any, bits: Any, epsilon_step: float, *,
                                sign: float = 1.0) -> np.ndarray:
    """The exact log-probability that DP-GreedyCover on (Phi, y) outputs each of the given selection sequences.

    ``order``/``bits`` (size, M) as :func:`greedy_cover_sample` returns them; the law is the one the sampler
    runs (:func:`_greedy_cover_rounds`): the sum over rounds of the chosen candidate's log-probability given
    the history. ``-inf`` for an output the learner cannot produce.
    """
    order = np.asarray(order, dtype=np.int64)
    bits = np.asarray(bits, dtype=np.int64)
    M = np.asarray(Phi).shape[1]
    if order.ndim != 2 or order.shape != bits.shape or order.shape[1] != M:
        raise ValueError(f"order and bits must both have shape (size, {M}), got {order.shape} and {bits.shape}")
    if order.min(initial=0) < 0 or order.max(initial=0) >= M or not np.all((bits == 0) | (bits == 1)):
        raise ValueError(f"order must hold feature indices in [0, {M}) and bits values in {{0, 1}}")
    size = order.shape[0]
    rows = np.arange(size)
    out = np.zeros(size)
    rounds = _greedy_cover_rounds(Phi, y, epsilon_step, size, sign)
    logp, _ = next(rounds)
    for j in range(M):
        pick = 2 * order[:, j] + bits[:, j]
        out += logp[rows, pick]
        if j + 1 < M:
            logp, _ = rounds.send(pick)
    rounds.close()
    return out


def greedy_cover_run(Phi: np.ndarray, y: np.ndarray, epsilon_step: float, rng: np.random.Generator) -> list[tuple[int, int]]:
    """One run of DP-GreedyCover, literally as the pseudocode (a Python loop over rounds and candidates)."""
    Phi = np.asarray(Phi, dtype=bool)
    y = np.asarray(y)
    n, M = Phi.shape
    alive = np.ones(n, dtype=bool)
    avail = list(range(M))
    out = []
    for _ in range(M):
        cands = [(f, b) for f in avail for b in (0, 1)]
        q = np.array([-np.count_nonzero(alive & Phi[:, f] & (y != b)) for f, b in cands], dtype=float)
        lp = exponential_mechanism_log_probabilities(q, epsilon_step)
        k = rng.choice(len(cands), p=np.exp(lp - special.logsumexp(lp)))
        f, b = cands[k]
        out.append((f, b))
        alive &= ~Phi[:, f]
        avail.remove(f)
    return out


# ============================================================================ exact output distribution


def greedy_cover_exact_logprobs(Phi0: np.ndarray, y0: np.ndarray, Phi1: np.ndarray, y1: np.ndarray,
                                epsilon_step: float) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    """Exact log-probabilities of every output list on two datasets, by enumeration.

    The output is truncated after the constant-true T (the rest is uniform and data
    independent, so truncation is post-processing that keeps the hockey-stick divergence
    unchanged). Breadth-first over choice prefixes, vectorised per level; feasible for
    |F| <= 6 (about 1.3e5 leaves). Returns ``(logp0, logp1, outputs)``.
    """
    eps = check_epsilon(epsilon_step, "epsilon_step")
    Ps = [np.asarray(P, dtype=bool) for P in (Phi0, Phi1)]
    ys = [np.asarray(v) for v in (y0, y1)]
    M = Ps[0].shape[1]
    if Ps[1].shape[1] != M:
        raise ValueError("Phi0 and Phi1 must have the same number of feature columns")
    Tidx = M - 1
    alive = [np.ones((1, P.shape[0]), dtype=bool) for P in Ps]
    used = np.zeros((1, M), dtype=bool)
    lp = [np.zeros(1), np.zeros(1)]
    prefixes: list[tuple] = [()]
    leaves_lp = [[], []]
    leaves: list[tuple] = []
    while used.shape[0] > 0:
        N = used.shape[0]
        logprob = []
        for s in (0, 1):
            E0 = (Ps[s] & (ys[s][:, None] == 1)).astype(float)
            E1 = (Ps[s] & (ys[s][:, None] == 0)).astype(float)
            a = alive[s].astype(float)
            err = np.stack([a @ E0, a @ E1], axis=2)  # (N, M, 2)
            logits = -(eps / 2.0) * err
            logits[used] = -np.inf
            logits = logits.reshape(N, 2 * M)
            logprob.append(logits - special.logsumexp(logits, axis=1, keepdims=True))
        node, cand = np.nonzero(~np.repeat(used, 2, axis=1))
        f, b = cand // 2, cand % 2
        new_lp = [lp[s][node] + logprob[s][node, cand] for s in (0, 1)]
        is_leaf = f == Tidx
        for i in np.flatnonzero(is_leaf):
            leaves.append(prefixes[node[i]] + ((int(f[i]), int(b[i])),))
        for s in (0, 1):
            leaves_lp[s].append(new_lp[s][is_leaf])
        keep = ~is_leaf
        node, f, b = node[keep], f[keep], b[keep]
        prefixes = [prefixes[i] + ((int(ff), int(bb)),) for i, ff, bb in zip(node, f, b)]
        used = used[node].copy()
        used[np.arange(node.size), f] = True
        alive = [alive[s][node] & ~Ps[s][:, f].T for s in (0, 1)]
        lp = [new_lp[s][keep] for s in (0, 1)]
    return np.concatenate(leaves_lp[0]), np.concatenate(leaves_lp[1]), leaves


# ============================================================================ exact privacy loss on a pair, by symmetry


def greedy_cover_exchangeable_groups(Phi0: np.ndarray, y0: np.ndarray, Phi1: np.ndarray, y1: np.ndarray) -> list[list[int]]:
    """The features that are exchangeable on the pair: a partition of the feature indices.

    Features j and k are in one group when swapping them (with a permutation of the records) maps BOTH
    datasets onto themselves: the multiset of rows ``(Phi0[i], y0[i], Phi1[i], y1[i])`` is unchanged when
    columns j and k are swapped. Such swaps generate a group of symmetries of the pair, so the relation is
    an equivalence and any permutation inside a group is a symmetry.
    """
    P0, P1 = np.asarray(Phi0, dtype=bool), np.asarray(Phi1, dtype=bool)
    if P0.shape != P1.shape:
        raise ValueError(f"Phi0 and Phi1 must have the same shape, got {P0.shape} and {P1.shape}")
    M = P0.shape[1]
    rows = np.hstack([P0, np.asarray(y0).reshape(-1, 1) != 0, P1, np.asarray(y1).reshape(-1, 1) != 0]).astype(np.int8)

    def canonical(R: np.ndarray) -> np.ndarray:
        return R[np.lexsort(R.T[::-1])]

    base = canonical(rows)
    groups: list[list[int]] = []
    for j in range(M):
        for g in groups:
            k = g[0]
            R = rows.copy()
            for off in (0, M + 1):
                R[:, [off + j, off + k]] = R[:, [off + k, off + j]]
            if np.array_equal(canonical(R), base):
                g.append(j)
                break
        else:
            groups.append([j])
    return groups


def greedy_cover_orbit_logprobs(Phi0: np.ndarray, y0: np.ndarray, Phi1: np.ndarray, y1: np.ndarray,
                                epsilon_step: float, *, groups: Sequence[Sequence[int]] | None = None
                                ) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-probabilities, on both datasets, of a partition of DP-GreedyCover's outputs into classes of
    equal likelihood ratio: what the hockey-stick divergence needs, for pairs too large to enumerate.

    The outputs are grouped by symmetry: permuting exchangeable features
    (:func:`greedy_cover_exchangeable_groups`) leaves both output laws unchanged, so an output's
    probabilities depend only on its sequence of (group, bit); a round picks group g with bit b with
    probability ``(#unused features of g) exp(-eps err/2) / Z`` in the state given by the number of features
    used per group. Runs stop once both datasets are covered (the rest of the list is uniform and data
    independent: post-processing), and classes reaching the same state with the same privacy loss are merged
    (their futures have the same law), so the pair's exact privacy curve is kept. With every feature in a
    group of its own this is plain enumeration (:func:`greedy_cover_exact_logprobs`, truncated after T).
    Returns ``(logp0, logp1)``.
    """
    eps = check_epsilon(epsilon_step, "epsilon_step")
    Ps = [np.asarray(P, dtype=bool) for P in (Phi0, Phi1)]
    ys = [np.asarray(v) for v in (y0, y1)]
    if Ps[0].shape != Ps[1].shape:
        raise ValueError(f"Phi0 and Phi1 must have the same shape, got {Ps[0].shape} and {Ps[1].shape}")
    M = Ps[0].shape[1]
    gs = greedy_cover_exchangeable_groups(*Ps[:1], ys[0], Ps[1], ys[1]) if groups is None else [list(g) for g in groups]
    if sorted(j for g in gs for j in g) != list(range(M)):
        raise ValueError(f"groups must partition the {M} features, got {gs}")
    sizes = np.array([len(g) for g in gs])
    # error sets of (f, 0) and (f, 1) per dataset, as float matrices (records x features)
    E = [[(P & (v[:, None] == 1)).astype(float), (P & (v[:, None] == 0)).astype(float)] for P, v in zip(Ps, ys)]
    rounds: dict[tuple, tuple] = {}

    def round_law(counts: tuple) -> tuple:
        """The state's open groups, log P(group, bit) on each dataset, and whether each choice covers both."""
        if counts not in rounds:
            used = [j for g, c in zip(gs, counts) for j in g[:c]]
            open_groups = [k for k, (g, c) in enumerate(zip(gs, counts)) if c < len(g)]
            rep = [gs[k][counts[k]] for k in open_groups]
            unused = (sizes - np.asarray(counts))[open_groups]
            logpick, covered = [], np.ones(len(rep), dtype=bool)
            for s in (0, 1):
                alive = ~Ps[s][:, used].any(axis=1)
                logits = -(eps / 2.0) * np.stack([alive @ E[s][0][:, rep], alive @ E[s][1][:, rep]], axis=1)
                logits += np.log(unused)[:, None]
                top = logits.max()
                logpick.append(logits - (top + math.log(np.exp(logits - top).sum())))
                covered &= ~(alive[:, None] & ~Ps[s][:, rep]).any(axis=0)
            rounds[counts] = (open_groups, logpick[0], logpick[1], covered)
        return rounds[counts]

    nodes: dict[tuple, list[float]] = {(tuple([0] * len(gs)), 0.0): [0.0, 0.0]}
    leaves0: list[float] = []
    leaves1: list[float] = []
    while nodes:
        children: dict[tuple, list[float]] = {}
        for (counts, _), (lp0, lp1) in nodes.items():
            open_groups, pick0, pick1, covered = round_law(counts)
            for i, k in enumerate(open_groups):
                c2 = counts[:k] + (counts[k] + 1,) + counts[k + 1:]
                leaf = covered[i] or sum(c2) == M
                for b in (0, 1):
                    a0, a1 = lp0 + pick0[i, b], lp1 + pick1[i, b]
                    if leaf:
                        leaves0.append(a0)
                        leaves1.append(a1)
                        continue
                    key = (c2, round(a0 - a1, 10))
                    if key in children:
                        children[key] = [np.logaddexp(children[key][0], a0), np.logaddexp(children[key][1], a1)]
                    else:
                        children[key] = [a0, a1]
        nodes = children
    return np.array(leaves0), np.array(leaves1)


def greedy_cover_pair_epsilon(Phi0: np.ndarray, y0: np.ndarray, Phi1: np.ndarray, y1: np.ndarray,
                              epsilon_step: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of DP-GreedyCover (per-round ``epsilon_step``) on ONE pair of datasets
    (:func:`greedy_cover_orbit_logprobs` and :func:`exact_epsilon`)."""
    delta = check_delta(delta)
    lp0, lp1 = greedy_cover_orbit_logprobs(Phi0, y0, Phi1, y1, epsilon_step)
    return exact_epsilon(lp0, lp1, delta)


# ============================================================================ Lemma 15 and the 2d embedding


def evaluate_monotone_dl(X: np.ndarray, vars_: Sequence[int], bits: Sequence[int], default: int) -> np.ndarray:
    """A monotone 1-decision list over {-1,1}^d: rule i fires iff x[vars_[i]] = +1; labels in {-1,1}."""
    X = np.asarray(X)
    out = np.full(X.shape[0], default, dtype=np.int64)
    done = np.zeros(X.shape[0], dtype=bool)
    for v, b in zip(vars_, bits):
        fire = (X[:, v] == 1) & ~done
        out[fire] = b
        done |= fire
    return out


def random_monotone_dl(rng: np.random.Generator, d: int, r: int, D: int) -> tuple[np.ndarray, np.ndarray, int]:
    """A monotone 1-DL of length r (r-1 rules + default) with exactly D alternations of the bits (D <= r-1)."""
    rng = check_rng(rng)
    if not (1 <= r - 1 <= d and 0 <= D <= r - 1):
        raise ValueError(f"need 1 <= r-1 <= d and 0 <= D <= r-1, got d={d}, r={r}, D={D}")
    cuts = set(rng.choice(np.arange(1, r), size=D, replace=False).tolist()) if D else set()
    b = np.empty(r, dtype=np.int64)
    cur = int(rng.choice((-1, 1)))
    for i in range(r):
        if i in cuts:
            cur = -cur
        b[i] = cur
    vars_ = rng.choice(d, size=r - 1, replace=False)
    return vars_, b[:-1], int(b[-1])


def monotone_dl_to_halfspace(vars_: Sequence[int], bits: Sequence[int], default: int, d: int) -> np.ndarray:
    """Lemma 15 [RECON construction]: weights v over (x_1..x_d, x_0 = 1), ||v||_1 = 1.

    The final maximal run of rules whose bit equals the default gets weight 0 (they
    never change the output; kept, they would cost a factor r of margin, Theta(r^-(D+1)));
    the remaining runs R_1..R_k (in list order)
    get weight s_j W_j with W_j = sum_{l>j} |R_l| W_l + 3/2; the default gets bias
    s_def/2 over z = (1+x)/2; converted to the +-1 encoding and l1-normalised.
    sign(<v, (x, 1)>) equals the list on every x in {-1,1}^d.
    """
    bits = list(bits)
    keep = len(bits)
    while keep > 0 and bits[keep - 1] == default:
        keep -= 1
    return halfspace_of_rule_runs(vars_, bits[:keep], default, d)


def halfspace_of_rule_runs(vars_: Sequence[int], bits: Sequence[int], default: int, d: int) -> np.ndarray:
    """The weights of :func:`monotone_dl_to_halfspace` for the rules ``bits`` (on ``vars_``) as given:
    runs R_1..R_k of equal bits weighted s_j W_j, W_j = sum_{l>j} |R_l| W_l + 3/2, bias s_def/2,
    in the +-1 encoding, l1-normalised."""
    bits = list(bits)
    runs: list[list[int]] = []
    for i in range(len(bits)):
        if runs and bits[runs[-1][0]] == bits[i]:
            runs[-1].append(i)
        else:
            runs.append([i])
    wz = np.zeros(d)
    later = 0.0
    for run in reversed(runs):
        W = later + 1.5
        for i in run:
            wz[vars_[i]] = bits[i] * W
        later += len(run) * W
    v = np.concatenate([wz / 2.0, [default * 0.5 + wz.sum() / 2.0]])
    return v / np.abs(v).sum()


def nonnegative_embedding(X: Any) -> np.ndarray:
    """The d -> 2d map z = (x, -x) of Sec. 4.3 [RECON]; with :func:`nonnegative_weights`, <v', z> = <v, x>."""
    X = np.asarray(X)
    return np.concatenate([X, -X], axis=-1)


def nonnegative_weights(v: Any) -> np.ndarray:
    """v' = (v+, v-) >= 0 with ||v'||_1 = ||v||_1 (the margin is unchanged)."""
    v = np.asarray(v, dtype=float)
    return np.concatenate([np.maximum(v, 0.0), np.maximum(-v, 0.0)], axis=-1)
