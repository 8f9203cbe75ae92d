"""Non-private baselines and error measures for the influential-node selections.

:func:`top_k_pareto` and :func:`top_k_aggregate` are the references of DP-MOTkIN, :func:`top_k_ebc`
that of PrivTopk; :func:`recall` and :func:`metric_c` (paper Def. 6.3, from
:mod:`dpselect.multiobjective`) measure a private selection against them. Nothing here is private.
"""
from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._dominance import count_dominating
from .._validation import check_k
from ._graph import Graph, as_graph, is_graph_like
from ..multiobjective._metric import metric_c
from ..multiobjective._pareto_score import pareto_score
from ..utilities.graph import ebc
from ._motkin import DEFAULT_AGG_WEIGHTS, motkin_objectives
from ._priv_topk import PrivTopkScores

__all__ = ["top_k_pareto", "top_k_aggregate", "top_k_ebc", "recall", "metric_c"]


def _as_objectives(x: Any, variant: str) -> np.ndarray:
    if is_graph_like(x):
        return motkin_objectives(as_graph(x), variant=variant)[0]
    U = np.asarray(x, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] < 1 or not np.all(np.isfinite(U)):
        raise ValueError(f"objectives must be a Graph or a finite (n, m) array, got shape {U.shape}")
    return U


def top_k_pareto(graph_or_objectives: Graph | ArrayLike, *, k: int, variant: str = "paper",
                 tie_break: Literal["dominance", "index"] = "dominance") -> np.ndarray:
    """Non-private baseline: k times the node of largest Pareto score among the remaining nodes.

    Pareto scores are recomputed on the remaining nodes after each pick (as the private version
    does). Ties are the rule, not the exception -- the whole Pareto front has score 0 (12,578 nodes
    of Enron, 23,789 with the paper code's egocentric density) -- and decide what metric C
    measures, so they are broken explicitly: ``tie_break="dominance"`` (default) prefers the node
    that dominates the most remaining nodes, then the smallest index; ``"index"`` takes the
    smallest index.

    Parameters
    ----------
    graph_or_objectives : Graph or array of shape (n, m)
        A graph (its DP-MOTkIN objectives) or the objectives themselves.
    k : int
    variant : {"paper", "code"}
        Egocentric density formula (graphs only).
    tie_break : {"dominance", "index"}

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        Node indices in the order picked (not private).

    Examples
    --------
    >>> U = np.array([[1, 1.0], [3, 0.3], [2, 0.5], [1, 0.0], [0, 0.2]])
    >>> top_k_pareto(U, k=2).tolist(), top_k_pareto(U, k=2, tie_break="index").tolist()
    ([1, 2], [0, 1])
    """
    if tie_break not in ("dominance", "index"):
        raise ValueError(f"tie_break must be 'dominance' or 'index', got {tie_break!r}")
    U = _as_objectives(graph_or_objectives, variant)
    k = check_k(k, U.shape[0])
    remaining = np.arange(U.shape[0])
    picks = []
    for _ in range(k):
        sub = U[remaining]
        ps = pareto_score(sub)
        if tie_break == "dominance":
            dominated = count_dominating(-sub, strict=True)  # nodes each node dominates
            best = np.flatnonzero(ps == ps.max())
            j = int(best[np.argmax(dominated[best])])
        else:
            j = int(np.argmax(ps))
        picks.append(int(remaining[j]))
        remaining = np.delete(remaining, j)
    return np.asarray(picks, dtype=np.int64)


def _top_k_scores(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, ties to the smaller index, in decreasing order."""
    order = np.lexsort((np.arange(scores.size), -scores))
    return order[:k].astype(np.int64)


def top_k_aggregate(graph_or_objectives: Graph | ArrayLike, *, k: int,
                    objective_weights: Sequence[float] = DEFAULT_AGG_WEIGHTS, variant: str = "paper") -> np.ndarray:
    """Non-private baseline: the k nodes of largest Σ w_i u_i (ties to the smaller index).

    Parameters
    ----------
    graph_or_objectives : Graph or array of shape (n, m)
    k : int
    objective_weights : sequence of float, default (1, 100)
        The w_i.
    variant : {"paper", "code"}

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        In decreasing order of the aggregate (not private).

    Examples
    --------
    >>> top_k_aggregate(np.array([[3, 0.3], [2, 1.0], [2, 1.0], [1, 0.0]]), k=2).tolist()
    [1, 2]
    """
    U = _as_objectives(graph_or_objectives, variant)
    w = np.asarray(objective_weights, dtype=np.float64)
    if w.shape != (U.shape[1],):
        raise ValueError(f"objective_weights must have one entry per objective ({U.shape[1]}), got {w.tolist()}")
    return _top_k_scores(U @ w, check_k(k, U.shape[0]))


def recall(reference: ArrayLike, selected: ArrayLike) -> float:
    """|reference ∩ selected| / |reference| (the paper's recall and the thesis' accuracy).

    Parameters
    ----------
    reference, selected : array-like
        Node indices (duplicates count once).

    Returns
    -------
    float

    Examples
    --------
    >>> recall([1, 2, 3], [3, 4, 1])
    0.6666666666666666
    """
    ref = np.unique(np.asarray(reference))
    if ref.size == 0:
        raise ValueError("reference must not be empty")
    return float(np.intersect1d(ref, np.asarray(selected)).size / ref.size)


def top_k_ebc(graph_or_scores: Graph | PrivTopkScores | ArrayLike, *, k: int) -> np.ndarray:
    """Non-private baseline: the k nodes of largest EBC (ties to the smaller index).

    Parameters
    ----------
    graph_or_scores : Graph, PrivTopkScores or array of shape (n,)
        A graph, its prepared scores, or EBC values.
    k : int

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        In decreasing order of EBC (not private).

    Examples
    --------
    >>> top_k_ebc(np.array([0.5, 3.0, 3.0, 1.0]), k=2).tolist()
    [1, 2]
    """
    if isinstance(graph_or_scores, PrivTopkScores):
        u = graph_or_scores.utilities
    elif is_graph_like(graph_or_scores):
        u = ebc(as_graph(graph_or_scores))
    else:
        u = np.asarray(graph_or_scores, dtype=np.float64)
    return _top_k_scores(u, check_k(k, u.size))
