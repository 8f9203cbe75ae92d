r"""The optimal extension of a partial binary mechanism (paper 002, Alg. 1-2, Thm 1-2; paper 001, Alg. 2, Thm 1).

Problem. ``G = (V, E)`` is a graph of datasets, ``T : V -> {0, 1}`` the true answer, and a partial mechanism
fixes ``q(s) = Pr[M(s) = 1]`` on ``S subset V``. Each edge ``e`` carries a suitable pair whose upper map ``U_e``
(increasing, ``U_e(a) >= a``) says how large ``Pr[M(u) = j]`` may be when a neighbour has ``Pr[M(v) = j] = a``:
``U_e = U_DP`` with ``epsilon(e)`` and ``delta``. A path ``rho = s, v_1, ..., w`` induces
``Pr[M(w) = j] <= U_rho(q_j(s))``, the composition of the ``U_e`` along it (Lemma 6 of paper 002; Lemma 2 of
paper 001). The *strongest induced condition* on ``w`` for colour ``j`` is

    A_j(w) = min over s in S and (s, w)-paths rho of U_rho(q_j(s)).

The papers extend ``M`` by ``Pr[M(w) = T(w)] = A_{T(w)}(w)`` for ``w`` outside ``S`` (the unique optimum when
``S`` is boundary-hitting and ``q`` is compatible, i.e. ``q_j(s) <= A_j(s)`` for all ``s in S``), computing
each ``A`` with one label-setting run per source or per (source, vertex) pair, ``O(|V|^3 |E|)`` in all.

One pass per colour. Here ``A_j`` for *all* vertices and *all* sources comes from ONE multi-source
label-setting pass (Dijkstra generalised to monotone edge functions): start with every ``s in S`` settled at
``q_j(s)``; repeatedly settle the unsettled vertices of smallest tentative label and relax their edges with
``label(w) <- min(label(w), U_e(label(x)))``. Sources keep their fixed values (a smaller bound reaching a
source is exactly an incompatibility, reported afterwards).

*Proof that settled labels equal* ``A_j``. (i) Walks never beat paths: a cycle composes maps with
``U(a) >= a`` and the ``U`` are increasing, so removing it cannot increase the final bound. (ii) Invariant:
the tentative label of an unsettled vertex ``w`` is the minimum of ``U_rho(q(s))`` over paths whose vertices
before ``w`` are all settled. It holds initially (sources settled, their out-edges relaxed) and after each
relaxation by (iii) below. (iii) Let ``m`` be the smallest tentative label and
``theta = min over unsettled x of min_{e at x} U_e(label(x))`` (``>= m`` since ``U(a) >= a``). Any path
reaching an unsettled ``w`` whose first unsettled vertex is some ``y != w`` has, at ``y``, a value
``>= label(y)`` (invariant), hence after its next edge a value ``>= U_e(label(y)) >= theta``, and every later
edge keeps it ``>= theta`` (``U(a) >= a``, monotone). So ``A(w) = min(label(w), something >= theta)``: every
unsettled vertex with ``label(w) <= theta`` is exact and can be settled at once. This is Dijkstra's argument
(Knuth's "superior functions" generalisation) with a batch instead of a single vertex; with
``theta = U(m)`` for a homogeneous pair and a per-vertex smallest-epsilon bound for heterogeneous ones.
Each vertex is settled once and each arc relaxed once: ``O(|E| + |V| log |V|)`` work per colour, done as
vectorised numpy batches (``method="batch"``) or with a binary heap (``method="heap"``, the reference).

Compatibility (extendability) is then one vectorised check over the arcs entering ``S``:
``q_j(s) <= U_e(A_j(x))`` for every neighbour ``x`` of ``s`` (if a bound from ``s'`` reaches ``s`` through
other sources the first source on the way already fails the test, so checking arcs suffices). The origin
and predecessor of each label give the offending pair and the path (:class:`NotExtendableError`).
A compatible partial mechanism on ANY ``S`` is extendable (the extension for the constant true function
``T = j`` is Alg. 1 on a graph without boundary). When ``S`` is not boundary-hitting the vertex-wise optima
``A_{T(w)}(w)`` are each attained by some extension, so a unique optimum exists iff they jointly satisfy
privacy; that is checked and :class:`NoUniqueOptimumError` is raised otherwise (paper 002, Example 2).
"""
from __future__ import annotations

import heapq
import math
import numbers
from fractions import Fraction
from collections.abc import Mapping
from typing import Any, Hashable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from .._validation import short_repr, check_choice, check_nonnegative, check_positive
from . import _logspace as ls
from ._logspace import SHIFT_FROM
from .graph import DatasetGraph, _true_value_array, _uncovered_ids, as_dataset_graph
from .mechanism import BinaryMechanism
from .violations import privacy_violations
from .suitable import DPPair, EdgeDPPairs, SuitablePair

__all__ = ["NotExtendableError", "NoUniqueOptimumError", "optimal_extension", "optimal_mechanism",
           "optimal_probability", "induced_bounds", "resolve_privacy"]


class NotExtendableError(ValueError):
    """The partial mechanism has no private extension; ``pair = (u, v)`` is an offending pair.

    Raised by :func:`optimal_extension`, :func:`optimal_mechanism` and :func:`optimal_probability`. A
    ``ValueError``: the given partial mechanism is itself the bad input.

    Parameters
    ----------
    message : str
        The error message.
    pair : tuple
        Keyword-only (as are the rest): the offending fixed vertices ``(u, v)``.
    colour : int
        The answer ``j`` whose probabilities conflict.
    value_u, value_v : float
        ``Pr[M(u) = j]`` and ``Pr[M(v) = j]``.
    bound : float
        The strongest bound ``u`` induces on ``v`` (``< value_v``).
    path : list
        The vertices of a path from ``u`` to ``v`` along which the bound is induced.

    Examples
    --------
    >>> try:
    ...     optimal_extension([(0, 1)], {0: 0, 1: 1}, {0: 0.1, 1: 0.9}, epsilon=1.0)
    ... except NotExtendableError as err:
    ...     print(err.pair, err.colour, round(err.bound, 6), err.path)
    (0, 1) 1 0.271828 [0, 1]
    """

    def __init__(self, message: str, *, pair: tuple, colour: int, value_u: float, value_v: float,
                 bound: float, path: list) -> None:
        super().__init__(message)
        self.pair, self.colour, self.value_u, self.value_v = pair, colour, value_u, value_v
        self.bound, self.path = bound, path


