"""The sequential audit (``trials="auto"``) on the project's suite, and the record-domain neighbour search.

Part A. Every mechanism of ``benchmarks/auditor_tightness.py`` (Laplace eps = 0.1 and 1, binary randomized
response, the analytic Gaussian) and of ``benchmarks/attack_power.py`` (its correct mechanisms and planted bugs),
plus three families at several leak sizes on pairs that are near worst case for them -- sparse vector (cutoff 2,
query and threshold noise divided by 1.25, 1.5, 2), report-noisy-max (epsilon 1.25, 1.5, 2 answering for 1) and a
noisy histogram (noise divided by 1.25, 1.5, 2) -- audited with ``trials="auto"`` at a budget of ``--max-trials``
(default 2e6) per side and ``--tolerance`` (default 10%), seeds 0 .. S-1: bound, trials spent, wall time, flagged,
why it stopped; and (unless ``--no-fixed``) the fixed-trials audit at the trials it spent (the ratio of the two
bounds; 1.0 when the sequential audit is, as designed, the fixed-trials audit at its trial count). Each audit runs
at confidence 0.95, or with ``--family-confidence F`` at the nightly's Bonferroni confidence that holds the whole
suite's audits of one seed together at F (``privbound.reports.nightly.audit_confidence``), so that a correct
mechanism flagged anywhere in a seed's run is an event of probability at most 1 - F. The floating-point attack is off
(``float_audit=False``): this part measures the mathematical verdict. Before the audits it prints each family
member's one-event limit: the largest bound one event (a set of outputs) certifies on its pair at its expected
counts on 80% of the budget, by the better of the audit's two tests, from the exact output distributions, and its
exact epsilon on the pair (the correct sparse vector with cutoff 2 reaches 0.82 of its claim on the best pair of 10
queries, so its 1.25x leak has a limit of 1.04: barely above the claim, so an audit that does not stop for futility
flags it at the budget on most seeds, while at the default tolerance it may stop unseen; its exact epsilon there is
1.087, an overspend inside the 10% tolerance). ``--svt-splits``
prints the sparse vector's limits and exact epsilons on every block split of the given numbers of queries;
``--svt-shifted-pairs`` the 1.25x leak's exact epsilons and power ceilings on pairs of shifted answers;
``--limit-budgets`` prints the members' limits at several budgets, at 0.95 and at the family confidence (the budget
a leak needs to be flagged at a confidence), and beside them the probability that the best unbiased test of the
member's best event, known in advance and evaluated on the whole budget, flags it on one audit and on every one of
``--seeds`` audits (for a rare event, a ceiling on any one-event audit's power).

Part F. The stopping rule alone, fast, on the three families' exact laws: ``--futility-runs`` sequential audits
per member (seeds 0 .. R-1, default 100) of outputs drawn from the exact law, at the selection share the audit of
the member's real outputs uses, scored as the best attack would (by the exact likelihood ratio for the discrete
sparse vector and report-noisy-max, so that a stop is the rule's own decision and not an attack's weakness; by the
output's value, the threshold attack, for the histogram's moved count, its Laplace law binned on a fine grid): how
often each is flagged, how often the futility rule stops it before the budget, its mean trials. A futility stop of a
member whose one-event limit at the budget is above ``(1 + tolerance)`` times its claim is one its budget's audit
would be expected to overturn. A stop that says the claim is out of reach of a member whose limit is above its
claim says what is not so; below the budget's own selection part a stop only predicts it (``out_of_reach`` and
``predicted_out_of_reach``). ``--mechanisms``, ``--family-confidence`` and ``--tolerance`` apply.

Part S. The neighbour search (``search_and_audit``) given only the mechanism, the claim and a record domain
(or the query box of the sensitivity-1 query vectors) against the hand-picked pair. ``--search-fraction F``
(default 0.2, the search's own default) is the share of the search's trials that explores; its total is sized
so that it certifies on as many fresh trials as the hand-picked audit evaluates on (Split's 80% of the same
trials): at 0.2 both audits spend the same trials, above it the search explores with extra trials. Beside the
search's certified bound it audits the pair the search found exactly as the hand-picked pair is audited (same trials,
same seed): that ratio compares the pairs, the other also the search's own sampling noise. The bound of one audit
of a sparse vector at 2e5 trials varies by a third between seeds (its event is chosen among many output patterns),
so a ratio on one seed says as much about that noise as about the pair; the mean over the seeds compares the
bounds the two audits are expected to give. ``--trials-scale K`` multiplies every case's trials.

Usage::

    python benchmarks/adaptive.py [--parts AFS] [--seeds S] [--max-trials N] [--no-fixed] [--csv PATH]
                                  [--summarise CSV ...]
                                  [--mechanisms NAME ...] [--family-confidence F] [--tolerance T]
                                  [--futility-runs R] [--search-fraction F] [--trials-scale K] [--quick]
    python benchmarks/adaptive.py --svt-splits QUERIES ...
    python benchmarks/adaptive.py --svt-shifted-pairs [--max-trials N] [--family-confidence F] [--seeds S]
    python benchmarks/adaptive.py --limit-budgets TRIALS ... [--mechanisms NAME ...] [--family-confidence F]
                                  [--seeds S]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from privbound import audit_mechanism
from privbound.audit.attacks.library import ScoreAttack
from privbound.audit.estimators import BlackBox
from privbound.audit.statistics import Split, epsilon_bound_from_counts, event_bound
from privbound.audit.search import BoxNeighbours, RecordDomain, search_and_audit
from privbound.audit.sequential import DEFAULT_TOLERANCE
from privbound.audit.targets.reference import Float32SumLaplace, UnclampedSum
from privbound.learners import mechanisms as M
from privbound.reports.nightly import audit_confidence

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import attack_power  # noqa: E402  (the suite's mechanisms)
import auditor_tightness  # noqa: E402

CONFIDENCE = 0.95
LEAKS = (1.25, 1.5, 2.0)
# The share of the budget a scalar-output audit evaluates its event on (Split's 80%).
BUDGET_EVALUATION_SHARE = 0.8


@dataclass(frozen=True)
class ScaledSparseVector(M.SparseVector):
    """Sparse vector whose query and threshold noise are divided by ``leak`` (1: the correct mechanism)."""

    leak: float = 1.0

    @property
    def query_scale(self) -> float:
        return super().query_scale / self.leak

    @property
    def threshold_scale(self) -> float:
        return super().threshold_scale / self.leak


@dataclass(frozen=True)
class Row:
    """One mechanism of part A: its pair, claim and whether it is a planted bug; ``estimator`` when the default
    would not be a black-box one."""

    name: str
    mechanism: Any
    d0: Any
    d1: Any
    epsilon: float
    delta: float
    bug: bool
    estimator: Any = "auto"


def rows() -> list[Row]:
    out = []
    for c in auditor_tightness.cases():
        est = BlackBox() if getattr(c.mechanism, "output_space", None) is not None else "auto"
        out.append(Row(c.name, c.mechanism, 0.0 if est == "auto" else 0, 1.0 if est == "auto" else 1,
                       c.epsilon, c.delta, False, est))
    for c in attack_power.suite():
        est = BlackBox() if getattr(c.correct, "output_space", None) is not None else "auto"
        out.append(Row(c.name, c.correct, c.d0, c.d1, c.epsilon, c.delta, False, est))
        out.append(Row(c.name + ":bug", c.bug, c.d0, c.d1, c.epsilon, c.delta, True, est))
    for leak in (1.0,) + LEAKS:
        tag = "" if leak == 1.0 else f":leak{leak:g}"
        for name, mechanism, d0, d1, epsilon in family_members(leak):
            out.append(Row(name + tag, mechanism, d0, d1, epsilon, 0.0, leak > 1.0))
    return out


# The families' pairs: the sparse vector's 8 queries below then 2 above against the reverse (of the splits of 10
# queries into a block below and a block above, the one of the largest one-event limit at the budget);
# report-noisy-max's "one above, rest below" of StatDP (Ding et al., CCS 2018) on 10 queries; the histogram's one
# count moved by one.
SVT_PAIR = (np.r_[np.zeros(8), np.ones(2)], np.r_[np.ones(8), np.zeros(2)])
RNM_PAIR = (np.r_[0.0, np.ones(9)], np.r_[1.0, np.zeros(9)])
HISTOGRAM_PAIR = (np.array([10.0, 5.0, 3.0, 2.0, 1.0]), np.array([11.0, 5.0, 3.0, 2.0, 1.0]))


def family_sparse_vector(leak: float = 1.0) -> ScaledSparseVector:
    """The family's sparse vector (epsilon 1, threshold 0.5, cutoff 2) with its noise divided by ``leak``."""
    return ScaledSparseVector(1.0, threshold=0.5, cutoff=2, leak=leak)


