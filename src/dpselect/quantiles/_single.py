"""One quantile by the interval mechanism (the median's, any target rank), on a grouped database.

The database is given grouped: distinct sorted values ``vals`` with multiplicities ``cnt`` (int64), all in the
domain [a, b]. The candidates are the intervals between consecutive order statistics, a and b as the outer
ends, of positive length; interval j holds the points with rank[j] = #{records <= lo_j} records at or below
them. For a target quantile q the utility of interval j is

    u_j = −|rank_j − T/2|,        T = round(2·q·n)  (an integer, computed exactly from the float q),

i.e. the rank distance to q·n rounded to the nearest half-integer (ties to even). The rounding is a public
function of (q, n), it keeps every utility an exact half-integer in float64 (no rounding in the scores), and
for q = 1/2 it is exactly n/2: the median's utility. Interval j is picked with probability
∝ |I_j|·exp(ε·u_j/2) and a uniform value inside it is released (:func:`dpselect.quantiles._median._release_value`,
exact). Replacing one record moves every rank by at most 1 and leaves n and T alone: sensitivity 1, so the
release is ε-bounded-range under replace-one neighbours (n public).

Adding or removing one record (the subproblems of the recursive method) moves rank_j by 0 or 1 and T/2 by
round(2q(n+1))/2 − round(2qn)/2 ∈ [0, 1] in the same direction (2q <= 2), so u_j moves by at most 1 there too.
:func:`single_rank` takes the target T directly (the recursive method's anchored targets, see :mod:`._recursive`).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._median import _release_value
from ..utilities.median import MedianIntervals

__all__: list[str] = []

#: The registry mechanism used for the interval draw (the median's law; same draws as its default).
MECHANISM = "exponential"


def target_twice(q: Fraction | float, n: int) -> int:
    """T = round(2·q·n), exactly (Python's round of a Fraction: ties to even)."""
    return int(round(Fraction(q) * 2 * n))


def intervals(vals: np.ndarray, cnt: np.ndarray, a: float, b: float, T: int, scale: int = 2) -> MedianIntervals:
    """The candidate intervals of [a, b] for the grouped data (vals in [a, b]) and the utility of target
    T/scale (``scale`` a power of two: 2 for the half-integer grid, 16 for the recursion's relative targets)."""
    lo = np.concatenate(([a], vals)).astype(np.float64)
    hi = np.concatenate((vals, [b])).astype(np.float64)
    rank = np.concatenate(([0], np.cumsum(cnt, dtype=np.int64))).astype(np.int64)
    keep = hi > lo
    lo, hi, rank = lo[keep], hi[keep], rank[keep]
    # exact multiples of 1/scale (scale·n < 2^53)
    utility = -np.abs(scale * rank - T).astype(np.float64) / float(scale)
    n = int(cnt.sum()) if cnt.size else 0
    return MedianIntervals(lo, hi, rank, utility, n, float(b))


def single_quantile(vals: np.ndarray, cnt: np.ndarray, a: float, b: float, q: Fraction | float, eps: float,
                    gen: np.random.Generator) -> float:
    """One draw of the interval mechanism for quantile ``q`` on [a, b] (a value in [a, b]); a when a == b."""
    n = int(cnt.sum()) if cnt.size else 0
    return single_rank(vals, cnt, a, b, target_twice(q, n), eps, gen)


def single_rank(vals: np.ndarray, cnt: np.ndarray, a: float, b: float, T: int, eps: float,
                gen: np.random.Generator, scale: int = 2) -> float:
    """One draw of the interval mechanism for the target rank T/scale (any integer T) on [a, b]; a when a == b."""
    if not b > a:
        return float(a)
    iv = intervals(vals, cnt, a, b, int(T), scale)
    return _release_value(iv, eps, MECHANISM, gen)


def single_probabilities(vals: np.ndarray, cnt: np.ndarray, a: float, b: float, q: Fraction | float,
                         eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, p): the exact law of :func:`single_quantile` (float64 probabilities, log-space normalised)."""
    n = int(cnt.sum()) if cnt.size else 0
    return rank_probabilities(vals, cnt, a, b, target_twice(q, n), eps)


def rank_probabilities(vals: np.ndarray, cnt: np.ndarray, a: float, b: float, T: int,
                       eps: float, scale: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, p): the exact law of :func:`single_rank` for the target rank T/scale (float64 probabilities)."""
    iv = intervals(vals, cnt, a, b, int(T), scale)
    logw = np.log(iv.hi - iv.lo) + eps * iv.utility / 2.0
    logw -= logw.max()
    p = np.exp(logw)
    return iv.lo, iv.hi, p / p.sum()
