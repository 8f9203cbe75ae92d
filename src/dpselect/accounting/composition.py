"""Composition of guarantee values: basic, zCDP / RDP, and the optimal compositions of k pure ε-DP
releases (Kairouz, Oh & Viswanath 2015) and of k ε-bounded-range releases (Dong, Durfee & Rogers 2020).

Every result is itself a guarantee value, so ``.epsilon(delta)`` converts it. Which rule is valid
depends on how the releases were chosen (see ``docs/accounting.md``):

* basic, zCDP and RDP composition hold for *fully adaptive* sequences (parameters chosen from earlier
  outputs) when used as privacy filters (Rogers et al. 2016; Feldman & Zrnic 2021; Whitehouse et al. 2023);
* :func:`optimal_pure` holds for adaptively chosen mechanisms whose ε is fixed in advance;
* :func:`optimal_bounded_range` (the non-adaptive optimum) holds only for a *batch*: the k mechanisms,
  not just their ε, are fixed before any output is seen. Dong, Durfee & Rogers show that choosing the
  exponential mechanisms adaptively can cost more (their "cost of adaptivity").

>>> from dpselect.accounting import BoundedRange, compose_basic, compose_zcdp, optimal_bounded_range
>>> em = [BoundedRange(0.1)] * 100                       # 100 exponential-mechanism releases of ε0 = 0.1
>>> compose_basic(em)                                     # basic composition ignores δ
PureDP(epsilon=10.000000000000002)
>>> round(compose_basic(em).epsilon(1e-6), 6)             # (its tight conversion at δ barely moves it)
9.999999
>>> round(compose_zcdp(em).epsilon(1e-6), 2)             # ε0²/8 each, CKS conversion
2.42
>>> round(optimal_bounded_range(0.1, 100).epsilon(1e-6), 2)
2.25
"""
from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
from scipy.special import bdtrc, betainc, betaincc, expit, gammaln

from .._validation import check_choice, check_int, check_nonnegative, check_positive, short_repr
from ._numeric import bisect_decreasing, check_delta, down, golden_min, square_over, sum_up, up
from .guarantees import DEFAULT_ORDERS, RDP, ZCDP, ApproxDP, BoundedRange, Guarantee, PureDP

__all__ = ["compose_basic", "compose_zcdp", "compose_rdp", "optimal_pure", "optimal_bounded_range",
           "PureDPComposition", "BoundedRangeComposition", "AdaptiveBoundedRangeComposition", "per_pick_epsilon",
           "pure_epsilon"]


def _as_list(guarantees: Iterable[Guarantee]) -> list[Guarantee]:
    if isinstance(guarantees, Guarantee):
        return [guarantees]
    out = list(guarantees)
    for i, g in enumerate(out):
        if not isinstance(g, Guarantee):
            raise TypeError(f"guarantees[{i}] must be a guarantee value (PureDP, BoundedRange, ApproxDP, ZCDP, "
                            f"GaussianMechanism, RDP, ...), got {short_repr(g)}")
    return out


def pure_epsilon(g: Guarantee) -> tuple[float, float]:
    """(ε, δ) of the guarantee read as approximate DP with its own δ (basic composition's input).

    Parameters
    ----------
    g : Guarantee
        A guarantee value.

    Returns
    -------
    epsilon, delta : float
        ``(ε, 0)`` for ε-DP and ε-BR (and k-fold compositions of them: ``(k ε0, 0)``), ``(ε, δ)`` for
        (ε, δ)-DP; ``(inf, 0)`` for guarantees with no such pair (zCDP, Gaussian, RDP).

    Examples
    --------
    >>> pure_epsilon(BoundedRange(0.5)), pure_epsilon(ApproxDP(1.0, 1e-6)), pure_epsilon(ZCDP(0.5))
    ((0.5, 0.0), (1.0, 1e-06), (inf, 0.0))
    """
    if isinstance(g, (PureDP, BoundedRange)):
        return g.epsilon_, 0.0
    if isinstance(g, ApproxDP):
        return g.epsilon_, g.delta_
    if isinstance(g, (PureDPComposition, BoundedRangeComposition, AdaptiveBoundedRangeComposition)):
        return g.k * g.epsilon0, 0.0
    return math.inf, 0.0