def family_members(leak: float) -> list[tuple]:
    """``(name, mechanism, d0, d1, claimed epsilon)`` of the three families at this leak (1: correct)."""
    return [("sparse-vector", family_sparse_vector(leak), *SVT_PAIR, 1.0),
            ("report-noisy-max", M.ReportNoisyMax(leak, score=np.asarray), *RNM_PAIR, 1.0),
            ("histogram", attack_power.NoisyVector(0.1, noise_factor=1.0 / leak), *HISTOGRAM_PAIR, 0.1)]


def sparse_vector_log_probabilities(mechanism: ScaledSparseVector, queries: np.ndarray) -> dict:
    """Exact log P(output) of the sparse vector on these query answers, by quadrature over the threshold noise
    (given it, the answers are independent): one entry per output pattern (the positions of its 1s)."""
    q = np.asarray(queries, float)
    rho = np.linspace(-40.0 * mechanism.threshold_scale, 40.0 * mechanism.threshold_scale, 40_001)
    log_weight = stats.laplace.logpdf(rho, scale=mechanism.threshold_scale) + math.log(rho[1] - rho[0])
    x = mechanism.threshold + rho[None, :] - q[:, None]
    above = stats.laplace.logsf(x, scale=mechanism.query_scale)
    below = stats.laplace.logcdf(x, scale=mechanism.query_scale)
    out = {}
    for k in range(mechanism.cutoff + 1):
        for ones in itertools.combinations(range(q.size), k):
            last = ones[-1] if k == mechanism.cutoff else q.size - 1
            answered = np.arange(last + 1)
            is_one = np.isin(answered, ones)
            log_p = log_weight + np.where(is_one[:, None], above[answered], below[answered]).sum(axis=0)
            out[ones] = float(special.logsumexp(log_p))
    return out


def one_event_limit(p0: np.ndarray, p1: np.ndarray, n: int, confidence: float = CONFIDENCE,
                    conditional_candidates: int = 5) -> float:
    """The largest bound one event certifies on ``n`` trials per side at its expected counts, by the better of the
    audit's two tests: the events are the unions of outputs in likelihood-ratio order (Neyman--Pearson), the last
    one included with probability q (the randomised events the audit's tie fractions offer), in both directions;
    the conditional test is evaluated on the ``conditional_candidates`` events best by Clopper--Pearson."""
    alpha, q, best = 1.0 - confidence, np.linspace(0.0, 1.0, 21)[1:], -math.inf
    for top, bottom in ((p0, p1), (p1, p0)):
        order = np.argsort(-(np.log(top) - np.log(bottom)))
        t, b = top[order], bottom[order]
        k_top = np.round(((np.cumsum(t) - t)[:, None] + q * t[:, None]) * n).ravel()
        k_bottom = np.round(((np.cumsum(b) - b)[:, None] + q * b[:, None]) * n).ravel()
        cp = epsilon_bound_from_counts(k_top, n, k_bottom, n, delta=0.0, alpha=alpha)
        best = max(best, float(np.max(cp)))
        for i in np.argsort(-cp)[:conditional_candidates]:
            best = max(best, event_bound("conditional", int(k_top[i]), n, int(k_bottom[i]), n, delta=0.0, alpha=alpha))
    return best


