"""Neighbour search for black-box mechanisms.

When no worst-case neighbouring pair is known, spend a stated fraction of the trial
budget looking for one, then audit the best candidate on fresh trials (in the spirit
of DP-Finder, Bichsel et al., CCS 2018, and DP-Sniper, Bichsel et al., S&P 2021: search on
cheap estimates, certify on independent data).

Search phase (``search_fraction`` of the per-side trials):

1. exploration (a third of the search budget, one batch of trials per pair): the
   structured candidates of the input space (all-equal vs one-changed, all shifted,
   one-up vs all-others-up, half-shifted...), then random neighbouring pairs, then local
   moves around the best pairs so far;
2. racing: successive halving (Karnin, Koren & Somekh, ICML 2013) on the better half, with half
   of the remaining budget -- each round gives every survivor an equal share and keeps
   the better half, until one pair is left; it gets the other half (its outputs become
   the certification's selection data).

Pairs are ranked by the bound the certification is predicted to reach with their
search outputs (:func:`privbound.audit.statistics.predicted_split_bound`: Split's own pessimistic
selection rule at the certification size); pairs with nothing certifiable yet are
ordered structured first, then by the strongest two-proportion z statistic of any threshold event
(:func:`privbound.audit.statistics.difference_evidence`), which measures signal, not sample size.

Certification on ``(1 - search_fraction)`` of the trials, fresh (seed stream
``SeedSequence([seed, 1])`` versus ``SeedSequence([seed, 0, i])`` for the search). The
winner's search outputs are the selection data: they choose the attack and the
threshold event (Split's rule, topped up with fresh trials to Split's default 20% share
when they are fewer; if the rule predicts nothing certifiable, the attack portfolio's own
choice of attack and event on the search outputs alone), and the other fresh trials
evaluate that one event by Clopper--Pearson.
Pair, attack and event are functions of the search data (and of fresh trials set aside
for selection by a rule fixed before they are drawn) only, independent of the evaluation
trials, so the bound holds at the stated confidence conditionally on
them, hence unconditionally. It certifies that pair only: a sound lower bound for the
mechanism's epsilon over the whole neighbouring relation. Reusing the search outputs as
selection data is what keeps the search cheap on mechanisms where every pair is
equivalent (measured in ``benchmarks/auditor_power.py``, part C).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from privbound.audit.attacks.choice import candidate_attacks, choose_on_selection, single_attack
from privbound.audit.attacks.library import ScoreAttack
from privbound.audit.core import FLOAT_SHARE, audit_outputs, float_estimator
from privbound.audit.estimators import BlackBox
from privbound.audit.result import AuditResult
from privbound.audit.statistics import (
    Explicit,
    Split,
    difference_evidence,
    predicted_split_bound,
)
from privbound.audit.engine import run_trials
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import check_confidence, check_delta, check_epsilon, check_int, check_real

__all__ = [
    "InputSpace",
    "RecordDomain",
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
    sparse vector): ``||x - x'||_inf <= radius``. Its structured pairs are StatDP's patterns (Ding, Wang, Wang,
    Zhang & Kifer, CCS 2018: one above, one above and the rest below, half up and mirrored, all up) with the
    mirrored split also cut at other points than the half.
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
        rest = base + r
        rest[0] = lo
        out.append((one, rest))                                      # one up, all others up instead
        half = base.copy(); half[:h] += r
        out.append((half, half[::-1].copy()))                        # half shifted, mirrored
        out.append((base, half))                                     # half shifted up
        a = base.copy(); a[0] += r
        b = base.copy(); b[1 % n] += r
        out.append((a, b))                                           # one up, one down
        for k in self._split_points():                               # the first k up, mirrored
            x = base.copy(); x[:k] += r
            out.append((x, np.r_[np.full(k, lo), np.full(n - k, lo + r)]))
        return [self._clip_pair(x, y) for x, y in out]

    def _split_points(self) -> list[int]:
        """Where the mirrored splits cut the vector, besides the halves and the first one: every point for up
        to 12 queries, else the quarters and two from either end. A mechanism that reads its queries in order
        (sparse vector) is sensitive to where the split falls."""
        n = self.n
        points = range(2, n) if n <= 12 else {2, n // 4, 3 * n // 4, n - 2, n - 1}
        return sorted(k for k in points if 1 < k < n and k != n // 2)

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
class RecordDomain(InputSpace):
    """Datasets of ``n`` records from a declared domain; neighbours change one record by at most ``radius``.

    ``low``, ``high``: the declared bounds of a record; ``kind``: ``"float"`` or ``"int"`` records;
    ``sampler(rng, n)``: draws ``n`` typical records (default: uniform in the bounds); ``radius``: the largest
    change of one record between neighbours (default ``high - low``: replace one record by any other);
    ``clips``: the guarantee claims to clip records to the bounds, so records outside them are explored too.

    Besides the structured pairs at the ends of the box and random pairs from the sampler, it proposes pairs of
    kinds that hand-made pairs miss (Casacuberta, Shoemate, Vadhan & Wagaman, "Widespread underestimation of
    sensitivity in differentially private libraries and how to fix it", CCS 2022; Mironov, CCS 2012):

    * ``"magnitude"``: every record at a large power of two inside the bounds, one moved by ``radius``;
    * ``"rounding"`` (float records): one record moved by one rounding step of a double
      (``numpy.nextafter``), or across the midpoint between two single-precision values at a large magnitude
      (where a computation in float32 rounds the two records apart);
    * ``"outside"`` (``clips=True``): one record beyond the bounds (by ``radius``, 10x and 1000x the range).

    Local moves (:meth:`perturb`) change the moved record by a fraction of ``radius``, the shared magnitude by
    a factor of two, or the offset of the moved record within a rounding step.
    """

    n: int
    low: float
    high: float
    kind: str = "float"
    sampler: Callable[[np.random.Generator, int], np.ndarray] | None = None
    radius: float | None = None
    clips: bool = False

    KINDS = ("structured", "random", "magnitude", "rounding", "outside")

    def __post_init__(self):
        check_int(self.n, "n", low=1)
        low, high = check_real(self.low, "low"), check_real(self.high, "high")
        if not high > low:
            raise ValueError(f"high must exceed low, got low={self.low!r}, high={self.high!r}")
        if not math.isfinite(high - low):
            raise ValueError(f"high - low must be a finite float, got low={self.low!r}, high={self.high!r}")
        if self.kind not in ("float", "int"):
            raise ValueError(f"kind must be 'float' or 'int', got {self.kind!r}")
        if self.radius is not None:
            check_real(self.radius, "radius", low=0.0, low_inclusive=False)
        if not isinstance(self.clips, bool):
            raise TypeError(f"clips must be a bool, got {type(self.clips).__name__} {self.clips!r}")
        if self.sampler is not None and not callable(self.sampler):
            raise TypeError(f"sampler must be callable as sampler(rng, n), got {type(self.sampler).__name__}")
        if self.kind == "int" and (math.floor(high) - math.ceil(low) < 1 or math.floor(self.step) < 1):
            raise ValueError(f"an int domain needs two integers in [low, high] at most radius apart, got "
                             f"low={self.low!r}, high={self.high!r}, radius={self.radius!r}")

    @property
    def step(self) -> float:
        """The largest change of one record (``radius``, default the width of the bounds)."""
        return float(self.high - self.low) if self.radius is None else float(self.radius)

    def is_neighbouring(self, d0, d1) -> bool:
        """Whether ``(d0, d1)`` is a pair of this relation: ``n`` finite records each (integers for ``kind="int"``),
        inside the bounds unless ``clips``, differing in exactly one record by at most ``radius`` (by any amount
        when ``clips`` and no ``radius``: one record replaced by any other, the guarantee clipping both)."""
        a, b = np.asarray(d0, dtype=float), np.asarray(d1, dtype=float)
        if a.shape != (self.n,) or b.shape != (self.n,) or not (np.isfinite(a).all() and np.isfinite(b).all()):
            return False
        if self.kind == "int" and not (np.array_equal(a, np.round(a)) and np.array_equal(b, np.round(b))):
            return False
        if not self.clips and (min(a.min(), b.min()) < self.low or max(a.max(), b.max()) > self.high):
            return False
        changed = np.flatnonzero(a != b)
        if changed.size != 1:
            return False
        i = int(changed[0])
        return (self.clips and self.radius is None) or abs(b[i] - a[i]) <= self.step

    def _records(self, values, inside: bool = True) -> np.ndarray:
        """Records of this kind: integers (inside the integer bounds unless ``inside`` is false) or floats."""
        x = np.asarray(values, dtype=float)
        if self.kind != "int":
            return x
        x = np.round(x)
        return np.clip(x, math.ceil(self.low), math.floor(self.high)) if inside else x

    def _toward(self, a: float, v: float) -> float:
        """``v`` moved toward ``a`` until it is within one ``radius`` of it in floating point (an integer gap for
        int records), so that the computed change of the record never exceeds the radius."""
        if self.kind == "int":
            return a + math.trunc(v - a)
        for _ in range(4):  # the rounding of a +- radius: an ulp or two (a larger gap is left for the caller)
            if abs(v - a) <= self.step:
                break
            v = float(np.nextafter(v, a))
        return v

    def _move(self, d0: np.ndarray, i: int, value: float, inside: bool = True) -> tuple:
        d1 = d0.copy()
        v = float(np.clip(value, d0[i] - self.step, d0[i] + self.step))
        d1[i] = self._toward(float(d0[i]), float(np.clip(v, self.low, self.high)) if inside else v)
        return (d0, d1)

    def _valid(self, pairs) -> list:
        return [p for p in pairs if self.is_neighbouring(*p)]

    def structured_pairs(self):
        lo, hi, n = float(self.low), float(self.high), self.n
        out = []
        for base, target in ((lo, hi), (hi, lo), (0.5 * (lo + hi), hi)):
            d0 = self._records(np.full(n, base))
            out.append(self._move(d0, n - 1, target if self.radius is None else base + np.sign(target - base) * self.step))
        mixed = self._records(np.r_[np.full(n // 2, hi), np.full(n - n // 2, lo)])
        out.append(self._move(mixed, n - 1, hi))
        return self._valid(out)

    def _draw(self, rng, size) -> np.ndarray:
        if self.sampler is None:
            return self._records(rng.uniform(self.low, self.high, size))
        drawn = self.sampler(rng, size)
        try:
            x = np.asarray(drawn, dtype=float)
        except (TypeError, ValueError):
            x = None
        if x is None or x.shape != (size,) or not np.isfinite(x).all():
            what = (f"shape {x.shape}" + ("" if x is None or np.isfinite(x).all() else ", not all finite")
                    if x is not None else f"{type(drawn).__name__} {drawn!r:.60}")
            raise ValueError(f"sampler(rng, n) must return n = {size} finite real records, got {what}")
        return self._records(np.clip(x, self.low, self.high))

    def random_pair(self, rng):
        """Typical records from the sampler, one moved by a random change within the radius (a whole number for
        int records), the other way if that leaves the bounds, drawn again if it moves nothing."""
        for _ in range(32):
            d0 = self._draw(rng, self.n)
            i = int(rng.integers(self.n))
            if self.kind == "int":
                change = float(rng.integers(1, min(math.floor(self.step), 2 ** 62) + 1) * rng.choice([-1, 1]))
            else:
                change = rng.uniform(-1.0, 1.0) * self.step
            for c in (change, -change):
                pair = self._move(d0, i, d0[i] + c)
                if self.is_neighbouring(*pair):
                    return pair
        return self.structured_pairs()[0]

    def _magnitudes(self) -> list[float]:
        top = max(abs(self.low), abs(self.high))
        if top < 2.0:
            return []
        k = int(math.floor(math.log2(top)))
        out = []
        for e in range(k, max(k - 6, 0), -1):
            for m in (2.0 ** e, -(2.0 ** e)):
                if self.low <= m <= self.high and (m - self.step >= self.low or m + self.step <= self.high):
                    out.append(m)
        return out

    def _float32_midpoint_pairs(self, m: float, preferred: float) -> list:
        """One record next to ``m`` moved across the midpoint between two single-precision values (of the record,
        and of the sum of the ``n`` records), toward ``preferred`` first, the first direction whose pair lies in
        the domain."""
        n, r, out = self.n, self.step, []
        for scale in sorted({1, n}):
            t = np.float32(abs(m) * scale)
            for direction in (preferred, -preferred):
                # the spacing on the side the record moves to (it halves below a power of two)
                beyond = t if direction * np.sign(m) > 0 else np.nextafter(t, np.float32(0))
                half32 = float(np.spacing(beyond)) / 2.0
                gap = min(r, half32)
                below = m + direction * (half32 - gap / 2.0)
                pair = self._move(self._records(np.r_[np.full(n - 1, m), below]), n - 1, below + direction * gap)
                if self.is_neighbouring(*pair):
                    out.append(pair)
                    break
        return out

    def _outside_pairs(self) -> list:
        """One record beyond each bound by ``radius``, 10x and 1000x the range: from the bound (one record replaced
        by any other, no radius given) or from ``radius`` closer (a radius given: both values outside)."""
        width, out = self.high - self.low, []
        for far in (self.step, 10 * width, 1000 * width):
            gap = far if self.radius is None else min(far, self.step)
            for bound, sign in ((self.high, 1.0), (self.low, -1.0)):
                d0 = self._records(np.full(self.n, bound))
                d0[-1] = bound + sign * (far - gap)
                d1 = d0.copy()
                d1[-1] = bound + sign * far
                out.append((self._records(d0, inside=False), self._records(d1, inside=False)))
        return out

    def special_pairs(self, rng) -> list[tuple[tuple, str]]:
        """The pairs of kinds ``magnitude``, ``rounding`` and ``outside``, interleaved (class docstring); every one
        a pair of the relation (:meth:`is_neighbouring`)."""
        n, r = self.n, self.step
        kinds: dict[str, list] = {"magnitude": [], "rounding": [], "outside": []}
        for m in self._magnitudes():
            d0 = self._records(np.full(n, m))
            direction = -1.0 if m + r > self.high else 1.0
            kinds["magnitude"].append(self._move(d0, n - 1, m + direction * r))
            if self.kind == "float":
                kinds["rounding"] += self._float32_midpoint_pairs(m, direction)
        if self.kind == "float":
            for x in (self.high, self.low, float(self._draw(rng, 1)[0])):
                d0 = self._records(np.full(n, x))
                step = np.nextafter(x, -np.inf if x >= self.high else np.inf)
                kinds["rounding"].append(self._move(d0, n - 1, float(step)))
        if self.clips:
            kinds["outside"] = self._outside_pairs()
        out, lists = [], [self._valid(kinds[k]) for k in ("magnitude", "rounding", "outside")]
        for j in range(max((len(v) for v in lists), default=0)):
            for name, v in zip(("magnitude", "rounding", "outside"), lists):
                if j < len(v):
                    out.append((v[j], name))
        return out

    def perturb(self, pair, rng):
        """A pair of the relation near ``pair`` (``pair`` itself when the move drawn leaves the relation)."""
        d0, d1 = (np.asarray(p, float).copy() for p in pair)
        changed = np.flatnonzero(d0 != d1)
        i = int(changed[0]) if changed.size else int(rng.integers(self.n))
        u = rng.random()
        if u < 0.4:  # move the changed record's new value by a fraction of the radius
            moved = (d0, self._move(d0, i, d1[i] + rng.uniform(-0.5, 0.5) * self.step,
                                    inside=not self.clips or (self.low <= d1[i] <= self.high))[1])
        elif u < 0.7:  # slide both values of the changed record (its offset within a rounding step)
            shift = rng.uniform(-0.5, 0.5) * max(self.step, float(np.spacing(np.float32(abs(d0[i]) + 1.0))))
            shift = float(np.round(shift)) if self.kind == "int" else shift
            s0, s1 = d0.copy(), d1.copy()
            s0[i], s1[i] = d0[i] + shift, d1[i] + shift
            moved = (s0, s1)
        elif u < 0.85 and abs(d0[i]) >= 2.0:  # halve or double the shared magnitude, keeping the change
            f = 2.0 if rng.random() < 0.5 else 0.5
            s0 = self._records(d0 * f, inside=False)
            s1 = s0.copy()
            s1[i] = s0[i] + (d1[i] - d0[i])
            moved = (s0, s1)
        else:  # another record takes a typical value
            j = int(rng.integers(self.n))
            v = self._draw(rng, 1)[0]
            if j != i:
                d0[j] = v
                d1[j] = v
            moved = (d0, d1)
        return moved if self.is_neighbouring(*moved) else (np.asarray(pair[0], float), np.asarray(pair[1], float))


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
    candidates: list[dict] = field(default_factory=list)  # each: origin, estimate, evidence, trials, pair
    kinds: tuple[str, ...] = ()  # the kinds of pair the input space offered, explored or not

    @property
    def epsilon_lower_bound(self) -> float:
        return self.audit.epsilon_lower_bound

    def summary(self) -> str:
        origin = self.audit.details.get("best_origin", "-")
        kinds: dict[str, int] = {k: 0 for k in self.kinds}
        for c in self.candidates:
            kinds[c["origin"]] = kinds.get(c["origin"], 0) + 1
        unexplored = [k for k, v in kinds.items() if v == 0]
        lines = [
            f"neighbour search: {len(self.candidates)} candidate pairs on {self.search_trials} trials per side;"
            f" certified on {self.audit_trials} fresh trials per side ({self.audit.n_evaluation} evaluate the event)",
            "  pairs explored      : " + ", ".join(f"{v} {k}" for k, v in kinds.items()),
        ]
        if unexplored:
            lines.append(f"  not explored        : {', '.join(unexplored)} (the budget covered "
                         f"{len(self.candidates)} pairs; more trials explore more)")
        lines += [
            f"  best pair ({origin}): d0={_short(self.d0)} d1={_short(self.d1)}",
            f"  event chosen by     : {self.audit.details.get('selection', '-')}",
            self.audit.summary(),
        ]
        return "\n".join(lines)


def _short(x) -> str:
    a = np.asarray(x)
    return np.array2string(a, precision=3, threshold=12) if a.ndim else repr(a.item())


def _child_seed(seed: int, *key: int) -> int:
    return int(np.random.SeedSequence([seed, *key]).generate_state(1)[0])


# Share of the search budget for exploration (one batch of trials_per_candidate per pair); the
# rest races the better half by successive halving (measured in benchmarks/README.md, 'Neighbour search').
_EXPLORE_SHARE = 1 / 3
_WINNER_SHARE = 0.5  # of the racing budget, reserved for the last pair (see search_and_audit)
_MIN_SELECTION_FRACTION = 0.2  # audit_mechanism's default Split(0.2)


def _same_pair(p, q) -> bool:
    return all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(p, q))


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
    float_audit: bool | str = "auto",
) -> SearchResult:
    """Search neighbouring pairs with ``search_fraction`` of ``trials`` (per side), certify the best on the rest.

    Exploration (a third of the search budget, ``trials_per_candidate`` trials each, fewer
    when the budget would not cover every structured pair): the structured pairs of
    ``input_space``, then up to ``n_random`` random pairs, then up to ``n_local`` local moves
    around the three best. Racing (the rest of the budget): successive halving (Karnin,
    Koren & Somekh, ICML 2013) on half of it -- keep the better half, give each survivor an
    equal share of the round's budget, repeat until one pair is left; the last pair gets
    the other half. Pairs are ranked by the bound the certification is predicted to reach
    with their outputs (:func:`privbound.audit.statistics.predicted_split_bound`, pessimistic
    Wilson rates; all of a pair's search outputs count).

    Certification on ``(1 - search_fraction) * trials`` fresh trials: the winner's search
    outputs choose the attack and the threshold event (Split's rule, with fresh trials
    added to the selection part up to Split's default 20% share when the search outputs
    are fewer; when the rule predicts nothing certifiable, the attack and event that the
    portfolio chooses on the search outputs alone, :func:`privbound.audit.attacks.choice.choose_on_selection`,
    with all fresh trials evaluating), and the rest evaluate it
    (Clopper--Pearson). The pair, the attack and the event are functions of search data and
    of fresh trials set aside for selection by a rule fixed before they are drawn,
    independent of the evaluation trials, so the bound holds at ``confidence``. ``score``
    optionally fixes the attack's score function for both phases.

    ``float_audit`` as in :func:`privbound.audit.audit_mechanism`: by default (without ``score``) the
    floating-point attack judges the winning pair on the fresh trials alone, with its own verdict and its own
    share of ``1 - confidence``, so that both verdicts hold together at ``confidence``. The search ranks pairs by
    the mathematical attack; a leak only the floating-point attack sees is judged on the pair that wins.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    trials = check_int(trials, "trials", low=20)
    search_fraction = check_real(search_fraction, "search_fraction", low=0.0, high=1.0,
                                 low_inclusive=False, high_inclusive=False)
    trials_per_candidate = check_int(trials_per_candidate, "trials_per_candidate", low=20)
    check_int(n_random, "n_random", low=0)
    check_int(n_local, "n_local", low=0)
    confidence = check_confidence(confidence)
    check_int(seed, "seed", low=0)
    if not isinstance(input_space, InputSpace):
        raise TypeError(f"input_space must be a privbound.audit.search.InputSpace, got {type(input_space).__name__}")

    search_trials = int(math.floor(search_fraction * trials))
    audit_trials = trials - search_trials
    if audit_trials < 10:
        raise ValueError(f"search_fraction={search_fraction} leaves {audit_trials} < 10 trials for certification")
    if search_trials < 10:
        raise ValueError(f"search_fraction={search_fraction} leaves {search_trials} < 10 trials for the search")
    sampler = _PairSampler(mechanism, seed, n_jobs, score, audit_trials, delta, confidence)
    candidates, offered = _explore(sampler, input_space, search_trials, trials_per_candidate, n_random, n_local,
                                   np.random.default_rng(np.random.SeedSequence([seed, 2])))
    best = _race(sampler, candidates, search_trials)
    result = _certify(mechanism, best, audit_trials, score=score, epsilon=epsilon, delta=delta,
                      confidence=confidence, seed=seed, n_jobs=n_jobs, name=name, float_audit=float_audit)
    result = replace(result, trials=trials, seed=seed,
                     details={**result.details, "search": "neighbour-search", "search_trials": search_trials,
                              "n_candidates": len(candidates), "best_origin": best.origin})
    summary = [{"origin": c.origin, "estimate": c.estimate, "evidence": c.key[1], "trials": c.trials,
                "pair": tuple(np.asarray(p).tolist() for p in c.pair)} for c in candidates]
    return SearchResult(result, best.pair[0], best.pair[1], search_trials, audit_trials, summary, tuple(offered))


@dataclass
class _Candidate:
    """A neighbouring pair under search: where it came from, its search outputs and its rank key."""

    origin: str
    pair: tuple
    trials: int = 0
    out0: list = field(default_factory=list)
    out1: list = field(default_factory=list)
    key: tuple[float, float] = (-math.inf, -math.inf)

    @property
    def estimate(self) -> float:
        return self.key[0]


@dataclass
class _PairSampler:
    """Draws search outputs for candidates (the d-th draw on seed stream ``[seed, 0, d]``) and ranks them."""

    mechanism: Any
    seed: int
    n_jobs: int | None
    score: Callable | None
    audit_trials: int
    delta: float
    confidence: float
    spent: int = 0
    draws: int = 0

    def sample(self, c: _Candidate, n: int) -> None:
        outs = run_trials(self.mechanism, c.pair[0], c.pair[1], n, seed=_child_seed(self.seed, 0, self.draws),
                          n_jobs=self.n_jobs)
        self.draws += 1
        self.spent += n
        c.out0.append(outs.out0)
        c.out1.append(outs.out1)
        c.trials += n
        c.key = _ranking_key(np.concatenate(c.out0), np.concatenate(c.out1), self.score,
                             self.audit_trials, self.delta, self.confidence)


def _ranked(pool: list[_Candidate]) -> list[_Candidate]:
    """Best first: a positive predicted bound, then structured pairs, then the evidence of a difference.

    Without a certifiable prediction, structured pairs rank before random and local ones: the
    evidence z measures distinguishability, not epsilon, and random box pairs that shift many
    coordinates a little win on it. Stable: earlier pairs win ties.
    """
    return sorted(pool, key=lambda c: (-c.key[0], c.origin != "structured", -c.key[1]))


def _explore(sampler: _PairSampler, input_space: InputSpace, search_trials: int, trials_per_candidate: int,
             n_random: int, n_local: int, rng: np.random.Generator) -> tuple[list[_Candidate], list[str]]:
    """One batch per pair on a third of the search budget: structured, then random, then local pairs; and the
    kinds of pair the space offered."""
    if hasattr(input_space, "special_pairs"):
        return _explore_domain(sampler, input_space, search_trials, trials_per_candidate, n_random, n_local, rng)
    structured = input_space.structured_pairs()
    explore_budget = max(1, int(search_trials * _EXPLORE_SHARE))
    # At least every structured pair is explored: a small budget shrinks the batch (floor 20).
    n0 = min(trials_per_candidate, max(20, explore_budget // max(len(structured), 1)), search_trials)
    max_explore = max(1, explore_budget // n0)
    candidates: list[_Candidate] = []

    def explore(pair, origin):
        if not any(_same_pair(pair, c.pair) for c in candidates):
            candidates.append(_Candidate(origin, pair))
            sampler.sample(candidates[-1], n0)

    queue = [(p, "structured") for p in structured]
    queue += [(input_space.random_pair(rng), "random") for _ in range(n_random)]
    for pair, origin in queue:
        if len(candidates) >= max_explore:
            break
        explore(pair, origin)
    if not candidates:
        raise ValueError(f"input_space offers no neighbouring pair to explore: {input_space!r}")
    for k in range(n_local):
        if len(candidates) >= max_explore:
            break
        parent = _ranked(candidates)[k % min(3, len(candidates))]
        explore(input_space.perturb(parent.pair, rng), "local")
    return candidates, ["structured"] * bool(structured) + ["random"] * bool(n_random) + ["local"] * bool(n_local)


# Pairs a record-domain search explores at least (the batch per pair shrinks to fit, down to 20 trials).
_DOMAIN_SLOTS = 32


def _explore_domain(sampler: _PairSampler, space: "RecordDomain", search_trials: int, trials_per_candidate: int,
                    n_random: int, n_local: int, rng: np.random.Generator) -> tuple[list[_Candidate], list[str]]:
    """Exploration over a record domain: a quarter of the slots at most for the structured pairs, then one pair of
    each special kind the domain offers (magnitude, rounding, outside), then random and further special pairs
    interleaved, then hill climbing -- local moves from the best pair so far -- on at least a third of the slots
    (and ``n_local`` at least) but at most half. Every pair is one of the domain's relation
    (:meth:`RecordDomain.is_neighbouring`) and is ranked on its own search outputs only; the certification's
    trials are fresh. Also returns the kinds the domain offered, explored or not."""
    explore_budget = max(1, int(search_trials * _EXPLORE_SHARE))
    n0 = min(trials_per_candidate, max(20, explore_budget // _DOMAIN_SLOTS), search_trials)
    slots = max(1, explore_budget // n0)
    n_climb = min(max(n_local, slots // 3), slots // 2)
    candidates: list[_Candidate] = []

    def explore(pair, origin):
        if (len(candidates) < slots and space.is_neighbouring(*pair)
                and not any(_same_pair(pair, c.pair) for c in candidates)):
            candidates.append(_Candidate(origin, pair))
            sampler.sample(candidates[-1], n0)

    structured = space.structured_pairs()
    for pair in structured[: max(1, slots // 4)]:
        explore(pair, "structured")
    randoms = [(space.random_pair(rng), "random") for _ in range(n_random)]
    special = space.special_pairs(rng)
    kinds = list(dict.fromkeys(kind for _, kind in special))
    firsts = [next(p for p in special if p[1] == kind) for kind in kinds]
    rest = [p for p in special if not any(p is f for f in firsts)]
    queue = firsts + [p for j in range(max(len(randoms), len(rest)))
                      for q in (rest, randoms) if j < len(q) for p in (q[j],)]
    for pair, origin in queue:
        if len(candidates) >= slots - n_climb:
            break
        explore(pair, origin)
    if not candidates:
        raise ValueError(f"input_space offers no neighbouring pair to explore: {space!r}")
    tries = 0
    while len(candidates) < slots and tries < 4 * slots:
        tries += 1
        explore(space.perturb(_ranked(candidates)[0].pair, rng), "local")
    offered = ["structured"] * bool(structured) + ["random"] * bool(n_random) + kinds + ["local"]
    return candidates, offered


def _race(sampler: _PairSampler, candidates: list[_Candidate], search_trials: int) -> _Candidate:
    """Successive halving on the better half; the rest of the search budget goes to the last pair.

    Half of the racing budget is kept for the last pair standing: its search outputs are the
    certification's selection data, and a weak signal needs them.
    """
    pool = _ranked(candidates)[: max(1, (len(candidates) + 1) // 2)]
    rounds = max(1, math.ceil(math.log2(len(pool)))) if len(pool) > 1 else 1
    reserve = int(_WINNER_SHARE * (search_trials - sampler.spent))
    for r in range(rounds):
        left = search_trials - sampler.spent - reserve
        share = left // ((rounds - r) * len(pool)) if len(pool) > 1 else left
        if share >= 1:
            for c in pool:
                sampler.sample(c, share)
        pool = _ranked(pool)[: max(1, (len(pool) + 1) // 2)]
        if len(pool) == 1:
            break
    best = pool[0]
    if search_trials - sampler.spent >= 1:
        sampler.sample(best, search_trials - sampler.spent)
    return best


def _certify(mechanism: Any, best: _Candidate, audit_trials: int, *, score, epsilon, delta, confidence, seed,
             n_jobs, name, float_audit) -> AuditResult:
    """Audit the winner on fresh trials (seed stream ``[seed, 1]``), its search outputs choosing the event; the
    floating-point attack, when it runs, on the fresh trials alone."""
    d0, d1 = best.pair
    start = time.perf_counter()
    float_est = float_estimator(float_audit, BlackBox(_attack_of(score)), mechanism, d0, d1, seed)
    full_confidence = confidence
    if float_est is not None:
        confidence = 1.0 - (1.0 - full_confidence) * (1.0 - FLOAT_SHARE)
    fresh = run_trials(mechanism, d0, d1, audit_trials, seed=_child_seed(seed, 1), n_jobs=n_jobs)
    sel0, sel1 = np.concatenate(best.out0), np.concatenate(best.out1)
    n_sel = min(len(sel0), len(sel1))
    sel0, sel1 = sel0[:n_sel], sel1[:n_sel]
    common = dict(epsilon=epsilon, delta=delta, confidence=confidence, seed=_child_seed(seed, 1), name=name)
    event = None
    n_selection = n_sel
    if not best.estimate > 0.0:
        # The ranking's rule predicts nothing certifiable from the search outputs (weak signal):
        # a Split would report 0. Let the attack portfolio choose attack and event on the search
        # outputs alone (audit_mechanism's rule, falling back to the strongest evidence of a
        # difference), so the fresh trials stay untouched and all of them evaluate.
        try:
            scorer, event, test, _, _ = choose_on_selection(
                sel0, sel1, candidate_attacks(_attack_of(score), sel0[:1]), len(fresh.out1), len(fresh.out0),
                delta=delta, alpha=1.0 - confidence)
        except ValueError:
            scorer, event = None, None
    if event is not None:
        explicit = Explicit(event.threshold, event.side, event.top, tie_fraction=event.tie_fraction, test=test)
        result = audit_outputs(fresh.out0, fresh.out1, estimator=BlackBox(ScoreAttack(scorer.score), explicit),
                               **common)
        selection = f"{scorer.name} and its event chosen on the {n_sel} search outputs of the pair"
    else:
        # The winner's search outputs are the selection split (attack and event); every fresh
        # trial evaluates.
        split = Split.after(n_sel, n_sel + audit_trials) if n_sel >= 1 else None
        # Never less selection data than audit_mechanism's default split: where every pair is
        # equivalent (a Gaussian on a count) the event choice needs it more than the evaluation
        # needs the extra trials.
        if split is None or split.fraction < _MIN_SELECTION_FRACTION:
            split = Split(_MIN_SELECTION_FRACTION)
        n_selection = int(math.floor(split.fraction * (n_sel + audit_trials)))
        result = audit_outputs(np.concatenate([sel0, fresh.out0]), np.concatenate([sel1, fresh.out1]),
                               estimator=BlackBox(_attack_of(score), split), **common)
        topped = n_selection - n_sel
        selection = (f"Split selection on the {n_sel} search outputs of the pair"
                     + (f" and {topped} fresh trials" if topped > 0 else ""))
    if float_est is not None:
        fp = audit_outputs(fresh.out0, fresh.out1, epsilon=epsilon, delta=delta,
                           confidence=1.0 - (1.0 - full_confidence) * FLOAT_SHARE, estimator=float_est,
                           seed=_child_seed(seed, 1), name=name)
        result = replace(result, floating_point=fp)
    return replace(result, wall_seconds=time.perf_counter() - start,
                   details={**result.details, "selection_trials": n_selection, "selection": selection})


def _attack_of(score: Callable | None) -> ScoreAttack | str:
    """The attack of a search: the user's score, else the portfolio."""
    return "auto" if score is None else ScoreAttack(score)


def _fitted_scorer(out0, out1, score):
    """``(scorer, rest0, rest1)``: the attack's score function, fitted on the first half if it learns.

    ``rest0``/``rest1`` are the outputs the scorer was not fitted on. ``(None, ...)`` when no
    attack applies to these outputs.
    """
    try:
        if score is not None:
            atk = ScoreAttack(score)
        else:  # one attack by the rule on a tenth of the outputs (at most 2000)
            n_look = max(1, min(2000, len(out0) // 10, len(out1) // 10))
            atk = single_attack(out0[:n_look], out1[:n_look])
        if atk.needs_training:
            k = len(out0) // 2
            atk.fit(out0[:k], out1[:k])
            out0, out1 = out0[k:], out1[k:]
    except ValueError:
        return None, out0, out1
    return atk.score, out0, out1


def _ranking_key(out0, out1, score, n_evaluation, delta, confidence) -> tuple[float, float]:
    """How a pair ranks: (predicted certified bound if positive else -inf, evidence of any difference).

    The first entry is Split's own pessimistic prediction from the pair's search outputs
    (:func:`privbound.audit.statistics.predicted_split_bound`); pairs with nothing certifiable yet
    are ordered by :func:`privbound.audit.statistics.difference_evidence`, which measures signal
    rather than sample size.
    """
    scorer, out0, out1 = _fitted_scorer(out0, out1, score)
    if scorer is None:
        return (-math.inf, -math.inf)
    try:
        s1, s0 = scorer(out1), scorer(out0)
        pred = predicted_split_bound(s1, s0, n_evaluation, delta=delta, confidence=confidence)
        return (pred if pred > 0.0 else -math.inf, difference_evidence(s1, s0, delta=delta))
    except ValueError:
        return (-math.inf, -math.inf)


def infer_input_space(target) -> InputSpace:
    """A search space for a registered target, from its neighbouring relation and example pair."""
    d0 = np.asarray(target.d0)
    d1 = np.asarray(target.d1)
    if d0.ndim == 0:
        return FiniteNeighbours(((target.d0, target.d1),))
    if target.neighbouring is NeighbouringRelation.BOUNDED_QUERY_CHANGE:
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
    float_audit: bool | str = "auto",
    **kwargs,
) -> SearchResult:
    """``privbound audit NAME --search``: neighbour search on a registered target, ignoring its own pair.
    ``float_audit="auto"`` follows :meth:`Target.audit`: a target that declares ``float_safe`` has its own
    floating-point audit, so the search does not run that attack beside its own (``True`` asks for it)."""
    space = infer_input_space(target) if input_space is None else input_space
    res = search_and_audit(
        target.mechanism, space, epsilon=target.epsilon, delta=target.delta,
        trials=trials or 2 * target.default_trials, search_fraction=search_fraction, seed=seed,
        confidence=confidence, n_jobs=n_jobs, score=target.score, name=target.name,
        float_audit=False if target.float_safe is not None and float_audit == "auto" else float_audit, **kwargs,
    )
    return replace(res, audit=replace(res.audit, details={**res.audit.details, **target.audit_details()}))