def compose_basic(guarantees: Iterable[Guarantee]) -> PureDP | ApproxDP:
    """Basic composition: ε's add and δ's add (valid for fully adaptive sequences, as a filter).

    Parameters
    ----------
    guarantees : iterable of Guarantee
        The releases' guarantees (a single guarantee is accepted too); each needs an (ε, δ) pair
        (:func:`pure_epsilon`).

    Returns
    -------
    PureDP or ApproxDP
        ``PureDP(Σ ε)`` when every δ is 0, else ``ApproxDP(Σ ε, min(1, Σ δ))`` (sums rounded up).

    Raises
    ------
    TypeError
        An element is not a guarantee value.
    ValueError
        A guarantee without an (ε, δ) pair (zCDP, Gaussian, RDP): convert it first.

    Examples
    --------
    >>> compose_basic([PureDP(0.5), ApproxDP(0.25, 1e-6)])
    ApproxDP(epsilon=0.75, delta=1e-06)
    >>> compose_basic([BoundedRange(0.5), PureDP(0.25)])
    PureDP(epsilon=0.75)
    """
    gs = _as_list(guarantees)
    eps = [pure_epsilon(g) for g in gs]
    bad = [g for g, (e, _) in zip(gs, eps) if math.isinf(e)]
    if bad:
        raise ValueError(f"compose_basic needs guarantees with an (ε, δ) pair; {bad[0]!r} has none "
                         "(convert it first, e.g. ApproxDP(g.epsilon(delta), delta))")
    e = sum_up([x for x, _ in eps])
    d = sum_up([y for _, y in eps])
    return PureDP(e) if d == 0.0 else ApproxDP(e, min(1.0, d))


def compose_zcdp(guarantees: Iterable[Guarantee]) -> ZCDP:
    """zCDP composition: ρ's add. ε-DP counts ε²/2, ε-BR counts ε²/8, the Gaussian Δ²/(2σ²).

    Valid for fully adaptive sequences (as a filter).

    Parameters
    ----------
    guarantees : iterable of Guarantee
        The releases' guarantees; each must have a :meth:`~dpselect.accounting.Guarantee.zcdp`.

    Returns
    -------
    ZCDP
        ρ = Σ ρ_i, rounded up.

    Raises
    ------
    TypeError
        An element is not a guarantee value.
    ValueError
        A guarantee with no zCDP bound (one with δ > 0).

    Examples
    --------
    >>> compose_zcdp([BoundedRange(1.0), PureDP(1.0)])
    ZCDP(rho=0.625)
    """
    gs = _as_list(guarantees)
    return ZCDP(sum_up([g.zcdp() for g in gs]))


def compose_rdp(guarantees: Iterable[Guarantee], orders: Sequence[float] = DEFAULT_ORDERS) -> RDP:
    """RDP composition: ε(α) add order by order (each guarantee's own tight Rényi curve).

    Valid for fully adaptive sequences (as a filter).

    Parameters
    ----------
    guarantees : iterable of Guarantee
        The releases' guarantees.
    orders : sequence of float, default DEFAULT_ORDERS
        The Rényi orders (> 1) at which the curves are added.

    Returns
    -------
    RDP
        The summed curve (rounded up by a relative 1e-15).

    Raises
    ------
    TypeError
        An element is not a guarantee value.

    Examples
    --------
    >>> c = compose_rdp([ZCDP(0.125)] * 8, orders=[2.0, 4.0])
    >>> c.orders, [round(e, 9) for e in c.epsilons]
    ((2.0, 4.0), [2.0, 4.0])
    >>> round(compose_rdp([BoundedRange(0.1)] * 100).epsilon(1e-6), 3)
    2.401
    """
    gs = _as_list(guarantees)
    o = np.asarray(orders, dtype=float)
    total = np.zeros(o.size)
    for g in gs:
        total += np.array([g.rdp(float(a)) for a in o])
    return RDP(o, total * (1.0 + 1e-15))


