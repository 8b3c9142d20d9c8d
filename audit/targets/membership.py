"""Membership-inference targets: a model, the data it is trained on, its claim, the game's relation.

:func:`membership_targets` lists them and :func:`get_membership_target` finds one by name;
``privbound membership NAME`` and the nightly report audit them with
:func:`privbound.audit.membership.membership_audit`. Registering a target computes nothing: data
are loaded and models built on first use.

Families:

* ``sklearn`` -- non-private scikit-learn classifiers on data that ship with scikit-learn (no
  download): an overfitted logistic regression on the digits, a random forest on the breast-cancer
  data, an overfitted logistic regression on a ``make_classification`` set (100 features, 450
  training records per model).
* ``batch-perceptron`` (robust-halfspaces, Ghazi et al., AISTATS 2021) -- DP Batch Perceptron, the
  Section 4 variant (Poisson rate 0.1, 10 steps, Gaussian noise calibrated by dp_accounting's RDP
  accountant) at its claimed (1, 1e-5) under add/remove, the same learner without noise, and a planted
  bug (noise divided by 100, claim unchanged), on 250 unit vectors in R^1000 labelled by a halfspace.
* ``agnostic-halfspaces`` -- Algorithm 2 (the private proper agnostic learner) at its claimed
  (0.5, 1e-5) under replace-one, and logistic regression as its non-private counterpart, on Gaussian
  data labelled by a halfspace with 10% random label noise (replace-one game: each pool record has a
  filler from the same distribution).
* ``winnow`` (decision-lists-winnow) -- DP-Winnow (Algorithm 4.2) as a classifier
  (:class:`DPWinnowClassifier`: one pass over the training records as an online stream, in an order
  drawn from ``random_state`` independently of the data; the model is the last released vector w~ and
  the confidence ``<w~, x>``, what the learner predicts with), with the relaxed parameters of the
  DP-Winnow audit targets (eps_hat = 1, eta = 0.05, m = 5, L = 1, K = 3; claim (4, 0) by the learner's
  own accounting, Lemma 11 [RECON]), and Winnow with the same eta releasing its weights as the
  non-private counterpart (:class:`WinnowClassifier`), on records of a 2-disjunction over {-1,1}^16 with
  a bias coordinate. DP-Winnow's guarantee is event-level (replace one round of the stream); the order
  does not depend on the data, so replacing one training record replaces one round: the game is
  replace-one, each pool record with a filler from the same distribution.
* ``greedy-cover`` (decision-lists-winnow) -- DP-GreedyCover (Sec. 3.1) calibrated to (1, 1e-5)
  replace-one (Theorem 7 [RECON], :meth:`DPGreedyCover.from_privacy`; eps_step = 0.135) and Rivest's
  learner as its non-private counterpart, on uniform records of {0,1}^16 labelled by a random decision
  list over the coordinates (8 rules, 4 alternations; realizable, as both learners need, fillers too). A decision list only predicts a bit, so the
  per-record confidence (:func:`first_cover_margin`) is the bit of the first rule that fires on x, as
  +-1, times 1 + (its position) / M: that rule's bit is where the exponential mechanism's per-record
  privacy loss sits (while x is uncovered, each rule firing on x with the other bit has one more error),
  and the position separates records covered early by well-supported rules from records covered late.
* ``randomized-response`` -- a reference model that is exactly epsilon-DP per record (its output on a
  record is randomized response on that record's membership), where the membership bound can be tight;
  the planted bug answers at 3 epsilon while claiming epsilon.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from privbound.audit.membership import MembershipResult, membership_audit
from privbound.learners.decision_lists_winnow.decision_lists import (
    DPGreedyCover,
    RivestDecisionList,
    evaluate_monotone_dl,
    feature_matrix,
    random_monotone_dl,
)
from privbound.learners.decision_lists_winnow.winnow import DPWinnow, OnlineTrace, Winnow, generate_instance
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.learners.robust_halfspaces.perceptron import DPBatchPerceptron
from privbound.registry import Registry

__all__ = [
    "MembershipData",
    "MembershipTarget",
    "RandomizedResponseMemoriser",
    "DPBatchPerceptronNoiseDivided",
    "DPWinnowClassifier",
    "WinnowClassifier",
    "DPGreedyCoverClassifier",
    "RivestClassifier",
    "first_cover_margin",
    "MEMBERSHIP_TARGETS",
    "membership_targets",
    "get_membership_target",
]

_AR = NeighbouringRelation.ADD_OR_REMOVE_ONE
_R1 = NeighbouringRelation.REPLACE_ONE


@dataclass(frozen=True, eq=False)
class MembershipData:
    """The records of a target: ``X, y`` (pool, or pool and population when ``X_population`` is None),
    the population and the fillers (replace-one)."""

    X: np.ndarray
    y: np.ndarray
    X_population: np.ndarray | None = None
    y_population: np.ndarray | None = None
    X_filler: np.ndarray | None = None
    y_filler: np.ndarray | None = None
    description: str = ""


@dataclass(frozen=True)
class MembershipTarget:
    """A model, its data, its claim and the game's relation.

    Attributes
    ----------
    name, family : str
        Registry name and family.
    description : str
        What the target is.
    make_estimator : callable
        ``make_estimator() -> unfitted estimator``.
    load_data : callable
        ``load_data() -> MembershipData``.
    epsilon, delta : float or None
        The claim (None for a non-private model).
    relation : NeighbouringRelation
        The relation the claim and the game are about.
    planted_bug : bool
        True for a variant that is not private at its claim; the audit must flag it.
    paper : str or None
        Paper id of the learner.
    n_reference, n_targets : int
        Default numbers of reference and target models.
    options : dict
        Further keyword arguments of :func:`membership_audit` (e.g. ``population``).
    """

    name: str
    family: str
    description: str
    make_estimator: Callable[[], Any] = field(repr=False)
    load_data: Callable[[], MembershipData] = field(repr=False)
    epsilon: float | None = None
    delta: float | None = None
    relation: NeighbouringRelation = _AR
    planted_bug: bool = False
    paper: str | None = None
    n_reference: int = 64
    n_targets: int = 8
    options: dict = field(default_factory=dict)

    @property
    def private(self) -> bool:
        return self.epsilon is not None

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "paper": self.paper, "epsilon": self.epsilon,
                "delta": self.delta, "relation": self.relation.value, "planted_bug": self.planted_bug,
                "n_reference": self.n_reference, "n_targets": self.n_targets, "description": self.description}

    def audit(self, *, n_reference: int | None = None, n_targets: int | None = None, seed: int = 0,
              n_jobs: int | None = 1, confidence: float = 0.95, cache_dir: str | None = None,
              **kwargs: Any) -> MembershipResult:
        """:func:`membership_audit` of this target (keyword arguments override the target's options)."""
        data = self.load_data()
        opts = {**self.options, **kwargs}
        if data.X_population is not None:
            opts.update(X_population=data.X_population, y_population=data.y_population)
        if data.X_filler is not None:
            opts.update(X_filler=data.X_filler, y_filler=data.y_filler)
        return membership_audit(
            self.make_estimator(), data.X, data.y, relation=self.relation,
            n_reference=self.n_reference if n_reference is None else n_reference,
            n_targets=self.n_targets if n_targets is None else n_targets,
            epsilon=self.epsilon, delta=self.delta, confidence=confidence, seed=seed, n_jobs=n_jobs,
            cache_dir=cache_dir, name=self.name, **opts)


# ============================================================================ data (scikit-learn bundled / synthetic)


def _digits() -> MembershipData:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return MembershipData(X / 16.0, y, description="scikit-learn digits (1797 8x8 images, 10 classes), pixels / 16")


def _breast_cancer() -> MembershipData:
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return MembershipData(X, y, description="scikit-learn breast cancer (569 records, 30 features), standardised")


def _synthetic() -> MembershipData:
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=1000, n_features=100, n_informative=10, random_state=0)
    return MembershipData(X, y, description="make_classification(1000 records, 100 features, 10 informative)")


