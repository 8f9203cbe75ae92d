"""The papers' datasets by name, read from the project's copy (:func:`dpselect.datasets.data_path`).

The library's loaders take a path (:func:`dpselect.datasets.load_nltcs`, ...); naming a dataset of the papers
is the reproductions' business. ``DPSELECT_DATA`` overrides where the copy is found.
"""
from __future__ import annotations

from typing import Any

from dpselect.datasets import data_path, load_acs, load_adult, load_edge_list, load_nltcs
from dpselect.graphs import GRAPH_DATASETS, PUBLIC_GRAPH_NODES, Graph
from dpselect.tabular import TABULAR_DATASETS, TabularData

__all__ = ["load_tabular", "load_graph"]


def load_tabular(name: str) -> TabularData:
    """One of the papers' tables by lower-case name (``nltcs``, ``adult`` or ``acs``), from :func:`dpselect.datasets.data_root`.

    The reproductions' loader: :func:`dpselect.datasets.load_nltcs`, :func:`dpselect.datasets.load_acs` or
    :func:`dpselect.datasets.load_adult` on the project's copy.

    Examples
    --------
    >>> load_tabular("nltcs").n_records
    21574
    """
    if name == "nltcs":
        return load_nltcs(data_path("tabular", "nltcs.dat"))
    if name == "acs":
        return load_acs(data_path("tabular", "acs.dat"))
    if name == "adult":
        return load_adult(data_path("tabular", "adult.data").parent)
    raise ValueError(f"unknown tabular dataset {name!r}; choose from {', '.join(TABULAR_DATASETS)}")


def load_graph(name: str, **kwargs: Any) -> Graph:
    """One of the papers' SNAP graphs by name (``enron``, ``dblp``, ``github``, ...) from :func:`dpselect.datasets.data_root`.

    Its public node set is the published node count (:data:`dpselect.graphs.PUBLIC_GRAPH_NODES`, ids
    0..n-1); keywords go to :func:`dpselect.datasets.load_edge_list`.

    Examples
    --------
    >>> g = load_graph("enron")
    >>> g.n_nodes, g.n_edges, g.public_nodes
    (36692, 183831, True)
    """
    key = name.lower()
    if key not in GRAPH_DATASETS:
        raise ValueError(f"unknown graph {name!r}; choose from {', '.join(GRAPH_DATASETS)}")
    kwargs.setdefault("name", key)
    if kwargs.get("nodes") is None and kwargs.get("n_nodes") is None:
        kwargs["n_nodes"] = PUBLIC_GRAPH_NODES[key]
    return load_edge_list(data_path("graphs", GRAPH_DATASETS[key]), **kwargs)