# --------------------------------------------------------------------------------------------------
# k pure ε-DP releases: Kairouz, Oh & Viswanath (2015), Thm 3.3. The worst case is k-fold randomized
# response; with i "flips" the privacy loss is (k − 2i)ε, so
#     δ(ε_g) = Σ_i C(k, i) (e^{(k−i)ε} − e^{ε_g + iε})₊ / (1 + e^ε)^k.
# --------------------------------------------------------------------------------------------------
def _log_binom(k: int) -> np.ndarray:
    i = np.arange(k + 1, dtype=float)
    return gammaln(k + 1.0) - gammaln(i + 1.0) - gammaln(k - i + 1.0)


def _kairouz_delta(eps: float, k: int, eg: float) -> float:
    """δ(ε_g) of k-fold randomized response in O(1): the sum over the outcomes whose loss exceeds ε_g is a
    difference of two binomial tails, P[Bin(k, q) ≤ m] − e^{ε_g} P[Bin(k, p) ≤ m] (q = 1/(1 + e^ε),
    p = 1 − q, m the last i with (k − 2i)ε > ε_g), each a regularised incomplete beta function taken at q
    itself (no 1 − p cancellation). Against a 40-digit sum the tails' relative error was 1e-15 at k = 100,
    1e-12 at 10⁶ and 4e-11 at 10⁹, so their difference is widened by 1e-13 + 4e-14·√k of their sum.
    The explicit sum of k + 1 terms it replaces cost O(k) (k = 10⁹ did not finish) and was 1.1e-9
    relative below the exact value at k = 10⁶ (log-gamma cancellation)."""
    if eps == 0.0 or eg >= k * eps:
        return 0.0
    # m = ceil((k − ε_g/ε)/2) − 1, exactly (an outcome on the boundary contributes 0 either way)
    m = math.ceil((Fraction(k) - Fraction(eg) / Fraction(eps)) / 2) - 1
    if m < 0:
        return 0.0
    q = float(expit(-eps))
    a = float(betaincc(m + 1, k - m, q))             # P[Bin(k, q) ≤ m]
    tail_p = float(betainc(k - m, m + 1, q))         # P[Bin(k, p) ≤ m] = P[Bin(k, q) ≥ k − m]
    b = math.exp(min(eg + math.log(tail_p), 700.0)) if tail_p > 0.0 else 0.0
    rel = 1e-13 + 4e-14 * math.sqrt(k)
    return min(1.0, up(max(a - b, 0.0) + rel * (a + b)))


@dataclass(frozen=True)
class _KFold(Guarantee):
    """k releases of one ε0 each (validated once here); ε(δ) is the smallest ε whose δ(ε) fits."""

    epsilon0: float
    k: int

    def __init__(self, epsilon0: float, k: int) -> None:
        object.__setattr__(self, "epsilon0", check_nonnegative(epsilon0, "epsilon0"))
        object.__setattr__(self, "k", check_int(k, "k", minimum=1))

    def epsilon(self, delta: float = 0.0) -> float:
        return _composed_epsilon(self, check_delta(delta))


@dataclass(frozen=True, init=False)
class PureDPComposition(_KFold):
    """The optimal composition of ``k`` ε0-DP releases (Kairouz, Oh & Viswanath 2015).

    The exact δ(ε) of k-fold randomized response. Valid for adaptively chosen mechanisms whose ε0 is fixed
    in advance.

    Parameters
    ----------
    epsilon0 : float
        The ε of each release, >= 0.
    k : int
        The number of releases, >= 1.

    Raises
    ------
    ValueError
        ``epsilon0`` or ``k`` out of range.

    Examples
    --------
    >>> round(PureDPComposition(0.1, 100).epsilon(1e-6), 3)
    4.775
    >>> round(PureDPComposition(0.1, 100).delta(3.0), 8)
    0.0013614
    """

    def delta(self, epsilon: float) -> float:
        return _kairouz_delta(self.epsilon0, self.k, check_nonnegative(epsilon, "epsilon"))

    def zcdp(self) -> float:
        return up(self.k * square_over(self.epsilon0, 2))


