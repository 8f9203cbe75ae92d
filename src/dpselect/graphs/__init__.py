"""Graphs (:class:`Graph`) and their private top-k influential nodes: DP-MOTkIN (paper Sec. 7), PrivTopk (thesis Ch. 6).

Privacy model for everything here: **edge differential privacy** -- two graphs are neighbours when
they differ in exactly one edge (paper Def. 7.1). Every private function spends ``epsilon`` in total:
it makes k selections with ε/k each on the candidates not yet picked (sequential composition), so the
returned set of k node indices is ε-edge-DP.

* **DP-MOTkIN** (paper Sec. 7.2): two objectives per node, degree and egocentric density
  (:mod:`dpselect.utilities.graph`).
  - :func:`dp_motkin_pareto` -- PrivPareto on the Pareto score; ``mechanism="exponential"`` is
    DP-MOTkIN-Pareto_global (Δ^PS = |R| − 1), ``mechanism="local_dampening"`` (default)
    DP-MOTkIN-Pareto_local (δ^PS built from δ^degree and δ^egodensity). The Pareto scores and δ^PS
    are recomputed on the remaining nodes after each pick.
  - :func:`dp_motkin_agg` -- PrivAgg on w_degree·degree + w_egodensity·egodensity (default weights
    1 and 100, paper Sec. 7.5); global: exponential mechanism with Δ = Σ|w_i|Δ_i; local: local
    dampening with δ^agg = Σ|w_i|δ_i.
  - non-private baselines :func:`top_k_pareto` and :func:`top_k_aggregate`, and the paper's error
    measures :func:`metric_c` (Def. 6.3; :func:`dpselect.multiobjective.metric_c`, with node indices:
    ``metric_c(reference, selected, objectives=U)``) and :func:`recall`.
* **PrivTopk** (thesis Alg. 3): k picks maximising egocentric betweenness centrality (EBC) with the
  exponential mechanism, permute-and-flip, local dampening or shifted local dampening (``mechanism=``
  with the names of :mod:`dpselect.vocabulary` or their aliases EM, PF, LD, SLD): :func:`priv_topk`,
  baseline :func:`top_k_ebc`.

All functions return **node indices** into the :class:`Graph` (``graph.node_ids[idx]`` gives the original
ids), in the order picked. The loaders are in :mod:`dpselect.datasets`.

>>> import dpselect
>>> g = dpselect.graphs.from_edges([0, 1, 2, 0], [1, 2, 3, 2], n_nodes=4)
>>> picked = dpselect.graphs.priv_topk(g, k=2, epsilon=1.0, mechanism="exponential", max_degree=3, rng=0)
>>> len(picked)
2
"""
from __future__ import annotations

from ._graph import (GRAPH_DATASETS, PUBLIC_GRAPH_NODES, Graph, GraphNormalisationWarning, as_graph,
                     check_public_nodes, from_edges, from_networkx, is_graph_like, triangle_list)
from ._baselines import metric_c, recall, top_k_aggregate, top_k_ebc, top_k_pareto
from ._demo import influential_demo_table
from ._motkin import DEFAULT_AGG_WEIGHTS, MOTKIN_MECHANISMS, dp_motkin_agg, dp_motkin_pareto, motkin_objectives
from ._motkin_sampler import MotkinSampler
from ._priv_topk import PRIV_TOPK_MECHANISMS, PrivTopkScores, prepare_priv_topk, priv_topk

__all__ = [
    "Graph", "GraphNormalisationWarning", "from_edges", "from_networkx", "triangle_list", "as_graph",
    "is_graph_like", "check_public_nodes", "GRAPH_DATASETS", "PUBLIC_GRAPH_NODES",
    "motkin_objectives",
    "dp_motkin_pareto",
    "dp_motkin_agg",
    "top_k_pareto",
    "top_k_aggregate",
    "metric_c",
    "recall",
    "PrivTopkScores",
    "prepare_priv_topk",
    "priv_topk",
    "top_k_ebc",
    "PRIV_TOPK_MECHANISMS",
    "MotkinSampler",
    "influential_demo_table",
    "DEFAULT_AGG_WEIGHTS",
    "MOTKIN_MECHANISMS",
]
