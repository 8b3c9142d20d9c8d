"""Audit targets of the decision_lists paper (registered by the learner issue)."""