# --------------------------------------------------------------------------------------------------
# k ε-BR releases, non-adaptive (Dong, Durfee & Rogers 2020). Each ε-BR pair is a post-processing of a
# generalised randomized response with log-ratios {(t − 1)ε, tε}, t ∈ [0, 1], whose "high" output has
# probability q1 = (e^{(1−t)ε} − 1)/(e^ε − 1) under the second dataset. For the k-fold product with a
# common t (the homogeneous optimum; tests check it against heterogeneous t's by brute force), i high
# outputs give the loss (i − k(1 − t))ε and
#     δ_t(ε_g) = Σ_i C(k, i) q1^i q0^{k−i} (e^{(i − k(1−t))ε} − e^{ε_g})₊,    δ(ε_g) = sup_t δ_t(ε_g).
# The sup is certified by branch and bound: every pair with t in a cell [a, b] has its log-ratios in
# [(a − 1)ε, bε], so it is dominated by the generalised randomized response of width ε(1 + b − a) with
# those end points, whose δ bounds the whole cell from above.
# --------------------------------------------------------------------------------------------------
def _grr_delta(width: np.ndarray, t: np.ndarray, k: int, eg: float) -> np.ndarray:
    """δ_t(ε_g) of the k-fold product of the generalised randomized response (width, t), per row.

    The sum over i ≥ i0 (the outcomes whose loss exceeds ε_g) is P[Bin(k, p1) ≥ i0] − e^{ε_g} P[Bin(k, q1)
    ≥ i0], two binomial tails computed in O(1) by the regularised incomplete beta function; their
    difference is widened by 1e-12 of their sum, far above the tails' float error."""
    w = np.asarray(width, dtype=float)
    tt = np.asarray(t, dtype=float)
    q1 = np.expm1((1.0 - tt) * w) / np.expm1(w)
    p1 = np.minimum(1.0, np.exp(tt * w) * q1)
    i0 = np.floor(k * (1.0 - tt) + eg / w) + 1.0
    a = np.where(i0 <= 0, 1.0, bdtrc(i0 - 1.0, k, p1))
    tail_q = np.where(i0 <= 0, 1.0, bdtrc(i0 - 1.0, k, q1))
    with np.errstate(divide="ignore"):      # e^{ε_g}·tail in log space: ε_g > 709 would overflow
        b = np.exp(np.minimum(eg + np.log(tail_q), 700.0))
    out = np.maximum(a - b, 0.0) + 1e-12 * (a + b)
    return np.where(i0 > k, 0.0, out)


def _grr_delta_sum(width: float, t: float, k: int, eg: float) -> float:
    """The same δ_t(ε_g) as an explicit sum of the k + 1 terms (a slow cross-check for the tests)."""
    i = np.arange(k + 1, dtype=float)
    loss = (i - k * (1.0 - t)) * width
    lden = math.log(math.expm1(width))
    lq1 = math.log(math.expm1((1.0 - t) * width)) - lden
    lq0 = math.log(math.expm1(t * width)) + (1.0 - t) * width - lden
    logw = _log_binom(k) + i * lq1 + (k - i) * lq0
    m = loss > eg
    return float(np.sum(np.exp(logw[m] + eg) * np.expm1(loss[m] - eg)))


def _br_delta(eps: float, k: int, eg: float, rtol: float = 1e-5) -> float:
    if eps == 0.0 or eg >= k * eps:
        return 0.0
    ta = np.linspace(0.0, 1.0, 65)[:-1]
    tb = ta + 1.0 / 64
    best = 0.0
    for _ in range(64):
        mid = 0.5 * (ta + tb)
        lb = _grr_delta(np.full(mid.size, eps), mid, k, eg)
        best = max(best, float(lb.max()))
        width = eps * (1.0 + tb - ta)
        ub = _grr_delta(width, 1.0 + (ta - 1.0) * eps / width, k, eg)
        keep = ub > best * (1.0 + rtol)
        if not keep.any():
            return min(1.0, up(best * (1.0 + rtol)))
        if keep.sum() > 2048:       # a flat top: stop refining, the cell bounds are still valid
            break
        ta, tb, mid = ta[keep], tb[keep], mid[keep]
        ta, tb = np.concatenate([ta, mid]), np.concatenate([mid, tb])
    width = eps * (1.0 + tb - ta)
    ub = _grr_delta(width, 1.0 + (ta - 1.0) * eps / width, k, eg)
    return min(1.0, up(max(best * (1.0 + rtol), float(ub.max()))))