def _sphere_halfspace(n: int = 250, d: int = 1000, seed: int = 20210413) -> MembershipData:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.normal(size=d)
    return MembershipData(X, np.where(X @ w > 0, 1.0, -1.0),
                          description=f"{n} uniform unit vectors in R^{d}, labels of a random halfspace")


def _gaussian_halfspace(n_pool: int = 1000, n_population: int = 200, d: int = 5, seed: int = 7) -> MembershipData:
    from privbound.learners.agnostic_halfspaces.common import HalfspaceProblem

    rng = np.random.default_rng(seed)
    problem = HalfspaceProblem.random(d, rng)
    X, y = problem.sample(2 * n_pool + n_population, rng)
    return MembershipData(X[:n_pool], y[:n_pool], X[2 * n_pool:], y[2 * n_pool:], X[n_pool:2 * n_pool],
                          y[n_pool:2 * n_pool],
                          description=f"N(0, I_{d}) records labelled by a halfspace with 10% random label noise; "
                                      f"{n_pool} pool records with {n_pool} fillers, {n_population} population")


def _sign_labelled(n: int = 1000, d: int = 5, seed: int = 11) -> MembershipData:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return MembershipData(X, np.where(X[:, 0] >= 0, 1.0, -1.0), description=f"{n} N(0, I_{d}) records, y = sign(x_1)")


