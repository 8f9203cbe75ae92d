"""Dataset graphs: vertices are datasets, edges are neighbouring pairs (paper 002, Sec. II-B).

:class:`DatasetGraph` is an immutable undirected simple graph stored as numpy arrays (an edge list with
``u < v`` plus a CSR adjacency whose arcs know their edge), built from a networkx graph, an edge list of
``(u, v)`` / ``(u, v, data)`` tuples with arbitrary hashable vertex ids, or integer arrays. networkx is optional.

Input rules (checked once): self-loops are rejected (a dataset is not its own neighbour); duplicate edges,
in either orientation, are merged into one (the neighbour relation is a set), unless they carry different
epsilon values, which is rejected.

Graph notions of paper 002 (Def. 3-8): :func:`boundary_edges`, :func:`boundary_vertices`,
:func:`is_boundary_hitting`, :func:`greedy_boundary_hitting_set`, :func:`minimum_boundary_hitting_set` and
:meth:`DatasetGraph.distances`.
"""
from __future__ import annotations

import heapq
import numbers
from collections.abc import Iterable, Mapping
from typing import Any, Hashable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra, maximum_bipartite_matching

from .._validation import short_repr

__all__ = ["DatasetGraph", "as_dataset_graph", "boundary_edges", "boundary_vertices",
           "is_boundary_hitting", "uncovered_boundary_edges", "greedy_boundary_hitting_set",
           "minimum_boundary_hitting_set"]


def _is_networkx(graph: Any) -> bool:
    return hasattr(graph, "adj") and hasattr(graph, "nodes") and hasattr(graph, "edges") and hasattr(
        graph, "is_directed")


