"""Audit targets of Opacus' DP-SGD (``opacus.PrivacyEngine.make_private``), paper id ``opacus``.

Every target trains with Opacus itself -- its Poisson ``DPDataLoader`` (or the user's shuffled loader), its
per-sample gradients and clipping, its noise, its optimizer -- many trainings at once by
:mod:`privbound.audit.opacus_runs` (the same law as independent trainings). The claim is what Opacus' own
accountant (PRV, the ``PrivacyEngine()`` default) reports for the run: ``opacus_epsilon(sigma, q, T, delta)`` with
q = 1 / len(loader) and T the optimizer steps, at delta = 1e-5, add/remove one record. sigma comes from Opacus'
``get_noise_multiplier`` for the target epsilon. The tight epsilon of a correct run is dp_accounting's PLD of the
same Poisson-subsampled Gaussian.

Families (each target's description states its threat model):

* ``opacus-gradient-canary`` -- white-box, all iterates (Nasr et al., "Tight auditing of differentially private
  machine learning", USENIX Security 2023, arXiv:2302.07956): a Dirac gradient canary, a record whose loss is
  ``2 w_j`` (gradient 2 e_j, clipped by Opacus to C e_j) on the weight of a feature that is zero in every record;
  the adversary reads the noisy update of that weight at every step from consecutive model states,
  o_t = -(theta_{t+1} - theta_t)_j b / (lr C): N(0, sigma^2) under d0, (1 - q) N(0, sigma^2) + q N(s, sigma^2) under
  d1 (s = 2 / (2 + 1e-6), Opacus' clip factor). The steps are i.i.d., so the composition estimator
  (:mod:`privbound.audit.estimators.composition`) bounds one step's privacy-loss law and composes it. Logistic
  regression on 10 records in the unit disc (q = 0.1, T = 100, C = 1, lr = 0.01, b = 1) at eps = 2, 4, 8, and a
  one-hidden-layer MLP (4 tanh units, random initialisation per run; canary on W1[0, j]) at eps = 4.
  Planted bugs a user makes with Opacus (claim 4 unless stated; 10 Poisson batches, where their audits are cheap):

  - ``opacus-gradient-other-eps-noise`` -- trains with the noise multiplier Opacus gives for eps = 8 while
    claiming 4;
  - ``opacus-gradient-per-layer-clip-raised`` -- ``clipping="per_layer"`` with norms [1, 1]; the first tensor's
    norm raised to 2 after ``make_private`` (``optimizer.max_grad_norms``): clipping follows, the noise (fixed at
    construction from the norms' total) does not;
  - ``opacus-gradient-two-steps-per-batch`` -- two ``optimizer.step()`` per Poisson batch, 10 batches: Opacus
    accounts 20 independent steps (sigma calibrated by Opacus for eps = 4 over them), but each pair shares its batch:
    10 steps of the subsampled Gaussian with sigma / sqrt(2) (eps 6.57 by dp_accounting's PLD);
  - ``opacus-gradient-poisson-sampling-false`` -- ``poisson_sampling=False`` with a shuffled loader of fixed batch
    size, claiming Opacus' Poisson-accounted eps (below).

* ``opacus-shuffle`` -- shuffling versus Poisson (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, "How
  private are DP-SGD implementations?", ICML 2024, arXiv:2403.17673). Their worst-case pair for shuffled batches:
  19 records whose gradient is -2 e_j (clipped to -C e_j) and the canary +2 e_j; a shuffled loader of batch size
  2 (10 batches per epoch; d0's last batch holds one record), 5 epochs, claimed as Opacus accounts it: Poisson at
  q = 1 / len(loader) = 0.1 for 50 steps, with sigma from Opacus' ``get_noise_multiplier`` for eps = 5 (about
  1.02). The white-box observation per epoch is the 10 updates of w_j; with fixed batch sizes the other records'
  contributions are known, so each epoch is a Gaussian of mean -2 s 1 + s e_10 (d0) or -2 s 1 + 2 s e_k, k
  uniform (d1): the composition estimator over the 5 i.i.d. epochs. The Poisson run at the same parameters and data (``opacus-shuffle-poisson-control``) is audited with
  its own exact per-step law (mixture over the binomial count of other records) and holds.

* ``opacus-input-canary`` -- black-box, last iterate: worst-case initial model (Annamalai & De Cristofaro, "Nearly
  tight black-box auditing of differentially private machine learning", NeurIPS 2024, arXiv:2405.14106: DP-SGD's
  analysis holds for any initial parameters, so the auditor picks them) and a crafted input canary (Nasr et al.
  2023). The canary is x = 10 e_j (label 1) on the zero feature; the initial weight w_j = -20 keeps its logit
  below -100, so its clipped gradient is the same vector at every step; full batches (q = 1, T = 10) make the last
  iterate a sufficient statistic of the T updates along e_j. The adversary sees only the final model's loss on
  the canary: minus the logit, exactly N(z0, v) under d0 and N(z0 + 10 T lr s / b, v) under d1, whose likelihood
  ratio the betting estimator (:mod:`privbound.audit.estimators.whitebox`) uses. Logistic regression without
  intercept, claim eps = 8; its planted bug ``opacus-input-worst-init-other-eps-noise`` trains with the noise
  multiplier Opacus gives for eps = 16.

Nightly: ``opacus-gradient-eps4``, the planted bugs and the last-iterate target every night;
``opacus-gradient-eps2``, ``-eps8``, ``opacus-mlp-gradient-eps4`` and the Poisson control only in the full profile
(``Target.nightly_profile``): the same designs again at 9-21 s of CPU each
(benchmarks/README.md, 'DP code people ship').

The module registers nothing when torch or opacus is missing (``pip install "privbound[torch]"``);
:data:`UNAVAILABLE` then says why.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import special

from privbound.audit.opacus_runs import OPACUS_CLIP_EPS, UNAVAILABLE, OpacusRun, opacus_epsilon, train_batch
from privbound.audit.canaries import (
    ThreatModel,
    last_iterate_log_likelihood_ratio,
    subsampled_gaussian_step_log_likelihood_ratio,
)
from privbound.audit.targets.registry import Target, TightEpsilon, register_target
from privbound.learners.neighbouring import NeighbouringRelation

__all__ = ["UNAVAILABLE", "OpacusTarget", "OpacusSetup", "OpacusAllIterates", "OpacusLastIterate", "LazyAllIterates",
           "LazyLastIterate", "opacus_targets", "shuffled_epoch_log_likelihood_ratio", "paired_steps_log_likelihood_ratio",
           "poisson_with_others_step_log_likelihood_ratio", "poisson_with_others_epsilon_lower_estimate",
           "shuffled_epochs_epsilon_upper_bound", "last_iterate_log_likelihood_ratio", "gradient_data",
           "shuffle_pair", "DELTA"]

PAPER = "opacus"
DELTA = 1e-5
SAMPLING_RATE = 0.1
STEPS = 100
LEARNING_RATE = 0.01
# Poisson batches of the planted gradient bugs: an audit costs a tenth of one at STEPS, and sharing a batch between
# two steps costs much more privacy over few pairs (10 pairs: 6.57 against the claim 4; 100 pairs would leak 4.74)
BUG_STEPS = 10
CANARY_GRADIENT = 2.0
_CLAIM = "Opacus' PRV accountant (PrivacyEngine default) for the run's (sigma, q = 1 / len(loader), T)"


def _clipped(norm: float, clip: float) -> float:
    """Opacus' clipped norm of a gradient of L2 norm ``norm``: norm * min(1, C / (norm + 1e-6))."""
    return norm * min(1.0, clip / (norm + OPACUS_CLIP_EPS))