def _disjunction_records(n_pool: int = 500, n_population: int = 200, d: int = 16, k: int = 2,
                         seed: int = 2305) -> MembershipData:
    """Records of the ``"disjunction"`` generator of the Winnow module: x in {-1,1}^d (the last coordinate
    the constant 1), y = OR of k random coordinates, margin 1/(2k-1); pool, fillers, population."""
    inst = generate_instance("disjunction", np.random.default_rng(seed), d, 2 * n_pool + n_population, k=k)
    X, y = inst.X, inst.y
    return MembershipData(X[:n_pool], y[:n_pool], X[2 * n_pool:], y[2 * n_pool:], X[n_pool:2 * n_pool],
                          y[n_pool:2 * n_pool],
                          description=f"{{-1,1}}^{d} records (bias coordinate last) labelled by a {k}-disjunction, "
                                      f"margin 1/{2 * k - 1}; {n_pool} pool records with {n_pool} fillers, "
                                      f"{n_population} population")


def _decision_list_records(n_pool: int = 200, n_population: int = 100, d: int = 16, r: int = 9, D: int = 4,
                           seed: int = 1987) -> MembershipData:
    """Uniform records of {0,1}^d labelled (0/1) by a random monotone decision list of length r with D
    alternations over the coordinate features; pool, fillers, population."""
    rng = np.random.default_rng(seed)
    vars_, bits, default = random_monotone_dl(rng, d, r, D)
    X_pm = rng.choice((-1, 1), size=(2 * n_pool + n_population, d))
    y = (evaluate_monotone_dl(X_pm, vars_, bits, default) == 1).astype(np.int64)
    X = (X_pm == 1).astype(float)
    return MembershipData(X[:n_pool], y[:n_pool], X[2 * n_pool:], y[2 * n_pool:], X[n_pool:2 * n_pool],
                          y[n_pool:2 * n_pool],
                          description=f"uniform {{0,1}}^{d} records labelled by a random decision list ({r - 1} rules, "
                                      f"{D} alternations); {n_pool} pool records with {n_pool} fillers, "
                                      f"{n_population} population")


# ============================================================================ models