class DatasetGraph:
    """An undirected simple graph of datasets with numpy storage.

    Vertices are datasets and edges neighbouring pairs: the neighbour model of the binary mechanisms. Build
    one with :meth:`from_edges`, :meth:`from_arrays`, :meth:`from_networkx` or :func:`as_dataset_graph`
    rather than with the constructor.

    Parameters
    ----------
    n : int
        Number of vertices (internally ``0 .. n-1``).
    u, v : int arrays of shape (E,)
        Edge endpoints (internal indices); self-loops are rejected, duplicate edges merged.
    labels : list, optional
        Keyword-only: the user's vertex ids, one per vertex, distinct (default: ``0 .. n-1``).
    edge_epsilon : float array of shape (E,), optional
        Keyword-only: one epsilon per given edge; duplicates of an edge must agree.

    Attributes
    ----------
    n : int
        Number of vertices; internally vertices are ``0 .. n-1``, :meth:`label` gives the user's id.
    edge_u, edge_v : int64 arrays
        The edges, ``edge_u < edge_v``, unique.
    indptr, indices, arc_edge : int64 arrays
        CSR adjacency: the arcs leaving ``i`` are ``indptr[i]:indptr[i+1]``, heading to ``indices[k]``, along
        edge ``arc_edge[k]``.
    edge_epsilon : float64 array or None
        Per-edge epsilon read from an edge attribute at construction (see :func:`as_dataset_graph`).

    Raises
    ------
    ValueError
        A self-loop, an endpoint outside ``0 .. n-1``, repeated labels, or conflicting epsilons on a
        duplicate edge.

    Examples
    --------
    >>> g = DatasetGraph.from_edges([("a", "b"), ("b", "c"), ("c", "b")])
    >>> g.n, g.n_edges, g.distance("a", "c")
    (3, 2, 2)
    """

    def __init__(self, n: int, u: np.ndarray, v: np.ndarray, *, labels: list | None = None,
                 edge_epsilon: np.ndarray | None = None) -> None:
        self.n = int(n)
        self._labels = labels
        self._index = None if labels is None else {x: i for i, x in enumerate(labels)}
        if self._index is not None and labels is not None and len(self._index) != len(labels):
            raise ValueError("vertices must be distinct")
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        if u.shape != v.shape or u.ndim != 1:
            raise ValueError("edge endpoint arrays must be 1-D of equal length")
        if u.size and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= self.n):
            raise ValueError(f"edge endpoints must be vertex indices in [0, {self.n})")
        loops = u == v
        if loops.any():
            i = int(np.flatnonzero(loops)[0])
            raise ValueError(f"graph has a self-loop at vertex {short_repr(self.label(int(u[i])))}: a dataset is "
                             "not its own neighbour (remove self-loops)")
        a, b = np.minimum(u, v), np.maximum(u, v)
        key = a * self.n + b
        key_u, first, inv = np.unique(key, return_index=True, return_inverse=True)
        if edge_epsilon is not None:
            edge_epsilon = np.asarray(edge_epsilon, dtype=np.float64)
            if edge_epsilon.shape != u.shape:
                raise ValueError("edge_epsilon must have one value per edge")
            if key_u.size != key.size:
                ref = edge_epsilon[first][inv]
                bad = ref != edge_epsilon
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise ValueError(
                        f"duplicate edge ({short_repr(self.label(int(a[i])))}, {short_repr(self.label(int(b[i])))}) has "
                        f"conflicting epsilon values {ref[i]!r} and {edge_epsilon[i]!r}")
            edge_epsilon = edge_epsilon[first]
        self.edge_u = a[first]
        self.edge_v = b[first]
        self.edge_epsilon = edge_epsilon
        m = self.edge_u.size
        tails = np.concatenate([self.edge_u, self.edge_v])
        heads = np.concatenate([self.edge_v, self.edge_u])
        eids = np.concatenate([np.arange(m), np.arange(m)])
        order = np.argsort(tails, kind="stable")
        self.indices = heads[order]
        self.arc_edge = eids[order]
        self.arc_tail = tails[order]
        self.indptr = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(tails, minlength=self.n), out=self.indptr[1:])
        self._csr = None
        self._edge_keys = None

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_arrays(cls, n: int, u: Any, v: Any, *, epsilon: Any = None) -> "DatasetGraph":
        """Graph on vertices ``0 .. n-1`` with edges ``(u[k], v[k])`` (fast path, no Python loops).

        Parameters
        ----------
        n : int
            Number of vertices, >= 1.
        u, v : array_like of int, shape (E,)
            The edge endpoints.
        epsilon : array_like of float, shape (E,), optional
            Keyword-only: one epsilon per edge (heterogeneous DP).

        Returns
        -------
        DatasetGraph

        Raises
        ------
        ValueError
            ``n`` is not an int >= 1, or an edge is invalid (see :class:`DatasetGraph`).

        Examples
        --------
        >>> g = DatasetGraph.from_arrays(4, [0, 1, 2], [1, 2, 3])
        >>> g.n, g.n_edges, g.distance(0, 3)
        (4, 3, 3)
        """
        if isinstance(n, bool) or not isinstance(n, (numbers.Integral, np.integer)) or int(n) < 1:
            raise ValueError(f"n must be an int >= 1, got {short_repr(n)}")
        return cls(int(n), np.asarray(u), np.asarray(v), edge_epsilon=epsilon)

    @classmethod
    def from_edges(cls, edges: Iterable, vertices: Iterable | None = None, *,
                   epsilon_attr: str | None = None) -> "DatasetGraph":
        """Graph from ``(u, v)`` or ``(u, v, data_dict)`` tuples; ``vertices`` adds isolated vertices/order.

        ``edges`` may also be an ``(E, 2)`` integer numpy array (or a list of its rows): without
        ``vertices`` the vertices are ``0 .. max``, as in :func:`as_dataset_graph`; with ``vertices`` the
        ids are looked up in it. Both, and a plain list of ``(int, int)`` tuples, take a vectorised path
        (no Python loop over the edges) and give the graph the loop would build.

        Parameters
        ----------
        edges : iterable of tuples or ndarray of shape (E, 2)
            The neighbouring pairs, with any hashable vertex ids.
        vertices : iterable, optional
            All vertex ids, distinct, in the order the graph keeps (adds isolated vertices); an edge with a
            vertex outside it is a ``ValueError``. Default: the vertices in order of first appearance.
        epsilon_attr : str, optional
            Keyword-only: read each edge's epsilon from this key of its data dict.

        Returns
        -------
        DatasetGraph

        Raises
        ------
        TypeError
            An edge that is not a 2- or 3-tuple, or ``epsilon_attr`` with an edge array.
        ValueError
            No vertex, repeated ``vertices``, an unknown vertex, a self-loop, or an edge without ``epsilon_attr``.

        Examples
        --------
        >>> import numpy as np
        >>> DatasetGraph.from_edges(np.array([[0, 1], [1, 2]])).distance(0, 2)
        2
        >>> DatasetGraph.from_edges([("x", "y")], vertices=["x", "y", "z"]).vertices
        ['x', 'y', 'z']
        """
        if isinstance(edges, np.ndarray):
            if epsilon_attr is not None:
                raise TypeError("an edge array carries no edge attributes: pass epsilon as a number, a mapping or "
                                "an array with one value per edge")
            return cls._from_int_array(_edge_array(edges), vertices, first_seen=False)
        if isinstance(edges, (list, tuple)) and epsilon_attr is None:
            arr = _int_pairs(edges)
            if arr is not None:
                return cls._from_int_array(arr, vertices, first_seen=True)
        labels: list = [] if vertices is None else list(vertices)
        index = {x: i for i, x in enumerate(labels)}
        if len(index) != len(labels):
            raise ValueError("vertices must be distinct")
        us, vs, eps = [], [], []
        for k, e in enumerate(edges):
            if not isinstance(e, (tuple, list)) or len(e) not in (2, 3):
                raise TypeError(f"edges[{k}] must be a (u, v) or (u, v, data) tuple, got {short_repr(e)}")
            for x in e[:2]:
                if x not in index:
                    if vertices is not None:
                        raise ValueError(f"edges[{k}] = {short_repr(e)} uses vertex {short_repr(x)} not in vertices")
                    index[x] = len(labels)
                    labels.append(x)
            us.append(index[e[0]])
            vs.append(index[e[1]])
            if epsilon_attr is not None:
                data = e[2] if len(e) == 3 else None
                if not isinstance(data, Mapping) or epsilon_attr not in data:
                    raise ValueError(f"edge {short_repr(tuple(e[:2]))} has no attribute {epsilon_attr!r}")
                eps.append(data[epsilon_attr])
        if not labels:
            raise ValueError("graph must have at least one vertex")
        return cls(len(labels), np.asarray(us, dtype=np.int64), np.asarray(vs, dtype=np.int64),
                   labels=labels, edge_epsilon=None if epsilon_attr is None else _eps_array(eps))

    @classmethod
    def _from_int_array(cls, arr: np.ndarray, vertices: Iterable | None, *, first_seen: bool) -> "DatasetGraph":
        """An (E, 2) int64 array of vertex ids. ``vertices`` given: ids looked up in it (their order is the
        graph's). Otherwise ``first_seen``: vertices in order of first appearance (what the tuple loop
        does), else ``0 .. max`` (the array convention)."""
        flat = arr.ravel()
        if vertices is not None:
            labels = list(vertices)
            if len(set(labels)) != len(labels):
                raise ValueError("vertices must be distinct")
            if not labels:
                raise ValueError("graph must have at least one vertex")
            lab = np.asarray(labels)
            if lab.ndim == 1 and lab.dtype.kind in "iu" and all(
                    isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool) for x in labels):
                order = np.argsort(lab, kind="stable")
                pos = np.searchsorted(lab[order], flat)
                pos = np.minimum(pos, lab.size - 1)
                found = lab[order][pos] == flat
                if not found.all():
                    k = int(np.flatnonzero(~found)[0])
                    e = tuple(int(x) for x in arr[k // 2])
                    raise ValueError(f"edges[{k // 2}] = {e} uses vertex {int(flat[k])} not in vertices")
                idx = order[pos]
                identity = bool(np.array_equal(lab, np.arange(lab.size)))
                return cls(lab.size, idx[0::2], idx[1::2], labels=None if identity else labels)
            return cls.from_edges([tuple(e) for e in arr.tolist()], vertices=labels)
        if flat.size == 0:
            raise ValueError("graph must have at least one vertex")
        if flat.min() < 0 and not first_seen:
            raise ValueError(f"an edge array must hold vertex ids >= 0 (vertices are 0 .. max), got {int(flat.min())}")
        if not first_seen:
            return cls(int(flat.max()) + 1, arr[:, 0], arr[:, 1])
        uniq, first, inv = np.unique(flat, return_index=True, return_inverse=True)
        rank = np.empty(uniq.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(uniq.size)  # order of first appearance
        idx = rank[inv.ravel()]
        labels = uniq[np.argsort(first, kind="stable")].tolist()
        identity = labels == list(range(len(labels)))
        return cls(len(labels), idx[0::2], idx[1::2], labels=None if identity else labels)

    @classmethod
    def from_networkx(cls, graph: Any, *, epsilon_attr: str | None = None) -> "DatasetGraph":
        """Graph from a networkx ``Graph`` (directed graphs and multigraphs are rejected).

        Parameters
        ----------
        graph : networkx.Graph
            An undirected simple graph; its node order is kept.
        epsilon_attr : str, optional
            Keyword-only: the edge attribute holding each edge's epsilon.

        Returns
        -------
        DatasetGraph

        Raises
        ------
        ValueError
            A directed graph or a multigraph, a self-loop, or an edge without ``epsilon_attr``.

        Examples
        --------
        >>> import networkx as nx
        >>> g = DatasetGraph.from_networkx(nx.path_graph(3))
        >>> g.n, g.n_edges
        (3, 2)
        """
        if graph.is_directed():
            raise ValueError("graph must be undirected (the neighbour relation is symmetric)")
        if getattr(graph, "is_multigraph", lambda: False)():
            raise ValueError("graph must be a simple graph, not a multigraph")
        edges = graph.edges(data=True) if epsilon_attr is not None else graph.edges()
        return cls.from_edges(edges, vertices=list(graph.nodes()), epsilon_attr=epsilon_attr)

    # ----------------------------------------------------------------- vertex ids
    def edge_keys(self) -> np.ndarray:
        """``edge_u * n + edge_v`` for every edge: sorted and unique (lookup of an edge by searchsorted).

        Returns
        -------
        ndarray of shape (n_edges,)
            int64 keys, computed once.

        Examples
        --------
        >>> DatasetGraph.from_arrays(3, [0, 1], [1, 2]).edge_keys().tolist()
        [1, 5]
        """
        keys = self._edge_keys
        if keys is None:
            keys = self._edge_keys = self.edge_u * self.n + self.edge_v
        return keys

    @property
    def n_edges(self) -> int:
        return int(self.edge_u.size)

    @property
    def vertices(self) -> list:
        """The user's vertex ids in internal order."""
        return list(range(self.n)) if self._labels is None else list(self._labels)

    def label(self, i: int) -> Hashable:
        """The user's id of internal vertex ``i``.

        Parameters
        ----------
        i : int
            An internal index, ``0 .. n-1``.

        Returns
        -------
        hashable

        Examples
        --------
        >>> DatasetGraph.from_edges([("a", "b")]).label(1)
        'b'
        """
        return i if self._labels is None else self._labels[i]

    def index_of(self, vertex: Hashable, name: str = "vertex") -> int:
        """The internal index of the user's vertex id ``vertex``.

        Parameters
        ----------
        vertex : hashable
            A vertex id of the graph.
        name : str, default "vertex"
            The name used in the error message.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            ``vertex`` is not a vertex of the graph.

        Examples
        --------
        >>> DatasetGraph.from_edges([("a", "b")]).index_of("b")
        1
        """
        if self._index is None:
            if isinstance(vertex, (numbers.Integral, np.integer)) and not isinstance(vertex, bool) \
                    and 0 <= int(vertex) < self.n:
                return int(vertex)
        else:
            try:
                return self._index[vertex]
            except (KeyError, TypeError):  # unknown or unhashable
                raise ValueError(f"{name} {short_repr(vertex)} is not a vertex of the graph") from None
        raise ValueError(f"{name} {short_repr(vertex)} is not a vertex of the graph")

    def indices_of(self, vertices: Iterable[Hashable], name: str = "vertex") -> np.ndarray:
        """Internal indices of ``vertices`` (vectorised when the vertices are ``0 .. n-1``).

        Parameters
        ----------
        vertices : iterable of hashable
            Vertex ids of the graph.
        name : str, default "vertex"
            The name used in the error message.

        Returns
        -------
        ndarray of shape (len(vertices),)
            int64 indices.

        Raises
        ------
        ValueError
            An id is not a vertex of the graph.

        Examples
        --------
        >>> DatasetGraph.from_edges([("a", "b"), ("b", "c")]).indices_of(["c", "a"]).tolist()
        [2, 0]
        """
        if self._index is None:
            arr = vertices if isinstance(vertices, np.ndarray) else np.asarray(list(vertices))
            if arr.ndim == 1 and arr.dtype.kind in "iu" and (arr.size == 0 or (arr.min() >= 0 and arr.max() < self.n)):
                return arr.astype(np.int64)
            vertices = arr.tolist()
        return np.asarray([self.index_of(v, name) for v in vertices], dtype=np.int64)

    def vertex_array(self, mapping: Any, name: str, *, dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray]:
        """``(indices, values)`` of a ``{vertex: value}`` mapping (vertices checked).

        Parameters
        ----------
        mapping : mapping
            ``vertex -> value``.
        name : str
            The parameter name used in error messages.
        dtype : numpy dtype, default float64
            Keyword-only: the dtype of ``values``.

        Returns
        -------
        indices : ndarray of shape (len(mapping),)
            int64 internal indices of the keys.
        values : ndarray of shape (len(mapping),)
            The values, of ``dtype``.

        Raises
        ------
        TypeError
            ``mapping`` is not a mapping, or a value is not a real number.
        ValueError
            A key is not a vertex.

        Examples
        --------
        >>> idx, vals = DatasetGraph.from_edges([("a", "b")]).vertex_array({"b": 0.5}, "alpha")
        >>> idx.tolist(), vals.tolist()
        ([1], [0.5])
        """
        if not isinstance(mapping, Mapping):
            raise TypeError(f"{name} must be a mapping vertex -> value, got {type(mapping).__name__}")
        idx = None
        if self._index is None and len(mapping):  # vertices 0..n-1: integer keys, checked in one pass
            keys = np.asarray(list(mapping.keys()))
            if keys.ndim == 1 and keys.dtype.kind in "iu" and keys.min() >= 0 and keys.max() < self.n:
                idx = keys.astype(np.int64)
        if idx is None:
            idx = np.fromiter((self.index_of(k, f"{name} key") for k in mapping.keys()), dtype=np.int64,
                              count=len(mapping))
        try:
            vals = np.fromiter(mapping.values(), dtype=dtype, count=len(mapping))
        except (TypeError, ValueError):
            raise TypeError(f"{name} values must be real numbers") from None
        return idx, vals

    # ----------------------------------------------------------------- distances
    def csr(self) -> sp.csr_matrix:
        """The adjacency as a scipy CSR matrix (ones; computed once).

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n, n)

        Examples
        --------
        >>> DatasetGraph.from_arrays(3, [0, 1], [1, 2]).csr().toarray().tolist()
        [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
        """
        if self._csr is None:
            data = np.ones(self.indices.size, dtype=np.float64)
            self._csr = sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n, self.n))
        return self._csr

    def distances(self, sources: Iterable[Hashable]) -> np.ndarray:
        """Hop distance from the nearest of ``sources`` to every vertex (``inf`` if unreachable).

        Parameters
        ----------
        sources : iterable of hashable
            Vertex ids (an empty set gives ``inf`` everywhere).

        Returns
        -------
        ndarray of shape (n,)
            float64 distances, in internal vertex order.

        Examples
        --------
        >>> DatasetGraph.from_arrays(4, [0, 1], [1, 2]).distances([0]).tolist()
        [0.0, 1.0, 2.0, inf]
        """
        idx = np.asarray([self.index_of(s, "source") for s in sources], dtype=np.int64)
        return self._distances_idx(idx)

    def _distances_idx(self, idx: np.ndarray) -> np.ndarray:
        if idx.size == 0:
            return np.full(self.n, np.inf)
        return dijkstra(self.csr(), directed=True, indices=idx, unweighted=True, min_only=True)

    def distance(self, u: Hashable, v: Hashable) -> float:
        """Length of a shortest ``(u, v)``-path (``inf`` when disconnected); an int when finite.

        Parameters
        ----------
        u, v : hashable
            Vertex ids.

        Returns
        -------
        int or float
            The distance, or ``float("inf")``.

        Examples
        --------
        >>> g = DatasetGraph.from_arrays(4, [0, 1], [1, 2])
        >>> g.distance(0, 2), g.distance(0, 3)
        (2, inf)
        """
        d = self._distances_idx(np.asarray([self.index_of(u, "u")]))[self.index_of(v, "v")]
        return int(d) if np.isfinite(d) else float("inf")

    def __repr__(self) -> str:
        return f"DatasetGraph(n={self.n}, n_edges={self.n_edges})"


def _eps_array(values: list) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("epsilon edge attributes must be real numbers") from None
    return arr


def _edge_array(arr: np.ndarray) -> np.ndarray:
    """``arr`` checked as an (E, 2) integer array of edges, as int64."""
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
        raise TypeError(f"an edge array must be an (E, 2) integer array, got shape {arr.shape} and dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError("edge array vertex ids must fit in int64")
    return arr.astype(np.int64, copy=False)


def _int_pairs(edges: list | tuple) -> np.ndarray | None:
    """The (E, 2) int64 array of a list of (int, int) pairs or of integer array rows, or None when the list
    holds anything else (other ids, data dicts), which then goes through the general loop."""
    if not edges:
        return None
    first = edges[0]
    if isinstance(first, np.ndarray):
        if first.shape != (2,) or first.dtype.kind not in "iu":
            return None
    elif not (isinstance(first, (tuple, list)) and len(first) == 2
              and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in first)):
        return None
    try:
        arr = np.array(edges)
    except (ValueError, TypeError, OverflowError):
        return None
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu" or arr.dtype == np.uint64:
        return None  # ragged, mixed or boolean entries: the loop names the bad one
    return arr.astype(np.int64, copy=False)


def as_dataset_graph(graph: Any, *, epsilon_attr: str | None = None) -> DatasetGraph:
    """Coerce a networkx graph, an edge list, an ``(E, 2)`` integer array or a DatasetGraph into a DatasetGraph.

    An integer array has vertices ``0 .. max``; a :class:`DatasetGraph` is returned as it is.

    Parameters
    ----------
    graph : networkx.Graph, iterable of tuples, ndarray of shape (E, 2) or DatasetGraph
        The dataset graph.
    epsilon_attr : str, optional
        Keyword-only: the edge attribute (networkx, or the data dicts of an edge list) holding each
        edge's epsilon.

    Returns
    -------
    DatasetGraph

    Raises
    ------
    TypeError
        ``graph`` is none of these, or ``epsilon_attr`` is given for an input without edge attributes.

    Examples
    --------
    >>> import numpy as np
    >>> g = as_dataset_graph(np.array([[0, 1], [1, 2]]))
    >>> g, as_dataset_graph(g) is g
    (DatasetGraph(n=3, n_edges=2), True)
    """
    if isinstance(graph, DatasetGraph):
        if epsilon_attr is not None:
            raise TypeError("a DatasetGraph carries no edge attributes: pass epsilon as a number, a mapping or "
                            "an array with one value per edge")
        return graph
    if _is_networkx(graph):
        return DatasetGraph.from_networkx(graph, epsilon_attr=epsilon_attr)
    if isinstance(graph, np.ndarray):
        return _from_edge_array(graph, epsilon_attr)
    if isinstance(graph, (str, bytes)) or not isinstance(graph, Iterable):
        raise TypeError("graph must be a networkx graph, an edge list of (u, v) tuples, an (E, 2) integer array "
                        "or a DatasetGraph, "
                        f"got {type(graph).__name__}")
    return DatasetGraph.from_edges(graph, epsilon_attr=epsilon_attr)


def _from_edge_array(arr: np.ndarray, epsilon_attr: str | None) -> DatasetGraph:
    """An ``(E, 2)`` integer array of edges: vertices ``0 .. max`` (the fast path, no Python loop)."""
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
        raise TypeError(f"graph as a numpy array must be an (E, 2) integer array of edges, got shape {arr.shape} "
                        f"and dtype {arr.dtype}")
    if epsilon_attr is not None:
        raise TypeError("an edge array carries no edge attributes: pass epsilon as a number, a mapping or an "
                        "array with one value per edge")
    if arr.shape[0] == 0:
        raise ValueError("graph as an edge array must have at least one edge (vertices are 0 .. max)")
    if arr.min() < 0:
        raise ValueError(f"graph edge array must hold vertex ids >= 0, got {int(arr.min())}")
    return DatasetGraph.from_arrays(int(arr.max()) + 1, arr[:, 0], arr[:, 1])


# ===================================================================== boundary notions
def _true_value_array(graph: DatasetGraph, true_values: Any) -> np.ndarray:
    """``T`` as an int8 array aligned with the graph's vertices; every vertex needs a value 0 or 1."""
    if isinstance(true_values, Mapping):
        if len(true_values) != graph.n:
            missing = [graph.label(i) for i in range(graph.n) if graph.label(i) not in true_values][:1]
            if missing:
                raise ValueError(f"true_values must give every vertex a value: missing vertex {short_repr(missing[0])}")
        idx, vals = graph.vertex_array(true_values, "true_values")
        if len(np.unique(idx)) != graph.n:  # pragma: no cover - mapping keys are unique
            raise ValueError("true_values must give every vertex exactly one value")
        t = np.empty(graph.n, dtype=np.float64)
        t[idx] = vals
    else:
        t = np.asarray(true_values)
        if t.dtype == object or t.ndim != 1 or t.size != graph.n:
            raise ValueError(f"true_values must be a mapping vertex -> 0/1 or an array of length {graph.n}")
        t = t.astype(np.float64)
    bad = (t != 0) & (t != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"true_values must be 0 or 1, got {t[i]!r} at vertex {short_repr(graph.label(i))}")
    return t.astype(np.int8)


def _boundary_edge_ids(graph: DatasetGraph, T: np.ndarray) -> np.ndarray:
    return np.flatnonzero(T[graph.edge_u] != T[graph.edge_v])


def boundary_edges(graph: Any, true_values: Any) -> list[tuple]:
    """Edges whose endpoints have different true values (paper 002, Def. 5), as vertex-id pairs.

    Parameters
    ----------
    graph : graph-like
        Anything :func:`as_dataset_graph` accepts.
    true_values : mapping or array_like
        ``T(v)`` in {0, 1} for every vertex (a mapping vertex -> value, or an array in vertex order).

    Returns
    -------
    list of tuple
        ``(u, v)`` pairs of vertex ids, ``u`` before ``v`` in the graph's order.

    Raises
    ------
    ValueError
        A vertex without a true value, or a value other than 0 or 1.

    Examples
    --------
    >>> boundary_edges([(1, 2), (2, 3), (3, 4)], {1: 0, 2: 1, 3: 1, 4: 0})
    [(1, 2), (3, 4)]
    """
    g = as_dataset_graph(graph)
    T = _true_value_array(g, true_values)
    ids = _boundary_edge_ids(g, T)
    return [(g.label(int(a)), g.label(int(b))) for a, b in zip(g.edge_u[ids], g.edge_v[ids])]


def boundary_vertices(graph: Any, true_values: Any, colour: int | None = None) -> list:
    """Endpoints of boundary edges (Def. 6); with ``colour``, only those of that true value (Def. 8).

    Parameters
    ----------
    graph, true_values : graph-like and mapping or array_like
        The graph (anything :func:`as_dataset_graph` accepts) and ``T(v)`` in {0, 1} for every vertex.
    colour : {0, 1}, optional
        Keep only the boundary vertices with this true value.

    Returns
    -------
    list
        Vertex ids in the graph's order.

    Examples
    --------
    >>> T = {1: 0, 2: 1, 3: 1, 4: 0}
    >>> boundary_vertices([(1, 2), (2, 3), (3, 4)], T), boundary_vertices([(1, 2), (2, 3), (3, 4)], T, colour=1)
    ([1, 2, 3, 4], [2, 3])
    """
    g = as_dataset_graph(graph)
    T = _true_value_array(g, true_values)
    ids = _boundary_edge_ids(g, T)
    mask = np.zeros(g.n, dtype=bool)
    mask[g.edge_u[ids]] = True
    mask[g.edge_v[ids]] = True
    if colour is not None:
        if colour not in (0, 1):
            raise ValueError(f"colour must be 0 or 1, got {short_repr(colour)}")
        mask &= T == colour
    return [g.label(int(i)) for i in np.flatnonzero(mask)]


def _uncovered_ids(g: DatasetGraph, T: np.ndarray, in_set: np.ndarray) -> np.ndarray:
    """Ids of the boundary edges (endpoints with different true values) with neither endpoint in ``in_set``."""
    ids = _boundary_edge_ids(g, T)
    return ids[~(in_set[g.edge_u[ids]] | in_set[g.edge_v[ids]])]


def uncovered_boundary_edges(graph: Any, true_values: Any, vertex_set: Iterable) -> list[tuple]:
    """Boundary edges with no endpoint in ``vertex_set`` (empty iff the set is boundary-hitting).

    Parameters
    ----------
    graph, true_values : graph-like and mapping or array_like
        The graph (anything :func:`as_dataset_graph` accepts) and ``T(v)`` in {0, 1} for every vertex.
    vertex_set : iterable
        Vertex ids.

    Returns
    -------
    list of tuple
        The uncovered boundary edges as vertex-id pairs.

    Examples
    --------
    >>> uncovered_boundary_edges([(1, 2), (2, 3), (3, 4)], {1: 0, 2: 1, 3: 1, 4: 0}, [2])
    [(3, 4)]
    """
    g = as_dataset_graph(graph)
    T = _true_value_array(g, true_values)
    in_set = np.zeros(g.n, dtype=bool)
    in_set[[g.index_of(x, "vertex_set element") for x in vertex_set]] = True
    ids = _uncovered_ids(g, T, in_set)
    return [(g.label(int(a)), g.label(int(b))) for a, b in zip(g.edge_u[ids], g.edge_v[ids])]


def is_boundary_hitting(graph: Any, true_values: Any, vertex_set: Iterable) -> bool:
    """Whether ``vertex_set`` contains an endpoint of every boundary edge (paper 002, Def. 7).

    Parameters
    ----------
    graph, true_values : graph-like and mapping or array_like
        The graph (anything :func:`as_dataset_graph` accepts) and ``T(v)`` in {0, 1} for every vertex.
    vertex_set : iterable
        Vertex ids.

    Returns
    -------
    bool

    Examples
    --------
    >>> T = {1: 0, 2: 1, 3: 1, 4: 0}
    >>> is_boundary_hitting([(1, 2), (2, 3), (3, 4)], T, [2]), is_boundary_hitting([(1, 2), (2, 3), (3, 4)], T, [2, 4])
    (False, True)
    """
    return not uncovered_boundary_edges(graph, true_values, vertex_set)


def greedy_boundary_hitting_set(graph: Any, true_values: Any) -> list:
    """A small boundary-hitting set: repeatedly take the vertex covering most uncovered boundary edges.

    The classic greedy vertex cover on the boundary edges (within a factor ``H(max degree)`` of the minimum);
    :func:`minimum_boundary_hitting_set` gives the exact minimum. Ties go to the lower internal index.

    Parameters
    ----------
    graph, true_values : graph-like and mapping or array_like
        The graph (anything :func:`as_dataset_graph` accepts) and ``T(v)`` in {0, 1} for every vertex.

    Returns
    -------
    list
        Vertex ids in the graph's order.

    Examples
    --------
    >>> greedy_boundary_hitting_set([(1, 2), (2, 3), (3, 4)], {1: 0, 2: 1, 3: 1, 4: 0})
    [1, 3]
    """
    g = as_dataset_graph(graph)
    T = _true_value_array(g, true_values)
    ids = _boundary_edge_ids(g, T)
    a, b = g.edge_u[ids], g.edge_v[ids]
    deg = np.bincount(np.concatenate([a, b]), minlength=g.n)
    adj: dict[int, list[int]] = {}
    for k, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        adj.setdefault(x, []).append(k)
        adj.setdefault(y, []).append(k)
    covered = np.zeros(ids.size, dtype=bool)
    heap = [(-int(deg[x]), x) for x in adj]
    heapq.heapify(heap)
    chosen = []
    while heap:
        negd, x = heapq.heappop(heap)
        cur = int(deg[x])
        if cur == 0:
            continue
        if cur != -negd:  # stale entry: re-insert with the current count
            heapq.heappush(heap, (-cur, x))
            continue
        chosen.append(x)
        for k in adj[x]:
            if not covered[k]:
                covered[k] = True
                deg[a[k]] -= 1
                deg[b[k]] -= 1
    return [g.label(x) for x in sorted(chosen)]


def minimum_boundary_hitting_set(graph: Any, true_values: Any) -> list:
    """A minimum boundary-hitting set, exactly (König's theorem).

    Boundary edges join a colour-0 and a colour-1 vertex, so they form a bipartite graph and a minimum
    hitting set is a minimum vertex cover = a maximum matching (scipy) turned into a cover by the alternating
    search from unmatched colour-0 vertices: cover = (colour-0 vertices not reached) + (colour-1 reached).

    Parameters
    ----------
    graph, true_values : graph-like and mapping or array_like
        The graph (anything :func:`as_dataset_graph` accepts) and ``T(v)`` in {0, 1} for every vertex.

    Returns
    -------
    list
        Vertex ids in the graph's order (empty when there is no boundary edge).

    Examples
    --------
    >>> minimum_boundary_hitting_set([(1, 2), (2, 3), (3, 4)], {1: 0, 2: 1, 3: 1, 4: 0})
    [1, 4]
    """
    g = as_dataset_graph(graph)
    T = _true_value_array(g, true_values)
    ids = _boundary_edge_ids(g, T)
    if ids.size == 0:
        return []
    a, b = g.edge_u[ids], g.edge_v[ids]
    left = np.where(T[a] == 0, a, b)
    right = np.where(T[a] == 0, b, a)
    L, li = np.unique(left, return_inverse=True)
    R, ri = np.unique(right, return_inverse=True)
    bi = sp.csr_matrix((np.ones(ids.size), (li, ri)), shape=(L.size, R.size))
    bi.sum_duplicates()
    match_l = maximum_bipartite_matching(bi, perm_type="column")  # left i -> right match or -1
    match_r = np.full(R.size, -1, dtype=np.int64)
    ml = np.flatnonzero(match_l >= 0)
    match_r[match_l[ml]] = ml
    seen_l = np.zeros(L.size, dtype=bool)
    seen_r = np.zeros(R.size, dtype=bool)
    stack = np.flatnonzero(match_l < 0).tolist()
    seen_l[stack] = True
    while stack:
        i = stack.pop()
        for j in bi.indices[bi.indptr[i]:bi.indptr[i + 1]]:
            if not seen_r[j]:
                seen_r[j] = True
                k = match_r[j]
                if k >= 0 and not seen_l[k]:
                    seen_l[k] = True
                    stack.append(int(k))
    cover = np.concatenate([L[~seen_l], R[seen_r]])
    return [g.label(int(x)) for x in np.sort(cover)]
