"""Undirected simple graphs held as scipy sparse CSR arrays, and their loaders.

The influential-node applications (paper Sec. 7, thesis Ch. 6) work on an undirected simple graph
under *edge* differential privacy: two graphs are neighbours when they differ in exactly one edge.
:class:`Graph` stores such a graph as a symmetric 0/1 ``scipy.sparse.csr_array`` with sorted column
indices, together with the original node ids.

Loaders
-------
* :func:`load_edge_list` reads SNAP-style edge lists (whitespace separated, ``#``/``%`` comment lines)
  and CSV edge lists (comma separated, optional header);
* :func:`from_edges` builds a graph from two id arrays;
* :func:`from_networkx` converts a ``networkx`` graph (integer or arbitrary hashable node labels);
* :func:`load_dataset_graph` loads an edge-list path (the project's copy is found by
  :func:`dpselect.datasets.data_path`).

Normalisation (never silent): self-loops are dropped, and an edge listed several times, in either
direction, is kept once. The counts are stored in :attr:`Graph.self_loops_removed` and
:attr:`Graph.duplicate_edges_removed`, and a :class:`GraphNormalisationWarning` says so when a
loader had to drop something (SNAP's Enron lists every edge in both directions; that is the format,
not an error, so reversed copies that exactly mirror each other are counted but do not warn).

Public node set (edge-DP): two graphs are neighbours when they differ in one edge *on the same node set*,
so the node set -- the candidates of every private selection on the graph -- is public. Give it to the
loader: ``nodes=`` (the node ids) or ``n_nodes=`` (ids 0..n-1). Without either, the nodes are the
endpoints of the edges, read from the private data: :attr:`Graph.public_nodes` is then false and the
private applications (:mod:`dpselect.graphs`) emit :class:`dpselect.PrivacyLeakWarning` (a node
seen in one edge only is a candidate only when that edge is present -- an infinite privacy loss).
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._threads import map_in_threads, resolve_threads

__all__ = [
    "Graph",
    "GraphNormalisationWarning",
    "from_edges",
    "triangle_list",
    "from_networkx",
    "as_graph",
    "is_graph_like",
    "load_edge_list",
    "load_dataset_graph",
    "GRAPH_DATASETS",
    "PUBLIC_GRAPH_NODES",
    "check_public_nodes",
]

#: Real graphs shipped in the shared data directory: name -> file under ``graphs/``.
GRAPH_DATASETS: dict[str, str] = {
    "enron": "Email-Enron.txt",
    "github": "musae_git_edges.csv",
}

#: Published node counts of the shipped graphs (SNAP's Email-Enron: 36,692 nodes; MUSAE GitHub: 37,700), whose
#: node ids are 0..n-1. Edge-DP treats the node set as public; pass them as ``n_nodes=`` (the reproductions do),
#: so an isolated node of the published set stays a candidate whatever the edges are.
PUBLIC_GRAPH_NODES: dict[str, int] = {"enron": 36692, "github": 37700}


class GraphNormalisationWarning(UserWarning):
    """A loader dropped self-loops or repeated edges while building a simple graph.

    A :class:`UserWarning`, emitted by :func:`from_edges`, :func:`load_edge_list` and
    :func:`from_networkx` (``warn=False`` silences it); the counts stay on the graph
    (``self_loops_removed``, ``duplicate_edges_removed``). Its one argument, the message, says what was
    dropped and from which graph.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     g = from_edges([0, 1], [1, 1])          # a self-loop (1, 1)
    >>> [x.category.__name__ for x in w], g.self_loops_removed
    (['GraphNormalisationWarning'], 1)
    """


def _check_simple_adjacency(a: sp.csr_array) -> None:
    """Reject (never repair) anything that is not the adjacency of an undirected simple graph.

    Explicitly stored zeros are dropped first (they are not edges). Then: every entry must be 1
    (weight 2 is typically a duplicated edge), the diagonal must be zero (a self-loop would count as
    degree 2), and the matrix must be symmetric (an undirected graph).
    """
    a.sum_duplicates()   # duplicate (i, j) entries of a COO-built array add up: weight 2, rejected below
    a.eliminate_zeros()
    data = a.data
    if data.size and (data.dtype.kind not in "biuf" or not np.all(data == 1)):
        # the entry and where it sits are private (edges are the data under edge-DP): the rule only
        raise ValueError("adjacency must hold only 0/1 entries (an unweighted simple graph); list each edge once "
                         "(from_edges merges repeated edges)")
    diag = a.diagonal()
    if np.any(diag != 0):
        raise ValueError("adjacency must have a zero diagonal (no self-loops); from_edges drops self-loops for you")
    diff = abs(a - a.T)
    diff.eliminate_zeros()
    if diff.nnz:
        raise ValueError("adjacency must be symmetric (an undirected graph)")


class Graph:
    """An undirected simple graph stored as a symmetric sparse 0/1 CSR array.

    Build it with :func:`from_edges`, :func:`load_edge_list`, :func:`from_networkx` or
    :func:`load_dataset_graph`, which *normalise* (drop self-loops, merge repeated edges, sort and
    number the ids). The constructor itself *rejects* rather than repairs: ``ValueError`` for a
    non-square, non-symmetric adjacency, a non-zero diagonal (self-loop), an entry other than 0/1
    (e.g. weight 2), no nodes at all, or ``node_ids`` that are repeated or not sorted increasingly.
    Explicitly stored zeros are not edges and are dropped. The adjacency is copied, so later changes
    to the caller's array do not reach the graph.

    Parameters
    ----------
    adjacency : scipy sparse array, shape (n, n)
        Symmetric 0/1 adjacency with a zero diagonal (copied).
    node_ids : array-like of int, shape (n,)
        Original id of every node index, distinct and sorted increasingly.
    self_loops_removed, duplicate_edges_removed : int, default 0
        What a loader's normalisation dropped (recorded only).
    name : str, default "graph"
        Label for messages and tables.
    public_nodes : bool, default True
        Whether the node set is public (given by the caller) rather than read from the edges.

    Attributes
    ----------
    adjacency : scipy.sparse.csr_array
        (n, n) symmetric, int8 entries equal to 1, sorted indices, zero diagonal.
    node_ids : numpy.ndarray
        ``node_ids[i]`` is the original id (int64) of node index ``i``; sorted increasingly.
    n_nodes, n_edges : int
        Number of nodes (ids that appear in at least one edge, plus explicitly given isolated
        nodes) and of undirected edges.
    degrees : numpy.ndarray
        int64 degree of every node index.
    self_loops_removed, duplicate_edges_removed : int
        What normalisation dropped: self-loop lines, and edge lines that repeated an edge already
        listed (in the same or the reverse direction).
    name : str
        A label for messages and tables.
    public_nodes : bool
        Whether the node set was given by the caller (public) rather than read from the edges (see the
        module docstring). The constructor's node set is the adjacency's rows, given explicitly: true
        unless ``public_nodes=False`` is passed.

    Examples
    --------
    >>> g = from_edges([1, 2, 2, 3], [2, 1, 3, 3])   # (1,2) twice, one self-loop (3,3)
    >>> g.n_nodes, g.n_edges, g.degrees.tolist(), g.self_loops_removed, g.duplicate_edges_removed
    (3, 2, [1, 2, 1], 1, 1)
    """

    def __init__(self, adjacency: sp.csr_array, node_ids: np.ndarray, *, self_loops_removed: int = 0,
                 duplicate_edges_removed: int = 0, name: str = "graph", public_nodes: bool = True) -> None:
        if not sp.issparse(adjacency):
            raise TypeError(f"adjacency must be a scipy sparse array, got {type(adjacency).__name__}")
        adjacency = sp.csr_array(adjacency, copy=True)
        n = adjacency.shape[0]
        if adjacency.shape != (n, n):
            raise ValueError(f"adjacency must be square, got shape {adjacency.shape}")
        if n == 0:
            raise ValueError("adjacency must have at least one node, got shape (0, 0): a graph without nodes has "
                             "no candidate to select")
        node_ids = _check_ids(node_ids, "node_ids")
        if node_ids.shape != (n,):
            raise ValueError(f"node_ids must have one id per node ({n}), got shape {node_ids.shape}")
        if n > 1 and not np.all(node_ids[1:] > node_ids[:-1]):
            d = np.flatnonzero(node_ids[1:] <= node_ids[:-1])[0]
            if node_ids[d + 1] == node_ids[d]:
                raise ValueError(f"node_ids must be distinct, got id {int(node_ids[d])} twice (positions {d} "
                                 f"and {d + 1})")
            raise ValueError(f"node_ids must be sorted increasingly, got {int(node_ids[d])} before "
                             f"{int(node_ids[d + 1])} at position {d}; from_edges numbers any ids for you")
        _check_simple_adjacency(adjacency)
        adjacency = sp.csr_array((np.ones(adjacency.nnz, dtype=np.int8), adjacency.indices, adjacency.indptr),
                                 shape=(n, n))
        adjacency.sort_indices()
        self.adjacency = adjacency
        self.node_ids = node_ids
        self.self_loops_removed = int(self_loops_removed)
        self.duplicate_edges_removed = int(duplicate_edges_removed)
        self.name = name
        if not isinstance(public_nodes, (bool, np.bool_)):
            raise TypeError(f"public_nodes must be a bool, got {type(public_nodes).__name__}")
        self.public_nodes = bool(public_nodes)
        self.degrees = np.diff(adjacency.indptr).astype(np.int64)
        self._triangles: np.ndarray | None = None

    # -- basic statistics -----------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        """Number of nodes (``int``).

        >>> from_edges([0], [1], n_nodes=3).n_nodes
        3
        """
        return int(self.adjacency.shape[0])

    @property
    def n_edges(self) -> int:
        """Number of undirected edges (``int``).

        >>> from_edges([0, 1], [1, 2]).n_edges
        2
        """
        return int(self.adjacency.nnz // 2)

    @property
    def max_degree(self) -> int:
        """The largest degree (``int``; 0 without edges). Read from the data: a private statistic.

        >>> from_edges([0, 0], [1, 2]).max_degree
        2
        """
        return int(self.degrees.max()) if self.degrees.size else 0

    def __repr__(self) -> str:
        return (f"Graph({self.name!r}, n_nodes={self.n_nodes}, n_edges={self.n_edges}, "
                f"max_degree={self.max_degree})")

    def index_of(self, ids: ArrayLike) -> np.ndarray:
        """Node indices of original ids (``KeyError`` naming the first unknown id).

        Parameters
        ----------
        ids : int or array-like of int
            Original node ids.

        Returns
        -------
        numpy.ndarray of intp, shape (len(ids),)
            The node index of every id (a scalar id gives shape (1,)).

        Examples
        --------
        >>> from_edges([10, 20], [20, 30]).index_of([30, 10]).tolist()
        [2, 0]
        """
        arr = _check_ids(np.atleast_1d(ids) if not isinstance(ids, (str, bytes)) else ids, "ids")
        pos = np.searchsorted(self.node_ids, arr)
        pos_c = np.minimum(pos, max(self.n_nodes - 1, 0))
        bad = (pos >= self.n_nodes) | (self.node_ids[pos_c] != arr) if self.n_nodes else np.ones(arr.shape, bool)
        if bad.any():
            raise KeyError(f"node id {int(arr[np.flatnonzero(bad)[0]])} is not in graph {self.name!r}")
        return pos_c.astype(np.intp)

    def edges(self) -> np.ndarray:
        """Every undirected edge once, as node *indices* (u < v), sorted lexicographically.

        Returns
        -------
        numpy.ndarray of int64, shape (n_edges, 2)

        Examples
        --------
        >>> from_edges([2, 0], [1, 1]).edges().tolist()
        [[0, 1], [1, 2]]
        """
        coo = sp.triu(self.adjacency, k=1, format="coo")
        order = np.lexsort((coo.col, coo.row))
        return np.column_stack([coo.row[order], coo.col[order]]).astype(np.int64)

    def neighbours(self, i: int) -> np.ndarray:
        """Sorted neighbour indices of node index ``i``.

        Parameters
        ----------
        i : int
            A node index (not an original id: see :meth:`index_of`).

        Returns
        -------
        numpy.ndarray of int, shape (degree of i,)
            A view into the adjacency's column indices.

        Examples
        --------
        >>> from_edges([0, 0], [1, 2]).neighbours(0).tolist()
        [1, 2]
        """
        a = self.adjacency
        return a.indices[a.indptr[i]:a.indptr[i + 1]]

    def triangles(self) -> np.ndarray:
        """Triangles through every node = edges among its neighbours (int64, cached).

        Equal to the row sums of ``(A @ A) ∘ A`` divided by 2, but counted from the vectorised
        oriented listing :func:`triangle_list` (forming ``A @ A`` costs Σ d² entries, far more than
        the listing on a graph with a large hub).

        Returns
        -------
        numpy.ndarray of int64, shape (n_nodes,)
            The number of triangles through every node index.

        Examples
        --------
        >>> from_edges([0, 0, 1, 2], [1, 2, 2, 3]).triangles().tolist()
        [1, 1, 1, 0]
        """
        if self._triangles is None:
            tri, _ = _triangles_unsorted(self)   # counting needs no order
            self._triangles = np.bincount(tri.ravel(), minlength=self.n_nodes).astype(np.int64)
        return self._triangles


def triangle_list(graph: Graph) -> np.ndarray:
    """Every triangle of ``graph`` once, as a (n_triangles, 3) int64 array of node indices.

    Vectorised oriented listing: edges are oriented from lower to higher (degree, index) rank, every
    wedge u→v→w of the oriented graph is generated with numpy index arithmetic and kept when u→w is
    an edge (a sorted-key lookup). The number of wedges is at most O(m·sqrt(m)).

    Parameters
    ----------
    graph : Graph or networkx graph
        The graph (a networkx graph is converted with :func:`as_graph`).

    Returns
    -------
    numpy.ndarray of int64, shape (n_triangles, 3)
        Each row sorted increasingly, rows in lexicographic order.

    Examples
    --------
    >>> triangle_list(from_edges([0, 0, 1, 2], [1, 2, 2, 3])).tolist()
    [[0, 1, 2]]
    """
    tri, _ = _triangles_unsorted(as_graph(graph))
    tri = tri.astype(np.int64)
    tri.sort(axis=1)
    return tri[np.lexsort((tri[:, 2], tri[:, 1], tri[:, 0]))]


#: Wedges per chunk of the triangle listing at least (smaller graphs are listed in one piece).
_WEDGES_PER_CHUNK = 1 << 18


def _triangles_unsorted(g: Graph, *, slots: bool = False,
                       n_threads: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Every triangle once, unsorted, as (n_triangles, 3) node indices u, v, w in rank order.

    With ``slots``, also a (6, n_triangles) array of the CSR positions in ``g.adjacency`` of the directed
    edges u→v, v→u, u→w, w→u, v→w, w→v: the listing locates the three oriented edges anyway, so callers
    that index per-edge data (:func:`dpselect.utilities.graph.ebc`) need no search of their own. Both
    arrays are int32 (int64 for graphs with 2^31 or more adjacency entries).
    Left unsorted because sorting the triangles (Email-Enron: 727,044) costs about as much as listing them,
    and only :func:`triangle_list` needs an order. The wedge checks run on ``n_threads`` threads (default:
    the machine's cores, at most 4); the listing is the same for any number.
    """
    n = g.n_nodes
    a = g.adjacency
    # int32 node ids and slots halve the memory traffic of the per-wedge gathers; int64 only for graphs too large
    nnz = int(a.indptr[-1])
    itype = np.int32 if max(n, nnz) < 2 ** 31 else np.int64
    empty = np.empty((0, 3), dtype=itype), (np.empty((6, 0), dtype=itype) if slots else None)
    if n == 0 or g.n_edges == 0:
        return empty
    deg = g.degrees
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), deg))] = np.arange(n)
    row = np.repeat(np.arange(n, dtype=itype), np.diff(a.indptr))
    col = a.indices.astype(itype, copy=False)
    # filtering the sorted CSR in place keeps it row-major with sorted columns, so the oriented graph
    # needs no sort and its k-th edge is adjacency slot fwd[k]
    fwd = np.flatnonzero(rank[row] < rank[col]).astype(itype)
    src = row[fwd]
    dst = col[fwd]
    outdeg = np.bincount(src, minlength=n)
    o_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(outdeg, out=o_indptr[1:])
    cnt = outdeg[dst]
    total = int(cnt.sum())
    if total == 0:
        return empty
    keys = src.astype(np.int64) * n + dst  # sorted: row-major with sorted columns

    def closed_wedges(edges: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The wedges u→v→w over oriented edges e0..e1 (as u→v) that close into triangles."""
        e0, e1 = edges
        c = cnt[e0:e1]
        m = int(c.sum())
        offsets = np.cumsum(c) - c
        e_uv = np.repeat(np.arange(e0, e1, dtype=np.int64), c)
        e_vw = np.repeat(o_indptr[dst[e0:e1]] - offsets, c) + np.arange(m, dtype=np.int64)
        query = src[e_uv].astype(np.int64) * n + dst[e_vw]
        e_uw = np.minimum(np.searchsorted(keys, query), keys.size - 1)
        hit = keys[e_uw] == query
        return e_uv[hit], e_vw[hit], e_uw[hit]

    # chunks of about equal wedge counts, checked by several threads (numpy releases the GIL); in order,
    # so the listing does not depend on the thread count
    threads = resolve_threads(n_threads)
    chunks = int(min(max(total // _WEDGES_PER_CHUNK, 1), 4 * threads))
    cuts = np.searchsorted(np.cumsum(cnt), np.linspace(0, total, chunks + 1)[1:-1])
    bounds = [0, *(int(x) for x in cuts), fwd.size]
    parts = map_in_threads(closed_wedges, list(zip(bounds[:-1], bounds[1:])), threads)
    e_uv, e_vw, e_uw = (np.concatenate([p[i] for p in parts]) for i in range(3))
    tri = np.column_stack([src[e_uv], dst[e_uv], dst[e_uw]])
    if not slots:
        return tri, None
    # the reverse of slot s: in a symmetric CSR, the CSC order of the entries is their CSR order transposed
    rev = sp.csr_array((np.arange(nnz, dtype=itype), a.indices, a.indptr), shape=a.shape).tocsc().data
    f_uv, f_vw, f_uw = fwd[e_uv], fwd[e_vw], fwd[e_uw]
    return tri, np.stack([f_uv, rev[f_uv], f_uw, rev[f_uw], f_vw, rev[f_vw]])


_INT64_MAX = np.iinfo(np.int64).max


def _check_ids(values: Any, name: str) -> np.ndarray:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a 1-D array of integer node ids, got the string {values!r}")
    if values is not None and not isinstance(values, np.ndarray) and not hasattr(values, "__len__") \
            and hasattr(values, "__iter__"):
        values = list(values)  # generators, dict views, sets
    elif isinstance(values, (set, frozenset)):
        values = sorted(values)
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array of integer node ids: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of integer node ids, got {arr.ndim} dimensions")
    if arr.size and arr.dtype.kind == "u" and arr.max() > _INT64_MAX:
        raise ValueError(f"{name} must be node ids <= {_INT64_MAX} (int64)")
    if arr.size and not (np.issubdtype(arr.dtype, np.integer) and arr.dtype != np.bool_):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            if np.any(np.abs(arr) >= 2.0 ** 63):
                raise ValueError(f"{name} must be node ids that fit in int64")
            return arr.astype(np.int64)
        bad = arr[0] if arr.dtype == object else arr.ravel()[0].item()
        raise TypeError(f"{name} must hold integer node ids, got dtype {arr.dtype} (e.g. {bad!r})")
    if arr.dtype == object:  # empty object array
        return np.empty(0, dtype=np.int64)
    return arr.astype(np.int64, copy=False)


def from_edges(u: ArrayLike | Iterable[int], v: ArrayLike | Iterable[int], *, nodes: Iterable[int] | None = None,
               n_nodes: int | None = None, name: str = "graph", warn: bool = True) -> Graph:
    """Build an undirected simple graph from edge endpoint arrays ``u[i] -- v[i]``.

    Self-loops are dropped and an edge given several times (in either direction) is kept once;
    both are counted on the result (``self_loops_removed``, ``duplicate_edges_removed``) and, when
    ``warn`` is true, reported with a :class:`GraphNormalisationWarning` -- except for the SNAP
    convention of listing *every* edge exactly once in each direction, which is recognised and
    accepted silently (still counted).

    Parameters
    ----------
    u, v : array-like of int
        Original node ids of the endpoints (any int64 values; they become ``Graph.node_ids``).
    nodes : iterable of int, optional
        The public node set (edge-DP: the candidates of a private selection), isolated nodes included;
        the graph is then marked ``public_nodes``. With empty ``u`` and ``v`` this builds a graph without
        edges. An endpoint outside ``nodes`` is a ``ValueError``, as is a graph with no node at all.
    n_nodes : int, optional
        The public node set as ids ``0..n_nodes-1`` (``public_nodes``); an endpoint outside it is a
        ``ValueError``. Give ``nodes`` or ``n_nodes``, not both. Neither: the nodes are the endpoints,
        read from the data (``public_nodes`` false; the private applications warn).
    name : str
        Label of the graph.
    warn : bool
        Emit a warning when something was normalised (default True).

    Returns
    -------
    Graph

    Examples
    --------
    >>> g = from_edges([0, 1], [1, 2])
    >>> g.n_nodes, g.n_edges, g.max_degree, g.public_nodes
    (3, 2, 2, False)
    >>> g = from_edges([0], [1], n_nodes=3)     # node 2 is a public candidate without any edge
    >>> g.n_nodes, g.degrees.tolist(), g.public_nodes
    (3, [1, 1, 0], True)
    """
    a = _check_ids(u, "u")
    b = _check_ids(v, "v")
    if a.shape != b.shape:
        raise ValueError("u and v must have the same length (one edge per position)")
    if nodes is not None and not isinstance(nodes, (np.ndarray, str, bytes)) and not hasattr(nodes, "__iter__"):
        raise TypeError(f"nodes must be an iterable of integer node ids, got {type(nodes).__name__}")
    if nodes is not None and n_nodes is not None:
        raise ValueError("give the public node set as nodes= (ids) or n_nodes= (ids 0..n-1), not both")
    if n_nodes is not None:
        n_pub = _check_n_nodes(n_nodes)
        extra = np.arange(n_pub, dtype=np.int64)
        out = (a < 0) | (a >= n_pub) | (b < 0) | (b >= n_pub)
        if out.any():
            # which edge, and its endpoints, are private under edge-DP: not named
            raise ValueError(f"n_nodes={n_pub} makes the public node ids 0..{n_pub - 1}, but an edge has an "
                             "endpoint outside them")
    else:
        extra = _check_ids(nodes if nodes is not None else np.empty(0, np.int64), "nodes")
    if a.size == 0 and extra.size == 0:
        raise ValueError("u and v are empty and no nodes were given: a graph needs at least one node "
                         "(for a graph without edges pass its node ids as nodes=)")
    public = n_nodes is not None or nodes is not None
    if nodes is not None and a.size:
        known = np.unique(extra)
        ends = np.concatenate([a, b])
        pos = np.minimum(np.searchsorted(known, ends), max(known.size - 1, 0))
        outside = (known[pos] != ends) if known.size else np.ones(ends.size, dtype=bool)
        outside = outside[:a.size] | outside[a.size:]
        if outside.any():
            raise ValueError("nodes= is the public node set, but an edge has an endpoint outside it")
    ids, inv = np.unique(np.concatenate([a, b, extra]), return_inverse=True)
    inv = inv.ravel()
    n = ids.size
    ia, ib = inv[:a.size], inv[a.size:2 * a.size]
    loops = ia == ib
    n_loops = int(loops.sum())
    ia, ib = ia[~loops], ib[~loops]
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    keys = lo.astype(np.int64) * n + hi
    uniq, counts = np.unique(keys, return_counts=True)
    n_dup = int(keys.size - uniq.size)
    if n_dup and warn:
        # SNAP convention: each edge listed once per direction -> counts all 2 with both directions present
        # distinct directed lines counted after a sort: plain np.unique takes a hash path on recent numpy
        # (2.4) that is far slower for int64 keys, most of the time of loading Email-Enron
        fwd = np.sort(ia.astype(np.int64) * n + ib)
        n_fwd = int(fwd.size and 1 + np.count_nonzero(fwd[1:] != fwd[:-1]))
        symmetric_listing = bool(np.all(counts == 2) and n_fwd == keys.size and n_fwd == 2 * uniq.size)
        if not symmetric_listing:
            warnings.warn(f"{name}: {n_dup} repeated edge line(s) (same or reversed direction) merged into "
                          f"single undirected edges", GraphNormalisationWarning, stacklevel=2)
    if n_loops and warn:
        warnings.warn(f"{name}: {n_loops} self-loop(s) removed", GraphNormalisationWarning, stacklevel=2)
    r, c = uniq // n, uniq % n
    rows = np.concatenate([r, c])
    cols = np.concatenate([c, r])
    adj = sp.csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n))
    adj.sum_duplicates()
    adj.sort_indices()
    return Graph(adj, ids, self_loops_removed=n_loops, duplicate_edges_removed=n_dup, name=name,
                 public_nodes=public)


def _check_n_nodes(n_nodes: Any) -> int:
    if isinstance(n_nodes, (bool, np.bool_)) or not isinstance(n_nodes, (int, np.integer)):
        raise TypeError(f"n_nodes must be an int (the public number of nodes, ids 0..n_nodes-1), got "
                        f"{n_nodes!r}")
    if n_nodes < 1:
        raise ValueError(f"n_nodes must be >= 1 (a graph needs a node to select), got {int(n_nodes)}")
    return int(n_nodes)


def check_public_nodes(graph: Graph, where: str, *, stacklevel: int = 3) -> None:
    """Warn (:class:`dpselect.PrivacyLeakWarning`) when ``graph``'s node set was read from its edges.

    Called by the private applications on a graph (``where`` names the caller in the message).

    Parameters
    ----------
    graph : Graph
        The graph a private selection runs on.
    where : str
        The caller, named in the warning.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (3: the caller of the function that calls this one).

    Returns
    -------
    None
        Warns and returns; nothing is released.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     check_public_nodes(from_edges([0, 1], [1, 2]), "demo")
    ...     check_public_nodes(from_edges([0, 1], [1, 2], n_nodes=3), "demo")
    >>> [x.category.__name__ for x in w]
    ['PrivacyLeakWarning']
    """
    if graph.public_nodes:
        return
    from .exceptions import PrivacyLeakWarning, _note_read_from_data

    _note_read_from_data("nodes (the candidate set)")
    warnings.warn(
        f"{where}: the candidate node set of graph {graph.name!r} was read from its private edge list "
        "(the endpoints of its edges; their number is private, not shown); a node seen in one edge only is a candidate only "
        "when that edge is present, so the result is not ε-edge-DP as stated. Build the graph with its public "
        "node set: nodes= (ids) or n_nodes= (ids 0..n-1) of from_edges, load_edge_list or from_networkx.",
        PrivacyLeakWarning, stacklevel=stacklevel)


def _bad_line(lines: list[str], delimiter: str | None, first_line_no: int, path: Path) -> None:
    """Slow path: find and report the first malformed line."""
    for no, line in zip(range(first_line_no, first_line_no + len(lines)), lines):
        fields = line.split(delimiter) if delimiter else line.split()
        fields = [f.strip() for f in fields]
        if len(fields) != 2 or not all(fields):
            # the line (its number and content) is private data: the rule only
            raise ValueError(f"{path}: malformed edge line: expected two node ids separated by "
                             f"{'a comma' if delimiter == ',' else 'whitespace'}")
        for f in fields:
            try:
                int(f)
            except ValueError:
                raise ValueError(f"{path}: a node id is not an integer") from None


def load_edge_list(path: str | os.PathLike, *, delimiter: str | None = "auto", header: bool | None = None,
                   name: str | None = None, warn: bool = True, nodes: Iterable[int] | None = None,
                   n_nodes: int | None = None) -> Graph:
    """Load an undirected simple graph from a SNAP-style or CSV edge list.

    One edge per line: two integer node ids separated by whitespace (SNAP ``.txt``) or a comma
    (``.csv``). Blank lines and lines starting with ``#`` or ``%`` are skipped. Self-loops and
    repeated/reversed edges are normalised as in :func:`from_edges`.

    Parameters
    ----------
    path : str or path-like
        The file. ``FileNotFoundError`` naming it when absent.
    delimiter : {"auto", None, ","} or str
        ``"auto"`` (default): comma for ``.csv`` files or when the first data line contains a comma,
        whitespace otherwise. ``None`` means any whitespace.
    header : bool, optional
        Whether the first data line is a header (e.g. ``id_1,id_2``). Default: a first line whose
        fields are both non-numeric is taken as a header; any other non-integer field is an error.
    name : str, optional
        Label of the graph (default: the file name).
    warn : bool
        Warn about normalisation (see :func:`from_edges`).
    nodes, n_nodes : optional
        The public node set, as in :func:`from_edges` (omitted: the endpoints, read from the data).

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        A line does not hold exactly two fields, or an id is not an integer (message gives
        ``path:line``).

    Returns
    -------
    Graph
        Normalised as in :func:`from_edges`; ``public_nodes`` is true when ``nodes`` or ``n_nodes`` was given.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.txt"
    >>> _ = p.write_text("# toy\\n0\\t1\\n1\\t0\\n1\\t2\\n2\\t1\\n")
    >>> load_edge_list(p)
    Graph('g.txt', n_nodes=3, n_edges=2, max_degree=2)
    """
    p = _edge_file(path)
    data = np.frombuffer(p.read_bytes(), dtype=np.uint8)
    lines = _EdgeLines(data)
    if lines.data.size == 0:
        raise ValueError(f"{p}: no edges found (empty file or only comments)")
    first = lines.text(lines.data[0])
    if delimiter == "auto":
        delimiter = "," if (p.suffix.lower() == ".csv" or "," in first) else None
    fields = [f.strip() for f in (first.split(delimiter) if delimiter else first.split())]
    if header is None:
        header = len(fields) == 2 and not any(_is_int(f) for f in fields)
    if header:
        lines.drop_first()
        if lines.data.size == 0:
            raise ValueError(f"{p}: no edges found after the header line")
    ids = lines.parse_pairs(delimiter, p)
    return from_edges(ids[0::2], ids[1::2], name=name or p.name, warn=warn, nodes=nodes, n_nodes=n_nodes)


def _edge_file(path: Any) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like naming an edge-list file, got {type(path).__name__}")
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"edge list file not found: {p}")
    if p.is_dir():
        raise IsADirectoryError(f"edge list path is a directory, not a file: {p}")
    return p


def _is_int(s: str) -> bool:
    try:
        int(s)
        return True
    except ValueError:
        return False


#: ids of up to 18 digits always fit int64; longer tokens go through Python's int (numpy's text parser saturates)
_MAX_FAST_DIGITS = 18
_IS_SPACE = np.zeros(256, dtype=bool)
_IS_SPACE[[9, 10, 11, 12, 13, 32]] = True   # what str.split() splits on, in ASCII


class _EdgeLines:
    """The lines of an edge-list file as byte ranges, classified with whole-array numpy operations.

    Parsing is one C pass (``np.fromstring``) over the data bytes once every line is known to hold two
    fields; the line-by-line Python scan runs only to name the first bad line of a malformed file.
    """

    def __init__(self, data: np.ndarray) -> None:
        self.bytes = data
        nl = np.flatnonzero(data == 10)
        self.starts = np.concatenate(([0], nl + 1))
        self.ends = np.concatenate((nl, [data.size]))       # exclusive, without the newline
        # first non-blank byte of each line: step over leading whitespace (a few steps at most in practice)
        pos = self.starts.copy()
        todo = np.flatnonzero(pos < self.ends)
        while todo.size:
            todo = todo[_IS_SPACE[data[pos[todo]]]]
            pos[todo] += 1
            todo = todo[pos[todo] < self.ends[todo]]
        nonblank = pos < self.ends
        lead = np.zeros(pos.size, dtype=np.uint8)
        lead[nonblank] = data[pos[nonblank]]
        # blank and comment lines are skipped
        self.data = np.flatnonzero(nonblank & (lead != ord("#")) & (lead != ord("%")))

    def text(self, line: int) -> str:
        return bytes(self.bytes[self.starts[line]:self.ends[line]]).decode("utf-8", errors="replace")

    def drop_first(self) -> None:
        self.data = self.data[1:]

    def parse_pairs(self, delimiter: str | None, path: Path) -> np.ndarray:
        """The ids of every data line (two per line) as one int64 array; ``ValueError`` naming ``path:line``."""
        buf = self._data_bytes()
        sep = _IS_SPACE[buf]
        if delimiter:
            if len(delimiter) != 1 or delimiter.isspace():
                return self._slow(delimiter, path)
            is_delim = buf == ord(delimiter)
            line_starts = self._line_offsets()
            per_line = np.add.reduceat(is_delim, line_starts[:-1]) if buf.size else np.zeros(0, np.int64)
            bad = np.flatnonzero(per_line != 1)
            if bad.size:
                self._report(int(bad[0]), delimiter, path)
            sep |= is_delim
            buf = np.where(is_delim, np.uint8(32), buf)
        tok_start = ~sep & np.concatenate(([True], sep[:-1]))
        tok_end = ~sep & np.concatenate((sep[1:], [True]))
        line_starts = self._line_offsets()
        per_line = np.add.reduceat(tok_start, line_starts[:-1])
        bad = np.flatnonzero(per_line != 2)
        if bad.size:
            self._report(int(bad[0]), delimiter, path)
        s_idx, e_idx = np.flatnonzero(tok_start), np.flatnonzero(tok_end)
        if s_idx.size and int((e_idx - s_idx).max()) >= _MAX_FAST_DIGITS:
            return self._slow(delimiter, path)
        try:
            ids = np.fromstring(bytes(buf).decode("latin-1"), dtype=np.int64, sep=" ")
        except ValueError:
            ids = np.zeros(0, dtype=np.int64)
        if ids.size != 2 * self.data.size:
            return self._slow(delimiter, path)
        return ids

    def _data_bytes(self) -> np.ndarray:
        """The data lines' bytes, each line ended by one newline byte (a separator)."""
        lengths = self.ends[self.data] - self.starts[self.data] + 1
        if self.data.size == 0:
            return np.zeros(0, dtype=np.uint8)
        if self.data.size == self.starts.size or (self.data[-1] - self.data[0] + 1 == self.data.size):
            a, b = int(self.starts[self.data[0]]), int(self.ends[self.data[-1]])
            out = np.concatenate((self.bytes[a:b], [np.uint8(10)]))   # contiguous: one slice
        else:
            idx = np.repeat(self.starts[self.data] - np.cumsum(np.concatenate(([0], lengths[:-1]))), lengths)
            idx += np.arange(idx.size)
            out = self.bytes[np.minimum(idx, self.bytes.size - 1)].copy()
            out[np.cumsum(lengths) - 1] = 10
        return out

    def _line_offsets(self) -> np.ndarray:
        lengths = self.ends[self.data] - self.starts[self.data] + 1
        return np.concatenate(([0], np.cumsum(lengths)))

    def _report(self, i: int, delimiter: str | None, path: Path) -> None:
        line = int(self.data[i])
        _bad_line([self.text(line)], delimiter, line + 1, path)
        raise ValueError(f"{path}: malformed edge line: expected two node ids")  # pragma: no cover

    def _slow(self, delimiter: str | None, path: Path) -> np.ndarray:
        """Python's int per field: exact for any size, and names the first bad line."""
        out = np.empty(2 * self.data.size, dtype=np.int64)
        for j, line in enumerate(self.data.tolist()):
            _bad_line([self.text(line)], delimiter, line + 1, path)
            text = self.text(line)
            fields = text.split(delimiter) if delimiter else text.split()
            try:
                out[2 * j:2 * j + 2] = [int(f) for f in fields]
            except OverflowError:
                raise ValueError(f"{path}: a node id is out of the int64 range") from None
        return out


def from_networkx(graph: Any, *, name: str | None = None, warn: bool = True, nodes: Iterable[Any] | None = None,
                  n_nodes: int | None = None) -> Graph:
    """Convert a ``networkx`` graph into a :class:`Graph` (a directed one is read as undirected, with a
    :class:`GraphNormalisationWarning` unless ``warn=False``).

    Integer node labels are kept as ids; other hashable labels are numbered 0.. in
    ``graph.nodes`` order, then the extra labels of ``nodes`` (the mapping is then
    ``labels[node_ids[i]]`` with that list). Isolated nodes are kept. Self-loops are dropped and reported.

    ``nodes`` (labels) or ``n_nodes`` (integer labels 0..n-1): the public node set (see
    :func:`from_edges`); every node of ``graph`` must be in it (``ValueError``). Omitted: ``graph.nodes``,
    which networkx usually fills from the edges, so the result's ``public_nodes`` is false and the
    private applications warn.

    Parameters
    ----------
    graph : networkx.Graph (or DiGraph, MultiGraph)
        The graph to convert.
    name : str, optional
        Label of the result (default: ``graph.name`` or "networkx graph").
    warn : bool, default True
        Warn about normalisation (dropped self-loops, a directed graph read as undirected).
    nodes : iterable of node labels, optional
        The public node set (every node of ``graph`` included).
    n_nodes : int, optional
        The public node set as integer labels 0..n_nodes-1.

    Returns
    -------
    Graph
        ``public_nodes`` true exactly when ``nodes`` or ``n_nodes`` was given.

    Examples
    --------
    >>> import networkx as nx
    >>> g = from_networkx(nx.path_graph(4))
    >>> g.degrees.tolist(), g.public_nodes, from_networkx(nx.path_graph(4), n_nodes=5).degrees.tolist()
    ([1, 2, 2, 1], False, [1, 2, 2, 1, 0])
    """
    try:
        own = list(graph.nodes)
        edge_list = list(graph.edges())
    except AttributeError:
        raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}") from None
    nodes_of = own
    if nodes is not None and n_nodes is not None:
        raise ValueError("give the public node set as nodes= (labels) or n_nodes= (labels 0..n-1), not both")
    if n_nodes is not None:
        nodes = range(_check_n_nodes(n_nodes))
    if nodes is not None:
        if isinstance(nodes, (str, bytes)) or not hasattr(nodes, "__iter__"):
            raise TypeError(f"nodes must be an iterable of node labels, got {nodes!r}")
        public = list(nodes)
        pub_set = set(public)
        if len(pub_set) != len(public):
            raise ValueError("nodes must not repeat a node label")
        missing = [x for x in own if x not in pub_set]
        if missing:
            raise ValueError(f"every node of graph must be in the public node set "
                             f"({'n_nodes=' + str(n_nodes) if n_nodes is not None else 'nodes='}), but "
                             f"{len(missing)} are not (e.g. {missing[0]!r})")
        own_set = set(own)
        nodes_of = own + [x for x in public if x not in own_set]
    if not nodes_of:
        raise ValueError(f"graph must have at least one node, got an empty {type(graph).__name__}")
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in nodes_of):
        label = {x: int(x) for x in nodes_of}
    else:
        label = {x: i for i, x in enumerate(nodes_of)}
    u = np.fromiter((label[a] for a, _ in edge_list), dtype=np.int64, count=len(edge_list))
    v = np.fromiter((label[b] for _, b in edge_list), dtype=np.int64, count=len(edge_list))
    label_name = name or (getattr(graph, "name", "") or "networkx graph")
    if warn and graph.is_directed():
        warnings.warn(f"{label_name}: a directed {type(graph).__name__} is read as undirected (the arcs u->v and v->u "
                      "become one edge u--v; the graphs of dpselect are undirected); pass graph.to_undirected() "
                      "or warn=False to say so", GraphNormalisationWarning, stacklevel=2)
    g = from_edges(u, v, nodes=np.fromiter(label.values(), dtype=np.int64, count=len(label)),
                   name=label_name, warn=warn and not graph.is_directed())
    g.public_nodes = nodes is not None
    return g


