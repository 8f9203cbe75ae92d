"""DP-MOTkIN (paper Sec. 7): private top-k influential nodes on two objectives, ε-edge-DP.

Edge differential privacy: two graphs are neighbours when they differ in exactly one edge (paper Def.
7.1). Every function spends ``epsilon`` in total: k selections with ε/k each on the nodes not yet
picked (sequential composition), so the returned k node indices are ε-edge-DP. The objectives are
degree and egocentric density (:mod:`dpselect.utilities.graph`).

* :func:`dp_motkin_pareto` -- PrivPareto on the Pareto score; ``mechanism="exponential"`` is
  DP-MOTkIN-Pareto_global (Δ^PS = |R| − 1), ``mechanism="local_dampening"`` (default)
  DP-MOTkIN-Pareto_local (δ^PS built from δ^degree and δ^egodensity). Pareto scores and δ^PS are
  recomputed on the remaining nodes after each pick.
* :func:`dp_motkin_agg` -- PrivAgg on w_degree·degree + w_egodensity·egodensity (default weights 1
  and 100, paper Sec. 7.5); global: exponential mechanism with Δ = Σ|w_i|Δ_i; local: local dampening
  with δ^agg = Σ|w_i|δ_i.

Repeated draws on one graph: :class:`dpselect.graphs.MotkinSampler`. Non-private
baselines and the paper's measures: :mod:`dpselect.graphs._baselines`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._rng import check_rng
from ..typing import MechanismName, RngLike
from .._validation import check_k, check_positive
from .._graph import Graph, as_graph, check_public_nodes
from ..multiobjective._select import priv_agg, priv_pareto
from ..sensitivity import SensitivityFunction, check_weight_values
from ..utilities.graph import (
    DEGREE_GLOBAL_SENSITIVITY,
    EGODENSITY_GLOBAL_SENSITIVITY,
    degree_sensitivity,
    egocentric_density,
    egocentric_density_sensitivity,
)
from .._boundary import charge, check_accountant
from ..accounting.accountant import Accountant, Event
from ..registry import get_mechanism, names
from ..vocabulary import selection_result
from ..topk import _charge, _check_app_method, _draw
from ..multiobjective._aggregate import _aggregate

__all__ = ["motkin_objectives", "dp_motkin_pareto", "dp_motkin_agg", "DEFAULT_AGG_WEIGHTS", "MOTKIN_MECHANISMS"]



def _sampler_mechanisms() -> tuple[str, ...]:
    """The registry's Gumbel-noise mechanisms on the utilities or on dampened scores (D cached per prefix)."""
    return names(noise="gumbel", where=lambda m: m.score in ("utility", "dampened"))


#: The mechanisms :class:`~dpselect.graphs.MotkinSampler` runs (a registry query; DP-MOTkIN's
#: paper versions: global = exponential, local = local dampening). The selectors take every mechanism.
MOTKIN_MECHANISMS = _sampler_mechanisms()
#: Objective weights (degree, egocentric density) of DP-MOTkIN-Agg in paper Sec. 7.5.
DEFAULT_AGG_WEIGHTS = (1.0, 100.0)


def check_graph(graph: Any, where: str | None = None, *, stacklevel: int = 4) -> Graph:
    """A Graph (networkx graphs converted) with at least 2 nodes to select from.

    ``where`` given (a private selection): :class:`dpselect.PrivacyLeakWarning` when the graph's node set
    -- the candidates -- was read from its edges (:attr:`dpselect.graphs.Graph.public_nodes`).
    """
    g = as_graph(graph, min_nodes=2)
    if where is not None:
        check_public_nodes(g, where, stacklevel=stacklevel)
    return g


def motkin_mechanism(mechanism: str | None, where: str, allowed: Sequence[str] | None = None) -> str:
    """The canonical mechanism of a DP-MOTkIN call (default local dampening)."""
    if mechanism is None:
        return "local_dampening"
    return get_mechanism(mechanism, allowed=allowed).name


def _agg_weights(objective_weights: Any) -> list[float]:
    """(w_degree, w_egodensity) as two floats, checked at the boundary (finite, not both 0)."""
    w = check_weight_values(objective_weights, 2)
    if w.shape != (2,) or not np.all(np.isfinite(w)) or not np.any(w != 0):
        raise ValueError(f"objective_weights must be two finite numbers (w_degree, w_egodensity), not both 0, "
                         f"got {w.tolist()}")
    return [float(x) for x in w]


