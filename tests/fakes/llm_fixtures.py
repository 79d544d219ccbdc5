"""Fixtures (filled in by the owning area)."""
