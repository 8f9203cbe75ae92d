"""PrivTopk (thesis Alg. 3): k nodes of large egocentric betweenness centrality (EBC), ε-edge-DP.

Edge differential privacy (two graphs are neighbours when they differ in one edge); k picks on the
nodes not yet chosen with ε/k each. Mechanisms (``mechanism=`` with the names of
:mod:`dpselect.vocabulary` or the thesis labels EM, PF, LD, SLD): the exponential mechanism and
permute-and-flip with ΔEBC, local dampening and shifted local dampening with δ^EBC. Baseline:
:func:`dpselect.graphs.top_k_ebc`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._rng import check_rng
from ..typing import MechanismName, RngLike
from .._validation import check_k, check_positive
from ..dampening import dampen_with_error, shift_totals_with_error
from .._graph import Graph
from ..sensitivity import SensitivityFunction
from ..utilities.graph import ebc, ebc_global_sensitivity, ebc_sensitivity, public_max_degree
from .._boundary import charge, check_accountant
from ..accounting.accountant import Accountant, Event
from ..exceptions import _release_scope
from ..registry import Mechanism, get_mechanism, names
from ..vocabulary import selection_result
from ..topk import _charge, _check_app_method, _draw
from ._motkin import check_graph

__all__ = ["PrivTopkScores", "prepare_priv_topk", "priv_topk", "PRIV_TOPK_MECHANISMS"]

#: PrivTopk's mechanisms by their thesis labels (Sec. 6.2; also accepted as ``mechanism=`` aliases) and what
#: they run. ``priv_topk`` takes the canonical names of :mod:`dpselect.vocabulary` as well.
PRIV_TOPK_MECHANISMS = {
    "EM": "exponential mechanism, ΔEBC = max(D(D−1)/4, D)",
    "PF": "permute-and-flip, ΔEBC",
    "LD": "local dampening with δ^EBC (bounded)",
    "SLD": "shifted local dampening with δ^EBC (bounded, increasing)",
}


def _topk_mechanisms() -> tuple[str, ...]:
    """The registry's mechanisms of one fixed law whose local scores (D or G) can be cached on the graph."""
    return names(where=lambda m: len(m.noises) == 1 and (m.kind == "global" or m.cacheable))


#: Canonical names of the mechanisms :func:`priv_topk` runs (a registry query).
TOPK_CANONICAL = _topk_mechanisms()


@dataclass
class PrivTopkScores:
    """EBC of every node with its sensitivities, and the ε-independent scores of LD and SLD.

    Build with :func:`prepare_priv_topk`; pass to :func:`priv_topk` instead of the graph to draw
    many selections from one graph without recomputing EBC, the dampened scores D(x, r) (LD) or the
    shifts G_r (SLD).

    Parameters
    ----------
    utilities : numpy.ndarray of float64, shape (n,)
        EBC of every node.
    sensitivity_function : SensitivityFunction
        δ^EBC, bounded at ΔEBC.
    global_sensitivity : float
        ΔEBC = max(D(D−1)/4, D).
    max_degree : int
        The public bound D.

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> s = prepare_priv_topk(from_edges([0, 0, 0, 1], [1, 2, 3, 2], n_nodes=5), max_degree=4)
    >>> s.utilities[:4].tolist(), s.global_sensitivity, s.max_degree
    ([2.0, 0.0, 0.0, 0.0], 4.0, 4)
    >>> priv_topk(s, k=2, epsilon=1.0, rng=0).shape   # many draws from one graph, EBC computed once
    (2,)
    """

    utilities: np.ndarray
    sensitivity_function: SensitivityFunction
    global_sensitivity: float
    max_degree: int
    _dampened: tuple | None = field(default=None, init=False, repr=False, compare=False)  # caches, not arguments
    _shifts: tuple | None = field(default=None, init=False, repr=False, compare=False)
    # the public quantities read from the data when it was prepared: every release from it is NonPrivate
    _read_from_data: str | None = field(default=None, init=False, repr=False, compare=False)

    def dampened(self) -> np.ndarray:
        """D(x, r) of thesis Def. 3.3.1 for all nodes (local dampening scores, sensitivity 1).

        Returns
        -------
        numpy.ndarray of float64, shape (n,)

        Examples
        --------
        >>> from dpselect.graphs import from_edges
        >>> s = prepare_priv_topk(from_edges([0, 0, 0, 1], [1, 2, 3, 2], n_nodes=5), max_degree=4)
        >>> s.dampened().shape
        (5,)
        """
        return self._dampened_with_error()[0]

    def _dampened_with_error(self) -> tuple:
        if self._dampened is None:
            self._dampened = dampen_with_error(self.utilities, self.sensitivity_function)
        return self._dampened

    def _shift_totals(self) -> tuple:
        if self._shifts is None:
            self._shifts = shift_totals_with_error(self.sensitivity_function, self.utilities.size)
        return self._shifts

    def shifted(self) -> np.ndarray:
        """u(r) − G_r: shifted local dampening scores (sensitivity Δ), thesis Ch. 4 closed form.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)

        Examples
        --------
        >>> from dpselect.graphs import from_edges
        >>> s = prepare_priv_topk(from_edges([0, 0, 0, 1], [1, 2, 3, 2], n_nodes=5), max_degree=4)
        >>> s.shifted().shape
        (5,)
        """
        return self.utilities - self._shift_totals()[0]

    def scores(self, mechanism: MechanismName) -> tuple[np.ndarray, float]:
        """(scores, sensitivity) on which the exponential mechanism (permute-and-flip for
        "permute_and_flip") is the named PrivTopk mechanism (a name or an alias: EM, PF, LD, SLD).

        Parameters
        ----------
        mechanism : str

        Returns
        -------
        (numpy.ndarray, float)
            EBC, D or u − G, with its sensitivity (ΔEBC, 1 or ΔEBC).

        Examples
        --------
        >>> from dpselect.graphs import from_edges
        >>> s = prepare_priv_topk(from_edges([0, 0, 0, 1], [1, 2, 3, 2], n_nodes=5), max_degree=4)
        >>> s.scores("EM")[1], s.scores("LD")[1]
        (4.0, 1.0)
        """
        spec = get_mechanism(mechanism, allowed=_topk_mechanisms())
        if spec.score == "dampened":
            return self.dampened(), 1.0
        if spec.score == "shifted":
            return self.shifted(), self.global_sensitivity
        return self.utilities, self.global_sensitivity

    def _prepared(self, spec: Mechanism) -> tuple:
        """The cached scores of a local mechanism with their error bounds ((D, err) or (G, err))."""
        return self._dampened_with_error() if spec.score == "dampened" else self._shift_totals()


