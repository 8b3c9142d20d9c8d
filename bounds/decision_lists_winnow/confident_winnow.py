"""Checks of Lemma 9 (Sec. 4.1, ConfidentWinnow's update bound) and of the Winnow mistake bounds the
introduction derives from it (Sec. 1.2), for "Privately Learning Decision Lists and a Differentially
Private Winnow".

* Winnow and ConfidentWinnow on the instance generators and against the greedy adaptive adversary,
  with the per-update potential drop of Lemma 9's proof (:func:`check_lemma9_sequences`);
* classic Winnow over d in {10..10^4} and eta in (0, 2 rho) (:func:`check_winnow_sweep`);
* the introduction's consequences: the k-disjunction margin 1/(2k-1), O(k^2 log d) mistakes on
  disjunctions and O(r^{2D} log d) on decision lists (:func:`check_intro_consequences`).

The learners are :mod:`privbound.learners.decision_lists_winnow.winnow`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np

from privbound.bounds.checks import CheckContext, CheckResult, inequality
from privbound.bounds.decision_lists_winnow.formulas import lemma15_margin_lower
from privbound.learners.decision_lists_winnow.winnow import (
    GENERATORS,
    ConfidentWinnow,
    confident_winnow_batch,
    dictator_adversary,
    disjunction_adversary,
    generate_instance,
    winnow_potential_drop,
    winnow_update_bound,
)

__all__ = ["constructed_dictator_ratio", "check_lemma9_sequences", "check_winnow_sweep", "check_intro_consequences"]


def constructed_dictator_ratio(d: int, eta: float, c: float) -> tuple[float, int]:
    """ConfidentWinnow against the constructed adversary (:class:`~privbound.learners.decision_lists_winnow.winnow.MarginAdversary`)
    on the dictator target v = e_1 (rho = 1): (updates / Lemma 9 bound, potential-drop violations).

    Deterministic (the adversary has no randomness). The potential is KL(e_1 || w) = -ln w_1; every
    update must lower it by >= (1-c) eta - eta^2/2 (Lemma 9's proof).
    """
    adv, v, rho = dictator_adversary(d, tau=c)
    bound = winnow_update_bound(d, rho, eta, c)
    tr = ConfidentWinnow(eta=eta, c=c, rho=rho).run_adaptive(adv, int(3 * bound) + 10)  # a learner past 3x is caught
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.r_[math.log(d), -np.log(tr.released[:, 0])] if tr.updates else np.array([math.log(d)])
    viol = int(np.count_nonzero(-np.diff(phi) < winnow_potential_drop(rho, eta, c) - 1e-12))
    return float(tr.updates / bound), viol


def check_lemma9_sequences(ctx: CheckContext) -> CheckResult:
    """Winnow (c = 0) and ConfidentWinnow (c in {0.1, 0.25, 0.45}, bits all ones / random) on every
    instance generator, against the greedy adaptive adversary and against the constructed adversary
    (dictator target, d in {16, 1000}): updates <= Lemma 9 bound, and every update lowers KL(v||w) by
    >= (1-c) eta rho - eta^2/2. observed = largest count/bound ratio (the constructed adversary's:
    0.82 at d = 1000, c = 0.1; random and greedy sequences reach <= 0.48)."""
    B = ctx.trials(300, minimum=25)  # default profile: 5 x 7 x 300 + 4 x 300 = 11,700 sequences
    T, d = 300, 16
    ratios: dict[str, float] = {}
    drop_viol = 0
    n_seq = 0
    rng = ctx.rng
    for gen in GENERATORS:
        insts = [generate_instance(gen, rng, d, T) for _ in range(B)]
        rho = min(i.rho for i in insts)
        X = np.stack([i.X for i in insts])
        y = np.stack([i.y for i in insts])
        V = np.stack([i.v for i in insts])
        dd = X.shape[2]
        for c in (0.0, 0.1, 0.25, 0.45):
            eta = (1 - c) * rho
            for bits in ((None,) if c == 0 else (None, rng.integers(0, 2, size=(B, T)))):
                tr = confident_winnow_batch(X, y, eta, c, rho, bits, V)
                den = winnow_potential_drop(rho, eta, c)
                bound = winnow_update_bound(dd, rho, eta, c)
                key = f"{gen}/c={c}"
                ratios[key] = max(ratios.get(key, 0.0), float(tr.updates.max() / bound))
                upd = tr.updates > 0
                drop_viol += int(np.count_nonzero(tr.min_potential_drop[upd] < den - 1e-12))
                n_seq += B
    for dd in (16, 1_000):  # the constructed adversary on the dictator target (worst case; deterministic)
        for c in (0.0, 0.1, 0.25, 0.45):
            ratio, viol = constructed_dictator_ratio(dd, 1.0 - c, c)  # eta = (1-c) rho, rho = 1
            ratios[f"constructed-dictator d={dd}/c={c}"] = ratio
            drop_viol += viol
            n_seq += 1
    for k in (3, 7):  # greedy adaptive adversary on majority-of-k pools
        insts = [generate_instance("majority", rng, d, 80, k=k) for _ in range(B)]
        X = np.stack([i.X for i in insts])
        y = np.stack([i.y for i in insts])
        rho = 1.0 / k
        for c in (0.0, 0.25):
            tr = ConfidentWinnow(eta=(1 - c) * rho, c=c, rho=rho).run_greedy(X, y, 400)
            bound = math.log(d) / ((1 - c) ** 2 * rho * rho / 2)  # Lemma 9 at its best rate eta = (1-c) rho
            ratios[f"greedy-majority{k}/c={c}"] = float(tr.updates.max() / bound)
            n_seq += B
    worst = max(ratios.values())
    out = inequality(worst, 1.0, sense="<=", ratios=ratios, sequences=n_seq, potential_drop_violations=drop_viol,
                     note="observed = max over generators/c/bits of (updates / Lemma 9 bound)")
    if drop_viol:
        out = replace(out, status="fail")
    return out


def check_winnow_sweep(ctx: CheckContext) -> CheckResult:
    """Classic Winnow, d in {10, 100, 1000, 10^4}, eta in (0, 2 rho).

    Majority-of-k streams (margin exactly 1/k on the cube, k in {3, 5}), disjunction
    streams (margin 1/(2k-1)) and the constructed adversary on the dictator target (rho = 1; the
    worst case: 0.92-0.94 of the bound at d >= 1000, eta = rho/2 and rho/4); every run must satisfy mistakes <= ln d / (eta rho - eta^2/2)
    (Lemma 9 with c = 0); observed = max mistakes / bound. At eta = rho the bound is 2 ln d / rho^2.
    """
    rng = ctx.rng
    B = ctx.trials(12, minimum=3)
    full = ctx.profile.scale >= 1
    dims = (10, 100, 1_000, 10_000) if ctx.profile.scale > 0.5 else (10, 100, 1_000)
    ratios, n_seq = {}, 0
    for d in dims:
        T = 400 if d <= 1_000 else 200
        # d = 10^4 at profile "default": one generator and three learning rates (all of them at "full")
        gens = (("majority", 3), ("majority", 5), ("disjunction", 3)) if (d <= 1_000 or full) else (("majority", 3),)
        fracs = (0.25, 0.5, 1.0, 1.5, 1.9) if (d <= 1_000 or full) else (0.5, 1.0, 1.9)
        for gen, k in gens:
            insts = [generate_instance(gen, rng, d, T, k=k) for _ in range(B)]
            rho = min(i.rho for i in insts)
            X = np.stack([i.X for i in insts])
            y = np.stack([i.y for i in insts])
            for frac in fracs:
                eta = frac * rho
                tr = confident_winnow_batch(X, y, eta, 0.0, rho)
                bound = winnow_update_bound(d, rho, eta, 0.0)
                key = f"d={d}/{gen}{k}/eta={frac}rho"
                ratios[key] = float(tr.mistakes.max() / bound)
                n_seq += B
        for frac in fracs:  # the constructed adversary on the dictator target (rho = 1), deterministic
            ratios[f"d={d}/constructed-dictator/eta={frac}rho"] = constructed_dictator_ratio(d, frac, 0.0)[0]
            n_seq += 1
    worst_key = max(ratios, key=ratios.get)
    return inequality(ratios[worst_key], 1.0, sense="<=", worst=worst_key, sequences=n_seq,
                      largest_ratio_per_dimension={d: max(v for k_, v in ratios.items() if k_.startswith(f"d={d}/"))
                                                   for d in dims},
                      note="observed = max over d, generator, eta of (Winnow mistakes / Lemma 9 bound, c = 0)")


def _disjunction_margin_errors(rng: np.random.Generator, d: int = 10) -> tuple[float, int]:
    """Exhaustively over {-1,1}^d: the k-disjunction halfspace's margin error and sign errors, k in {1, 2, 3, 5, 7}."""
    Xc = np.array(list(itertools.product((-1.0, 1.0), repeat=d)))
    margin_err, sign_err = 0.0, 0
    for k in (1, 2, 3, 5, 7):
        S = rng.choice(d, size=k, replace=False)
        w = np.zeros(d + 1)
        w[S] = 1.0
        w[-1] = k - 1.0
        w /= np.abs(w).sum()
        val = np.hstack([Xc, np.ones((Xc.shape[0], 1))]) @ w
        sign_err += int(np.count_nonzero(np.sign(val) != np.where((Xc[:, S] == 1).any(axis=1), 1, -1)))
        margin_err = max(margin_err, abs(float(np.min(np.abs(val))) - 1.0 / (2 * k - 1)))
    return margin_err, sign_err


def check_intro_consequences(ctx: CheckContext) -> CheckResult:
    """The introduction's consequences of Lemma 9 (Sec. 1.2).

    (a) k-disjunction OR_{i in S} with weights (1_S, k-1) on (x, 1), l1-normalised: sign equals the
        disjunction and the margin is exactly 1/(2k-1) on the whole cube (exhaustive, d = 10:
        <w,(x,1)> = #{i in S: x_i = +1} - #{x_i = -1} + k - 1 = 2j - 1 for j true literals, so
        |.| >= 1 with equality at j in {0, 1}, and ||w||_1 = 2k - 1).
    (b) Winnow at eta = rho on disjunction streams (i.i.d., the greedy adversary and the constructed
        adversary, which reaches 0.53-0.64 of the bound) makes
        <= 2 ln d (2k-1)^2 mistakes = O(k^2 log d).
    (c) On decision-list streams (r-1 rules, D alternations, through Lemma 15 and the 2d embedding,
        dimension 2(d+1)) Winnow at eta = rho_lb makes <= 2 ln(2(d+1)) / rho_lb^2 mistakes with the explicit
        rho_lb = (1/3)(D/(r+D-1))^D of the Lemma 15 construction, i.e. O(r^{2D} log d); the realised
        margin must be >= rho_lb. observed = max ratio over (b) and (c); (a) must hold exactly.
    """
    rng = ctx.rng
    margin_err, sign_err = _disjunction_margin_errors(rng)
    B = ctx.trials(40, minimum=8)
    ratios = {}
    for k in (2, 3, 5):
        insts = [generate_instance("disjunction", rng, 64, 600, k=k) for _ in range(B)]
        rho = 1.0 / (2 * k - 1)
        X = np.stack([i.X for i in insts])
        y = np.stack([i.y for i in insts])
        bound = 2.0 * math.log(64) * (2 * k - 1) ** 2  # Winnow at eta = rho: 2 ln d / rho^2
        tr = confident_winnow_batch(X, y, rho, 0.0, rho)
        ratios[f"disjunction k={k} iid"] = float(tr.mistakes.max() / bound)
        tg = ConfidentWinnow(eta=rho, c=0.0, rho=rho).run_greedy(X[:, :200], y[:, :200], 300)
        ratios[f"disjunction k={k} greedy"] = float(tg.mistakes.max() / bound)
        adv, _, _ = disjunction_adversary(64, k)  # the constructed adversary (deterministic): 0.53-0.64
        ratios[f"disjunction k={k} constructed"] = ConfidentWinnow(eta=rho, c=0.0, rho=rho).run_adaptive(
            adv, int(3 * bound) + 10).mistakes / bound
    margin_short = 0
    for r, D in ((3, 1), (4, 1), (4, 2), (5, 2), (6, 3)):
        rho_lb = lemma15_margin_lower(r, D)
        insts = [generate_instance("decision-list", rng, 12, 600, r=r, D=D) for _ in range(B)]
        margin_short += sum(i.rho < rho_lb - 1e-12 for i in insts)
        X = np.stack([i.X for i in insts])
        y = np.stack([i.y for i in insts])
        dd = X.shape[2]
        bound = 2.0 * math.log(dd) / rho_lb**2
        tr = confident_winnow_batch(X, y, rho_lb, 0.0, rho_lb)
        ratios[f"decision-list r={r} D={D}"] = float(tr.mistakes.max() / bound)
    worst = max(ratios.values())
    out = inequality(worst, 1.0, sense="<=", ratios=ratios, disjunction_margin_error=margin_err,
                     disjunction_sign_errors=sign_err, decision_list_margin_below_lb=int(margin_short),
                     note="observed = max mistakes / (2 ln d / rho^2) over disjunction and decision-list streams")
    if sign_err or margin_err > 1e-12 or margin_short:
        out = replace(out, status="fail")
    return out