# --------------------------------------------------------------------------- releases


@dataclass(frozen=True)
class OpacusAllIterates:
    """White-box release of an Opacus training: at every optimizer step the noisy update of one parameter, in
    units of the clipping norm, o_t = -(theta_{t+1} - theta_t) b / (lr C), read from consecutive model states.
    Data: ``(X, y, kind, a)`` (:func:`privbound.audit.opacus_runs.train_batch`). Output (size, T)."""

    run: OpacusRun
    tensor: str
    column: int
    models_per_run: int = 2500

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        X, y, kind, a = data
        _, obs = train_batch(self.run, X, y, rng, size, kind=kind, a=a, observe=(self.tensor, self.column),
                             models_per_run=self.models_per_run)
        return -obs * self.run.normaliser / (self.run.learning_rate * self.run.clip_norm)

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, rng, 1)[0]


@dataclass(frozen=True)
class OpacusLastIterate:
    """Black-box release of an Opacus training: minus the loss of the input canary ``x`` (label ``label``) under
    the final logistic-regression model (higher = "trained on it"). Output (size,)."""

    run: OpacusRun
    x: tuple
    label: float = 1.0

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        X, y, kind, a = data
        params, _ = train_batch(self.run, X, y, rng, size, kind=kind, a=a)
        z = params["w"] @ np.asarray(self.x, float) + (params["b"][:, 0] if "b" in params else 0.0)
        return -np.logaddexp(0.0, (1.0 - 2.0 * self.label) * z)

    def __call__(self, data: Any, rng: np.random.Generator) -> float:
        return float(self.sample(data, rng, 1)[0])


