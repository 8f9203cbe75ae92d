"""Private quantiles of a dask Series or 1-D dask array: a reduction, then the in-memory law.

The workers summarise their partition as a grouped database (distinct values and their counts, or counts
in public bins); the client merges the summaries and runs :func:`dpselect.quantiles` on them. Grouping
records with equal values is exact for every method of :func:`dpselect.quantiles` (records with equal
values are interchangeable), so the released values have **the same law as in memory**, and with the same
``rng`` the same values as ``dpselect.quantiles(values, qs, counts=counts, ...)`` on the merged summary.
No random bit is drawn before the summary is complete, so the arguments are checked first, then the data
(finite values), then the accountant is charged, then the release is drawn. A record outside public ``bins``
is clipped into the first or last bin, as :func:`dpselect.quantiles` treats ``bounds``: no error or message
depends on the records beyond their being finite reals.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._boundary import check_accountant
from .._validation import check_positive
from ..accounting.accountant import Accountant
from ..quantiles._recursive import resolve_targets
from ..quantiles._api import (_check_bounds, _check_candidates, _check_method, _check_neighbours, _check_qs,
                              _refuse_add_remove, float_vector, quantiles as _quantiles)
from ..typing import RngLike

__all__ = ["quantiles"]


def _parts(series: Any) -> list[Any]:
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(series, dd.Series):
        return list(series.to_delayed())
    if isinstance(series, da.Array):
        if series.ndim != 1:
            raise ValueError(f"series must be 1-D, got a dask array of shape {series.shape}")
        return list(series.to_delayed().ravel())
    if isinstance(series, dd.DataFrame):
        raise TypeError("series is a dask DataFrame: pass one column, e.g. df['income']")
    raise TypeError(f"series must be a dask Series or a 1-D dask array, got {type(series).__name__}; "
                    "for in-memory data use dpselect.quantiles")


def _block_values(block: Any) -> np.ndarray:
    arr = np.asarray(block)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"series must hold real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False).ravel()
    if not np.all(np.isfinite(arr)):
        raise ValueError("series must hold finite values (a partition holds NaN or inf)")
    return arr


def _distinct_chunk(block: Any) -> tuple[np.ndarray, np.ndarray]:
    v, c = np.unique(_block_values(block), return_counts=True)
    return v, c.astype(np.int64)


def _binned_chunk(block: Any, edges: np.ndarray) -> np.ndarray:
    """The block's counts in the public bins, a record outside [e_0, e_B] clipped into the first or last bin."""
    x = np.clip(_block_values(block), edges[0], edges[-1])
    return np.histogram(x, bins=edges)[0].astype(np.int64)


def _check_bins(bins: Any) -> np.ndarray | None:
    if bins is None:
        return None
    e = float_vector(bins, "bins must be a 1-D array of public bin edges",
                     "bins must be a 1-D array of at least 2 edges", min_size=2)
    if not np.all(np.isfinite(e)) or not np.all(np.diff(e) > 0):
        raise ValueError("bins must be finite and strictly increasing")
    return e


