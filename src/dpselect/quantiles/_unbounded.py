"""Quantiles without bounds: AboveThreshold on a geometric grid (Durfee, NeurIPS 2023), sampled exactly.

No public bound on the data is needed, so nothing is read from the data as public and no
:class:`~dpselect.exceptions.PrivacyLeakWarning` is due.

**The grid.** ``g_i = β^i − 1`` for i = 0, 1, ..., K − 1 with ``β = 1 + 2^-10`` (:data:`BETA`): relative
resolution about 0.1% away from 0 (Durfee uses β = 1.001; 1 + 2^-10 ≈ 1.000977 is the nearest float of that
form, and keeps β − 1 exact) and absolute resolution β − 1 ≈ 0.001 near 0, so data whose useful detail is far
below 0.001 should be rescaled (clipping_bounds uses this grid; the several-quantile method a coarser one, see
below). K = :data:`GRID_SIZE` stops the grid below the largest float (g_{K−1} ≈ 1.7e308).
The grid values are computed in float64 from the index alone: data-independent numbers.

**One search (AboveThreshold).** With counts f_i(x) of the records on the searched side of a grid point
(``#{x <= base + g_i}`` upward, ``#{x >= base − g_i}`` downward), a public threshold T (a rational, q·n with n
public), threshold noise ρ and fresh query noise ν_i, it releases the first index k with
f_k + ν_k >= T + ρ (K when there is none). ρ and ν_i are **discrete Laplace** (P(z) ∝ e^{−ε'|z|}, two-sided
geometric) with ε1 = ε2 = ε/2; as the counts and noises are integers the test is the integer comparison
ν_k >= ⌈T⌉ + ρ − f_k, and since ν_k enters only through that bit, the bit is drawn directly: a uniform
U = 0.w1 w2 ... (64-bit words) against the exact tail P(ν >= c) = p^c / (1 + p) (c >= 1, p = e^{−ε2}) or
1 − p^{1−c} / (1 + p) (c <= 0): a float enclosure decides at once except in about 1 case in 10^12, where a
decimal interval enclosure (correctly rounded exp, widened) is refined together with further words of U
(:func:`dpselect._exact_random.discrete_laplace_tail_bits` and ``discrete_laplace_tail_exact``). ρ is drawn
exactly by :func:`dpselect._exact_random.discrete_laplace`. No float rounding touches the law.

**Privacy of one search (replace-one neighbours, n public).** Replacing one record x_j by x_j' changes every
count f_i by at most 1, and all in the same direction: for an upward search, by +1 exactly for the grid points
in [x_j', x_j) when x_j' < x_j, and by −1 for those in [x_j, x_j') otherwise (downward: symmetric). These are
the *monotone* queries of Lyu, Su & Li (2017, Thm. 4): fix the noises ν_i of the indices i < k. If
f(x') <= f(x) coordinatewise, the map ν_k ↦ ν_k + 1 (density ratio e^{ε2}) sends the event "stop at k on x"
into "stop at k on x'" (earlier tests only get harder on x'); if f(x') >= f(x), the map (ρ, ν_k) ↦ (ρ + 1,
ν_k + 1) (ratio e^{ε1 + ε2}) does (earlier tests: f_i(x') + ν_i <= f_i(x) + 1 + ν_i < T + ρ + 1). The event
"no stop" is covered by ρ ↦ ρ + 1 alone. So every outcome's probability moves by at most e^{ε1+ε2} = e^ε:
ε-DP, and the maps are bijections of the integers, so the argument holds verbatim for discrete noise.
``tests/test_quantiles_unbounded.py`` checks it by an exact audit on a small universe (every neighbour pair,
the exact law of the stopping index, :func:`above_threshold_law`).

**Several quantiles** (:func:`unbounded_quantiles`): private bounds by three searches on a coarse grid
(β = 1 + 2^-3, :data:`CONFIG`), then q-core's bounded method inside them (Q_API.md). With r_lo = min(qs)·n/2
and r_hi = (1 + max(qs))·n/2 (half-way between the extreme requested ranks and the ends, so that clipping stays
away from every requested rank): a base L = −g_k of a downward search from 0 for n − r_lo records at or above
(non-negative data: L = 0 at once), lo = the grid point before the stop of an upward search from L at r_lo,
hi = the stop of an upward search from lo at r_hi. The searches get w·ε_s with
ε_s = min(20 / margin, ε/16) (ε/8 when n·ε <= 500), margin the number of records between the target rank
and the nearest end (:func:`search_epsilon`: large n needs almost nothing, so nearly all of ε goes to the
bounded part), and the weights w = 1 (base), 1 (lo), 3/2 (hi) (:func:`search_budgets`; at most 7ε/16 in all
when n·ε <= 500, 7ε/32 above): the hi search's early stop clips the upper requested ranks, so it gets more.
Chosen on DPBench-1D at m = 3, ε ∈ {0.01, 0.1} among 24 splits by a rule fixed in advance, the base weight kept
at 1 (on data below 0 the base search finds the lower end; with less it stops inside the data):
benchmarks/quantiles_unbounded_split.py; until 2026-12-06 the weights were 1, 1, 1.
All public inputs; the four parts add to at most ε exactly. The rest of ε (rounded down) goes to
:func:`dpselect.quantiles._api.bounded_quantiles` (method :func:`inner_method`: ``"auto"``, resolved from
m, that ε and n, all public) on the data clipped to [lo, hi]. Clipping to bounds that are
themselves released values is a fixed 1-Lipschitz map of each record given those values, so replace-one
neighbours stay replace-one neighbours (or become equal) and the bounded method keeps its guarantee; by
adaptive sequential composition the whole release is ε-DP. docs/clipping.md compares it, on DPBench, with the
best bounded method given the public range.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import numpy as np

from .._exact_random import (discrete_laplace, discrete_laplace_tail, discrete_laplace_tail_bits,
                             discrete_laplace_tail_exact, words)
from ..accounting.guarantees import Guarantee, PureDP

__all__: list[str] = []

#: The grid ratio β (grid values β^i − 1): 1 + 2^-10 ≈ 1.000977.
BETA = 1.0 + 2.0 ** -10
_LOG_BETA = math.log1p(2.0 ** -10)
#: Number of grid points: g_{K−1} = β^{K−1} − 1 is the last one below the largest float.
GRID_SIZE = int(math.log(np.finfo(np.float64).max) / _LOG_BETA) - 1
_MAX_BLOCK = 1 << 15
_SPLIT = 0.5
#: ε1/ε of a search aimed at rank n (the maximum). 3/4 gives a lighter overshoot tail (see above_threshold) but
#: stops early more often: on the Adult capital-gain mean (docs/clipping.md) 1/2 had the lower RMSE at every ε
#: below 2, so 1/2 it is.
MAX_SPLIT = 0.5



def grid(indices: np.ndarray, log_beta: float = _LOG_BETA) -> np.ndarray:
    """The grid values g_i = β^i − 1 (float64, data-independent) for an int array of indices in [0, K)."""
    return np.expm1(np.asarray(indices, dtype=np.float64) * log_beta)


def grid_size(log_beta: float = _LOG_BETA) -> int:
    """K: the number of grid points β^i − 1 below the largest float."""
    return int(math.log(np.finfo(np.float64).max) / log_beta) - 1


# ---------------------------------------------------------------------------------------------
# AboveThreshold
# ---------------------------------------------------------------------------------------------
def above_threshold(counts_at: Callable[[np.ndarray], np.ndarray], threshold: Fraction, n_steps: int,
                    epsilon: float, rng: np.random.Generator, split: float = _SPLIT) -> int:
    """The first index k < ``n_steps`` with f_k + ν_k >= T + ρ, else ``n_steps`` (exact; ε-DP, see module).

    ``counts_at(indices) -> int64 counts f_i``; ρ ~ DLap(ε1), ν_i ~ DLap(ε2) i.i.d. with ε1 = ``split``·ε,
    ε2 = ε − ε1 (``split`` dyadic: 1/2 by default, 3/4 for a search aimed at the maximum, whose overshoot
    beyond the data has a tail P(more than S steps) ≈ S^(−ε1/ε2)/2). The law is :func:`above_threshold_law`.
    """
    e1, e2 = epsilon * split, epsilon * (1.0 - split)
    rho = discrete_laplace(e1, rng)
    C = math.ceil(threshold) + rho
    # counts f <= 2^49: C − f fits in int64 while |C| < 2^62; beyond (ε below about 1e-17) exact Python ints
    big = abs(C) >= 1 << 62
    start, block = 0, 64
    while start < n_steps:
        idx = np.arange(start, min(start + block, n_steps), dtype=np.int64)
        f = np.asarray(counts_at(idx), dtype=np.int64)
        c = np.array([C - int(v) for v in f], dtype=object) if big else np.int64(C) - f
        w = words(rng, idx.size)
        dec = discrete_laplace_tail_bits(c, w, e2)
        # walk the steps in order: the first success, resolving undecided ones exactly on the way
        cand = np.flatnonzero(dec != 0)
        for pos in cand:
            if dec[pos] == 1:
                return int(start + pos)
            if discrete_laplace_tail_exact(int(c[pos]), int(w[pos]), e2, rng):
                return int(start + pos)
        start += idx.size
        block = min(block * 2, _MAX_BLOCK)
    return n_steps


def above_threshold_law(f: np.ndarray, threshold: Fraction, epsilon: float, *, rho_range: int | None = None,
                        split: float = _SPLIT) -> np.ndarray:
    """Exact law (float64) of :func:`above_threshold`'s output for the counts ``f`` (length K).

    Returns P(k) for k = 0..K (K: no stop). Sums ρ over |ρ| <= ``rho_range`` (default: where the
    discrete-Laplace tail is below 1e-17 of the total).
    """
    e1, e2 = epsilon * split, epsilon * (1.0 - split)
    f = np.asarray(f, dtype=np.int64)
    K = f.size
    R = int(math.ceil(40.0 / e1)) if rho_range is None else rho_range
    out = np.zeros(K + 1)
    norm = (-math.expm1(-e1)) / (1.0 + math.exp(-e1))
    for rho in range(-R, R + 1):
        w = norm * math.exp(-e1 * abs(rho))
        C = math.ceil(threshold) + rho
        s = np.array([discrete_laplace_tail(int(C - fi), e2) for fi in f])
        surv = np.concatenate(([1.0], np.cumprod(1.0 - s)))
        out[:K] += w * surv[:K] * s
        out[K] += w * surv[K]
    return out


# ---------------------------------------------------------------------------------------------
# searches on sorted grouped data
# ---------------------------------------------------------------------------------------------
def _cum(counts: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))


def search_up(values: np.ndarray, cum: np.ndarray, base: float, threshold: Fraction, epsilon: float,
              rng: np.random.Generator, log_beta: float = _LOG_BETA, split: float = _SPLIT) -> int:
    """AboveThreshold on f_i = #{x <= base + g_i} (values sorted distinct, cum = [0, cumsum(counts)])."""
    def counts_at(idx: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):     # base + g_i = inf beyond the floats: every record is below it
            points = base + grid(idx, log_beta)
        return cum[np.searchsorted(values, points, side="right")]
    return above_threshold(counts_at, threshold, grid_size(log_beta), epsilon, rng, split)


