"""Graph statistics and the two-objective Pareto score out of core, for DP-MOTkIN on dask."""
from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np

from .._dominance import count_dominating
from .._validation import check_int, check_matrix
from ..exceptions import warn_public_from_data
from ..sensitivity import SensitivityFunction
from ..utilities import graph as _graph

__all__ = ["degree", "degree_sensitivity", "egocentric_density_sensitivity", "max_degree", "pareto_score"]


# ---------------------------------------------------------------------------------------------
# degree
# ---------------------------------------------------------------------------------------------
def _endpoint_ids(part: Any, column: str, name: str) -> np.ndarray:
    """The int64 node ids of one endpoint column; ``ValueError`` naming it for a missing or non-integer id."""
    col = part[column]
    # the messages name the column only: an edge's endpoint is private (edge-DP)
    if col.dtype.kind in "iu":
        if col.dtype.kind == "u" and col.size and int(col.max()) > np.iinfo(np.int64).max:
            raise ValueError(f"{name}={column!r} must hold int64 node ids (an id is above the int64 range)")
        return col.to_numpy(dtype=np.int64)
    vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(vals) | (vals != np.round(vals)) | (np.abs(vals) >= 2.0 ** 63)
    if bad.any():
        raise ValueError(f"{name}={column!r} must hold integer node ids (a missing or non-integer endpoint is not "
                         "an edge: drop or repair such rows first)")
    return vals.astype(np.int64)


def _canonical(part: Any, source: str, target: str, public: np.ndarray | None) -> Any:
    import pandas as pd

    a = _endpoint_ids(part, source, "source")
    b = _endpoint_ids(part, target, "target")
    if public is not None and a.size:
        ends = np.concatenate([a, b])
        pos = np.minimum(np.searchsorted(public, ends), public.size - 1)
        outside = public[pos] != ends
        if outside.any():  # the edge is private: not named
            raise ValueError(f"an edge has an endpoint outside the public node set (nodes=/n_nodes=, {public.size} "
                             "nodes): a graph's edges join its nodes; an edge to an unknown node is an error, never "
                             "counted")
    keep = a != b  # self-loops dropped
    a, b = a[keep], b[keep]
    return pd.DataFrame({"lo": np.minimum(a, b), "hi": np.maximum(a, b)})


def _public_node_index(nodes: Any, n_nodes: Any) -> Any:
    """The public node set of :func:`degree` as a pandas Index of int64 ids (checked), or None."""
    import pandas as pd

    if nodes is not None and n_nodes is not None:
        raise ValueError("give the public node set as nodes= (ids) or n_nodes= (ids 0..n-1), not both")
    if n_nodes is not None:
        n = check_int(n_nodes, "n_nodes", minimum=1)
        return pd.Index(np.arange(n, dtype=np.int64), name="node")
    if nodes is None:
        return None
    if isinstance(nodes, (str, bytes)) or not hasattr(nodes, "__iter__"):
        raise TypeError(f"nodes must be a list-like of integer node ids, got {type(nodes).__name__} {nodes!r}"[:200])
    arr = np.asarray(list(nodes) if not isinstance(nodes, np.ndarray) else nodes)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"nodes must be a non-empty 1-D list of integer node ids, got shape {arr.shape}")
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)) \
            and np.all(np.abs(arr) < 2.0 ** 63):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or (arr.dtype.kind == "u" and int(arr.max()) > np.iinfo(np.int64).max):
        bad = arr.ravel()[0]
        bad = bad.item() if isinstance(bad, np.generic) else bad
        raise TypeError(f"nodes must hold integer node ids (int64), got dtype {arr.dtype} (e.g. {bad!r}); "
                        "number string ids first (e.g. pandas.factorize)")
    index = pd.Index(arr.astype(np.int64), name="node")
    if not index.is_unique:
        raise ValueError(f"nodes must not repeat a node id, got {int(index[index.duplicated()][0])} twice")
    return index


