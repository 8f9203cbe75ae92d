"""Private quantiles: many at once.

:func:`quantiles` releases one value per requested quantile, :func:`quantile` one; ε-DP under
replace-one-record neighbours. Methods with public bounds: the median's interval mechanism per quantile
(``"independent"``), the recursive approximate quantiles of Kaplan, Schnapp & Stemmer (``"recursive"``) and
JointExp of Gillenwater, Joseph & Kulesza (``"joint"``); ``bounds=None`` runs the unbounded method.
See docs/quantiles.md.
"""
from __future__ import annotations

from ._api import METHODS, quantile, quantiles, quantiles_privacy
from ._clipping import clipping_bounds
from ._median import (MEDIAN_MECHANISMS, RANK_MECHANISMS, MedianDistribution, histogram_groups,
                      histogram_to_database, median, median_distribution, median_error, median_probabilities,
                      median_rank)
from ..utilities.median import median_sensitivity, median_utility

__all__ = ["quantiles", "quantile", "quantiles_privacy", "METHODS", "clipping_bounds",
           "median", "median_distribution", "median_rank", "median_utility", "median_sensitivity",
           "median_probabilities", "median_error", "MedianDistribution", "histogram_groups",
           "histogram_to_database", "MEDIAN_MECHANISMS", "RANK_MECHANISMS"]