class NoUniqueOptimumError(ValueError):
    """No extension dominates all others (the set of fixed vertices is not boundary-hitting).

    Parameters
    ----------
    message : str
        The error message.
    edge : tuple
        Keyword-only: a neighbouring pair where the vertex-wise optima violate privacy.
    uncovered : list
        Keyword-only: boundary edges with no endpoint in the partial mechanism's domain (at most 10).

    Examples
    --------
    >>> try:
    ...     optimal_extension([(0, 1), (1, 2)], {0: 0, 1: 1, 2: 1}, {2: 0.9}, epsilon=1.0)
    ... except NoUniqueOptimumError as err:
    ...     print(err.edge, err.uncovered)
    (0, 1) [(0, 1)]
    """

    def __init__(self, message: str, *, edge: tuple, uncovered: list) -> None:
        super().__init__(message)
        self.edge, self.uncovered = edge, uncovered


# ===================================================================== privacy resolution
def resolve_privacy(g: DatasetGraph, epsilon: Any, delta: Any = 0.0, pair: SuitablePair | None = None
                    ) -> SuitablePair:
    """The suitable pair(s) on ``g`` for a privacy specification.

    A number gives :class:`~dpselect.binary.suitable.DPPair`; a mapping ``{(u, v): eps}`` (either
    orientation), an array with one value per edge of ``g`` or an edge attribute read into ``g`` give
    :class:`~dpselect.binary.suitable.EdgeDPPairs`; ``pair`` passes a custom homogeneous
    :class:`~dpselect.binary.suitable.SuitablePair`.

    Parameters
    ----------
    g : DatasetGraph
        The dataset graph.
    epsilon : float, mapping, array_like, str or None
        Homogeneous ε > 0, or ε per edge (>= 0, finite); a str names the edge attribute already read into
        ``g.edge_epsilon``. None only together with ``pair``.
    delta : float, default 0.0
        δ in [0, 1).
    pair : SuitablePair, optional
        A custom homogeneous pair, instead of ``epsilon``/``delta``.

    Returns
    -------
    SuitablePair

    Raises
    ------
    TypeError
        Both or neither of ``epsilon`` and ``pair``, a heterogeneous ``pair``, or an ``epsilon`` of another type.
    ValueError
        ``delta`` outside [0, 1), an ε out of range, a key that is not an edge, an edge without a value or
        with two values.

    Examples
    --------
    >>> g = DatasetGraph.from_edges([(0, 1), (1, 2)])
    >>> resolve_privacy(g, 1.0), resolve_privacy(g, {(0, 1): 1.0, (2, 1): 0.5})
    (DPPair(epsilon=1.0, delta=0.0), EdgeDPPairs(n_arcs=4, delta=0.0))
    """
    if pair is not None:
        if epsilon is not None:
            raise TypeError("give either epsilon (and delta) or pair, not both")
        if not isinstance(pair, SuitablePair) or not pair.homogeneous:
            raise TypeError("pair must be a homogeneous SuitablePair (DPPair, FunctionPair)")
        return pair
    dl = check_nonnegative(delta, "delta")
    if dl >= 1:
        raise ValueError(f"delta must be a finite number in [0, 1), got {delta!r}")
    if epsilon is None:
        raise TypeError("epsilon is required: a number, a mapping {(u, v): epsilon} or an edge attribute name")
    if isinstance(epsilon, (numbers.Real, np.floating, np.integer)) and not isinstance(epsilon, bool):
        return DPPair(epsilon=check_positive(epsilon, "epsilon"), delta=dl)
    if isinstance(epsilon, str):
        if g.edge_epsilon is None:  # pragma: no cover - callers read the attribute when building g
            raise ValueError(f"graph has no edge attribute {epsilon!r}")
        eps_edge = g.edge_epsilon
    elif isinstance(epsilon, Mapping):
        eps_edge = _epsilon_from_mapping(g, epsilon)
    elif isinstance(epsilon, (np.ndarray, list, tuple)):
        eps_edge = np.asarray(epsilon, dtype=np.float64)
        if eps_edge.shape != (g.n_edges,):
            raise ValueError(f"epsilon as an array needs one value per edge ({g.n_edges}), got shape "
                             f"{eps_edge.shape}")
    else:
        raise TypeError("epsilon must be a number, a mapping {(u, v): epsilon}, an edge attribute name or an "
                        f"array with one value per edge, got {type(epsilon).__name__}")
    bad = ~np.isfinite(eps_edge) | (eps_edge < 0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"epsilon must be a finite number >= 0 on every edge, got {eps_edge[k]!r} on edge "
                         f"({short_repr(g.label(int(g.edge_u[k])))}, {short_repr(g.label(int(g.edge_v[k])))})")
    arc_eps = eps_edge[g.arc_edge]
    vmin = np.full(g.n, np.inf)
    np.minimum.at(vmin, g.arc_tail, arc_eps)
    return EdgeDPPairs(arc_eps, vmin, dl, edge_epsilon=eps_edge)


