"""Checks of the private PAC learner for decision lists (Sec. 3, DP-GreedyCover) and of Theorem 1
(Sec. 1.1) for "Privately Learning Decision Lists and a Differentially Private Winnow".

* Proposition 6 (Sec. 3.1): the proof's witness lists on random realizable samples
  (:func:`check_prop6_witness`) and the consequence "max score 0 in every round" along
  DP-GreedyCover's own exponential-mechanism choices (:func:`check_prop6_em_choices`);
* Theorem 7 (Sec. 3.2, [RECON]: the statement is missing from the source text): training error
  (:func:`check_theorem7_training_error`), exact privacy by enumeration
  (:func:`check_theorem7_exact_privacy`), the learner's own calibration ``DPGreedyCover.from_privacy``
  under each neighbouring relation it accepts (:func:`check_theorem7_from_privacy`), the auditor on the canary target against the exact
  epsilon (:func:`check_theorem7_audit`), PAC accuracy at the reconstructed sample size
  (:func:`check_theorem7_pac`) and the training-error identity (:func:`check_theorem7_error_identity`);
* Theorem 1: sample-size scaling of DP-GreedyCover in |F| and epsilon (:func:`check_theorem1_scaling`).

The learner is :mod:`privbound.learners.decision_lists_winnow.decision_lists`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from privbound.audit.engine import map_chunks
from privbound.audit.targets import get_target
from privbound.audit.targets.decision_lists_winnow import greedy_cover_canary_pair
from privbound.bounds.checks import CheckContext, CheckResult, exact, failure_rate, inequality, scaling
from privbound.bounds.decision_lists_winnow.formulas import greedy_cover_samples, greedy_cover_train_error
from privbound.learners.decision_lists_winnow.decision_lists import (
    DPGreedyCover,
    exact_epsilon,
    feature_matrix,
    greedy_cover_epsilon_replace,
    greedy_cover_exact_logprobs,
    greedy_cover_sample,
    hockey_stick_delta,
)

__all__ = [
    "noisy_block_instance",
    "greedy_cover_needed_samples",
    "prop6_witness_next",
    "check_prop6_witness",
    "check_prop6_em_choices",
    "check_theorem1_scaling",
    "check_theorem7_training_error",
    "check_theorem7_exact_privacy",
    "check_theorem7_from_privacy",
    "check_theorem7_audit",
    "check_theorem7_pac",
    "check_theorem7_error_identity",
]


# ============================================================================ Proposition 6


def prop6_witness_next(cj: list[tuple[int, int]], fz: int) -> list[tuple[int, int]]:
    """The proof's witness c_{j+1} after choosing f_z: c_j with the rule (f_z, b_z) deleted (or c_j unchanged
    when f_z is not in it). On S_{j+1} = {x in S_j : f_z(x) = 0} the deleted rule never fires."""
    return [(f, b) for f, b in cj if f != fz]



def check_prop6_witness(ctx: CheckContext) -> CheckResult:
    """Proposition 6 via its constructive proof, on random realizable samples.

    Features: F = the d coordinate functions and random 2-conjunctions over {0,1}^d plus T.
    Target c*: a random F-decision list. For choice sequences (random order; adversarial:
    the candidate with the worst score), the proof's witness c_{j+1} = c_j minus f_z must be
    consistent with S_{j+1}, and (consequence) max_{(f,b)} q(S_j, (f,b)) = 0 in every round.
    """
    rng = ctx.rng
    violations, rounds = 0, 0
    for rep in range(ctx.trials(30, minimum=5)):
        d, n = 6, 200
        X = rng.integers(0, 2, size=(n, d))
        pairs = [tuple(rng.choice(d, size=2, replace=False)) for _ in range(4)]
        feats = [X[:, i] for i in range(d)] + [X[:, i] & X[:, j] for i, j in pairs]
        nF = len(feats)
        Fmat = np.vstack(feats + [np.ones(n, dtype=X.dtype)]).astype(bool)  # index nF = T
        m = int(rng.integers(1, nF + 1))
        order = list(rng.choice(nF, size=m, replace=False))
        bits = rng.integers(0, 2, size=m + 1)
        target = order + [nF]
        sigma = np.full(n, -1)
        for f, b in zip(target, bits):
            sigma[(sigma < 0) & Fmat[f]] = b
        cj = list(zip(target, bits))  # witness list c_j
        alive_f = list(range(nF + 1))
        alive_x = np.ones(n, dtype=bool)
        adversarial = rep % 2 == 1
        while alive_f:
            # scores q(S_j, (f, b)) = -#{x in S_j: f(x)=1, sigma != b}
            scores = {(f, b): -int(np.count_nonzero(alive_x & Fmat[f] & (sigma != b))) for f in alive_f for b in (0, 1)}
            rounds += 1
            if max(scores.values()) != 0:
                violations += 1
            if adversarial:
                fz = min(scores, key=scores.get)[0]
            else:
                fz = int(rng.choice(alive_f))
            alive_x &= ~Fmat[fz]
            alive_f.remove(fz)
            cj = prop6_witness_next(cj, fz)
            # consistency of the witness on S_{j+1}
            pred = np.full(n, -1)
            for f, b in cj:
                pred[(pred < 0) & Fmat[f]] = b
            if np.any(alive_x & (pred != sigma)):
                violations += 1
    return inequality(violations, 0, sense="<=", rounds=rounds,
                      note="observed = rounds where max score != 0 or the proof's witness is inconsistent")


def check_prop6_em_choices(ctx: CheckContext) -> CheckResult:
    """Prop. 6 consequence along DP-GreedyCover's own EM choices: max_{(f,b)} q(S_j,(f,b)) = 0 every round."""
    rng = ctx.rng
    violations = rounds = 0
    for rep in range(ctx.trials(40, minimum=8)):
        X = rng.integers(0, 2, size=(60, 6))
        y = np.where(X[:, 0] == 1, 1, np.where(X[:, 1] == 1, 0, np.where(X[:, 3] == 1, 1, 0)))  # [(x0,1),(x1,0),(x3,1),(T,0)]
        Phi = feature_matrix(X)
        order, _, _ = greedy_cover_sample(Phi, y, float(rng.choice((0.1, 1.0, 5.0))), rng, 5)
        for run in order:
            alive = np.ones(len(y), dtype=bool)
            for j, f in enumerate(run):
                rem = run[j:]
                best = max(-np.count_nonzero(alive & Phi[:, g] & (y != b)) for g in rem for b in (0, 1))
                rounds += 1
                violations += best != 0
                alive &= ~Phi[:, f]
    return inequality(violations, 0, sense="<=", rounds=rounds,
                      note="observed = rounds (along EM choices) whose best remaining rule makes an error")


