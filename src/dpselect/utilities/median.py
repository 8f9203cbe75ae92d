"""The private median: the interval (rank) utility of the released value, and the thesis' record utility.

Two utilities live here.

* The **interval utility** (:func:`median_intervals`, :func:`interval_median_sensitivity`), used by
  :func:`dpselect.median`, scores the *released value* v ∈ [0, Λ]. It is the one to use: it is what
  is released, and its sensitivity is 1.
* The **record utility** u_med of thesis Ch. 5 (everything below the interval section), used by
  :func:`dpselect.quantiles.median_rank` and ``reproduce thesis-figure17``, scores the *records*.
  Selecting a record is private for *which rank* is chosen, not for the selected record's value.

The interval utility (replace-one-record neighbours, values in [0, Λ], n and Λ public)
-------------------------------------------------------------------------------------
Sort the database, x_(1) <= ... <= x_(n), and pad x_(0) = 0, x_(n+1) = Λ. For a point v ∈ [0, Λ) let
c_x(v) = #{i : x_i <= v}, the number of records at or below v (for v = Λ take #{i : x_i < Λ}; one point,
measure zero). The utility of releasing v is the rank distance

    u(x, v) = −|c_x(v) − n/2|.

It is constant on each interval I_j = [x_(j), x_(j+1)) (j = 0..n, where c = j): interval j has
utility −|j − n/2|. Intervals of length 0 (ties) contain no point and drop out. Releasing v with
density ∝ exp(ε·u(x, v)/2) on [0, Λ] (Lebesgue base measure) is the exponential mechanism over a
continuum; it is exactly "pick interval j with probability ∝ |I_j|·exp(ε·u_j/2), then a uniform value in
I_j" (the selection mechanisms with ``weights`` = lengths). The guarantee is pointwise: for every v and
neighbours x, y, |u(x, v) − u(y, v)| <= 1, so the densities at every v differ by at most e^ε.

Global sensitivity 1: replacing one record moves c_x(v) by at most one, so u moves by at most 1.

Element local sensitivity (derived here, and checked by brute force over small databases). For
0 < v < Λ, a replacement can raise c by one iff some record is > v (move it to 0), i.e. c < n, and lower
it by one iff some record is <= v (move it to Λ), i.e. c >= 1. A step c → c ± 1 changes −|c − n/2| by
exactly 1, except the step across n/2 for odd n (between c = (n−1)/2 and (n+1)/2), which changes it by
0. For n >= 2 every c ∈ [0, n] has an allowed step of size 1: c = 0 can only rise, and 0 → 1 is a
size-0 step only if n = 1; c = n symmetrically; 1 <= c <= n − 1 has both steps, at most one of them of
size 0. Hence

    LS(x, 0, v) = 1 for every database with n >= 2 and every v,      LS(x, 0, v) = 0 for n = 1,

and the element local sensitivity at distance t, max over z within t replacements of LS(z, 0, v),
is δ(x, t, v) = 1 = Δ for every t (n >= 2). The utility is at its global sensitivity everywhere, so
local dampening gains nothing: with δ ≡ 1 the dampening function is D(x, v) = u(x, v) (b(i) = i) and
local dampening *is* the exponential mechanism with Δ = 1; shifted local dampening has shift G = 0 and
is the same again. (For n = 1 the utility is the constant −1/2 and every mechanism releases a uniform
value on [0, Λ]; δ = 1 is used there too, an admissible upper bound.) The thesis' advantage of local
dampening came from the record utility below, whose global sensitivity Λ is far above its local
sensitivity; the rank utility has no such slack. What replaces it is accuracy of another order: on
the DPBench histograms the interval median's error is a fraction of a bin where the thesis' record
selection errs by hundreds of bins at ε = 1 (``reproduce thesis-figure17``).

The record utility (thesis Ch. 5)
---------------------------------

Setting (thesis Sec. 5.1). A database is n values x_1 <= ... <= x_n in [0, Λ]. The candidates are the
n records; m = ⌈n/2⌉ and x_m is the median. The utility of record i is

    u_med(x, i) = −|x_m − x_i|                                  (thesis Def. 5.1.1)

Neighbour model: **replace one record** (bounded DP; n fixed, the new value anywhere in [0, Λ]).
The global sensitivity is Λ (thesis Lemma 5.2.1).

Element local sensitivity, as implemented (derived and checked here)
--------------------------------------------------------------------
Write w = x without one copy of the value a of record r (n − 1 values, w_(1) <= ... <= w_(n−1)),
padded with w_(i) = 0 for i <= 0 and w_(i) = Λ for i >= n. Then the median of any database equals
clamp(a, w_(m−1), w_(m)), so

    u(x, r) = −dist(a, [w_(m−1), w_(m)]).

Everything follows from this identity. With lo(s) = w_(m−1+s) and hi(s) = w_(m+s) (the interval after
shifting the other records by s places: moving s of them from one end to the other), the exact element
local sensitivity at distance t, LS(x, t, r) = max_{d(x,z)<=t} LS(z, 0, r), is the maximum of

* A  = max(0, lo(t) − a, a − hi(−t))                 z far from r's value: |u(z, r)| − 0
* B1 = max(min(lo(t), a, lo(t) + hi(t) − a),          y moves r itself to 0 or Λ
          min(Λ − hi(−t), Λ − hi(−t) − lo(−t) + a, Λ − a))
* B2 = max_{j=0..t} max(hi(t−j) − max(a, lo(−j)),     y moves another record across the median
                       min(a, hi(t−j)) − lo(−j))      (first term only when m >= 2)
* for t >= 1 also (z first moves r itself):  max(lo(t−1), Λ − hi(1−t)) and
  max_{j=0..t−1} (hi(t−1−j) − lo(−j)).

Derivation in brief: LS(x, t, r) = max |u(z, r) − u(y, r)| over z within t of x and y a neighbour of z.
u(z, r) − u(y, r) <= |u(z, r)| is attained by moving r to z's median (term A and its "r moved" part).
For |u(y, r)| − |u(z, r)|: either y moves r (the largest |u(y, r)| is max(lo, Λ − hi): term B1; with r
moved in z too, r sits inside the interval), or y moves another record, which slides the interval by
at most one place, giving g(lo, hi) = max(hi − max(a, lo), min(a, hi) − lo) (term B2). g grows with hi
and falls with lo, and every interval reachable with k changes is dominated by a *block* interval
[w_(m−1−j), w_(m+k−j)] (j of the changes move records to 0, k − j to Λ), hence the max over j.
For m = 1 (n = 2) the lower end of the interval is not a record and cannot move.

At t = 0 this reads, with M = x_m, M− = x_{m−1}, M+ = x_{m+1}:
a < M: max(M − a, M+ − M, M − M−, a, Λ − M+ − M + a); a = M: max(M+ − M, M − M−, M−, Λ − M+);
a > M: max(a − M, M+ − M, M − M−, M + M− − a, Λ − a) — the tight values of the proof of Lemma 5.2.2
(thesis App. A.2, cases 4.3 and 5.2). **Correction:** the printed statement of Lemma 5.2.2 has, for
i < m, p = Λ + x_i − 3x_m + x_{m+1} and q = 3x_m − x_i − x_{m−1}, and for i > m, q = x_i. These are
upper bounds of the proof's values, not the local sensitivity: for x = (0, 0, 1), Λ = 4, record 1 the
printed formula gives 5 (4 after clipping to Λ) while LS = 3 (move record 1 to 4: the median becomes
1); for x = (0, 2, 3), record 3, it gives 3 while LS = 2. Using them is private but adds noise (see
the LD-thesis-delta column of the thesis-figure17 reproduction). The Candidates algorithm (Alg. 2)
has no proof in the text (App. A.3 only restates the lemma), line 9 reads "copy of x'_4", and lines
19-20 move the median of x_5 down and of x_6 up, undoing their first step; with the printed Lemma
5.2.2, clipped to Λ, it passed an exhaustive admissibility check (n = 3..5, values and replacements
in {0..4}, t <= 2) both as printed and with lines 19-20 swapped, but it can only be as tight as that
lemma. Instead we compute LS(x, t, r) exactly with the closed form above, checked against brute-force
enumeration of every replace-one neighbour (n <= 6, t <= 3); LS at distance t
is admissible (thesis Lemma 3.2.1).

Ties. δ depends on the record only through its value a (records with equal values are exchanged by a
relabelling that fixes x), so all records with one value are interchangeable: the *grouped* functions
below work on the distinct values with their counts, and a mechanism given the counts as ``weights``
has exactly the per-record output distribution over values.

Cost. The order statistics come from the cumulative counts (binary search), so a database is never
expanded: O(G) memory for G distinct values, O(G·t) time for distance t. Local dampening only needs
t <= 1 here: δ(x, 0, r) >= |u(x, r)|, so the dampening function is −|u| / δ(x, 0, r) (or −1).
"""
from __future__ import annotations

