"""Learners of "Privately Learning Decision Lists and a Differentially Private Winnow" (paper id ``decision-lists-winnow``).

* :mod:`.decision_lists` -- decision lists, DP-GreedyCover (Sec. 3), the exact privacy of its runs, Lemma 15;
* :mod:`.winnow` -- Winnow, ConfidentWinnow, DP-Winnow (Algorithm 4.2), the formulas they run with
  (Lemmas 9-14, Theorem 12) and the instance generators.
"""
