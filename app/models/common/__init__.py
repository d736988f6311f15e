"""Helpers shared by the model families (no family-specific code)."""