import numbers
from typing import Any, NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_positive, check_utilities
from ..sensitivity import SensitivityFunction

__all__ = [
    "median_intervals",
    "interval_median_sensitivity",
    "MedianIntervals",
    "grouped_database",
    "GroupedDatabase",
    "median_utility",
    "median_sensitivity",
    "grouped_median_utility",
    "grouped_median_sensitivity",
    "group_values",
    "check_median_values",
]


# ---------------------------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------------------------
def check_median_values(values: ArrayLike, bound: float | None = None, *, name: str = "values",
                        require_sorted: bool = False) -> np.ndarray:
    """A non-empty 1-D float64 array of values, clipped into [0, bound] when ``bound`` is given (sorted
    when required).

    With a ``bound``, every record outside the public domain [0, bound] (±inf included) is clipped into
    it: a record-wise map, so neighbouring databases stay neighbours and every guarantee stated for
    [0, bound] holds for any real data; in-bound values are unchanged. (Refusing such a record would be
    an error that depends on the data, a release.) Without a bound the values must be finite.

    Parameters
    ----------
    values : array_like
        The values to check.
    bound : float, optional
        Λ: values are clipped into [0, bound] (without it they are only checked to be finite).
    name : str, default "values"
        Keyword-only: the parameter name used in error messages.
    require_sorted : bool, default False
        Keyword-only: require ascending order (after clipping, which keeps an order).

    Returns
    -------
    ndarray of shape (n,)
        The values as float64.

    Raises
    ------
    ValueError
        Empty, not 1-D, NaN (or, without a bound, ±inf), or unsorted when required. The message names no
        record's index or value (they are private).

    Examples
    --------
    >>> check_median_values([0.5, 2.0], bound=4.0)
    array([0.5, 2. ])
    >>> check_median_values([5.0, -1.0, float("inf")], bound=4.0)
    array([4., 0., 4.])
    """
    if bound is None:
        arr = check_utilities(values, name)  # 1-D, non-empty, finite float64
    else:
        arr = np.clip(check_utilities(values, name, finite=False), 0.0, bound)
    if require_sorted and arr.size > 1 and np.any(arr[1:] < arr[:-1]):
        raise ValueError(f"{name} must be sorted in ascending order")   # which records are out of order: private
    return arr