# --------------------------------------------------------------------------- exact laws of the observations


def paired_steps_log_likelihood_ratio(observations: Any, *, sampling_rate: float, noise_multiplier: float,
                                      shift: float) -> np.ndarray:
    """Per-batch log p_d0 / p_d1 of steps taken in pairs on one Poisson batch (two ``optimizer.step()`` per batch):
    columns (2i, 2i + 1) share the canary's inclusion c ~ Ber(q); given c they are independent N(c shift, sigma^2).
    So log p0/p1 = -log(1 - q + q exp(sum_k (shift o_k - shift^2 / 2) / sigma^2)). Shape (runs, T / 2)."""
    o = np.asarray(observations, float)
    if o.ndim != 2 or o.shape[1] % 2:
        raise ValueError(f"observations must be (runs, an even number of steps), got shape {o.shape}")
    q, s2 = float(sampling_rate), float(noise_multiplier) ** 2
    x = ((shift * o - 0.5 * shift ** 2) / s2).reshape(o.shape[0], -1, 2).sum(axis=2)
    return -(x if q == 1.0 else np.logaddexp(math.log1p(-q), math.log(q) + x))


def shuffled_epoch_log_likelihood_ratio(observations: Any, *, batches: int, batch_size: int, noise_multiplier: float,
                                        shift: float) -> np.ndarray:
    """Per-epoch log p_d0 / p_d1 of Chua et al.'s pair under shuffled batches (module docstring), shape (runs, epochs).

    Every record but the canary contributes -shift to the observed coordinate, the canary +shift; d1 has
    ``batches * batch_size`` records (all batches full), d0 one fewer (its last batch short). With r = o + b shift:
    d0: r ~ N(shift e_K, sigma^2 I); d1: r ~ (1 / K) sum_k N(2 shift e_k, sigma^2 I).
    """
    K, b = int(batches), int(batch_size)
    o = np.asarray(observations, float)
    if o.ndim != 2 or o.shape[1] % K:
        raise ValueError(f"observations must be (runs, epochs * {K}), got shape {o.shape}")
    r = o.reshape(o.shape[0], -1, K) + b * shift
    s2 = float(noise_multiplier) ** 2
    log_p0 = (shift * r[:, :, -1] - 0.5 * shift ** 2) / s2          # minus the common -|r|^2 / (2 s2)
    log_p1 = special.logsumexp((2 * shift * r - 2 * shift ** 2) / s2, axis=2) - math.log(K)
    return log_p0 - log_p1


def poisson_with_others_step_log_likelihood_ratio(observations: Any, *, n_others: int, sampling_rate: float,
                                                  noise_multiplier: float, shift: float) -> np.ndarray:
    """Per-step log p_d0 / p_d1 under Poisson sampling of Chua et al.'s pair: o = -shift K + shift c + N(0, sigma^2)
    with K ~ Bin(n_others, q) other records and (d1) the canary c ~ Ber(q). Shape (runs, T)."""
    o = np.asarray(observations, float)
    n, q, s2 = int(n_others), float(sampling_rate), float(noise_multiplier) ** 2
    k = np.arange(n + 1)
    log_bin = (special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
               + k * math.log(q) + (n - k) * math.log1p(-q))

    def log_mix(mean_offset):
        m = -shift * k + mean_offset
        return special.logsumexp(log_bin[:, None, None] - (o[None] - m[:, None, None]) ** 2 / (2 * s2), axis=0)

    lp0 = log_mix(0.0)
    lp1 = np.logaddexp(math.log1p(-q) + lp0, math.log(q) + log_mix(shift))
    return lp0 - lp1


