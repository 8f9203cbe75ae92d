"""Applications of the papers built on the selection mechanisms."""

__all__ = []
