"""The privacy check of a binary mechanism: every neighbouring pair whose output probabilities break it.

Used by :meth:`dpselect.binary.mechanism.BinaryMechanism.violations` and by the extension's own
checks; on log-probabilities for the DP pairs (relative precision), on probabilities for a custom pair.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .graph import DatasetGraph
from .suitable import SuitablePair

__all__ = ["privacy_violations"]


def privacy_violations(g: DatasetGraph, pair: SuitablePair, log_prob: ArrayLike, tol: float = 1e-9,
                       chunk: int = 1 << 21) -> tuple[np.ndarray, np.ndarray]:
    """Neighbouring pairs ``(x, y)`` (vertex ids) where ``Pr[M(y) = j]`` is too large given ``Pr[M(x) = j]``.

    ``log_prob[v] = (log Pr[M(v) = 0], log Pr[M(v) = 1])``. DP pairs are checked in log space on every edge,
    both orientations, both answers: ``|log P_x(j) - log P_y(j)| <= eps_e + tol`` for pure DP (``-inf`` only
    next to ``-inf``), ``log P_y(j) <= logaddexp(log P_x(j) + eps_e, log delta) + tol`` with delta; so
    ``tol`` is a relative slack. A generic pair is checked on the probabilities:
    ``P_y(j) <= U_e(P_x(j)) + tol``.

    Parameters
    ----------
    g : DatasetGraph
        The datasets and their neighbour relation.
    pair : SuitablePair
        The privacy notion checked.
    log_prob : array_like of shape (n, 2)
        The mechanism's log-probabilities per vertex (internal order).
    tol : float, default 1e-9
        Slack (relative for the DP pairs).
    chunk : int, default 2**21
        Edges checked per vectorised pass (bounds the memory).

    Returns
    -------
    x, y : ndarray of int64
        Internal vertex indices, one entry per violated orientation (empty when private).

    Examples
    --------
    >>> import math, numpy as np
    >>> from dpselect.binary import DatasetGraph, DPPair
    >>> g = DatasetGraph.from_arrays(2, [0], [1])
    >>> lp = np.log([[0.5, 0.5], [0.9, 0.1]])   # Pr[M(0) = 1] = 0.5 > e^1 · Pr[M(1) = 1]
    >>> x, y = privacy_violations(g, DPPair(epsilon=1.0), lp)
    >>> x.tolist(), y.tolist()
    ([1], [0])
    """
    xs, ys = [], []
    m = g.n_edges
    log_prob = np.asarray(log_prob, dtype=np.float64)
    c0, c1 = np.ascontiguousarray(log_prob[:, 0]), np.ascontiguousarray(log_prob[:, 1])
    delta = float(getattr(pair, "delta", 0.0))
    if pair.log_space and not pair.homogeneous:
        eps_edge: Any = getattr(pair, "edge_epsilon", None)
        if eps_edge is None:
            eps_edge = np.empty(m)
            eps_edge[g.arc_edge] = pair.arc_eps(np.arange(g.indices.size))
    elif pair.log_space:
        eps_edge = float(pair.arc_eps(None))
    for lo in range(0, m, chunk):
        e = np.arange(lo, min(m, lo + chunk), dtype=np.int64)
        u, v = g.edge_u[e], g.edge_v[e]
        if pair.log_space:
            lim = (eps_edge[e] if isinstance(eps_edge, np.ndarray) else eps_edge) + tol
            with np.errstate(invalid="ignore"):
                d0, d1 = c0[v] - c0[u], c1[v] - c1[u]          # nan when both are -inf: no violation
                # |log ratio| <= eps + tol on both answers is pure DP, hence also (eps, delta)-DP
                sus = np.flatnonzero((np.abs(d0) > lim) | (np.abs(d1) > lim))
                if not sus.size:
                    continue
                u, v = u[sus], v[sus]
                lim = lim[sus] if np.ndim(lim) else lim
                lu = np.stack([c0[u], c1[u]], axis=1)
                lv = np.stack([c0[v], c1[v]], axis=1)
                eps = (lim - tol)[:, None] if np.ndim(lim) else lim - tol
                if delta == 0:
                    up = (lv - lu > eps + tol).any(axis=1)        # v too likely given u
                    down = (lu - lv > eps + tol).any(axis=1)
                else:
                    logd = math.log(delta)
                    up = (lv > np.logaddexp(lu + eps, logd) + tol).any(axis=1)
                    down = (lu > np.logaddexp(lv + eps, logd) + tol).any(axis=1)
        else:  # a homogeneous custom pair: the same U on every arc
            pu = np.stack([np.exp(c0[u]), np.exp(c1[u])], axis=1)
            pv = np.stack([np.exp(c0[v]), np.exp(c1[v])], axis=1)
            U = pair.upper
            up = (pv[:, 1] > U(pu[:, 1]) + tol) | (pv[:, 0] > U(pu[:, 0]) + tol)
            down = (pu[:, 1] > U(pv[:, 1]) + tol) | (pu[:, 0] > U(pv[:, 0]) + tol)
        xs += [u[up], v[down]]
        ys += [v[up], u[down]]
    if not xs:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(xs), np.concatenate(ys)