def poisson_with_others_epsilon_lower_estimate(*, n_others: int, sampling_rate: float, noise_multiplier: float,
                                               shift: float, steps: int, delta: float,
                                               bin_width: float = 0.002) -> float:
    """The epsilon at ``delta`` of ``steps`` Poisson steps of Chua et al.'s pair (the law of
    :func:`poisson_with_others_step_log_likelihood_ratio`), from below: the observation is rounded to bins of
    ``bin_width`` on [-shift n - 12 sigma, shift + 12 sigma] plus the two tails (a post-processing, so no larger than
    the exact value), and each direction's privacy-loss distribution of the binned laws is built and composed by
    dp_accounting with optimistic rounding; the larger direction. With ``n_others = 0`` it is the subsampled
    Gaussian's epsilon (dp_accounting's PLD of the same steps) up to the discretisation."""
    from dp_accounting.pld import privacy_loss_distribution as pld
    from scipy import stats

    n, q, sigma, shift = int(n_others), float(sampling_rate), float(noise_multiplier), float(shift)
    edges = np.concatenate([[-np.inf], np.arange(-shift * n - 12 * sigma, shift + 12 * sigma + bin_width, bin_width),
                            [np.inf]])
    k = np.arange(n + 1)
    weights = stats.binom.pmf(k, n, q)

    def binned(offset: float) -> np.ndarray:
        cdf = sum(w * stats.norm.cdf((edges + shift * j - offset) / sigma) for j, w in zip(k, weights))
        return np.diff(cdf)

    p0 = binned(0.0)
    p1 = (1 - q) * p0 + q * binned(shift)
    log0 = {i: math.log(v) for i, v in enumerate(p0) if v > 0}
    log1 = {i: math.log(v) for i, v in enumerate(p1) if v > 0}
    return max(pld.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=False)
               .self_compose(int(steps)).get_epsilon_for_delta(float(delta))
               for lower, upper in ((log0, log1), (log1, log0)))


def shuffled_epochs_epsilon_upper_bound(*, batches: int, epochs: int, noise_multiplier: float, shift: float,
                                        delta: float) -> float:
    """An upper bound on the epsilon at ``delta`` of ``epochs`` shuffled epochs of Chua et al.'s pair (the law of
    :func:`shuffled_epoch_log_likelihood_ratio`, both directions).

    Given the canary's batch k in an epoch, d0 and d1 are Gaussians N(shift e_K, sigma^2 I) and N(2 shift e_k, sigma^2 I)
    whose means are shift sqrt(5) apart (k != K) or shift (k = K). The hockey-stick divergence is jointly convex, so
    delta(eps) of the pair of mixtures over the epochs' batches is at most the average over them of the Gaussian
    mechanism's delta(eps) (Balle & Wang, ICML 2018, Thm 8) with mu^2 = (5 (epochs - m) + m) shift^2 / sigma^2, m ~
    Bin(epochs, 1 / K) the epochs with k = K. The epsilon where that average equals ``delta``, by bisection. Not
    tight: each epoch's mixture over the canary's batch is more private than its worst component.
    """
    from scipy import optimize, stats

    from privbound.learners.mechanisms import gaussian_delta

    K, E = int(batches), int(epochs)
    m = np.arange(E + 1)
    weights = stats.binom.pmf(m, E, 1.0 / K)
    mus = np.sqrt(5.0 * (E - m) + m) * float(shift) / float(noise_multiplier)

    def excess(eps: float) -> float:
        return float(sum(w * gaussian_delta(1.0, eps, sensitivity=mu) for w, mu in zip(weights, mus))) - float(delta)

    if excess(0.0) <= 0:
        return 0.0
    high = 1.0
    while excess(high) > 0:
        high *= 2
    return float(optimize.brentq(excess, 0.0, high, xtol=1e-10))


# --------------------------------------------------------------------------- data


