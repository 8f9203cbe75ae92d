"""The private median: release a value close to the median under ε-DP (and the thesis' rank selection).

:func:`median` releases **a value**, ε-DP for replace-one-record neighbours on [0, bound] (n and
``bound`` public). It picks one of the intervals between consecutive order statistics (0 and
``bound`` as ends) with a selection mechanism, base measure = interval length, utility = minus the
distance in rank between the interval and the middle, −|j − n/2| (sensitivity 1; see
:mod:`dpselect.utilities.median`), then a uniform value inside the chosen interval. The released
value's exact law is :func:`median_distribution`.

:func:`median_rank` is the thesis' record selection (thesis Ch. 5: LD/EM/PF/SLD MedianSelection on
u_med(x, i) = −|x_m − x_i|) and releases **only the rank** of the selected record. Releasing that
record's *value* is not private: for x = (0, 0, 0) the value 3 is impossible while for its neighbour
(3, 0, 0) it comes out with probability 0.23 (Λ = 3, ε = 1, local dampening), an infinite privacy
loss. :func:`median_probabilities` is the exact law of the rank selection, grouped by value (for
analysis, e.g. ``reproduce thesis-figure17``).

Records with equal values are interchangeable for both, so everything runs on the distinct values
with their counts (``counts=``): a database of 27.9 million records with 4,096 distinct values costs
4,096 candidates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from .._exact_random import bernoulli_rational_bytes as _bernoulli
from .._exact_random import uniform_float_bytes as _uniform_float
from .._rng import check_rng
from ..typing import RngLike
from .._validation import check_int, check_positive
from ..utilities.median import (
    GroupedDatabase,
    MedianIntervals,
    grouped_database,
    grouped_median_sensitivity,
    interval_median_sensitivity,
)
from ..sensitivity import SensitivityFunction
from .._boundary import charge, check_accountant
from ..accounting.accountant import Accountant
from ..registry import Mechanism, get_mechanism, names

__all__ = ["median", "median_distribution", "MedianDistribution", "median_error", "median_rank",
           "median_probabilities", "histogram_to_database", "histogram_groups", "MEDIAN_MECHANISMS",
           "RANK_MECHANISMS"]



def _value_mechanisms() -> tuple[str, ...]:
    """The registry's Gumbel-noise mechanisms: their base measure may be any w > 0 (the interval lengths)."""
    return names(noise="gumbel")


def _rank_mechanisms() -> tuple[str, ...]:
    """The registry's mechanisms of one fixed law (report-noisy-max, a family of three noises, is left out)."""
    return names(where=lambda m: len(m.noises) == 1)


#: Mechanisms of the value-releasing :func:`median`: the registry's Gumbel-noise mechanisms (a registry query,
#: ``names(noise="gumbel")``; the built-in three give the same law, see :mod:`dpselect.utilities.median`: the
#: interval utility is at its global sensitivity everywhere).
MEDIAN_MECHANISMS = _value_mechanisms()
#: Mechanisms of the thesis' rank selection :func:`median_rank`: the registry's mechanisms of one fixed noise.
RANK_MECHANISMS = _rank_mechanisms()
#: Default distance T from which shifted local dampening takes δ = Λ in :func:`median_rank`
#: (``sld_distance``). The exact δ only reaches Λ near t = n/2, and each distance costs O(t) per distinct
#: value, so summing the shift G_r = Σ_t (Λ − δ(x, t, r)) to the end is O(n²): hopeless for millions of
#: records. Forcing δ = Λ from a public distance T on is admissible for any T >= 1 (condition 1 only
#: involves t = 0, and for t + 1 >= T condition 2 compares Λ with a value <= Λ), so it is private; it
#: only makes the shift coarser.
DEFAULT_SLD_DISTANCE = 256
MedianMechanism = Literal["local_dampening", "exponential", "shifted_local_dampening", "LD", "EM", "SLD"]
RankMechanism = Literal["local_dampening", "shifted_local_dampening", "exponential", "permute_and_flip", "LD", "SLD",
                        "EM", "PF"]


# ---------------------------------------------------------------------------------------------
# histograms
# ---------------------------------------------------------------------------------------------
def _check_histogram(hist: ArrayLike) -> np.ndarray:
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