def prepare_scores(g: Graph, max_degree: int | None, where: str, stacklevel: int = 5) -> PrivTopkScores:
    """:func:`prepare_priv_topk` for callers that name themselves in the warning (``where``, ``stacklevel``)."""
    D = public_max_degree(g.degrees, max_degree, where, stacklevel=stacklevel)
    sf = ebc_sensitivity(g, max_degree=D)
    return PrivTopkScores(ebc(g), sf, ebc_global_sensitivity(D), D)


def prepare_priv_topk(graph: Graph, *, max_degree: int | None = None) -> PrivTopkScores:
    """EBC of every node, ΔEBC (thesis Lemma 6.3.2) and the bounded δ^EBC (Def. 6.3.1).

    ``max_degree`` is the public bound D >= 1 on the maximum degree (see
    :func:`dpselect.utilities.graph.ebc_sensitivity`): a graph with a larger degree is a
    ``ValueError``; omitted, the graph's own maximum degree is used with a
    :class:`~dpselect.PrivacyLeakWarning` (as in the thesis' experiments, where it is the published
    maximum degree of each SNAP graph, :data:`dpselect.datasets.PUBLIC_GRAPH_MAX_DEGREE`).

    Parameters
    ----------
    graph : Graph
        Built with its public node set (else ``PrivacyLeakWarning``).
    max_degree : int, optional
        The public bound D >= 1.

    Returns
    -------
    PrivTopkScores

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> s = prepare_priv_topk(from_edges([0, 0, 0], [1, 2, 3], n_nodes=4), max_degree=3)
    >>> s.utilities.tolist(), s.global_sensitivity
    ([3.0, 0.0, 0.0, 0.0], 3.0)
    """
    with _release_scope() as seen:
        scores = prepare_scores(check_graph(graph, "prepare_priv_topk"), max_degree, "prepare_priv_topk")
    scores._read_from_data = ", ".join(dict.fromkeys(seen)) + " read from the data" if seen else None
    return scores


