"""The noise families of the noisy maximum and rigorous enclosures of one noise variate: float64 with a proven
error bound (:func:`_float_enclosure`, :func:`_py_enclosure`) and decimal interval arithmetic at any number
of bits (:func:`_dec_noise_point`); the error model of the scores shared by the samplers."""
from __future__ import annotations

import decimal
import math

import numpy as np

from .._exact_random import Dec as _Dec, INV64 as _INV64, words

#: The noise families of the noisy maximum (the one definition; dpselect.mechanisms and dpselect.dask use it).
NOISES = ("laplace", "gumbel", "exponential")

_HALF_U64 = np.uint64(1 << 63)
# Relative + absolute slack for one float evaluation of a noise function at a point: covers the
# rounding of the uint64 -> float conversion (2^-53) and a few ulp of each log/log1p/expm1.
_FE_REL = 4e-15
_FE_ABS = 4e-15
_DBL_MAX = np.finfo(np.float64).max
_TINY = 1e-300  # absolute slack for underflow in score arithmetic (results below ~1e-308 are subnormal)

_REL = 1e-15   # relative error model of exact scores formed by a few float operations
_SMALL = 32  # up to this many candidates, scalar Python floats beat numpy's per-call overhead


# ``size`` independent uniform 64-bit words from the generator (its random bits only; the *words* convention)
_bits64 = words


# ---------------------------------------------------------------------------------------------
# float enclosures of the noise
# ---------------------------------------------------------------------------------------------
def _log_uniform_point(num: np.ndarray, low_side: np.ndarray) -> np.ndarray:
    """ln(U) at U = num/2^64 (float), choosing the accurate formula on each side of 1/2.

    ``low_side``: U <= 1/2, ``num`` the numerator m; else ``num`` holds j = 2^64 − m (so U = 1 − j/2^64).
    """
    x = num.astype(np.float64) * _INV64
    with np.errstate(divide="ignore"):
        return np.where(low_side, np.log(np.where(low_side, x, 1.0)), np.log1p(-np.where(low_side, 0.0, x)))