def _epsilon_from_mapping(g: DatasetGraph, mapping: Mapping) -> np.ndarray:
    m = g.n_edges
    ekeys = g.edge_keys()  # sorted and unique by construction
    keys = np.empty(len(mapping), dtype=np.int64)
    vals = np.empty(len(mapping), dtype=np.float64)
    for k, (e, val) in enumerate(mapping.items()):
        if not isinstance(e, tuple) or len(e) != 2:
            raise TypeError(f"epsilon keys must be edges (u, v), got {short_repr(e)}")
        a, b = g.index_of(e[0], "epsilon key vertex"), g.index_of(e[1], "epsilon key vertex")
        keys[k] = min(a, b) * g.n + max(a, b)
        if isinstance(val, bool) or not isinstance(val, (numbers.Real, np.floating, np.integer)):
            raise TypeError(f"epsilon[{short_repr(e)}] must be a number, got {short_repr(val)}")
        vals[k] = float(val)
    pos = np.searchsorted(ekeys, keys)
    if m:
        notedge = ekeys[np.minimum(pos, m - 1)] != keys
    else:
        notedge = np.ones(keys.size, dtype=bool)
    if notedge.any():
        k = int(np.flatnonzero(notedge)[0])
        raise ValueError(f"epsilon key {short_repr(list(mapping.keys())[k])} is not an edge of the graph")
    out = np.full(m, np.nan)
    order = np.argsort(pos, kind="stable")
    ps, vs = pos[order], vals[order]
    dup = np.flatnonzero((ps[1:] == ps[:-1]) & (vs[1:] != vs[:-1]))
    if dup.size:
        k = int(ps[dup[0]])
        raise ValueError(f"epsilon gives edge ({short_repr(g.label(int(g.edge_u[k])))}, "
                         f"{short_repr(g.label(int(g.edge_v[k])))}) two different values")
    out[pos] = vals
    missing = np.isnan(out)
    if missing.any():
        k = int(np.flatnonzero(missing)[0])
        raise ValueError(f"epsilon mapping has no value for edge ({short_repr(g.label(int(g.edge_u[k])))}, "
                         f"{short_repr(g.label(int(g.edge_v[k])))})")
    return out