def gradient_data(n_inert: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The records of the gradient and input targets: :func:`privbound.audit.targets.dpsgd.base_data` (10 records in
    the unit disc of R^2, labels 1[x_1 + x_2 > 0] with 10% flipped) with ``n_inert`` zero features."""
    from privbound.audit.targets.dpsgd import base_data

    return base_data(n_inert=n_inert)


def _examples(X: np.ndarray, y: np.ndarray) -> tuple:
    return (X, y, np.zeros(len(y), np.int64), np.zeros(len(y)))


def _with_gradient_record(data: tuple, x: np.ndarray, a: float) -> tuple:
    X, y, kind, av = data
    return (np.vstack([X, x[None, :]]), np.append(y, 0.0), np.append(kind, 1), np.append(av, a))


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class OpacusTarget(Target):
    """An Opacus :class:`Target`: records its threat model and the Opacus version in every audit's details."""

    threat_model: ThreatModel = ThreatModel.WHITE_BOX_ALL_ITERATES

    def audit_details(self) -> dict[str, Any]:
        from privbound.audit.opacus_runs import opacus_version

        setup = getattr(self.mechanism, "setup", None)
        extra = {} if setup is None else {"noise_multiplier": setup.sigma(),
                                          "opacus_reported_epsilon": setup.reported_epsilon()}
        return {**super().audit_details(), "threat_model": self.threat_model.value, "opacus": opacus_version(),
                **extra}

    def record(self) -> dict[str, Any]:
        return {**super().record(), "threat_model": self.threat_model.value}


def _pld(sampling_rate: float, sigma: float, steps: int, what: str) -> TightEpsilon:
    from privbound.learners.dpsgd import dpsgd_epsilon

    return TightEpsilon(dpsgd_epsilon(sampling_rate, sigma, steps, DELTA),
                        f"dp_accounting PLD of {what}: {steps} Poisson-subsampled Gaussian steps (q = {sampling_rate:g}, "
                        f"sigma = {sigma:.4f}; add/remove)")


@functools.lru_cache(maxsize=None)
def _calibrated_sigma(epsilon: float, sampling_rate: float, steps: int) -> float:
    from privbound.audit.opacus_runs import opacus_noise_multiplier

    return opacus_noise_multiplier(epsilon, DELTA, sampling_rate, steps)


@dataclass(frozen=True)
class OpacusSetup:
    """How a target's user sets Opacus up: sigma from ``get_noise_multiplier(epsilon, delta, q, T)`` (computed on
    first use), then ``run(sigma)`` is what trains. ``reported_epsilon()`` is what Opacus' accountant reports for
    the training that runs (q = 1 / len(loader), every optimizer step)."""

    epsilon: float
    sampling_rate: float
    steps: int
    kwargs: tuple = ()
    n_records: int = 10

    def sigma(self) -> float:
        return _calibrated_sigma(self.epsilon, self.sampling_rate, self.steps)

    def run(self) -> OpacusRun:
        kw = dict(self.kwargs)
        factor = kw.pop("sigma_from_epsilon", None)
        sigma = self.sigma() if factor is None else _calibrated_sigma(factor, self.sampling_rate, self.steps)
        return OpacusRun(noise_multiplier=sigma, **kw)

    def reported_epsilon(self) -> float:
        run = self.run()
        q, T = run.accountant_rate_and_steps(self.n_records)
        return opacus_epsilon(run.noise_multiplier, q, T, DELTA)


@dataclass(frozen=True)
class LazyAllIterates:
    """:class:`OpacusAllIterates` of ``setup.run()`` (sigma calibrated on first use)."""

    setup: OpacusSetup
    tensor: str
    column: int
    models_per_run: int = 2500

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        return OpacusAllIterates(self.setup.run(), self.tensor, self.column, self.models_per_run).sample(data, rng, size)

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, rng, 1)[0]


@dataclass(frozen=True)
class LazyLastIterate:
    """:class:`OpacusLastIterate` of ``setup.run()`` (sigma calibrated on first use)."""

    setup: OpacusSetup
    x: tuple
    label: float = 1.0

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        return OpacusLastIterate(self.setup.run(), self.x, self.label).sample(data, rng, size)

    def __call__(self, data: Any, rng: np.random.Generator) -> float:
        return float(self.sample(data, rng, 1)[0])


def _poisson_step_llr(setup: OpacusSetup, shift_norm: float = CANARY_GRADIENT):
    def llr(outputs):
        run = setup.run()
        clip = run.clip_after_build if run.clip_after_build is not None else run.clip_norm
        shift = _clipped(shift_norm, clip) / run.clip_norm
        sigma = run.noise_std() / run.clip_norm
        if run.steps_per_batch == 2:
            return paired_steps_log_likelihood_ratio(outputs, sampling_rate=run.sampling_rate, noise_multiplier=sigma,
                                                     shift=shift)
        return subsampled_gaussian_step_log_likelihood_ratio(outputs, sampling_rate=run.sampling_rate,
                                                             noise_multiplier=sigma, shift=shift)

    return llr


def _tight_poisson(setup: OpacusSetup, what: str):
    def tight():
        run = setup.run()
        return _pld(run.sampling_rate, run.noise_multiplier, run.steps, what)

    return tight


_LOGREG = "logistic regression on 10 records in the unit disc and a zero feature"
_WB = "white-box, all iterates (the noisy update of the canary's weight read from consecutive model states)"
_BB = "black-box, last iterate (the final model's loss on the canary)"