@dataclass(frozen=True, init=False)
class BoundedRangeComposition(_KFold):
    """The optimal *non-adaptive* composition of ``k`` ε0-bounded-range releases (Dong, Durfee & Rogers 2020).

    The exact δ(ε) of the worst batch of k exponential mechanisms, certified from above. Valid only when the
    k mechanisms are fixed before any output is seen (a batch); for mechanisms chosen from earlier outputs
    use :func:`compose_zcdp`, :class:`AdaptiveBoundedRangeComposition` or :class:`PureDPComposition`.

    Parameters
    ----------
    epsilon0 : float
        The ε of each ε-BR release, >= 0.
    k : int
        The number of releases, >= 1.

    Raises
    ------
    ValueError
        ``epsilon0`` or ``k`` out of range.

    Examples
    --------
    >>> round(BoundedRangeComposition(0.1, 100).epsilon(1e-6), 3)
    2.246
    """

    def delta(self, epsilon: float) -> float:
        eg = check_nonnegative(epsilon, "epsilon")
        return min(_br_delta_cached(self.epsilon0, self.k, eg), _kairouz_delta(self.epsilon0, self.k, eg))

    def zcdp(self) -> float:
        return up(self.k * square_over(self.epsilon0, 8))


@lru_cache(maxsize=64)
def _adaptive_curve(eps: float, k: int, m: int) -> np.ndarray:
    from ._adaptive_br import WINDOW_DELTA, WINDOW_SLACK, adaptive_br_curve, adaptive_br_curve_window
    if k <= 400:
        return adaptive_br_curve(eps, k, m)[0]
    # long sequences: only the window of accumulated loss that matters, zCDP bounds outside it
    eg_max = ZCDP(up(k * square_over(eps, 8))).epsilon(WINDOW_DELTA)
    return adaptive_br_curve_window(eps, k, m, eg_max, WINDOW_SLACK)[0]