def histogram_groups(hist: ArrayLike, *, bound: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """A histogram as a grouped database: (distinct values, counts, bound), never expanded.

    Bin i holds ``hist[i]`` records of value i·bound/(B − 1) (B bins); without ``bound`` the values are
    the bin indices and bound = B − 1. Empty bins are dropped.

    Parameters
    ----------
    hist : array of shape (B,)
        Non-negative integer bin counts, at least one record.
    bound : float, optional
        The value of the last bin (Λ); default B − 1.

    Returns
    -------
    (values, counts, bound) : (float64 array, int64 array, float)
        The non-empty bins' values and counts, and the bound.

    Examples
    --------
    >>> histogram_groups([2, 0, 1])
    (array([0., 2.]), array([2, 1]), 2.0)
    """
    h = _check_histogram(hist)
    vals, bound = _bin_values(h.size, bound)
    keep = h > 0
    return vals[keep], h[keep], bound


def histogram_to_database(hist: ArrayLike, *, bound: float | None = None) -> np.ndarray:
    """The sorted database of a histogram: each bin's value repeated by its count (see histogram_groups).

    Materialises one float64 per record (PATENT: 27.9 million, 224 MB); :func:`median` and
    :func:`median_probabilities` take ``counts=`` instead to avoid that.

    Parameters
    ----------
    hist, bound
        As in :func:`histogram_groups`.

    Returns
    -------
    numpy.ndarray of float64, shape (hist.sum(),)

    Examples
    --------
    >>> histogram_to_database([2, 0, 1], bound=1.0).tolist()
    [0.0, 0.0, 1.0]
    """
    vals, counts, _ = histogram_groups(hist, bound=bound)
    return np.repeat(vals, counts)


# ---------------------------------------------------------------------------------------------
# the value-releasing median
# ---------------------------------------------------------------------------------------------
def _prepare(values: ArrayLike, bound: float, counts: ArrayLike | None) -> GroupedDatabase:
    return grouped_database(values, bound, counts)


def _check_value_mechanism(mechanism: "str | Mechanism") -> str:
    spec = get_mechanism(mechanism)
    if spec.name not in _value_mechanisms():
        noise = "declares no noise family" if spec.noise is None else f"noise {spec.noise!r}"
        raise ValueError(
            f"mechanism={spec.name!r} is not available for median: the released value ranges over the "
            f"continuum [0, bound], and {spec.name} ({noise}) is defined for finitely many "
            "candidates (its 'copies' form with interval lengths as weights depends on the unit of the values "
            f"and has no privacy proof). Use one of {', '.join(_value_mechanisms())} (or "
            f"median_rank(..., mechanism={spec.name!r}) for the rank)"
        )
    return spec.name


def _interval_sensitivity(spec: Mechanism, iv: MedianIntervals) -> tuple:
    """(sensitivity, options) of ``spec`` on the interval utility: Δ = 1, or its δ (decreasing in u)."""
    if spec.kind == "global":
        return 1.0, {}
    return interval_median_sensitivity(iv), ({"direction": "decreasing"} if spec.accepts("direction") else {})


def _upper_lengths(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """float64 upper bounds W_j >= hi_j − lo_j (exact real difference), at most one ulp above it; +inf exactly
    where the real difference exceeds the largest float (no finite upper bound exists).

    The float difference is correctly rounded; its rounding error comes out exactly of Knuth's TwoSum,
    and where the float is below the real difference it is moved up one ulp. Overflow-safe: a difference that
    overflows (s = ±inf, e.g. [−1e308, 0.9e308]) would turn TwoSum's terms into inf − inf = NaN; it is +inf
    without a warning (a warning that depends on where the records sit would itself be a release). Callers
    refuse domains of such a width before any charge (``dpselect.quantiles``' bounds check); the median's
    [0, bound] never reaches it.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        s = hi - lo
        bv = s - hi
        av = s - bv
        err = (hi - av) + (-lo - bv)  # exact: (hi − lo) = s + err (when s is finite)
        up = np.where(err > 0, np.nextafter(s, np.inf), s)
    return np.where(np.isfinite(s), up, np.inf)


def _select_interval(iv: MedianIntervals, eps: float, mechanism: str, weights: np.ndarray,
                     rng: np.random.Generator) -> int:
    spec = get_mechanism(mechanism)
    sens, opts = _interval_sensitivity(spec, iv)
    return int(spec.select(iv.utility, epsilon=eps, sensitivity=sens, base_measure=weights, rng=rng, **opts))


def median(
    values: ArrayLike,
    *,
    epsilon: float,
    bound: float,
    mechanism: MedianMechanism = "local_dampening",
    counts: ArrayLike | None = None,
    rng: RngLike = None,
    accountant: Accountant | None = None,
) -> float:
    """Release a value close to the median under ε-differential privacy.

    What it selects: one of the intervals between consecutive order statistics of the database, with
    0 and ``bound`` as the outer ends (intervals of length 0, from ties, drop out), with probability
    ∝ length · exp(ε·u_j / 2) where u_j = −|j − n/2| and j is the number of records at or below the
    interval; then a value drawn uniformly inside that interval. Equivalently: a value v ∈ [0, bound]
    with density ∝ exp(−ε·|#{records <= v} − n/2| / 2). The value returned is never read off a record.

    Privacy: ε-differentially private under **replace-one-record** neighbours (n fixed, the new value
    anywhere in [0, bound]), with n and ``bound`` public. The guarantee holds for the float returned:
    the uniform value is sampled exactly (random bits, exact rational arithmetic) and rounded to the
    nearest float64, a post-processing of the real-valued release; the interval's length enters the
    selection as a float upper bound and is corrected by an exact rejection step, so the law is
    exactly the one :func:`median_distribution` describes (given an exact selection sampler).

    Parameters
    ----------
    values : array of shape (n,)
        The database: record values, any order. A value outside [0, bound] (±inf included) is clipped
        into it (a record-wise map, so the guarantee holds for any real data; refusing it would be an
        error that depends on the data); NaN is a ``ValueError``. With ``counts``: distinct values, value
        ``values[g]`` held by ``counts[g]`` records (a histogram; never expanded).
    epsilon : float
        Privacy budget, > 0. Keyword-only (``median(values, epsilon=..., bound=...)``).
    bound : float
        Λ > 0, the public upper end of the value domain [0, Λ]. Shift data to start at 0 if needed.
    mechanism : {"local_dampening", "exponential", "shifted_local_dampening"} or an alias (LD, EM, SLD)
        The selection mechanism over the intervals. The rank utility has element local sensitivity 1
        (= its global sensitivity) everywhere, so the three give the same law (local dampening with
        δ ≡ 1 is the exponential mechanism); the choice is kept for symmetry with :func:`median_rank`.
        Permute-and-flip is not offered (no form over a continuum).
    counts : array of shape (len(values),), optional
        Multiplicities of ``values``.
    rng : numpy.random.Generator or int, optional
    accountant : dpselect.Accountant, optional
        Charged ``mechanism.privacy(epsilon)`` (``BoundedRange(ε)``: the released value's density is an
        exponential mechanism's, ε-bounded-range under replace-one neighbours) under the label
        ``"median"``, after the arguments are checked and before any random bit is drawn; a release
        that would exceed its budget raises :class:`~dpselect.BudgetExceededError` and draws nothing.

    Returns
    -------
    float
        The released value, in [0, bound].

    ``quantile(values, 0.5, epsilon=epsilon, bounds=(0, bound), counts=counts)`` is its sibling: the same law,
    the same value for the same ``rng`` and the same charge. See also :func:`median_distribution` (the exact
    law), :func:`median_error` (its expected error) and :func:`median_rank` (the thesis' record selection,
    which releases a rank only).

    Examples
    --------
    >>> v = median([5.0, 1.0, 9.0, 4.0, 7.0], epsilon=100.0, bound=10.0, rng=0)  # [4, 7) has the two best intervals
    >>> type(v).__name__, 4.0 <= v < 7.0
    ('float', True)
    >>> import dpselect
    >>> acc = dpselect.Accountant(epsilon=1.0, neighbours="replace_one")
    >>> _ = median([5.0, 1.0, 9.0], epsilon=0.5, bound=10.0, rng=0, accountant=acc)
    >>> acc.history[-1].label, acc.history[-1].guarantee
    ('median', BoundedRange(epsilon=0.5))
    """
    eps = check_positive(epsilon, "epsilon")
    mech = _check_value_mechanism(mechanism)
    acc = check_accountant(accountant)
    g = _prepare(values, bound, counts)
    gen = check_rng(rng)
    charge(acc, get_mechanism(mech).privacy(eps), label="median", neighbours="replace_one")
    return _release_value(g.intervals(), eps, mech, gen)


def _release_value(iv: MedianIntervals, eps: float, mech: str, gen: np.random.Generator) -> float:
    """The interval mechanism's draw: interval j with probability ∝ |I_j|·exp(ε·u_j/2), then a uniform in it.

    Shared with :mod:`dpselect.quantiles` (``iv.utility`` may target any rank there). The lengths enter the
    selection as float upper bounds, corrected exactly by a Bernoulli rejection; the uniform is exact.
    """
    weights = _upper_lengths(iv.lo, iv.hi)
    if not np.all(np.isfinite(weights)):
        # only the domain's width can cause it (every interval lies inside [lo_0, hi_last]); the message names
        # the domain's public ends, never an interval (whose ends are records)
        raise OverflowError(f"the domain [{float(iv.lo[0])!r}, {float(iv.hi[-1])!r}] is wider than the largest "
                            "float; its width must be checked before the release")
    while True:  # accepts with probability >= 1 − 2^-52: one round in practice
        j = _select_interval(iv, eps, mech, weights, gen)
        exact = Fraction(float(iv.hi[j])) - Fraction(float(iv.lo[j]))
        if _bernoulli(exact / Fraction(float(weights[j])), gen):
            break
    return _uniform_float(float(iv.lo[j]), float(iv.hi[j]), gen)


@dataclass(frozen=True)
class MedianDistribution:
    """The exact law of :func:`median`'s released value (before rounding to float64).

    Piecewise uniform: with probability ``probabilities[j]`` the value is uniform on
    [``lo[j]``, ``hi[j]``). ``atoms`` maps a value to its point mass; it is always empty for this
    construction (every interval has positive length and the intervals tile [0, bound]), and is part
    of the interface so that audits treat point masses and densities alike. The probabilities come
    from the selectors' ``*_probabilities`` functions (float64; far tails can underflow to 0).

    Parameters
    ----------
    lo, hi : numpy.ndarray
        The intervals' ends (they tile [0, bound]).
    probabilities : numpy.ndarray
        Pr[value in interval j].
    epsilon, bound : float
    mechanism : str
        The canonical mechanism name.
    atoms : dict
        Point masses (always empty here).
    density : numpy.ndarray, optional
        The density on each interval.

    Examples
    --------
    >>> d = median_distribution([1.0, 2.0], epsilon=1.0, bound=3.0)
    >>> d.probabilities.shape, d.atoms, round(float(d.cdf(3.0)), 6)
    ((3,), {}, 1.0)
    """

    lo: np.ndarray
    hi: np.ndarray
    probabilities: np.ndarray
    epsilon: float
    bound: float
    mechanism: str
    atoms: dict = field(default_factory=dict)
    #: Density on each interval (p_j / |I_j|, computed without underflow where p_j underflows); None: p / |I|.
    density: np.ndarray | None = None

    def _index(self, v: np.ndarray) -> np.ndarray:
        j = np.searchsorted(self.lo, v, side="right") - 1
        return np.clip(j, 0, self.lo.shape[0] - 1)

    def pdf(self, v: ArrayLike) -> float | np.ndarray:
        """Density of the continuous part at ``v`` (array or scalar): p_j / |I_j| inside [0, bound], else 0;
        NaN at ``v = nan`` (a missing point has no density, as in numpy and scipy.stats).

        Right-continuous at the interval ends (the density at v = bound is the last interval's). Where
        p_j underflows but the density does not (a tiny interval beside a huge one) the density is still
        returned (e.g. 6e-301 on [0, 1e-300) for values [1e-300, 1e300], bound 1e300).

        Parameters
        ----------
        v : float or array-like

        Returns
        -------
        float or numpy.ndarray
            A float for a scalar ``v``, else an array of ``v``'s shape.

        Examples
        --------
        >>> d = median_distribution([0.0, 0.0, 0.0], epsilon=1.0, bound=3.0)
        >>> round(d.pdf(1.0), 6), d.pdf([-1.0, 4.0]).tolist()
        (0.333333, [0.0, 0.0])
        """
        arr = np.asarray(v, dtype=np.float64)
        j = self._index(arr)
        dens = (self.density if self.density is not None else self.probabilities / (self.hi - self.lo))[j]
        out = np.where((arr >= 0.0) & (arr <= self.bound), dens, 0.0)
        out = np.where(np.isnan(arr), np.nan, out)
        return float(out) if out.ndim == 0 else out

    def cdf(self, v: ArrayLike) -> float | np.ndarray:
        """P(released value <= v), vectorised; NaN at ``v = nan``.

        Parameters
        ----------
        v : float or array-like

        Returns
        -------
        float or numpy.ndarray
            A float for a scalar ``v``, else an array of ``v``'s shape.

        Examples
        --------
        >>> d = median_distribution([0.0, 0.0, 0.0], epsilon=1.0, bound=3.0)
        >>> d.cdf(1.5), d.cdf([0.0, 3.0]).tolist()
        (0.5, [0.0, 1.0])
        """
        arr = np.asarray(v, dtype=np.float64)
        j = self._index(arr)
        before = np.concatenate(([0.0], np.cumsum(self.probabilities)))[j]
        frac = np.clip((arr - self.lo[j]) / (self.hi[j] - self.lo[j]), 0.0, 1.0)
        out = np.where(arr < 0.0, 0.0, np.where(arr >= self.bound, 1.0, before + self.probabilities[j] * frac))
        out = np.where(np.isnan(arr), np.nan, out)
        return float(out) if out.ndim == 0 else out

    def expected_abs_error(self, center: float) -> float:
        """E|V − center| in closed form (uniform on each interval).

        Parameters
        ----------
        center : float

        Returns
        -------
        float

        Examples
        --------
        >>> median_distribution([0.0, 0.0, 0.0], epsilon=1.0, bound=3.0).expected_abs_error(0.0)
        1.5
        """
        c = float(center)
        a, b = self.lo, self.hi
        mid = (a + b) / 2.0
        inside = ((c - a) ** 2 + (b - c) ** 2) / (2.0 * (b - a))
        e = np.where(c <= a, mid - c, np.where(c >= b, c - mid, inside))
        return float(self.probabilities @ e)


def _interval_probabilities(iv: MedianIntervals, eps: float, mechanism: str, lengths: bool = True) -> np.ndarray:
    """Pr[interval j] (base measure = length), or with ``lengths=False`` the same mechanism without a base
    measure (q_j ∝ the selection weight alone; the density on interval j is q_j / Σ_k q_k |I_k|)."""
    w = _upper_lengths(iv.lo, iv.hi) if lengths else None
    spec = get_mechanism(mechanism)
    sens, opts = _interval_sensitivity(spec, iv)
    return spec.probabilities(iv.utility, epsilon=eps, sensitivity=sens, base_measure=w, **opts)


def median_distribution(values: ArrayLike, *, epsilon: float, bound: float,
                        mechanism: MedianMechanism = "local_dampening",
                        counts: ArrayLike | None = None) -> MedianDistribution:
    """The exact law of :func:`median`'s released value: ``.atoms`` (empty) and a piecewise-constant ``.pdf``.

    Same arguments as :func:`median` (without ``rng``). The density on interval j is
    p_j / |I_j| ∝ exp(−ε·|j − n/2| / 2); on replace-one neighbours the two densities differ by at
    most e^ε at every point (an exact audit over every database of up to 4 values on {0..3}, on a grid of
    points, confirms it).

    Parameters
    ----------
    values, epsilon, bound, mechanism, counts
        As in :func:`median`.

    Returns
    -------
    MedianDistribution
        Read-only arrays ``lo``, ``hi``, ``probabilities`` (one entry per interval of positive length).

    Examples
    --------
    >>> d = median_distribution([0.0, 0.0, 0.0], epsilon=1.0, bound=3.0)
    >>> d.atoms, d.lo.tolist(), d.hi.tolist(), round(float(d.pdf(1.5)), 6)
    ({}, [0.0], [3.0], 0.333333)
    >>> d = median_distribution([1.0, 2.0], epsilon=1.0, bound=3.0, mechanism="exponential")
    >>> d.pdf([0.5, 1.5, 2.5]).round(4).tolist(), round(d.cdf(1.5), 4)
    ([0.2741, 0.4519, 0.2741], 0.5)
    """
    eps = check_positive(epsilon, "epsilon")
    mech = _check_value_mechanism(mechanism)
    iv = _prepare(values, bound, counts).intervals()
    p = _interval_probabilities(iv, eps, mech)
    p.setflags(write=False)
    density = _densities(iv, eps, mech, p)
    density.setflags(write=False)
    return MedianDistribution(iv.lo, iv.hi, p, eps, iv.bound, mech, density=density)


def _densities(iv: MedianIntervals, eps: float, mech: str, p: np.ndarray) -> np.ndarray:
    """p_j / |I_j|, and where p_j underflowed (a long interval beside a tiny one: [1e-300, 1e300] with
    bound 1e300 gives Pr = 1e-600 e^-ε/2 on [0, 1e-300) but the density 6e-301 there) the same density as
    q_j / Σ_k q_k |I_k| from the unweighted selection probabilities q, which do not underflow with it."""
    length = iv.hi - iv.lo
    dens = p / length
    small = p < np.finfo(np.float64).tiny
    if small.any():
        q = _interval_probabilities(iv, eps, mech, lengths=False)
        with np.errstate(over="ignore"):
            total = float(q @ length)
        if not np.isfinite(total):     # Σ q |I| near DBL_MAX: scale the lengths first
            scale = float(length.max())
            alt = (q / float(q @ (length / scale))) / scale
        else:
            alt = q / total
        dens = np.where(small, alt, dens)
    return dens


def median_error(values: ArrayLike, *, epsilon: float, bound: float, mechanism: MedianMechanism = "local_dampening",
                 counts: ArrayLike | None = None) -> float:
    """Expected |released value − true median| of :func:`median` (exact, from :func:`median_distribution`).

    The true median is x_m with m = ⌈n/2⌉ (the thesis' convention, also used for Figure 17).

    Parameters
    ----------
    values, epsilon, bound, mechanism, counts
        As in :func:`median`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(median_error([0.0, 5.0, 10.0], epsilon=1.0, bound=10.0), 3)  # uniform on [0, 10]: both intervals tie
    2.5
    """
    g = _prepare(values, bound, counts)
    d = median_distribution(g.values, epsilon=epsilon, bound=bound, mechanism=mechanism, counts=g.counts)
    return d.expected_abs_error(g.median)


# ---------------------------------------------------------------------------------------------
# the thesis' record selection: releases a rank
# ---------------------------------------------------------------------------------------------
def _check_sld_distance(sld_distance: int | None, mechanism: str) -> None:
    if sld_distance is not None and get_mechanism(mechanism).score != "shifted":
        raise ValueError(f"sld_distance only applies to mechanism='shifted_local_dampening' (shifted scores), got "
                         f"sld_distance={sld_distance!r} with mechanism={mechanism!r}")


def _sensitivity(g: GroupedDatabase) -> SensitivityFunction:
    return grouped_median_sensitivity(g.values, g.counts, g.bound)


def _rank_sensitivity(spec: Mechanism, g: GroupedDatabase, sld_distance: int | None) -> tuple:
    """(sensitivity, options) of ``spec`` on u_med: Λ (global), the exact δ (dampened scores), or δ forced
    to Λ from min(n, ``sld_distance``) on (shifted scores, which need a bounded δ), decreasing in u."""
    if spec.kind == "global":
        return g.bound, {}
    sf = _sensitivity(g)
    if spec.score == "shifted":
        T = DEFAULT_SLD_DISTANCE if sld_distance is None else check_int(sld_distance, "sld_distance", minimum=1)
        sf = sf.bounded(min(g.n, T))
    return sf, ({"direction": "decreasing"} if spec.accepts("direction") else {})


def _group_probabilities(g: GroupedDatabase, epsilon: float, mechanism: str,
                         sld_distance: int | None = None) -> np.ndarray:
    spec = get_mechanism(mechanism)
    sens, opts = _rank_sensitivity(spec, g, sld_distance)
    return spec.probabilities(g.utilities(), epsilon=epsilon, sensitivity=sens, base_measure=g.counts.astype(np.float64),
                              **opts)


def median_rank(
    values: ArrayLike,
    *,
    epsilon: float,
    bound: float,
    mechanism: RankMechanism = "local_dampening",
    counts: ArrayLike | None = None,
    rng: RngLike = None,
    sld_distance: int | None = None,
    accountant: Accountant | None = None,
) -> int:
    """The thesis' private median selection (Ch. 5); releases only the **rank** of the selected record.

    Selects a record with utility u_med(x, i) = −|x_m − x_i| (m = ⌈n/2⌉) and returns its position in
    the sorted database (0-based), ε-DP under replace-one-record neighbours (n and ``bound`` public).

    **Why not its value.** The mechanism is private for *which rank* it outputs, not for the value of
    the record at that rank: the value is a record of the database, so the set of possible values
    depends on the data. For x = (0, 0, 0) (Λ = 3) the value 3 has probability 0, for the neighbour
    (3, 0, 0) it has probability 0.23 at ε = 1: an infinite privacy loss. To release a value use
    :func:`median`.

    Parameters
    ----------
    values, epsilon, bound, counts, rng
        As in :func:`median`.
    mechanism : {"local_dampening", "shifted_local_dampening", "exponential", "permute_and_flip"} or an alias
        ``"local_dampening"`` uses the exact element local sensitivity (thesis LDMedianSelection);
        ``"exponential"`` and ``"permute_and_flip"`` the global sensitivity Λ (EM/PFMedianSelection);
        ``"shifted_local_dampening"`` the closed-form shifted variant with direction "decreasing",
        δ forced to Λ from distance min(n, ``sld_distance``) on (admissible for any distance).
    sld_distance : int, optional
        Shifted local dampening only (a ``ValueError`` with any other mechanism): the public distance
        T from which δ = Λ (default ``DEFAULT_SLD_DISTANCE`` = 256). Its shift costs O(T²) per
        distinct value.
    accountant : dpselect.Accountant, optional
        Charged ``mechanism.privacy(epsilon)`` (``BoundedRange(ε)``; ``PureDP(ε)`` for permute-and-flip)
        under the label ``"median_rank"``, after the arguments are checked and before any random bit is
        drawn (a refused release raises :class:`~dpselect.BudgetExceededError` and draws nothing).

    Returns
    -------
    int
        The position of the selected record in the sorted database; among records with equal values
        it is uniform.

    Examples
    --------
    >>> median_rank([5.0, 1.0, 9.0, 4.0, 7.0], epsilon=100.0, bound=10.0, rng=0)
    2
    """
    eps = check_positive(epsilon, "epsilon")
    spec = get_mechanism(mechanism, allowed=_rank_mechanisms())
    _check_sld_distance(sld_distance, spec.name)
    acc = check_accountant(accountant)
    g = _prepare(values, bound, counts)
    gen = check_rng(rng)
    sens, opts = _rank_sensitivity(spec, g, sld_distance)
    charge(acc, spec.privacy(eps), label="median_rank", neighbours="replace_one")
    pick = spec.select(g.utilities(), epsilon=eps, sensitivity=sens, base_measure=g.counts.astype(np.float64),
                       rng=gen, **opts)
    i = int(pick)
    first = int(g.cum[i] - g.counts[i])
    return first + int(gen.integers(int(g.counts[i])))


def median_probabilities(
    values: ArrayLike,
    *,
    epsilon: float,
    bound: float,
    mechanism: RankMechanism = "local_dampening",
    counts: ArrayLike | None = None,
    sld_distance: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of :func:`median_rank`, grouped by the selected record's value (for analysis).

    Returns ``(distinct_values, probabilities)``: the probability that the selected rank holds each
    value. This describes the thesis' record selection (and its error |x_rank − x_m|); it is not the
    law of anything :func:`median` releases (see :func:`median_distribution`). Closed form for the
    exponential mechanism, local dampening and shifted local dampening; ``"permute_and_flip"``
    expands the records (small databases only).

    Parameters
    ----------
    values, epsilon, bound, mechanism, counts, sld_distance
        As in :func:`median_rank`.

    Returns
    -------
    (distinct_values, probabilities) : (numpy.ndarray, numpy.ndarray)
        Both of shape (number of distinct values,).

    Examples
    --------
    >>> v, p = median_probabilities([0.0, 5.0, 10.0], epsilon=1.0, bound=10.0, mechanism="exponential")
    >>> p.round(3).tolist()
    [0.305, 0.391, 0.305]
    """
    eps = check_positive(epsilon, "epsilon")
    mech = get_mechanism(mechanism, allowed=_rank_mechanisms()).name
    _check_sld_distance(sld_distance, mech)
    g = _prepare(values, bound, counts)
    return g.values.copy(), _group_probabilities(g, eps, mech, sld_distance)