def search_down(values: np.ndarray, cum: np.ndarray, base: float, threshold: Fraction, epsilon: float,
                rng: np.random.Generator, log_beta: float = _LOG_BETA) -> int:
    """AboveThreshold on f_i = #{x >= base − g_i}."""
    n = cum[-1]

    def counts_at(idx: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):     # base − g_i = −inf beyond the floats: every record is above it
            points = base - grid(idx, log_beta)
        return n - cum[np.searchsorted(values, points, side="left")]
    return above_threshold(counts_at, threshold, grid_size(log_beta), epsilon, rng)


def _grid_value(k: int, log_beta: float = _LOG_BETA) -> float:
    return float(grid(np.array([min(k, grid_size(log_beta) - 1)]), log_beta)[0])


def _group(values: np.ndarray, counts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if counts is None:
        v, c = np.unique(np.asarray(values, dtype=np.float64), return_counts=True)
        return v, c.astype(np.int64)
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.int64)
    keep = c > 0
    return v[keep], c[keep]


def _down(x: Fraction) -> float:
    """The largest float <= x."""
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def private_base(values: np.ndarray, cum: np.ndarray, level: Fraction, epsilon: float,
                 rng: np.random.Generator) -> float:
    """A point L <= 0 with (noisily) at least ``level``·n records at or above it: −g_k of a downward search."""
    n = int(cum[-1])
    k = search_down(values, cum, 0.0, level * n, epsilon, rng)
    return 0.0 - _grid_value(k)   # 0.0, not -0.0, at k = 0


