"""Audit targets of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and Private Learning of Halfspaces" (AISTATS 2021,
arXiv:2011.14580), paper id ``robust-halfspaces``: the privacy claims of Lemma 19 / Theorem 6 (DP Batch
Perceptron, Algorithm 1), of its Section 4 variant, and of Theorem 5 (the exponential mechanism on the sphere).

Families:

* ``batch-perceptron`` -- DP Batch Perceptron (Algorithm 1) with a canary point x_c = e_3 (label +1) orthogonal to
  the data (which lie in span(e_1, e_2)); d1 = d0 + canary (add/remove). Targets: the theory variant with
  Lemma 19's (p, sigma, b) (statistic <w_out, x_c>), the experimental (RDP) variant releasing only w_T/||w_T||
  (statistic <w_out, x_c>) and releasing the full transcript w_1..w_T (exact white-box likelihood ratio).
  Planted bugs: Gaussian noise 10x too small; a canary of norm 2 with no clipping; the Laplace noise of the
  stopping test removed.
* ``sphere`` -- the exponential mechanism of Theorem 5 on the circle (d = 2) with its exact log density
  (white-box likelihood ratio). Planted bug: the exponent multiplied by 4 (exp(2 eps q) instead of exp(eps q/2)).
  Note: under add/remove the score only decreases (q(X + x) <= q(X)), so exp(eps q) is already eps-DP; the
  classic factor 2 is not needed and "eps q instead of eps q/2" is NOT a privacy bug here (our remark; the
  paper uses eps/2 as usual). The planted bug therefore doubles that again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from privbound.learners.neighbouring import NeighbouringRelation as NR

from privbound.audit.engine import map_chunks
from privbound.audit.one_run import OneRunResult, one_run_audit
from privbound.audit.targets.registry import OneRunDesign, Target, TightEpsilon, register_target
from privbound._validation import check_delta, check_int
from privbound.learners.robust_halfspaces.perceptron import DPBatchPerceptron
from privbound.learners.robust_halfspaces.sphere import SphereExponentialMechanism

__all__ = ["canary_pair", "transcript_log_likelihood_ratio", "perceptron_canary_one_run", "PERCEPTRON_CANARIES"]

PAPER = "robust-halfspaces"
_GAMMA = 0.3


def canary_pair(n: int = 20, canary_norm: float = 1.0, seed: int = 20210413) -> tuple[tuple, tuple]:
    """d0: n points in span(e_1, e_2) of R^3, gamma-margin separable by e_1; d1 = d0 + (canary_norm e_3, +1)."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    s = rng.uniform(_GAMMA, 1.0, size=n)
    t = rng.uniform(-1, 1, size=n) * np.sqrt(1 - s**2)
    X0 = np.stack([y * s, t, np.zeros(n)], -1)
    X1 = np.vstack([X0, [0.0, 0.0, canary_norm]])
    return (X0, y), (X1, np.append(y, 1.0))


@dataclass(frozen=True)
class TranscriptRelease:
    """Algorithm 1 releasing its whole transcript w_1..w_T (flattened), for the white-box audit."""

    learner: DPBatchPerceptron

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        X, y = data
        return self.learner.run_batch(X, y, rng, size, transcript=True)["iterates"].reshape(size, -1)

    def dp_event(self):
        return self.learner.dp_event()


