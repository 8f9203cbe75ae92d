"""Private selection from private candidates: the best of a random number of private runs, and its guarantee.

:func:`select_private_candidate` runs a private training / scoring run a random number of times K (drawn
exactly from a law fixed by its mean) and releases the best run's (score, candidate); K and the losing
runs are not released. :func:`tuning_privacy` gives the certified guarantee without running, to choose a
per-run budget. Methods: Liu & Talwar (2019) random stopping and its known-threshold variant (pure DP);
Papernot & Steinke (2022) with a truncated negative binomial, logarithmic, geometric or Poisson number of
runs (Rényi DP from the run's curve, and privacy profiles after Koskela, Redberg & Wang 2024). See ``docs/tuning.md``.

Examples
--------
>>> from dpselect.tune import tuning_privacy
>>> g = tuning_privacy(0.5, method="liu_talwar", mean_runs=20.0)
>>> g.pure_epsilon, round(g.epsilon(0.0), 3)          # Liu & Talwar's 3ε; the privacy-profile bound
(1.5, 1.404)
"""
from __future__ import annotations

from ._privacy import METHODS, TuningGuarantee
from ._select import TuneResult, select_private_candidate, tuning_privacy

__all__ = ["select_private_candidate", "tuning_privacy", "TuneResult", "TuningGuarantee", "METHODS"]