#: Most records a grouped database may hold: ranks and utilities are exact in float64 up to 2^53.
_MAX_RECORDS = 2 ** 53
#: Counts are private (a histogram of the data): the messages of _check_counts name no count, total or position.
_TOO_MANY = f"counts must sum to at most {_MAX_RECORDS} (2**53) records"


def _check_counts(counts, size: int) -> np.ndarray:
    try:
        c = np.asarray(counts)
    except Exception as exc:
        raise TypeError(f"counts must be a 1-D array of positive ints: {exc}") from None
    if c.ndim != 1 or c.shape[0] != size:
        raise ValueError("counts must be a 1-D array with one entry per value")
    if c.dtype.kind == "O" and c.size and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                              for v in c.ravel().tolist()):
        vals = [int(v) for v in c.ravel().tolist()]     # Python ints beyond int64: checked exactly
        if c.ndim == 1 and min(vals) <= 0:
            raise ValueError("counts must be > 0")
        if sum(vals) > _MAX_RECORDS:
            raise ValueError(_TOO_MANY)
    if not (np.issubdtype(c.dtype, np.integer) or (np.issubdtype(c.dtype, np.floating) and np.all(c == np.round(c)))):
        raise TypeError(f"counts must be integers, got dtype {c.dtype}")
    if not (c > 0).all():   # on the given dtype: a uint64 or float count is not wrapped by a cast first
        raise ValueError("counts must be > 0")
    # ranks and the utility −|2j − n| / 2 are exact in float64 (and the int64 sums cannot wrap) only up to
    # n = 2^53 records; the total is checked exactly (no int64 sum that wraps, as [2**63 − 1, 2**63 − 1, 3] did)
    over = c > _MAX_RECORDS
    if over.any() or float(c.astype(np.float64).sum()) > 2.0 * _MAX_RECORDS:
        raise ValueError(_TOO_MANY)
    c = c.astype(np.int64)
    total = int(c.sum())    # exact: each count <= 2^53 and the float sum <= 2^54 (far from wrapping)
    if total > _MAX_RECORDS:
        raise ValueError(_TOO_MANY)
    return c


