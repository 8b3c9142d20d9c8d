"""Imports the per-paper modules; importing one registers its claims."""

from bounds import agnostic_halfspaces, decision_lists_winnow, robust_halfspaces  # noqa: F401