# ===================================================================== label setting
# Labels live in the pair's label space (probabilities for a generic pair, log-odds ``hi + lo`` for the DP
# pairs; see dpselect.binary.suitable): only comparisons and U are needed, so the proof above is unchanged.
def _label_setting_batch(g: DatasetGraph, pair: SuitablePair, src: np.ndarray, key: np.ndarray,
                         stop_at: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Multi-source label setting in vectorised batches (see the module docstring for the proof).

    Returns ``(label, lo, origin, pred, rounds)``: ``label + lo`` is each vertex's label (``lo`` the
    compensation term of log-odds labels, 0 for probability labels), ``+inf`` where nothing is implied;
    ``origin`` the fixed vertex a label comes from (-1 where it must be read off the ``pred`` chain).
    """
    n = g.n
    label = np.full(n, np.inf)
    lo = np.zeros(n)
    origin = np.full(n, -1, dtype=np.int64)
    pred = np.full(n, -1, dtype=np.int64)
    final = np.zeros(n, dtype=bool)
    in_front = np.zeros(n, dtype=bool)
    label[src] = key
    origin[src] = src
    final[src] = True
    indptr, indices = g.indptr, g.indices
    frontier = np.empty(0, dtype=np.int64)
    batch = src
    rounds = 0
    shift = pair.shift_weights()
    while batch.size:
        rounds += 1
        starts = indptr[batch]
        counts = indptr[batch + 1] - starts
        total = int(counts.sum())
        if total:
            ends = np.cumsum(counts)
            arcs = np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - counts), counts)
            heads = indices[arcs]
            tails = np.repeat(batch, counts)
            keep = ~final[heads]
            if not keep.all():
                arcs, heads, tails = arcs[keep], heads[keep], tails[keep]
            if arcs.size:
                # compare with the plain value; only the winners get the compensated (hi, lo) label
                vals = pair.arc_key_upper_hi(label[tails], arcs)
                better = vals < label[heads]
                if not better.all():
                    heads, tails, vals, arcs = heads[better], tails[better], vals[better], arcs[better]
                if heads.size:
                    order = np.lexsort((vals, heads))
                    hs = heads[order]
                    first = np.empty(hs.size, dtype=bool)
                    first[0] = True
                    np.not_equal(hs[1:], hs[:-1], out=first[1:])
                    sel = order[first]
                    h, t = heads[sel], tails[sel]
                    label[h], lo[h] = pair.arc_key_upper(label[t], lo[t], arcs[sel])
                    pred[h] = t
                    origin[h] = origin[t]
                    new = h[~in_front[h]]
                    in_front[new] = True
                    frontier = np.concatenate([frontier, new]) if frontier.size else new
        if not frontier.size:
            break
        fl = label[frontier]
        if shift is not None and float(fl.min()) >= SHIFT_FROM:
            _finish_shift_regime(g, shift, label, lo, origin, pred, final, frontier)
            rounds += 1
            break
        theta = _threshold(pair, fl, frontier)
        below = fl <= theta
        batch = frontier[below]
        frontier = frontier[~below]
        in_front[batch] = False
        final[batch] = True
        if stop_at >= 0 and final[stop_at]:
            break
    return label, lo, origin, pred, rounds


def _finish_shift_regime(g: DatasetGraph, shift: tuple, label: np.ndarray, lo: np.ndarray, origin: np.ndarray,
                         pred: np.ndarray, final: np.ndarray, frontier: np.ndarray) -> None:
    """Settle every unsettled vertex once all tentative labels are ``>= SHIFT_FROM`` (pure DP only).

    There ``U_e(l) = l + eps_e`` (to a relative ``1e-17`` on ``1 - a``, see ``_logspace.SHIFT_FROM``), so the
    remaining labels are shortest-path distances on the unsettled subgraph from the frontier, each frontier
    vertex starting at its tentative label (settled vertices have relaxed all their arcs already: Dijkstra's
    invariant). A super-source joined to the frontier with those offsets reduces it to one scipy Dijkstra
    run. Label setting would need one round per hop here (a path of 10^6 datasets: 5 * 10^5 rounds).
    Homogeneous epsilon: Dijkstra counts hops plus a fractional offset (exact however long the path); the
    labels themselves are then summed along the shortest-path tree with compensation, so they keep full
    relative precision at any depth.
    """
    unset = ~final
    ids = np.flatnonzero(unset)
    k = ids.size
    loc = np.full(g.n, -1, dtype=np.int64)
    loc[ids] = np.arange(k)
    keep = unset[g.arc_tail] & unset[g.indices]
    kind, eps, eps_edge = shift
    w = np.ones(int(keep.sum())) if kind == "hops" else np.asarray(eps, dtype=np.float64)[keep]
    fl = label[frontier]
    m = float(fl.min())
    offs = (fl - m) / eps if kind == "hops" else fl - m
    rows = np.concatenate([loc[g.arc_tail[keep]], np.full(frontier.size, k)])
    cols = np.concatenate([loc[g.indices[keep]], loc[frontier]])
    data = np.concatenate([w, offs + 1.0])                   # + 1: no zero weight on the super-source arcs
    A = sp.csr_matrix((data, (rows, cols)), shape=(k + 1, k + 1))
    dist, pr = dijkstra(A, directed=True, indices=k, return_predecessors=True)
    d, p = dist[:k] - 1.0, pr[:k]
    reach = np.isfinite(d)
    moved = reach & (p != k)                                 # labels improved inside the unsettled set
    mv = ids[moved]
    pred[mv] = ids[p[moved]]
    final[ids[reach]] = True
    origin[mv] = -1                                          # resolved from pred when needed (_check_compatible)
    if kind == "hops":
        # l = m + eps (o + hops): Dijkstra's distances are exact up to the fractional offsets (unit weights),
        # so one product and one sum: a few ulps of l however long the path
        label[mv] = m + eps * d[moved]
        lo[mv] = 0.0
        return
    # Per-edge epsilons: Dijkstra's float sums only choose the tree; the labels are recomputed along it as
    # root label + a compensated (two-sum) sum of the tree path's epsilons, by pointer jumping (log(depth)
    # vectorised steps), so they keep full relative precision at any depth.
    w_hi = np.zeros(k)
    a, b = np.minimum(pred[mv], mv), np.maximum(pred[mv], mv)
    e = np.searchsorted(g.edge_keys(), a * g.n + b)
    if eps_edge is None:
        eps_edge = np.empty(g.n_edges)
        eps_edge[g.arc_edge] = eps
    w_hi[moved] = eps_edge[e]
    w_lo = np.zeros(k)
    anc = np.where(moved, p, np.arange(k))
    anc[~reach] = np.flatnonzero(~reach)
    while True:
        nxt = anc[anc]
        if np.array_equal(nxt, anc):
            break
        s, err = ls.two_sum(w_hi, w_hi[anc])
        w_lo = w_lo + w_lo[anc] + err
        w_hi, anc = s, nxt
    root = ids[anc[moved]]
    hi, err = ls.two_sum(label[root], w_hi[moved])
    hi, lo_new = ls.two_sum(hi, err + lo[root] + w_lo[moved])
    label[mv] = hi
    lo[mv] = lo_new


def _threshold(pair: SuitablePair, fl: np.ndarray, frontier: np.ndarray) -> float:
    """``theta = min over frontier vertices x of min_e U_e(label(x))`` (at least the smallest label).

    ``U`` increases with the label, so the vertex of smallest label ``m`` gives an upper bound
    ``U_x(m)`` on ``theta``, and only vertices with labels ``<= U_x(m)`` (``U(a) >= a``) can attain the
    minimum: ``U`` is evaluated on those few, not on the whole frontier. For a homogeneous pair ``theta``
    is ``U(m)`` itself.
    """
    i = int(np.argmin(fl))
    m = float(fl[i])
    up = float(pair.vertex_min_key_upper(fl[i:i + 1], frontier[i:i + 1])[0])
    if not pair.homogeneous:
        cand = fl <= up
        if cand.sum() > 1:
            up = float(pair.vertex_min_key_upper(fl[cand], frontier[cand]).min())
    return max(up, m)


def _label_setting_heap(g: DatasetGraph, pair: SuitablePair, src: np.ndarray, key: np.ndarray,
                        stop_at: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Reference: the same multi-source label setting with a binary heap, one vertex at a time."""
    U = pair.scalar_key_upper()
    n = g.n
    label = [math.inf] * n
    lo = [0.0] * n
    origin = [-1] * n
    pred = [-1] * n
    final = [False] * n
    indptr, indices = g.indptr.tolist(), g.indices.tolist()
    heap: list[tuple[float, int]] = []
    for s, q in zip(src.tolist(), np.asarray(key, dtype=np.float64).tolist()):
        label[s], origin[s], final[s] = q, s, True
    stack = list(src.tolist())
    pops = 0
    while True:
        for x in stack:  # relax the arcs of newly settled vertices
            lx, lox = label[x], lo[x]
            for k in range(indptr[x], indptr[x + 1]):
                y = indices[k]
                if final[y]:
                    continue
                b, blo = U(lx, lox, k)
                if b < label[y]:
                    label[y], lo[y], pred[y], origin[y] = b, blo, x, origin[x]
                    heapq.heappush(heap, (b, y))
        stack = []
        while heap:
            b, y = heapq.heappop(heap)
            if not final[y] and b == label[y]:
                final[y] = True
                stack = [y]
                pops += 1
                break
        if not stack or (stop_at >= 0 and final[stop_at]):
            break
    return (np.asarray(label, dtype=np.float64), np.asarray(lo, dtype=np.float64),
            np.asarray(origin, dtype=np.int64), np.asarray(pred, dtype=np.int64), pops)


