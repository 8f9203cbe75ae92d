"""The **public facts** about the papers' datasets that the privacy proofs use as public parameters.

They are recorded here, with their sources, so that the reproductions pass them explicitly instead of
reading them from the (private, in the papers' model) records.

Finding the data is not the library's business: its loaders take a path, and the data-root discovery
(``DPSELECT_DATA`` or ``../shared/datasets``) lives in the reproduction layer,
:func:`dpselect.experiments.data_root` / :func:`dpselect.experiments.data_path`. :func:`dataset_root`
and :func:`dataset_path` here are deprecated aliases of those, kept for one release.
"""
from __future__ import annotations

import warnings
from pathlib import Path

__all__ = ["dataset_root", "dataset_path", "PUBLIC_GRAPH_MAX_DEGREE", "PUBLIC_TABLE_SIZE"]

#: Public bound D on the maximum degree of the SNAP graphs, for ΔEBC and δ^EBC (edge-DP): the values the
#: thesis (Sec. 6.5, "Datasets", Δ(G)) states and uses for Enron, DBLP and GitHub. Each equals the
#: published graph's maximum degree (SNAP's statistics), so it bounds every degree of those files.
PUBLIC_GRAPH_MAX_DEGREE: dict[str, int] = {"enron": 1383, "dblp": 343, "github": 9458}

#: Public bound N on the number of records, for ΔIG = log2(N + 1) + 1/ln 2 (DiffPID3): the dataset sizes
#: the thesis (Sec. 7.4, "Datasets") and the paper (Sec. 6.3) publish -- NLTCS 21,574 individuals, ACS
#: 47,461 rows, Adult 45,222 records without missing values. A training fold is a subset, so N bounds it.
PUBLIC_TABLE_SIZE: dict[str, int] = {"nltcs": 21574, "acs": 47461, "adult": 45222}


def dataset_root() -> Path:
    """The data root of the project's copy; deprecated: use :func:`dpselect.experiments.data_root`.

    Removed in dpselect 0.2.0; warns with a ``DeprecationWarning``. Takes no parameters.

    Returns
    -------
    pathlib.Path
        The directory holding ``tabular/``, ``graphs/`` and ``dpbench1d/``.

    Examples
    --------
    >>> import warnings
    >>> from dpselect.experiments import data_root
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     dataset_root() == data_root()
    True
    """
    warnings.warn("dpselect.datasets.dataset_root() is deprecated and will be removed in dpselect 0.2.0; use "
                  "dpselect.experiments.data_root()", DeprecationWarning, stacklevel=2)
    from .experiments._data import data_root   # the reproduction layer, reached only by this deprecated alias

    return data_root()


def dataset_path(*parts: str) -> Path:
    """A file of the project's copy of the data; deprecated: use :func:`dpselect.experiments.data_path`.

    Removed in dpselect 0.2.0; warns with a ``DeprecationWarning``.

    Parameters
    ----------
    *parts : str
        Path components under the data root, e.g. ``"tabular", "nltcs.dat"``.

    Returns
    -------
    pathlib.Path
        The path of a file under the data root; ``FileNotFoundError`` naming it when absent.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     dataset_path("tabular", "nltcs.dat").name
    'nltcs.dat'
    """
    warnings.warn("dpselect.datasets.dataset_path() is deprecated and will be removed in dpselect 0.2.0; use "
                  "dpselect.experiments.data_path()", DeprecationWarning, stacklevel=2)
    return _shared_copy(*parts)


def _shared_copy(*parts: str) -> Path:
    # The project's copy of a data file, for the deprecated path-less calls of the loaders only.
    from .experiments._data import data_path   # the reproduction layer, reached only by deprecated calls

    return data_path(*parts)