def as_graph(graph: Any, *, name: str = "graph", min_nodes: int = 1) -> Graph:
    """``graph`` as a :class:`Graph`: a Graph is returned as is, a networkx graph is converted once.

    Raises ``TypeError`` for anything else (saying what is accepted) and ``ValueError`` when the
    graph has fewer than ``min_nodes`` nodes.

    Parameters
    ----------
    graph : Graph or networkx graph
        The graph.
    name : str, default "graph"
        The parameter's name in error messages.
    min_nodes : int, default 1
        The fewest nodes accepted.

    Returns
    -------
    Graph
        ``graph`` itself when it is a :class:`Graph`.

    Examples
    --------
    >>> import networkx as nx
    >>> as_graph(nx.star_graph(3)).degrees.tolist()
    [3, 1, 1, 1]
    """
    if isinstance(graph, Graph):
        g = graph
    elif _is_networkx(graph):
        g = from_networkx(graph)
    else:
        raise TypeError(f"{name} must be a dpselect.graphs.Graph or a networkx graph (edge lists: "
                        f"dpselect.graphs.from_edges or load_edge_list), got {type(graph).__module__}."
                        f"{type(graph).__name__}")
    if g.n_nodes < min_nodes:
        raise ValueError(f"{name} must have at least {min_nodes} nodes to select from, got {g.n_nodes}")
    return g


