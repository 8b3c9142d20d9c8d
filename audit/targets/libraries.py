"""Audit targets from two more DP libraries at their own claims: IBM's diffprivlib and OpenMined/Google's PipelineDP.

* **diffprivlib** -- its Laplace, Gaussian (classic, eps <= 1), analytic Gaussian and geometric mechanisms on a
  query of sensitivity 1 (|x - x'| = 1), and ``diffprivlib.tools.mean`` with bounds [0, 1] on 10 records (one
  record replaced: the library's sensitivity (upper - lower) / n is for a dataset of known size). The claim is
  the (epsilon, delta) the mechanism is built with, the library's own budget. Randomness: diffprivlib takes a
  ``random_state``; each call gets a ``numpy.random.RandomState`` seeded from the trial's generator (its
  documented way to make draws repeat), so the audits repeat for a seed. diffprivlib 0.6's package ``__init__``
  imports its models, which import ``sklearn.tree._tree.DOUBLE``, a name scikit-learn 1.9 removed; the mechanisms
  and tools do not use it, so :func:`_diffprivlib` loads them with the package's ``__init__`` skipped.
* **PipelineDP** -- ``pipeline_dp.dp_computations``' Laplace and Gaussian mechanisms (sensitivity 1) and a bounded
  sum through ``DPEngine.aggregate`` over rows (user, value) (values clipped to [0, 1], one contribution per user, one public partition,
  the whole budget to the sum by a ``NaiveBudgetAccountant``), add/remove of one user. Its noise comes from the C++
  library of ``python-dp`` (a secure generator of its own): ``draws_own_randomness``.

Planted bugs a user makes with each library (the library is right; the call is wrong), each judged against the
claim the user states:

* ``diffprivlib-laplace-two-rows-per-user`` -- ``Laplace(epsilon=1, sensitivity=1)`` on a count of rows where one
  user adds two rows: the count moves by 2, the mechanism is 2-DP for users;
* ``pipelinedp-sum-row-as-privacy-id`` -- the bounded sum with ``privacy_id_extractor`` giving each row its own id
  while a user holds two rows: PipelineDP bounds contributions per id, so the user's two values of 1 both count
  (sensitivity 2 under the claim for 1).

Floating-point: every mechanism here computes ``value + noise`` in doubles; each is registered with ``float_safe``
(its floating-point audit runs in the nightly) set to what the floating-point audit finds
(benchmarks/README.md, 'DP code people ship').

The module registers nothing for a library that is not installed (``pip install "privbound[libs]"``);
:data:`UNAVAILABLE` maps each missing library to the reason.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from privbound.audit.seeding import GlobalNumpyRandom
from privbound.audit.targets.registry import Target, register_target
from privbound.learners.neighbouring import NeighbouringRelation as NR

__all__ = ["UNAVAILABLE", "DiffprivlibMechanism", "PipelineDPMechanism", "library_targets", "library_versions"]

UNAVAILABLE: dict[str, str] = {
    lib: f"{lib} is not installed: pip install 'privbound[libs]'"
    for lib, module in (("diffprivlib", "diffprivlib"), ("pipeline-dp", "pipeline_dp"))
    if importlib.util.find_spec(module) is None
}


def library_versions() -> dict[str, str]:
    """The installed version of each library whose targets are registered."""
    from importlib.metadata import version

    return {lib: version(lib) for lib in ("diffprivlib", "pipeline-dp", "python-dp") if lib.split("-")[0] not in
            {k.split("-")[0] for k in UNAVAILABLE}}


def _diffprivlib():
    """``(diffprivlib.mechanisms, diffprivlib.tools)``, loaded without the package's ``__init__`` (module docstring)."""
    if "diffprivlib.mechanisms" not in sys.modules:
        try:
            import diffprivlib  # noqa: F401
        except ImportError:
            spec = importlib.util.find_spec("diffprivlib")
            pkg = types.ModuleType("diffprivlib")
            pkg.__path__ = list(spec.submodule_search_locations)
            pkg.__spec__ = spec
            sys.modules["diffprivlib"] = pkg
    import diffprivlib.mechanisms as mechanisms
    import diffprivlib.tools as tools

    return mechanisms, tools


@dataclass(frozen=True)
class DiffprivlibMechanism:
    """A diffprivlib mechanism or tool as an auditable mechanism. ``call(data, random_state)`` runs it with the
    ``random_state`` diffprivlib accepts (a ``RandomState`` seeded from the trial's rng)."""

    label: str
    call: Callable[[Any, np.random.RandomState], Any] = field(repr=False, compare=False)

    def __call__(self, data: Any, rng: np.random.Generator) -> float:
        return float(self.call(data, np.random.RandomState(int(rng.integers(2 ** 32)))))