@dataclass(frozen=True)
class AdaptiveBoundedRangeComposition(Guarantee):
    """The optimal composition of ``k`` ε0-bounded-range releases chosen *adaptively*, certified from above.

    Each mechanism may depend on earlier outputs (e.g. top-k peeling with the exponential mechanism).
    The adversary's best response is a dynamic programme over the privacy loss accumulated so far; it is
    computed on a grid of step ε0/``resolution`` with every step's pair replaced by a grid-aligned one
    that dominates it (``dpselect.accounting._adaptive_br``), so the answer is an upper bound within
    O(1/resolution) of the optimum, and never worse than the zCDP route or the optimal pure-DP
    composition (both valid adaptively; the smallest of the three is returned). Cost ~ k²·resolution²
    operations, computed once per (ε0, k) and cached; the default resolution keeps it near 10⁸. For
    400 < k ≤ 5000 the recursion runs on a window of the accumulated loss only, with the zCDP bound of
    the true value outside it (still certified; ε_g up to the zCDP ε at δ = 1e-12), at resolution ~100
    for k = 1000 (within 1.5% of the batch optimum there; several seconds, once per (ε0, k)); beyond
    k = 5000 the default skips the recursion.

    Parameters
    ----------
    epsilon0 : float
        The ε of each ε-BR release, >= 0.
    k : int
        The number of releases, >= 1.
    resolution : int, optional
        Grid steps per ε0, >= 1 (default: chosen from ``k`` as above; 0, i.e. no recursion, beyond
        k = 5000).

    Attributes
    ----------
    resolution : int
        The grid resolution used.

    Raises
    ------
    ValueError
        ``epsilon0``, ``k`` or ``resolution`` out of range.

    Examples
    --------
    >>> round(AdaptiveBoundedRangeComposition(0.1, 100).epsilon(1e-6), 2)     # batch optimum: 2.246
    2.27
    >>> AdaptiveBoundedRangeComposition(0.1, 10)
    AdaptiveBoundedRangeComposition(epsilon0=0.1, k=10, resolution=400)
    """

    epsilon0: float
    k: int
    resolution: int

    def __init__(self, epsilon0: float, k: int, resolution: int | None = None) -> None:
        from ._adaptive_br import default_resolution
        object.__setattr__(self, "epsilon0", check_nonnegative(epsilon0, "epsilon0"))
        object.__setattr__(self, "k", check_int(k, "k", minimum=1))
        # default: no recursion beyond k = 400 (the affordable grid would be too coarse to beat zCDP)
        from ._adaptive_br import WINDOW_MAX_K, default_window_resolution
        m = (default_resolution(self.k) if self.k <= 400 else default_window_resolution(self.k)
             if self.k <= WINDOW_MAX_K else 0) if resolution is None \
            else check_int(resolution, "resolution", minimum=1)
        object.__setattr__(self, "resolution", m)

    def _curve(self) -> np.ndarray:
        return _adaptive_curve(self.epsilon0, self.k, self.resolution)

    def delta(self, epsilon: float) -> float:
        eg = check_nonnegative(epsilon, "epsilon")
        if self.epsilon0 == 0.0 or eg >= self.k * self.epsilon0:
            return 0.0
        others = min(_kairouz_delta(self.epsilon0, self.k, eg), ZCDP(self.zcdp()).delta(eg))
        if self.resolution == 0:
            return others
        h = self.epsilon0 / self.resolution
        curve = self._curve()
        i = min(int(math.floor(eg / h)), curve.size - 1)       # δ is non-increasing: the grid point below
        return min(float(curve[i]), others)

    def epsilon(self, delta: float = 0.0) -> float:
        d = check_delta(delta)
        others = min(PureDPComposition(self.epsilon0, self.k).epsilon(d), ZCDP(self.zcdp()).epsilon(d))
        if d == 0.0 or self.epsilon0 == 0.0 or self.resolution == 0:
            return min(others, self.k * self.epsilon0)
        curve = self._curve()
        ok = np.flatnonzero(curve <= d)
        grid = up(ok[0] * (self.epsilon0 / self.resolution)) if ok.size else math.inf
        return min(grid, others)

    def zcdp(self) -> float:
        return up(self.k * square_over(self.epsilon0, 8))


@lru_cache(maxsize=4096)
def _br_delta_cached(eps: float, k: int, eg: float) -> float:
    return _br_delta(eps, k, eg)


def _br_delta_lb(eps: float, k: int, eg: float) -> float:
    """max_t δ_t(ε_g) found by a grid and a golden-section refinement: a *lower* bound of the optimum
    (any t is attained by some batch), used only to aim the certified search."""
    if eps == 0.0 or eg >= k * eps:
        return 0.0
    grid = np.linspace(0.0, 1.0, 129)[1:-1]
    vals = _grr_delta(np.full(grid.size, eps), grid, k, eg)
    j = int(np.argmax(vals))
    def neg(t: float) -> float:   # the golden-section search minimises
        return -float(_grr_delta(np.array([eps]), np.array([t]), k, eg)[0])

    best = -golden_min(neg, float(grid[max(j - 1, 0)]), float(grid[min(j + 1, grid.size - 1)]), iters=40)
    return max(float(vals[j]), best)


def _first_safe(ub, target: float, x0: float, limit: float, *, increasing_x: bool = True) -> float:
    """Walk from the (near-)root ``x0`` of the lower-bound function toward the safe side in geometric
    steps until the *certified* upper bound ``ub(x) <= target``; ``limit`` is known safe."""
    step = max(1e-12, 1e-7 * abs(x0))
    while True:
        x = x0 + step if increasing_x else x0 - step
        if (increasing_x and x >= limit) or (not increasing_x and x <= limit):
            return limit
        if ub(x) <= target:
            return x
        step *= 4.0