def private_bounds(values: np.ndarray, cum: np.ndarray, base: float, lo_rank: Fraction, hi_rank: Fraction,
                   epsilon: float, rng: np.random.Generator) -> tuple[float, float]:
    """(lo, hi): lo = the grid point before the upward search's stop at rank ``lo_rank`` (base if k = 0),
    hi = the stop of the search at ``hi_rank``, each search ε-DP with ``epsilon``; hi > lo always."""
    k_lo = search_up(values, cum, base, lo_rank, epsilon, rng)
    n = int(cum[-1])
    k_hi = search_up(values, cum, base, hi_rank, epsilon, rng, _LOG_BETA, MAX_SPLIT if hi_rank >= n else _SPLIT)
    lo = base if k_lo == 0 else base + _grid_value(k_lo - 1)
    hi = base + _grid_value(max(k_hi, k_lo, 1))
    if not hi > lo:  # float rounding of base + g far from 0; move hi up the grid (data-independent)
        j = max(k_hi, k_lo, 1)
        while not hi > lo and j < GRID_SIZE - 1:
            j += 1
            hi = base + _grid_value(j)
    return lo, hi


def unbounded_privacy(epsilon: float, m: int) -> Guarantee:
    """The guarantee of :func:`unbounded_quantiles` for ``m`` quantiles: ``PureDP(epsilon)``.

    ε-DP under **replace-one-record** neighbours with n public (the library's model for the median),
    whatever ``m``: the searches and the bounded method share ε by sequential composition (see the module).

    Parameters
    ----------
    epsilon : float
        The total ε (> 0, checked by the caller).
    m : int
        The number of quantiles (the guarantee does not depend on it).

    Returns
    -------
    Guarantee
        ``PureDP(epsilon)``.

    Examples
    --------
    >>> unbounded_privacy(1.0, 9)
    PureDP(epsilon=1.0)
    """
    return PureDP(epsilon)