_ENGINES = {"batch": _label_setting_batch, "heap": _label_setting_heap}


def _path(g: DatasetGraph, pred: np.ndarray, x: int, limit: int = 10**6) -> list:
    out = [x]
    while pred[out[-1]] >= 0 and len(out) < limit:
        out.append(int(pred[out[-1]]))
    return out[::-1]


def _check_compatible(g: DatasetGraph, pair: SuitablePair, colour: int, is_src: np.ndarray,
                      qfull: np.ndarray, label: np.ndarray, lo: np.ndarray, origin: np.ndarray,
                      pred: np.ndarray, tol: float) -> None:
    """``q_j(s) <= U_e(A_j(x))`` on every arc ``x -> s`` into a fixed vertex, compared as labels.

    For the DP pairs labels are log-odds, so ``tol`` is a relative slack (on ``a`` and ``1 - a``); an exact
    0 next to a positive bound is never "within tolerance".
    """
    arcs = np.flatnonzero(is_src[g.indices])
    if not arcs.size:
        return
    tails, heads = g.arc_tail[arcs], g.indices[arcs]
    bound = pair.arc_key_upper_hi(label[tails], arcs)
    qk = label[heads]
    with np.errstate(invalid="ignore"):
        excess = np.where(qk <= bound, 0.0, qk - bound)
    worst = int(np.argmax(excess))
    if excess[worst] <= tol:
        return
    x, v = int(tails[worst]), int(heads[worst])
    chain = _path(g, pred, x)
    u = int(origin[x]) if origin[x] >= 0 else chain[0]      # the fixed vertex the bound comes from
    bprob = float(pair.key_probability(bound[worst:worst + 1], np.zeros(1))[0])
    w1 = slice(worst, worst + 1)
    b_hi, b_lo = pair.arc_key_upper(label[tails[w1]], lo[tails[w1]], arcs[w1])   # with the compensation term
    path = [g.label(i) for i in chain] + [g.label(v)]
    over, shown_bound = _excess(pair, b_hi, b_lo, float(qfull[v]), bprob, float(qfull[u]), len(path) - 1)
    shown = " - ".join(short_repr(p) for p in path[:12]) + (" - ..." if len(path) > 12 else "")
    j = colour
    msg = (f"partial mechanism cannot be extended privately: Pr[M({short_repr(g.label(v))}) = {j}] = "
           f"{qfull[v]:.12g} exceeds {shown_bound}, the strongest bound that "
           f"Pr[M({short_repr(g.label(u))}) = {j}] = {qfull[u]:.12g} induces on it (along the path {shown}), "
           f"by {over:.3g}; offending pair ({short_repr(g.label(u))}, {short_repr(g.label(v))})")
    if over < 1e-9:
        msg += (f". An excess this small is binary rounding: probabilities and delta such as 0.95 and 0.05 are "
                f"not exact in binary (0.95 + 0.05 < 1 exactly), so the bound falls just short of the value; "
                f"lower Pr[M({short_repr(g.label(v))}) = {j}] by the excess or give values exact in binary")
    raise NotExtendableError(msg, pair=(g.label(u), g.label(v)), colour=j, value_u=float(qfull[u]),
                             value_v=float(qfull[v]), bound=bprob, path=path)


def _excess(pair: SuitablePair, b_hi: np.ndarray, b_lo: np.ndarray, value: float, bprob: float,
            value_u: float, hops: int) -> tuple[float, str]:
    """(value − bound) as probabilities, and the bound as shown, precise where a probability near 1 cannot
    show it (1 vs 1 − 4e-17): for a homogeneous (epsilon, delta) pair the bound U^hops(value_u) in exact
    rationals from the floats (e^±epsilon rounded once: relative error ~1e-16 of each term), else from the
    bound label's logarithms."""
    if isinstance(pair, DPPair) and hops <= 64:
        e_up, e_dn = Fraction(math.exp(pair.epsilon)), Fraction(math.exp(-pair.epsilon))
        d, a = Fraction(pair.delta), Fraction(value_u)
        for _ in range(hops):
            a = min(Fraction(1), e_up * a + d, 1 - e_dn * (1 - a - d))
        c_f, over_f = float(1 - a), float(Fraction(value) - a)
    else:
        la_b, lc_b = (float(x[0]) for x in pair.key_logs(b_hi, b_lo))
        if bprob > 0.5 and value >= 0.5:   # near 1: the complements carry the precision (1 − value is exact)
            c_f = math.exp(lc_b)
            over_f = c_f - (1.0 - value)
        else:
            c_f, over_f = 1.0 - bprob, value - math.exp(la_b)
    shown = f"1 - {c_f:.3g}" if bprob > 0.5 and f"{1.0 - c_f:.12g}" == "1" else f"{bprob:.12g}"
    return over_f, shown


def _partial_arrays(g: DatasetGraph, partial: Any) -> tuple[np.ndarray, np.ndarray]:
    idx, vals = g.vertex_array(partial, "partial")
    bad = ~np.isfinite(vals) | (vals < 0) | (vals > 1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"partial values must be probabilities in [0, 1], got {float(vals[k])!r} at vertex "
                         f"{short_repr(g.label(int(idx[k])))}")
    return idx, vals


def _graph_for(graph: Any, epsilon: Any) -> DatasetGraph:
    """The DatasetGraph; a string epsilon names an edge attribute, and a failure to read it says so."""
    if not isinstance(epsilon, str):
        return as_dataset_graph(graph)
    try:
        return as_dataset_graph(graph, epsilon_attr=epsilon)
    except (TypeError, ValueError) as err:
        try:
            float(epsilon)
            hint = f"; to give every edge the same epsilon pass a number, e.g. epsilon={float(epsilon)!r}"
        except ValueError:
            hint = ""
        raise type(err)(f"epsilon={epsilon!r} is read as the name of the edge attribute holding each edge's "
                        f"epsilon, and that failed: {err}{hint}") from None