def sparse_vector_pair_probabilities(mechanism: ScaledSparseVector, d0, d1) -> tuple[np.ndarray, np.ndarray]:
    """Each output pattern's probability on ``d0`` and on ``d1``, in the same order."""
    a, b = sparse_vector_log_probabilities(mechanism, d0), sparse_vector_log_probabilities(mechanism, d1)
    return np.exp([a[k] for k in a]), np.exp([b[k] for k in a])


def sparse_vector_split_limits(lengths, n: int, leaks=(1.0,) + LEAKS) -> pd.DataFrame:
    """The sparse vector's one-event limit on ``n`` evaluation trials per side on every block split of each length
    ``q``: ``k`` queries at 0 then ``q - k`` at 1 against the reverse, per leak (how the family's pair was chosen)."""
    rows = []
    for q in lengths:
        for k in range(1, q):
            d0, d1 = np.r_[np.zeros(k), np.ones(q - k)], np.r_[np.ones(k), np.zeros(q - k)]
            row = dict(queries=q, below=k)
            for leak in leaks:
                mechanism = family_sparse_vector(leak)
                p0, p1 = sparse_vector_pair_probabilities(mechanism, d0, d1)
                row[f"limit_leak{leak:g}"] = one_event_limit(p0, p1, n)
                row[f"exact_leak{leak:g}"] = pair_epsilon(p0, p1)
            rows.append(row)
    return pd.DataFrame(rows)


def sparse_vector_shifted_pairs(budget: int, confidences: dict[str, float], leak: float = LEAKS[0],
                                seeds: int = 5, below_counts=(8, 10), highs=(0.0, 0.5, 1.0, 1.5),
                                lows=(-1.0, 0.0, 1.0)) -> pd.DataFrame:
    """The sparse vector at ``leak`` on pairs that shift each answer by one the other way: ``k`` queries at ``h``
    (``h + 1`` on d1) then two at ``l`` (``l - 1`` on d1), for each ``k, h, l`` (``8, 0, 1`` is the benchmark's pair):
    its exact epsilon on the pair, and the ceiling on a one-event audit's power on ``budget`` trials per side at each
    of ``confidences`` (:func:`oracle_flag_probability`), on one audit and on every one of ``seeds``."""
    mechanism = family_sparse_vector(leak)
    records = []
    for k, h, low in itertools.product(below_counts, highs, lows):
        p0, p1 = sparse_vector_pair_probabilities(mechanism, np.r_[np.full(k, h), np.full(2, low)],
                                                  np.r_[np.full(k, h + 1.0), np.full(2, low - 1.0)])
        record = dict(below=k, high=h, low=low, exact=pair_epsilon(p0, p1))
        for label, confidence in confidences.items():
            flag = oracle_flag_probability(p0, p1, budget, mechanism.epsilon, confidence)
            record.update({f"oracle_flags_{label}": flag, f"oracle_flags_{seeds}_of_{seeds}_{label}": flag ** seeds})
        records.append(record)
    return pd.DataFrame(records)


def pair_epsilon(p0: np.ndarray, p1: np.ndarray) -> float:
    """The exact pure epsilon of a mechanism on one pair: the largest |ln(p0 / p1)| over its outputs."""
    return float(np.max(np.abs(np.log(p0) - np.log(p1))))


def laplace_shift_outputs(scale: float, shift: float = 1.0, points: int = 4001) -> tuple[np.ndarray, np.ndarray]:
    """A Laplace output and the same shifted, binned on a fine grid (the histogram's one moved count)."""
    edges = np.r_[-np.inf, np.linspace(-30.0 * scale, 30.0 * scale + shift, points), np.inf]
    return np.diff(stats.laplace.cdf(edges, scale=scale)), np.diff(stats.laplace.cdf(edges, loc=shift, scale=scale))


def member_laws(leak: float) -> list[tuple]:
    """``(name, mechanism, d0, claimed epsilon, p0, p1)`` of each family member at this leak (1: correct), named as
    in part A, with its output distributions on its pair (the histogram's: the moved count's Laplace output binned
    on a fine grid), in the same order."""
    out = []
    for name, mechanism, d0, d1, epsilon in family_members(leak):
        if name == "sparse-vector":
            p0, p1 = sparse_vector_pair_probabilities(mechanism, d0, d1)
        elif name == "report-noisy-max":
            p0, p1 = np.exp(mechanism.log_probabilities(d0)), np.exp(mechanism.log_probabilities(d1))
        else:
            p0, p1 = laplace_shift_outputs(mechanism.scale)
        out.append((name + ("" if leak == 1.0 else f":leak{leak:g}"), mechanism, d0, epsilon, p0, p1))
    return out


