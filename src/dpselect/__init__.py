"""dpselect: differentially private selection with global and local sensitivity."""
from __future__ import annotations

__version__ = "0.1.0"

from .sensitivity import SensitivityFunction, constant, maximum, weighted_sum  # noqa: E402

__all__ = ["SensitivityFunction", "constant", "maximum", "weighted_sum", "__version__"]

from .multiobjective import (  # noqa: E402
    aggregate_sensitivity, pareto_score, pareto_sensitivity, priv_agg, priv_agg_probabilities, priv_pareto,
    priv_pareto_probabilities,
)

__all__ += ["pareto_score", "pareto_sensitivity", "aggregate_sensitivity", "priv_pareto", "priv_agg",
            "priv_pareto_probabilities", "priv_agg_probabilities"]