#: Override of the bounded method run inside the private bounds (tests and measurements); None: ``"auto"``,
#: resolved by :func:`dpselect.quantiles._api.bounded_quantiles` from m, the inner ε and n exactly as with
#: public bounds (ε·n/m against AUTO_INDEPENDENT_FROM): clipping to the private bounds leaves n unchanged and
#: m and ε are public, so the choice reads nothing private. Until 2026-11-28 the rule was m alone
#: (independent for m <= 9, recursive above), chosen when ``"auto"`` still read the number of distinct
#: values (which clipping changes); it lost by orders of magnitude on INCOME and PATENT at m = 99, ε >= 0.1,
#: where independent reaches the bins' best and recursive inherits rank error on their atoms
#: (benchmarks/RESULTS.md).
INNER_METHOD: str | None = None


def inner_method(m: int) -> str:
    """The bounded method of :func:`unbounded_quantiles` for ``m`` distinct quantiles: ``"auto"`` (resolved
    from m, ε and n, all public, by the bounded release), or :data:`INNER_METHOD` when set."""
    if INNER_METHOD is not None:
        return INNER_METHOD
    return "auto"



def unbounded_quantiles(values: np.ndarray, qs: np.ndarray, *, epsilon: float, counts: np.ndarray | None,
                        rng: np.random.Generator, bounded: Callable[..., np.ndarray]) -> np.ndarray:
    """Quantiles without bounds (validated inputs; the caller charges ``unbounded_privacy``).

    What it releases: one value per q, in the order of ``qs``: q-core's bounded method (``"auto"``) run inside
    private bounds [lo, hi] found by three AboveThreshold searches (see the module; at most 7ε/32 for them,
    7ε/16 when n·ε <= 500, usually far less), on the data clipped to those bounds. Privacy: ε-DP under replace-one-record neighbours
    with n public (:func:`unbounded_privacy`); nothing public is read from the data.

    Parameters
    ----------
    values : numpy.ndarray of float64
        Finite values (distinct and sorted when ``counts`` is given).
    qs : numpy.ndarray of float64
        Quantile levels in [0, 1], any order.
    epsilon : float
        Total ε > 0.
    counts : numpy.ndarray of int64 or None
        Multiplicities of ``values``.
    rng : numpy.random.Generator
    bounded : callable
        The bounded release, :func:`dpselect.quantiles._api.bounded_quantiles` (passed in by its caller, so
        that this module does not import the one that imports it).

    Returns
    -------
    numpy.ndarray of float64
        One value per entry of ``qs``, in its order.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.quantiles._api import bounded_quantiles
    >>> v = np.arange(1000.0)
    >>> out = unbounded_quantiles(v, np.array([0.5]), epsilon=1.0, counts=None, rng=np.random.default_rng(0),
    ...                           bounded=bounded_quantiles)
    >>> bool(400 < out[0] < 600)
    True
    """
    vals, cnts = _group(values, counts)
    return _hybrid(vals, cnts, np.asarray(qs, dtype=np.float64), epsilon, rng, CONFIG, bounded)


#: The design of unbounded_quantiles: the grid of the three bound searches (β = 1 + 2^-3), the record
#: count C of :func:`search_epsilon`, the cap on each search's share of ε, and the weights (base, lo, hi) of
#: :func:`search_budgets` (benchmarks/quantiles_unbounded_split.py; (1, 1, 1) before 2026-12-06).
CONFIG: dict = dict(log_beta=math.log1p(2.0 ** -3), records=20.0, cap=2.0 ** -4, cap_small=2.0 ** -3,
                    small=500.0, weights=(1.0, 1.0, 1.5))