def _prepare(graph: Any, true_values: Any, partial: Any, epsilon: Any, delta: Any, pair: Any):
    g = _graph_for(graph, epsilon)
    T = _true_value_array(g, true_values)
    src, val = _partial_arrays(g, partial)
    pr = resolve_privacy(g, epsilon, delta, pair)
    return g, T, src, val, pr


def _extend(g: DatasetGraph, T: np.ndarray, src: np.ndarray, val: np.ndarray, pr: SuitablePair, *,
            tol: float, method: str) -> tuple[np.ndarray, dict]:
    """The optimal extension as ``log_prob`` (n x 2: log Pr[M = 0], log Pr[M = 1]) and run info."""
    engine = _ENGINES[method]
    is_src = np.zeros(g.n, dtype=bool)
    is_src[src] = True
    logs = {}
    rounds = {}
    for colour in (1, 0):
        q = val if colour == 1 else 1.0 - val
        qfull = np.zeros(g.n)
        qfull[src] = q
        label, lo, origin, pred, r = engine(g, pr, src, pr.source_keys(val, colour))
        _check_compatible(g, pr, colour, is_src, qfull, label, lo, origin, pred, tol)
        # Pr[M(w) = colour] = A_colour(w) where T(w) = colour: (log A, log(1 - A)); +inf labels -> A = 1
        mine = np.flatnonzero(T == colour)
        logs[colour] = (mine, *pr.key_logs(label[mine], lo[mine]))
        rounds[colour] = r
    log_prob = np.empty((g.n, 2))
    for colour, (mine, la, lc) in logs.items():
        log_prob[mine, colour] = la
        log_prob[mine, 1 - colour] = lc
    with np.errstate(divide="ignore"):
        log_prob[src, 1] = np.log(val)
        log_prob[src, 0] = np.log1p(-val)
    uncovered = _uncovered_ids(g, T, is_src)
    info = {"rounds": rounds, "boundary_hitting": uncovered.size == 0}
    bx, by = privacy_violations(g, pr, log_prob, tol)
    if bx.size:
        x, y = int(bx[0]), int(by[0])
        unc = [(g.label(int(g.edge_u[e])), g.label(int(g.edge_v[e]))) for e in uncovered[:10]]
        if not uncovered.size:  # pragma: no cover - excluded by Thm 1/2; kept as a guard
            raise RuntimeError(f"internal error: extension violates privacy on ({g.label(x)}, {g.label(y)})")
        px, py = math.exp(log_prob[x, 1]), math.exp(log_prob[y, 1])
        raise NoUniqueOptimumError(
            f"no unique optimal extension: the partial mechanism's vertices are not boundary-hitting (boundary "
            f"edge {short_repr(unc[0])} has no fixed endpoint; {uncovered.size} such edge(s)), and the vertex-wise "
            f"optima Pr[M({short_repr(g.label(x))}) = 1] = {px:.6g}, Pr[M({short_repr(g.label(y))}) = 1] = "
            f"{py:.6g} violate privacy on the edge ({short_repr(g.label(x))}, {short_repr(g.label(y))}), so "
            "several incomparable maximal extensions exist; fix the mechanism on a boundary-hitting set "
            "(see greedy_boundary_hitting_set)", edge=(g.label(x), g.label(y)), uncovered=unc)
    return log_prob, info


# ===================================================================== public API
_OUTPUTS = ("float", "log")


def optimal_mechanism(graph: Any, true_values: Any, partial: Mapping, *, epsilon: Any = None,
                      delta: float = 0.0, pair: SuitablePair | None = None, tol: float = 1e-9,
                      method: str = "batch") -> BinaryMechanism:
    """The unique optimal private extension of a partial binary mechanism, as a :class:`BinaryMechanism`.

    The mechanism is (epsilon, delta)-DP (or eps(.)-DP, or private for ``pair``) for the neighbour relation
    given by the edges, verified on every edge before returning (see :func:`optimal_extension`). It keeps
    both log-probabilities of every vertex (``.log_prob``) to full relative precision, and samples from them
    exactly.

    Parameters
    ----------
    graph, true_values : graph-like and mapping vertex -> 0 or 1
        As in :func:`optimal_extension`; the true binary answer ``T(v)`` at every vertex.
    partial : mapping vertex -> float in [0, 1]
        ``Pr[M(v) = 1]`` on the fixed set ``S`` (boundary-hitting for a unique optimum).
    epsilon : float, mapping or str, optional
        Keyword-only (as are the rest): as in :func:`optimal_extension`; required unless ``pair`` is given.
    delta : float, default 0.0
        Homogeneous δ in [0, 1).
    pair : SuitablePair, optional
        A custom homogeneous :class:`~dpselect.binary.suitable.SuitablePair`, instead of ``epsilon``/``delta``.
    tol : float, default 1e-9
        Slack allowed in the privacy inequalities: on log-probabilities, i.e. relative, for the DP pairs; on
        probabilities for a custom pair.
    method : {"batch", "heap"}, default "batch"
        ``"batch"``: vectorised label setting; ``"heap"``: the one-vertex-at-a-time reference.

    Returns
    -------
    BinaryMechanism
        The optimal mechanism, with ``pair`` attached (so :meth:`BinaryMechanism.violations` can re-check it).

    Raises
    ------
    NotExtendableError
        No private extension exists.
    NoUniqueOptimumError
        ``S`` is not boundary-hitting and the vertex-wise optima are not jointly private.

    Examples
    --------
    >>> import math
    >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
    ...                       epsilon=math.log(2))
    >>> m.prob_one.round(12).tolist(), m.log_prob.shape, m.violations()
    ([0.3, 0.4, 0.2, 0.1], (4, 2), [])
    """
    check_choice(method, "method", tuple(_ENGINES))
    tol = check_nonnegative(tol, "tol")
    g, T, src, val, pr = _prepare(graph, true_values, partial, epsilon, delta, pair)
    log_prob, info = _extend(g, T, src, val, pr, tol=tol, method=method)
    return BinaryMechanism(g, T, pair=pr, log_prob=log_prob, fixed=(src, val), info=info)