class RandomizedResponseMemoriser:
    """A reference model that is exactly ``true_epsilon``-DP per record under add/remove.

    ``fit`` remembers its training records and draws a salt from ``random_state``. On a record x its
    output says "x was in my training set" with probability ``e^eps / (1 + e^eps)`` when that is true
    and ``1 / (1 + e^eps)`` when it is not (randomized response on x's membership, coins from a hash of
    (salt, x)); the margin ``y(x) * decision_function(x)`` is +-1 plus a uniform jitter of width 1/2
    independent of membership (labels follow ``y = sign(x_1)``). Adding or removing x changes only the
    output on x, by a factor at most e^eps: exactly eps-DP, and the best membership test on x has
    precision e^eps / (1 + e^eps), the worst case of the one-run bound. ``true_epsilon`` defaults to
    ``epsilon``; a larger value is a planted bug.
    """

    def __init__(self, epsilon: float = 1.0, true_epsilon: float | None = None, random_state: Any = None):
        self.epsilon = epsilon
        self.true_epsilon = true_epsilon
        self.random_state = random_state

    @property
    def guarantee(self):
        from privbound.learners.mechanisms import PrivacyGuarantee

        return PrivacyGuarantee(float(self.epsilon), 0.0, _AR, "randomized response on each record's membership")

    @staticmethod
    def _keys(X: np.ndarray) -> np.ndarray:
        X = np.ascontiguousarray(np.asarray(X, dtype=float))
        return np.array([int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8).digest(), "little")
                         for row in X], dtype=np.uint64)

    def fit(self, X: Any, y: Any) -> "RandomizedResponseMemoriser":
        self.members_ = set(self._keys(X).tolist())
        self.salt_ = int(np.random.default_rng(self.random_state).integers(2**62))
        self.classes_ = np.array([-1.0, 1.0])
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        keys = self._keys(X)
        member = np.array([k in self.members_ for k in keys.tolist()])
        u1, u2 = (_uniform(keys, self.salt_ + j) for j in (1, 2))
        eps = float(self.epsilon if self.true_epsilon is None else self.true_epsilon)
        truthful = u1 < 1.0 / (1.0 + math.exp(-eps))
        says_member = np.where(truthful, member, ~member)
        margin = np.where(says_member, 1.0, -1.0) + 0.5 * (u2 - 0.5)
        return np.where(X[:, 0] >= 0, 1.0, -1.0) * margin


def _uniform(keys: np.ndarray, salt: int) -> np.ndarray:
    """splitmix64 of (key + salt), as uniforms in [0, 1)."""
    with np.errstate(over="ignore"):
        z = keys + np.uint64(salt % 2**64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(float) / float(2**53)


def _logreg(C: float) -> Callable[[], Any]:
    def make():
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=C, max_iter=500)

    return make


def _forest() -> Any:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=30)


class DPBatchPerceptronNoiseDivided(DPBatchPerceptron):
    """Planted bug: DP Batch Perceptron whose calibrated Gaussian noise is divided by ``noise_div``
    (the claim is left unchanged)."""

    def __init__(self, gamma: float, *, noise_div: float = 100.0, **params: Any):
        super().__init__(gamma, **params)
        self.noise_div = noise_div

    def parameters(self):
        P = super().parameters()
        return replace(P, sigma=P.sigma / self.noise_div, source=P.source + f" [BUG: sigma / {self.noise_div:g}]")


def _perceptron(noise_div: float | None = None, noise_std: float | None = None) -> Callable[[], Any]:
    def make():
        kw = dict(epsilon=1.0, delta=1e-5, variant="experimental", noise_std=noise_std)
        if noise_div is None:
            return DPBatchPerceptron(0.1, **kw)
        return DPBatchPerceptronNoiseDivided(0.1, noise_div=noise_div, **kw)

    return make


def _proper_halfspace() -> Any:
    from privbound.learners.agnostic_halfspaces.proper import PrivateProperHalfspace

    return PrivateProperHalfspace(epsilon=0.5, delta=1e-5)


# ---------------------------------------------------------------------------- decision-lists-winnow


