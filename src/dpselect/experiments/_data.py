"""Where the real data lives, and the one rule for finding it (the reproduction layer's business).

The library's loaders take a path (:func:`dpselect.datasets.load_nltcs`, :func:`dpselect.datasets.load_adult`,
:func:`dpselect.datasets.load_edge_list`, ...); only the reproductions, ``dpselect demo``, the benchmarks and the
tests look for the project's copy of the data. It sits in ``shared/datasets/`` beside the project
checkout (``../shared/datasets`` from the project root); ``DPSELECT_DATA`` overrides that root. Files are
read in place and never copied into the project.

:func:`data_root` and :func:`data_path` are public as ``dpselect.experiments.data_root`` /
``dpselect.experiments.data_path``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..graphs import Graph
    from ..tabular import TabularData

__all__ = ["DATA_SUBDIRS", "data_root", "data_path", "load_tabular", "load_graph"]

#: Sub-directories of the data root.
DATA_SUBDIRS = ("tabular", "graphs", "dpbench1d")


def data_root() -> Path:
    """The directory holding ``tabular/``, ``graphs/`` and ``dpbench1d/``.

    Looked up in this order: ``$DPSELECT_DATA``; ``shared/datasets`` in the current directory or any
    parent; ``shared/datasets`` in a parent of the installed package (an editable install in a checkout).
    Takes no parameters.

    Returns
    -------
    pathlib.Path
        The data root; ``FileNotFoundError`` saying how to set ``DPSELECT_DATA`` when none is found.

    Examples
    --------
    >>> sorted(p.name for p in data_root().iterdir() if p.name in ("tabular", "graphs"))
    ['graphs', 'tabular']
    """
    env = os.environ.get("DPSELECT_DATA")
    if env:
        return Path(env).expanduser()
    starts = [Path.cwd(), Path(__file__).resolve().parent]
    for start in starts:
        for base in [start, *start.parents]:
            for cand in (base / "shared" / "datasets", base.parent / "shared" / "datasets"):
                if cand.is_dir():
                    return cand
    raise FileNotFoundError(
        "cannot find the datasets directory: set DPSELECT_DATA to it, or run from a checkout that has "
        "../shared/datasets beside it"
    )


def data_path(*parts: str) -> Path:
    """Path of a file under :func:`data_root`; ``FileNotFoundError`` naming it when absent.

    Parameters
    ----------
    *parts : str
        Path components under the data root, e.g. ``"tabular", "nltcs.dat"``.

    Returns
    -------
    pathlib.Path
        ``data_root().joinpath(*parts)``, which exists.

    Examples
    --------
    >>> data_path("tabular", "nltcs.dat").name
    'nltcs.dat'
    """
    path = data_root().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"dataset file not found: {path}")
    return path


def load_tabular(name: str) -> TabularData:
    """One of the papers' tables by lower-case name (``nltcs``, ``adult`` or ``acs``), from :func:`data_root`.

    The reproductions' loader: :func:`dpselect.datasets.load_nltcs`, :func:`dpselect.datasets.load_acs` or
    :func:`dpselect.datasets.load_adult` on the project's copy.

    Parameters
    ----------
    name : {"nltcs", "adult", "acs"}
        The dataset (``ValueError`` otherwise).

    Returns
    -------
    TabularData

    Examples
    --------
    >>> load_tabular("nltcs").n_records
    21574
    """
    from ..tabular import TABULAR_DATASETS, load_acs, load_adult, load_nltcs

    if name == "nltcs":
        return load_nltcs(data_path("tabular", "nltcs.dat"))
    if name == "acs":
        return load_acs(data_path("tabular", "acs.dat"))
    if name == "adult":
        return load_adult(data_path("tabular", "adult.data").parent)
    raise ValueError(f"unknown tabular dataset {name!r}; choose from {', '.join(TABULAR_DATASETS)}")


def load_graph(name: str, **kwargs: Any) -> Graph:
    """One of the papers' SNAP graphs by name (``enron``, ``dblp``, ``github``, ...) from :func:`data_root`.

    Its public node set is the published node count (:data:`dpselect.graphs.PUBLIC_GRAPH_NODES`, ids
    0..n-1); keywords go to :func:`dpselect.datasets.load_edge_list`.

    Parameters
    ----------
    name : str
        A key of :data:`dpselect.graphs.GRAPH_DATASETS` (any case; ``ValueError`` otherwise).
    **kwargs
        Passed to :func:`dpselect.datasets.load_edge_list` (``nodes=`` / ``n_nodes=`` replace the published count).

    Returns
    -------
    Graph
        ``public_nodes`` true.

    Examples
    --------
    >>> g = load_graph("enron")
    >>> g.n_nodes, g.n_edges, g.public_nodes
    (36692, 183831, True)
    """
    from ..datasets import load_edge_list
    from ..graphs import GRAPH_DATASETS, PUBLIC_GRAPH_NODES

    key = name.lower()
    if key not in GRAPH_DATASETS:
        raise ValueError(f"unknown graph {name!r}; choose from {', '.join(GRAPH_DATASETS)}")
    kwargs.setdefault("name", key)
    if kwargs.get("nodes") is None and kwargs.get("n_nodes") is None:
        kwargs["n_nodes"] = PUBLIC_GRAPH_NODES[key]
    return load_edge_list(data_path("graphs", GRAPH_DATASETS[key]), **kwargs)

