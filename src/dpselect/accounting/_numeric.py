"""Numerical kernels of the accounting: conservative rounding, the zCDP / RDP → (ε, δ) conversions and a
monotone root finder. Internal: the public values in ``guarantees`` call these.

Rounding rule: every ε and δ handed to a user is an *upper* bound of the exact value, so each kernel
inflates its float result by a relative margin far above its float error (``_REL``), and every
root-find returns the end of its bracket that is on the safe side.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Callable

import numpy as np

from .._validation import short_repr

_REL = 1e-10      # relative margin added to computed ε and δ (float error of the kernels is ~1e-13)
_TINY = 1e-300


def up(x: float, rel: float = _REL) -> float:
    """``x`` rounded away from privacy (up); 0 and inf stay as they are."""
    if x == 0.0 or not math.isfinite(x):
        return x
    return math.nextafter(x + abs(x) * rel, math.inf)


def up_eps(x: float) -> float:
    """An ε computed through a cancellation (ε + log(...), a minimum over α) rounded up: relative margin
    plus an absolute 1e-13, above the absolute error of the terms (|terms| ≲ 10³ times 1e-16)."""
    if x == 0.0 or not math.isfinite(x):
        return x
    return up(x) + 1e-13


def exact_up(value: float, exact: "Fraction") -> float:
    """``value`` (a float approximation of the rational ``exact``) moved up one ulp if it is below it:
    simple arithmetic (ε²/8, sums) stays readable and is still never below the exact value."""
    return math.nextafter(value, math.inf) if Fraction(value) < exact else value


def square_over(e: float, d: int) -> float:
    """e²/d rounded up (exactly, via rationals): the zCDP ρ of ε-DP (d = 2) and ε-BR (d = 8)."""
    return exact_up(e * e / d, Fraction(e) ** 2 / d)


def sum_up(xs: "list[float]") -> float:
    """The sum of ``xs`` rounded up (``math.fsum`` is correctly rounded; one ulp up where it fell below)."""
    s = math.fsum(xs)
    if not math.isfinite(s):
        return s
    return math.nextafter(s, math.inf) if math.fsum(list(xs) + [-s]) > 0 else s


def down(x: float, rel: float = _REL) -> float:
    """``x`` rounded toward more privacy (down); 0 and inf stay as they are."""
    if x == 0.0 or not math.isfinite(x):
        return x
    return math.nextafter(x - abs(x) * rel, -math.inf)


def check_delta(delta: object, name: str = "delta", *, allow_one: bool = False) -> float:
    """A number in [0, 1) (or [0, 1] with ``allow_one``)."""
    if type(delta) is not float and (isinstance(delta, bool)
                                     or not isinstance(delta, (numbers.Real, np.floating, np.integer))):
        raise TypeError(f"{name} must be a number in [0, 1), got {short_repr(delta)} ({type(delta).__name__})")
    d = float(delta)
    if not (0.0 <= d < 1.0 or (allow_one and d == 1.0)):
        rule = "[0, 1]" if allow_one else "[0, 1)"
        raise ValueError(f"{name} must be a number in {rule}, got {short_repr(delta)}")
    return d


# α − 1 on a log grid wide enough for ρ from 1e-12 to 1e6 and δ down to 1e-300; the best grid point is
# then refined by a golden-section search. Any α > 1 gives a *valid* bound, so the search only affects
# tightness, never safety.
_ALPHA_M1 = np.exp(np.linspace(math.log(1e-4), math.log(1e7), 1201))


def golden_min(f: Callable[[float], float], lo: float, hi: float, iters: int = 60) -> float:
    """Golden-section minimisation of ``f`` over [lo, hi] (here log(α − 1), or t); returns the best value seen."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    best = min(fc, fd)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
        best = min(best, fc, fd)
    return best


def _rdp_eps_at(alpha_m1: np.ndarray, rdp_eps: np.ndarray, log_delta: float) -> np.ndarray:
    """Improved RDP → DP conversion (Balle et al. 2020; Canonne, Kamath & Steinke 2020, Prop. 12):
    ε = ε_α + log((α − 1)/α) − (log δ + log α)/(α − 1)."""
    alpha = alpha_m1 + 1.0
    return rdp_eps + np.log1p(-1.0 / alpha) - (log_delta + np.log(alpha)) / alpha_m1