def _root_decreasing(f, target: float, lo: float, hi: float) -> float:
    """x in [lo, hi] with f(x) ≈ target for a non-increasing f (bisection to 1e-12 relative)."""
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi or hi - lo <= 1e-12 * max(1.0, hi):
            break
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return hi


@lru_cache(maxsize=1024)
def _composed_epsilon_cached(kind: str, eps0: float, k: int, delta: float) -> float:
    g: Guarantee = PureDPComposition(eps0, k) if kind == "pure" else BoundedRangeComposition(eps0, k)
    hi = k * eps0
    if delta == 0.0 or hi == 0.0:
        return hi
    # a cheaper valid ε narrows the bracket (the zCDP route for BR, ε0²/2-zCDP for pure)
    z = min(hi, ZCDP(g.zcdp()).epsilon(delta))
    if g.delta(z) <= delta:
        hi = z
    if kind == "pure":          # closed form: plain bisection on the exact (rounded-up) δ
        return up(bisect_decreasing(g.delta, delta, 0.0, hi, iters=80, xtol=1e-12))
    x0 = _root_decreasing(lambda e: _br_delta_lb(eps0, k, e), delta, 0.0, hi)
    return up(_first_safe(g.delta, delta, x0, hi))


def _composed_epsilon(g: _KFold, delta: float) -> float:
    kind = "pure" if isinstance(g, PureDPComposition) else "bounded_range"
    return _composed_epsilon_cached(kind, g.epsilon0, g.k, delta)


def optimal_pure(epsilon: float, k: int) -> PureDPComposition:
    """The optimal composition of ``k`` ε-DP releases (see :class:`PureDPComposition`).

    Parameters
    ----------
    epsilon : float
        The ε of each release, >= 0.
    k : int
        The number of releases, >= 1.

    Returns
    -------
    PureDPComposition

    Examples
    --------
    >>> g = optimal_pure(0.1, 100)
    >>> g, round(g.epsilon(1e-6), 3)
    (PureDPComposition(epsilon0=0.1, k=100), 4.775)
    """
    return PureDPComposition(epsilon, k)


def optimal_bounded_range(epsilon: float, k: int) -> BoundedRangeComposition:
    """The optimal non-adaptive composition of ``k`` ε-BR releases (see :class:`BoundedRangeComposition`).

    Parameters
    ----------
    epsilon : float
        The ε of each release, >= 0.
    k : int
        The number of releases, >= 1 (a batch fixed before any output is seen).

    Returns
    -------
    BoundedRangeComposition

    Examples
    --------
    >>> g = optimal_bounded_range(0.1, 100)
    >>> g, round(g.epsilon(1e-6), 2)
    (BoundedRangeComposition(epsilon0=0.1, k=100), 2.25)
    """
    return BoundedRangeComposition(epsilon, k)


def _root_increasing(f, target: float, lo: float, hi: float) -> float:
    """x in [lo, hi] with f(x) ≈ target for a non-decreasing f (bisection to 1e-12 relative)."""
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi or hi - lo <= 1e-12 * max(1.0, hi):
            break
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo


def _grow(ok, start: float) -> float:
    hi = 2.0 * start
    while ok(hi):
        hi *= 2.0
    return hi