def family_limits(n: int, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per family member: the largest bound one event can certify on its pair at ``n`` evaluation trials per side
    (from the exact output distributions), and the member's exact epsilon on the pair, against the claim. An
    audit's bound falls about as often above its expected counts' bound as below, so a leak whose limit is at or
    near its claim is flagged on lucky seeds only."""
    rows = []
    for leak in (1.0,) + LEAKS:
        for name, mechanism, _, epsilon, p0, p1 in member_laws(leak):
            limit = one_event_limit(p0, p1, n, confidence)
            # the histogram's count moved by 1 under Laplace noise: 1 / scale (its binned far tails round off)
            exact = 1.0 / mechanism.scale if name.startswith("histogram") else pair_epsilon(p0, p1)
            rows.append(dict(mechanism=name, claim=epsilon, limit=limit, limit_over_claim=limit / epsilon,
                             exact_over_claim=exact / epsilon))
    return pd.DataFrame(rows)


def family_laws() -> dict[str, tuple]:
    """Every family member's ``(claimed epsilon, p0, p1)`` by its name in part A, as :func:`member_laws` gives them."""
    return {law[0]: law[3:] for leak in (1.0,) + LEAKS for law in member_laws(leak)}


def oracle_flag_probability(p0: np.ndarray, p1: np.ndarray, n: int, epsilon: float,
                            confidence: float = CONFIDENCE, candidates: int = 5) -> float:
    """The probability that the best unbiased test of one event known in advance refutes a pure ``epsilon`` on ``n``
    trials per side. For a rare event (probability below about 0.01) it is, to about 1e-3, a ceiling on the power of
    any sound audit that refutes by one event, as the black-box audits here do, which must also find the event and
    pay for finding it; for a common event it is not (the binomial counts vary less than Poisson ones, and a sound
    binomial test can flag more often: 0.56 where this gives 0.50 for rates 0.3 and 0.11 at 2e6 trials).

    An event's counts on the two sides are independent Poisson with means ``n p_top`` and ``n p_bottom`` (the limit
    of the binomial counts for a rare event), and the null of epsilon is ``p_top <= e^eps p_bottom``. Given their
    sum ``m``, the top count is ``Bin(m, theta)`` with ``theta = p_top / (p_top + p_bottom)`` and the null is
    ``theta <= theta_0 = e^eps / (1 + e^eps)``; the randomised one-sided binomial test of that null is uniformly most
    powerful unbiased for the ratio of two Poisson means (Lehmann & Romano, *Testing Statistical Hypotheses*, 3rd
    ed., Sec. 4.5), and it spends no share of alpha on a nuisance parameter, as the audit's conditional test does;
    against its Neyman--Pearson bound over all tests of the event it gives up about 1e-3 at these counts.
    The events are the unions of outputs in likelihood-ratio order, in both directions (Neyman--Pearson), ending
    where the ratio changes (outputs of one ratio test best together); the ``candidates`` of them most powerful by
    the normal approximation are computed exactly, summing over ``m``, and the result is the largest. On a
    mechanism that keeps its claim on the pair it is at most alpha, and alpha where an event's ratio is the claim's.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n < 1:
        raise ValueError(f"n must be at least 1 trial per side, got {n}")
    alpha, theta_0 = 1.0 - confidence, math.exp(epsilon) / (1.0 + math.exp(epsilon))
    events = []
    for top, bottom in ((np.asarray(p0, float), np.asarray(p1, float)), (np.asarray(p1, float), np.asarray(p0, float))):
        log_ratio = np.log(top) - np.log(bottom)
        order = np.argsort(-log_ratio, kind="stable")
        ends = np.r_[np.abs(np.diff(log_ratio[order])) > 1e-9, True]
        event_top, event_bottom = np.cumsum(top[order])[ends], np.cumsum(bottom[order])[ends]
        events.append(np.c_[event_top, event_bottom])
    events = np.concatenate(events)
    theta, expected_sum = events[:, 0] / events.sum(axis=1), n * events.sum(axis=1)
    # the spread under the alternative, floored at the null's: an event nearly absent on one side is not ranked
    # first for a vanishing spread whatever its power
    spread = np.sqrt(np.maximum(theta * (1.0 - theta), theta_0 * (1.0 - theta_0)))
    z = ((theta - theta_0) * np.sqrt(expected_sum) - stats.norm.isf(alpha) * math.sqrt(theta_0 * (1.0 - theta_0))
         ) / spread
    return max(poisson_ratio_test_power(n * p_top, n * p_bottom, epsilon, alpha)
               for p_top, p_bottom in events[np.argsort(-z)[:candidates]])


def poisson_ratio_test_power(mean_top: float, mean_bottom: float, epsilon: float, alpha: float) -> float:
    """The power of the randomised level-``alpha`` test of "mean_top <= e^eps mean_bottom" on two independent Poisson
    counts of these means, conditional on their sum (:func:`oracle_flag_probability`), exactly, summing over it."""
    theta_0, theta = math.exp(epsilon) / (1.0 + math.exp(epsilon)), mean_top / (mean_top + mean_bottom)
    total = stats.poisson(mean_top + mean_bottom)
    m = np.arange(int(total.ppf(1e-13)), int(total.isf(1e-13)) + 1)
    # reject when K > c; at K = c with the probability gamma that makes the size under theta_0 alpha
    c = stats.binom.isf(alpha, m, theta_0)
    at_c = stats.binom.pmf(c, m, theta_0)
    gamma = np.divide(alpha - stats.binom.sf(c, m, theta_0), at_c, out=np.zeros(m.size), where=at_c > 0)
    power = stats.binom.sf(c, m, theta) + gamma * stats.binom.pmf(c, m, theta)
    weights = total.pmf(m)  # normalised: scipy's Poisson weights over the range sum to 1 only to about 1e-8
    return float(np.clip(np.sum(weights * power) / np.sum(weights), 0.0, 1.0))


def limits_by_budget(names, budgets, confidences: dict[str, float], seeds: int = 5) -> pd.DataFrame:
    """Each named family member's one-event limit over its claim at ``BUDGET_EVALUATION_SHARE`` of each budget of
    trials per side, at each of ``confidences`` (label: confidence): the budget a leak needs to be flagged at a
    confidence, from its exact output distributions. Beside each limit, the probability that the best unbiased test of
    its best event known in advance (:func:`oracle_flag_probability`) flags it on the whole budget, and on every
    one of ``seeds`` independent audits."""
    laws = family_laws()
    records = []
    for name in names:
        epsilon, p0, p1 = laws[name]
        for budget in budgets:
            n = int(BUDGET_EVALUATION_SHARE * budget)
            record = dict(mechanism=name, budget=budget)
            for label, confidence in confidences.items():
                flag = oracle_flag_probability(p0, p1, int(budget), epsilon, confidence)
                record.update({f"limit_over_claim_{label}": one_event_limit(p0, p1, n, confidence) / epsilon,
                               f"oracle_flags_{label}": flag, f"oracle_flags_{seeds}_of_{seeds}_{label}": flag ** seeds})
            records.append(record)
    return pd.DataFrame(records)


def run_part_a(selected: list[Row], seeds, max_trials: int, fixed: bool, confidence: float = CONFIDENCE,
               tolerance: float = DEFAULT_TOLERANCE) -> pd.DataFrame:
    records = []
    for row in selected:
        for seed in seeds:
            start = time.perf_counter()
            r = audit_mechanism(row.mechanism, row.d0, row.d1, epsilon=row.epsilon, delta=row.delta, trials="auto",
                                max_trials=max_trials, seed=seed, confidence=confidence, estimator=row.estimator,
                                float_audit=False, tolerance=tolerance)
            seconds = time.perf_counter() - start
            rec = dict(mechanism=row.name, bug=row.bug, seed=seed, confidence=confidence, tolerance=tolerance,
                       bound=r.epsilon_lower_bound, claim=row.epsilon, trials=r.trials, seconds=seconds,
                       flagged=r.violation, mu=r.mu_lower_bound,
                       stop=r.stop_reason.split(":")[0].split(" (")[0])
            if fixed:
                f = audit_mechanism(row.mechanism, row.d0, row.d1, epsilon=row.epsilon, delta=row.delta,
                                    trials=r.trials, seed=seed, confidence=confidence, estimator=row.estimator,
                                    float_audit=False)
                rec["fixed_bound"] = f.epsilon_lower_bound
                rec["ratio"] = (r.epsilon_lower_bound / f.epsilon_lower_bound if f.epsilon_lower_bound > 0
                                else (1.0 if r.epsilon_lower_bound == 0 else math.inf))
            records.append(rec)
            print(f"  {row.name:34s} seed {seed}: bound {r.epsilon_lower_bound:.4f} trials {r.trials:>8d} "
                  f"{seconds:6.1f} s {'FLAGGED' if r.violation else 'holds':7s} {rec['stop']}", flush=True)
    return pd.DataFrame(records)


def summarise_a(df: pd.DataFrame, n_seeds: int) -> None:
    agg = dict(bound=("bound", "mean"), trials=("trials", "mean"), max_trials=("trials", "max"),
               seconds=("seconds", "mean"), flagged=("flagged", "sum"))
    if "ratio" in df:
        agg["fixed_bound"] = ("fixed_bound", "mean")
        agg["min_ratio"] = ("ratio", "min")
    table = df.groupby(["mechanism", "bug"], sort=False).agg(**agg).reset_index()
    if "ratio" in df:  # the mean bound against the mean fixed-trials bound: the bounds the two are expected to give
        ratio = np.where(table.fixed_bound > 0, table.bound / table.fixed_bound.where(table.fixed_bound > 0),
                         np.where(table.bound > 0, math.inf, 1.0))
        table.insert(table.columns.get_loc("min_ratio"), "mean_ratio",
                     np.where(table.fixed_bound.isna(), np.nan, ratio))  # NaN: no fixed-trials audit ran
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    bugs, ok = table[table.bug], table[~table.bug]
    missed = bugs[bugs.flagged < n_seeds].mechanism.tolist()
    print(f"\n  planted bugs flagged on {n_seeds} of {n_seeds} seeds: {len(bugs) - len(missed)}/{len(bugs)}"
          + (f" (not: {missed})" if missed else ""))
    # per mechanism: its claim, one-event limit, exact epsilon and tolerance (rows written before the tolerance was
    # a column ran at the default); a miss at or below (1 + tolerance) times the claim is within the tolerance
    per = df.assign(tolerance=df.get("tolerance", DEFAULT_TOLERANCE)).groupby("mechanism").first()
    line = (1.0 + per.tolerance) * per.claim
    if "limit" in per:
        below = [m for m in missed if per.limit[m] <= line[m]]
        print(f"  of those missed, with a one-event limit at the budget within the tolerance of the claim (an "
              f"overspend the stopping rule may leave unseen by design): {below}")
    if "exact" in per:
        within = [m for m in missed if per.exact[m] <= line[m]]
        print(f"  of those missed, with an exact epsilon on their pair within the tolerance of the claim (an "
              f"overspend smaller than the tolerance says is worth finding): {within}")
    print(f"  correct mechanisms flagged: {int(ok.flagged.sum())} of {len(ok) * n_seeds} audits")
    print(f"  mean trials per side on correct mechanisms: {df[~df.bug].trials.mean():.4g} "
          f"(median {df[~df.bug].trials.median():.4g}); on planted bugs {df[df.bug].trials.mean():.4g}")
    if "ratio" in df:
        print(f"  bound / fixed-trials bound at the trials spent: min {df.ratio.min():.4f} over the audits; mean bound "
              f"/ mean fixed-trials bound >= 0.9 on {int((table.mean_ratio >= 0.9).sum())}/"
              f"{int(table.mean_ratio.notna().sum())} mechanisms "
              f"(lowest {table.mean_ratio.min():.4f})")
    print("  stop reasons: " + ", ".join(f"{k}: {v}" for k, v in df.stop.value_counts().items()))


# ------------------------------------------------------------------ part F


@dataclass(frozen=True)
class ExactLaw:
    """A mechanism known by its pair's output distributions: on dataset ``d`` (0 or 1) it outputs the index of an
    output drawn from ``p0`` or ``p1`` (each normalised: a law computed by quadrature sums to one only nearly)."""

    p0: np.ndarray
    p1: np.ndarray

    def __post_init__(self) -> None:
        for name in ("p0", "p1"):
            p = np.asarray(getattr(self, name), dtype=float)
            object.__setattr__(self, name, p / p.sum())

    def sample(self, data: int, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.choice(self.p0.size, size=size, p=self.p1 if data else self.p0)


@dataclass(frozen=True)
class FixedShareBlackBox(BlackBox):
    """The black-box estimator with the selection share ``share`` of another mechanism's outputs (the share the
    audit of a family member's real outputs selects on), where no ``Split`` is given."""

    share: float = 0.3

    def selection_fraction(self, out0: np.ndarray, candidates=None) -> float:
        return self.strategy.fraction if isinstance(self.strategy, Split) else self.share


def run_part_f(runs: int, max_trials: int, confidence: float, tolerance: float,
               members: list[str] | None = None) -> pd.DataFrame:
    """Per family member, ``runs`` sequential audits (seeds 0 .. runs-1) of its exact law (:class:`ExactLaw`) at the
    selection share the audit of its real outputs uses, scored as the best attack would: by the exact likelihood
    ratio for the sparse vector and report-noisy-max (discrete laws, so a futility stop is the rule's own decision,
    not an attack's weakness), by the output's value for the histogram (the threshold attack on the one count that
    moves, its Laplace law binned on a fine grid). How often it is flagged, how often the futility rule stops it
    (how often saying the claim is out of reach of the budget, and how often predicting so from a smaller prefix),
    and its mean trials, beside its one-event limit at the budget.
    ``members``: the names to run (default: all)."""
    rng = np.random.default_rng(0)
    limits = family_limits(int(BUDGET_EVALUATION_SHARE * max_trials), confidence).set_index("mechanism")
    rows = []
    for leak in (1.0,) + LEAKS:
        for name, mechanism, d0, epsilon, p0, p1 in member_laws(leak):
            if members is not None and name not in members:
                continue
            base = BlackBox().selection_fraction(mechanism.sample(d0, rng, 2))
            score = np.arange(p0.size, dtype=float) if name.startswith("histogram") else np.log(p1) - np.log(p0)
            estimator = FixedShareBlackBox(attack=ScoreAttack(fn=lambda o, s=score: s[np.asarray(o, dtype=int)]),
                                           share=base)
            start = time.perf_counter()
            results = [audit_mechanism(ExactLaw(p0, p1), 0, 1, epsilon=epsilon, trials="auto", max_trials=max_trials,
                                       seed=seed, confidence=confidence, estimator=estimator, float_audit=False,
                                       tolerance=tolerance) for seed in range(runs)]
            futile = [not r.violation and not r.stop_reason.startswith("trial budget") for r in results]
            rows.append(dict(mechanism=name, limit_over_claim=limits.limit_over_claim[name], share=base,
                             flagged=float(np.mean([r.violation for r in results])),
                             futility_stops=float(np.mean(futile)),
                             out_of_reach=float(np.mean([r.stop_reason.startswith("claim out of reach")
                                                         for r in results])),
                             predicted_out_of_reach=float(np.mean([r.stop_reason.startswith(
                                 "claim predicted out of reach") for r in results])),
                             mean_trials=float(np.mean([r.trials for r in results])),
                             seconds=time.perf_counter() - start))
            print(f"  {name:28s} flagged {rows[-1]['flagged']:.2f} futility stops {rows[-1]['futility_stops']:.2f} "
                  f"mean trials {rows[-1]['mean_trials']:.4g}", flush=True)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ part S


def search_cases() -> list[tuple]:
    """``(name, mechanism, space, hand d0, hand d1, epsilon, trials)``: mechanisms with a hand-picked pair."""
    half_up = np.r_[np.ones(5), np.zeros(5)]
    m = 2.0 ** 26
    box = lambda n, hi: BoxNeighbours(n, low=0.0, high=hi, radius=1.0)  # noqa: E731
    return [
        ("float32-sum (record domain)", Float32SumLaplace(1.0), RecordDomain(4, -2.0 ** 30, 2.0 ** 30, radius=1.0),
         np.r_[np.full(3, m), m + 15.9], np.r_[np.full(3, m), m + 16.9], 1.0, 20_000),
        ("unclamped-sum (record domain, clips)", UnclampedSum(1.0), RecordDomain(3, 0.0, 1.0, clips=True),
         np.ones(3), np.r_[1.0, 1.0, 11.0], 1.0, 20_000),
        ("svt-indicators:bug (query box)", attack_power.SparseVectorCutoffBlindNoise(1.0, threshold=0.5, cutoff=2),
         box(10, 1.0), half_up[::-1].copy(), half_up, 1.0, 200_000),
        ("sparse-vector:leak2 (query box)", family_sparse_vector(2.0), box(10, 1.0),
         *SVT_PAIR, 1.0, 200_000),
        ("report-noisy-max:leak2 (query box)", M.ReportNoisyMax(2.0, score=np.asarray), box(10, 1.0), *RNM_PAIR, 1.0,
         200_000),
        ("noisy-max-index-value:bug (query box)", attack_power.ReportNoisyMaxWithValue(1.0), box(5, 1.0), np.ones(5),
         np.zeros(5), 1.0, 200_000),
    ]


HAND_EVALUATION_SHARE = 0.8  # Split's default: the hand-picked audit evaluates on 80% of its trials


def run_part_s(seeds, quick: bool, search_fraction: float = 0.2, trials_scale: float = 1.0) -> pd.DataFrame:
    records = []
    for name, mech, space, d0, d1, eps, trials in search_cases():
        trials = min(trials, 20_000) if quick else int(round(trials * trials_scale))
        search_total = int(round(trials * HAND_EVALUATION_SHARE / (1.0 - search_fraction)))
        for seed in seeds:
            hand = audit_mechanism(mech, d0, d1, epsilon=eps, trials=trials, seed=seed, float_audit=False)
            start = time.perf_counter()
            found = search_and_audit(mech, space, epsilon=eps, trials=search_total, seed=seed,
                                     search_fraction=search_fraction, float_audit=False)
            seconds = time.perf_counter() - start
            found_pair = audit_mechanism(mech, found.d0, found.d1, epsilon=eps, trials=trials, seed=seed,
                                         float_audit=False)
            kinds = {}
            for c in found.candidates:
                kinds[c["origin"]] = kinds.get(c["origin"], 0) + 1
            records.append(dict(mechanism=name, seed=seed, trials=trials, search_trials=search_total,
                                hand=hand.epsilon_lower_bound,
                                search=found.epsilon_lower_bound,
                                ratio=found.epsilon_lower_bound / hand.epsilon_lower_bound if hand.epsilon_lower_bound
                                else math.nan,
                                pair_ratio=found_pair.epsilon_lower_bound / hand.epsilon_lower_bound
                                if hand.epsilon_lower_bound else math.nan,
                                seconds=seconds, origin=found.audit.details["best_origin"],
                                pairs=" ".join(f"{k}:{v}" for k, v in kinds.items())))
            print(f"  {name:40s} seed {seed}: hand {hand.epsilon_lower_bound:.4f} search "
                  f"{found.epsilon_lower_bound:.4f}, its pair audited as the hand pair "
                  f"{found_pair.epsilon_lower_bound:.4f} "
                  f"({seconds:.1f} s, best {records[-1]['origin']})", flush=True)
    return pd.DataFrame(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="AS")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--max-trials", type=int, default=2_000_000)
    parser.add_argument("--no-fixed", action="store_true", help="skip the fixed-trials audit at the trials spent")
    parser.add_argument("--csv", default=None, help="write part A's rows to this CSV file")
    parser.add_argument("--summarise", nargs="+", default=None, metavar="CSV",
                        help="part A: print the summary of rows written by --csv (one or more files) and exit")
    parser.add_argument("--mechanisms", nargs="+", default=None, metavar="NAME")
    parser.add_argument("--family-confidence", type=float, default=None, metavar="F",
                        help="part A: audit each mechanism at the per-audit confidence that holds the whole "
                             "suite's audits of one seed together at F (the nightly's Bonferroni rule), "
                             f"instead of {CONFIDENCE} each")
    parser.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                        help="part A: the smallest overspend worth finding (the sequential audit's tolerance=)")
    parser.add_argument("--search-fraction", type=float, default=0.2,
                        help="part S: the search's exploring share (its certification trials equal the hand audit's)")
    parser.add_argument("--trials-scale", type=float, default=1.0,
                        help="part S: multiply every case's hand-picked trials (and so the search's) by this")
    parser.add_argument("--futility-runs", type=int, default=100, metavar="R",
                        help="part F: simulated runs per family member")
    parser.add_argument("--quick", action="store_true", help="three mechanisms, one seed, a 1e5 budget")
    parser.add_argument("--svt-splits", nargs="+", type=int, default=None, metavar="QUERIES",
                        help="print the sparse vector's one-event limits and exact epsilons on every block split "
                             "of these numbers of queries (limits at 80%% of --max-trials) and exit")
    parser.add_argument("--svt-shifted-pairs", action="store_true",
                        help="print the 1.25x sparse-vector leak's exact epsilon and the ceiling on a one-event "
                             "audit's power at --max-trials on pairs of shifted answers (at 0.95 and, with "
                             "--family-confidence, at its per-audit confidence), and exit")
    parser.add_argument("--limit-budgets", nargs="+", type=float, default=None, metavar="TRIALS",
                        help="print the one-event limits over their claims of the families' members named by "
                             "--mechanisms (all by default) at these budgets per side, at 0.95 and, with "
                             "--family-confidence, at its per-audit confidence, beside the probability that the "
                             "best unbiased test of one event known in advance flags each on one audit and on --seeds "
                             "audits, and exit")
    args = parser.parse_args(argv)
    pd.set_option("display.width", 200)
    if args.family_confidence is not None and not 0.0 < args.family_confidence < 1.0:
        parser.error(f"--family-confidence must be in (0, 1), got {args.family_confidence}")
    # the per-audit confidence of --family-confidence: the whole suite's audits of one seed, whatever is selected
    family_audit_confidence = (None if args.family_confidence is None
                               else audit_confidence(len(rows()), args.family_confidence))
    confidences = {f"{CONFIDENCE:g}": CONFIDENCE} | (
        {} if family_audit_confidence is None else {"family": family_audit_confidence})

    def family_members_only(what: str) -> list[str]:
        """The families' members' names, after a parser error if ``--mechanisms`` names any other."""
        known = list(family_laws())
        if args.mechanisms and set(args.mechanisms) - set(known):
            parser.error(f"--mechanisms: {what} only the families' members: unknown "
                         f"{sorted(set(args.mechanisms) - set(known))}; known: {known}")
        return known
    if args.limit_budgets:
        if min(args.limit_budgets) < 1:
            parser.error(f"--limit-budgets: each budget must be at least 1 trial, got {args.limit_budgets}")
        known = family_members_only("--limit-budgets takes")
        limits = limits_by_budget(args.mechanisms or known, [int(b) for b in args.limit_budgets], confidences,
                                  seeds=args.seeds)
        print(limits.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        return 0
    if args.svt_shifted_pairs:
        table = sparse_vector_shifted_pairs(args.max_trials, confidences, seeds=args.seeds)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        return 0
    if args.svt_splits:
        if min(args.svt_splits) < 2:
            parser.error(f"--svt-splits: each number of queries must be at least 2, got {args.svt_splits}")
        limits = sparse_vector_split_limits(args.svt_splits, int(BUDGET_EVALUATION_SHARE * args.max_trials),
                                            leaks=(1.0, LEAKS[0]))
        print(limits.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        return 0
    if args.summarise:
        df = pd.concat([pd.read_csv(path) for path in args.summarise], ignore_index=True)
        summarise_a(df, int(df.seed.nunique()))
        return 0
    seeds = range(1 if args.quick else args.seeds)
    if "A" in args.parts:
        selected = rows()
        suite_size = len(selected)  # the family of --family-confidence, whatever --mechanisms selects
        if args.mechanisms:
            known = {r.name for r in selected}
            unknown = sorted(set(args.mechanisms) - known)
            if unknown:
                parser.error(f"--mechanisms: unknown {unknown}; known: {sorted(known)}")
            selected = [r for r in selected if r.name in args.mechanisms]
        if args.quick:
            selected = [r for r in selected if r.name in ("Laplace eps=1", "report-noisy-max:leak2", "rr-k2:bug")]
        max_trials = 100_000 if args.quick else args.max_trials
        if not 0.0 <= args.tolerance:
            parser.error(f"--tolerance must be at least 0, got {args.tolerance}")
        confidence = CONFIDENCE if family_audit_confidence is None else family_audit_confidence
        limits = family_limits(int(BUDGET_EVALUATION_SHARE * max_trials), confidence)
        print(f"The families' one-event limits at {BUDGET_EVALUATION_SHARE:.0%} of the budget (exact output "
              f"distributions):\n{limits.to_string(index=False, float_format=lambda v: f'{v:.4g}')}\n")
        family = ("" if args.family_confidence is None else
                  f" (the {suite_size} audits of a seed together at {args.family_confidence:g})")
        print(f"Part A: trials='auto', budget {max_trials} per side, confidence {confidence:.6g}{family}, "
              f"tolerance {args.tolerance:g}, seeds {list(seeds)}")
        df = run_part_a(selected, seeds, max_trials, fixed=not args.no_fixed, confidence=confidence,
                        tolerance=args.tolerance)
        df["limit"] = df.mechanism.map(dict(zip(limits.mechanism, limits.limit)))
        df["exact"] = df.mechanism.map(dict(zip(limits.mechanism, limits.exact_over_claim * limits.claim)))
        if args.csv:
            df.to_csv(args.csv, index=False)
        summarise_a(df, len(seeds))
    if "F" in args.parts:
        if args.futility_runs < 1:
            parser.error(f"--futility-runs must be at least 1, got {args.futility_runs}")
        family_members_only("part F runs")
        confidence = CONFIDENCE if family_audit_confidence is None else family_audit_confidence
        print(f"\nPart F: trials='auto' on the families' exact laws, scored as the best attack would, "
              f"{args.futility_runs} runs per member, budget {args.max_trials}, confidence {confidence:.6g}, "
              f"tolerance {args.tolerance:g}")
        df = run_part_f(args.futility_runs, args.max_trials, confidence, args.tolerance, args.mechanisms)
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if "S" in args.parts:
        if not 0.0 < args.search_fraction < 1.0:
            parser.error(f"--search-fraction must be in (0, 1), got {args.search_fraction}")
        print(f"\nPart S: neighbour search against the hand-picked pair, search fraction {args.search_fraction:g}, "
              f"certifying on the hand audit's evaluation trials")
        if not args.trials_scale > 0.0:
            parser.error(f"--trials-scale must be positive, got {args.trials_scale}")
        ds = run_part_s(seeds, args.quick, args.search_fraction, args.trials_scale)
        table = ds.groupby("mechanism", sort=False).agg(hand=("hand", "mean"), search=("search", "mean"),
                                                         hand_trials=("trials", "first"),
                                                         min_ratio=("ratio", "min"),
                                                         min_pair_ratio=("pair_ratio", "min"),
                                                         max_seconds=("seconds", "max"),
                                                         search_trials=("search_trials", "first"),
                                                         pairs=("pairs", "first")).reset_index()
        table.insert(3, "mean_ratio", table.search / table.hand)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        by = ds.groupby("mechanism")
        print(f"  mean search bound >= 0.9 x mean hand-picked bound: {int((table.mean_ratio >= 0.9).sum())}"
              f"/{len(table)}")
        print(f"  search >= 0.9 x hand-picked on every seed: {int((by.ratio.min() >= 0.9).sum())}"
              f"/{ds.mechanism.nunique()}; the pair found, audited as the hand pair (same trials and seed), >= 0.9 x "
              f"hand-picked on every seed: {int((by.pair_ratio.min() >= 0.9).sum())}/{ds.mechanism.nunique()}; "
              f"longest search {ds.seconds.max():.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
