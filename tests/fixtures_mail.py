"""Fixtures (filled in by the layer that owns them)."""
