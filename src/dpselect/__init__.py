"""dpselect: differentially private selection with global and local sensitivity."""
from __future__ import annotations

__version__ = "0.1.0"

from .sensitivity import SensitivityFunction, constant, maximum, weighted_sum  # noqa: E402

__all__ = ["SensitivityFunction", "constant", "maximum", "weighted_sum", "__version__"]