def _summarise(series: Any, bins: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The grouped database of ``series``: (sorted distinct values, int64 counts), by one pass.

    Without ``bins``: the exact distinct values (each partition's ``np.unique``, merged on the client; the
    distinct values must fit in the client's memory). With ``bins`` (public edges e_0 < ... < e_B, the
    last bin closed as in ``numpy.histogram``): every record counts as the left edge of its bin, and the
    summary is (edges[:-1] of the non-empty bins, their counts); a record outside [e_0, e_B] is clipped
    into it first (below e_0: the first bin; above e_B: the last), as :func:`dpselect.quantiles` clips records
    into ``bounds``: a fixed map of each record, never an error (an error, or its count, would depend on the
    data).

    Parameters
    ----------
    series : dask Series or 1-D dask array
        Finite real values.
    bins : array of float, optional
        Public bin edges.

    Returns
    -------
    (numpy.ndarray of float64, numpy.ndarray of int64)

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> x = da.from_array(np.array([3.0, 1.0, 3.0, 2.5]), chunks=2)
    >>> _summarise(x)
    (array([1. , 2.5, 3. ]), array([1, 1, 2]))
    >>> _summarise(x, bins=[0.0, 2.0, 4.0])
    (array([0., 2.]), array([1, 3]))
    >>> _summarise(x, bins=[2.0, 2.75, 3.0])    # 1.0 clipped into the first bin, 3.0 in the closed last one
    (array([2.  , 2.75]), array([2, 2]))
    """
    import dask

    parts = _parts(series)
    edges = _check_bins(bins)
    if edges is None:
        pieces = dask.compute(*[dask.delayed(_distinct_chunk)(p) for p in parts])
        if not pieces:
            return np.empty(0), np.empty(0, dtype=np.int64)
        allv = np.concatenate([v for v, _ in pieces])
        allc = np.concatenate([c for _, c in pieces])
        u, inv = np.unique(allv, return_inverse=True)
        counts = np.zeros(u.size, dtype=np.int64)
        np.add.at(counts, inv.ravel(), allc)
        return u, counts
    hists = dask.compute(*[dask.delayed(_binned_chunk)(p, edges) for p in parts])
    total = np.sum(hists, axis=0) if hists else np.zeros(edges.size - 1, dtype=np.int64)
    keep = total > 0
    return edges[:-1][keep], np.asarray(total, dtype=np.int64)[keep]


def quantiles(series: Any, qs: ArrayLike, *, epsilon: float, bounds: tuple[float, float] | None = None,
              method: str = "auto", bins: ArrayLike | None = None, candidates: ArrayLike | None = None,
              rng: RngLike = None,
              accountant: Accountant | None = None, neighbours: str = "replace_one",
              targets: str | None = None) -> np.ndarray:
    """Private quantiles of a dask Series or 1-D dask array, with the law of :func:`dpselect.quantiles`.

    What it releases: exactly what ``dpselect.quantiles(values, qs, counts=counts, epsilon=..., bounds=...,
    method=..., rng=rng)`` releases on the summary ``(values, counts) = _summarise(series, bins)``: the exact
    distinct values and counts without ``bins`` (so the same law as on the computed series itself), or the
    records clipped into [bins[0], bins[-1]] and rounded down to the public bin edges ``bins``. One pass over the data, nothing random on the
    workers; the same ``rng`` gives the same values as the in-memory call on the summary.

    Privacy: that of :func:`dpselect.quantiles`: ε-DP under replace-one-record neighbours with n public
    (and ``bounds`` public when given; ``bounds=None`` runs the unbounded method, with no public bound and
    no :class:`~dpselect.PrivacyLeakWarning`). Rounding to public bins is a fixed map of each record, so it
    keeps the guarantee. ``neighbours="add_remove"``: ε-DP under add/remove-one neighbours instead, as in
    :func:`dpselect.quantiles` (``bounds=None`` and ``method="joint"`` refused before the pass).

    Parameters
    ----------
    series : dask Series or 1-D dask array
        The records' values (finite; NaN or inf is a ``ValueError``).
    qs : array of float
        Quantiles in [0, 1], any order.
    epsilon : float
        Total privacy budget, > 0.
    bounds : (float, float) or None
        Public bounds, or None for the unbounded method; a value outside them is treated as by
        :func:`dpselect.quantiles`.
    method : {"auto", "joint", "recursive", "independent"}
        As in :func:`dpselect.quantiles`.
    bins : array of float, optional
        Public bin edges for a histogram reduction (for many distinct values); a value outside them is
        clipped into the first or last bin (as :func:`dpselect.quantiles` treats ``bounds``).
    candidates : array of float, optional
        A public grid of output values in place of ``bounds``, as in :func:`dpselect.quantiles`.
    rng : numpy.random.Generator or int, optional
    accountant : dpselect.Accountant, optional
        Charged by :func:`dpselect.quantiles` (label ``"quantiles"``) after the data are checked, before
        any random bit; the arguments are checked before the pass over the data.
    neighbours : {"replace_one", "add_remove"}
        The neighbour model, as in :func:`dpselect.quantiles`.
    targets : {"anchored", "relative"} or None
        The recursive method's targets, as in :func:`dpselect.quantiles`.

    Returns
    -------
    numpy.ndarray of float64
        One value per entry of ``qs``, in its order.

    Examples
    --------
    >>> import dask.array as da, numpy as np, dpselect
    >>> x = np.random.default_rng(0).normal(50.0, 10.0, size=4000)
    >>> out = quantiles(da.from_array(x, chunks=1000), [0.25, 0.5, 0.75], epsilon=1.0, rng=0)
    >>> v, c = np.unique(x, return_counts=True)
    >>> bool(np.all(out == dpselect.quantiles(v, [0.25, 0.5, 0.75], epsilon=1.0, counts=c, rng=0)))
    True
    """
    check_positive(epsilon, "epsilon")
    _check_qs(qs)
    _check_bounds(bounds)
    meth = _check_method(method)
    nb = _check_neighbours(neighbours)
    resolve_targets(targets, nb == "add_remove")
    grid = _check_candidates(candidates)
    _refuse_add_remove(nb, unbounded=bounds is None and grid is None, method=meth, grid=grid is not None)
    check_accountant(accountant)
    edges = _check_bins(bins)
    _parts(series)                      # the type of series, before the pass
    values, counts = _summarise(series, edges)
    # an empty series goes to dpselect.quantiles as it is: it answers as in memory for the neighbour model
    return _quantiles(values, qs, epsilon=epsilon, bounds=bounds, method=method,  # type: ignore[arg-type]
                      counts=counts, candidates=grid, rng=rng, accountant=accountant, neighbours=nb,
                      targets=targets)  # type: ignore[arg-type]