def transcript_log_likelihood_ratio(learner: DPBatchPerceptron, canary_norm: float = 1.0, d: int = 3):
    """log p_d0(o)/p_d1(o) of a transcript o = (w_1..w_T) of the experimental variant (no stopping test).

    The data are orthogonal to the canary x_c = a e_3, so only the e_3-coordinate of the increments differs:
    Delta_i = w_i[3] - w_{i-1}[3] is N(0, sigma^2) under d0 and, under d1, (1 - p m_i) N(0, sigma^2) + p m_i
    N(a, sigma^2), where m_i = [<w_hat_{i-1}, x_c> <= gamma'] is read off the transcript (w_hat_0 = 0, as in the
    learner: w_0/||w_0|| is undefined).
    Hence log p0/p1 = -sum_i log(1 - p m_i + p m_i exp((a Delta_i - a^2/2)/sigma^2)).
    """
    def llr(outputs: np.ndarray) -> np.ndarray:
        P = learner.parameters()  # calibrated on first use, not at registration
        W = np.asarray(outputs, float).reshape(len(outputs), P.T, d)
        prev = np.concatenate([np.zeros((len(W), 1, d)), W[:, :-1]], axis=1)
        nrm = np.linalg.norm(prev, axis=2)
        what3 = np.divide(prev[:, :, 2], nrm, out=np.zeros_like(nrm), where=nrm > 0)
        m = (canary_norm * what3 <= P.gamma_prime).astype(float)
        delta = W[:, :, 2] - prev[:, :, 2]
        log_ratio = np.logaddexp(np.log1p(-P.p * m), np.log(P.p * m + 1e-300) + (canary_norm * delta - canary_norm**2 / 2) / P.sigma**2)
        return -np.sum(np.where(m > 0, log_ratio, 0.0), axis=1)

    return llr


class _NoiseDiv10(DPBatchPerceptron):
    """Planted bug: the calibrated Gaussian noise divided by 10 (the claim is left unchanged)."""

    def parameters(self):
        P = super().parameters()
        return replace(P, sigma=P.sigma / 10, source=P.source + " [BUG: sigma / 10]")


def _canary_score(outputs: np.ndarray) -> np.ndarray:
    return np.asarray(outputs, float)[:, 2]


def _released(outputs: np.ndarray) -> np.ndarray:
    """1 when a unit vector was released, 0 on FAIL (zeros)."""
    return np.linalg.norm(np.asarray(outputs, float), axis=1)


def perceptron_canary_one_run(
    learner,
    base_data: tuple,
    m: int,
    seed: int = 0,
    *,
    delta: float | None = None,
    confidence: float = 0.95,
    grid: Sequence[tuple[int, int]] | None = None,
    epsilon_claimed: float | None = None,
    fdp: bool = False,
) -> OneRunResult:
    """One-run audit of a DP Batch Perceptron (``learner.run_batch``) with m orthogonal unit canaries.

    Canary design: the base data ``(X, y)`` live in the first ``k`` coordinates; canary
    i is the record ``(e_{k+i}, +1)``, orthogonal to the data and to every other canary, included with
    probability 1/2 (bits from ``SeedSequence([seed, 1])``). One training run (through the chunk engine,
    seed ``seed``) releases ``w``; the score of canary i is ``w[k + i]`` (normalisation of w does not change
    the ranking). Adding or removing one canary is one add/remove neighbouring step, so the learner's
    (eps, delta) claim covers each canary. ``delta`` defaults to ``learner.delta``. ``fdp=True`` adds the
    Gaussian f-DP refinement; off by default because a Poisson-subsampled Gaussian learner claims (eps, delta),
    not the full trade-off curve of the Gaussian mechanism calibrated to (eps, delta), so a refutation of that
    curve is not a violation of the learner's claim.
    """
    m = check_int(m, "m", low=2)
    check_int(seed, "seed", low=0)
    X0 = np.asarray(base_data[0], dtype=float)
    y0 = np.asarray(base_data[1], dtype=float)
    n, k = X0.shape
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    included = rng.random(m) < 0.5
    X = np.zeros((n + m, k + m))
    X[:n, :k] = X0
    X[n + np.arange(m), k + np.arange(m)] = 1.0
    keep = np.r_[np.ones(n, bool), included]
    y = np.r_[y0, np.ones(m)]

    def chunk(size, ss):
        return learner.run_batch(X[keep], y[keep], np.random.default_rng(ss), size)["coef"]

    w = map_chunks(chunk, 1, seed=seed)[0][0]
    d = float(getattr(learner, "delta", 0.0)) if delta is None else check_delta(delta)
    res = one_run_audit(w[k:], included, delta=d, confidence=confidence, grid=grid, fdp=fdp and d > 0,
                        epsilon_claimed=epsilon_claimed)
    res.details.update(design="orthogonal unit canaries e_{k+i}, label +1", seed=seed)
    return res