def is_graph_like(x: Any) -> bool:
    """Whether :func:`as_graph` accepts ``x``: a :class:`Graph` or a networkx graph.

    networkx is recognised by duck typing and never imported.

    Parameters
    ----------
    x : object
        Anything.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_graph_like(from_edges([0], [1])), is_graph_like([(0, 1)])
    (True, False)
    """
    return isinstance(x, Graph) or _is_networkx(x)


def _is_networkx(x: Any) -> bool:
    # duck-typed on networkx's Graph API, without importing networkx (an optional dependency)
    return type(x).__module__.startswith("networkx.") and hasattr(x, "edges") and hasattr(x, "is_directed")


def load_dataset_graph(path: str | os.PathLike, **kwargs: Any) -> Graph:
    """Load an edge-list file (finding the papers' data belongs to the reproductions).

    Keywords go to :func:`load_edge_list`. An edge-list path needs ``nodes=`` or ``n_nodes=`` for a public
    node set (omitted: the endpoints, read from the data); a graph's published node count is in
    :data:`PUBLIC_GRAPH_NODES` (the file of the project's copy: ``dpselect.datasets.data_path("graphs",
    GRAPH_DATASETS[name])``).

    Parameters
    ----------
    path : str or path-like
        The edge-list file.
    **kwargs
        Passed to :func:`load_edge_list` (``nodes=``, ``n_nodes=``, ``name=``, ...).

    Returns
    -------
    Graph

    Examples
    --------
    >>> from dpselect.datasets import data_path
    >>> g = load_dataset_graph(data_path("graphs", GRAPH_DATASETS["enron"]), n_nodes=PUBLIC_GRAPH_NODES["enron"])
    >>> g.n_nodes, g.n_edges, g.max_degree, g.public_nodes
    (36692, 183831, 1383, True)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be an edge-list path (str or path-like), got {type(path).__name__}")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no edge-list file {str(path)!r}")
    return load_edge_list(p, **kwargs)
