"""Audit targets of the robust_halfspaces paper (registered by the learner issue)."""