def _perceptron_canaries(target: Target, m: int, seed: int, confidence: float) -> OneRunResult:
    """Orthogonal unit canaries on the target's DP Batch Perceptron, its base data ``d0``, against its claim."""
    learner = getattr(target.mechanism, "learner", target.mechanism)
    return perceptron_canary_one_run(learner, target.d0, m, seed, delta=target.delta, confidence=confidence,
                                     epsilon_claimed=target.epsilon)


PERCEPTRON_CANARIES = OneRunDesign(
    "perceptron-orthogonal-canaries", _perceptron_canaries,
    "m orthogonal unit canaries (e_{k+i}, +1) in one training run (add/remove)")


def _first_step_fail_tight(learner: DPBatchPerceptron, d0: tuple, d1: tuple, delta: float) -> TightEpsilon:
    """The learner's tight epsilon, with the pair's exact witness when the first stopping test separates it:
    FAIL (Line 10 at i = 1) certain on one dataset and at most 1 - delta likely on the other."""
    eps, source = learner.tight_epsilon(delta)
    q0, q1 = (learner.first_step_stop_probability(len(d[1])) for d in (d0, d1))
    if max(q0, q1) == 1.0 and 1.0 - min(q0, q1) > delta:
        return TightEpsilon(math.inf, f"{source}; exact on this pair: FAIL at i = 1 has probability {q0:.4g} on d0 and "
                                      f"{q1:.4g} on d1, so no finite epsilon at delta = {delta:g}")
    return TightEpsilon(eps, source)


def _register_perceptron_targets(d0: tuple, d1: tuple) -> None:
    """The correct DP Batch Perceptron targets: the theory variant, and the experimental variant releasing its
    output or its whole transcript."""
    n0 = len(d0[1])
    theory = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=1e-5, alpha=0.1, n_iter=16, n_nominal=n0)
    register_target(Target(
        "batch-perceptron-theory", "batch-perceptron", theory, d0, d1, 1.0, 1e-5,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, score=_canary_score, default_trials=20_000,
        description="Algorithm 1, Lemma 19 parameters (T = 16, p = 1/4, sigma = 100 ln(T/delta)/eps, b = 100 sqrt(ln(T/delta))/eps); "
                    "canary e_3 orthogonal to the data, statistic <w_out, x_c>",
        claim_source="Lemma 19 (App. F.2), Theorem 6",
        tight_epsilon=lambda: TightEpsilon(*theory.tight_epsilon(1e-5)),
    ))
    rdp = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.5, n_iter=4)
    register_target(Target(
        "batch-perceptron-rdp", "batch-perceptron", rdp, d0, d1, 1.0, 1e-5,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, score=_canary_score, default_trials=20_000,
        description="experimental variant (Sec. 4): no stopping test, T = 4, p = 1/2, sigma by the RDP accountant; "
                    "only w_T/||w_T|| released, statistic <w_out, x_c>",
        claim_source="Sec. 4 (RDP accountant, Mironov 2017) via dp_accounting",
        tight_epsilon=lambda: TightEpsilon(*rdp.tight_epsilon(1e-5)),
    ))
    register_target(Target(
        "batch-perceptron-rdp-transcript", "batch-perceptron", TranscriptRelease(rdp), d0, d1, 1.0, 1e-5,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES,
        log_likelihood_ratio=transcript_log_likelihood_ratio(rdp), default_trials=50_000,
        description="experimental variant releasing the whole transcript w_1..w_4; exact white-box likelihood ratio",
        claim_source="Sec. 4 (RDP accountant) via dp_accounting",
        tight_epsilon=lambda: TightEpsilon(*rdp.tight_epsilon(1e-5)),
    ))


