"""Audit targets of the agnostic_halfspaces paper (registered by the learner issue)."""