def degree(edges: Any, *, source: str = "source", target: str = "target",
           nodes: Sequence[Hashable] | None = None, n_nodes: int | None = None) -> Any:
    """Degree of every node of an undirected graph given as a dask edge list (lazy dask Series node -> degree).

    The graph is normalised as :func:`dpselect.graphs.from_edges` does: self-loops are dropped and an
    edge listed several times (in either direction) counts once; then a group-by count of endpoints.
    Node ids are integers (int or integral float columns; string ids: number them first, e.g. with
    ``pandas.factorize``); a missing or non-integer endpoint is a ``ValueError`` naming its column.
    Degree has global sensitivity 1 under edge-DP (add/remove one edge).

    ``nodes`` (ids) or ``n_nodes`` (ids 0..n-1): the public node set (edge-DP treats it as public), as
    for :func:`dpselect.graphs.from_edges`. Nodes of degree 0 are included, the result is indexed by
    exactly these nodes, and an edge with an endpoint outside them is a ``ValueError`` when computed.
    Omitted: the nodes that appear in the edge list, with :class:`dpselect.PrivacyLeakWarning` (a node
    seen only in one edge is a candidate only when that edge is present).

    Not private by itself (exact degrees): feed it to a selector.

    Parameters
    ----------
    edges : dask.dataframe.DataFrame
        One row per edge.
    source, target : str
        The endpoint columns.
    nodes : sequence of int, optional
        The public node ids.
    n_nodes : int, optional
        The public node set 0..n_nodes − 1.

    Returns
    -------
    dask.dataframe.Series
        Lazy, node -> degree (int64), named "degree".

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> e = dd.from_pandas(pd.DataFrame({"source": [0, 0, 1, 2], "target": [1, 2, 0, 2]}), npartitions=2)
    >>> degree(e, nodes=[0, 1, 2, 3]).compute().sort_index().tolist()
    [2, 1, 1, 0]
    """
    import dask.dataframe as dd
    import pandas as pd

    if not isinstance(edges, dd.DataFrame):
        raise TypeError(f"edges must be a dask DataFrame with endpoint columns, got {type(edges).__name__}")
    for name, col in (("source", source), ("target", target)):
        if col not in edges.columns:
            raise ValueError(f"{name}={col!r} is not a column of edges (columns: {list(edges.columns)})")
        kind = edges[col].dtype.kind
        if kind not in "iuf":
            raise TypeError(f"{name}={col!r} must be a column of integer node ids, got dtype {edges[col].dtype}; "
                            "number string ids first (e.g. pandas.factorize, then pass nodes= as those numbers)")
    node_index = _public_node_index(nodes, n_nodes)
    public = None if node_index is None else np.sort(node_index.to_numpy())
    meta = pd.DataFrame({"lo": np.zeros(0, np.int64), "hi": np.zeros(0, np.int64)})
    pairs = edges[[source, target]].map_partitions(_canonical, source, target, public, meta=meta).drop_duplicates()
    ends = dd.concat([pairs["lo"], pairs["hi"]]).to_frame("node")
    deg = ends.groupby("node").size()
    if node_index is None:
        warn_public_from_data("nodes (the candidate set)", "the endpoints of the edge list", "dpselect.dask.degree")
        return deg.rename("degree")
    frame = dd.from_pandas(pd.DataFrame({"node": node_index}), npartitions=max(1, deg.npartitions))
    out = frame.merge(deg.rename("degree").to_frame(), left_on="node", right_index=True, how="left")
    out = out.fillna({"degree": 0}).astype({"degree": np.int64})
    return out.set_index("node")["degree"]


def max_degree(degrees: Any, max_degree: int | None = None) -> int:
    """The public bound D on the maximum degree (EBC's sensitivity in DP-MOTkIN needs it).

    ``max_degree`` given: checked against the (dask) degrees, ``ValueError`` if a degree exceeds it. Omitted:
    the graph's own maximum degree with :class:`dpselect.PrivacyLeakWarning`, as in memory
    (:func:`dpselect.utilities.graph.public_max_degree`).

    Parameters
    ----------
    degrees : dask Series or array-like
        The degrees (e.g. :func:`degree`).
    max_degree : int, optional
        The public bound D.

    Returns
    -------
    int
        D.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> max_degree(dd.from_pandas(pd.Series([2, 1, 1]), npartitions=2), max_degree=10)
    10
    """
    dmax = int(degrees.max().compute()) if hasattr(degrees, "compute") else int(np.max(degrees))
    if max_degree is not None:
        D = check_int(max_degree, "max_degree", minimum=1)
        if dmax > D:  # the graph's maximum degree is private: not named
            raise ValueError(f"max_degree must be a public upper bound on every degree of the graph, got "
                             f"max_degree={D} but a node has a larger degree")
    return _graph.public_max_degree(np.asarray([dmax]), max_degree, "dpselect.dask.max_degree",
                                    stacklevel=4)


def _degree_values(partition: Any, column: str) -> np.ndarray:
    col = partition[column] if hasattr(partition, "columns") else partition
    return np.asarray(col).astype(np.int64)


def degree_sensitivity(partition: Any, column: str = "degree") -> SensitivityFunction:
    """δ(G, t, v) = 1 for the nodes of one partition (a DataFrame with a degree column, or a Series of
    degrees): pass as ``sensitivity_function=`` to :func:`dpselect.dask.local_dampening` (edge-DP).

    Parameters
    ----------
    partition : pandas.DataFrame, pandas.Series or numpy.ndarray
        One partition's rows.
    column : str, default "degree"
        The degree column of a DataFrame.

    Returns
    -------
    SensitivityFunction
        For the partition's rows.

    Examples
    --------
    >>> import pandas as pd
    >>> degree_sensitivity(pd.DataFrame({"degree": [3, 1]}))(0).tolist()
    [1.0, 1.0]
    """
    return _graph.degree_sensitivity(_degree_values(partition, column))