def optimal_extension(graph: Any, true_values: Any, partial: Mapping, *, epsilon: Any,
                      delta: float = 0.0, output: str = "float") -> dict:
    """Extend a partial binary mechanism to the unique optimal (epsilon, delta)-DP mechanism on all datasets.

    Vertices of ``graph`` are datasets, edges neighbouring pairs. The result maximises
    ``Pr[M(v) = T(v)]`` at *every* vertex simultaneously among all private mechanisms agreeing with
    ``partial`` (paper 002, Thm 1-2; paper 001, Thm 1), hence is optimal for every reasonable utility.

    Parameters
    ----------
    graph : networkx.Graph, iterable of (u, v) or (u, v, data) tuples, (E, 2) integer array, or DatasetGraph
        Undirected; self-loops rejected, duplicate edges merged. An integer array's vertices are
        ``0 .. max``.
    true_values : mapping vertex -> 0 or 1
        The true binary answer ``T(v)`` at every vertex.
    partial : mapping vertex -> float in [0, 1]
        ``Pr[M(v) = 1]`` on the fixed set ``S``; for a unique optimum ``S`` must be boundary-hitting (contain an
        endpoint of every edge whose endpoints have different true values), e.g.
        :func:`~dpselect.binary.graph.greedy_boundary_hitting_set`.
    epsilon : float > 0, mapping {(u, v): float >= 0}, or str
        Homogeneous epsilon, or heterogeneous ``eps(u, v)`` per edge (paper 001): a mapping keyed by edges in
        either orientation, or the name of a networkx / edge-list edge attribute.
    delta : float in [0, 1)
        Homogeneous delta (paper 002); 0 gives pure DP.
    output : "float" or "log"
        ``"float"`` (default): ``vertex -> Pr[M(v) = 1]``, a float correct to a few ulps *relative* where
        ``Pr[M(v) = 1]`` is small (down to the float range, ~1e-308); where ``Pr[M(v) = 0]`` is below
        ``2^-54`` it is 1.0 by float rounding (``BinaryMechanism.probability(v, 0)`` or ``output="log"``
        keep that side). ``"log"``: ``vertex -> (log Pr[M(v) = 0], log Pr[M(v) = 1])``, both to full
        relative precision (``-inf`` only where the probability is exactly 0).

    Returns
    -------
    dict
        One entry per vertex (the values of ``partial`` unchanged), as chosen by ``output``.

    Raises
    ------
    NotExtendableError
        No private extension exists; the message and ``.pair`` name an offending pair ``(u, v)`` of fixed
        vertices and the path along which ``u`` bounds ``v``.
    NoUniqueOptimumError
        ``S`` is not boundary-hitting and the vertex-wise optima are not jointly private.

    Privacy
    -------
    The returned mechanism is (epsilon, delta)-DP (or eps(.)-DP) for the neighbour relation given by the
    edges: ``Pr[M(u) = j] <= e^eps Pr[M(v) = j] + delta`` for every edge and both answers ``j``, verified
    on every edge on the log-probabilities before returning (slack 1e-9 in log space). Probabilities are
    computed in log-odds space (:mod:`dpselect.binary._logspace`), never as ``1 - (something)``, so a
    probability is exactly 0 or 1 only where the optimum is.

    Examples
    --------
    Paper 002, Example 3: the path v1 - v2 - v3 - v4, epsilon = log 2, Pr[blue] fixed on {v1, v4}.

    >>> import math
    >>> T = {"v1": 0, "v2": 1, "v3": 1, "v4": 0}          # 1 = blue
    >>> ext = optimal_extension([("v1", "v2"), ("v2", "v3"), ("v3", "v4")], T, {"v1": 0.3, "v4": 0.1},
    ...                         epsilon=math.log(2))
    >>> {v: round(x, 12) for v, x in ext.items()}
    {'v1': 0.3, 'v2': 0.4, 'v3': 0.2, 'v4': 0.1}

    Far from the boundary the answer that is not the true one keeps its (tiny) probability:

    >>> E = [(i, i + 1) for i in range(99)]
    >>> logs = optimal_extension(E, {i: int(i < 50) for i in range(100)}, {49: 0.6, 50: 0.4}, epsilon=0.5,
    ...                          output="log")
    >>> round(logs[99][1] / math.log(10), 6)              # log10 Pr[M(99) = 1] = log10(0.4 e^{-0.5 * 49})
    -11.038155
    """
    check_choice(output, "output", _OUTPUTS)
    mech = optimal_mechanism(graph, true_values, partial, epsilon=epsilon, delta=delta)
    return mech.probabilities if output == "float" else mech.log_probabilities