def group_values(sorted_values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of a sorted array and their counts (the grouped form of a database).

    Parameters
    ----------
    sorted_values : array_like of shape (n,)
        Finite values, sorted ascending.

    Returns
    -------
    values : ndarray of shape (G,)
        The G distinct values, float64.
    counts : ndarray of shape (G,)
        How many records hold each, int64.

    Raises
    ------
    ValueError
        ``sorted_values`` is empty, not finite or not sorted.

    Examples
    --------
    >>> group_values([0.0, 1.0, 1.0, 3.0])
    (array([0., 1., 3.]), array([1, 2, 1]))
    """
    x = check_median_values(sorted_values, name="sorted_values", require_sorted=True)
    starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
    counts = np.diff(np.concatenate((starts, [x.size]))).astype(np.int64)
    return x[starts], counts


# ---------------------------------------------------------------------------------------------
# the grouped database and its element local sensitivity
# ---------------------------------------------------------------------------------------------
class GroupedDatabase:
    """A sorted database stored as distinct values and counts, with δ(x, t, ·) per distinct value.

    What :func:`grouped_database` returns: the form every median utility here is computed on (memory
    O(#distinct values), never expanded to one entry per record). Its sensitivities are for
    replace-one-record neighbours with values in [0, ``bound``].

    Parameters
    ----------
    values : ndarray of shape (G,)
        The distinct values, sorted ascending, in [0, bound] (not validated here: use
        :func:`grouped_database`).
    counts : ndarray of int64, shape (G,)
        The number of records of each value, > 0.
    bound : float
        Λ, the public upper end of the value domain.

    Attributes
    ----------
    cum : ndarray of shape (G,)
        The last (1-based) rank of each group.
    n : int
        The number of records.
    m : int
        ⌈n/2⌉, the (1-based) rank of the median.
    median : float
        The median x_(m).

    Examples
    --------
    >>> g = grouped_database([0.0, 2.0, 2.0, 5.0], 10.0)
    >>> g.values.tolist(), g.counts.tolist(), g.n, g.m, g.median
    ([0.0, 2.0, 5.0], [1, 2, 1], 4, 2, 2.0)
    """

    def __init__(self, values: np.ndarray, counts: np.ndarray, bound: float) -> None:
        self.values = values
        self.counts = counts
        self.cum = np.cumsum(counts)  # last (1-based) rank of each group
        self.n = int(self.cum[-1])
        self.m = (self.n + 1) // 2  # ⌈n/2⌉, 1-based
        self.bound = float(bound)
        self.median = float(self.x(self.m))
        self._cache: dict[int, np.ndarray] = {}

    def x(self, k: int) -> float:
        """Order statistic x_(k), 1 <= k <= n.

        Parameters
        ----------
        k : int
            The (1-based) rank.

        Returns
        -------
        float

        Examples
        --------
        >>> g = grouped_database([0.0, 2.0, 2.0, 5.0], 10.0)
        >>> g.x(1), g.x(3), g.x(4)
        (0.0, 2.0, 5.0)
        """
        return float(self.values[int(np.searchsorted(self.cum, k, side="left"))])

    def utilities(self) -> np.ndarray:
        """The record utility u_med = −|x_m − value| of every distinct value (thesis Def. 5.1.1).

        Returns
        -------
        ndarray of shape (G,)
            float64, <= 0.

        Examples
        --------
        >>> grouped_database([0.0, 2.0, 2.0, 5.0], 10.0).utilities().tolist()
        [-2.0, -0.0, -3.0]
        """
        return -np.abs(self.values - self.median)

    def sensitivity_function(self) -> SensitivityFunction:
        """δ(x, t, ·) over the groups as a :class:`SensitivityFunction` sharing this database's cache.

        Returns
        -------
        SensitivityFunction
            Values of shape (G,), global sensitivity ``bound``; admissible under replace-one-record neighbours.

        Examples
        --------
        >>> sf = grouped_database([0.0, 2.0, 2.0, 5.0], 10.0).sensitivity_function()
        >>> sf(0).tolist(), sf.global_sensitivity
        ([6.0, 8.0, 5.0], 10.0)
        """
        def delta(t, candidates=None):
            return self.delta(t, candidates)

        sf = SensitivityFunction(delta, self.bound, n_candidates=self.values.shape[0], name="median_elementLS")
        sf.far_probe = False   # O(t) per distance: no evaluation at max_steps (dpselect.dampening, "Ending fast")
        return sf

    def intervals(self) -> "MedianIntervals":
        """The intervals of positive length between consecutive order statistics, with their utilities.

        Returns
        -------
        MedianIntervals
            The candidates of the value-releasing median (see :func:`median_intervals`).

        Examples
        --------
        >>> iv = grouped_database([0.0, 2.0, 2.0, 5.0], 10.0).intervals()
        >>> iv.lo.tolist(), iv.hi.tolist(), iv.rank.tolist()
        ([0.0, 2.0, 5.0], [2.0, 5.0, 10.0], [1, 3, 4])
        """
        lo = np.concatenate(([0.0], self.values))
        hi = np.concatenate((self.values, [self.bound]))
        rank = np.concatenate(([0], self.cum)).astype(np.int64)  # records <= lo (the interval's c)
        keep = hi > lo  # drops [0, 0] when a record is 0 and [Λ, Λ] when a record is Λ
        lo, hi, rank = lo[keep], hi[keep], rank[keep]
        # −|j − n/2| = −|2j − n| / 2, exact in float64 for n < 2^53
        utility = -np.abs(2 * rank - self.n).astype(np.float64) / 2.0
        for a in (lo, hi, rank, utility):
            a.setflags(write=False)
        return MedianIntervals(lo, hi, rank, utility, self.n, self.bound)

    # w = x without one copy of the group's value; for a group whose last rank is l:
    # w_(i) = x_(i) for i < l, x_(i+1) for i >= l; padded with 0 (i <= 0) and Λ (i >= n).
    def _w(self, i: int, last: np.ndarray):
        if i <= 0:
            return 0.0
        if i >= self.n:
            return self.bound
        return np.where(i >= last, self.x(i + 1), self.x(i))

    def delta(self, t: int, groups: np.ndarray | None = None) -> np.ndarray:
        """Exact LS(x, t, r) for the groups ``groups`` (all when None).

        Full arrays are cached per t and returned **read-only** (a caller writing to one would change
        later results); a ``groups`` subset is a fresh copy.

        Parameters
        ----------
        t : int
            The distance, >= 0.
        groups : ndarray of int, optional
            Group indices (default: all groups).

        Returns
        -------
        ndarray
            float64, one value per selected group.

        Examples
        --------
        >>> g = grouped_database([0.0, 2.0, 2.0, 5.0], 10.0)
        >>> g.delta(0).tolist(), g.delta(1, [0, 2]).tolist()
        ([6.0, 8.0, 5.0], [8.0, 8.0])
        """
        if t in self._cache:
            full = self._cache[t]
            return full if groups is None else full[groups]
        if groups is None:
            out = self._compute(t, self.values, self.cum)
            out.setflags(write=False)  # the cache is shared: hand it out read-only (never aliased writably)
            self._cache[t] = out
            return out
        return self._compute(t, self.values[groups], self.cum[groups])

    def _compute(self, t: int, a: np.ndarray, last: np.ndarray) -> np.ndarray:
        L = self.bound
        if self.n == 1:  # the only record is always the median: u = 0 on every database
            return np.zeros(a.shape[0])
        m = self.m
        has_lo = m >= 2  # for n = 2 the interval's lower end is the padding 0, not a record

        def lo(s):
            return self._w(m - 1 + s, last) if has_lo else 0.0

        def hi(s):
            return self._w(m + s, last)

        lo_up, hi_up, lo_dn, hi_dn = lo(t), hi(t), lo(-t), hi(-t)
        # A: |u(z, r)| for the farthest z (r untouched)
        out = np.maximum(np.maximum(lo_up - a, a - hi_dn), 0.0)
        # B1: y moves r to 0 or Λ (r untouched in z)
        b1 = np.maximum(
            np.minimum(np.minimum(lo_up, a), lo_up + hi_up - a),
            np.minimum(np.minimum(L - hi_dn, L - hi_dn - lo_dn + a), L - a),
        )
        out = np.maximum(out, b1)
        # B2: y moves another record (block intervals [lo(−j), hi(t−j)])
        for j in range(t + 1):
            h, low = hi(t - j), lo(-j)
            g = np.minimum(a, h) - low
            if has_lo:
                g = np.maximum(g, h - np.maximum(a, low))
            out = np.maximum(out, g)
        if t >= 1:
            # z moves r itself (one of the t changes), t − 1 changes left for the others
            out = np.maximum(out, np.maximum(lo(t - 1), L - hi(1 - t)))
            for j in range(t):
                out = np.maximum(out, hi(t - 1 - j) - lo(-j))
        return np.broadcast_to(out, a.shape).astype(np.float64, copy=True)


def _grouped(values, counts, bound) -> GroupedDatabase:
    bound = check_positive(bound, "bound")
    vals = check_median_values(values, bound, name="values", require_sorted=True)
    vals, counts = _drop_empty(vals, counts)
    c = _check_counts(counts, vals.shape[0])
    if vals.size > 1 and np.any(vals[1:] == vals[:-1]):   # (after clipping too): which ones is private
        raise ValueError("values must be distinct when counts are given")
    return GroupedDatabase(vals, c, bound)


def _drop_empty(x: np.ndarray, counts: Any) -> tuple[np.ndarray, Any]:
    """``values`` and ``counts`` without the values of count 0 (an empty bin of a histogram is a dataset
    like any other: refusing it would depend on the data); a database with no record at all is refused
    (n >= 1 is public under replace-one neighbours)."""
    raw = np.asarray(counts)
    if raw.ndim == 1 and raw.shape[0] == x.shape[0] and raw.dtype.kind in "iuf":
        if not (raw >= 0).all():   # NaN too
            raise ValueError("counts must be >= 0")
        zero = raw == 0
        if zero.all():
            raise ValueError("counts must hold at least one record (all counts are 0)")
        if zero.any():
            return x[~zero], raw[~zero]
    return x, counts


def grouped_median_utility(values: ArrayLike, counts: ArrayLike) -> np.ndarray:
    """u_med for a database given as distinct sorted ``values`` with multiplicities ``counts``.

    One entry per distinct value (every record with that value has this utility); the record utility
    of thesis Ch. 5, global sensitivity Λ under replace-one-record neighbours.

    Parameters
    ----------
    values : array_like of shape (G,)
        The distinct values, sorted ascending.
    counts : array_like of int, shape (G,)
        The number of records of each value, > 0.

    Returns
    -------
    ndarray of shape (G,)
        −|x_m − value| per distinct value, float64.

    Examples
    --------
    The database (0, 2, 2, 5) has median 2:

    >>> grouped_median_utility([0.0, 2.0, 5.0], [1, 2, 1]).tolist()
    [-2.0, -0.0, -3.0]
    """
    vals = check_median_values(values, name="values", require_sorted=True)
    c = _check_counts(counts, vals.shape[0])
    g = GroupedDatabase(vals, c, max(float(vals[-1]), 1.0))
    return g.utilities()


def grouped_median_sensitivity(values: ArrayLike, counts: ArrayLike, bound: float) -> SensitivityFunction:
    """Element local sensitivity of u_med over the distinct values of a grouped database.

    Candidate g stands for the ``counts[g]`` records of value ``values[g]``; all of them have the same
    δ(x, t, ·) (see the module docstring), so a mechanism run on the groups with ``weights=counts`` has
    the per-record output distribution over values. Admissible under replace-one-record neighbours with
    values in [0, ``bound``]; global sensitivity ``bound`` (thesis Lemma 5.2.1). Never expands the
    database: memory O(#groups).

    Parameters
    ----------
    values : array_like of shape (G,)
        The distinct values, sorted ascending; clipped into [0, bound].
    counts : array_like of int, shape (G,)
        The number of records of each value, > 0 (at most 2^53 in all).
    bound : float
        Λ > 0, the public upper end of the value domain.

    Returns
    -------
    SensitivityFunction
        The exact δ(x, t, g), values of shape (G,), global sensitivity ``bound``.

    Raises
    ------
    ValueError
        NaN, unsorted or repeated values, or a negative count (values outside [0, bound] are clipped into
        it, and values of count 0 dropped).

    Examples
    --------
    >>> sf = grouped_median_sensitivity([0.0, 2.0, 5.0], [1, 2, 1], bound=10.0)
    >>> sf(0).tolist(), sf(1).tolist()
    ([6.0, 8.0, 5.0], [8.0, 8.0, 8.0])
    """
    return _grouped(values, counts, bound).sensitivity_function()


# ---------------------------------------------------------------------------------------------
# the interval (rank) utility of the released value
# ---------------------------------------------------------------------------------------------
class MedianIntervals(NamedTuple):
    """The candidates of the value-releasing median: intervals [lo_j, hi_j) of positive length.

    Built by :func:`median_intervals`. The intervals are sorted and tile [0, bound]: lo[0] = 0,
    hi[-1] = bound, hi[j] = lo[j + 1]. Arrays are read-only.

    Attributes
    ----------
    lo : ndarray of shape (k,)
        The lower ends, float64.
    hi : ndarray of shape (k,)
        The upper ends, float64.
    rank : ndarray of shape (k,)
        ``rank[j]`` is the number of records <= ``lo[j]`` (c_x(v) for every v in the interval), int64.
    utility : ndarray of shape (k,)
        ``utility[j]`` = −|rank[j] − n/2|, float64.
    n : int
        The number of records.
    bound : float
        Λ, the upper end of the domain.

    Examples
    --------
    >>> iv = median_intervals([3.0, 1.0, 1.0], 4.0)
    >>> iv.n, iv.bound, iv.lo.shape
    (3, 4.0, (3,))
    """

    lo: np.ndarray
    hi: np.ndarray
    rank: np.ndarray
    utility: np.ndarray
    n: int
    bound: float


def grouped_database(values: ArrayLike, bound: float, counts: ArrayLike | None = None) -> GroupedDatabase:
    """The database as distinct sorted values with counts (``values`` clipped into [0, bound], ``counts`` >= 0).

    Parameters
    ----------
    values : array_like of shape (n,)
        The records' values, in any order. A value outside [0, bound] (±inf included) is clipped into it
        (a record-wise map: the guarantees for [0, bound] hold for any real data, and an in-bound
        database is unchanged); NaN is a ``ValueError``.
    bound : float
        Λ > 0, the public upper end of the value domain.
    counts : array_like of int, optional
        With it, ``values[g]`` is held by ``counts[g]`` records (repeated values are merged).

    Returns
    -------
    grouped database
        The distinct sorted ``values``, their ``counts``, ``n`` and ``median``, with ``intervals()`` (the
        :class:`MedianIntervals`), ``utilities()``, ``delta(t)`` and ``sensitivity_function()``.

    Raises
    ------
    ValueError
        ``bound`` not > 0, a NaN value, or a negative count (values of count 0 are dropped; at least
        one record). No message names a record's value, a count or a position.

    Examples
    --------
    >>> g = grouped_database([3.0, 1.0, 1.0], 4.0)
    >>> g.values.tolist(), g.counts.tolist(), g.n, g.median
    ([1.0, 3.0], [2, 1], 3, 1.0)
    """
    bound = check_positive(bound, "bound")
    x = check_median_values(values, bound, name="values")
    if counts is None:
        x = np.sort(x, kind="stable")
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        c = np.diff(np.concatenate((starts, [x.size]))).astype(np.int64)
        return GroupedDatabase(x[starts], c, bound)
    x, counts = _drop_empty(x, counts)
    c = _check_counts(counts, x.shape[0])
    order = np.argsort(x, kind="stable")
    x, c = x[order], c[order]
    if x.size > 1 and np.any(x[1:] == x[:-1]):  # merge repeated values
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        c = np.add.reduceat(c, starts)
        x = x[starts]
    return GroupedDatabase(x, c, bound)


def median_intervals(values: ArrayLike, bound: float, *, counts: ArrayLike | None = None) -> MedianIntervals:
    """The intervals between consecutive order statistics (0 and ``bound`` as ends) and their utilities.

    Zero-length intervals (ties, a record at 0 or at ``bound``) are dropped. Utility −|j − n/2| with j
    the number of records at or below the interval (module docstring); global sensitivity 1 under
    replace-one-record neighbours on [0, bound]. These are the candidates :func:`dpselect.median`
    selects from (weighted by their lengths).

    Parameters
    ----------
    values : array_like of shape (n,)
        The records' values, in any order; clipped into [0, bound] (see :func:`grouped_database`).
    bound : float
        Λ > 0, the public upper end of the value domain.
    counts : array_like of int, optional
        Keyword-only: ``values[g]`` is held by ``counts[g]`` records.

    Returns
    -------
    MedianIntervals
        k <= n + 1 intervals, arrays of shape (k,).

    Raises
    ------
    ValueError
        ``bound`` not > 0, a NaN value, or a negative count.

    Examples
    --------
    x = (1, 1, 3), Λ = 4 has intervals [0, 1), [1, 3), [3, 4] with 0, 2 and 3 records at or below them:

    >>> iv = median_intervals([3.0, 1.0, 1.0], 4.0)
    >>> iv.lo.tolist(), iv.hi.tolist(), iv.rank.tolist(), iv.utility.tolist()
    ([0.0, 1.0, 3.0], [1.0, 3.0, 4.0], [0, 2, 3], [-1.5, -0.5, -1.5])
    """
    return grouped_database(values, bound, counts).intervals()


def interval_median_sensitivity(intervals: MedianIntervals) -> SensitivityFunction:
    """Element local sensitivity of the interval utility: δ(x, t, v) = 1 for every interval and t.

    Exact for n >= 2 (LS(x, 0, v) = 1 for every point v and every database, see the module
    docstring; checked by brute force and with :func:`dpselect.audit.check_admissibility`); for n = 1
    it is an upper bound of the exact 0. Admissible under replace-one-record neighbours on
    [0, bound]; global sensitivity 1. Local dampening with it equals the exponential mechanism.

    Parameters
    ----------
    intervals : MedianIntervals
        The candidates, from :func:`median_intervals`.

    Returns
    -------
    SensitivityFunction
        Constant 1, values of shape (k,) for k intervals; saturation distance 0.

    Raises
    ------
    TypeError
        ``intervals`` is not a :class:`MedianIntervals`.

    Examples
    --------
    >>> sf = interval_median_sensitivity(median_intervals([3.0, 1.0, 1.0], 4.0))
    >>> sf(0).tolist(), sf(5).tolist(), sf.global_sensitivity
    ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], 1.0)
    """
    if not isinstance(intervals, MedianIntervals):
        raise TypeError(f"intervals must be a MedianIntervals (from median_intervals), got {type(intervals).__name__}")
    k = int(intervals.lo.shape[0])

    def delta(t, candidates=None):
        return np.ones(k if candidates is None else len(candidates))

    return SensitivityFunction(delta, 1.0, n_candidates=k, saturation_distance=0, name="median_interval_elementLS")


# ---------------------------------------------------------------------------------------------
# per-record (per sorted position) API
# ---------------------------------------------------------------------------------------------
def median_utility(sorted_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """u_med(x, i) = −|x_m − x_i| for every position i of a sorted database (thesis Def. 5.1.1).

    m = ⌈n/2⌉ (the lower median for even n). Candidates are the records, in sorted order; global
    sensitivity Λ under replace-one-record neighbours (thesis Lemma 5.2.1), exact element local
    sensitivity :func:`median_sensitivity`.

    Parameters
    ----------
    sorted_values : array_like of shape (n,)
        The database, sorted ascending.

    Returns
    -------
    ndarray of shape (n,)
        The utilities (<= 0), float64.

    Examples
    --------
    >>> median_utility([1.0, 2.0, 4.0, 7.0]).tolist()
    [-1.0, -0.0, -2.0, -5.0]
    """
    x = check_median_values(sorted_values, name="sorted_values", require_sorted=True)
    m = (x.size + 1) // 2
    return -np.abs(x - x[m - 1])


def median_sensitivity(sorted_values: Sequence[float] | np.ndarray, bound: float) -> SensitivityFunction:
    """Element local sensitivity δ(x, t, i) of u_med for every position i of a sorted database.

    Exact LS(x, t, i) (max over databases within t replacements of the local sensitivity), computed in
    closed form per distinct value and cached per t; see the module docstring for the formula and the
    corrections to thesis Lemma 5.2.2 / Algorithm 2. Admissible under **replace-one-record**
    neighbours with values in [0, ``bound``]; global sensitivity Δ = ``bound`` (Lemma 5.2.1).
    Supports ``sf(t, candidates=idx)``.

    Parameters
    ----------
    sorted_values : array of shape (n,)
        The database, sorted ascending; values clipped into [0, bound].
    bound : float
        Λ, the upper end of the value domain.

    Returns
    -------
    SensitivityFunction
        Values of shape (n,), global sensitivity ``bound``.

    Raises
    ------
    ValueError
        ``bound`` not > 0, or values NaN or unsorted.

    Examples
    --------
    >>> sf = median_sensitivity([0.0, 2.0, 2.0, 5.0], bound=10.0)
    >>> sf(0).tolist()
    [6.0, 8.0, 8.0, 5.0]
    """
    bound = check_positive(bound, "bound")
    x = check_median_values(sorted_values, bound, name="sorted_values", require_sorted=True)
    vals, counts = group_values(x)
    g = GroupedDatabase(vals, counts, bound)
    group_of = np.repeat(np.arange(vals.shape[0], dtype=np.int64), counts)

    def delta(t, candidates=None):
        if candidates is None:
            return g.delta(t)[group_of]
        idx = group_of[candidates]
        if t in g._cache:
            return g.delta(t)[idx]
        uniq, inv = np.unique(idx, return_inverse=True)
        return g.delta(t, uniq)[inv]

    sf = SensitivityFunction(delta, bound, n_candidates=x.shape[0], name="median_elementLS")
    sf.far_probe = False   # O(t) per distance: no evaluation at max_steps (dpselect.dampening, "Ending fast")
    return sf
