"""Node centralities of a graph with their sensitivities under edge differential privacy.

Neighbour model: **add/remove one edge** (edge-DP; paper Def. 7.1, thesis Sec. 6.1). Every sensitivity
function here is admissible for that model only.

===================  ==========================================  ===================  ==============================
utility              value for node v (degree d)                 global sensitivity   sensitivity function δ(G,t,v)
===================  ==========================================  ===================  ==============================
degree               d                                           1                    1
egocentric density   2·e(v) / (d(d−1)), 0 if d < 2               1                    min(1, 2/(d−t−2)) if d−t−2 > 0,
                     (e(v) = edges among the neighbours)                              else 1 (paper Sec. 7.3)
EBC                  Σ_{u<w ∈ N(v), u≁w} 1 / (1 + m_v(u, w))     max(D(D−1)/4, D)     min(Δ, max((d+t)(d+t−1)/4, d+t))
                     (thesis Def. 6.1.1; m_v(u, w) = common      (thesis Lemma 6.3.2, (thesis Def. 6.3.1, bounded)
                     neighbours of u, w inside N(v))             D = public max-degree
                                                                 bound)
===================  ==========================================  ===================  ==============================

Everything is computed for all nodes at once with sparse linear algebra: triangles through every node
come from a vectorised oriented-triangle listing, and EBC of every node from one block-diagonal sparse
product over all ego networks (see :func:`ebc`).

The paper's published code computes egocentric density as e(v)/(d(d−1)) (half the formula) and gives
degree-1 nodes density 1; ``variant="code"`` reproduces it (see :func:`egocentric_density`).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._threads import map_in_threads, resolve_threads
from .._validation import check_int
from ..exceptions import warn_public_from_data
from .._graph import Graph, _triangles_unsorted, as_graph, is_graph_like, triangle_list
from ..sensitivity import SensitivityFunction

__all__ = [
    "degree",
    "degree_sensitivity",
    "egocentric_density",
    "egocentric_density_sensitivity",
    "ebc",
    "ebc_global_sensitivity",
    "ebc_sensitivity",
    "public_max_degree",
    "triangle_list",
    "DEGREE_GLOBAL_SENSITIVITY",
    "EGODENSITY_GLOBAL_SENSITIVITY",
]

DEGREE_GLOBAL_SENSITIVITY = 1.0
EGODENSITY_GLOBAL_SENSITIVITY = 1.0
_VARIANTS = ("paper", "code")


def _check_graph(graph: Any) -> Graph:
    return as_graph(graph)


def _degrees_of(graph_or_degrees: Any, name: str = "graph") -> np.ndarray:
    """Degrees of a Graph, or a 1-D array of non-negative integer degrees given directly."""
    if is_graph_like(graph_or_degrees):
        return as_graph(graph_or_degrees, name=name).degrees
    arr = np.asarray(graph_or_degrees)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be a Graph or a non-empty 1-D int array of degrees, got "
                        f"{type(graph_or_degrees).__name__} with dtype {getattr(arr, 'dtype', None)}")
    if arr.min() < 0:   # degrees are private: the message names none
        raise ValueError(f"{name}: degrees must be >= 0")
    return arr.astype(np.int64, copy=False)


# -- degree -------------------------------------------------------------------------------------
def degree(graph: Graph) -> np.ndarray:
    """Degree centrality of every node (float64), global sensitivity 1 under edge-DP.

    Parameters
    ----------
    graph : Graph
        The private graph (:class:`dpselect.graphs.Graph` or anything :func:`dpselect.graphs.as_graph`
        accepts).

    Returns
    -------
    ndarray of shape (n_nodes,)
        The degrees, float64.

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> degree(from_edges([0, 0], [1, 2])).tolist()
    [2.0, 1.0, 1.0]
    """
    return _check_graph(graph).degrees.astype(np.float64)


def degree_sensitivity(graph: Graph | np.ndarray) -> SensitivityFunction:
    """δ(G, t, v) = 1 for degree (adding/removing one edge moves a degree by at most 1).

    Parameters
    ----------
    graph : Graph or 1-D int array of degrees
        The private graph, or its degree array itself (only its length is used).

    Returns
    -------
    SensitivityFunction
        Constant 1 for every node and distance (global sensitivity 1, saturation distance 0); values of
        shape (n_nodes,).

    Examples
    --------
    >>> degree_sensitivity(np.array([2, 1, 1]))(3).tolist()
    [1.0, 1.0, 1.0]
    """
    n = _degrees_of(graph).size

    def delta_degree(t, candidates=None):
        return np.ones(n if candidates is None else len(candidates))

    return SensitivityFunction(delta_degree, DEGREE_GLOBAL_SENSITIVITY, n_candidates=n, saturation_distance=0,
                               name="degree")


# -- egocentric density -------------------------------------------------------------------------
def egocentric_density(graph: Graph, *, variant: str = "paper") -> np.ndarray:
    """Egocentric density of every node (float64 in [0, 1]).

    Global sensitivity 1 under edge-DP; its admissible sensitivity function is
    :func:`egocentric_density_sensitivity`.

    Parameters
    ----------
    graph : Graph
        The private graph.
    variant : {"paper", "code"}, default "paper"
        Keyword-only. ``"paper"``: ed(v) = 2·e(v) / (d(d−1)) with e(v) the number of edges among the
        d neighbours of v, and 0 when d < 2 (paper Eq. 2). ``"code"``: what the paper's published code
        computes, e(v) / (d(d−1)) -- each edge among the neighbours counted once over the *ordered* pair
        count, i.e. half the formula -- with degree-1 nodes given density 1 (isolated nodes 0). Offered only
        to reproduce the paper's Table 2; both variants have global sensitivity 1 and the same admissible δ
        (:func:`egocentric_density_sensitivity`).

    Returns
    -------
    ndarray of shape (n_nodes,)
        The densities, float64 in [0, 1].

    Raises
    ------
    ValueError
        ``variant`` is not ``"paper"`` or ``"code"``.

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> g = from_edges([0, 0, 0, 1], [1, 2, 3, 2])   # star at 0 plus edge 1-2
    >>> egocentric_density(g).round(4).tolist()
    [0.3333, 1.0, 1.0, 0.0]
    >>> egocentric_density(g, variant="code").round(4).tolist()
    [0.1667, 0.5, 0.5, 1.0]
    """
    g = _check_graph(graph)
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {_VARIANTS}, got {variant!r}")
    d = g.degrees.astype(np.float64)
    e = g.triangles().astype(np.float64)
    pairs = d * (d - 1)
    out = np.zeros(g.n_nodes)
    ok = pairs > 0
    if variant == "paper":
        out[ok] = 2.0 * e[ok] / pairs[ok]
    else:
        out[ok] = e[ok] / pairs[ok]
        out[g.degrees == 1] = 1.0
    return out


def egocentric_density_sensitivity(graph: Graph | np.ndarray) -> SensitivityFunction:
    """Admissible δ for egocentric density under edge-DP (paper Sec. 7.3, Lemma 7.2).

    δ(G, t, v) = min(1, 2 / (d − t − 2)) if d − t − 2 > 0, else 1, with d the degree of v;
    global sensitivity 1. Admissible for both variants of :func:`egocentric_density` (the code variant
    equals half the paper's formula wherever d >= 2 on both sides of an edge change, and δ = 1 wherever
    a degree of 1 or less is reachable); the test-suite checks both conditions on every graph up to
    6 nodes.

    Parameters
    ----------
    graph : Graph or 1-D int array of degrees
        The private graph; δ depends on the degrees only, so the degree array may be given instead.

    Returns
    -------
    SensitivityFunction
        Values of shape (n_nodes,), global sensitivity 1, saturating at distance max(0, max degree − 4).

    Examples
    --------
    >>> egocentric_density_sensitivity(np.array([1, 4, 10]))(0).tolist()
    [1.0, 1.0, 0.25]
    """
    d = _degrees_of(graph).astype(np.float64)
    n = d.size
    sat = max(0, int(d.max()) - 4)  # d - t - 2 <= 2  =>  δ = 1 for every node

    def delta_egodensity(t, candidates=None):
        dd = d if candidates is None else d[candidates]
        gap = dd - t - 2.0
        out = np.ones(dd.size)
        pos = gap > 0
        out[pos] = np.minimum(1.0, 2.0 / gap[pos])
        return out

    return SensitivityFunction(delta_egodensity, EGODENSITY_GLOBAL_SENSITIVITY, n_candidates=n,
                               saturation_distance=sat, name="egocentric_density", elementwise=True)


# -- egocentric betweenness centrality ----------------------------------------------------------
def ebc(graph: Graph, *, max_block_entries: int = 1_000_000, n_threads: int | None = None) -> np.ndarray:
    """Egocentric betweenness centrality (thesis Def. 6.1.1) of every node, float64.

    Not private by itself: EBC is the utility PrivTopk selects with; its sensitivities are
    :func:`ebc_global_sensitivity` and :func:`ebc_sensitivity` (edge-DP).

    Parameters
    ----------
    graph : Graph
        The private graph.
    max_block_entries : int, default 1_000_000
        Keyword-only. The sparse product is done in blocks of whole ego networks of at most about this
        many output entries (more only for a single ego network that large); bounds the memory. The result
        does not depend on it.
    n_threads : int or None, default None
        Keyword-only. Blocks processed at once (None: the machine's cores, at most 4); the result does not
        depend on it.

    Returns
    -------
    ndarray of shape (n_nodes,)
        EBC of every node, float64.

    Notes
    -----
    EBC(v) = Σ over unordered pairs {u, w} of neighbours of v of p_uw(v) / q_uw(v), geodesics taken in
    the ego network G[N(v) ∪ {v}]. Adjacent pairs contribute 0; a non-adjacent pair is at distance
    2 with 1 + m geodesics, one through v, where m = |N(u) ∩ N(w) ∩ N(v)|. Hence

        EBC(v) = C(d, 2) − e(v) − Σ_{u<w ∈ N(v), u≁w, m>0} m / (1 + m).

    The counts m for *all* ego networks come from one sparse product B·B, where B is the
    block-diagonal adjacency of all ego networks (ego node (v, u) is the CSR slot of edge v→u; a
    triangle {a, b, c} gives the ego edges b–c in ego(a), a–c in ego(b), a–b in ego(c)). The
    product is done in blocks of whole ego networks of at most about ``max_block_entries`` output
    entries, which bounds memory and keeps each block's accumulators in cache.

    The sum of the terms m / (1 + m) of a node is computed exactly and rounded once (for up to 2^26
    terms per node), so the result does not depend on ``max_block_entries``, on ``n_threads`` or on the
    order in which the product lists its entries. scipy's sparse product and numpy release the GIL, so
    threads scale (benchmarks/bench_graphs.py).

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> # thesis Fig. 2: a and b joined, both joined to v0..v5 -> EBC(a) = EBC(b) = 7.5
    >>> g = from_edges([0] + [0] * 6 + [1] * 6, [1] + list(range(2, 8)) * 2)
    >>> ebc(g)[:3].tolist()
    [7.5, 7.5, 0.0]
    >>> ebc(g).shape
    (8,)
    """
    g = _check_graph(graph)
    n = g.n_nodes
    d = g.degrees.astype(np.float64)
    max_block_entries = check_int(max_block_entries, "max_block_entries", minimum=1)
    threads = resolve_threads(n_threads)
    tri, slots = _triangles_unsorted(g, slots=True, n_threads=threads)
    assert slots is not None  # asked for
    # triangles through each node, counted from the listing we need anyway (Graph.triangles() would list again)
    e = np.bincount(tri.ravel(), minlength=n).astype(np.float64) if tri.size else np.zeros(n)
    out = d * (d - 1) / 2.0 - e
    if tri.shape[0] == 0:
        return out
    indptr = g.adjacency.indptr.astype(np.int64)
    n_slots = int(indptr[-1])
    # An entry of B·B is at most an ego degree (< max degree). With B' = B + K·I and K a power of two above
    # that, B'·B' = B·B + 2K·B + K²·I, so one product tells the three kinds of entries apart by value alone:
    # non-adjacent pairs (m < 2K), adjacent pairs (2K + m) and the diagonal (K² + ego degree) -- no
    # second sparse operation to mask out the adjacent pairs.
    K = 2 ** max(1, int(g.max_degree).bit_length())
    # integer entries keep the product exact and index the term table directly; int32 halves the memory
    # traffic of int64 and holds every entry (the largest, K² + ego degree) for max degrees below 2^15
    dtype = np.int32 if K * K + K < 2 ** 31 else np.int64
    diag = np.arange(n_slots, dtype=slots.dtype)
    # the ego edge of a triangle in the ego network of each of its corners, both directions, then B's diagonal
    rows = np.concatenate([slots[0], slots[1], slots[3], slots[2], slots[4], slots[5], diag])
    cols = np.concatenate([slots[2], slots[4], slots[5], slots[0], slots[1], slots[3], diag])
    data = np.ones(rows.size, dtype=dtype)
    data[-n_slots:] = K
    coo = sp.coo_array((data, (rows, cols)), shape=(n_slots, n_slots))
    # every (row, column) occurs once (one ego edge per triangle and corner, plus the diagonal), so the
    # duplicate-summing pass of tocsr(), which also sorts every row, is skipped: the product needs neither
    coo.has_canonical_format = True
    B = coo.tocsr()
    del coo, rows, cols, data
    bptr = B.indptr.astype(np.int64)
    # The sum of the terms m / (1 + m) decides the last bits of EBC, so it is done exactly: each term is a
    # double k·2^-53 with k < 2^53 an integer, split as k = hi·2^26 + lo; integer sums of hi and lo are exact
    # in any order, so the result does not depend on block size or on the product's entry order, and is the
    # correctly rounded sum of the terms for up to 2^26 terms per node (many more than on any real graph).
    m_values = np.arange(2 * K, dtype=np.float64)
    terms = (m_values / (1.0 + m_values) * 2.0 ** 53).astype(np.int64)
    table = np.zeros((2 * K + 1, 2), dtype=np.int64)  # row 2K: adjacent pairs and the diagonal, no term
    table[:2 * K, 0] = terms >> 26
    table[:2 * K, 1] = terms & (2 ** 26 - 1)
    # the product over a node's slots has at most Σ (row length)² entries; cum[c]: that bound summed over nodes <= c
    row_len = np.diff(bptr).astype(np.float64)
    cum = np.concatenate(([0.0], np.cumsum(row_len * row_len)))[indptr[1:]]
    blocks = []
    start_centre = 0
    while start_centre < n:
        base = cum[start_centre - 1] if start_centre else 0.0
        end_centre = int(np.searchsorted(cum, base + max_block_entries, side="right"))
        end_centre = min(max(end_centre, start_centre + 1), n)
        if indptr[end_centre] > indptr[start_centre]:
            blocks.append((start_centre, end_centre))
        start_centre = end_centre

    def block_sums(block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        c0, c1 = block
        s0, s1 = int(indptr[c0]), int(indptr[c1])
        # B is block diagonal by centre and blocks hold whole centres, so the row block is a square
        # diagonal block: its columns are slots s0..s1 as well, no column slicing needed
        p0, p1 = B.indptr[s0], B.indptr[s1]
        X = sp.csr_array((B.data[p0:p1], B.indices[p0:p1] - s0, B.indptr[s0:s1 + 1] - p0), shape=(s1 - s0, s1 - s0))
        P = X @ X
        # clipping sends adjacent pairs and the diagonal (entries >= 2K) to the table's zero row
        parts = table.take(P.data, axis=0, mode="clip")
        # entries of one centre are contiguous: rows indptr[c]..indptr[c+1] of this block
        bounds = P.indptr[indptr[c0:c1 + 1] - s0]
        filled = np.flatnonzero(bounds[:-1] < bounds[1:])
        if not filled.size:
            return filled, np.zeros((0, 2), dtype=np.int64)
        return c0 + filled, np.add.reduceat(parts, bounds[filled], axis=0)

    sums = np.zeros((n, 2), dtype=np.int64)
    for nodes, part in map_in_threads(block_sums, blocks, threads):  # blocks hold disjoint centres
        sums[nodes] = part
    correction = (sums[:, 0].astype(np.float64) * 2.0 ** 26 + sums[:, 1].astype(np.float64)) * 2.0 ** -53
    return out - correction / 2.0


def ebc_global_sensitivity(max_degree: int) -> float:
    """ΔEBC = max(D(D−1)/4, D) for graphs of maximum degree at most D (thesis Lemma 6.3.2).

    Parameters
    ----------
    max_degree : int
        D >= 1, a *public* bound on the maximum degree (not the private graph's own maximum).

    Returns
    -------
    float
        The global sensitivity of :func:`ebc` under edge-DP.

    Examples
    --------
    >>> ebc_global_sensitivity(1383), ebc_global_sensitivity(9458), ebc_global_sensitivity(343)
    (477826.5, 22361076.5, 29326.5)
    """
    D = check_int(max_degree, "max_degree", minimum=1)
    return float(max(D * (D - 1) / 4.0, D))


def public_max_degree(degrees: np.ndarray, max_degree: int | None, where: str, *, stacklevel: int = 4) -> int:
    """The public bound D on the maximum degree: ``max_degree`` checked against the graph, or a fallback.

    Parameters
    ----------
    degrees : ndarray of int
        The degrees of the private graph.
    max_degree : int or None
        Given: an int >= 1 that bounds every degree (``ValueError`` naming ``max_degree`` otherwise: a
        bound the data exceed would give a sensitivity that is too small). The public domain of the
        analysis is the graphs of degree <= max_degree: the caller guarantees the bound, and a graph
        outside it is refused with a message that names the public bound only (never the observed degree
        or node). None: the graph's own maximum
        degree (at least 1) is used, with a :class:`~dpselect.PrivacyLeakWarning` -- the maximum degree of
        the private graph is itself private.
    where : str
        The public function asking (named in the warning).
    stacklevel : int, default 4
        Keyword-only; passed to :func:`~dpselect.exceptions.warn_public_from_data`.

    Returns
    -------
    int
        D >= 1.

    Raises
    ------
    ValueError
        ``max_degree`` is not an int >= 1, or a degree exceeds it.

    Examples
    --------
    >>> public_max_degree(np.array([1, 3, 2]), 10, "example")
    10
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     D = public_max_degree(np.array([1, 3, 2]), None, "example")
    >>> D, w[0].category.__name__
    (3, 'PrivacyLeakWarning')
    """
    dmax = int(degrees.max()) if degrees.size else 0
    if max_degree is None:
        D = max(dmax, 1)
        warn_public_from_data("max_degree", D, where, stacklevel=stacklevel)
        return D
    D = check_int(max_degree, "max_degree", minimum=1)
    if dmax > D:
        # A graph with a larger degree is outside the public domain the analysis covers (the caller
        # guarantees the bound); the message names the public bound only, never the observed degree or node.
        raise ValueError(f"max_degree must be a public upper bound on every degree of the graph, got max_degree={D} "
                         "and a degree above it")
    return D


def ebc_sensitivity(graph: Graph | np.ndarray, max_degree: int | None = None) -> SensitivityFunction:
    """Admissible, bounded δ^EBC under edge-DP (thesis Def. 6.3.1 with Lemma 3.2.2).

    δ(G, t, v) = min(Δ, max((d + t)(d + t − 1)/4, d + t)) with d the degree of v and
    Δ = :func:`ebc_global_sensitivity` (``max_degree``); it equals Δ for every node once
    t >= D − min degree (the saturation distance), which makes it bounded as shifted local
    dampening needs.

    Parameters
    ----------
    graph : Graph or 1-D int array of degrees
        The private graph, or its degree array.
    max_degree : int, optional
        Public upper bound D >= 1 on the maximum degree of every graph considered (the universe of
        neighbouring graphs), chosen without looking at the graph (the thesis uses the published
        maximum degree of each SNAP graph: Enron 1,383, DBLP 343, GitHub 9,458; see
        :data:`dpselect.datasets.PUBLIC_GRAPH_MAX_DEGREE`). A graph with a larger degree is a
        ``ValueError``. Omitted: the graph's own maximum degree, with a
        :class:`~dpselect.PrivacyLeakWarning` (the result is then not ε-edge-DP as stated).

    Returns
    -------
    SensitivityFunction
        Values of shape (n_nodes,), global sensitivity Δ, saturating at D − min degree, with the exact
        closed-form shift for shifted local dampening (D up to 10^6).

    Raises
    ------
    ValueError
        ``max_degree`` is not an int >= 1 or a degree exceeds it.

    Examples
    --------
    >>> ebc_sensitivity(np.array([1, 3, 10]), max_degree=10)(0).tolist()
    [1.0, 3.0, 22.5]
    >>> ebc_sensitivity(np.array([1, 3, 10]), max_degree=10).global_sensitivity
    22.5
    """
    d = _degrees_of(graph).astype(np.float64)
    D = public_max_degree(d, max_degree, "ebc_sensitivity")
    sensitivity = ebc_global_sensitivity(D)
    sat = max(0, D - int(d.min()))

    def delta_ebc(t, candidates=None):
        x = (d if candidates is None else d[candidates]) + t
        return np.minimum(sensitivity, np.maximum(x * (x - 1) / 4.0, x))

    shift = _ebc_shift(d.astype(np.int64), D) if D <= _EBC_SHIFT_MAX_DEGREE else None
    return SensitivityFunction(delta_ebc, sensitivity, n_candidates=d.size, saturation_distance=sat, name="ebc",
                               elementwise=True, shift=shift)


#: Largest public max degree for the closed-form EBC shift in int64 (4·G <= D·D(D − 1) < 2^63).
_EBC_SHIFT_MAX_DEGREE = 1_000_000


def _ebc_shift(d: np.ndarray, D: int):
    """Closed form of the shift G_v = Σ_t (Δ − δ^EBC(G, t, v)) for every node (exact, in integers).

    With f(x) = max(x(x − 1)/4, x), δ(t) = min(Δ, f(d + t)) and Δ = f(D). f is increasing on the
    integers >= 0, so δ first reaches Δ at d + t = D: G_v = Σ_{x=d_v}^{D−1} (Δ − f(x)). Every 4f(x) is an
    integer (f(x) = x for x <= 5, x(x − 1)/4 above), so 4·G_v is an integer computed from a prefix sum of
    4f; the float values δ the function returns are exactly f(x) (integers below 2^53), so this is the
    exact G of the walk over those values. err is the rounding of 4G/4 to float64 (0 below 2^53).
    """
    x = np.arange(D + 1, dtype=np.int64)
    f4 = np.where(x <= 5, 4 * x, x * (x - 1))
    prefix = np.concatenate(([0], np.cumsum(f4)))     # prefix[x] = Σ_{y<x} 4f(y)
    full4 = int(f4[D])

    def shift(candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dv = np.minimum(d[candidates], D)
        g4 = (D - dv) * full4 - (prefix[D] - prefix[dv])
        G = g4.astype(np.float64) / 4.0
        back = np.where(np.abs(G) < 2.0 ** 62, G * 4.0, 0.0).astype(np.int64)
        err = np.where(np.abs(G) < 2.0 ** 62, np.abs(g4 - back).astype(np.float64) * 0.25 * (1 + 2.0 ** -50),
                       np.inf)
        return G, err

    return shift
