"""The papers' datasets: their loaders, and the **public facts** the privacy proofs use as public parameters.

The loaders read a path: tables (:func:`load_nltcs`, :func:`load_acs`, :func:`load_adult`, :func:`load_table`)
and edge lists (:func:`load_edge_list`, :func:`load_dataset_graph`). The public facts are recorded here, with
their sources, so that the reproductions pass them explicitly instead of reading them from the (private, in the
papers' model) records.

:func:`data_root` / :func:`data_path` find the project's copy of the data (``shared/datasets/`` beside a
checkout; ``DPSELECT_DATA`` overrides it) for ``dpselect demo``, the reproductions, the benchmarks and the tests.
Files are read in place and never copied into the project.
"""
from __future__ import annotations

import os
from pathlib import Path

from ._graph import load_dataset_graph, load_edge_list
from .tabular import load_acs, load_adult, load_nltcs, load_table

__all__ = ["load_nltcs", "load_acs", "load_adult", "load_table", "load_edge_list", "load_dataset_graph",
           "PUBLIC_GRAPH_MAX_DEGREE", "PUBLIC_TABLE_SIZE", "DATA_SUBDIRS", "data_root", "data_path"]

#: Public bound D on the maximum degree of the SNAP graphs, for ΔEBC and δ^EBC (edge-DP): the values the
#: thesis (Sec. 6.5, "Datasets", Δ(G)) states and uses for Enron, DBLP and GitHub. Each equals the
#: published graph's maximum degree (SNAP's statistics), so it bounds every degree of those files.
PUBLIC_GRAPH_MAX_DEGREE: dict[str, int] = {"enron": 1383, "dblp": 343, "github": 9458}

#: Public bound N on the number of records, for ΔIG = log2(N + 1) + 1/ln 2 (DiffPID3): the dataset sizes
#: the thesis (Sec. 7.4, "Datasets") and the paper (Sec. 6.3) publish -- NLTCS 21,574 individuals, ACS
#: 47,461 rows, Adult 45,222 records without missing values. A training fold is a subset, so N bounds it.
PUBLIC_TABLE_SIZE: dict[str, int] = {"nltcs": 21574, "acs": 47461, "adult": 45222}

#: Sub-directories of the data root.
DATA_SUBDIRS = ("tabular", "graphs", "dpbench1d")


def data_root() -> Path:
    """The directory holding ``tabular/``, ``graphs/`` and ``dpbench1d/``.

    Looked up in this order: ``$DPSELECT_DATA``; ``shared/datasets`` in the current directory or any
    parent; ``shared/datasets`` in a parent of the installed package (an editable install in a checkout).
    An installed wheel outside a checkout finds nothing: set ``DPSELECT_DATA``.

    Returns
    -------
    pathlib.Path
        The data root; ``FileNotFoundError`` saying to set ``DPSELECT_DATA`` when none is found.

    Examples
    --------
    >>> sorted(p.name for p in data_root().iterdir() if p.name in ("tabular", "graphs"))
    ['graphs', 'tabular']
    """
    env = os.environ.get("DPSELECT_DATA")
    if env:
        return Path(env).expanduser()
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for base in [start, *start.parents]:
            for cand in (base / "shared" / "datasets", base.parent / "shared" / "datasets"):
                if cand.is_dir():
                    return cand
    raise FileNotFoundError(
        "cannot find the datasets directory: set DPSELECT_DATA to the directory holding "
        + ", ".join(f"{s}/" for s in DATA_SUBDIRS) + " (found none beside the current directory or the package)"
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