@selection_result
def priv_topk(graph: Graph | PrivTopkScores, *, k: int | None = None, epsilon: float,
              mechanism: MechanismName = "shifted_local_dampening",
              max_degree: int | None = None, rng: RngLike = None,
              accountant: Accountant | None = None, topk_method: str = "peeling") -> np.ndarray | int:
    """PrivTopk (thesis Alg. 3): k nodes of large egocentric betweenness centrality, ε-edge-DP.

    k successive picks on the nodes not yet chosen, ε/k each (sequential composition: ε in total); or, with
    ``topk_method="joint"`` / ``"one_shot"`` and the exponential mechanism, the top-k of :func:`dpselect.top_k`.

    Parameters
    ----------
    graph : Graph or PrivTopkScores
        The graph, or its precomputed scores from :func:`prepare_priv_topk`. The graph's node set is the
        candidate set, public under edge-DP: build it with ``nodes=`` / ``n_nodes=``
        (:func:`dpselect.graphs.from_edges`); a node set read from the edges warns
        (:class:`dpselect.PrivacyLeakWarning`), here and in :func:`prepare_priv_topk`.
    k : int, optional
        Number of nodes, 1 <= k <= n. Omitted: one node, returned as an ``int`` (as every selector).
    epsilon : float
        Total privacy budget.
    mechanism : {"exponential", "permute_and_flip", "local_dampening", "shifted_local_dampening"}
        Or an alias (EM, PF, LD, SLD; any case). Exponential mechanism or permute-and-flip with
        ΔEBC = max(D(D−1)/4, D); local dampening with δ^EBC; shifted local dampening (default; closed
        form, ``direction="increasing"``: δ^EBC grows with EBC) with δ^EBC bounded at ΔEBC.
    max_degree : int
        Public bound D >= 1 on the maximum degree, chosen without looking at the graph; a graph with
        a larger degree is a ``ValueError``. Omitted: the graph's own maximum degree, with a
        :class:`~dpselect.PrivacyLeakWarning`. With precomputed scores D was fixed by
        :func:`prepare_priv_topk`: passing a different value is a ``ValueError``.
    rng : Generator, int or None
    accountant : dpselect.Accountant, optional
        Charged ``mechanism.privacy(epsilon, k=k)`` under the label ``"priv_topk"``: the adaptive
        composition of k ε/k-bounded-range picks (EM, LD, SLD) or of k ε/k-DP picks (PF); one
        ``BoundedRange(ε)`` / ``PureDP(ε)`` with ``k`` omitted (glossary: [accountant][glossary-accountant]).
        With another ``topk_method``: that method's guarantee (``PureDP(ε)`` for joint).
    topk_method : {"peeling", "joint", "one_shot"}, default "peeling"
        How the k nodes are drawn (glossary: [top-k method][glossary-top-k-method]): peeling (the thesis'
        algorithm), or the joint exponential mechanism / one-shot Gumbel of :func:`dpselect.top_k` on EBC with
        ΔEBC, which need ``mechanism="exponential"`` (a local mechanism is refused before any charge).

    Returns
    -------
    int or numpy.ndarray of int64
        One node index (``k`` omitted), or k node indices in the order picked (shape (k,), also for
        k = 1).

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> g = from_edges([0, 0, 0, 1, 4, 4], [1, 2, 3, 2, 5, 6], n_nodes=7)
    >>> priv_topk(g, k=1, epsilon=1e6, mechanism="shifted_local_dampening", max_degree=6, rng=0).tolist()
    [0]
    >>> priv_topk(g, epsilon=1e6, max_degree=6, rng=0)
    0
    """
    if isinstance(graph, PrivTopkScores):
        scores = graph
        if max_degree is not None and max_degree != scores.max_degree:
            raise ValueError(f"max_degree={max_degree!r} cannot be applied to precomputed PrivTopkScores (prepared "
                             f"with max_degree={scores.max_degree}); pass max_degree to prepare_priv_topk instead")
    else:
        scores = prepare_scores(check_graph(graph, "priv_topk", stacklevel=5), max_degree, "priv_topk",
                                stacklevel=6)  # +1: selection_result
    n = scores.utilities.size
    kk = None if k is None else check_k(k, n)
    eps = check_positive(epsilon, "epsilon")
    spec = get_mechanism(mechanism, allowed=_topk_mechanisms())
    method = _check_app_method(topk_method, spec, "priv_topk")
    acc = check_accountant(accountant)
    gen = check_rng(rng)
    if method != "peeling":
        k1 = 1 if kk is None else kk
        _charge(acc, method, k1, eps, "gumbel" if method == "one_shot" else None, 0.0, False, False,
                label="priv_topk", neighbours="edge_add_remove", nonprivate=scores._read_from_data)
        out = _draw(scores.utilities, k1, eps, scores.global_sensitivity, method,
                    "gumbel" if method == "one_shot" else None, 0.0, False, gen)
        return int(out[0]) if kk is None else out
    if spec.kind == "local":
        cache = scores._prepared(spec)   # deterministic: D or G with their error bounds
    charge(acc, spec.privacy(eps, k=kk), label="priv_topk", neighbours="edge_add_remove", nonprivate=scores._read_from_data,
           event=Event("priv_topk", eps, kk, options=(("mechanism", spec.name),)))
    if spec.kind == "local":
        # LD and SLD: the cached D / G with their rigorous error bounds, sampled exactly (dpselect.sampling);
        # δ^EBC grows with EBC (direction "increasing" where the mechanism takes one)
        opts = {"direction": "increasing"} if spec.accepts("direction") else {}
        return spec.select_prepared(scores.utilities, scores.sensitivity_function, cache, epsilon=eps,
                                    k=1 if kk is None else kk, rng=gen, **opts)
    return spec.select(scores.utilities, epsilon=eps, sensitivity=scores.global_sensitivity, k=kk, rng=gen)
