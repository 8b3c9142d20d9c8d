"""The membership audit, :func:`membership_audit`: play the game with reference and target models, score
every attack, bound epsilon and rank the records by risk (the package docstring describes each step)."""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from privbound.audit.membership.attacks import ATTACKS, attack_scores, choose_rmia_a, record_risk
from privbound.audit.membership.bound import membership_epsilon_lower_bound
from privbound.audit.membership.game import MembershipGame, train_models
from privbound.audit.membership.metrics import attack_metrics
from privbound.audit.membership.result import MembershipResult
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import check_confidence, check_delta, check_int, check_real

__all__ = ["membership_audit"]


def _split_population(n: int, population: float | int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (pool, population) of a seeded split of ``n`` records."""
    k = int(round(population * n)) if isinstance(population, float) else int(population)
    if not 1 <= k < n:
        raise ValueError(f"population must leave at least one record on each side, got {k} of {n}")
    perm = np.random.default_rng(np.random.SeedSequence([seed, 2])).permutation(n)
    return np.sort(perm[k:]), np.sort(perm[:k])


def _claim_of(estimator: Any) -> tuple[float | None, float | None, NeighbouringRelation | None]:
    """The estimator's own claimed (epsilon, delta, relation), from its ``guarantee`` when it has one."""
    try:
        g = getattr(estimator, "guarantee", None)
    except Exception:
        return None, None, None
    if g is None or callable(g):
        return None, None, None
    return float(g.epsilon), float(g.delta), getattr(g, "neighbouring", None)


def _game_text(relation: NeighbouringRelation) -> str:
    if relation is NeighbouringRelation.REPLACE_ONE:
        return ("each (model, pool record) holds the record or its filler in a fixed slot, a fair coin each; "
                "worlds differ by replacing one record (replace-one)")
    return "each (model, pool record) trains on the record or not, a fair coin each; worlds differ by adding or " \
           "removing one record (add-or-remove-one)"


def membership_audit(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    X_population: Any = None,
    y_population: Any = None,
    population: float | int = 0.1,
    X_filler: Any = None,
    y_filler: Any = None,
    relation: NeighbouringRelation | str = NeighbouringRelation.ADD_OR_REMOVE_ONE,
    n_reference: int = 64,
    n_targets: int = 8,
    attacks: Sequence[str] = ATTACKS,
    epsilon: float | None = None,
    delta: float | None = None,
    confidence: float = 0.95,
    fprs: Sequence[float] = (1e-3, 1e-2),
    risk_fpr: float = 1e-3,
    fixed_variance: bool | None = None,
    rmia_gamma: float = 1.0,
    rmia_a: float | str = "auto",
    top: int = 20,
    seed: int = 0,
    n_jobs: int | None = 1,
    chunk_size: int = 4,
    cache_dir: str | None = None,
    name: str | None = None,
) -> MembershipResult:
    """Membership-inference audit of ``estimator`` trained on records of ``(X, y)``.

    ``estimator`` is any classifier with ``fit(X, y)`` and ``predict_proba`` or ``decision_function``
    (a scikit-learn estimator, or one of the papers' learners); a fresh copy is trained per model with
    its ``random_state`` drawn from the run's seed. Without ``X_population`` a seeded ``population``
    fraction (or count) of ``(X, y)`` is held out as RMIA's population; the rest is the pool of
    candidate members. ``relation="replace-one"`` needs fillers (one per pool record). ``epsilon``,
    ``delta``: the claim (default: the estimator's ``guarantee``, else non-private with ``delta = 0``).
    See the package docstring for the game, the attacks and the bound. ``cache_dir`` makes the run
    resumable.

    Example::

        from sklearn.datasets import load_digits
        from sklearn.linear_model import LogisticRegression
        from privbound.audit.membership import membership_audit
        X, y = load_digits(return_X_y=True)
        print(membership_audit(LogisticRegression(C=100, max_iter=300), X / 16, y, n_reference=16).summary())
    """
    start = time.perf_counter()
    relation = NeighbouringRelation(relation)
    if relation not in (NeighbouringRelation.ADD_OR_REMOVE_ONE, NeighbouringRelation.REPLACE_ONE):
        raise ValueError(f"relation must be add-or-remove-one or replace-one, got {relation.value}")
    n_reference = check_int(n_reference, "n_reference", low=2)
    n_targets = check_int(n_targets, "n_targets", low=1)
    confidence = check_confidence(confidence)
    seed = check_int(seed, "seed", low=0)
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown or not attacks:
        raise ValueError(f"attacks must be a non-empty subset of {ATTACKS}, got {list(attacks)}")
    eps_own, delta_own, rel_own = _claim_of(estimator) if epsilon is None else (None, None, None)
    if rel_own is not None and NeighbouringRelation(rel_own) is not relation:
        raise ValueError(f"the estimator's guarantee is stated for {NeighbouringRelation(rel_own).value}, the game for "
                         f"{relation.value}: pass relation={NeighbouringRelation(rel_own).value!r} (or an explicit epsilon)")
    epsilon = eps_own if epsilon is None else check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    delta = (delta_own if delta_own is not None else 0.0) if delta is None else check_delta(delta)

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be 2-d with one label per row in y, got shapes {X.shape} and {y.shape}")
    if X_population is None:
        pool, pop = _split_population(len(y), population, seed)
        X, y, X_population, y_population = X[pool], y[pool], X[pop], y[pop]
    X_population = np.asarray(X_population, dtype=float)
    y_population = np.asarray(y_population)
    if relation is NeighbouringRelation.REPLACE_ONE:
        if X_filler is None or np.shape(X_filler) != X.shape or np.shape(y_filler) != y.shape:
            raise ValueError("relation replace-one needs X_filler, y_filler of the pool's shape (one filler per record)")
        X_filler, y_filler = np.asarray(X_filler, dtype=float), np.asarray(y_filler)
    game = MembershipGame(X, y, X_population, y_population, relation, X_filler, y_filler)

    t0 = time.perf_counter()
    kw = dict(seed=seed, n_jobs=n_jobs, chunk_size=chunk_size, cache_dir=cache_dir)
    ref = train_models(estimator, game, n_reference, role="reference", **kw)
    tgt = train_models(estimator, game, n_targets, role="target", **kw)
    train_seconds = time.perf_counter() - t0

    n = game.n_pool
    if fixed_variance is None:
        fixed_variance = n_reference < 64
    a = choose_rmia_a(ref, n) if rmia_a == "auto" else check_real(rmia_a, "rmia_a", low=0.0, high=1.0)
    scores = attack_scores(attacks, ref, tgt, n, fixed_variance=fixed_variance, rmia_a=a, rmia_gamma=rmia_gamma)
    eps_lb, eps_info = membership_epsilon_lower_bound(scores, tgt.keep, delta=delta, confidence=confidence)
    metrics = tuple(attack_metrics(k, s, tgt.keep, fprs=fprs, confidence=confidence) for k, s in scores.items())
    risk = record_risk(ref.phi[:, :n], ref.keep, risk_fpr, fixed_variance)
    order = np.argsort(-risk["risk"], kind="stable")[: check_int(top, "top", low=0)]
    top_records = tuple({"index": int(i), "label": y[i].item() if hasattr(y[i], "item") else y[i],
                         "risk": float(risk["risk"][i]), "mu_in": float(risk["mu_in"][i]),
                         "mu_out": float(risk["mu_out"][i]), "s_in": float(risk["s_in"][i]),
                         "s_out": float(risk["s_out"][i])} for i in order)
    return MembershipResult(
        name=name, estimator=_describe(estimator), relation=relation, game=_game_text(relation),
        n_pool=n, n_population=len(y_population), n_reference=n_reference, n_targets=n_targets,
        attacks=metrics, epsilon_claimed=epsilon, delta=delta, epsilon_lower_bound=eps_lb,
        epsilon_attack=eps_info["attack"] if eps_lb > 0 else None, confidence=confidence,
        violation=bool(epsilon is not None and eps_lb > epsilon), risk_fpr=risk_fpr,
        record_risk=risk["risk"], top_records=top_records, scores=scores, membership=tgt.keep, seed=seed,
        wall_seconds=time.perf_counter() - start, train_seconds=train_seconds,
        details={"rmia_a": a, "rmia_gamma": rmia_gamma, "fixed_variance": fixed_variance, "epsilon": eps_info,
                 "chunk_size": chunk_size},
    )


def _describe(estimator: Any) -> str:
    text = repr(estimator)
    if text.startswith("<") and " at 0x" in text:
        state = {k: v for k, v in vars(estimator).items() if not k.endswith("_") and v is not None}
        text = f"{type(estimator).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in state.items()) + ")"
    return text if len(text) <= 200 else text[:197] + "..."