def optimal_probability(graph: Any, true_values: Any, partial: Mapping, vertex: Hashable, *,
                        epsilon: Any, delta: float = 0.0, check: bool = True,
                        output: str = "float") -> float | tuple[float, float]:
    """``Pr[M(vertex) = 1]`` of the optimal extension at one dataset (paper 002, Alg. 2).

    With ``check=False`` only one colour's label setting runs, and it stops as soon as ``vertex`` is settled
    (Dijkstra's early exit: the cost is that of the ball of vertices with smaller labels); the partial
    mechanism is then *assumed* compatible and ``S`` boundary-hitting. ``check=True`` (default) verifies both
    first, which needs the full passes.

    Parameters
    ----------
    graph, true_values : graph-like and mapping vertex -> 0 or 1
        As in :func:`optimal_extension`; the true binary answer ``T(v)`` at every vertex.
    partial : mapping vertex -> float in [0, 1]
        ``Pr[M(v) = 1]`` on the fixed set ``S``.
    vertex : hashable
        The dataset whose probability is wanted.
    epsilon : float, mapping or str
        Keyword-only (as are the rest): as in :func:`optimal_extension`.
    delta : float, default 0.0
        Homogeneous δ in [0, 1).
    check : bool, default True
        Verify compatibility and uniqueness first.
    output : {"float", "log"}, default "float"
        ``"log"`` returns ``(log Pr[M = 0], log Pr[M = 1])``.

    Returns
    -------
    float or (float, float)
        ``Pr[M(vertex) = 1]``, or both log-probabilities.

    Raises
    ------
    NotExtendableError, NoUniqueOptimumError
        As :func:`optimal_extension` (only with ``check=True``).

    Examples
    --------
    >>> import math
    >>> T = {"v1": 0, "v2": 1, "v3": 1, "v4": 0}
    >>> E = [("v1", "v2"), ("v2", "v3"), ("v3", "v4")]
    >>> round(optimal_probability(E, T, {"v1": 0.3, "v4": 0.1}, "v2", epsilon=math.log(2), check=False), 12)
    0.4
    >>> lp0, lp1 = optimal_probability(E, T, {"v1": 0.3, "v4": 0.1}, "v2", epsilon=math.log(2), output="log")
    >>> round(math.exp(lp0), 12), round(math.exp(lp1), 12)
    (0.6, 0.4)
    """
    check_choice(output, "output", _OUTPUTS)
    g, T, src, val, pr = _prepare(graph, true_values, partial, epsilon, delta, None)
    w = g.index_of(vertex)
    log_prob = _extend(g, T, src, val, pr, tol=1e-9, method="batch")[0] if check else None
    hit = np.flatnonzero(src == w)
    if hit.size:
        v = float(val[hit[0]])
        if output == "float":
            return v
        return (math.log1p(-v) if v < 1 else -math.inf, math.log(v) if v > 0 else -math.inf)
    if log_prob is not None:
        lp0, lp1 = float(log_prob[w, 0]), float(log_prob[w, 1])
    else:
        colour = int(T[w])
        label, lo, _, _, _ = _label_setting_batch(g, pr, src, pr.source_keys(val, colour), stop_at=w)
        la, lc = (float(x[0]) for x in pr.key_logs(label[w:w + 1], lo[w:w + 1]))
        lp0, lp1 = (lc, la) if colour == 1 else (la, lc)
    return (lp0, lp1) if output == "log" else math.exp(lp1)


def induced_bounds(graph: Any, partial: Mapping, *, epsilon: Any, delta: float = 0.0, colour: int = 1,
                   method: str = "batch", output: str = "float") -> dict:
    """The strongest induced condition (paper 001, Sec. IV-B) on every vertex, for answer ``colour``.

    Every private mechanism agreeing with ``partial`` has ``Pr[M(v) = colour]`` at most the bound (1 where
    nothing is implied; the partial values themselves on ``S``). One label-setting pass (see the module
    docstring).

    Parameters
    ----------
    graph : graph-like
        As in :func:`optimal_extension`.
    partial : mapping vertex -> float in [0, 1]
        ``Pr[M(v) = 1]`` on the fixed set ``S``.
    epsilon : float, mapping or str
        Keyword-only (as are the rest): as in :func:`optimal_extension`.
    delta : float, default 0.0
        Homogeneous δ in [0, 1).
    colour : {0, 1}, default 1
        The answer ``j`` bounded.
    method : {"batch", "heap"}, default "batch"
        The label-setting engine.
    output : {"float", "log"}, default "float"
        ``"log"`` gives the logarithm of the bound (to full relative precision also where the bound is
        within 1e-16 of 1 or below the float range).

    Returns
    -------
    dict
        ``vertex -> min over s in S and (s, v)-paths rho of U_rho(Pr[M(s) = colour])``, one entry per vertex.

    Raises
    ------
    ValueError
        ``colour`` not 0 or 1, an unknown ``method`` or ``output``, or a bad ``epsilon``/``delta``.

    Examples
    --------
    >>> import math
    >>> b = induced_bounds([(0, 1), (1, 2), (2, 3)], {0: 0.3, 3: 0.1}, epsilon=math.log(2))
    >>> [round(b[v], 12) for v in range(4)]
    [0.3, 0.4, 0.2, 0.1]
    >>> b0 = induced_bounds([(0, 1), (1, 2), (2, 3)], {0: 0.3, 3: 0.1}, epsilon=math.log(2), colour=0)
    >>> [round(b0[v], 12) for v in range(4)]
    [0.7, 0.85, 0.925, 0.9]
    """
    if colour not in (0, 1) or isinstance(colour, bool):
        raise ValueError(f"colour must be 0 or 1, got {short_repr(colour)}")
    check_choice(method, "method", tuple(_ENGINES))
    check_choice(output, "output", _OUTPUTS)
    g = _graph_for(graph, epsilon)
    src, val = _partial_arrays(g, partial)
    pr = resolve_privacy(g, epsilon, delta)
    label, lo = _ENGINES[method](g, pr, src, pr.source_keys(val, colour))[:2]
    la = pr.key_logs(label, lo)[0]
    with np.errstate(divide="ignore"):
        la[src] = np.log(val if colour == 1 else 1.0 - val)
    out = la if output == "log" else np.exp(la)
    return dict(zip(g.vertices, out.tolist()))
