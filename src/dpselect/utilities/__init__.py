"""Domain utilities with their global sensitivities and sensitivity functions."""

__all__ = []