@dataclass(frozen=True)
class PipelineDPMechanism:
    """A PipelineDP computation as an auditable mechanism. Its noise comes from python-dp's own secure generator
    (``draws_own_randomness``); its contribution bounding samples with the global ``np.random``, seeded from the
    trial's rng for the call and restored (:class:`~privbound.audit.seeding.GlobalNumpyRandom`)."""

    label: str
    call: Callable[[Any], Any] = field(repr=False, compare=False)
    draws_own_randomness = True

    def __call__(self, data: Any, rng: np.random.Generator) -> float:
        return float(GlobalNumpyRandom(self.call, name=self.label)(data, rng))


# --------------------------------------------------------------------------- diffprivlib


def _dpl_laplace(x, rs):
    return _diffprivlib()[0].Laplace(epsilon=1.0, sensitivity=1.0, random_state=rs).randomise(float(x))


def _dpl_gaussian(x, rs):
    return _diffprivlib()[0].Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, random_state=rs).randomise(float(x))


def _dpl_gaussian_analytic(x, rs):
    return _diffprivlib()[0].GaussianAnalytic(epsilon=1.0, delta=1e-5, sensitivity=1.0,
                                              random_state=rs).randomise(float(x))


def _dpl_geometric(x, rs):
    return _diffprivlib()[0].Geometric(epsilon=1.0, sensitivity=1, random_state=rs).randomise(int(x))


def _dpl_mean(data, rs):
    return _diffprivlib()[1].mean(np.asarray(data, float), epsilon=1.0, bounds=(0.0, 1.0), random_state=rs)



# --------------------------------------------------------------------------- PipelineDP


def _pdp_laplace(x):
    from pipeline_dp import dp_computations as dc

    return dc.LaplaceMechanism.create_from_epsilon(1.0, 1.0).add_noise(float(x))


def _pdp_gaussian(x):
    from pipeline_dp import dp_computations as dc

    return dc.GaussianMechanism.create_from_epsilon_delta(1.0, 1e-5, 1.0).add_noise(float(x))


def _dpl_laplace_count(rows, rs):
    return _dpl_laplace(len(rows), rs)


def _pdp_sum(rows, privacy_id=lambda i, row: row[0]):
    """The SUM over ``rows`` of ``(user, value)``; ``privacy_id(index, row)`` is what the privacy-id extractor reads."""
    import pipeline_dp

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1.0, total_delta=0.0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(metrics=[pipeline_dp.Metrics.SUM], max_partitions_contributed=1,
                                         max_contributions_per_partition=1, min_value=0.0, max_value=1.0,
                                         noise_kind=pipeline_dp.NoiseKind.LAPLACE)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: 0,
                                            value_extractor=lambda r: r[2])
    result = engine.aggregate([(privacy_id(i, r), 0, float(r[1])) for i, r in enumerate(rows)], params, extractors,
                              public_partitions=[0])
    accountant.compute_budgets()
    return list(result)[0][1].sum


def _pdp_sum_row_as_privacy_id(rows):
    return _pdp_sum(rows, privacy_id=lambda i, row: i)  # the user's bug: each row its own privacy id


