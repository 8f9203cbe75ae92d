"""dpselect: differentially private selection with global and local sensitivity.

The top level holds the selectors, the accounting and the quantiles; the applications live in their
subpackages (:mod:`dpselect.graphs`, :mod:`dpselect.trees`, :mod:`dpselect.multiobjective`,
:mod:`dpselect.dampening`, :mod:`dpselect.datasets`, :mod:`dpselect.tune`, and, imported on demand,
:mod:`dpselect.binary`, :mod:`dpselect.sklearn`, :mod:`dpselect.dask`).
"""
from __future__ import annotations

from ._version import __version__
from .exceptions import BudgetExceededError, PrivacyLeakWarning
from .sensitivity import SensitivityFunction, constant, maximum, weighted_sum
from .mechanisms import (
    exponential,
    exponential_probabilities,
    local_dampening,
    local_dampening_probabilities,
    permute_and_flip,
    permute_and_flip_probabilities,
    report_noisy_max,
    report_noisy_max_probabilities,
    shifted_local_dampening,
    shifted_local_dampening_probabilities,
)
from . import audit
# The mechanism registry: imported before every module that takes ``mechanism=``, so that the
# built-in mechanisms are registered before any name is looked up.
from . import registry
from .registry import MECHANISMS, get_mechanism
from .accounting.accountant import Accountant
from .accounting.guarantees import ZCDP, ApproxDP, BoundedRange, NonPrivate, PureDP
from .quantiles import median, quantile, quantiles
from .topk import top_k, top_k_probabilities
# The applications' subpackages, so that ``dpselect.graphs.priv_topk`` works after ``import dpselect``
# (the optional-dependency ones, sklearn and dask, are imported by their users).
from . import accounting, dampening, datasets, graphs, multiobjective, trees, tune  # noqa: F401

__all__ = [
    "__version__", "PrivacyLeakWarning", "BudgetExceededError",
    "exponential", "exponential_probabilities", "permute_and_flip", "permute_and_flip_probabilities",
    "report_noisy_max", "report_noisy_max_probabilities", "local_dampening", "local_dampening_probabilities",
    "shifted_local_dampening", "shifted_local_dampening_probabilities",
    "SensitivityFunction", "constant", "maximum", "weighted_sum",
    "quantile", "quantiles", "median", "top_k", "top_k_probabilities",
    "Accountant", "PureDP", "BoundedRange", "ApproxDP", "ZCDP", "NonPrivate",
    "audit", "registry", "get_mechanism", "MECHANISMS",
]