# ============================================================================ Theorem 1: sample-size scaling


def noisy_block_instance(F: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """A realizable sample for the sample-size checks of DP-GreedyCover.

    Feature 0 fires on every label-0 record (target list [(f_0, 0), (T, 1)]); features 1..F-1 each
    fire on their own block of r label-0 and r label-1 records, so every rule built on them makes
    r errors. A DP-GreedyCover round picks such a rule with probability ~ 2F e^{-eps r/2}, so the
    training error rate is small once r ~ (2/eps) ln F, i.e. n = 2r(F-1) ~ F ln F / eps (Theorem 1).
    """
    k = F - 1
    n = 2 * r * k
    Phi = np.zeros((n, F + 1), dtype=bool)
    Phi[:, -1] = True
    y = np.tile(np.r_[np.zeros(r, dtype=np.int64), np.ones(r, dtype=np.int64)], k)
    Phi[:, 0] = y == 0
    for i in range(k):
        Phi[2 * r * i:2 * r * (i + 1), 1 + i] = True
    return Phi, y


def _greedy_error_rate(F: int, r: int, eps: float, runs: int, seed: int, n_jobs) -> float:
    Phi, y = noisy_block_instance(F, r)

    def fn(size, ss):
        _, _, e = greedy_cover_sample(Phi, y, eps, np.random.default_rng(ss), size)
        return float(e.sum())

    tot = sum(map_chunks(fn, runs, seed=seed, chunk_size=max(runs, 1), n_jobs=n_jobs))
    return tot / (runs * y.size)


def greedy_cover_needed_samples(F: int, eps: float, alpha: float, runs: int, seed: int, n_jobs=1) -> int:
    """Smallest n = 2r(F-1) (bisection over r) whose mean training-error rate is <= alpha."""
    hi = 1
    while _greedy_error_rate(F, hi, eps, runs, seed, n_jobs) > alpha:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _greedy_error_rate(F, mid, eps, runs, seed, n_jobs) > alpha:
            lo = mid
        else:
            hi = mid
    return 2 * hi * (F - 1)


def check_theorem1_scaling(ctx: CheckContext) -> CheckResult:
    """Theorem 1 scaling: needed n vs |F| (exponent 1 up to the hidden log) and vs 1/eps (exponent 1).

    n* is the smallest sample of the noisy-block family whose mean training-error rate is <= 0.05.
    Two OLS fits of ln n* (statsmodels); the |F| slope must be compatible with the O~(|F|) range
    [1, 1 + 1/ln(2(F_min + 1))] (the local slope of F ln F), the eps slope with -1.
    """
    runs = ctx.trials(200, minimum=40)
    full = ctx.profile.scale >= 1
    Fs = (4, 8, 16, 32, 64) if full else (4, 8, 16)
    nF = [greedy_cover_needed_samples(F, 1.0, 0.05, runs, ctx.seed + F, ctx.n_jobs) for F in Fs]
    eps_grid = (0.125, 0.25, 0.5, 1.0) if full else (0.25, 0.5, 1.0)
    ne = [greedy_cover_needed_samples(16, e, 0.05, runs, ctx.seed + 100 + i, ctx.n_jobs) for i, e in enumerate(eps_grid)]
    fF = scaling(Fs, nF, 1.0, confidence=0.999, parameter="|F|")
    fe = scaling(eps_grid, ne, -1.0, confidence=0.999, parameter="epsilon_step")
    top = 1.0 + 1.0 / math.log(2 * (Fs[0] + 1))
    loF, hiF = fF.details["slope_ci"]
    okF = loF <= top and hiF >= 1.0
    status = "pass" if (okF and fe.status == "pass") else "fail"
    return CheckResult(status, fF.observed, 1.0, "scaling", confidence=0.999, trials=runs,
                        p_value=None,
                        details=dict(F=list(Fs), n_star_F=nF, slope_F=fF.observed, slope_F_ci=[loF, hiF],
                                     allowed_F_range=[1.0, top], eps=list(eps_grid), n_star_eps=ne,
                                     slope_eps=fe.observed, slope_eps_ci=fe.details["slope_ci"],
                                     note="n* = smallest 2r(F-1) with mean training-error rate <= 0.05"))


# ============================================================================ Theorem 7


def check_theorem7_training_error(ctx: CheckContext) -> CheckResult:
    """Total training error of DP-GreedyCover <= E = (2M/eps)(ln 2M + ln(2M/beta)) w.p. >= 1 - beta/2."""
    # n = 2 * 8 * 7 = 112 > E = (18/2)(ln 18 + ln 90) = 66.5, so the bound is not vacuous here.
    beta, eps, F = 0.2, 2.0, 8
    Phi, y = noisy_block_instance(F, 8)
    E = greedy_cover_train_error(F, eps, beta)
    runs = ctx.trials(4000, minimum=200)

    def fn(size, ss):
        _, _, e = greedy_cover_sample(Phi, y, eps, np.random.default_rng(ss), size)
        tot = e.sum(axis=1)
        return int(np.count_nonzero(tot > E)), int(tot.max())

    parts = map_chunks(fn, runs, seed=ctx.seed, chunk_size=2000, n_jobs=ctx.n_jobs)
    fails = sum(p[0] for p in parts)
    out = failure_rate(fails, runs, beta / 2, confidence=0.999, E=E, max_errors=max(p[1] for p in parts),
                       F=F, epsilon_step=eps, n=int(y.size))
    out.details["looseness"] = E / max(1, out.details["max_errors"])
    return out


def check_theorem7_exact_privacy(ctx: CheckContext) -> CheckResult:
    """Exact hockey-stick delta at the claimed replace-one epsilon <= delta, by enumeration.

    Random realizable samples (|F| = 3, n = 6) and every replacement of record 0 by any point and
    label (non-realizable neighbours included); plus the pure exact epsilon vs M eps_step.
    """
    rng = ctx.rng
    worst_ratio, worst_pure, rows = 0.0, 0.0, []
    for eps_step, delta in ((0.5, 1e-4), (1.0, 1e-3), (2.0, 1e-6)):
        claim = greedy_cover_epsilon_replace(eps_step, delta)
        for _ in range(ctx.trials(4, minimum=1)):
            X = rng.integers(0, 2, size=(6, 3))
            y = np.where(X[:, 0] == 1, 1, np.where(X[:, 1] == 1, 0, 1))
            Phi = feature_matrix(X)
            for xr in itertools.product((0, 1), repeat=3):
                for lab in (0, 1):
                    X1, y1 = X.copy(), y.copy()
                    X1[0], y1[0] = xr, lab
                    lp0, lp1, _ = greedy_cover_exact_logprobs(Phi, y, feature_matrix(X1), y1, eps_step)
                    worst_ratio = max(worst_ratio, hockey_stick_delta(lp0, lp1, claim) / delta)
                    worst_pure = max(worst_pure, exact_epsilon(lp0, lp1, 0.0) / (4 * eps_step))
        rows.append(dict(epsilon_step=eps_step, delta=delta, claimed_epsilon=claim))
    return exact(worst_ratio, 1.0, sense="<=", rtol=1e-9, grid=rows,
                 max_exact_pure_epsilon_over_M_eps_step=worst_pure,
                 note="observed = max exact delta(claimed eps) / claimed delta over samples and replacements")


_FROM_PRIVACY_GRID = ((0.5, 1e-3), (3.5, 1e-5), (8.0, 1e-6))


def check_theorem7_from_privacy(ctx: CheckContext) -> CheckResult:
    """``DPGreedyCover.from_privacy(epsilon, delta, neighbouring=r)`` for each relation r it accepts
    ("replace-one", "add/remove"): the learner it builds reports exactly (epsilon, delta) under r
    (``guarantee``), and on small samples (|F| = 3, n = 6) its exact hockey-stick delta at epsilon is <= delta
    over every neighbour under r (every replacement of record 0 by any point and label; its removal and the
    addition of any record).
    Observed = the worst of (reported epsilon / asked epsilon, max exact delta / delta, relation mismatch)."""
    rng = ctx.rng
    worst_report, worst_delta, mismatch, rows = 0.0, 0.0, 0, []
    points = list(itertools.product((0, 1), repeat=3))
    for relation in ("replace-one", "add/remove"):
        for eps, delta in _FROM_PRIVACY_GRID:
            learner = DPGreedyCover.from_privacy(eps, delta, neighbouring=relation)
            g = learner.guarantee
            worst_report = max(worst_report, g.epsilon / eps, eps / g.epsilon)
            mismatch += int(g.delta != delta or g.neighbouring.value != ("replace-one" if relation == "replace-one"
                                                                          else "add-or-remove-one"))
            X = rng.integers(0, 2, size=(6, 3))
            y = np.where(X[:, 0] == 1, 1, np.where(X[:, 1] == 1, 0, 1))
            Phi = feature_matrix(X)
            if relation == "replace-one":
                others = [(np.vstack([np.asarray(p)[None], X[1:]]), np.r_[lab, y[1:]]) for p in points for lab in (0, 1)]
            else:
                others = [(X[1:], y[1:])] + [(np.vstack([X, np.asarray(p)[None]]), np.r_[y, lab])
                                             for p in points for lab in (0, 1)]
            for X1, y1 in others:
                lp0, lp1, _ = greedy_cover_exact_logprobs(Phi, y, feature_matrix(X1), y1, learner.epsilon_step)
                worst_delta = max(worst_delta, hockey_stick_delta(lp0, lp1, eps) / delta)
            rows.append(dict(relation=relation, epsilon=eps, delta=delta, epsilon_step=learner.epsilon_step,
                             reported_epsilon=g.epsilon, reported_relation=g.neighbouring.value))
    observed = max(worst_report, worst_delta, 1.0 + mismatch)
    return inequality(observed, 1.0, sense="<=", rtol=1e-9, grid=rows, max_report_ratio=worst_report,
                      max_exact_delta_ratio=worst_delta, relation_mismatches=mismatch,
                      note="observed = max(reported/asked epsilon both ways, exact delta/delta, 1 + relation mismatches)")


def check_theorem7_audit(ctx: CheckContext) -> CheckResult:
    """The auditor on the greedy-cover canary target: lower bound <= exact epsilon (<= claim) on the canary pair."""
    t = get_target("greedy-cover-canary")
    r = t.audit(trials=ctx.trials(t.default_trials, minimum=2000), seed=ctx.seed % 2**31)
    (P0, y0), (P1, y1) = greedy_cover_canary_pair()
    lp0, lp1, _ = greedy_cover_exact_logprobs(P0, y0, P1, y1, t.mechanism.epsilon_step)
    eps_exact = exact_epsilon(lp0, lp1, t.delta)
    return inequality(r.epsilon_lower_bound, eps_exact, sense="<=", claimed_epsilon=t.epsilon,
                      exact_epsilon=eps_exact, auditor=r.to_dict(),
                      note="observed = auditor's epsilon lower bound; bound = exact epsilon at the claimed delta")


_PAC = dict(F=4, epsilon_step=1.0, alpha=0.1, beta=0.1)
_PAC_TARGET = ((0, 1), (1, 0), (3, 1), (4, 0))  # [(x0, 1), (x1, 0), (x3, 1), (T, 0)] over {0,1}^4


def check_theorem7_pac(ctx: CheckContext) -> CheckResult:
    """PAC accuracy of DP-GreedyCover at the reconstructed sample size of Theorem 7.

    D = uniform on {0,1}^4, F = the 4 coordinate functions, target [(x0,1),(x1,0),(x3,1),(T,0)].
    n = greedy_cover_samples(|F| = 4, eps_step = 1, alpha = 0.1, beta = 0.1) fresh i.i.d. records per run;
    the true error of the output is computed exactly over the 16 points of the cube. Failure = true
    error > alpha; stated probability beta; one-sided exact binomial test at confidence 0.999.
    """
    F, eps, alpha, beta = _PAC["F"], _PAC["epsilon_step"], _PAC["alpha"], _PAC["beta"]
    n = int(math.ceil(greedy_cover_samples(F, eps, alpha, beta)))
    cube = np.array(list(itertools.product((0, 1), repeat=F)))
    Phi16 = feature_matrix(cube)
    lab16 = np.full(16, -1)
    for f, b in _PAC_TARGET:
        lab16[(lab16 < 0) & Phi16[:, f]] = b
    runs = ctx.trials(400, minimum=60)

    def fn(size, ss):
        rng = np.random.default_rng(ss)
        errs = np.empty(size)
        for i in range(size):
            idx = rng.integers(0, 16, size=n)
            order, bits, _ = greedy_cover_sample(Phi16[idx], lab16[idx], eps, rng, 1)
            first = Phi16[:, order[0]].argmax(axis=1)
            errs[i] = np.mean(bits[0][first] != lab16)
        return errs

    errs = np.concatenate(map_chunks(fn, runs, seed=ctx.seed, chunk_size=100, n_jobs=ctx.n_jobs))
    fails = int(np.count_nonzero(errs > alpha))
    return failure_rate(fails, runs, beta, confidence=0.999, n=n, F=F, epsilon_step=eps, alpha=alpha,
                        max_true_error=float(errs.max()), mean_true_error=float(errs.mean()),
                        note="true error computed exactly over the 16 points of {0,1}^4")


def check_theorem7_error_identity(ctx: CheckContext) -> CheckResult:
    """Training errors of h_fin = sum_j -q(S_j, (f_j, b_j)) exactly (each misclassified record is
    misclassified by the unique rule that covers it), on random realizable samples, eps_step in {0.1, 1, 10}."""
    rng = ctx.rng
    mismatches = total = 0
    for rep in range(ctx.trials(30, minimum=5)):
        X = rng.integers(0, 2, size=(50, 6))
        y = np.where(X[:, 2] == 1, 0, np.where(X[:, 4] == 1, 1, np.where(X[:, 0] == 1, 0, 1)))
        Phi = feature_matrix(X)
        order, bits, errors = greedy_cover_sample(Phi, y, float(rng.choice((0.1, 1.0, 10.0))), rng, 20)
        first = Phi[:, order].transpose(1, 0, 2).argmax(axis=2)  # (runs, n)
        pred = np.take_along_axis(bits, first, axis=1)
        direct = (pred != y[None, :]).sum(axis=1)
        mismatches += int(np.count_nonzero(direct != errors.sum(axis=1)))
        total += order.shape[0]
    return exact(float(mismatches), 0.0, sense="<=", atol=0.0, runs=total,
                 note="observed = runs whose direct training error differs from sum_j -q(S_j, h_j)")