def library_targets() -> list[Target]:
    """The diffprivlib and PipelineDP targets of the installed libraries."""
    out: list[Target] = []
    mean0, mean1 = [0.0] * 10, [0.0] * 9 + [1.0]
    if "diffprivlib" not in UNAVAILABLE:
        src = "diffprivlib: the mechanism's (epsilon, delta) as built"
        specs = [
            ("diffprivlib-laplace", "diffprivlib.mechanisms.Laplace(epsilon=1, sensitivity=1) on a scalar",
             _dpl_laplace, 0.0, 1.0, 1.0, 0.0, NR.BOUNDED_QUERY_CHANGE, "|x - x'| = 1", None),
            ("diffprivlib-gaussian", "diffprivlib.mechanisms.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1)",
             _dpl_gaussian, 0.0, 1.0, 0.5, 1e-5, NR.BOUNDED_QUERY_CHANGE, "|x - x'| = 1", None),
            ("diffprivlib-gaussian-analytic", "diffprivlib.mechanisms.GaussianAnalytic(epsilon=1, delta=1e-5, "
             "sensitivity=1)", _dpl_gaussian_analytic, 0.0, 1.0, 1.0, 1e-5, NR.BOUNDED_QUERY_CHANGE, "|x - x'| = 1",
             None),
            ("diffprivlib-geometric", "diffprivlib.mechanisms.Geometric(epsilon=1, sensitivity=1) on an integer",
             _dpl_geometric, 0, 1, 1.0, 0.0, NR.BOUNDED_QUERY_CHANGE, "|x - x'| = 1", None),
            ("diffprivlib-mean", "diffprivlib.tools.mean(epsilon=1, bounds=(0, 1)) of 10 records",
             _dpl_mean, mean0, mean1, 1.0, 0.0, NR.REPLACE_ONE, "one record 0 replaced by 1", None),
            ("diffprivlib-laplace-two-rows-per-user", "BUG: Laplace(epsilon=1, sensitivity=1) on a count of rows "
             "where a user holds two rows (the count moves by 2 per user)", _dpl_laplace_count, [], [1, 1], 1.0, 0.0,
             NR.ADD_OR_REMOVE_ONE, "one user with two rows added", None),
        ]
        for name, desc, fn, d0, d1, eps, delta, rel, canary, float_safe in specs:
            out.append(Target(name, "diffprivlib", DiffprivlibMechanism(name, fn), d0, d1, eps, delta,
                              neighbouring=rel, canary=canary, description=desc, default_trials=10_000,
                              planted_bug=name.startswith("diffprivlib-laplace-two-rows"),
                              claim_source=src, float_safe=FLOAT_SAFE.get(name),
                              nightly_profile="full" if name in FULL_NIGHT_ONLY else "smoke"))
    if "pipeline-dp" not in UNAVAILABLE:
        users0 = [(user, 0.0) for user in range(5)]  # rows (user, value)
        src = "PipelineDP: the budget the computation is created with"
        specs = [
            ("pipelinedp-laplace", "pipeline_dp.dp_computations.LaplaceMechanism.create_from_epsilon(1, l1 = 1)",
             _pdp_laplace, 0.0, 1.0, 1.0, 0.0, NR.BOUNDED_QUERY_CHANGE, "|x - x'| = 1", 10_000),
            ("pipelinedp-gaussian", "pipeline_dp.dp_computations.GaussianMechanism.create_from_epsilon_delta"
             "(1, 1e-5, l2 = 1)", _pdp_gaussian, 0.0, 1.0, 1.0, 1e-5, NR.BOUNDED_QUERY_CHANGE, "|x - x'| = 1", 10_000),
            ("pipelinedp-sum", "pipeline_dp.DPEngine.aggregate: SUM of values clipped to [0, 1], one contribution "
             "per user, one public partition, Laplace noise, NaiveBudgetAccountant(epsilon = 1)", _pdp_sum,
             users0, users0 + [(5, 1.0)], 1.0, 0.0, NR.ADD_OR_REMOVE_ONE, "one user with value 1 added", 5_000),
            ("pipelinedp-sum-row-as-privacy-id", "BUG: the SUM of pipelinedp-sum with privacy_id_extractor giving "
             "each row its own id while a user holds two rows (both of the user's values count)",
             _pdp_sum_row_as_privacy_id, users0, users0 + [(5, 1.0), (5, 1.0)], 1.0, 0.0, NR.ADD_OR_REMOVE_ONE, "one user with two rows of value 1 "
             "added", 5_000),
        ]
        for name, desc, fn, d0, d1, eps, delta, rel, canary, trials in specs:
            out.append(Target(name, "pipelinedp", PipelineDPMechanism(name, fn), d0, d1, eps, delta,
                              neighbouring=rel, canary=canary, description=desc, default_trials=trials,
                              planted_bug=name == "pipelinedp-sum-row-as-privacy-id",
                              claim_source=src, float_safe=FLOAT_SAFE.get(name)))
    return out


# GaussianAnalytic solves for its scale in every constructor, one per trial as a user builds it: its two audits take
# about 24 s of CPU at 1e4 trials, the other library targets 0.1-3.7 s each; audited in the full night only.
FULL_NIGHT_ONLY = frozenset({"diffprivlib-gaussian-analytic"})

# What the floating-point audit finds for each target at 1e4 trials per side, seed 0 (diffprivlib 0.6.6, PipelineDP
# 0.3.1 with python-dp 1.1.5): False where it refutes the claim (the nightly must keep catching it), True where not.
FLOAT_SAFE: dict[str, bool] = {
    "diffprivlib-laplace": False,            # floating-point bound 6.63 against the claim 1
    "diffprivlib-gaussian": False,           # 5.46 against 0.5
    "diffprivlib-gaussian-analytic": False,  # 6.04 against 1
    "diffprivlib-geometric": True,           # integer noise: 0.96
    "diffprivlib-mean": False,               # 3.90 against 1
    "pipelinedp-laplace": True,              # python-dp's granular Laplace: 0.93
    "pipelinedp-gaussian": False,            # 5.83 against 1
    "pipelinedp-sum": True,                  # 0.78 at 1e3 trials
}
# the planted bugs are judged on their mathematical audit only
FLOAT_SAFE.update({"diffprivlib-laplace-two-rows-per-user": None, "pipelinedp-sum-row-as-privacy-id": None})


for _target in library_targets():
    register_target(_target)
