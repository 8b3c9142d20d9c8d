"""Experiments run by `privbound experiment NAME` (one module per paper)."""