class _OnePassLinearClassifier:
    """An online linear learner run once over the training records as a stream, as a classifier.

    ``fit`` draws the order of the records from ``np.random.default_rng(random_state)`` (it depends
    only on their number), then runs ``_trace`` on them in that order with the same Generator; the
    model is the trace's final weights ``weights_`` and ``decision_function(X) = X @ weights_``, whose
    sign is the prediction. Labels in {-1, 1}.
    """

    random_state: Any = None

    def _trace(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> OnlineTrace:  # pragma: no cover
        raise NotImplementedError

    def fit(self, X: Any, y: Any) -> "_OnePassLinearClassifier":
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        rng = np.random.default_rng(self.random_state)
        order = rng.permutation(len(y))
        trace = self._trace(X[order], y[order], rng)
        self.weights_ = np.asarray(trace.weights, dtype=float)
        self.updates_ = int(trace.updates)
        self.classes_ = np.array([-1, 1])
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        return np.asarray(X, dtype=float) @ self.weights_

    def predict(self, X: Any) -> np.ndarray:
        return np.where(self.decision_function(X) > 0, 1, -1)


class DPWinnowClassifier(_OnePassLinearClassifier):
    """DP-Winnow (Algorithm 4.2, Sec. 4.2 of the decision-lists-winnow paper) as a classifier.

    ``fit`` draws, from ``np.random.default_rng(random_state)``, an order of the training records that
    depends only on their number, then runs :meth:`DPWinnow.run` once on them in that order (as rounds
    of an online stream, with the same Generator); the model is the last released vector w~
    (``weights_``: the empirical distribution of m samples of the shadow weights) and
    ``decision_function(X) = X @ w~``, whose sign is the learner's prediction (sgn(0) counting as a
    mistake). Labels in {-1, 1}, records in {-1, 1}^d.

    Privacy: the learner's guarantee is event-level (replace the example of one round, Lemma 11
    [RECON accounting]). For every fixed order, replacing one training record replaces one round, and
    the order is drawn independently of the data, so the same (epsilon, delta) holds under replace-one
    of the training set (:attr:`guarantee`). Add/remove is not covered: it shifts the later rounds.
    """

    def __init__(self, epsilon_hat: float = 1.0, eta: float = 0.05, m: int = 5, L: float = 1.0, K: int = 3, *,
                 delta: float = 1e-5, random_state: Any = None):
        self.epsilon_hat = epsilon_hat
        self.eta = eta
        self.m = m
        self.L = L
        self.K = K
        self.delta = delta
        self.random_state = random_state

    def learner(self) -> DPWinnow:
        return DPWinnow(self.epsilon_hat, self.eta, self.m, self.L, self.K, delta=self.delta)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        g = self.learner().guarantee
        return PrivacyGuarantee(g.epsilon, g.delta, _R1, g.source + "; one pass over the training records in an "
                                "order drawn independently of the data: replacing a record replaces one round",
                                g.event)

    def _trace(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> OnlineTrace:
        return self.learner().run(X, y, rng)


class WinnowClassifier(_OnePassLinearClassifier):
    """Normalised Winnow (:class:`Winnow`; Sec. 4.1, c = 0) as a classifier: the non-private counterpart
    of :class:`DPWinnowClassifier`.

    ``fit`` runs Winnow once over the training records in an order drawn from
    ``np.random.default_rng(random_state)`` (the same order as DP-Winnow's for the same seed and size);
    the model is the final weight vector w, released as it is, and ``decision_function(X) = X @ w``.
    """

    def __init__(self, eta: float = 0.05, random_state: Any = None):
        self.eta = eta
        self.random_state = random_state

    def _trace(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> OnlineTrace:
        return Winnow(eta=self.eta).run(X, y)


def first_cover_margin(rules: Any, n_features: int, Phi: np.ndarray, default: int = 0) -> np.ndarray:
    """The per-record confidence of an F-decision list: (2 b - 1) (1 + p / M).

    ``rules`` are the list's ``(feature, bit)`` pairs, ``Phi`` the (n, |F| + 1) feature matrix (last
    column the constant-true T), M = |F| + 1; b is the bit of the first rule firing on the record (the
    prediction) and p its 0-based position in the list (``default`` and p = len(rules) when no rule
    fires). The sign is the prediction; the magnitude, in [1, 2], grows with the position.
    """
    Phi = np.asarray(Phi, dtype=bool)
    M = int(n_features) + 1
    if Phi.shape[1] != M:
        raise ValueError(f"Phi must have {M} columns, got {Phi.shape[1]}")
    if len(rules) == 0:
        return np.full(Phi.shape[0], (2.0 * default - 1.0) * 1.0)
    idx = np.array([j for j, _ in rules])
    bits = np.array([b for _, b in rules], dtype=float)
    fires = Phi[:, idx]
    any_fires = fires.any(axis=1)
    first = fires.argmax(axis=1)
    bit = np.where(any_fires, bits[first], float(default))
    pos = np.where(any_fires, first, len(rules))
    return (2.0 * bit - 1.0) * (1.0 + pos / M)


class _DecisionListScores:
    """A fitted F-decision list over the coordinate features (``rules_``, ``n_features_``) as a classifier:
    ``decision_function`` is :func:`first_cover_margin`, labels in {0, 1}."""

    def decision_function(self, X: Any) -> np.ndarray:
        return first_cover_margin(self.rules_, self.n_features_, feature_matrix(X))

    def predict(self, X: Any) -> np.ndarray:
        return (self.decision_function(X) > 0).astype(np.int64)


class DPGreedyCoverClassifier(_DecisionListScores):
    """DP-GreedyCover (Sec. 3.1 of the decision-lists-winnow paper) calibrated to (epsilon, delta) under
    replace-one (Theorem 7 [RECON], :meth:`DPGreedyCover.from_privacy`), as a classifier over the
    coordinate features of {0,1}^d (plus the constant-true T).

    ``fit`` runs the learner with ``np.random.default_rng(random_state)``; labels in {0, 1}. The
    released list only predicts a bit, so ``decision_function`` is :func:`first_cover_margin` (the sign
    is the list's prediction). The learner refuses samples no decision list is consistent with; the
    targets' training sets are all realizable.
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, random_state: Any = None):
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state

    def learner(self, rng: np.random.Generator | None = None) -> DPGreedyCover:
        return DPGreedyCover.from_privacy(self.epsilon, self.delta, neighbouring="replace-one", random_state=rng)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return self.learner().guarantee

    def fit(self, X: Any, y: Any) -> "DPGreedyCoverClassifier":
        model = self.learner(np.random.default_rng(self.random_state)).fit(X, y)
        self.rules_ = list(model.rules_)
        self.n_features_ = model.n_features_
        self.epsilon_step_ = model.epsilon_step
        self.classes_ = np.array([0, 1])
        return self


class RivestClassifier(_DecisionListScores):
    """Rivest's greedy consistent learner (:class:`RivestDecisionList`, Rivest 1987; Sec. 1.1 of the
    decision-lists-winnow paper) over the coordinate features of {0,1}^d: the non-private counterpart
    of :class:`DPGreedyCoverClassifier`, with the same per-record confidence (:func:`first_cover_margin`).
    Deterministic; its list may end before T (a record no rule fires on gets the default 0)."""

    def fit(self, X: Any, y: Any) -> "RivestClassifier":
        model = RivestDecisionList().fit(X, y)
        self.rules_ = list(model.rules_)
        self.n_features_ = model.n_features_
        self.classes_ = np.array([0, 1])
        return self


# ============================================================================ registry

def _membership_hint(close: list[str], names: list[str]) -> str:
    return f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(names)}"


MEMBERSHIP_TARGETS: Registry[MembershipTarget] = Registry(
    MembershipTarget, name_of=lambda t: t.name,
    type_error="membership target must be a privbound.audit.targets.membership.MembershipTarget",
    duplicate_error="membership target {name!r} is already registered",
    missing_error="no membership target {name!r}{hint}", hint=_membership_hint)


MEMBERSHIP_TARGETS.register(MembershipTarget(
    "digits-logreg", "sklearn", "logistic regression (C = 100, overfitted: 100% training accuracy) on the digits",
    _logreg(100.0), _digits, n_reference=64, n_targets=8))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "breast-cancer-forest", "sklearn", "random forest (30 trees) on the breast-cancer data",
    _forest, _breast_cancer, n_reference=16, n_targets=8))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "synthetic-logreg", "sklearn", "logistic regression (C = 1000) on 450 records of 100 features",
    _logreg(1000.0), _synthetic, n_reference=64, n_targets=8))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "batch-perceptron", "batch-perceptron", "DP Batch Perceptron, Section 4 variant (p = 0.1, T = 10, RDP-calibrated "
    "sigma) at its claimed (1, 1e-5)", _perceptron(), _sphere_halfspace, epsilon=1.0, delta=1e-5,
    paper="robust-halfspaces", n_reference=32, n_targets=32, options={"population": 0.2}))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "batch-perceptron-nonprivate", "batch-perceptron", "the same learner without noise (noise_std = 0)",
    _perceptron(noise_std=0.0), _sphere_halfspace, paper="robust-halfspaces", n_reference=32, n_targets=32,
    options={"population": 0.2}))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "batch-perceptron-noise-div100", "batch-perceptron", "planted bug: the calibrated noise divided by 100, claim "
    "(1, 1e-5) unchanged", _perceptron(noise_div=100.0), _sphere_halfspace, epsilon=1.0, delta=1e-5,
    planted_bug=True, paper="robust-halfspaces", n_reference=32, n_targets=32, options={"population": 0.2}))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "agnostic-proper", "agnostic-halfspaces", "Algorithm 2 (private proper agnostic learner) at its claimed "
    "(0.5, 1e-5), replace-one", _proper_halfspace, _gaussian_halfspace, epsilon=0.5, delta=1e-5, relation=_R1,
    paper="agnostic-halfspaces", n_reference=32, n_targets=16))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "agnostic-proper-nonprivate", "agnostic-halfspaces", "logistic regression (C = 1e4), the non-private "
    "counterpart, replace-one", _logreg(1e4), _gaussian_halfspace, relation=_R1, paper="agnostic-halfspaces",
    n_reference=32, n_targets=16))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "dp-winnow", "winnow", "DP-Winnow (Algorithm 4.2), eps_hat = 1, eta = 0.05, m = 5, L = 1, K = 3, one pass in a "
    "seeded order, at its claimed (4, 0) (Lemma 11 [RECON accounting]), replace-one; confidence <w~, x>",
    DPWinnowClassifier, _disjunction_records, epsilon=4.0, delta=0.0, relation=_R1, paper="decision-lists-winnow",
    n_reference=64, n_targets=32))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "dp-winnow-nonprivate", "winnow", "Winnow (eta = 0.05), the non-private counterpart, releasing its weights, "
    "replace-one; confidence <w, x>", WinnowClassifier, _disjunction_records, relation=_R1,
    paper="decision-lists-winnow", n_reference=64, n_targets=32))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "greedy-cover", "greedy-cover", "DP-GreedyCover (Sec. 3.1) at its claimed (1, 1e-5) replace-one (Theorem 7 "
    "[RECON], eps_step = 0.135); confidence: bit of the first rule firing, scaled by its position",
    DPGreedyCoverClassifier, _decision_list_records, epsilon=1.0, delta=1e-5, relation=_R1,
    paper="decision-lists-winnow", n_reference=64, n_targets=32))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "greedy-cover-nonprivate", "greedy-cover", "Rivest's decision-list learner, the non-private counterpart, "
    "replace-one; the same confidence", RivestClassifier, _decision_list_records, relation=_R1,
    paper="decision-lists-winnow", n_reference=64, n_targets=32))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "randomized-response-eps1", "randomized-response", "exactly 1-DP per record (randomized response on membership)",
    lambda: RandomizedResponseMemoriser(1.0), _sign_labelled, epsilon=1.0, delta=0.0, n_reference=8, n_targets=8))
MEMBERSHIP_TARGETS.register(MembershipTarget(
    "randomized-response-eps1-bug", "randomized-response", "planted bug: answers at epsilon 3, claims 1",
    lambda: RandomizedResponseMemoriser(1.0, true_epsilon=3.0), _sign_labelled, epsilon=1.0, delta=0.0,
    planted_bug=True, n_reference=8, n_targets=8))


def membership_targets() -> list[MembershipTarget]:
    """Every registered membership target, in registration order."""
    return MEMBERSHIP_TARGETS.entries()


def get_membership_target(name: str) -> MembershipTarget:
    """The target called ``name``; ``KeyError`` with the closest names otherwise."""
    return MEMBERSHIP_TARGETS.get(name)