def _noise_from_logu(logu: np.ndarray, noise: str, one_minus_u: np.ndarray | None = None) -> np.ndarray:
    """F⁻¹(U) from ln U (and 1 − U where it is known more accurately than 1 − e^{ln U})."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if noise == "gumbel":
            return -np.log(-logu)
        if one_minus_u is None:
            one_minus_u = -np.expm1(logu)
        if noise == "exponential":
            return -np.log(one_minus_u)
        # laplace: ln(2U) below U = 1/2, −ln(2(1 − U)) above
        low = logu < -math.log(2.0)
        return np.where(low, math.log(2.0) + logu, -np.log(2.0 * one_minus_u))


def _noise_at(m: np.ndarray, plus_one: bool, noise: str, weights: np.ndarray | None) -> np.ndarray:
    """Float value of the noise at the left (or, with ``plus_one``, right) end of each 64-bit cell."""
    m = np.asarray(m, dtype=np.uint64)
    low_side = m < _HALF_U64
    # U <= 1/2: numerator m (+1); U > 1/2: j = 2^64 − m (− 1), exact in uint64 arithmetic.
    with np.errstate(over="ignore"):
        j = (~m) + np.uint64(1)  # 2^64 − m (wraps to 0 for m = 0, which is on the low side anyway)
    if plus_one:
        num = np.where(low_side, m + np.uint64(1), j - np.uint64(1))
    else:
        num = np.where(low_side, m, j)
    logu = _log_uniform_point(num, low_side)
    if weights is not None and noise == "gumbel":
        # max of w Gumbels = Gumbel + ln w, for any w > 0 (ln(U)/w would overflow for w < ~1e-307 and
        # go subnormal for w > ~1e288); pushed outwards by the rounding of ln w and of the sum
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lw = np.log(weights)
            g = _noise_from_logu(logu, noise) + lw
            slack = _FE_REL * (2.0 * np.abs(lw) + np.abs(g))
            return g + slack if plus_one else g - slack
    if weights is None:
        one_minus = None
        if noise != "gumbel":
            x = num.astype(np.float64) * _INV64
            with np.errstate(invalid="ignore"):
                one_minus = np.where(low_side, -np.expm1(logu), x)
        return _noise_from_logu(logu, noise, one_minus)
    # base measure w: the maximum of w i.i.d. draws has CDF F^w, i.e. noise F⁻¹(U^{1/w}).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _noise_from_logu(logu / weights, noise)


def _py_noise(num: int, low_side: bool, noise: str, w, side: int = -1) -> float:
    """Scalar twin of _noise_at for one cell end (Python floats, same formulas and error bounds)."""
    x = num * _INV64  # int -> float rounds to nearest, as numpy's conversion does
    if low_side:
        logu = math.log(x) if x > 0 else -math.inf
        omu = None
    else:
        logu = math.log1p(-x)
        omu = x
    if noise == "gumbel":
        e = -logu
        g = math.inf if e == 0 else -math.log(e) if e != math.inf else -math.inf
        if w is None:
            return g
        # max of w Gumbels = Gumbel + ln w, for any w > 0 (ln(U)/w overflows for w < ~1e-307: P4), pushed
        # outwards (side: −1 left end, +1 right end) by the rounding of ln w and of the sum
        lw = math.log(w)
        g += lw
        return g + side * _FE_REL * (2.0 * abs(lw) + abs(g)) if math.isfinite(g) else g
    if w is not None:
        # exponential / Laplace noise: w is a whole number of copies (>= 1), so ln(U)/w cannot overflow
        logu = logu / w
        omu = None
    if omu is None:
        omu = -math.expm1(logu)
    if noise == "exponential":
        return math.inf if omu == 0 else -math.log(omu)
    if logu < -math.log(2.0):
        return math.log(2.0) + logu
    return math.inf if omu == 0 else -math.log(2.0 * omu)


def _py_enclosure(m: int, noise: str, w) -> tuple[float, float]:
    low = m < (1 << 63)
    lo = _py_noise(m if low else (1 << 64) - m, low, noise, w)
    hi = _py_noise(m + 1 if low else (1 << 64) - m - 1, low, noise, w, 1)
    if math.isfinite(lo):
        lo -= _FE_REL * abs(lo) + _FE_ABS
    if math.isfinite(hi):
        hi += _FE_REL * abs(hi) + _FE_ABS
    return lo, hi


def _float_enclosure(m: np.ndarray, noise: str, weights: np.ndarray | None = None):
    """Rigorous float bounds (lo, hi) on F⁻¹(U) for U anywhere in the 64-bit cell [m, m+1]/2^64.

    F⁻¹ is increasing, so the left end bounds from below and the right end from above; each
    evaluation is widened by _FE_REL·|value| + _FE_ABS for its rounding.
    """
    lo = _noise_at(m, False, noise, weights)
    hi = _noise_at(m, True, noise, weights)
    with np.errstate(invalid="ignore", over="ignore"):
        lo = lo - (_FE_REL * np.abs(lo) + _FE_ABS)
        hi = hi + (_FE_REL * np.abs(hi) + _FE_ABS)
    lo = np.where(np.isnan(lo), -np.inf, lo)
    hi = np.where(np.isnan(hi), np.inf, hi)
    return lo, hi


# ---------------------------------------------------------------------------------------------
# decimal (exact-refinement) enclosures
# ---------------------------------------------------------------------------------------------
def _dec_noise_point(D: _Dec, m: int, nbits: int, noise: str, w, side: str):
    """Enclosure of F⁻¹(U) at the point U = m/2^nbits, widened to the ``side`` ("lo"/"hi") needed."""
    c = D.ctx
    one = decimal.Decimal(1)
    scale = decimal.Decimal(1 << nbits)
    U = c.divide(decimal.Decimal(m), scale)           # exact: prec > nbits digits
    V = c.divide(decimal.Decimal((1 << nbits) - m), scale)
    if U.is_zero():
        return -D.inf
    if V.is_zero():
        return D.inf
    if w is None:
        if noise == "gumbel":
            e = D.neg(D.ln(U, U))                       # -ln U > 0
            g = D.neg(D.ln(*e))
            return g[0] if side == "lo" else g[1]
        if noise == "exponential":
            r = D.neg(D.ln(V, V))
            return r[0] if side == "lo" else r[1]
        half = decimal.Decimal("0.5")
        if U < half:
            r = D.ln(c.multiply(2, U), c.multiply(2, U))
        else:
            r = D.neg(D.ln(c.multiply(2, V), c.multiply(2, V)))
        return r[0] if side == "lo" else r[1]
    # weighted: T = U^{1/w}, then the plain inverse CDF at T; 1 − T = 1 − e^{ln(U)/w} without cancellation
    lu = D.ln(U, U)
    lt = D.div(lu, w)
    t_lo, t_hi = D.exp(*lt)
    omt = (D.one_minus_exp(lt[1].copy_negate())[0], D.one_minus_exp(lt[0].copy_negate())[1])
    omt = (max(omt[0], decimal.Decimal(0)), min(omt[1], one))
    if noise == "exponential":
        r = D.neg(D.ln(*omt))
    else:
        half = decimal.Decimal("0.5")
        if t_hi < half:
            r = D.ln(D.down(c.multiply(2, t_lo)), D.up(c.multiply(2, t_hi)))
        elif t_lo >= half:
            r = D.neg(D.ln(D.down(c.multiply(2, omt[0])), D.up(c.multiply(2, omt[1]))))
        else:  # straddles the median: ln(2T) <= 0 <= −ln(2(1 − T)) bound the value on either side
            a = D.ln(D.down(c.multiply(2, t_lo)), D.up(c.multiply(2, t_hi)))
            b = D.neg(D.ln(D.down(c.multiply(2, omt[0])), D.up(c.multiply(2, omt[1]))))
            r = (min(a[0], b[0]), max(a[1], b[1]))
    return r[0] if side == "lo" else r[1]
