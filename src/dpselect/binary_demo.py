"""Deprecated alias of :mod:`dpselect.experiments.binary_demo` (moved beside the other reproductions).

``dpselect binary-demo`` is unchanged; import from ``dpselect.experiments.binary_demo`` instead. This
module will be removed in a future release.
"""
from __future__ import annotations

import warnings

from .experiments.binary_demo import (  # noqa: F401
    DESCRIPTION,
    NAME,
    REPRODUCTION,
    add_arguments,
    count_path_mechanism,
    hypercube_graph,
    hypercube_mechanism,
    laplace_threshold_correct,
    randomized_response_correct,
    run,
)

__all__ = ["DESCRIPTION", "NAME", "REPRODUCTION", "add_arguments", "count_path_mechanism", "hypercube_graph",
    "hypercube_mechanism", "laplace_threshold_correct", "randomized_response_correct", "run"]

warnings.warn("dpselect.binary_demo moved to dpselect.experiments.binary_demo; the old module name will be "
              "removed in a future release", DeprecationWarning, stacklevel=2)