def search_epsilon(epsilon: float, margin: Fraction, cfg: dict, n: int = 10 ** 9) -> float:
    """ε of one bound search: C / margin records (C = 20: a search with ε_s stops about 15/ε_s records early on
    the coarse grid, so the stop stays inside the margin), at most ε/16 (ε/8 when n·ε <= 500, where the
    searches need more of the budget); a function of the public n, qs and ε only. Measured (DPBench m = 9 and
    synthetic n = 200 to 5,000): C = 20 was as good as or better than 40; the cap 1/16 beat
    1/8 for n·ε from about 900 up and lost below 500."""
    cap = epsilon * (cfg["cap_small"] if n * epsilon <= cfg["small"] else cfg["cap"])
    if margin <= 0:
        return cap
    return min(cap, _down(Fraction(cfg["records"]) / margin))


def search_budgets(epsilon: float, n: int, lo_rank: Fraction, hi_rank: Fraction,
                   cfg: dict) -> tuple[float, float, float]:
    """(ε_base, ε_lo, ε_hi): the three bound searches' shares, ``cfg["weights"]`` times :func:`search_epsilon`
    (the base and lo searches at the margin ``lo_rank``, the hi search at ``n − hi_rank``); public inputs only.
    These floats are what the searches run with, and the bounded method gets the rest computed from them
    (rounded down), so the parts add to at most ε whatever the rounding of the products.

    >>> [round(e, 8) for e in search_budgets(0.1, 1000, Fraction(125), Fraction(875), CONFIG)]   # n·ε = 100
    [0.0125, 0.0125, 0.01875]
    """
    w_base, w_lo, w_hi = cfg["weights"]
    e_lo = search_epsilon(epsilon, lo_rank, cfg, n)
    e_hi = search_epsilon(epsilon, n - hi_rank, cfg, n)
    return w_base * e_lo, w_lo * e_lo, w_hi * e_hi


_FLOAT_MAX = float(np.finfo(np.float64).max)


def _upper_end(lo: float, g: float) -> float:
    """hi = lo + g, or the largest float where that overflows (a function of the released lo and the grid
    index only; every record is <= the largest float, so clipping to it changes nothing). With lo >= −g_(K−1)
    the width hi − lo stays below the largest float, as the bounded release needs."""
    hi = lo + g
    return hi if math.isfinite(hi) else _FLOAT_MAX


def _hybrid(vals: np.ndarray, cnts: np.ndarray, qs: np.ndarray, epsilon: float, rng: np.random.Generator,
            cfg: dict, bounded: Callable[..., np.ndarray]) -> np.ndarray:
    cum = _cum(cnts)
    n = int(cum[-1])
    qmin, qmax = Fraction(float(qs.min())), Fraction(float(qs.max()))
    lo_rank = qmin / 2 * n            # half-way between the smallest requested rank and 0
    hi_rank = (1 + qmax) / 2 * n      # half-way between the largest requested rank and n
    e_base, e_lo, e_hi = search_budgets(epsilon, n, lo_rank, hi_rank, cfg)
    rest = _down(Fraction(epsilon) - Fraction(e_base) - Fraction(e_lo) - Fraction(e_hi))
    lb = cfg["log_beta"]
    k_base = search_down(vals, cum, 0.0, n - lo_rank, e_base, rng, lb)
    base = 0.0 - _grid_value(k_base, lb)
    k_lo = search_up(vals, cum, base, lo_rank, e_lo, rng, lb)
    lo = base if k_lo == 0 else base + _grid_value(k_lo - 1, lb)
    k_hi = search_up(vals, cum, lo, hi_rank, e_hi, rng, lb)
    j = max(k_hi, 1)
    hi = _upper_end(lo, _grid_value(j, lb))
    while not hi > lo:  # float rounding of lo + g far from 0: move up the grid (data-independent)
        j += 1
        hi = _upper_end(lo, _grid_value(j, lb))
    clipped = np.clip(vals, lo, hi)
    cv, inv = np.unique(clipped, return_inverse=True)
    cc = np.zeros(cv.size, dtype=np.int64)
    np.add.at(cc, inv.ravel(), cnts)
    meth = inner_method(int(np.unique(qs).size))
    return np.asarray(bounded(cv, qs, epsilon=rest, lo=lo, hi=hi, method=meth, counts=cc, rng=rng),
                      dtype=np.float64)