def _register_perceptron_bugs(d0: tuple, d1: tuple) -> None:
    """The planted bugs of the DP Batch Perceptron family (and the clipped control of the unclipped canary)."""
    small = _NoiseDiv10(_GAMMA, epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.5, n_iter=4)
    register_target(Target(
        "batch-perceptron-noise-div10", "batch-perceptron", TranscriptRelease(small), d0, d1, 1.0, 1e-5,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, planted_bug=True,
        log_likelihood_ratio=transcript_log_likelihood_ratio(small), default_trials=20_000,
        description="BUG: Gaussian noise 10x smaller than the RDP calibration for (1, 1e-5); transcript released",
        claim_source="claims Sec. 4 (RDP accountant)",
        tight_epsilon=lambda: TightEpsilon(*small.tight_epsilon(1e-5)),
    ))
    e0, e1 = canary_pair(canary_norm=2.0)
    for name, check, bug, desc in (
        ("batch-perceptron-clipped", "clip", False,
         "experimental variant, one full-batch step (T = 1, p = 1), sigma by the PLD accountant; canary of norm 2 "
         "clipped to the unit ball (the correct control of batch-perceptron-unclipped)"),
        ("batch-perceptron-unclipped", "none", True,
         "BUG: canary of norm 2 and no clipping (sensitivity 2 with noise calibrated for 1); one full-batch step"),
    ):
        est = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=1.0, n_iter=1,
                                accountant="pld", input_check=check)
        register_target(Target(
            name, "batch-perceptron", est, e0, e1, 1.0, 1e-5,
            neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, planted_bug=bug, score=_canary_score,
            default_trials=500_000, description=desc,
            claim_source="Sec. 4 (accountant calibration) / Lemma 19 (requires ||x|| <= 1)",
            tight_epsilon=lambda est=est: TightEpsilon(*est.tight_epsilon(1e-5, e1)),
        ))
    nostop = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=1e-5, alpha=0.5, n_iter=4, laplace_scale=0.0, n_nominal=24)
    one = (d0[0][:1], d0[1][:1])
    one_c = (np.vstack([one[0], [0.0, 0.0, 1.0]]), np.append(one[1], 1.0))
    register_target(Target(
        "batch-perceptron-no-stop-noise", "batch-perceptron", nostop, one, one_c, 1.0, 1e-5,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, planted_bug=True, score=_released, default_trials=10_000,
        description="BUG: Lemma 19 parameters (T = 4, p = 1/2) but the stopping test's Laplace noise removed; "
                    "threshold 0.3 alpha p n = 1.8: d0 (one point) always stops at i = 1 (FAIL), d1 continues w.p. 1/4",
        claim_source="claims Lemma 19",
        tight_epsilon=lambda: _first_step_fail_tight(nostop, one, one_c, 1e-5),
    ))


def _register_sphere_targets() -> None:
    """The exponential mechanism of Theorem 5 on the circle and its planted bug (exact white-box likelihood ratio)."""
    X0 = np.array([[1.0, 0.0]])
    s0 = (X0, np.ones(1))
    s1 = (np.vstack([X0, X0]), np.ones(2))
    for name, scale, bug, desc in (
        ("sphere-em-d2", 0.5, False, "exponential mechanism of Theorem 5 on S^1, exact angular sampler; "
                                     "d0 = one point (e_1, +1), d1 = the same point twice; exact white-box LLR"),
        ("sphere-em-d2-exponent-x4", 2.0, True, "BUG: density exp(2 eps q) instead of exp(eps q / 2)"),
    ):
        em = SphereExponentialMechanism(0.5, 2.0, exponent_scale=scale)
        register_target(Target(
            name, "sphere", em, s0, s1, 2.0, 0.0, neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER,
            planted_bug=bug, default_trials=20_000, description=desc,
            log_likelihood_ratio=(lambda o, em=em: em.log_density(s0, o) - em.log_density(s1, o)),
            claim_source="Theorem 5 (exponential mechanism; McSherry & Talwar 2007)",
            tight_epsilon=lambda em=em: TightEpsilon(*em.tight_epsilon(s0, s1, 0.0)),
        ))


def _register() -> None:
    d0, d1 = canary_pair()
    _register_perceptron_targets(d0, d1)
    _register_perceptron_bugs(d0, d1)
    _register_sphere_targets()


_register()