def _rdp_logdelta_at(alpha_m1: np.ndarray, rdp_eps: np.ndarray, epsilon: float) -> np.ndarray:
    """The same conversion solved for log δ: (α−1)(ε_α − ε) + (α−1) log(1 − 1/α) − log α."""
    alpha = alpha_m1 + 1.0
    return alpha_m1 * (rdp_eps - epsilon) + alpha_m1 * np.log1p(-1.0 / alpha) - np.log(alpha)


def zcdp_epsilon(rho: float, delta: float) -> float:
    """Smallest ε the CKS conversion certifies for ρ-zCDP at δ (rounded up; ≥ 0)."""
    if rho == 0.0:
        return 0.0
    if delta <= 0.0:
        return math.inf
    ld = math.log(delta)
    vals = _rdp_eps_at(_ALPHA_M1, (_ALPHA_M1 + 1.0) * rho, ld)
    i = int(np.argmin(vals))
    lo = math.log(_ALPHA_M1[max(i - 1, 0)])
    hi = math.log(_ALPHA_M1[min(i + 1, _ALPHA_M1.size - 1)])
    def f(x: float) -> float:
        return float(_rdp_eps_at(np.array([math.exp(x)]), np.array([(math.exp(x) + 1.0) * rho]), ld)[0])

    best = min(float(vals[i]), golden_min(f, lo, hi))
    return max(0.0, up_eps(best))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """Smallest δ the CKS conversion certifies for ρ-zCDP at ε (rounded up; ≤ 1)."""
    if rho == 0.0:
        return 0.0
    vals = _rdp_logdelta_at(_ALPHA_M1, (_ALPHA_M1 + 1.0) * rho, epsilon)
    i = int(np.argmin(vals))
    lo = math.log(_ALPHA_M1[max(i - 1, 0)])
    hi = math.log(_ALPHA_M1[min(i + 1, _ALPHA_M1.size - 1)])
    def f(x: float) -> float:
        return float(_rdp_logdelta_at(np.array([math.exp(x)]), np.array([(math.exp(x) + 1.0) * rho]), epsilon)[0])

    best = min(float(vals[i]), golden_min(f, lo, hi))
    return min(1.0, up(math.exp(min(best + 1e-12, 0.0))))   # δ ≤ 1: no overflow at a huge ρ


def rdp_epsilon(orders: np.ndarray, rdp_eps: np.ndarray, delta: float) -> float:
    """Smallest ε the improved conversion certifies over the given orders (rounded up; ≥ 0)."""
    if delta <= 0.0:
        return math.inf if np.all(rdp_eps > 0) else 0.0
    with np.errstate(invalid="ignore"):
        vals = _rdp_eps_at(orders - 1.0, rdp_eps, math.log(delta))
    vals = np.where(np.isnan(vals), np.inf, vals)
    return max(0.0, up_eps(float(np.min(vals))))


def rdp_delta(orders: np.ndarray, rdp_eps: np.ndarray, epsilon: float) -> float:
    with np.errstate(invalid="ignore", over="ignore"):
        vals = _rdp_logdelta_at(orders - 1.0, rdp_eps, epsilon)
    vals = np.where(np.isnan(vals), np.inf, vals)
    return min(1.0, up(math.exp(min(float(np.min(vals)) + 1e-12, 0.0))))


def bisect_decreasing(f: Callable[[float], float], target: float, lo: float, hi: float, *,
                      iters: int = 100, xtol: float = 1e-12) -> float:
    """For a non-increasing ``f`` with ``f(hi) <= target``: the smallest ``x`` in [lo, hi] found with
    ``f(x) <= target``, returning a point where that was *checked* (so the answer is safe even where
    ``f`` is only an upper bound computed with some slack)."""
    if f(lo) <= target:
        return lo
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi or hi - lo <= xtol * max(1.0, abs(hi)):
            break
        if f(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi
