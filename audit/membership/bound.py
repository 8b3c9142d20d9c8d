"""The epsilon lower bound of the membership game: every (target model, pool record) pair is a canary of the
one-run game of Steinke, Nasr & Jagielski (NeurIPS 2023, arXiv:2305.08846), the attack and the guess rule
chosen on held-out target models (the package docstring gives the argument).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from privbound.audit.one_run import one_run_audit
from privbound._validation import check_confidence, check_delta, check_int

__all__ = ["guess_grid", "membership_epsilon_lower_bound"]

_GUESS_FRACTIONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def _rule(frac: float, two_sided: bool, m: int) -> tuple[int, int]:
    r = max(1, int(round(frac * m)))
    return (r - r // 2, r // 2) if two_sided else (r, 0)


def guess_grid(m: int) -> tuple[tuple[int, int], ...]:
    """The fixed guess rules ``(k_plus, k_minus)`` for ``m`` canaries: ``r`` = 0.1% ... 50% of m guesses,
    all "member" (one-sided) and half "member" / half "non-member" (two-sided)."""
    m = check_int(m, "m", low=1)
    out: list[tuple[int, int]] = []
    for frac in _GUESS_FRACTIONS:
        for two_sided in (False, True):
            pair = _rule(frac, two_sided, m)
            if pair not in out and pair[0] >= 1:
                out.append(pair)
    return tuple(out)


def _snj(scores: np.ndarray, bits: np.ndarray, rule: tuple[int, int], delta: float, confidence: float):
    return one_run_audit(np.ravel(scores), np.ravel(bits), delta=delta, confidence=confidence, grid=[rule])


def membership_epsilon_lower_bound(scores: Mapping[str, np.ndarray], membership: np.ndarray, *, delta: float = 0.0,
                                   confidence: float = 0.95, selection: float = 0.25) -> tuple[float, dict[str, Any]]:
    """The epsilon lower bound of the membership game (package docstring) and how it was obtained.

    ``scores[name]`` and ``membership`` are (targets, pool); every (target, record) pair is a canary of
    the one-run game of Steinke, Nasr & Jagielski (2023). With two or more target models, the first
    ``selection`` fraction of them (at least one) chooses the attack and the guess rule (the fraction of
    guesses of :func:`guess_grid`, one- or two-sided) and the other target models -- independent of the
    first, so the choice is fixed with respect to their coins -- evaluate that one rule at level
    ``1 - confidence``. With one target model, every rule of every attack is tested at level
    ``(1 - confidence) / (number of rules)`` (Bonferroni) and the best bound is reported.
    """
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    bits = np.asarray(membership, bool)
    n_t = bits.shape[0]
    if n_t >= 2 and selection > 0:
        n_sel = min(n_t - 1, max(1, int(round(selection * n_t))))
        m_sel, m_ev = bits[:n_sel].size, bits[n_sel:].size
        cands = []
        for name, s in scores.items():
            for frac in _GUESS_FRACTIONS:
                for two_sided in (False, True):
                    res = _snj(s[:n_sel], bits[:n_sel], _rule(frac, two_sided, m_sel), delta, confidence)
                    cands.append((res.epsilon_lower_bound, res.v / max(res.r, 1), -frac, name, frac, two_sided))
        _, _, _, name, frac, two_sided = max(cands, key=lambda c: c[:3])
        rule = _rule(frac, two_sided, m_ev)
        res = _snj(scores[name][n_sel:], bits[n_sel:], rule, delta, confidence)
        info = {"method": "one-run/steinke-nasr-jagielski-2023, rule chosen on held-out target models",
                "attack": name, "fraction": frac, "two_sided": two_sided, "k_plus": rule[0], "k_minus": rule[1],
                "r": res.r, "v": res.v, "m": m_ev, "selection_targets": n_sel, "evaluation_targets": n_t - n_sel,
                "rules_tested": 1}
        return float(res.epsilon_lower_bound), info
    m = bits.size
    grid = guess_grid(m)
    n_tests = max(1, len(scores)) * len(grid)
    # Bonferroni over the attacks here; one_run_audit divides each attack's share over the rules of its grid,
    # so every rule is tested at (1 - confidence) / n_tests.
    per_attack = 1.0 - (1.0 - confidence) / max(1, len(scores))
    best = (0.0, None, None)
    for name, s in scores.items():
        res = one_run_audit(np.ravel(s), np.ravel(bits), delta=delta, confidence=per_attack, grid=grid)
        if best[1] is None or res.epsilon_lower_bound > best[0]:
            best = (float(res.epsilon_lower_bound), name, res)
    e, name, res = best
    info = {"method": "one-run/steinke-nasr-jagielski-2023, Bonferroni over attacks and rules", "attack": name,
            "k_plus": res.k_plus, "k_minus": res.k_minus, "r": res.r, "v": res.v, "m": m,
            "selection_targets": 0, "evaluation_targets": n_t, "rules_tested": n_tests}
    return e, info

