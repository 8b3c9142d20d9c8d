"""Audit targets of DP-SGD (Abadi et al., CCS 2016; :class:`privbound.learners.dpsgd.DPSGD`), paper id ``dp-sgd``:
the canary designs of :mod:`privbound.audit.canaries` on DP-SGD at claimed epsilon = 2, 4, 8 (delta = 1e-5;
Poisson rate q = 0.1, T = 100 steps, clip norm C = 1, sigma calibrated by dp_accounting's PLD accountant), and
planted bugs of the kinds found in shipped DP-SGD code.

Data: 10 records in the unit disc of R^2 (labels 0/1) with one extra feature that is zero in every record (the
"inert" feature); public normaliser b = q n = 1 (the update is the noisy sum). Neighbouring: add/remove the canary.

Families (each target's description states its threat model):

* ``dpsgd-gradient-canary`` -- white-box, all iterates: a Dirac gradient canary 2 e_j (norm 2C, clipped to C by a
  correct implementation) on the weight j of the inert feature, so that the data's gradients vanish there; the
  adversary observes o_t = b u_t[j] / C at every step, N(0, sigma^2) under d0 and
  (1 - q) N(0, sigma^2) + q N(1, sigma^2) under d1, and the auditor uses their exact likelihood ratio
  (:func:`privbound.audit.canaries.subsampled_gaussian_log_likelihood_ratio`) with the white-box betting estimator.
  Targets ``dpsgd-gradient-eps{2,4,8}``, ``dpsgd-mlp-gradient-eps4`` (the MLP, canary on W1[0, j]), the bugs
  ``dpsgd-gradient-{noise-div2,clip-skipped,rate-ignored,realised-batch}`` and ``dpsgd-gradient-one-record-eps4``
  (the correct control of the realised-batch bug).
* ``dpsgd-input-canary`` -- black-box, last iterate: an out-of-distribution record (10 e_j, label 1) on the inert
  feature; the adversary sees only the final parameters; score = minus the canary's logistic loss. Targets
  ``dpsgd-input-eps{2,4,8}``, ``dpsgd-mlp-input-eps4`` and the bug ``dpsgd-input-clip-skipped`` (the other bugs
  are not flagged by this design at ~10 s of trials; benchmarks/README.md, 'DP-SGD planted bugs').

Planted bugs (claims unchanged):

* ``noise-div2`` -- the noise multiplier divided by 2 in training;
* ``clip-skipped`` -- an off-by-one in the clipping loop leaves the last example of every batch unclipped; the
  canary, appended after the data, is that example whenever it is sampled;
* ``rate-ignored`` -- the sampler draws at q = 0.1 but the accountant is never given the rate and calibrates sigma
  for its default 0.01;
* ``realised-batch`` -- the noisy sum divided by the realised batch size max(|B_t|, 1) instead of the public b:
  the divisor reveals |B_t| (the noise shrinks with it), which a white-box observer reads off 40 further inert
  coordinates. It leaks most on the smallest dataset, so this target (and its correct control) trains on ONE record
  (d0) or that record and the canary (d1): a batch of 2 exists only when the canary is in it.

One-run designs (Steinke, Nasr & Jagielski 2023): m Dirac gradient canaries on m inert coordinates (white-box
targets) or m out-of-distribution records on m inert features (black-box targets), each included with
probability 1/2, in ONE training run. The verdict is the SNJ bound (f-DP refinement not used for the verdict:
DP-SGD's privacy profile has heavier tails than the Gaussian curve calibrated to its (epsilon, delta), so that
curve is not implied by its claim).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import special

from privbound.audit.canaries import (
    GradientCanaries,
    GradientCanary,
    InputCanaries,
    InputCanary,
    ThreatModel,
    last_iterate_log_likelihood_ratio,
    pad_features,
)
from privbound.audit.engine import map_chunks
from privbound.audit.one_run import OneRunResult, one_run_audit
from privbound.audit.targets.registry import OneRunDesign, Target, register_target
from privbound.learners.dpsgd import DPSGD, MLP, LogisticRegression, split_training_data
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import check_int

__all__ = [
    "DPSGDTarget",
    "AllIteratesRelease",
    "realised_batch_log_likelihood_ratio",
    "realised_batch_step_log_likelihood_ratio",
    "base_data",
    "NoiseMultiplierHalved",
    "LastExampleUnclipped",
    "AccountantIgnoresSamplingRate",
    "NormalisedByRealisedBatch",
    "gradient_canaries_one_run",
    "input_canaries_one_run",
    "GRADIENT_CANARIES_DESIGN",
    "INPUT_CANARIES_DESIGN",
    "SAMPLING_RATE",
    "STEPS",
    "DELTA",
]

PAPER = "dp-sgd"
SAMPLING_RATE = 0.1
STEPS = 100
DELTA = 1e-5
CLIP_NORM = 1.0
LEARNING_RATE = 0.01
N_RECORDS = 10
EXPECTED_BATCH = SAMPLING_RATE * N_RECORDS  # = 1, public
GRADIENT_CANARY_NORM = 2.0
INPUT_CANARY_MAGNITUDE = 10.0
N_INERT_OBSERVED = 40  # further inert coordinates the realised-batch design reads
ACCOUNTANT_DEFAULT_RATE = 0.01
_CLAIM = "Abadi et al. 2016, Alg. 1; sigma calibrated by dp_accounting PLD (Koskela et al. 2020) for the claim"


# --------------------------------------------------------------------------- planted bugs


class NoiseMultiplierHalved(DPSGD):
    """BUG: trains with half the calibrated noise multiplier; the claim (and its DpEvent) keep the calibrated one."""

    def run_parameters(self):
        P = super().run_parameters()
        return replace(P, noise_multiplier=P.noise_multiplier / 2, source=P.source + " [BUG: sigma / 2 in training]")


class LastExampleUnclipped(DPSGD):
    """BUG: an off-by-one in the clipping loop (``for i in range(len(batch) - 1)``) leaves the last example of every
    batch unclipped."""

    def _clip_factors(self, norms, mask, clip_norm):
        factors = super()._clip_factors(norms, mask, clip_norm)
        m = mask.shape[1]
        last = m - 1 - np.argmax(mask[:, ::-1], axis=1)  # the last sampled example of each run
        has = mask.any(axis=1)
        factors[np.flatnonzero(has), last[has]] = 1.0
        return factors


class AccountantIgnoresSamplingRate(DPSGD):
    """BUG: the sampler uses ``sampling_rate`` but the accountant never receives it and uses its default 0.01."""

    def accounting_sampling_rate(self) -> float:
        return ACCOUNTANT_DEFAULT_RATE


class NormalisedByRealisedBatch(DPSGD):
    """BUG: the noisy sum divided by the realised batch size max(|B_t|, 1) instead of the public expected size."""

    def _normaliser(self, batch_sizes, expected):
        return np.maximum(batch_sizes, 1).astype(float)


# --------------------------------------------------------------------------- data and releases


def base_data(n: int = N_RECORDS, n_inert: int = 1, seed: int = 20161024) -> tuple[np.ndarray, np.ndarray]:
    """``n`` records in the unit disc of R^2 with labels 1[x_1 + x_2 > 0] (10% flipped), plus ``n_inert`` zero features."""
    n = check_int(n, "n", low=1)
    rng = np.random.default_rng(seed)
    r = np.sqrt(rng.random(n))
    a = rng.uniform(0, 2 * np.pi, n)
    X = np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
    y = ((X.sum(axis=1) > 0) ^ (rng.random(n) < 0.1)).astype(float)
    return pad_features(X, n_inert), y


def _inert_feature(X: np.ndarray) -> int:
    """The first feature column that is zero in every record."""
    zero = np.flatnonzero(~np.any(X != 0, axis=0))
    if zero.size == 0:
        raise ValueError("the data have no inert (all-zero) feature for the canary")
    return int(zero[0])


@dataclass(frozen=True)
class AllIteratesRelease:
    """White-box release of DP-SGD: every step's observation of the canary coordinate (scale * u_t[j]); with
    ``inert`` coordinates also the squared norm of scale * u_t on them. Output (size, T), or (size, 2T) = (canary
    observations, inert squared norms) with ``inert``."""

    learner: DPSGD
    canary: GradientCanary
    inert: tuple[int, ...] = ()

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        X, y, G = split_training_data(data)
        idx = np.asarray(self.inert, dtype=np.int64)
        scale = self.canary.scale

        def record(t, u):
            c = self.canary.observe_updates(u)
            if idx.size == 0:
                return c
            return np.stack([c, np.sum((scale * u[:, idx]) ** 2, axis=1)], axis=1)

        rec = self.learner.run_batch(X, y, rng, size, gradient_canaries=G, record=record)["records"]
        if idx.size == 0:
            return rec
        return np.concatenate([rec[:, :, 0], rec[:, :, 1]], axis=1)

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, rng, 1)[0]

    def dp_event(self):
        return self.learner.dp_event()

    @property
    def guarantee(self):
        return self.learner.guarantee


def realised_batch_step_log_likelihood_ratio(observations: Any, *, n_records: int, sampling_rate: float,
                                             noise_multiplier: float, shift: float, n_inert: int,
                                             expected_batch_size: float, realised: bool) -> np.ndarray:
    """Exact per-step log p_d0 / p_d1 of :class:`AllIteratesRelease` outputs with ``n_inert`` inert coordinates
    (C = 1), shape (runs, T).

    At a step where K of the ``n_records`` records and c in {0, 1} canaries are sampled, the update is divided by
    k = max(K + c, 1) (``realised``) or by b = ``expected_batch_size``; with rho = b / k (or 1) the canary
    observation is N(rho c shift, rho^2 sigma^2) and the inert squared norm is rho^2 sigma^2 chi^2_r (r = ``n_inert``),
    independent across steps (Poisson sampling; the data's gradients vanish on these coordinates). So
    log f(o | K, c) = -(o_c - rho c shift)^2 / (2 rho^2 sigma^2) - s / (2 rho^2 sigma^2) - (r + 1) log rho + const,
    mixed over K ~ Bin(n, q) and (under d1) c ~ Ber(q).
    """
    n = check_int(n_records, "n_records", low=0)
    r = check_int(n_inert, "n_inert", low=0)
    q, s2 = float(sampling_rate), float(noise_multiplier) ** 2
    o = np.asarray(observations, dtype=float)
    T = o.shape[1] // 2 if r else o.shape[1]
    oc = o[:, :T]
    ss = o[:, T:] if r else np.zeros_like(oc)
    K = np.arange(n + 1)
    log_bin = special.gammaln(n + 1) - special.gammaln(K + 1) - special.gammaln(n - K + 1) \
        + K * math.log(q) + (n - K) * math.log1p(-q)

    def log_f(k_total, c):
        rho = float(expected_batch_size) / np.maximum(k_total, 1) if realised else np.ones_like(k_total, dtype=float)
        rho = rho[:, None, None]
        return (-(oc[None] - rho * c * shift) ** 2 / (2 * rho ** 2 * s2) - ss[None] / (2 * rho ** 2 * s2)
                - (r + 1) * np.log(rho))

    lp0 = special.logsumexp(log_bin[:, None, None] + log_f(K, 0), axis=0)
    lp1 = np.logaddexp(math.log1p(-q) + lp0,
                       math.log(q) + special.logsumexp(log_bin[:, None, None] + log_f(K + 1, 1), axis=0))
    return lp0 - lp1


def realised_batch_log_likelihood_ratio(observations: Any, **parameters: Any) -> np.ndarray:
    """Exact log p_d0 / p_d1 of :class:`AllIteratesRelease` outputs: the row sums of
    :func:`realised_batch_step_log_likelihood_ratio` (same parameters)."""
    return realised_batch_step_log_likelihood_ratio(observations, **parameters).sum(axis=1)


def _whitebox_llr(release: AllIteratesRelease, n_records: int, realised: bool, *, per_step: bool = False):
    """The exact log-likelihood ratio of ``release`` (each step's, shape (runs, T), with ``per_step``), from the
    parameters its learner RUNS with (on first use).

    White-box: the auditor knows the code, planted bugs included -- the halved noise, the unclipped canary
    (shift norm / C), the sampler's rate, the realised normaliser -- so the density is exact for what runs.
    The steps are independent and identically distributed given the dataset (Poisson sampling, fresh noise, and
    the data's gradients vanish on the observed coordinates), which the composition estimator needs.
    """
    learner, canary = release.learner, release.canary

    def step_llr(outputs):
        P = learner.run_parameters()
        unclipped = isinstance(learner, LastExampleUnclipped)
        shift = (canary.norm if unclipped else min(canary.norm, P.clip_norm)) / P.clip_norm
        if not release.inert:
            return canary.step_log_likelihood_ratio(sampling_rate=P.sampling_rate, noise_multiplier=P.noise_multiplier,
                                                    clip_norm=P.clip_norm, clipped=not unclipped)(outputs)
        return realised_batch_step_log_likelihood_ratio(
            outputs, n_records=n_records, sampling_rate=P.sampling_rate, noise_multiplier=P.noise_multiplier,
            shift=shift, n_inert=len(release.inert), expected_batch_size=P.expected_batch_size, realised=realised)

    if per_step:
        return step_llr
    return lambda outputs: step_llr(outputs).sum(axis=1)


# --------------------------------------------------------------------------- one-run designs


def _learner_of(target: Target) -> DPSGD:
    learner = getattr(target.mechanism, "learner", target.mechanism)
    if not isinstance(learner, DPSGD):
        raise TypeError(f"the DP-SGD canary designs do not apply to target {target.name!r} (not a DPSGD learner)")
    return learner


def gradient_canaries_one_run(learner: DPSGD, base: tuple, m: int, seed: int = 0, *, norm: float = GRADIENT_CANARY_NORM,
                              delta: float = DELTA, confidence: float = 0.95,
                              epsilon_claimed: float | None = None, fdp: bool = False) -> OneRunResult:
    """One-run audit of ``learner`` with m Dirac gradient canaries norm * e_{j_i} on m inert coordinates.

    The base data ``(X, y)`` get m zero features; canary i sits on the model's first parameter multiplying feature
    d + i; included with probability 1/2 (``SeedSequence([seed, 1])``); ONE run (first chunk seed of ``seed``)
    records scale * u_t[j_i] at every step; score = minus the canary's exact log-likelihood ratio under the run's
    own (q, sigma). ``fdp=True`` adds the Gaussian f-DP refinement (Mahloujifar et al. 2024) -- a test of the Gaussian
    curve calibrated to (epsilon, delta), which DP-SGD's claim does not imply (module docstring): for comparison with
    the literature only (it then also enters ``violation``).
    """
    m = check_int(m, "m", low=2)
    X0, y0 = np.asarray(base[0], float), np.asarray(base[1], float)
    d = X0.shape[1]
    X = pad_features(X0, m)
    model = learner.model
    p = model.n_parameters(d + m)
    coords = np.array([model.feature_coordinates(d + i, d + m)[0] for i in range(m)])
    P = learner.run_parameters()
    b = P.expected_batch_size if P.expected_batch_size is not None else P.sampling_rate * len(y0)
    canaries = GradientCanaries(coords, norm=norm, scale=b / P.clip_norm, sampling_rate=P.sampling_rate,
                                noise_multiplier=max(P.noise_multiplier, 1e-12),
                                shift=min(norm, P.clip_norm) / P.clip_norm)
    included = np.random.default_rng(np.random.SeedSequence([seed, 1])).random(m) < 0.5
    _, _, G = canaries.build((X, y0), included, p)

    def chunk(size, ss):
        return learner.run_batch(X, y0, np.random.default_rng(ss), size, gradient_canaries=G,
                                 record=lambda t, u: canaries.scale * u[:, coords])["records"]

    obs = map_chunks(chunk, 1, seed=seed)[0][0]  # (T, m)
    res = one_run_audit(canaries.scores_from_observations(obs), included, delta=delta, confidence=confidence,
                        epsilon_claimed=epsilon_claimed, fdp=fdp)
    res.details.update(design=f"{m} Dirac gradient canaries {norm:g} e_j on inert coordinates, one run",
                       threat_model=ThreatModel.WHITE_BOX_ALL_ITERATES.value, seed=seed)
    return res


def input_canaries_one_run(learner: DPSGD, base: tuple, m: int, seed: int = 0, *,
                           magnitude: float = INPUT_CANARY_MAGNITUDE, delta: float = DELTA, confidence: float = 0.95,
                           epsilon_claimed: float | None = None, fdp: bool = False) -> OneRunResult:
    """One-run audit of ``learner`` with m out-of-distribution records (magnitude e_{d+i}, label 1) on m inert features.

    Included with probability 1/2 (``SeedSequence([seed, 1])``); ONE run (first chunk seed of ``seed``); only the
    final parameters are used: score = minus each canary's logistic loss under them. ``fdp`` as in
    :func:`gradient_canaries_one_run`.
    """
    m = check_int(m, "m", low=2)
    X0, y0 = np.asarray(base[0], float), np.asarray(base[1], float)
    d = X0.shape[1]
    Xc = np.zeros((m, d + m))
    Xc[np.arange(m), d + np.arange(m)] = magnitude
    canaries = InputCanaries(Xc, np.ones(m))
    included = np.random.default_rng(np.random.SeedSequence([seed, 1])).random(m) < 0.5
    X, y = canaries.build((pad_features(X0, m), y0), included)

    def chunk(size, ss):
        return learner.run_batch(X, y, np.random.default_rng(ss), size)["theta"]

    theta = map_chunks(chunk, 1, seed=seed)[0]
    scores = canaries.scores_from_losses(learner.model.losses(theta, Xc, canaries.y)[0])
    res = one_run_audit(scores, included, delta=delta, confidence=confidence, epsilon_claimed=epsilon_claimed, fdp=fdp)
    res.details.update(design=f"{m} out-of-distribution records {magnitude:g} e_j (label 1) on inert features, one run",
                       threat_model=ThreatModel.BLACK_BOX_LAST_ITERATE.value, seed=seed)
    return res


def _base_of(target: Target) -> tuple:
    """The target's base data (X, y) of d0 (its gradient canaries, if any, are not part of the base)."""
    return np.asarray(target.d0[0], float), np.asarray(target.d0[1], float)


def _run_gradient_design(target: Target, m: int, seed: int, confidence: float) -> OneRunResult:
    return gradient_canaries_one_run(_learner_of(target), _base_of(target), m, seed, delta=target.delta,
                                     confidence=confidence, epsilon_claimed=target.epsilon)


def _run_input_design(target: Target, m: int, seed: int, confidence: float) -> OneRunResult:
    return input_canaries_one_run(_learner_of(target), _base_of(target), m, seed, delta=target.delta,
                                  confidence=confidence, epsilon_claimed=target.epsilon)


GRADIENT_CANARIES_DESIGN = OneRunDesign(
    "dpsgd-gradient-canaries", _run_gradient_design,
    "m Dirac gradient canaries on m inert coordinates in one DP-SGD run; white-box, every update observed")
INPUT_CANARIES_DESIGN = OneRunDesign(
    "dpsgd-input-canaries", _run_input_design,
    "m out-of-distribution records on m inert features in one DP-SGD run; black-box, final model only")


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class DPSGDTarget(Target):
    """A DP-SGD :class:`Target` that records its threat model in every audit's details and in ``privbound list``."""

    threat_model: ThreatModel = ThreatModel.WHITE_BOX_ALL_ITERATES

    def audit_details(self) -> dict[str, Any]:
        return {**super().audit_details(), "threat_model": self.threat_model.value}

    def one_run_audit(self, m: int, seed: int = 0, *, confidence: float = 0.95, n_jobs: int | None = 1) -> OneRunResult:
        res = super().one_run_audit(m, seed, confidence=confidence, n_jobs=n_jobs)
        res.details.setdefault("threat_model", self.threat_model.value)
        return res

    def record(self) -> dict[str, Any]:
        return {**super().record(), "threat_model": self.threat_model.value}


def _learner(cls=DPSGD, *, epsilon: float, model: Any = None, expected_batch_size: float = EXPECTED_BATCH,
             init: Any = None) -> DPSGD:
    return cls(LogisticRegression() if model is None else model, epsilon=epsilon, delta=DELTA,
               sampling_rate=SAMPLING_RATE, steps=STEPS, clip_norm=CLIP_NORM, learning_rate=LEARNING_RATE,
               expected_batch_size=expected_batch_size, init=init, accountant="pld")


_SETUP = f"q = {SAMPLING_RATE:g}, T = {STEPS}, C = {CLIP_NORM:g}, b = {EXPECTED_BATCH:g}"
_WB = "white-box, all iterates (every noisy update observed)"
_BB = "black-box, last iterate (final parameters only)"


def _gradient_pair(learner: DPSGD, X: np.ndarray, y: np.ndarray, inert: tuple[int, ...] = ()):
    j = _inert_feature(X)
    coord = int(learner.model.feature_coordinates(j, X.shape[1])[0])
    canary = GradientCanary(coord, norm=GRADIENT_CANARY_NORM, scale=EXPECTED_BATCH / CLIP_NORM)
    p = learner.model.n_parameters(X.shape[1])
    release = AllIteratesRelease(learner, canary, inert)
    return release, canary.exclude((X, y), p), canary.insert((X, y), p), canary


def _register_gradient_targets() -> None:
    X, y = base_data()
    fam = "dpsgd-gradient-canary"
    gc_desc = (f"Dirac gradient canary {GRADIENT_CANARY_NORM:g} e_j on the inert feature's weight (clipped to C); "
               "exact likelihood ratio of the subsampled Gaussian observations")
    specs = [
        ("dpsgd-gradient-eps2", DPSGD, 2.0, None, False, "logistic regression, " + gc_desc),
        ("dpsgd-gradient-eps4", DPSGD, 4.0, None, False, "logistic regression, " + gc_desc),
        ("dpsgd-gradient-eps8", DPSGD, 8.0, None, False, "logistic regression, " + gc_desc),
        ("dpsgd-mlp-gradient-eps4", DPSGD, 4.0, MLP(hidden=4), False,
         "one-hidden-layer MLP (4 tanh units, random initialisation per run), canary on W1[0, j]; " + gc_desc),
        ("dpsgd-gradient-noise-div2", NoiseMultiplierHalved, 4.0, None, True,
         "BUG: trains with sigma / 2 (claims the calibrated sigma); logistic regression, " + gc_desc),
        ("dpsgd-gradient-clip-skipped", LastExampleUnclipped, 4.0, None, True,
         "BUG: off-by-one in the clipping loop leaves the last example of each batch -- the canary -- unclipped "
         "(shift 2 instead of 1); logistic regression"),
        ("dpsgd-gradient-rate-ignored", AccountantIgnoresSamplingRate, 4.0, None, True,
         f"BUG: samples at q = {SAMPLING_RATE:g} but sigma is calibrated for the accountant's default "
         f"q = {ACCOUNTANT_DEFAULT_RATE:g}; logistic regression"),
    ]
    for name, cls, eps, model, bug, desc in specs:
        learner = _learner(cls, epsilon=eps, model=model)
        release, d0, d1, canary = _gradient_pair(learner, X, y)
        register_target(DPSGDTarget(
            name, fam, release, d0, d1, eps, DELTA, neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE,
            canary=canary.describe(), planted_bug=bug, paper=PAPER,
            description=f"{_WB}; {desc}; {_SETUP}", log_likelihood_ratio=_whitebox_llr(release, len(y), False),
            step_log_likelihood_ratio=_whitebox_llr(release, len(y), False, per_step=True),
            default_trials=5_000 if model is not None else 10_000, claim_source=_CLAIM,
            one_run_design=GRADIENT_CANARIES_DESIGN, threat_model=ThreatModel.WHITE_BOX_ALL_ITERATES,
        ))
    # The realised-batch bug and its correct control: one record, canary and 40 further inert coordinates observed.
    X1, y1 = base_data(n=1, n_inert=1 + N_INERT_OBSERVED)
    for name, cls, bug, desc in (
        ("dpsgd-gradient-one-record-eps4", DPSGD, False,
         "correct control of the realised-batch target: the same pair and observations, public normaliser b = 1"),
        ("dpsgd-gradient-realised-batch", NormalisedByRealisedBatch, True,
         "BUG: the noisy sum divided by the realised batch size max(|B_t|, 1); with one record a batch of 2 -- "
         "noise halved on every coordinate -- exists only when the canary is in it"),
    ):
        learner = _learner(cls, epsilon=4.0, expected_batch_size=1.0)
        j = _inert_feature(X1)
        inert = tuple(int(learner.model.feature_coordinates(k, X1.shape[1])[0])
                      for k in range(j + 1, j + 1 + N_INERT_OBSERVED))
        release, d0, d1, canary = _gradient_pair(learner, X1, y1, inert)
        register_target(DPSGDTarget(
            name, fam, release, d0, d1, 4.0, DELTA, neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE,
            canary=canary.describe(), planted_bug=bug, paper=PAPER,
            description=(f"{_WB}; logistic regression on d0 = one record, d1 = the record and a Dirac gradient canary; "
                         f"the adversary reads the canary coordinate and the squared norm of {N_INERT_OBSERVED} "
                         f"further inert coordinates of every update (exact likelihood ratio); {desc}; "
                         f"q = {SAMPLING_RATE:g}, T = {STEPS}, C = 1"),
            log_likelihood_ratio=_whitebox_llr(release, 1, bug),
            step_log_likelihood_ratio=_whitebox_llr(release, 1, bug, per_step=True),
            default_trials=2_000 if bug else 5_000,
            claim_source=_CLAIM,
            one_run_design=GRADIENT_CANARIES_DESIGN, threat_model=ThreatModel.WHITE_BOX_ALL_ITERATES,
        ))


def _canary_loss_score(learner: DPSGD, canary: InputCanary):
    """Minus the canary's loss under each final parameter vector (higher = "trained on it")."""
    x, yc = canary.x[None, :], np.array([canary.y])

    def score(outputs):
        return -learner.model.losses(np.asarray(outputs, float), x, yc)[:, 0]

    return score


def _register_input_targets() -> None:
    X, y = base_data()
    j = _inert_feature(X)
    x_c = np.zeros(X.shape[1])
    x_c[j] = INPUT_CANARY_MAGNITUDE
    canary = InputCanary(x_c, 1.0)
    d0, d1 = canary.exclude((X, y)), canary.insert((X, y))
    fam = "dpsgd-input-canary"
    ic_desc = (f"out-of-distribution canary record ({INPUT_CANARY_MAGNITUDE:g} e_j on the inert feature, label 1); "
               "score = minus its logistic loss under the final model")
    specs = [
        ("dpsgd-input-eps2", DPSGD, 2.0, None, False, "logistic regression, " + ic_desc),
        ("dpsgd-input-eps4", DPSGD, 4.0, None, False, "logistic regression, " + ic_desc),
        ("dpsgd-input-eps8", DPSGD, 8.0, None, False, "logistic regression, " + ic_desc),
        ("dpsgd-mlp-input-eps4", DPSGD, 4.0, MLP(hidden=4), False,
         "one-hidden-layer MLP (4 tanh units, random initialisation per run), " + ic_desc),
        ("dpsgd-input-clip-skipped", LastExampleUnclipped, 4.0, None, True,
         "BUG: off-by-one in the clipping loop leaves the last example of each batch -- the canary -- unclipped; "
         "logistic regression, " + ic_desc),
    ]
    for name, cls, eps, model, bug, desc in specs:
        learner = _learner(cls, epsilon=eps, model=model)
        register_target(DPSGDTarget(
            name, fam, learner, d0, d1, eps, DELTA, neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE,
            canary=canary.describe(), planted_bug=bug, paper=PAPER, description=f"{_BB}; {desc}; {_SETUP}",
            score=_canary_loss_score(learner, canary), default_trials=_input_trials(model, bug),
            claim_source=_CLAIM, one_run_design=INPUT_CANARIES_DESIGN, threat_model=ThreatModel.BLACK_BOX_LAST_ITERATE,
        ))


def _input_trials(model, bug: bool) -> int:
    """Trials of a black-box target: the last iterate shows the clipping bug only faintly, so the bug runs
    at 5e4 trials (benchmarks/README.md, 'DP-SGD planted bugs')."""
    if bug:
        return 50_000
    return 5_000 if model is not None else 10_000


WORST_INIT_STEPS = 10
WORST_INIT_LR = 0.1
WORST_INIT_WEIGHT = -20.0


def _register_worst_init_target() -> None:
    """Black-box, last iterate with a worst-case initial model (Annamalai & De Cristofaro 2024): the design of
    :func:`privbound.audit.canaries.last_iterate_log_likelihood_ratio` on logistic regression without intercept,
    full batches, T = 10, claim (8, 1e-5) by dp_accounting's PLD."""
    X, y = base_data()
    j = _inert_feature(X)
    x_c = np.zeros(X.shape[1])
    x_c[j] = INPUT_CANARY_MAGNITUDE
    canary = InputCanary(x_c, 1.0)
    init = np.zeros(X.shape[1])
    init[j] = WORST_INIT_WEIGHT
    learner = DPSGD(LogisticRegression(fit_intercept=False), epsilon=8.0, delta=DELTA, sampling_rate=1.0,
                    steps=WORST_INIT_STEPS, clip_norm=CLIP_NORM, learning_rate=WORST_INIT_LR, expected_batch_size=1.0,
                    init=init, accountant="pld")
    score = _canary_loss_score(learner, canary)

    def llr(outputs):
        P = learner.run_parameters()
        return last_iterate_log_likelihood_ratio(
            score(outputs), noise_multiplier=P.noise_multiplier, steps=P.steps, learning_rate=P.learning_rate,
            normaliser=P.expected_batch_size, magnitude=INPUT_CANARY_MAGNITUDE, initial_weight=WORST_INIT_WEIGHT,
            shift=min(INPUT_CANARY_MAGNITUDE, P.clip_norm) / P.clip_norm)

    register_target(DPSGDTarget(
        "dpsgd-input-worst-init-eps8", "dpsgd-input-canary", learner, canary.exclude((X, y)), canary.insert((X, y)),
        8.0, DELTA, neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE, canary=canary.describe(), paper=PAPER,
        description=(f"{_BB}; worst-case initial model (the canary feature's weight {WORST_INIT_WEIGHT:g}: its logit "
                     f"stays far below 0, its clipped gradient the same at every step), full batches (q = 1), T = "
                     f"{WORST_INIT_STEPS}, lr = {WORST_INIT_LR:g}; logistic regression without intercept, "
                     f"{INPUT_CANARY_MAGNITUDE:g} e_j canary; exact Gaussian law of its loss, betting estimator"),
        score=score, log_likelihood_ratio=llr, default_trials=10_000, claim_source=_CLAIM,
        threat_model=ThreatModel.BLACK_BOX_LAST_ITERATE,
    ))


_register_gradient_targets()
_register_input_targets()
_register_worst_init_target()
