"""Audit targets of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and Private Learning of Halfspaces" (AISTATS 2021,
arXiv:2011.14580), paper id ``robust-halfspaces``: the privacy claims of Lemma 19 / Theorem 6 (DP Batch
Perceptron, Algorithm 1), of its Section 4 variant, and of Theorem 5 (the exponential mechanism on the sphere).

Families:

* ``batch-perceptron`` -- DP Batch Perceptron (Algorithm 1). The white-box designs (step-wise auditing of Nasr,
  Hayes, Steinke, Balle, Tramer, Jagielski, Carlini & Terzis, USENIX Security 2023, arXiv:2302.07956) release the
  learner's transcript -- every iterate w_1..w_T and, with the stopping test, every noisy count |M_i| + Lap(b),
  the releases Lemma 19's proof composes -- on a pair whose canary (d1's extra record, ``CANARY_OUTSIDE`` times the
  clip norm, so outside the ball) is the only record with a component along e_3. The canary's per-step
  contribution is then known: with margin ratio and gamma 1 (gamma' = 1) every record of the ball is a margin
  mistake at every step (|<w_hat, x>| <= ||x|| <= R), so each step releases a Poisson-subsampled count shifted by
  one and a Gaussian sum shifted by the clipped canary along e_3, and :class:`CanaryTranscript` computes the exact
  log-likelihood ratio of a transcript from the parameters the learner runs with (read from its code when the
  ratio is evaluated: a mutant's noise scale, clipping or calibration is the one the ratio uses). The experimental
  variant's steps are then i.i.d. (composition estimator); the theory variant's stopping test makes them an
  adaptively stopped sequence (betting estimator on the total loss), whose stops the pair makes rare: d0 holds
  ``THEORY_COPIES`` copies of (e_1, +1), all margin mistakes, so that the count sits ~19 Laplace scales above the
  threshold. Targets: the theory variant with Lemma 19's (p, sigma, b); the experimental (RDP) variant releasing
  its transcript (clip norm 2) and, black-box, only w_T/||w_T|| (statistic <w_out, x_c>; an end-to-end design,
  far from the tight value by construction: the normalised last iterate hides the per-step releases); one
  full-batch step (T = 1, p = 1) with a canary of norm 2. Planted bugs: Gaussian noise 10x too small; the canary
  of norm 2 with no clipping; the Laplace noise of the stopping test removed.
* ``sphere`` -- the exponential mechanism of Theorem 5 on the circle (d = 2) with its exact log density
  (white-box likelihood ratio; pure DP, so one output refutes every epsilon below its privacy loss). The pair
  (four copies of (e_1, +1) against five) puts mass 0.034 on the arc where the added point lowers the score and
  reaches 0.979 of the worst case over add-or-remove pairs (more copies come closer but make that arc too rare
  for a mutant whose larger exponent shrinks it further). Planted bug: the exponent multiplied by 4
  (exp(2 eps q) instead of exp(eps q/2)). Note: under add/remove the score only decreases (q(X + x) <= q(X)), so
  exp(eps q) is already eps-DP; the classic factor 2 is not needed, and "eps q instead of eps q/2" violates the
  tight value of what runs (0.98 on the pair, 1 over pairs) but not the claim (our remark; the paper uses eps/2).

Mutants (``Target.mutants``, :func:`perceptron_mutants`, :data:`SPHERE_MUTANTS`) patch the learners' own code: the
Gaussian noise halved, the clipping skipped, the sampling rate ignored by the calibration, the noise not scaled by
the clip norm, the Laplace scale halved, the exponential mechanism's eps/2 dropped; ``Target.overspend`` divides
the noise scales by a factor (the sphere: multiplies epsilon).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np
from scipy import stats

from privbound.learners.neighbouring import NeighbouringRelation as NR

from privbound.audit.engine import map_chunks
from privbound.audit.one_run import OneRunResult, one_run_audit
from privbound.audit.targets.registry import OneRunDesign, Target, TightEpsilon, register_target
from privbound._validation import check_delta, check_int, check_probability, check_real
from privbound.learners.robust_halfspaces import perceptron as _perceptron
from privbound.learners.robust_halfspaces.perceptron import DPBatchPerceptron
from privbound.learners.robust_halfspaces.sphere import SphereExponentialMechanism
from privbound.mutation import Mutant, patch

__all__ = ["canary_pair", "mistake_mass_pair", "CanaryTranscript",
           "perceptron_canary_one_run", "PERCEPTRON_CANARIES", "perceptron_mutants", "perceptron_overspend",
           "SPHERE_MUTANTS", "sphere_overspend", "sphere_pair"]

PAPER = "robust-halfspaces"
_GAMMA = 0.3
_DELTA = 1e-5
CANARY_OUTSIDE = 2.0  # the canary's norm over the clip norm: outside the ball, so clipping matters
TRANSCRIPT_COPIES = 200  # d0 of the experimental transcript targets: copies of (R e_1, +1)
THEORY_COPIES = 12_000  # d0 of the theory target: copies of (e_1, +1); their count keeps the stopping test off
SPHERE_COPIES = 4  # the correct sphere target's d0: copies of (e_1, +1)


def canary_pair(n: int = 20, canary_norm: float = 1.0, seed: int = 20210413) -> tuple[tuple, tuple]:
    """d0: n points in span(e_1, e_2) of R^3, gamma-margin separable by e_1; d1 = d0 + (canary_norm e_3, +1)."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    s = rng.uniform(_GAMMA, 1.0, size=n)
    t = rng.uniform(-1, 1, size=n) * np.sqrt(1 - s**2)
    X0 = np.stack([y * s, t, np.zeros(n)], -1)
    X1 = np.vstack([X0, [0.0, 0.0, canary_norm]])
    return (X0, y), (X1, np.append(y, 1.0))


