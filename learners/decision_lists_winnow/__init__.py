"""Learners of "DP decision lists and DP Winnow" (paper id ``decision-lists-winnow``).

* :mod:`.decision_lists` -- decision lists, DP-GreedyCover (Sec. 3.1) and exact privacy of its runs;
* :mod:`.winnow` -- Winnow, confident Winnow, DP-Winnow (Algorithm 4.2) and the instance generators.
"""