def _gradient_pair(mlp: bool = False) -> tuple[tuple, tuple, int]:
    X, y = gradient_data()
    base = _examples(X, y)
    e_j = np.zeros(X.shape[1])
    e_j[2] = 1.0
    return base, _with_gradient_record(base, e_j, CANARY_GRADIENT), 2  # w_2, or W1[0, 2] (row-major, d = 3)


def _register_gradient_targets() -> list[OpacusTarget]:
    d0, d1, column = _gradient_pair()
    out = []
    # eps 2 and 8 and the MLP only in the full nightly: the same design as eps 4, at about 17-21 s of CPU each; the
    # planted bugs at T = BUG_STEPS, where an audit costs a tenth of one at T = 100 and the bug shows as plainly
    specs = [
        ("opacus-gradient-eps2", 2.0, (), "logistic", False, _LOGREG, 10_000, STEPS, "full"),
        ("opacus-gradient-eps4", 4.0, (), "logistic", False, _LOGREG, 10_000, STEPS, "smoke"),
        ("opacus-gradient-eps8", 8.0, (), "logistic", False, _LOGREG, 10_000, STEPS, "full"),
        ("opacus-mlp-gradient-eps4", 4.0, (("model", "mlp"),), "mlp", False,
         "one-hidden-layer MLP (4 tanh units, random initialisation per run), canary on W1[0, j]", 5_000, STEPS,
         "full"),
        ("opacus-gradient-other-eps-noise", 4.0, (("sigma_from_epsilon", 8.0),), "logistic", True,
         "BUG: trains with the noise multiplier Opacus gives for eps = 8, claims 4; " + _LOGREG, 2_000, BUG_STEPS,
         "smoke"),
        ("opacus-gradient-per-layer-clip-raised", 4.0, (("per_layer", True), ("clip_after_build", 2.0)), "logistic",
         True, "BUG: clipping='per_layer' with norms [1, 1], the weight's norm raised to 2 after make_private "
         "(optimizer.max_grad_norms): the noise keeps sigma * ||[1, 1]||; " + _LOGREG, 2_000, BUG_STEPS, "smoke"),
    ]
    for name, eps, kw, model, bug, desc, trials, steps, nightly in specs:
        setup = OpacusSetup(eps, SAMPLING_RATE, steps, (("sampling_rate", SAMPLING_RATE), ("steps", steps),
                                                        ("learning_rate", LEARNING_RATE)) + kw)
        mech = LazyAllIterates(setup, "w" if model == "logistic" else "W1", column,
                               250 if dict(kw).get("per_layer") else 2500)
        setup_desc = (f"q = {SAMPLING_RATE:g} (Poisson), T = {steps}, C = 1, lr = {LEARNING_RATE:g}, b = 1; sigma by "
                      f"Opacus for eps = {dict(kw).get('sigma_from_epsilon', eps):g}")
        out.append(OpacusTarget(
            name, "opacus-gradient-canary", mech, d0, d1, eps, DELTA,
            neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE,
            canary=f"Dirac gradient canary {CANARY_GRADIENT:g} e_j on the zero feature's weight (add/remove)",
            planted_bug=bug, paper=PAPER, description=f"{_WB}; {desc}; {setup_desc}",
            step_log_likelihood_ratio=_poisson_step_llr(setup), default_trials=trials, claim_source=_CLAIM,
            tight_epsilon=None if bug else _tight_poisson(setup, "what runs"),
            no_tight_epsilon="a planted bug: judged against its claim" if bug else "",
            threat_model=ThreatModel.WHITE_BOX_ALL_ITERATES, nightly_profile=nightly))
    # two optimizer steps per Poisson batch; sigma calibrated for the 2T steps Opacus' accountant counts
    setup = OpacusSetup(4.0, SAMPLING_RATE, 2 * BUG_STEPS, (("sampling_rate", SAMPLING_RATE), ("steps", BUG_STEPS),
                                                            ("learning_rate", LEARNING_RATE), ("steps_per_batch", 2)))
    out.append(OpacusTarget(
        "opacus-gradient-two-steps-per-batch", "opacus-gradient-canary", LazyAllIterates(setup, "w", column),
        d0, d1, 4.0, DELTA, neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE,
        canary=f"Dirac gradient canary {CANARY_GRADIENT:g} e_j on the zero feature's weight (add/remove)",
        planted_bug=True, paper=PAPER,
        description=(f"{_WB}; BUG: two optimizer.step() per Poisson batch ({BUG_STEPS} batches); sigma "
                     f"calibrated by Opacus for eps = 4 over the {2 * BUG_STEPS} steps its accountant counts as "
                     f"independently sampled; {_LOGREG}; q = {SAMPLING_RATE:g}, C = 1, lr = {LEARNING_RATE:g}, b = 1"),
        step_log_likelihood_ratio=_poisson_step_llr(setup), default_trials=2_000, claim_source=_CLAIM,
        no_tight_epsilon="a planted bug: judged against its claim", threat_model=ThreatModel.WHITE_BOX_ALL_ITERATES))
    return out


