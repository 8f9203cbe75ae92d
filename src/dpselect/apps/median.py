"""Private median selection (thesis Ch. 5): report a record whose value is close to the median.

One call to a selection mechanism over the records, with utility u_med(x, i) = −|x_m − x_i|
(:mod:`dpselect.utilities.median`). Records with equal values are interchangeable (equal utility and
equal element local sensitivity), so the mechanisms run on the distinct values with their counts as
the base measure (``weights``): the output distribution over values is exactly that of the
per-record mechanism, and a database of 27.9 million records with 4,096 distinct values costs 4,096
candidates. The record index is then drawn uniformly among the records with the selected value, which
makes the distribution over indices equal to the per-record one too.

Privacy: ε-DP under **replace-one-record** neighbours (database size n public, every value in
[0, bound]).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from .._rng import check_rng
from .._validation import check_choice, check_int, check_positive
from ..utilities.median import (
    _check_counts,
    _GroupedMedian,
    check_median_values,
    grouped_median_sensitivity,
)

__all__ = ["median", "median_probabilities", "histogram_to_database", "histogram_groups", "MEDIAN_MECHANISMS"]

MEDIAN_MECHANISMS = ("local_dampening", "shifted_local_dampening", "exponential", "permute_and_flip")
#: Default distance T from which shifted local dampening takes δ = Λ (``sld_distance``). The exact δ only
#: reaches Λ near t = n/2, and each distance costs O(t) per distinct value, so summing the shift
#: G_r = Σ_t (Λ − δ(x, t, r)) to the end is O(n²): hopeless for millions of records. Forcing δ = Λ from a
#: public distance T on is admissible for any T >= 1 (condition 1 only involves t = 0, and for
#: t + 1 >= T condition 2 compares Λ with a value <= Λ), so it is private; it only makes the shift coarser.
DEFAULT_SLD_DISTANCE = 256
Mechanism = Literal["local_dampening", "shifted_local_dampening", "exponential", "permute_and_flip"]


# ---------------------------------------------------------------------------------------------
# histograms
# ---------------------------------------------------------------------------------------------
def _check_histogram(hist) -> np.ndarray:
    try:
        h = np.asarray(hist)
    except Exception as exc:
        raise TypeError(f"hist must be a 1-D array of counts: {exc}") from None
    if h.ndim != 1 or h.size == 0:
        raise ValueError(f"hist must be a non-empty 1-D array of bin counts, got shape {h.shape}")
    if not np.issubdtype(h.dtype, np.integer):
        if np.issubdtype(h.dtype, np.floating) and np.all(np.isfinite(h)) and np.all(h == np.round(h)):
            h = h.astype(np.int64)
        else:
            raise TypeError(f"hist must hold integer counts, got dtype {h.dtype}")
    if (h < 0).any():
        i = int(np.flatnonzero(h < 0)[0])
        raise ValueError(f"hist counts must be >= 0: hist[{i}] = {int(h[i])}")
    if h.sum() == 0:
        raise ValueError("hist must contain at least one record (all counts are 0)")
    return h.astype(np.int64, copy=False)


def _bin_values(n_bins: int, bound: float | None) -> tuple[np.ndarray, float]:
    idx = np.arange(n_bins, dtype=np.float64)
    if bound is None:
        return idx, float(max(n_bins - 1, 1))
    bound = check_positive(bound, "bound")
    return (idx * (bound / (n_bins - 1)) if n_bins > 1 else idx), bound


def histogram_groups(hist, *, bound: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """A histogram as a grouped database: (distinct values, counts, bound), never expanded.

    Bin i holds ``hist[i]`` records of value i·bound/(B − 1) (B bins); without ``bound`` the values are
    the bin indices and bound = B − 1. Empty bins are dropped.

    >>> histogram_groups([2, 0, 1])
    (array([0., 2.]), array([2, 1]), 2.0)
    """
    h = _check_histogram(hist)
    vals, bound = _bin_values(h.size, bound)
    keep = h > 0
    return vals[keep], h[keep], bound


def histogram_to_database(hist, *, bound: float | None = None) -> np.ndarray:
    """The sorted database of a histogram: each bin's value repeated by its count (see histogram_groups).

    Materialises one float64 per record (PATENT: 27.9 million, 224 MB); :func:`median` and
    :func:`median_probabilities` take ``counts=`` instead to avoid that.

    >>> histogram_to_database([2, 0, 1], bound=1.0).tolist()
    [0.0, 0.0, 1.0]
    """
    vals, counts, _ = histogram_groups(hist, bound=bound)
    return np.repeat(vals, counts)


# ---------------------------------------------------------------------------------------------
# selection
# ---------------------------------------------------------------------------------------------
def _prepare(values, bound, counts) -> _GroupedMedian:
    bound = check_positive(bound, "bound")
    x = check_median_values(values, bound, name="values")
    if counts is None:
        x = np.sort(x, kind="stable")
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        c = np.diff(np.concatenate((starts, [x.size]))).astype(np.int64)
        return _GroupedMedian(x[starts], c, bound)
    c = _check_counts(counts, x.shape[0])
    order = np.argsort(x, kind="stable")
    x, c = x[order], c[order]
    if x.size > 1 and np.any(x[1:] == x[:-1]):  # merge repeated values
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        c = np.add.reduceat(c, starts)
        x = x[starts]
    return _GroupedMedian(x, c, bound)


def _sld_sensitivity(g: _GroupedMedian, sld_distance):
    """The exact δ, forced to Λ from distance min(n, sld_distance) on (see DEFAULT_SLD_DISTANCE)."""
    T = DEFAULT_SLD_DISTANCE if sld_distance is None else check_int(sld_distance, "sld_distance", minimum=1)
    return _sensitivity(g).bounded(min(g.n, T))


def _sensitivity(g: _GroupedMedian):
    return grouped_median_sensitivity(g.values, g.counts, g.bound)


def _group_probabilities(g: _GroupedMedian, epsilon: float, mechanism: str, sld_distance=None) -> np.ndarray:
    import dpselect as dps

    u = g.utilities()
    w = g.counts.astype(np.float64)
    if mechanism == "exponential":
        return dps.exponential_probabilities(u, epsilon, g.bound, weights=w)
    if mechanism == "local_dampening":
        return dps.local_dampening_probabilities(u, epsilon, _sensitivity(g), weights=w)
    if mechanism == "shifted_local_dampening":
        return dps.shifted_local_dampening_probabilities(
            u, epsilon, _sld_sensitivity(g, sld_distance), direction="decreasing", weights=w)
    if mechanism == "permute_and_flip":
        return dps.permute_and_flip_probabilities(u, epsilon, g.bound, weights=g.counts)
    raise AssertionError(mechanism)


def median(
    values,
    epsilon: float,
    *,
    bound: float,
    mechanism: Mechanism = "local_dampening",
    counts=None,
    rng: np.random.Generator | int | None = None,
    sld_distance: int | None = None,
) -> tuple[int, float]:
    """Select a record close to the median under ε-differential privacy.

    Parameters
    ----------
    values : array of shape (n,)
        The database: record values in [0, bound], any order. With ``counts``: distinct values, value
        ``values[g]`` held by ``counts[g]`` records (a histogram; the database is never expanded).
    epsilon : float
        Privacy budget, > 0.
    bound : float
        Λ > 0, the public upper end of the value domain [0, Λ] (also the global sensitivity).
    mechanism : {"local_dampening", "shifted_local_dampening", "exponential", "permute_and_flip"}
        ``"local_dampening"`` uses the element local sensitivity (thesis LDMedianSelection);
        ``"exponential"`` and ``"permute_and_flip"`` the global sensitivity Λ (EM/PFMedianSelection);
        ``"shifted_local_dampening"`` the closed-form shifted variant with direction "decreasing"
        (the local sensitivity grows as the utility falls), with δ forced to Λ from distance
        min(n, ``sld_distance``) on (a bounded sensitivity function; admissible for any distance).
    sld_distance : int, optional
        For shifted local dampening only: the public distance T from which δ = Λ (default
        ``DEFAULT_SLD_DISTANCE`` = 256). Its shift costs O(T²) per distinct value.
    counts : array of shape (len(values),), optional
        Multiplicities of ``values``.
    rng : numpy.random.Generator or int, optional

    Returns
    -------
    (index, value)
        ``index`` is the position of the selected record in the sorted database (0-based),
        ``value`` its value.

    Privacy: ε-DP under replace-one-record neighbours (n public, values in [0, bound]).

    Examples
    --------
    >>> median([5.0, 1.0, 9.0, 4.0, 7.0], 100.0, bound=10.0, rng=0)
    (2, 5.0)
    """
    eps = check_positive(epsilon, "epsilon")
    mechanism = check_choice(mechanism, "mechanism", MEDIAN_MECHANISMS)
    g = _prepare(values, bound, counts)
    rng = check_rng(rng)
    import dpselect as dps

    u = g.utilities()
    w = g.counts.astype(np.float64)
    if mechanism == "exponential":
        pick = dps.exponential(u, eps, g.bound, weights=w, rng=rng)
    elif mechanism == "permute_and_flip":
        pick = dps.permute_and_flip(u, eps, g.bound, weights=w, rng=rng)
    elif mechanism == "local_dampening":
        pick = dps.local_dampening(u, eps, _sensitivity(g), weights=w, rng=rng)
    else:
        pick = dps.shifted_local_dampening(u, eps, _sld_sensitivity(g, sld_distance), direction="decreasing",
                                           weights=w, rng=rng)
    pick = int(pick)
    first = int(g.cum[pick] - g.counts[pick])
    index = first + int(rng.integers(int(g.counts[pick])))
    return index, float(g.values[pick])


def median_probabilities(
    values,
    epsilon: float,
    *,
    bound: float,
    mechanism: Mechanism = "local_dampening",
    counts=None,
    sld_distance: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution of :func:`median` over the distinct values.

    Returns ``(distinct_values, probabilities)``. Closed form for the exponential mechanism, local
    dampening and shifted local dampening; ``"permute_and_flip"`` expands the records (small databases
    only, see :func:`dpselect.permute_and_flip_probabilities`).

    >>> v, p = median_probabilities([0.0, 5.0, 10.0], 1.0, bound=10.0, mechanism="exponential")
    >>> p.round(3).tolist()
    [0.305, 0.391, 0.305]
    """
    eps = check_positive(epsilon, "epsilon")
    mechanism = check_choice(mechanism, "mechanism", MEDIAN_MECHANISMS)
    g = _prepare(values, bound, counts)
    return g.values.copy(), _group_probabilities(g, eps, mechanism, sld_distance)


def median_error(values, epsilon: float, *, bound: float, mechanism: Mechanism = "local_dampening",
                 counts=None) -> float:
    """Expected |selected value − true median| of :func:`median` (exact, from the output distribution).

    >>> round(median_error([0.0, 5.0, 10.0], 1.0, bound=10.0, mechanism="exponential"), 3)
    3.045
    """
    v, p = median_probabilities(values, epsilon, bound=bound, mechanism=mechanism, counts=counts)
    g = _prepare(values, bound, counts)
    return float(np.dot(p, np.abs(v - g.median)))


__all__.append("median_error")
