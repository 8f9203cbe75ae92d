"""Optimal binary differentially private mechanisms on dataset graphs.

Papers: "Optimal Binary Differential Privacy via Graphs" (002) and "Heterogeneous Differential Privacy via
Graphs" (001). Vertices are datasets, edges neighbouring pairs, ``T(v)`` in {0, 1} the true answer. Given
``Pr[M(v) = 1]`` on a boundary-hitting set, :func:`optimal_extension` returns the unique mechanism that is
(epsilon, delta)-DP (or heterogeneous eps(u, v)-DP) and maximises ``Pr[M(v) = T(v)]`` at every dataset at
once, in one Dijkstra-style pass per answer, on log-odds so that the vanishing probabilities far from the
boundary are exact (``output="log"`` gives both log-probabilities); :class:`BinaryMechanism` verifies privacy
and samples exactly (:func:`bernoulli_log`) from them. :func:`p` is the closed-form induced bound ``U^d(alpha)``.
"""
from __future__ import annotations

from .._exact_random import bernoulli_log
from .closed_forms import (balanced_boundary_value, balanced_probability, dp_lower, dp_upper, p,
                           path_extension, tau)
from .extension import (NotExtendableError, NoUniqueOptimumError, induced_bounds, optimal_extension,
                        optimal_mechanism, optimal_probability)
from .graph import (DatasetGraph, as_dataset_graph, boundary_edges, boundary_vertices,
                    greedy_boundary_hitting_set, is_boundary_hitting, minimum_boundary_hitting_set,
                    uncovered_boundary_edges)
from .mechanism import BinaryMechanism
from .suitable import DPPair, EdgeDPPairs, FunctionPair, SuitablePair

__all__ = [
    "optimal_extension", "optimal_mechanism", "optimal_probability", "induced_bounds",
    "NotExtendableError", "NoUniqueOptimumError", "BinaryMechanism", "bernoulli_log",
    "p", "tau", "dp_upper", "dp_lower", "path_extension", "balanced_boundary_value", "balanced_probability",
    "DatasetGraph", "as_dataset_graph", "boundary_edges", "boundary_vertices", "is_boundary_hitting",
    "uncovered_boundary_edges", "greedy_boundary_hitting_set", "minimum_boundary_hitting_set",
    "SuitablePair", "DPPair", "FunctionPair", "EdgeDPPairs",
]