# shuffled loader (poisson_sampling=False) versus Poisson, on Chua et al.'s pair
SHUFFLE_BATCH = 2
SHUFFLE_BATCHES = 10
SHUFFLE_EPOCHS = 5
SHUFFLE_EPSILON = 5.0


def shuffle_pair() -> tuple[tuple, tuple]:
    """d0: 19 gradient records -2 e_j; d1: those and the canary +2 e_j (one feature, j = 0)."""
    n = SHUFFLE_BATCH * SHUFFLE_BATCHES - 1
    X = np.ones((n, 1))
    d0 = (X, np.zeros(n), np.ones(n, np.int64), np.full(n, -CANARY_GRADIENT))
    return d0, _with_gradient_record(d0, np.ones(1), CANARY_GRADIENT)


def _shuffle_llr(setup: OpacusSetup):
    def llr(outputs):
        run = setup.run()
        return shuffled_epoch_log_likelihood_ratio(outputs, batches=SHUFFLE_BATCHES, batch_size=SHUFFLE_BATCH,
                                                   noise_multiplier=run.noise_multiplier,
                                                   shift=_clipped(CANARY_GRADIENT, run.clip_norm))

    return llr


def _poisson_control_llr(setup: OpacusSetup):
    def llr(outputs):
        run = setup.run()
        return poisson_with_others_step_log_likelihood_ratio(
            outputs, n_others=SHUFFLE_BATCH * SHUFFLE_BATCHES - 1, sampling_rate=run.sampling_rate,
            noise_multiplier=run.noise_multiplier, shift=_clipped(CANARY_GRADIENT, run.clip_norm))

    return llr


def _register_shuffle_targets() -> list[OpacusTarget]:
    d0, d1 = shuffle_pair()
    q, T = 1.0 / SHUFFLE_BATCHES, SHUFFLE_BATCHES * SHUFFLE_EPOCHS
    n = SHUFFLE_BATCH * SHUFFLE_BATCHES
    shuffled = OpacusSetup(SHUFFLE_EPSILON, q, T, (("batch_size", SHUFFLE_BATCH), ("steps", SHUFFLE_EPOCHS),
                                                   ("fit_intercept", False), ("learning_rate", LEARNING_RATE)), n)
    poisson = OpacusSetup(SHUFFLE_EPSILON, q, T, (("sampling_rate", q), ("steps", T), ("fit_intercept", False),
                                                  ("learning_rate", LEARNING_RATE)), n)
    pair = ("Chua et al.'s pair: 19 gradient records -2 e_j and the canary +2 e_j (clipped to -/+ C e_j); "
            "logistic regression without intercept on one feature")
    common = dict(neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE, paper=PAPER, claim_source=_CLAIM,
                  canary="the gradient record +2 e_j (add/remove)", threat_model=ThreatModel.WHITE_BOX_ALL_ITERATES)
    return [
        OpacusTarget(
            "opacus-gradient-poisson-sampling-false", "opacus-shuffle", LazyAllIterates(shuffled, "w", 0),
            d0, d1, SHUFFLE_EPSILON, DELTA, planted_bug=True,
            description=(f"{_WB}; BUG: poisson_sampling=False with a shuffled loader of batch size {SHUFFLE_BATCH} "
                         f"({SHUFFLE_BATCHES} batches per epoch, {SHUFFLE_EPOCHS} epochs), claiming the eps Opacus "
                         f"accounts as Poisson at q = 1 / len(loader) = {q:g}, T = {T} (sigma by Opacus for "
                         f"eps = {SHUFFLE_EPSILON:g}); {pair}; exact per-epoch law, composition over the epochs"),
            step_log_likelihood_ratio=_shuffle_llr(shuffled), default_trials=2_000,
            no_tight_epsilon="a planted bug: judged against its claim", **common),
        OpacusTarget(
            "opacus-shuffle-poisson-control", "opacus-shuffle", LazyAllIterates(poisson, "w", 0),
            d0, d1, SHUFFLE_EPSILON, DELTA, planted_bug=False,
            description=(f"{_WB}; the correct control of opacus-gradient-poisson-sampling-false: the same data, sigma "
                         f"and T with Opacus' Poisson sampling at q = {q:g}; {pair}; exact per-step law (mixture "
                         "over the binomial count of the other records)"),
            step_log_likelihood_ratio=_poisson_control_llr(poisson), default_trials=10_000, nightly_profile="full",
            tight_epsilon=lambda: _pld(q, poisson.sigma(), T, "the canary against zero-gradient records (the worst "
                                       "case; other records only hide it)"), **common),
    ]