def mistake_mass_pair(copies: int, clip_norm: float = 1.0, canary_outside: float = CANARY_OUTSIDE) -> tuple[tuple, tuple]:
    """d0: ``copies`` copies of (R e_1, +1) in R^3 (R = ``clip_norm``); d1 = d0 + (canary_outside R e_3, +1).

    With gamma' = 1 every record of the ball of radius R is a margin mistake at every step, so d0's records enter
    every subsample's count and sum (along e_1 only) and the canary, clipped to R e_3, enters them whenever it is
    sampled.
    """
    copies = check_int(copies, "copies", low=1)
    R = check_real(clip_norm, "clip_norm", low=0.0, low_inclusive=False)
    X0 = np.tile([[R, 0.0, 0.0]], (copies, 1))
    y0 = np.ones(copies)
    return (X0, y0), (np.vstack([X0, [0.0, 0.0, canary_outside * R]]), np.append(y0, 1.0))


@dataclass(frozen=True)
class CanaryTranscript:
    """Algorithm 1 releasing its transcript on a canary pair, with the transcript's exact log-likelihood ratio.

    Output of a run (:meth:`sample`): the iterates w_1..w_T (T d values, rows after a stop repeat the last w) and,
    with the stopping test, the noisy counts |M_i| + Lap(b) of the steps reached (T values, 0 after the stop) and
    the number of steps reached. ``d0`` is the pair's dataset without the canary, ``canary`` the record (x, y) d1
    adds. The ratio assumes what the pair is built for and refuses a pair that is not: after the learner's own
    input processing, d0's records have no component along e_``axis`` and the canary's lies along it (its shift
    a); with the stopping test the threshold must not depend on the dataset (``n_nominal`` set).

    Per step i (white-box, Nasr et al. 2023): the canary enters the step iff it is a margin mistake under
    w_hat_{i-1} (read off the transcript; w_hat_0 = 0) and is sampled (probability p). Then the e_axis increment
    o_i is N(a, s^2) instead of N(0, s^2) (s = the Gaussian's std), and the noisy count is g(c - 1) instead of g(c),
    g the law of d0's mistakes' count plus Lap(b)
    (:func:`~privbound.learners.robust_halfspaces.perceptron.noisy_count_logpdf`, with N_i = d0's margin mistakes
    under w_hat_{i-1}). Everything else -- the other coordinates, d0's contributions -- has the same law under both
    datasets given the transcript so far. So the step's log p_d0/p_d1 is -log(1 - p + p exp(x_i)), with
    x_i = (a o_i - a^2/2)/s^2 + log g(c_i - 1) - log g(c_i) (only the count's term at a stop, nothing at steps not
    reached or where the canary is no mistake). Parameters (p, s, b, the clip, the margin) are read from the
    learner's code when the ratio is evaluated, so a planted bug or mutant is modelled exactly.
    """

    learner: DPBatchPerceptron
    d0: tuple
    canary: tuple
    axis: int = 2

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        X, y = data
        r = self.learner.run_batch(X, y, rng, size, transcript=True, group_identical=True)
        parts = [r["iterates"].reshape(size, -1)]
        if "noisy_counts" in r:
            reached = r["n_iter"] + r["stopped"]
            parts += [np.nan_to_num(r["noisy_counts"], nan=0.0), reached[:, None].astype(float)]
        return np.concatenate(parts, axis=1)

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, rng, 1)[0]

    def dp_event(self):
        return self.learner.dp_event()

    def _processed(self, P) -> tuple[np.ndarray, np.ndarray]:
        """(d0's contributions y x, the canary's y x) after the learner's own input processing."""
        kw = dict(radius=P.clip_norm)
        X0, y0 = _perceptron.prepare_inputs(self.d0[0], self.d0[1], self.learner.input_check, **kw)
        xc, yc = _perceptron.prepare_inputs(np.atleast_2d(np.asarray(self.canary[0], float)), [float(self.canary[1])],
                                            self.learner.input_check, **kw)
        rows, c = y0[:, None] * X0, yc[0] * xc[0]
        others = np.delete(c, self.axis)
        if np.any(rows[:, self.axis] != 0) or c[self.axis] == 0 or np.any(others != 0):
            raise ValueError(f"CanaryTranscript needs d0's records orthogonal to e_{self.axis} and the canary along it")
        return rows, c

    def step_log_likelihood_ratio(self, outputs: Any) -> np.ndarray:
        """log p_d0(o_i | o_<i) / p_d1(o_i | o_<i) of every step of every output, shape (outputs, T)."""
        P = self.learner.parameters()
        rows, c = self._processed(P)
        std = _perceptron.gaussian_noise_std(P)
        if std <= 0:
            raise ValueError("CanaryTranscript needs Gaussian noise (sigma > 0): without it the loss is unbounded")
        o = np.asarray(outputs, dtype=float)
        size, T, d = o.shape[0], P.T, rows.shape[1]
        W = o[:, :T * d].reshape(size, T, d)
        prev = np.concatenate([np.zeros((size, 1, d)), W[:, :-1]], axis=1)
        nrm = np.linalg.norm(prev, axis=2, keepdims=True)
        what = np.divide(prev, nrm, out=np.zeros_like(prev), where=nrm > 0)
        margin = _perceptron.margin_threshold(P)
        enters = what @ c <= margin
        a = c[self.axis]
        x = (a * (W[:, :, self.axis] - prev[:, :, self.axis]) - a * a / 2) / std ** 2
        if P.stopping:
            x, enters = self._with_counts(P, o[:, T * d:], what, rows, margin, x, enters)
        with np.errstate(divide="ignore"):
            step = -np.logaddexp(np.log1p(-P.p), math.log(P.p) + x)
        return np.where(enters, step, 0.0)

    def _with_counts(self, P, tail: np.ndarray, what: np.ndarray, rows: np.ndarray, margin: float, x: np.ndarray,
                     enters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stopping test's share of each step's ratio: the noisy count's term, and the sum's only where the run
        went on (a stop releases the count alone); steps not reached contribute nothing."""
        if not P.b:
            raise ValueError("CanaryTranscript needs Laplace noise on the count (b > 0): without it the loss is unbounded")
        if self.learner.n_nominal is None:
            raise ValueError("CanaryTranscript needs n_nominal: a threshold computed from len(X) differs between d0 and d1")
        T = P.T
        counts, reached = tail[:, :T], tail[:, T]
        ran = np.arange(T)[None, :] < reached[:, None]
        went_on = ran & (counts >= self.learner._threshold(P, len(rows)))
        distinct, mult = _perceptron.distinct_rows(rows)
        n_mistakes = np.where(what @ distinct.T <= margin, mult, 0).sum(axis=2)
        term = np.zeros_like(x)
        for n in np.unique(n_mistakes[ran]):
            at = ran & (n_mistakes == n)
            term[at] = (_perceptron.noisy_count_logpdf(counts[at] - 1, int(n), P.p, P.b)
                        - _perceptron.noisy_count_logpdf(counts[at], int(n), P.p, P.b))
        return np.where(went_on, x + term, term), enters & ran

    def log_likelihood_ratio(self, outputs: Any) -> np.ndarray:
        """log p_d0(o) / p_d1(o) of each whole transcript: the sum of :meth:`step_log_likelihood_ratio`."""
        return self.step_log_likelihood_ratio(outputs).sum(axis=1)


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


# --------------------------------------------------------------------------- mutants


def _noise_times(factor: float, name: str, description: str) -> Mutant:
    """The Gaussian noise of Line 12 multiplied by ``factor`` where the learner computes it (training only: the
    calibration, the guarantee and the claim are unchanged)."""
    return Mutant(name, description, patch(_perceptron, "gaussian_noise_std", lambda f: lambda P: factor * f(P)),
                  profile="default")


def _skip_clip(f):
    def prepare_inputs(X, y, input_check="clip", **kwargs):
        return f(X, y, "none" if input_check == "clip" else input_check, **kwargs)

    return prepare_inputs


def _rate_ignored(f):
    def calibrate_gaussian_noise(epsilon, delta, p, T, accountant="rdp", repeats=1):
        return f(epsilon, delta, DEFAULT_SAMPLING_RATE, T, accountant, repeats)

    return calibrate_gaussian_noise


def _laplace_halved(f):
    def lemma19_parameters(epsilon, delta, T):
        p, sigma, b = f(epsilon, delta, T)
        return p, sigma, b / 2

    return lemma19_parameters


DEFAULT_SAMPLING_RATE = 0.1  # DPBatchPerceptron's rate when none is given: what a calibration bug falls back to

GAUSSIAN_NOISE_HALVED = _noise_times(0.5, "gaussian-noise-halved", "Line 12's Gaussian noise halved in training "
                                     "(sigma R / 2; the calibration and the claim unchanged)")
CLIPPING_SKIPPED = Mutant(
    "clipping-skipped", "records are not clipped to the ball of radius clip_norm (input_check 'clip' acts as 'none')",
    patch(_perceptron, "prepare_inputs", _skip_clip), profile="default")
RATE_IGNORED = Mutant(
    "rate-ignored-in-calibration", f"sigma calibrated for the default sampling rate {DEFAULT_SAMPLING_RATE:g} "
    "instead of the rate the sampler uses", patch(_perceptron, "calibrate_gaussian_noise", _rate_ignored),
    profile="default")
SENSITIVITY_IGNORES_CLIP_NORM = Mutant(
    "sensitivity-ignores-clip-norm", "the Gaussian's std is the noise multiplier sigma, not sigma times the clip norm",
    patch(_perceptron, "gaussian_noise_std", lambda f: lambda P: P.sigma), profile="default")
LAPLACE_SCALE_HALVED = Mutant(
    "laplace-scale-halved", "Lemma 19's Laplace scale halved (b = 50 sqrt(ln(T/delta))/eps)",
    patch(_perceptron, "lemma19_parameters", _laplace_halved), profile="default")


def perceptron_mutants(learner: DPBatchPerceptron) -> tuple[Mutant, ...]:
    """The privacy bugs that apply to ``learner``'s configuration: the noise halved and the clipping skipped always;
    the sampling rate ignored by the calibration when sigma is calibrated (experimental variant) and the rate is
    not the default; the clip norm ignored by the noise when it is not 1; the Laplace scale halved with Lemma 19's
    stopping test."""
    P = learner.parameters()
    out = [GAUSSIAN_NOISE_HALVED, CLIPPING_SKIPPED]
    if not P.stopping and learner.noise_std is None and P.p != DEFAULT_SAMPLING_RATE:
        out.append(RATE_IGNORED)
    if P.clip_norm != 1.0:
        out.append(SENSITIVITY_IGNORES_CLIP_NORM)
    if P.stopping and learner.laplace_scale is None:
        out.append(LAPLACE_SCALE_HALVED)
    return tuple(out)


def perceptron_overspend(factor: float) -> Mutant:
    """Algorithm 1 spending ``factor`` times its budget: its noise multiplier sigma and Laplace scale b divided by
    ``factor`` where the learner resolves its parameters (the claim unchanged)."""
    factor = check_real(factor, "factor", low=0.0, low_inclusive=False)

    def make(parameters):
        def divided(self):
            P = parameters(self)
            return replace(P, sigma=P.sigma / factor, b=None if P.b is None else P.b / factor)

        return divided

    return Mutant(f"overspend-x{factor:g}", f"noise scales divided by {factor:g}",
                  patch(DPBatchPerceptron, "parameters", make), profile="default")


def _sphere_params_times(scale_factor: float = 1.0, epsilon_factor: float = 1.0):
    def make(params):
        def broken(self):
            c, eps, scale = params(self)
            return c, eps * epsilon_factor, scale * scale_factor

        return broken

    return patch(SphereExponentialMechanism, "_params", make)


SPHERE_MUTANTS = (
    Mutant("eps-half-dropped", "density exp(eps q) instead of exp(eps q / 2)", _sphere_params_times(scale_factor=2.0),
           profile="default"),
)


def sphere_overspend(factor: float) -> Mutant:
    """The exponential mechanism run at ``factor`` times its epsilon (the claim unchanged)."""
    factor = check_real(factor, "factor", low=0.0, low_inclusive=False)
    return Mutant(f"overspend-x{factor:g}", f"epsilon multiplied by {factor:g} in the density",
                  _sphere_params_times(epsilon_factor=factor), profile="default")


# --------------------------------------------------------------------------- targets


class _NoiseDiv10(DPBatchPerceptron):
    """Planted bug: the calibrated Gaussian noise divided by 10 (the claim is left unchanged)."""

    def parameters(self):
        P = super().parameters()
        return replace(P, sigma=P.sigma / 10, source=P.source + " [BUG: sigma / 10]")


def _first_step_fail_tight(learner: DPBatchPerceptron, d0: tuple, d1: tuple, delta: float) -> TightEpsilon:
    """The learner's tight epsilon, with the pair's exact witness when the first stopping test separates it:
    FAIL (Line 10 at i = 1) certain on one dataset and at most 1 - delta likely on the other."""
    eps, source = learner.tight_epsilon(delta)
    q0, q1 = (learner.first_step_stop_probability(len(d[1])) for d in (d0, d1))
    if max(q0, q1) == 1.0 and 1.0 - min(q0, q1) > delta:
        return TightEpsilon(math.inf, f"{source}; exact on this pair: FAIL at i = 1 has probability {q0:.4g} on d0 and "
                                      f"{q1:.4g} on d1, so no finite epsilon at delta = {delta:g}")
    return TightEpsilon(eps, source)


def _theory_pair_tight(learner: DPBatchPerceptron, copies: int) -> TightEpsilon:
    """The tight epsilon of the theory target's pair: T steps whose count carries the Binomial(copies, p) subsample
    of d0's records (all margin mistakes) beside Lap(b), by PLD; the stopping test truncates the transcript, a
    post-processing of the unstopped one, so this is an upper bound on the pair's epsilon, exact up to the stops'
    probability (stated); the worst case over pairs (an undiluted count) is stated beside it."""
    P = learner.parameters()
    eps, source = learner.tight_epsilon(_DELTA, count_copies=copies)
    worst, _ = learner.tight_epsilon(_DELTA)
    stop = P.T * float(_perceptron.noisy_count_cdf(learner._threshold(P, copies), copies, P.p, P.b))
    return TightEpsilon(eps, f"{source}; an upper bound on this pair's epsilon, exact up to the stopping test, which "
                             f"fires with probability <= {stop:.1g} per run and only truncates the transcript; "
                             f"worst case over pairs: {worst:.4g}")


def _transcript(learner: DPBatchPerceptron, d0: tuple, d1: tuple) -> CanaryTranscript:
    return CanaryTranscript(learner, d0, (d1[0][-1], d1[1][-1]))


_ORTHOGONAL = "the canary (e_3 direction, norm 2 R, outside the ball) is the only record with an e_3 component"
_ALL_MISTAKES = "gamma' = 1: every record is a margin mistake at every step"


def _register_perceptron_targets() -> None:
    """The correct DP Batch Perceptron targets: the theory variant, and the experimental variant releasing its
    transcript or (end-to-end) its output, and one full-batch step."""
    t0, t1 = mistake_mass_pair(THEORY_COPIES)
    theory = DPBatchPerceptron(1.0, epsilon=1.0, delta=_DELTA, alpha=0.1, margin_ratio=1.0, n_iter=16,
                               n_nominal=THEORY_COPIES)
    release = _transcript(theory, t0, t1)
    register_target(Target(
        "batch-perceptron-theory", "batch-perceptron", release, t0, t1, 1.0, _DELTA,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES,
        log_likelihood_ratio=release.log_likelihood_ratio, default_trials=10_000,
        canary="(2 e_3, +1), clipped to e_3",
        description="Algorithm 1, Lemma 19 parameters (T = 16, p = 1/4, sigma = 100 ln(T/delta)/eps, b = 100 "
                    f"sqrt(ln(T/delta))/eps); transcript (iterates and noisy counts) released; d0 = {THEORY_COPIES} "
                    f"copies of (e_1, +1), {_ALL_MISTAKES}, so the count stays ~8 b above the threshold; "
                    f"{_ORTHOGONAL}; exact white-box likelihood ratio (betting estimator)",
        claim_source="Lemma 19 (App. F.2), Theorem 6",
        tight_epsilon=lambda: _theory_pair_tight(theory, THEORY_COPIES),
        mutants=perceptron_mutants(theory), overspend=perceptron_overspend,
    ))
    b0, b1 = canary_pair(canary_norm=CANARY_OUTSIDE)
    rdp = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=_DELTA, variant="experimental", sampling_rate=0.5, n_iter=4)
    register_target(Target(
        "batch-perceptron-rdp", "batch-perceptron", rdp, b0, b1, 1.0, _DELTA,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, score=_canary_score,
        default_trials=20_000, canary="(2 e_3, +1), clipped to e_3",
        description="black-box, end-to-end: experimental variant (Sec. 4), no stopping test, T = 4, p = 1/2, sigma by "
                    "the RDP accountant; only w_T/||w_T|| released, statistic <w_out, x_c> (the transcript target "
                    "audits the same steps tightly)",
        claim_source="Sec. 4 (RDP accountant, Mironov 2017) via dp_accounting",
        no_tight_epsilon=("the release, w_T/||w_T||, is a post-processing of the T steps whose own epsilon has no exact "
                          "method here; the PLD of the steps (the learner's tight_epsilon) is only an upper bound. "
                          "batch-perceptron-rdp-transcript audits the same steps against their exact value"),
    ))
    r0, r1 = mistake_mass_pair(TRANSCRIPT_COPIES, clip_norm=2.0)
    exp = DPBatchPerceptron(1.0, epsilon=1.0, delta=_DELTA, variant="experimental", margin_ratio=1.0,
                            sampling_rate=0.5, n_iter=4, clip_norm=2.0)
    release = _transcript(exp, r0, r1)
    register_target(Target(
        "batch-perceptron-rdp-transcript", "batch-perceptron", release, r0, r1, 1.0, _DELTA,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES,
        log_likelihood_ratio=release.log_likelihood_ratio, step_log_likelihood_ratio=release.step_log_likelihood_ratio,
        default_trials=20_000, canary="(4 e_3, +1), clipped to 2 e_3",
        description="experimental variant (Sec. 4), T = 4, p = 1/2, sigma by the RDP accountant, clip norm R = 2; "
                    f"every iterate released; d0 = {TRANSCRIPT_COPIES} copies of (2 e_1, +1), {_ALL_MISTAKES}; "
                    f"{_ORTHOGONAL}; exact per-step likelihood ratios of i.i.d. steps (composition estimator)",
        claim_source="Sec. 4 (RDP accountant) via dp_accounting",
        tight_epsilon=lambda: TightEpsilon(*exp.tight_epsilon(_DELTA)),
        mutants=perceptron_mutants(exp), overspend=perceptron_overspend,
    ))
    e0, e1 = canary_pair(canary_norm=CANARY_OUTSIDE)
    step = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=_DELTA, variant="experimental", sampling_rate=1.0, n_iter=1,
                             accountant="pld")
    release = _transcript(step, e0, e1)
    register_target(Target(
        "batch-perceptron-clipped", "batch-perceptron", release, e0, e1, 1.0, _DELTA,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES,
        log_likelihood_ratio=release.log_likelihood_ratio, default_trials=50_000, canary="(2 e_3, +1), clipped to e_3",
        description="experimental variant, one full-batch step (T = 1, p = 1), sigma by the PLD accountant; canary of "
                    "norm 2 clipped to the unit ball; w_1 released, exact white-box likelihood ratio (the correct "
                    "control of batch-perceptron-unclipped)",
        claim_source="Sec. 4 (accountant calibration) / Lemma 19 (requires ||x|| <= 1)",
        tight_epsilon=lambda: TightEpsilon(*step.tight_epsilon(_DELTA, e1)),
        mutants=perceptron_mutants(step), overspend=perceptron_overspend,
    ))


def _register_perceptron_bugs() -> None:
    """The planted bugs of the DP Batch Perceptron family."""
    r0, r1 = mistake_mass_pair(TRANSCRIPT_COPIES, clip_norm=2.0)
    small = _NoiseDiv10(1.0, epsilon=1.0, delta=_DELTA, variant="experimental", margin_ratio=1.0, sampling_rate=0.5,
                        n_iter=4, clip_norm=2.0)
    release = _transcript(small, r0, r1)
    register_target(Target(
        "batch-perceptron-noise-div10", "batch-perceptron", release, r0, r1, 1.0, _DELTA,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, planted_bug=True,
        log_likelihood_ratio=release.log_likelihood_ratio, default_trials=5_000, canary="(4 e_3, +1), clipped to 2 e_3",
        description="BUG: Gaussian noise 10x smaller than the RDP calibration for (1, 1e-5); the pair and transcript "
                    "of batch-perceptron-rdp-transcript, betting estimator on the total loss (cheaper than the "
                    "composition's grid at this loss's range)",
        claim_source="claims Sec. 4 (RDP accountant)",
        tight_epsilon=lambda: TightEpsilon(*small.tight_epsilon(_DELTA)),
    ))
    e0, e1 = canary_pair(canary_norm=CANARY_OUTSIDE)
    raw = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=_DELTA, variant="experimental", sampling_rate=1.0, n_iter=1,
                            accountant="pld", input_check="none")
    release = _transcript(raw, e0, e1)
    register_target(Target(
        "batch-perceptron-unclipped", "batch-perceptron", release, e0, e1, 1.0, _DELTA,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, planted_bug=True,
        log_likelihood_ratio=release.log_likelihood_ratio, default_trials=20_000, canary="(2 e_3, +1), not clipped",
        description="BUG: canary of norm 2 and no clipping (sensitivity 2 with noise calibrated for 1); one full-batch "
                    "step, w_1 released, exact white-box likelihood ratio",
        claim_source="Sec. 4 (accountant calibration) / Lemma 19 (requires ||x|| <= 1)",
        tight_epsilon=lambda: TightEpsilon(*raw.tight_epsilon(_DELTA, e1)),
    ))
    d0, _ = canary_pair()
    nostop = DPBatchPerceptron(_GAMMA, epsilon=1.0, delta=_DELTA, alpha=0.5, n_iter=4, laplace_scale=0.0, n_nominal=24)
    one = (d0[0][:1], d0[1][:1])
    one_c = (np.vstack([one[0], [0.0, 0.0, 1.0]]), np.append(one[1], 1.0))
    register_target(Target(
        "batch-perceptron-no-stop-noise", "batch-perceptron", nostop, one, one_c, 1.0, _DELTA,
        neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER, one_run_design=PERCEPTRON_CANARIES, planted_bug=True,
        score=_released, default_trials=10_000,
        description="BUG: Lemma 19 parameters (T = 4, p = 1/2) but the stopping test's Laplace noise removed; "
                    "threshold 0.3 alpha p n = 1.8: d0 (one point) always stops at i = 1 (FAIL), d1 continues w.p. 1/4",
        claim_source="claims Lemma 19",
        tight_epsilon=lambda: _first_step_fail_tight(nostop, one, one_c, _DELTA),
    ))


def sphere_pair(copies: int = SPHERE_COPIES) -> tuple[tuple, tuple]:
    """d0: ``copies`` copies of (e_1, +1) in R^2; d1: one more. The added point lowers the score by 1 on the arc
    R = {w: <w, e_1> <= 0.95 gamma}, which d0's copies make unlikely (mass 0.034 at four copies, gamma = 1/2), so the
    pair's epsilon s eps + log(1 - p_d0(R)(1 - e^{-s eps})) is near the worst case s eps (module docstring)."""
    copies = check_int(copies, "copies", low=1)
    X = np.tile([[1.0, 0.0]], (copies, 1))
    return (X, np.ones(copies)), (np.vstack([X, [[1.0, 0.0]]]), np.ones(copies + 1))


def _register_sphere_targets() -> None:
    """The exponential mechanism of Theorem 5 on the circle and its planted bug (exact white-box likelihood ratio).

    The bug's pair has one copy: its exponent makes the arc of the added point's lower score too unlikely under more
    copies for the trials to reach it."""
    for name, scale, bug, copies, desc in (
        ("sphere-em-d2", 0.5, False, SPHERE_COPIES, "exponential mechanism of Theorem 5 on S^1, exact angular sampler; "
         f"d0 = {SPHERE_COPIES} copies of (e_1, +1), d1 = one more; exact white-box LLR"),
        ("sphere-em-d2-exponent-x4", 2.0, True, 1, "BUG: density exp(2 eps q) instead of exp(eps q / 2); d0 = one "
         "point (e_1, +1), d1 = the same point twice"),
    ):
        s0, s1 = sphere_pair(copies)
        em = SphereExponentialMechanism(0.5, 2.0, exponent_scale=scale)
        register_target(Target(
            name, "sphere", em, s0, s1, 2.0, 0.0, neighbouring=NR.ADD_OR_REMOVE_ONE, paper=PAPER,
            planted_bug=bug, default_trials=20_000, description=desc, canary="(e_1, +1), one more copy",
            log_likelihood_ratio=(lambda o, em=em, s0=s0, s1=s1: em.log_density(s0, o) - em.log_density(s1, o)),
            claim_source="Theorem 5 (exponential mechanism; McSherry & Talwar 2007)",
            tight_epsilon=lambda em=em, s0=s0, s1=s1: TightEpsilon(*em.tight_epsilon(s0, s1, 0.0)),
            mutants=() if bug else SPHERE_MUTANTS, overspend=None if bug else sphere_overspend,
        ))


def _register() -> None:
    _register_perceptron_targets()
    _register_perceptron_bugs()
    _register_sphere_targets()


_register()