def egocentric_density_sensitivity(partition: Any, column: str = "degree") -> SensitivityFunction:
    """The admissible degree-based δ of egocentric density (paper Sec. 7.3) for one partition's nodes:
    min(1, 2/(d − t − 2)) if d − t − 2 > 0, else 1 (edge-DP; :func:`dpselect.utilities.graph.
    egocentric_density_sensitivity` on the partition's degree column).

    Parameters
    ----------
    partition : pandas.DataFrame, pandas.Series or numpy.ndarray
        One partition's rows.
    column : str, default "degree"

    Returns
    -------
    SensitivityFunction
        For the partition's rows.

    Examples
    --------
    >>> import pandas as pd
    >>> egocentric_density_sensitivity(pd.DataFrame({"degree": [1, 4, 10]}))(0).tolist()
    [1.0, 1.0, 0.25]
    """
    return _graph.egocentric_density_sensitivity(_degree_values(partition, column))


# ---------------------------------------------------------------------------------------------
# Pareto score, m = 2
# ---------------------------------------------------------------------------------------------
def _block(part: Any) -> np.ndarray:
    try:
        arr = np.asarray(part, dtype=np.float64)
    except (TypeError, ValueError):  # numpy's message quotes the offending entry
        raise TypeError("objectives must hold real numbers") from None
    if not np.all(np.isfinite(arr)):  # before check_matrix, whose message names the entry and its value
        raise ValueError("objectives must be finite (a partition holds NaN or inf)")
    return check_matrix(arr if arr.ndim == 2 else arr.reshape(-1, 1), "objectives", min_rows=0)


def _dominators(q_part: Any, p_part: Any) -> np.ndarray:
    """For each point of ``p_part``: the points of ``q_part`` strictly better in both objectives."""
    Q, P = _block(q_part), _block(p_part)
    if Q.shape[0] == 0 or P.shape[0] == 0 or Q[:, 0].max() <= P[:, 0].min():
        return np.zeros(P.shape[0], dtype=np.int64)
    if Q[:, 0].min() > P[:, 0].max():  # first objective settled: a sorted count on the second
        v = np.sort(Q[:, 1])
        return (v.size - np.searchsorted(v, P[:, 1], side="right")).astype(np.int64)
    return count_dominating(Q, P, strict=True)


def _scores(p_part: Any, *counts: np.ndarray) -> Any:
    import pandas as pd

    total = np.sum(counts, axis=0) if counts else np.zeros(len(p_part), dtype=np.int64)
    return pd.Series(-np.asarray(total, dtype=np.int64), index=p_part.index, name="pareto_score")


def pareto_score(objectives: Any, columns: Sequence[str] | None = None) -> Any:
    """Pareto score PS(r) = −|{r' : r' strictly better than r in both objectives}| (paper Def. 4.3) of
    every row of a dask DataFrame with two objective columns (maximised), out of core.

    A distributed sort on the first objective puts every dominator of a row in its own partition or a
    later one; each (partition, later partition) pair is one task: a sorted count on the second
    objective when the later partition is entirely better in the first, a 2-D dominance count otherwise.
    Memory per task: two partitions; work O(P·n log n) for P partitions. Equal to
    :func:`dpselect.multiobjective.pareto_score` (ties prevent domination). Returns a lazy dask Series indexed like
    ``objectives`` (in sorted order; ``.compute().sort_index()`` restores it). Not private by itself:
    its global sensitivity is n − 1 (PrivPareto's utility).

    Parameters
    ----------
    objectives : dask.dataframe.DataFrame
        One row per candidate.
    columns : pair of str, optional
        The two objective columns (default: the DataFrame's two columns).

    Returns
    -------
    dask.dataframe.Series
        Lazy int64 scores named "pareto_score".

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> U = pd.DataFrame({"a": [3, 5, 4, 2, 1], "b": [5, 3, 2, 4, 1]})
    >>> pareto_score(dd.from_pandas(U, npartitions=2)).compute().sort_index().tolist()
    [0, 0, -1, -1, -4]
    """
    import dask
    import dask.dataframe as dd
    import pandas as pd

    if not isinstance(objectives, dd.DataFrame):
        raise TypeError(f"objectives must be a dask DataFrame (rows: candidates), got {type(objectives).__name__}")
    cols = list(objectives.columns) if columns is None else list(columns)
    if len(cols) != 2:
        raise ValueError(f"pareto_score on dask takes exactly two objective columns, got {cols}")
    for c in cols:
        if c not in objectives.columns:
            raise ValueError(f"{c!r} is not a column of objectives (columns: {list(objectives.columns)})")
    check_int(len(cols), "number of objectives", minimum=2, maximum=2)
    srt = objectives[cols].sort_values(cols[0])
    parts = srt.to_delayed()
    dom = dask.delayed(_dominators, pure=True)
    fin = dask.delayed(_scores, pure=True)
    out = [fin(parts[p], *[dom(parts[q], parts[p]) for q in range(p, len(parts))]) for p in range(len(parts))]
    meta = pd.Series(np.zeros(0, dtype=np.int64), index=srt._meta.index, name="pareto_score")
    return dd.from_delayed(out, meta=meta, verify_meta=False)