# black-box, last iterate: worst-case initial model, input canary, full batches
LAST_ITERATE_STEPS = 10
LAST_ITERATE_LR = 0.1
CANARY_MAGNITUDE = 10.0
INITIAL_CANARY_WEIGHT = -20.0
LAST_ITERATE_EPSILON = 8.0


def _last_iterate_llr(setup: OpacusSetup):
    def llr(outputs):
        run = setup.run()
        return last_iterate_log_likelihood_ratio(
            outputs, noise_multiplier=run.noise_multiplier, steps=run.steps, learning_rate=run.learning_rate,
            normaliser=run.normaliser, magnitude=CANARY_MAGNITUDE, initial_weight=INITIAL_CANARY_WEIGHT,
            shift=_clipped(CANARY_MAGNITUDE, run.clip_norm))

    return llr


def _register_last_iterate_targets() -> list[OpacusTarget]:
    X, y = gradient_data()
    d0 = _examples(X, y)
    x_c = np.zeros(X.shape[1])
    x_c[2] = CANARY_MAGNITUDE
    X1, y1, k1, a1 = d0
    d1 = (np.vstack([X1, x_c[None, :]]), np.append(y1, 1.0), np.append(k1, 0), np.append(a1, 0.0))
    init = (("w", (0.0, 0.0, INITIAL_CANARY_WEIGHT)),)
    kwargs = (("sampling_rate", 1.0), ("steps", LAST_ITERATE_STEPS), ("fit_intercept", False),
              ("learning_rate", LAST_ITERATE_LR), ("init", init))
    design = (f"worst-case initial model (w_j = {INITIAL_CANARY_WEIGHT:g}: the canary's logit stays below -100, its "
              f"clipped gradient the same at every step), full batches (q = 1), T = {LAST_ITERATE_STEPS}, lr = "
              f"{LAST_ITERATE_LR:g}; logistic regression without intercept on 10 records; exact Gaussian law of the "
              "canary's loss, betting estimator")
    out = []
    for name, extra, bug in (("opacus-input-worst-init-eps8", (), False),
                             ("opacus-input-worst-init-other-eps-noise", (("sigma_from_epsilon", 16.0),), True)):
        setup = OpacusSetup(LAST_ITERATE_EPSILON, 1.0, LAST_ITERATE_STEPS, kwargs + extra)
        what = ("BUG: trains with the noise multiplier Opacus gives for eps = 16 while claiming 8; " if bug else "")
        out.append(OpacusTarget(
            name, "opacus-input-canary", LazyLastIterate(setup, tuple(x_c), 1.0), d0, d1, LAST_ITERATE_EPSILON,
            DELTA, neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE,
            canary=f"input canary {CANARY_MAGNITUDE:g} e_j (label 1) on the zero feature (add/remove)", paper=PAPER,
            planted_bug=bug, description=f"{_BB}; {what}{design}", log_likelihood_ratio=_last_iterate_llr(setup),
            default_trials=10_000, claim_source=_CLAIM,
            tight_epsilon=None if bug else (lambda setup=setup: _pld(
                1.0, setup.sigma(), LAST_ITERATE_STEPS, "the run (full batches: the Gaussian mechanism composed T "
                "times; the last iterate loses nothing)")),
            no_tight_epsilon="a planted bug: judged against its claim" if bug else "",
            threat_model=ThreatModel.BLACK_BOX_LAST_ITERATE))
    return out


def opacus_targets() -> list[OpacusTarget]:
    """The Opacus targets (computing nothing: sigma is calibrated on first use); empty without torch and opacus."""
    if UNAVAILABLE is not None:
        return []
    return _register_gradient_targets() + _register_shuffle_targets() + _register_last_iterate_targets()


for _target in opacus_targets():
    register_target(_target)