def per_pick_epsilon(kind: str, *, k: int, epsilon: float, delta: float = 0.0, adaptive: bool = True) -> float:
    """The largest per-release ε0 for which ``k`` releases of ``kind`` are together (ε, δ)-DP (rounded down).

    Parameters
    ----------
    kind : {"pure", "bounded_range"}
        What each release is: ε0-DP (permute-and-flip, Laplace / exponential-noise noisy max) or ε0-BR
        (the exponential mechanism, Gumbel noisy max).
    k : int
        Number of releases (e.g. picks of a top-k), fixed in advance.
    epsilon, delta : float
        The target guarantee of the k releases together (ε > 0, δ in [0, 1), default 0). With
        ``delta = 0`` the answer is ε/k.
    adaptive : bool, default True
        True (default): each mechanism may depend on earlier outputs (top-k peeling): pure releases use the
        optimal composition of Kairouz et al., bounded-range ones the best of that, the zCDP route
        (k ε0²/8, CKS conversion) and, for k ≤ 400, the certified adaptive optimum
        (:class:`AdaptiveBoundedRangeComposition`, searched to 1e-4 relative). False: a batch fixed in
        advance; bounded-range releases then use the non-adaptive optimum of Dong, Durfee & Rogers.

    Returns
    -------
    float
        ε0 > 0, rounded down (``k`` releases of ε0 never overspend).

    Raises
    ------
    ValueError
        An unknown ``kind``, ``k`` < 1, ``epsilon`` not > 0 or ``delta`` outside [0, 1).
    TypeError
        ``adaptive`` is not a bool.

    Examples
    --------
    >>> per_pick_epsilon("pure", k=10, epsilon=1.0)
    0.1
    >>> round(per_pick_epsilon("bounded_range", k=100, epsilon=2.25, delta=1e-6, adaptive=False), 4)
    0.1002
    """
    kind = check_choice(kind, "kind", ("pure", "bounded_range"))
    k = check_int(k, "k", minimum=1)
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_delta(delta)
    if not isinstance(adaptive, bool):
        raise TypeError(f"adaptive must be True or False, got {short_repr(adaptive)}")
    return _per_pick(kind, k, epsilon, delta, adaptive)


@lru_cache(maxsize=256)
def _per_pick(kind: str, k: int, epsilon: float, delta: float, adaptive: bool) -> float:
    base = epsilon / k
    while base * k > epsilon:          # the split itself must not overspend
        base = math.nextafter(base, 0.0)
    if delta == 0.0:
        return base

    def ok(e0: float) -> bool:
        if kind == "pure":
            return _kairouz_delta(e0, k, epsilon) <= delta
        if not adaptive:
            return BoundedRangeComposition(e0, k).delta(epsilon) <= delta
        return min(_kairouz_delta(e0, k, epsilon), ZCDP(k * e0 * e0 / 8.0).delta(epsilon)) <= delta

    lo, hi = base, 2.0 * epsilon
    if kind == "bounded_range" and not adaptive:
        while _br_delta_lb(hi, k, epsilon) <= delta:
            hi *= 2.0
        x0 = _root_increasing(lambda e0: _br_delta_lb(e0, k, epsilon), delta, lo, hi)
        return down(_first_safe(lambda e0: -1.0 if e0 <= lo else BoundedRangeComposition(e0, k).delta(epsilon),
                                delta, x0, lo, increasing_x=False), 1e-12)
    if kind == "bounded_range" and adaptive:
        # start from the zCDP / pure-DP answer, then improve it with the adaptive recursion inside the
        # bracket [that answer, the batch optimum] (adaptive composition is never better than a batch)
        base_ok = _root_increasing(lambda e0: 0.0 if ok(e0) else 1.0, 0.5, base, _grow(ok, epsilon))
        batch = _per_pick("bounded_range", k, epsilon, delta, False)
        if k > 400 or batch <= base_ok:
            return down(base_ok, 1e-12) if base_ok > base else base
        m = max(16, min(200, int(math.sqrt(4e7) / k)))
        good, bad = base_ok, batch
        for _ in range(12):
            mid = 0.5 * (good + bad)
            if AdaptiveBoundedRangeComposition(mid, k, m).delta(epsilon) <= delta:
                good = mid
            else:
                bad = mid
            if bad - good <= 1e-4 * good:
                break
        return down(good, 1e-12) if good > base else base
    while ok(hi):
        lo, hi = hi, 2.0 * hi
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi or hi - lo <= 1e-13 * hi:
            break
        if ok(mid):
            lo = mid
        else:
            hi = mid
    if lo == base:
        return lo
    e0 = down(lo, 1e-12)
    # the charge reads PureDPComposition(e0, k).epsilon(δ), a bisection rounded up (~1e-10 relative): the
    # answer must fit that reading too, or k picks at e0 are refused on a budget of exactly (ε, δ)
    while e0 > base and PureDPComposition(e0, k).epsilon(delta) > epsilon:
        e0 = max(base, down(e0, 1e-10))
    return e0