def motkin_objectives(graph: Graph, *, variant: str = "paper") -> tuple[np.ndarray, list[SensitivityFunction]]:
    """The DP-MOTkIN objectives: U[:, 0] = degree, U[:, 1] = egocentric density, with their δ's.

    ``variant`` selects the egocentric density formula (``"paper"``, or ``"code"`` for the paper's
    published code, see :func:`dpselect.utilities.graph.egocentric_density`).

    Parameters
    ----------
    graph : Graph
    variant : {"paper", "code"}

    Returns
    -------
    (U, [δ^degree, δ^egodensity]) : (numpy.ndarray of shape (n, 2), list of SensitivityFunction)
        Global sensitivities 1 and 1 (edge-DP).

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> U, sfs = motkin_objectives(from_edges([0, 0, 0, 1], [1, 2, 3, 2]))
    >>> U.round(3).tolist(), [sf.global_sensitivity for sf in sfs]
    ([[3.0, 0.333], [2.0, 1.0], [2.0, 1.0], [1.0, 0.0]], [1.0, 1.0])
    """
    g = check_graph(graph)
    U = np.column_stack([g.degrees.astype(np.float64), egocentric_density(g, variant=variant)])
    return U, [degree_sensitivity(g), egocentric_density_sensitivity(g)]


@selection_result
def dp_motkin_pareto(graph: Graph, *, k: int | None = None, epsilon: float, mechanism: MechanismName | None = None,
                     variant: str = "paper", rng: RngLike = None,
                     accountant: Accountant | None = None) -> np.ndarray | int:
    """DP-MOTkIN-Pareto: k nodes near the Pareto front of (degree, egocentric density), ε-edge-DP.

    Runs PrivPareto (:func:`dpselect.multiobjective.priv_pareto`) k times with ε/k each on the nodes not yet picked;
    the Pareto scores and δ^PS are recomputed on the remaining nodes after each pick.

    Parameters
    ----------
    graph : Graph
        Its node set is the candidate set, public under edge-DP: build the graph with ``nodes=`` or
        ``n_nodes=`` (:func:`dpselect.graphs.from_edges`); a node set read from the edges warns
        (:class:`dpselect.PrivacyLeakWarning`), as in :func:`dp_motkin_agg`, :class:`MotkinSampler` and
        :func:`dpselect.graphs.priv_topk`.
    k : int, optional
        Number of nodes, 1 <= k <= n. Omitted: one node, returned as an ``int``.
    epsilon : float
        Total privacy budget (ε-edge-DP by sequential composition). ``k`` and ``epsilon`` are
        keyword-only.
    mechanism : str, default "local_dampening"
        Any name or alias of :data:`dpselect.vocabulary.MECHANISMS`. Local mechanisms use δ^PS from
        δ^degree = 1 and δ^egodensity ("local_dampening": DP-MOTkIN-Pareto_local); global ones
        Δ^PS = |R| − 1 ("exponential": DP-MOTkIN-Pareto_global).
    variant : {"paper", "code"}
        Egocentric density formula (see :func:`motkin_objectives`).
    rng : Generator, int or None
    accountant : dpselect.Accountant, optional
        Charged, under the label ``"dp_motkin_pareto"``, the guarantee of the k picks as the mechanism's
        registry spec states it (``mechanism.privacy(epsilon, k=k)``: the adaptive composition of k
        ε/k-bounded-range picks for the exponential mechanism and local dampening, of k ε/k-DP picks
        for pure-DP mechanisms; one ``BoundedRange(ε)`` / ``PureDP(ε)`` with ``k`` omitted), after the
        arguments are checked and before any random bit is drawn. A release that would exceed the
        budget raises :class:`~dpselect.BudgetExceededError`, records nothing and draws nothing.

    Returns
    -------
    int or numpy.ndarray of int64
        One node index (``k`` omitted), or the k node indices in the order picked (shape (k,), also
        for k = 1).

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> g = from_edges([0, 0, 0, 1, 4], [1, 2, 3, 2, 5], n_nodes=6)   # the public node set: ids 0..5
    >>> picks = dp_motkin_pareto(g, k=2, epsilon=1e4, rng=0)   # nodes 0, 1, 2 form the Pareto front
    >>> picks.dtype, picks.shape, set(picks.tolist()) <= {0, 1, 2}
    (dtype('int64'), (2,), True)
    >>> type(dp_motkin_pareto(g, epsilon=1e4, rng=0)).__name__
    'int'
    """
    g = check_graph(graph, "dp_motkin_pareto", stacklevel=5)   # +1: selection_result
    kk = None if k is None else check_k(k, g.n_nodes)
    eps = check_positive(epsilon, "epsilon")
    spec = get_mechanism(motkin_mechanism(mechanism, "dp_motkin_pareto"))
    acc = check_accountant(accountant)
    U, sfs = motkin_objectives(g, variant=variant)
    sens = sfs if spec.kind == "local" else [DEGREE_GLOBAL_SENSITIVITY, EGODENSITY_GLOBAL_SENSITIVITY]
    gen = check_rng(rng)
    charge(acc, spec.privacy(eps, k=kk), label="dp_motkin_pareto", neighbours="edge_add_remove",
           event=Event("dp_motkin_pareto", eps, kk, options=(("mechanism", spec.name),)))
    return priv_pareto(U, epsilon=eps, sensitivities=sens, k=kk, rng=gen, mechanism=spec.name)


