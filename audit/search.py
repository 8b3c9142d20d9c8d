"""Neighbour search for black-box mechanisms (issue 8, item 3).

When no worst-case neighbouring pair is known, spend a stated fraction of the trial
budget looking for one, then audit the best candidate on fresh trials (in the spirit
of DP-Finder, Bichsel et al. 2018, and DP-Sniper, Bichsel et al. 2021: search on cheap
estimates, certify on independent data).

Search phase (``search_fraction`` of the per-side trials):

1. structured candidates from the input space (all-equal vs one-changed, half-shifted,
   one-up-one-down, extreme corners...);
2. random neighbouring pairs;
3. local search: perturbations of the best pairs so far.

Each candidate is scored by a cheap estimate: the Clopper--Pearson split estimate of
:func:`audit.core.audit_outputs` at confidence 1/2 (a median-unbiased-ish lower bound),
on a few hundred trials.

Certification: the best pair is audited by :func:`audit.core.audit_mechanism` on the
remaining ``(1 - search_fraction)`` of the trials with a seed stream disjoint from the
search (``SeedSequence([seed, 1])`` versus ``SeedSequence([seed, 0, i])``). The pair is a
function of the search data only, which are independent of the certification trials,
so the final bound holds at the stated confidence conditionally on the pair, hence
unconditionally. The bound certifies that pair only; a sound lower bound for the
mechanism's epsilon over the whole neighbouring relation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from audit.core import AuditResult, audit_mechanism, audit_outputs
from audit.engine import run_trials
from learners._validation import check_confidence, check_delta, check_epsilon, check_int, check_real

__all__ = [
    "InputSpace",
    "BoxNeighbours",
    "RecordNeighbours",
    "FiniteNeighbours",
    "SearchResult",
    "search_and_audit",
    "search_target",
    "infer_input_space",
]


class InputSpace:
    """A neighbouring relation to search: structured pairs, random pairs and local moves."""

    def structured_pairs(self) -> list[tuple[Any, Any]]:  # pragma: no cover - interface
        return []

    def random_pair(self, rng: np.random.Generator) -> tuple[Any, Any]:  # pragma: no cover - interface
        raise NotImplementedError

    def perturb(self, pair: tuple[Any, Any], rng: np.random.Generator) -> tuple[Any, Any]:
        """A random neighbouring pair near ``pair`` (default: a fresh random pair)."""
        return self.random_pair(rng)


@dataclass(frozen=True)
class BoxNeighbours(InputSpace):
    """Vectors in ``[low, high]^n`` whose neighbours differ by at most ``radius`` in every coordinate.

    The relation of sensitivity-1 query vectors (report-noisy-max, exponential mechanism,
    sparse vector): ``||x - x'||_inf <= radius``.
    """

    n: int
    low: float = 0.0
    high: float = 1.0
    radius: float = 1.0

    def __post_init__(self):
        check_int(self.n, "n", low=1)
        check_real(self.radius, "radius", low=0.0, low_inclusive=False)
        if not self.high > self.low:
            raise ValueError(f"high must exceed low, got low={self.low!r}, high={self.high!r}")

    def _clip_pair(self, x, y):
        x = np.clip(np.asarray(x, float), self.low, self.high)
        y = np.clip(np.asarray(y, float), self.low, self.high)
        y = np.clip(y, x - self.radius, x + self.radius)
        return x, y

    def structured_pairs(self):
        n, r, lo = self.n, self.radius, self.low
        base = np.full(n, lo)
        h = n // 2
        out = []
        one = base.copy(); one[0] += r
        out.append((base, one))                                      # all equal / one changed
        up = base + r
        out.append((base, up))                                       # all shifted
        half = base.copy(); half[:h] += r
        out.append((half, half[::-1].copy()))                        # half shifted, mirrored
        out.append((base, half))                                     # half shifted up
        a = base.copy(); a[0] += r
        b = base.copy(); b[1 % n] += r
        out.append((a, b))                                           # one up, one down
        rest = base + r
        rest[0] = lo
        out.append((one, rest))                                      # one up, all others up instead
        return [self._clip_pair(x, y) for x, y in out]

    def random_pair(self, rng):
        x = rng.uniform(self.low, self.high, self.n)
        y = x + rng.choice([-1.0, 0.0, 1.0], self.n) * self.radius * rng.uniform(0.5, 1.0, self.n)
        return self._clip_pair(x, y)

    def perturb(self, pair, rng):
        x, y = (np.asarray(p, float).copy() for p in pair)
        i = rng.integers(self.n)
        if rng.random() < 0.5:
            step = rng.choice([-1.0, 1.0]) * self.radius
            x[i] += step
            y[i] += step
        else:
            y[i] = x[i] + rng.choice([-1.0, 0.0, 1.0]) * self.radius
        return self._clip_pair(x, y)


@dataclass(frozen=True)
class RecordNeighbours(InputSpace):
    """Datasets of ``n`` records from ``values``; neighbours replace one record."""

    n: int
    values: tuple = (0, 1)

    def __post_init__(self):
        check_int(self.n, "n", low=1)
        if len(self.values) < 2:
            raise ValueError("values must list at least two record values")

    def structured_pairs(self):
        v = np.asarray(self.values)
        out = []
        for a in (v[0], v[-1]):
            d0 = np.full(self.n, a)
            for b in (v[0], v[-1]):
                if b != a:
                    d1 = d0.copy(); d1[-1] = b
                    out.append((d0, d1))
        h = self.n // 2
        mixed = np.array([v[-1]] * h + [v[0]] * (self.n - h))
        d1 = mixed.copy(); d1[-1] = v[-1] if mixed[-1] != v[-1] else v[0]
        out.append((mixed, d1))
        return out

    def random_pair(self, rng):
        v = np.asarray(self.values)
        d0 = rng.choice(v, self.n)
        d1 = d0.copy()
        i = rng.integers(self.n)
        d1[i] = rng.choice(v[v != d0[i]])
        return d0, d1

    def perturb(self, pair, rng):
        d0, d1 = (np.asarray(p).copy() for p in pair)
        v = np.asarray(self.values)
        changed = np.flatnonzero(d0 != d1)
        j = rng.integers(self.n)
        if changed.size and j == changed[0]:
            return d0, d1
        val = rng.choice(v)
        d0[j] = val
        d1[j] = val
        return d0, d1


@dataclass(frozen=True)
class FiniteNeighbours(InputSpace):
    """An explicit list of candidate neighbouring pairs (e.g. single inputs 0 and 1)."""

    pairs: tuple

    def structured_pairs(self):
        return [tuple(p) for p in self.pairs] + [tuple(p)[::-1] for p in self.pairs]

    def random_pair(self, rng):
        p = self.pairs[int(rng.integers(len(self.pairs)))]
        return tuple(p) if rng.random() < 0.5 else tuple(p)[::-1]


@dataclass
class SearchResult:
    """The certified audit of the best pair, and the search that found it."""

    audit: AuditResult
    d0: Any
    d1: Any
    search_trials: int  # per side, spent on the search
    audit_trials: int  # per side, spent on certification
    candidates: list[dict] = field(default_factory=list)  # each: origin, cheap estimate

    @property
    def epsilon_lower_bound(self) -> float:
        return self.audit.epsilon_lower_bound

    def summary(self) -> str:
        best = max(self.candidates, key=lambda c: c["estimate"]) if self.candidates else None
        lines = [
            f"neighbour search: {len(self.candidates)} candidate pairs on {self.search_trials} trials per side;"
            f" certified on {self.audit_trials} fresh trials",
            f"  best pair ({best['origin'] if best else '-'}): d0={_short(self.d0)} d1={_short(self.d1)}",
            self.audit.summary(),
        ]
        return "\n".join(lines)


def _short(x) -> str:
    a = np.asarray(x)
    return np.array2string(a, precision=3, threshold=12) if a.ndim else repr(a.item())


def _child_seed(seed: int, *key: int) -> int:
    return int(np.random.SeedSequence([seed, *key]).generate_state(1)[0])


def search_and_audit(
    mechanism: Any,
    input_space: InputSpace,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 20_000,
    search_fraction: float = 0.2,
    trials_per_candidate: int = 250,
    n_random: int = 8,
    n_local: int = 8,
    confidence: float = 0.95,
    seed: int = 0,
    n_jobs: int | None = 1,
    score: Callable | None = None,
    name: str | None = None,
) -> SearchResult:
    """Search neighbouring pairs with ``search_fraction`` of ``trials`` (per side), certify the best on the rest.

    The number of candidates is ``floor(search_fraction * trials / trials_per_candidate)``
    (at least one): the structured pairs of ``input_space`` first, then up to ``n_random``
    random pairs, then local moves around the best pairs so far (up to ``n_local`` per
    round while budget remains). ``score`` optionally fixes the attack's score function for
    both phases; otherwise the attack is chosen from the outputs as in ``audit_mechanism``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    trials = check_int(trials, "trials", low=20)
    search_fraction = check_real(search_fraction, "search_fraction", low=0.0, high=1.0,
                                 low_inclusive=False, high_inclusive=False)
    trials_per_candidate = check_int(trials_per_candidate, "trials_per_candidate", low=20)
    confidence = check_confidence(confidence)
    check_int(seed, "seed", low=0)
    if not isinstance(input_space, InputSpace):
        raise TypeError(f"input_space must be an audit.search.InputSpace, got {type(input_space).__name__}")

    search_trials = int(math.floor(search_fraction * trials))
    audit_trials = trials - search_trials
    if audit_trials < 10:
        raise ValueError(f"search_fraction={search_fraction} leaves {audit_trials} < 10 trials for certification")
    # 60% of the search budget explores (one cheap estimate per candidate), 40% re-evaluates the
    # three best on fresh search trials to limit the winner's curse of a noisy argmax.
    budget = max(1, int(0.6 * search_trials) // trials_per_candidate)
    n_final = min(3, budget)
    final_trials = int(0.4 * search_trials) // max(n_final, 1)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))

    candidates: list[dict] = []

    def cheap_estimate(pair, n, key):
        outs = run_trials(mechanism, pair[0], pair[1], n, seed=_child_seed(seed, *key), n_jobs=n_jobs)
        try:
            return float(audit_outputs(outs.out0, outs.out1, epsilon=epsilon, delta=delta, confidence=0.5,
                                       score=score).epsilon_lower_bound)
        except ValueError:
            return 0.0

    def evaluate(pair, origin):
        est = cheap_estimate(pair, trials_per_candidate, (0, len(candidates)))
        candidates.append({"origin": origin, "estimate": est, "pair": pair})

    queue = [(p, "structured") for p in input_space.structured_pairs()]
    queue += [(input_space.random_pair(rng), "random") for _ in range(n_random)]
    for pair, origin in queue:
        if len(candidates) >= budget:
            break
        evaluate(pair, origin)
    while len(candidates) < budget:
        ranked = sorted(candidates, key=lambda c: -c["estimate"])[: max(1, min(3, len(candidates)))]
        for c in ranked:
            for _ in range(max(1, n_local // len(ranked))):
                if len(candidates) >= budget:
                    break
                evaluate(input_space.perturb(c["pair"], rng), "local")
            if len(candidates) >= budget:
                break

    finalists = sorted(candidates, key=lambda c: -c["estimate"])[:n_final]
    if final_trials >= 20 and len(finalists) > 1:
        for j, c in enumerate(finalists):
            c["final_estimate"] = cheap_estimate(c["pair"], final_trials, (3, j))
        best = max(finalists, key=lambda c: c["final_estimate"])
    else:
        best = finalists[0]
    d0, d1 = best["pair"]
    result = audit_mechanism(mechanism, d0, d1, epsilon=epsilon, delta=delta, trials=audit_trials,
                             confidence=confidence, seed=_child_seed(seed, 1), n_jobs=n_jobs, score=score,
                             name=name)
    result.details.update(search="neighbour-search", search_trials=search_trials,
                          n_candidates=len(candidates), best_origin=best["origin"])
    for c in candidates:
        c["pair"] = tuple(np.asarray(p).tolist() for p in c["pair"])
    return SearchResult(result, d0, d1, search_trials, audit_trials, candidates)


def infer_input_space(target) -> InputSpace:
    """A search space for a registered target, from its neighbouring relation and example pair."""
    d0 = np.asarray(target.d0)
    d1 = np.asarray(target.d1)
    relation = (getattr(target, "neighbouring", "") or "").lower()
    if d0.ndim == 0:
        return FiniteNeighbours(((target.d0, target.d1),))
    if "scores" in relation or "sensitivity-1" in relation:
        lo = float(min(d0.min(), d1.min()))
        hi = float(max(d0.max(), d1.max()))
        return BoxNeighbours(d0.size, low=lo, high=max(hi, lo + 1.0), radius=1.0)
    if d0.shape == d1.shape and np.all(np.isin(np.concatenate([d0, d1]), [0, 1])):
        return RecordNeighbours(d0.size, (0, 1))
    raise ValueError(f"cannot infer a search space for target {target.name!r}; pass input_space explicitly")


def search_target(
    target,
    *,
    input_space: InputSpace | None = None,
    trials: int | None = None,
    search_fraction: float = 0.2,
    seed: int = 0,
    confidence: float = 0.95,
    n_jobs: int | None = 1,
    **kwargs,
) -> SearchResult:
    """``privbound audit NAME --search``: neighbour search on a registered target, ignoring its own pair."""
    space = infer_input_space(target) if input_space is None else input_space
    res = search_and_audit(
        target.mechanism, space, epsilon=target.epsilon, delta=target.delta,
        trials=trials or 2 * target.default_trials, search_fraction=search_fraction, seed=seed,
        confidence=confidence, n_jobs=n_jobs, score=target.score, name=target.name, **kwargs,
    )
    res.audit.details.update(family=target.family, planted_bug=target.planted_bug,
                             neighbouring=target.neighbouring)
    return res