@selection_result
def dp_motkin_agg(graph: Graph, *, k: int | None = None, epsilon: float, objective_weights: Sequence[float] = DEFAULT_AGG_WEIGHTS,
                  mechanism: MechanismName | None = None, variant: str = "paper",
                  rng: RngLike = None, accountant: Accountant | None = None,
                  topk_method: str = "peeling") -> np.ndarray | int:
    """DP-MOTkIN-Agg: k nodes maximising w_degree·degree + w_egodensity·egodensity, ε-edge-DP.

    Runs PrivAgg (:func:`dpselect.multiobjective.priv_agg`) with k picks of ε/k each. ``mechanism="exponential"``
    (or another global mechanism): Δ = Σ|w_i|Δ_i (= 101 for the default ``objective_weights`` 1 and 100
    of paper Sec. 7.5); ``mechanism="local_dampening"`` (default, or another local mechanism):
    δ^agg = Σ|w_i|δ_i (paper Thm 5.4).

    Parameters
    ----------
    graph, k, epsilon, mechanism, variant, rng
        As in :func:`dp_motkin_pareto`.
    objective_weights : pair of float, default (1, 100)
        (w_degree, w_egodensity).
    accountant : dpselect.Accountant, optional
        Charged ``mechanism.privacy(epsilon, k=k)`` under the label ``"dp_motkin_agg"``, as in
        :func:`dp_motkin_pareto`; with another ``topk_method`` that method's guarantee (``PureDP(ε)`` for joint).
    topk_method : {"peeling", "joint", "one_shot"}, default "peeling"
        How the k nodes are drawn (glossary: [top-k method][glossary-top-k-method]): peeling (PrivAgg's k picks),
        or the joint exponential mechanism / one-shot Gumbel of :func:`dpselect.top_k` on the aggregate with
        Δ = Σ|w_i|Δ_i, which need ``mechanism="exponential"`` (a local mechanism is refused before any charge).

    Returns
    -------
    int or numpy.ndarray of int64
        One node index (``k`` omitted), or k node indices in the order picked (shape (k,), also for
        k = 1).

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> g = from_edges([0, 0, 0, 1, 4], [1, 2, 3, 2, 5], n_nodes=6)
    >>> dp_motkin_agg(g, k=1, epsilon=1e5, rng=0).tolist() in ([1], [2])   # 2 + 100·1 beats 3 + 100/3
    True
    >>> dp_motkin_agg(g, epsilon=1e5, rng=0) in (1, 2)
    True
    """
    g = check_graph(graph, "dp_motkin_agg", stacklevel=5)   # +1: selection_result
    kk = None if k is None else check_k(k, g.n_nodes)
    eps = check_positive(epsilon, "epsilon")
    spec = get_mechanism(motkin_mechanism(mechanism, "dp_motkin_agg"))
    method = _check_app_method(topk_method, spec, "dp_motkin_agg")
    acc = check_accountant(accountant)
    U, sfs = motkin_objectives(g, variant=variant)
    sens = sfs if spec.kind == "local" else [DEGREE_GLOBAL_SENSITIVITY, EGODENSITY_GLOBAL_SENSITIVITY]
    w = _agg_weights(objective_weights)
    gen = check_rng(rng)
    if method != "peeling":
        # PrivAgg's aggregate u = U·w with its global sensitivity Σ|w_i|Δ_i (Thm 5.3), then the top-k method
        u, agg_sens = _aggregate(np.asarray(U, dtype=np.float64), w, sens, spec.name, U.shape[0], U.shape[1])
        k1 = 1 if kk is None else kk
        nz = "gumbel" if method == "one_shot" else None
        _charge(acc, method, k1, eps, nz, 0.0, False, False, label="dp_motkin_agg", neighbours="edge_add_remove")
        out = _draw(np.asarray(u, dtype=np.float64), k1, eps, float(agg_sens), method, nz, 0.0, False, gen)
        return int(out[0]) if kk is None else out
    charge(acc, spec.privacy(eps, k=kk), label="dp_motkin_agg", neighbours="edge_add_remove",
           event=Event("dp_motkin_agg", eps, kk, options=(("mechanism", spec.name),)))
    return priv_agg(U, w, epsilon=eps, sensitivities=sens, k=kk, rng=gen, mechanism=spec.name)
