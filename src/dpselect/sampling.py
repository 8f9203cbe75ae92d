"""Exact (floating-point-safe) noisy-max sampling with partially sampled random numbers.

Every selector in :mod:`dpselect.mechanisms` is a *noisy maximum*: it outputs the index (or the k
first indices, in order) of the largest values of ``X_r = a_r + N_r``, where ``a_r`` is a score
(ε·u(r)/(2Δu), ε·D(x, r)/2, ...) and the ``N_r`` are i.i.d. noise variates: Gumbel noise gives the
exponential mechanism (and, taking the k largest at once, k peeled exponential-mechanism picks),
exponential noise permute-and-flip, Laplace noise the classic report-noisy-max.

Sampling the noise in float64 and taking ``argmax`` is **not** exactly that mechanism: the float
noise takes finitely many values, so an output whose probability is below the float grid can be
impossible on a dataset x and possible on a neighbour y, an infinite privacy loss (Mironov 2012 for
Laplace, Ilvento 2020 for the exponential mechanism). Here each noise variate is N = F⁻¹(U) for a
uniform U whose binary expansion is drawn *lazily* from the generator's random bits: 64 bits first,
then 64 more at a time, only for the candidates whose order is not yet certain. Because N is a
monotone function of U, the bits drawn so far pin N to an interval, and the maximum is returned only
once those intervals (plus rigorous error bounds on the scores) prove it. The result is then exactly
the argmax of the infinitely precise ``a_r + F⁻¹(U_r)``: the output law equals the ideal mechanism's
for the inputs as given (floats read as exact rationals), using only random bits. This is the
"partially sampled random numbers" idea of OpenDP's Gumbel report-noisy-max.

How the certainty is reached, cheapest first:

1. float64 for every candidate, with a proven error bound per value (noise evaluated at the left
   end of its 64-bit cell; bounds derived in :func:`_stage1`), in blocks of 2^16 candidates. The
   ~n/2^19 cells with U within 2^-20 of 0 or 1, where one evaluation is not accurate enough, get the
   enclosures of step 2 at once and take part in the threshold like the others, so this step never
   gives up on the whole array. Almost always it alone certifies the answer.
2. For the few candidates that could still be in the answer: float64 at both ends of the 64-bit cell.
3. For candidates whose order is still uncertain (near-ties, ~1e-14 apart): exact scores (a
   ``fractions.Fraction`` from a callback) and the noise in ``decimal`` interval arithmetic at a
   precision that represents the uniform's bits exactly, adding 64 bits per round. The decimal
   module's ``ln``/``exp`` are correctly rounded, so widening each result by one unit in the last
   place gives a rigorous enclosure.

What is *not* covered: the time taken depends on the data (a timing side channel; see the README's
threat model), and the float error bounds assume numpy's ``log``/``log1p``/``expm1`` are accurate to a
few units in the last place (they are documented to be within 1-4 ulp; we allow ~9).
"""
from __future__ import annotations

import decimal
import functools
import math
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ._exact_random import Dec as _Dec, INV64 as _INV64, U64_MAX as _U64_MAX, laplace_below, words
from ._compat import keyword_only, renamed_parameter

__all__ = ["noisy_top_k", "noisy_top_k_batch", "noisy_top_k_peeled", "laplace_below", "NOISES"]

#: The noise families of the noisy maximum (the one definition; dpselect.mechanisms and dpselect.dask use it).
NOISES = ("laplace", "gumbel", "exponential")

_HALF_U64 = np.uint64(1 << 63)
# Relative + absolute slack for one float evaluation of a noise function at a point: covers the
# rounding of the uint64 -> float conversion (2^-53) and a few ulp of each log/log1p/expm1.
_FE_REL = 4e-15
_FE_ABS = 4e-15
_DBL_MAX = np.finfo(np.float64).max
_TINY = 1e-300  # absolute slack for underflow in score arithmetic (results below ~1e-308 are subnormal)

# Stage 1 (Gumbel only): cells with U in [2^-20, 1 - 2^-20) are the "bulk". There -ln U >= 2^-20, so
# the conversion error 2^-53 of U moves ln(-ln U) by at most 2^-33, and the 64-bit cell (relative
# width <= 2^-44 in -ln U) by at most 2^-44: |G_float - G| <= 2^-33 + 2^-44 + a few ulp of |G| <= 14.
_BULK_LO = np.uint64(1 << 44)
_BULK_HI = np.uint64((1 << 64) - (1 << 44))
_BULK_TAU = 2.0 ** -33 * 1.01 + 2.0 ** -44 + 1e-13
_REL = 1e-15   # relative error model of exact scores formed by a few float operations
_TINY = 1e-300  # (and the absolute error of results that underflow to subnormals)
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


# ---------------------------------------------------------------------------------------------
# the sampler
# ---------------------------------------------------------------------------------------------
class _Refiner:
    """Exact state (all bits drawn so far, exact score) of the candidates that reached the decimal stage."""

    def __init__(self, rng, noise, exact_score, weights, m0, ref: Fraction):
        self.rng, self.noise, self.exact_score, self.weights = rng, noise, exact_score, weights
        self.m0 = m0
        self.ref = ref  # every enclosure is of a_r − ref + N_r: near-ties are resolved on small numbers
        self.bits: dict[int, tuple[int, int]] = {}
        self.score: dict[int, Fraction] = {}
        self.coarse: set[int] = set()    # candidates given their one float-noise enclosure already
        self.pending: set[int] = set()   # ... whose next enclosure is the full one, with the same bits
        self.far: set[int] = set()       # candidates whose exact score has more than 40 digits

    def state(self, r: int) -> tuple[int, int]:
        if r not in self.bits:
            self.bits[r] = (int(self.m0[r]), 64)
        return self.bits[r]

    def extend(self, rs: Sequence[int]) -> None:
        rs = [r for r in rs if r not in self.pending]   # a coarse enclosure is no reason for more bits
        self.pending.clear()
        if not rs:
            return
        more = _bits64(self.rng, len(rs))
        for r, b in zip(rs, more):
            m, nb = self.state(r)
            self.bits[r] = ((m << 64) | int(b), nb + 64)

    def interval(self, r: int):
        """Decimal enclosure of a_r − ref + F⁻¹(U_r) from the exact score and all bits drawn for U_r."""
        m, nb = self.state(r)
        if r not in self.score:
            raw = Fraction(self.exact_score(r))
            self.score[r] = raw - self.ref
            if _digits(raw) > 40 or _digits(self.score[r]) > 40:
                self.far.add(r)
        f = self.score[r]
        wf = None if self.weights is None else float(self.weights[r])
        if r in self.far and r not in self.coarse:
            # A score beyond 1e40 noise units (from the top or from the reference; c = 1e600 times a
            # utility gap gives ~600 digits) first gets one cheap enclosure: f to 50 digits plus the float
            # enclosure of the noise on the first 64 bits (rigorous, only wider). That settles the order of
            # such scores whenever their gaps dwarf the noise (issue 21 item 15: no ~600-digit ln per
            # draw); a near-tie among them then gets the full enclosure below, from the same bits.
            self.coarse.add(r)
            self.pending.add(r)
            D = _Dec(50)
            n_lo, n_hi = _py_enclosure(int(self.m0[r]), self.noise, wf)
            return D.add(D.frac(f), (decimal.Decimal(n_lo), decimal.Decimal(n_hi)))
        # U = m/2^nb has at most nb significant decimal digits: the precision represents it exactly,
        # and leaves ~40 digits below the magnitude of a_r − ref for the noise.
        D = _Dec(nb + 40 + _digits(f))
        a = D.frac(f)
        w = None
        if self.weights is not None:
            wd = decimal.Decimal(float(self.weights[r]))  # exact: a binary float is a finite decimal
            if self.noise == "gumbel":
                a = D.add(a, D.ln(wd, wd))  # max of w Gumbels = Gumbel + ln w
            else:
                w = wd
        n_lo = _dec_noise_point(D, m, nb, self.noise, w, "lo")
        n_hi = _dec_noise_point(D, m + 1, nb, self.noise, w, "hi")
        if D.ctx.flags[decimal.Underflow] or D.ctx.flags[decimal.Overflow]:
            # e.g. U^{1/w} for a base measure w = 1e-300: values below 10^(-10^18) cannot be told apart
            raise ValueError(
                "exact sampling cannot resolve a near-tie: a candidate's noise under the base "
                "measure (weights) leaves the decimal exponent range; use less extreme weights or exact=False"
            )
        return D.add(a, (n_lo, n_hi))


def _certify(ids, lo, hi, k: int):
    """The k largest values in order if the intervals [lo, hi] prove them, else (None, ambiguous ids)."""
    n = len(ids)
    order = sorted(range(n), key=lambda i: (lo[i], hi[i]), reverse=True)
    kk = min(k, n)
    suf = [None] * (n + 1)
    cur = None
    for pos in range(n - 1, -1, -1):
        h = hi[order[pos]]
        cur = h if cur is None or h > cur else cur
        suf[pos] = cur
    ambiguous = set()
    for pos in range(kk):
        if pos + 1 < n and not (lo[order[pos]] > suf[pos + 1]):
            ambiguous.add(ids[order[pos]])
            for q in range(pos + 1, n):
                if hi[order[q]] >= lo[order[pos]]:
                    ambiguous.add(ids[order[q]])
    if not ambiguous:
        return [ids[order[i]] for i in range(kk)], None
    return None, ambiguous


@renamed_parameter(old="weights", new="base_measure")
@keyword_only("k", "rng")
def noisy_top_k(
    a: np.ndarray,
    a_err: np.ndarray | float | None,
    *,
    k: int,
    rng: np.random.Generator,
    noise: str = "gumbel",
    exact_score: Callable[[int], Fraction],
    base_measure: np.ndarray | None = None,
    bits: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of the k largest ``a_r + N_r`` (largest first), N_r i.i.d. noise, sampled exactly.

    Parameters
    ----------
    a : float64 array
        Float approximations of the scores; ``-inf`` stands for a score below −DBL_MAX.
    a_err : float64 array, float or None
        Rigorous bounds on |a_float − a_exact| (``inf`` where unknown); ``None``: the relative model
        1e-15·|a| + 1e-300 of scores formed exactly up to a few roundings (enables the fast path).
    k : int
        Number of indices returned (1 <= k <= len(a)).
    rng : numpy.random.Generator (or anything with its ``integers`` method)
        The only source of randomness: uniform 64-bit words.
    noise : "gumbel", "exponential" or "laplace"
        Unit-scale noise family.
    exact_score : callable
        ``exact_score(r)``: the exact value a[r] approximates, as a ``Fraction``. Called only for
        candidates in a near-tie that float arithmetic cannot settle.
    base_measure : float64 array, optional
        Base measure w_r > 0: each candidate stands for w_r i.i.d. copies, noise F⁻¹(U^{1/w_r})
        (for Gumbel noise that is Gumbel + ln w_r). ``weights=`` is its deprecated spelling; ``k`` and
        ``rng`` given positionally still work for one release (``DeprecationWarning``).
    bits : uint64 array, optional
        The first 64 bits of every U_r, already drawn (the rest is drawn from ``rng`` as needed); by
        default all are drawn here (from a numpy Generator block by block, the same words as one draw
        of n; from anything else in one call of n words).
    """
    weights = base_measure
    n = a.shape[0]
    kk = min(k, n)
    if weights is None and n > _SMALL:
        if a_err is not None:
            a_err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)
        if bits is None and isinstance(rng, np.random.Generator):
            # first words drawn block by block inside stage 1 (the same words as one draw of n: a
            # Generator's 64-bit integers are one raw output each); only the shortlist's are kept
            short, ms = _stage1(a, a_err, kk, noise, rng=rng)
        else:   # one draw of n words (the documented contract replayed by dpselect.dask)
            short, ms = _stage1(a, a_err, kk, noise, m=_bits64(rng, n) if bits is None else
                                np.asarray(bits, dtype=np.uint64))
        return _finish_sub(a, a_err, short, ms, kk, rng, noise, exact_score)
    m = _bits64(rng, n) if bits is None else np.asarray(bits, dtype=np.uint64)
    if a_err is None:
        with np.errstate(invalid="ignore"):
            a_err = _REL * np.abs(a) + _TINY
    a_err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)
    if n <= _SMALL:
        # Few candidates: the same enclosures in scalar Python floats (numpy's per-call overhead
        # would dominate).
        ids = list(range(n))
        lo, hi = [], []
        for r, (mr, ar, er) in enumerate(zip(m.tolist(), a.tolist(), a_err.tolist())):
            nl, nh = _py_enclosure(mr, noise, None if weights is None else float(weights[r]))
            al = ar - er
            ah = (-_DBL_MAX if er != math.inf else math.inf) if ar == -math.inf else ar + er
            al = -math.inf if al != al else al
            ah = math.inf if ah != ah else ah
            lo_r, hi_r = al + nl, ah + nh
            lo_r = -math.inf if lo_r != lo_r else lo_r - 2.3e-16 * abs(lo_r)
            hi_r = math.inf if hi_r != hi_r else hi_r + 2.3e-16 * abs(hi_r)
            lo.append(lo_r)
            hi.append(hi_r)
        picked, amb = _certify(ids, lo, hi, kk)
        if picked is not None:
            return np.asarray(picked, dtype=np.int64)
        return _refine(a, np.arange(n), np.asarray(lo), np.asarray(hi), amb, kk, rng, noise, exact_score,
                       weights, m)
    return _finish(a, a_err, np.arange(n), m, kk, rng, noise, exact_score, weights)


_CHUNK = 1 << 16  # stage 1 runs over blocks of this many candidates: its temporaries stay in cache, O(block) memory


def _e_bulk(v: float) -> float:
    """The stage-1 error bound of one float noisy value v in the bulk (see _stage1)."""
    return _BULK_TAU + 2e-15 * (abs(v) + 16.0)


def _bulk_noise_into(mc: np.ndarray, a_c: np.ndarray, noise: str, out: np.ndarray) -> None:
    """out = a_c + F⁻¹(U_f), U_f = fl(mc)·2^-64, in place (one float evaluation per cell; its error in the bulk
    is bounded in _stage1's docstring)."""
    np.multiply(mc, _INV64, out=out)       # fl(m) (round to nearest), then an exact power-of-two scaling
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if noise == "gumbel":             # a − ln(−ln U)
            np.log(out, out=out)
            np.negative(out, out=out)
            np.log(out, out=out)
            np.subtract(a_c, out, out=out)
        elif noise == "exponential":      # a − log1p(−U)
            np.negative(out, out=out)
            np.log1p(out, out=out)
            np.subtract(a_c, out, out=out)
        else:                             # a + ln 2U below 1/2, a − ln 2(1 − U) above
            out *= 2.0                    # 2U_f (exact)
            t = np.subtract(2.0, out)     # 2(1 − U_f): exact above 1/2 (Sterbenz), > 1 > 2U_f below it
            np.minimum(out, t, out=out)   # the argument of the log on either side, as in the two formulas
            np.log(out, out=out)          # ln(min) <= 0: negated above 1/2, where 1 − 2U_f (exact) is < 0
            np.subtract(1.0, t, out=t)
            np.copysign(out, t, out=out)
            out += a_c


def _stage1(a: np.ndarray, a_err: np.ndarray | None, kk: int, noise: str, m: np.ndarray | None = None,
            rng=None, drop: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stage 1: the candidates that can be among the kk largest ``a_r + F⁻¹(U_r)``, with their first words:
    ``(short, m[short])``, ``short`` ascending. One float noise evaluation per candidate, in blocks of _CHUNK
    (``m`` given, or drawn block by block from ``rng``: the same words, in the same order, as one draw of n).

    **Bulk** (U in [2^-20, 1 − 2^-20)): the float noise at U_f = fl(m)·2^-64 is within _BULK_TAU + 1e-15·|N|
    of the exact noise anywhere in the cell, for the three families: the conversion moves U by 2^-53
    relative, which moves −ln U (Gumbel), −ln(1 − U) (exponential; 1 − U_f is exact above 1/2) and
    ln 2U / −ln 2(1 − U) (Laplace) by at most 2^-53/min(U, 1 − U) <= 2^-33, and the cell (width 2^-64) by
    at most 2^-44. There |N| <= 14, so x = fl(a + g) is within e(x) = _BULK_TAU + 2e-15·(|x| + 16) of the
    exact a + N (|a| <= |x| + 15; the 1e-15·|a| of the score and 2^-53·|x| of the sum included); with
    per-candidate score errors ``a_err``, within a_err + e(x).

    **Tails** (the other ~n/2^19 cells, where the conversion of U or the cell width is not small against
    the noise's slope): the rigorous stage-2 enclosure at both ends of the cell (:func:`_float_enclosure`,
    error bound stated there: for the upper Gumbel tail −ln U = −log1p(−j·2^-64) with j = 2^64 − m exact).

    lk, the kk-th largest of all lower bounds (x − e(x) or a_err-widened in the bulk, the enclosures' lo in
    the tails), is a lower bound of the kk-th largest exact value, so every candidate whose upper bound is
    below lk − 2e(|lk| + 1) (the 2e covers the rounding of these bound computations) cannot be among the
    kk largest. ``drop`` (sorted ids): candidates left out altogether (already picked). During the pass lk
    is taken over the bulk seen so far (a lower bound of the final one), so
    the kept set stays small and contains the final one. Only scores with fewer than kk finite lower bounds
    (−inf / unknown scores) keep everything, and non-finite x is always kept with per-candidate errors.
    """
    n = a.shape[0]
    draw = m is None
    if kk >= n:
        mm = _bits64(rng, n) if draw else np.asarray(m, dtype=np.uint64)
        ids = np.arange(n) if drop is None else np.setdiff1d(np.arange(n), drop)
        return ids, mm[ids]
    C = min(_CHUNK, n)
    x = np.empty(C)
    d = np.empty(C) if a_err is not None else None
    hb = np.empty(C) if a_err is not None else None
    ub = np.empty(C, dtype=np.uint64)
    tb = np.empty(C, dtype=bool)
    width = np.uint64(_BULK_HI - _BULK_LO)   # m − _BULK_LO (mod 2^64) below it: the bulk
    kb = np.empty(C, dtype=bool)
    k_idx: list[np.ndarray] = []     # bulk candidates kept so far (global ids), their words and bounds
    k_m: list[np.ndarray] = []
    k_lo: list[np.ndarray] = []
    k_hi: list[np.ndarray] = []      # upper bounds (x itself on the relative path: one threshold on x)
    t_idx: list[np.ndarray] = []
    t_m: list[np.ndarray] = []
    nkept = 0
    cap = 4 * kk + 256
    thr = -math.inf                  # keep a bulk candidate unless its upper bound (or x) < thr
    for s in range(0, n, C):
        e = min(s + C, n)
        L = e - s
        mc = _bits64(rng, L) if m is None else m[s:e]
        xc = x[:L]
        a_c = a[s:e]
        _bulk_noise_into(mc, a_c, noise, xc)
        np.subtract(mc, _BULK_LO, out=ub[:L])
        tail = np.greater_equal(ub[:L], width, out=tb[:L])
        ti = np.flatnonzero(tail) if tail.any() else None
        with np.errstate(invalid="ignore", over="ignore"):
            if d is None:
                keep = np.greater_equal(xc, thr, out=kb[:L])
                sel = np.flatnonzero(keep)
                if ti is not None and sel.size:
                    sel = sel[~tail[sel]]
                xs = xc[sel]
                lo_s = xs - (_BULK_TAU + 2e-15 * (np.abs(xs) + 16.0))
                hi_s = xs
            else:
                assert a_err is not None and hb is not None   # d, a_err and hb are given together
                dc = d[:L]
                np.abs(xc, out=dc)            # d = a_err + e(x): upper x + d, lower x − d
                dc += 16.0
                dc *= 2e-15
                dc += _BULK_TAU
                dc += a_err[s:e]
                dc *= 1.0 + 1e-15             # the roundings of this sum (<= 4·2^-53 relative): d >= the exact one
                hc = np.add(xc, dc, out=hb[:L])
                keep = np.logical_not(np.less(hc, thr), out=kb[:L])   # NaN upper bounds kept
                keep |= ~np.isfinite(xc)      # −inf scores ("below −DBL_MAX"): decided by the full enclosures
                sel = np.flatnonzero(keep)
                if ti is not None and sel.size:
                    sel = sel[~tail[sel]]
                hi_s = hc[sel]
                lo_s = xc[sel] - dc[sel]
                lo_s[np.isnan(lo_s)] = -np.inf
        if drop is not None and drop.size:
            dc_ = drop[(drop >= s) & (drop < e)] - s
            if dc_.size:
                if ti is not None:
                    ti = ti[~np.isin(ti, dc_)]
                if sel.size:
                    ok = ~np.isin(sel, dc_)
                    sel, lo_s, hi_s = sel[ok], lo_s[ok], hi_s[ok]
        if ti is not None:
            t_idx.append(ti + s)
            t_m.append(mc[ti])
        if sel.size:
            k_idx.append(sel + s)
            k_m.append(mc[sel])
            k_lo.append(lo_s)
            k_hi.append(hi_s)
            nkept += sel.size
        if nkept > cap:
            lows = np.concatenate(k_lo)
            if lows.size >= kk:
                lk = float(np.partition(lows, lows.size - kk)[lows.size - kk])
                t_new = lk - 2.0 * _e_bulk(abs(lk) + 1.0)
                if math.isfinite(t_new) and t_new > thr:
                    thr = t_new
                    k_idx, k_m, k_lo, k_hi = _compact(k_idx, k_m, k_lo, k_hi, thr, d is None)
                    nkept = k_idx[0].size if k_idx else 0
            if nkept > cap // 2:
                cap *= 2   # many kept above the threshold (-inf or equal scores): stop re-partitioning each block
    # tails: rigorous enclosures; then the final threshold over bulk and tail lower bounds
    if t_idx:
        ti = np.concatenate(t_idx)
        tm = np.concatenate(t_m)
        a_t = a[ti]
        e_t = _REL * np.abs(a_t) + _TINY if a_err is None else a_err[ti]
        n_lo, n_hi = _float_enclosure(tm, noise)
        with np.errstate(invalid="ignore", over="ignore"):
            s_lo, s_hi = _score_bounds(a_t, e_t)
            t_lo, t_hi = _round_out(s_lo + n_lo, s_hi + n_hi)
    else:
        ti = np.zeros(0, dtype=np.int64)
        tm = np.zeros(0, dtype=np.uint64)
        t_lo = t_hi = np.zeros(0)
    b_idx = np.concatenate(k_idx) if k_idx else np.zeros(0, dtype=np.int64)
    b_m = np.concatenate(k_m) if k_m else np.zeros(0, dtype=np.uint64)
    b_lo = np.concatenate(k_lo) if k_lo else np.zeros(0)
    b_hi = np.concatenate(k_hi) if k_hi else np.zeros(0)
    lows = np.concatenate((b_lo, t_lo))
    if lows.size >= kk:
        lk = float(np.partition(lows, lows.size - kk)[lows.size - kk])
        t_new = lk - 2.0 * _e_bulk(abs(lk) + 1.0)
        if math.isfinite(t_new) and t_new > thr:
            thr = t_new
    with np.errstate(invalid="ignore"):
        if d is None:
            kb_ = b_hi >= thr
        else:
            kb_ = ~(b_hi < thr) | ~np.isfinite(b_hi)
        kt_ = ~(t_hi < thr)
    idx = np.concatenate((b_idx[kb_], ti[kt_]))
    mm = np.concatenate((b_m[kb_], tm[kt_]))
    order = np.argsort(idx, kind="stable")
    return idx[order], mm[order]


def _compact(k_idx, k_m, k_lo, k_hi, thr, relative):
    """Drop the kept bulk candidates whose upper bound is below the new threshold."""
    idx, mm, lo, hi = (np.concatenate(v) for v in (k_idx, k_m, k_lo, k_hi))
    with np.errstate(invalid="ignore"):
        keep = hi >= thr if relative else ~(hi < thr) | ~np.isfinite(hi)
    return [idx[keep]], [mm[keep]], [lo[keep]], [hi[keep]]


def _bulk_shortlist(a: np.ndarray, m: np.ndarray, kk: int, noise: str, a_err=None) -> np.ndarray:
    """Stage 1 on given first words: the ids :func:`_stage1` keeps (never gives up on the whole array)."""
    return _stage1(a, a_err, kk, noise, m=m)[0]


def _finish_sub(a, a_err, short, ms, kk, rng, noise, exact_score):
    """_finish on the shortlist as its own problem (local ids 0..len−1, words ``ms``), ids mapped back.

    The map is increasing, so every order the later stages use (ties in _certify, the refinement's bit
    draws by id) is the one on the global ids: the same picks as on the whole array."""
    a_s = a[short]
    e_s = None if a_err is None else np.ascontiguousarray(a_err[short])

    def ex(i: int) -> Fraction:
        return exact_score(int(short[i]))

    loc = _finish(a_s, e_s, np.arange(short.size), ms, kk, rng, noise, ex, None)
    return short[loc]


def _finish(a, a_err, short, m, kk, rng, noise, exact_score, weights):
    """Stage 2 on a shortlist: float enclosures at both ends of each 64-bit cell, certify the top k
    in order, else refine exactly (stage 3)."""
    short, lo, hi = _enclosed_shortlist(a, a_err, short, m, kk, noise, weights)
    ids = short.tolist()
    picked, amb = _certify(ids, lo.tolist(), hi.tolist(), kk)
    if picked is not None:
        return np.asarray(picked, dtype=np.int64)
    return _refine(a, short, lo, hi, amb, kk, rng, noise, exact_score, weights, m)


def _enclosed_shortlist(a, a_err, short, m, kk, noise, weights):
    """Rigorous float enclosures [lo, hi] of the noisy scores of ``short`` (both ends of each 64-bit cell of
    the first words ``m``), and the candidates left once every one whose hi is below the kk-th largest lo
    is dropped: ``(short, lo, hi)``."""
    a_s = a[short]
    e_s = _REL * np.abs(a_s) + _TINY if a_err is None else np.asarray(a_err)[short]
    n_lo, n_hi = _float_enclosure(m[short], noise, None if weights is None else weights[short])
    with np.errstate(invalid="ignore", over="ignore"):
        a_lo, a_hi = _score_bounds(a_s, e_s)
        lo, hi = _round_out(a_lo + n_lo, a_hi + n_hi)
    if lo.size > kk:
        lk = np.partition(lo, lo.size - kk)[lo.size - kk]
        if lk > -np.inf:
            keep = hi >= lk
            short, lo, hi = short[keep], lo[keep], hi[keep]
    return short, lo, hi


def _refine(a, short, s_lo, s_hi, amb, kk, rng, noise, exact_score, weights, m):
    """Stage 3: exact refinement of the ambiguous candidates only. Float enclosures of the others stay
    valid (all enclosures are of the same absolute quantity a_r + N_r), so they mix with decimals."""
    ids = short.tolist()
    ref = Fraction(exact_score(min(amb)))
    R = _Refiner(rng, noise, exact_score, weights, m, ref)
    # the float enclosures of the others, shifted by the same exact reference (rounded outwards)
    Dr = _Dec(60 + _digits(ref))
    ref_lo, ref_hi = Dr.frac(ref)
    dlo = {r: Dr.down(Dr.ctx.subtract(decimal.Decimal(float(v)), ref_hi)) for r, v in zip(ids, s_lo)}
    dhi = {r: Dr.up(Dr.ctx.subtract(decimal.Decimal(float(v)), ref_lo)) for r, v in zip(ids, s_hi)}
    refined = set()   # candidates given an exact enclosure (ints)
    for _ in range(100_000):
        again = sorted(r for r in amb if r in refined)
        R.extend(again)  # 64 more bits for those the exact scores alone did not settle
        for r in amb:
            dlo[r], dhi[r] = R.interval(r)
            refined.add(r)
        ids = list(dlo)
        picked, amb = _certify(ids, [dlo[r] for r in ids], [dhi[r] for r in ids], kk)
        if picked is not None:
            return np.asarray(picked, dtype=np.int64)
        srt = sorted((dlo[r] for r in ids), reverse=True)
        lk = srt[kk - 1]
        for r in ids:
            if dhi[r] < lk and r not in amb:
                del dlo[r], dhi[r]
    raise RuntimeError("exact noisy-max refinement did not converge")  # probability 2^-(64·100000)


def _digits(f: Fraction) -> int:
    """An upper bound on the number of decimal digits before the point of |f| (0 for |f| < 1)."""
    return max(0, (abs(f.numerator).bit_length() - f.denominator.bit_length() + 1) * 30103 // 100000 + 2)


def _score_bounds(a, a_err):
    """[a − err, a + err] rounded outwards; a = −inf with a finite err means "below −DBL_MAX"; err = inf
    means unknown.

    Each end is stepped one ulp outwards: a ± err rounds to nearest, and when err >> |a| the later sum with
    the noise can cancel to near 0, where :func:`_round_out`'s relative widening no longer covers that
    first rounding (up to half an ulp of a ± err)."""
    lo = np.nextafter(a - a_err, -np.inf)
    hi = np.where(np.isneginf(a) & np.isfinite(a_err), -_DBL_MAX, np.nextafter(a + a_err, np.inf))
    return np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi)


def _round_out(lo, hi):
    """Widen by one ulp for the rounding of the final float addition; NaN (inf − inf) -> unbounded."""
    with np.errstate(invalid="ignore", over="ignore"):
        lo = lo - 2.3e-16 * np.abs(lo)
        hi = hi + 2.3e-16 * np.abs(hi)
    lo = np.where(np.isnan(lo), -np.inf, lo)
    hi = np.where(np.isnan(hi), np.inf, hi)
    return lo, hi


def noisy_top_k_batch(
    a: np.ndarray,
    a_err: np.ndarray | float | None,
    k: int,
    size: int,
    rng: np.random.Generator,
    *,
    noise: str = "gumbel",
    exact_score: Callable[[int], Fraction],
    weights: np.ndarray | None = None,
    peel: bool = False,
) -> np.ndarray:
    """``size`` independent draws of :func:`noisy_top_k` (shape (size, k)), vectorised over draws.

    ``peel=True``: k rounds with fresh noise on the remaining candidates (report-noisy-max top-k with
    exponential or Laplace noise) instead of the k largest of one draw. Draws that float enclosures
    cannot certify are finished one by one with the exact refinement.
    """
    n = a.shape[0]
    kk = min(k, n)
    if a_err is None:
        with np.errstate(invalid="ignore"):
            a_err = _REL * np.abs(a) + _TINY
    a_err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        a_lo, a_hi = _score_bounds(a, a_err)
    out = np.empty((size, kk), dtype=np.int64)
    rows = np.arange(size)
    rounds = kk if peel else 1
    taken = np.zeros((size, n if peel else 0), dtype=bool)   # used only when peel
    for rnd in range(rounds):
        m = _bits64(rng, size * n).reshape(size, n)
        n_lo, n_hi = _float_enclosure(m, noise, weights)
        lo, hi = _round_out(a_lo + n_lo, a_hi + n_hi)
        if peel:
            lo[taken] = -np.inf
            hi[taken] = -np.inf
        want = 1 if peel else kk
        order = np.argsort(-lo, axis=1, kind="stable")
        lo_s = np.take_along_axis(lo, order, axis=1)
        hi_s = np.take_along_axis(hi, order, axis=1)
        # suffix maxima of hi after each position
        suf = np.maximum.accumulate(hi_s[:, ::-1], axis=1)[:, ::-1]
        if n > 1:
            ok = np.all(lo_s[:, :want] > np.concatenate([suf[:, 1:], np.full((size, 1), -np.inf)], axis=1)[:, :want],
                        axis=1)
        else:
            ok = np.ones(size, dtype=bool)
        if peel:
            ok &= lo_s[:, 0] > -np.inf  # a removed candidate never wins
            out[ok, rnd] = order[ok, 0]
        else:
            out[ok] = order[ok, :want]
        for r in np.flatnonzero(~ok):
            live = np.flatnonzero(~taken[r]) if peel else np.arange(n)
            ids = live.tolist()
            picked, amb = _certify(ids, lo[r, live].tolist(), hi[r, live].tolist(), want)
            if picked is None:
                picked = _refine(a, live, lo[r, live], hi[r, live], amb, want, rng, noise, exact_score, weights,
                                 m[r]).tolist()
            if peel:
                out[r, rnd] = picked[0]
            else:
                out[r] = picked
        if peel:
            taken[rows, out[:, rnd]] = True
    return out


# ---------------------------------------------------------------------------------------------
# top-k with fresh noise per pick (exponential and Laplace noise), lazily
# ---------------------------------------------------------------------------------------------
_LN2 = math.log(2.0)
_PEEL_EXPECTED = 32.0   # expected number of tail candidates revealed per pick (sets the water level)
_PEEL_BLOCK = 1 << 12  # the levels' per-block counts locate a revealed position by scanning one block
#: True: a peeled pick whose head and revealed candidates do not clear the walls scans every candidate (the
#: previous fallback; same law, tests compare the two). False: :func:`_peel_lowered` first.
_PEEL_FULL_FALLBACK = False
#: Work counters of noisy_top_k_peeled's fallback (tests and benchmarks read them): picks finished by the
#: refined fallback, by the full scan, and the candidates each examined in total.
_PEEL_STATS = {"refined": 0, "full": 0, "examined": 0}
#: The lowered levels give up (for the scan of all n) beyond max(this, n/16) expected marks.
_PEEL_MARK_MIN = 256


def _geometric_exact(m: int, j: int, limit: int, rng) -> int:
    """G = floor(ln U / ln(1 − 2^-j)) (a Geometric(2^-j) number of failures), capped at ``limit``, for the
    uniform U whose first 64 bits are ``m``; more bits are drawn while decimal enclosures cannot decide."""
    nb = 64
    while True:
        D = _Dec(nb + 60)
        c = D.ctx
        scale = decimal.Decimal(1 << nb)
        u_lo = c.divide(decimal.Decimal(m), scale)
        u_hi = c.divide(decimal.Decimal(m + 1), scale)
        one_minus_p = c.subtract(decimal.Decimal(1), c.divide(decimal.Decimal(1), decimal.Decimal(1 << j)))  # exact
        lq = D.ln(one_minus_p, one_minus_p)   # ln(1 − p) < 0
        # q(U) = ln U / ln(1 − p) is decreasing in U: [q(u_hi), q(u_lo)] encloses q(U)
        if u_lo.is_zero():
            q_hi = D.inf
        else:
            lu = D.ln(u_lo, u_lo)
            q_hi = D.up(c.divide(lu[0], lq[1]))
        lu = D.ln(u_hi, u_hi)
        q_lo = D.down(c.divide(lu[1], lq[0]))
        if q_lo >= limit:
            return limit
        g_lo = int(q_lo.to_integral_value(rounding=decimal.ROUND_FLOOR))
        if q_hi != D.inf and int(q_hi.to_integral_value(rounding=decimal.ROUND_FLOOR)) == g_lo:
            return g_lo
        m = (m << 64) | int(_bits64(rng, 1)[0])
        nb += 64


def _geometric_gaps(js: np.ndarray, limits: np.ndarray, rng) -> np.ndarray:
    """One Geometric(2^-js[i]) gap per entry, capped at limits[i], exactly (float enclosures decide
    almost every draw; the rest go to :func:`_geometric_exact` with more bits)."""
    m = _bits64(rng, js.size)
    lp = np.log1p(-np.ldexp(1.0, -js.astype(np.int64)))               # ln(1 − p) < 0, a few ulp
    low = m < _HALF_U64
    with np.errstate(over="ignore"):
        jm = (~m) + np.uint64(1)
    lu_lo = _log_uniform_point(np.where(low, m, jm), low)              # ln of the cell's left end
    lu_hi = _log_uniform_point(np.where(low, m + np.uint64(1), jm - np.uint64(1)), low)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q_min = (lu_hi / lp) * (1.0 - 1e-13) - 1e-300                  # q is decreasing in U
        q_max = (lu_lo / lp) * (1.0 + 1e-13) + 1e-300
    lim = limits.astype(np.float64)
    out = np.where(q_min >= lim, limits, -1)
    ok = (out < 0) & np.isfinite(q_max) & (np.floor(q_min) == np.floor(q_max))
    out = np.where(ok, np.floor(np.where(ok, q_min, 0.0)).astype(np.int64), out)
    for i in np.flatnonzero(out < 0).tolist():
        out[i] = _geometric_exact(int(m[i]), int(js[i]), int(limits[i]), rng)
    return np.minimum(out, limits)


def _noise_point_hi(j: int, noise: str) -> float:
    """An upper bound of F⁻¹(1 − 2^-j) (exponential: j ln 2, Laplace: (j − 1) ln 2)."""
    v = (j if noise == "exponential" else j - 1) * _LN2
    return v * (1.0 + 1e-15) + 1e-300


def noisy_top_k_peeled(a: np.ndarray, a_err: np.ndarray | float | None, k: int, rng: np.random.Generator, *, noise: str,
                       exact_score: Callable[[int], Fraction]) -> np.ndarray:
    """k sequential picks, each the exact argmax of ``a_r + N_r`` over the candidates not yet picked with
    **fresh** i.i.d. noise (report-noisy-max top-k with exponential or Laplace noise, ε/k each), without
    k full passes.

    Every candidate r gets a *level* j_r >= 0 from its score's upper bound A_r: j_r = 0 for the
    candidates at or above a water level W (logsumexp of the scores − ln 32; at most ~32 of them, the
    *head*), else the least j with A_r + F⁻¹(1 − 2^-j) >= W (capped at 63). In every pick:

    * the head gets fresh 64-bit uniforms;
    * a tail candidate is *revealed* when its uniform's first j_r bits are all ones (probability 2^-j_r,
      independently): for each group of equal j the revealed positions are drawn exactly with
      Geometric(2^-j) gaps, and a revealed candidate's uniform is those j ones followed by fresh bits
      (its exact conditional law); about 32 candidates are revealed per pick;
    * every unrevealed tail candidate has U_r < 1 − 2^-j_r, so its value is below its *wall*
      A_r + F⁻¹(1 − 2^-j_r) <= max wall. If the best float lower bound among head and revealed
      candidates is above the max wall, the pick is the exact argmax over head and revealed (certified by
      the float enclosures, else :func:`noisy_top_k` on them with the same bits). Otherwise (rare: about
      one pick in 150 at the default level) :func:`_peel_lowered` lowers the levels of the groups whose
      wall is too high and reveals (marks) exactly the further candidates that can still beat the best
      lower bound, by rejection sampling of their conditional law, until the walls clear it; the work is
      a few dozen candidates, not n. Only if that would need more than max(256, n/16) marks are the
      unrevealed candidates' uniforms all drawn (conditioned on their first bits not all ones, at their
      current levels) and :func:`noisy_top_k` decides over all remaining candidates with those bits.

    The decisions use only the first 64 bits of each uniform, so every later step sees the exact
    conditional law: the output is exactly the law of k peeled exact picks. Candidates whose score is
    unknown (err inf) are in the head.
    """
    return _noisy_top_k_peeled(a, a_err, k, rng, noise=noise, exact_score=exact_score)


def _noisy_top_k_peeled(a: np.ndarray, a_err: np.ndarray | float | None, k: int, rng: np.random.Generator, *,
                        noise: str, exact_score: Callable[[int], Fraction], level_shift: float = 0.0) -> np.ndarray:
    """:func:`noisy_top_k_peeled`; ``level_shift`` moves the water level W (tests: the law must not change)."""
    n = a.shape[0]
    kk = min(k, n)
    extra = 0 if noise == "exponential" else 1
    # Levels, counts, head and the groups' maxima in blocks of _CHUNK (no n-sized temporaries but the int8
    # levels; the same float operations element by element as one pass, and the same pairwise sum).
    C = min(_CHUNK, n)
    if a_err is None and bool(np.isfinite(a).all()):
        err = None                      # relative model _REL·|a| + _TINY, bounded per group below
        ref = float(a.max())

        def up_of(lo: int, hi: int) -> np.ndarray:
            return a[lo:hi]
    else:
        if a_err is None:
            with np.errstate(invalid="ignore"):
                a_err = _REL * np.abs(a) + _TINY
        err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)

        def up_of(lo: int, hi: int) -> np.ndarray:
            with np.errstate(invalid="ignore", over="ignore"):
                return np.nextafter(_score_bounds(a[lo:hi], err[lo:hi])[1], np.inf)
        ref = -math.inf
        for s0 in range(0, n, C):
            u_c = up_of(s0, s0 + C)
            u_c = u_c[np.isfinite(u_c)]
            if u_c.size:
                ref = max(ref, float(u_c.max()))
        if ref == -math.inf:
            return _peel_passes(a, err, kk, rng, noise, exact_score)

    def exp_sum(lo: int, hi: int) -> float:
        # numpy's pairwise summation tree, with leaves of at most C elements summed by numpy itself
        if hi - lo <= C:
            with np.errstate(under="ignore", over="ignore", invalid="ignore"):
                u_c = up_of(lo, hi)
                if err is not None:
                    u_c = np.where(np.isfinite(u_c), u_c, -np.inf)
                return np.exp(u_c - ref).sum()
        n2 = (hi - lo) // 2
        n2 -= n2 % 8
        return exp_sum(lo, lo + n2) + exp_sum(lo + n2, hi)

    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        lse = ref + math.log(float(exp_sum(0, n)))
        W = lse - math.log(_PEEL_EXPECTED) + level_shift + extra * _LN2
    lev = np.empty(n, dtype=np.int8)
    gmax = np.full(64, -np.inf)          # per level: the largest a (or upper bound) and the largest |a|
    gmag = np.zeros(64)
    nsub = -(-n // _PEEL_BLOCK)
    block_counts = np.zeros((nsub, 64), dtype=np.int64)   # candidates of each level per block of _PEEL_BLOCK
    sub_of = (np.arange(C) // _PEEL_BLOCK) * 64
    for s0 in range(0, n, C):
        u_c = up_of(s0, s0 + C)
        L = u_c.shape[0]
        with np.errstate(invalid="ignore", over="ignore"):
            if err is None:
                x = W - u_c
                x *= 1.0 / _LN2
                np.ceil(x, out=x)
                np.clip(x, 0.0, 63.0, out=x)
                lev_c = x.astype(np.int8)
            else:
                fin = np.isfinite(u_c)
                jf = np.clip(np.ceil((W - u_c) / _LN2), 0.0, 63.0)
                lev_c = np.where(fin, jf, 0.0).astype(np.int8)          # unknown scores: head
        lev_c[lev_c <= extra] = 0                                        # 0: head
        lev[s0:s0 + L] = lev_c
        np.maximum.at(gmax, lev_c, u_c)
        if err is None:
            np.maximum.at(gmag, lev_c, np.abs(u_c))
        b0 = s0 // _PEEL_BLOCK
        nb_c = -(-L // _PEEL_BLOCK)
        block_counts[b0:b0 + nb_c] += np.bincount(sub_of[:L] + lev_c, minlength=nb_c * 64)[:nb_c * 64].reshape(nb_c, 64)
    counts = block_counts.sum(axis=0)
    h = int(counts[0])
    head = np.flatnonzero(lev == 0)
    if h == n:
        return _peel_passes(a, _err_array(a, err), kk, rng, noise, exact_score)
    present = np.flatnonzero(counts[1:]) + 1
    sizes = counts[present].astype(np.int64)
    js = present.astype(np.int64)
    if err is None:   # max of a + _REL·|a| + _TINY over a group <= max a + _REL·max |a| + _TINY
        walls = gmax[js] + (_REL * gmag[js] + _TINY) * (1.0 + 1e-15)
    else:
        walls = gmax[js]
    wall_hi = max(float(w) + _noise_point_hi(int(j), noise) for w, j in zip(walls, js))
    wall_hi += 1e-15 * abs(wall_hi) + 1e-300
    if not math.isfinite(wall_hi):
        return _peel_passes(a, _err_array(a, err), kk, rng, noise, exact_score)
    nb = js.size
    err_full = err

    # -- reveal, for all picks at once: head bits and the revealed tail candidates with their bits
    m_head = _bits64(rng, kk * h).reshape(kk, h)
    pick_of, bucket_of, pos = [], [], []
    cur_pick = np.repeat(np.arange(kk), nb)
    cur_b = np.tile(np.arange(nb), kk)
    cur_pos = np.full(cur_pick.size, -1, dtype=np.int64)
    R = 1
    while cur_pick.size:
        # R gaps at once per (pick, group) still running: positions of the next R revealed candidates
        rb = np.repeat(cur_b, R)
        gaps = _geometric_gaps(js[rb], np.repeat(sizes[cur_b], R), rng).reshape(-1, R)
        cum = cur_pos[:, None] + np.cumsum(gaps + 1, axis=1)
        hit = cum < sizes[cur_b][:, None]
        pick_of.append(np.broadcast_to(cur_pick[:, None], hit.shape)[hit])
        bucket_of.append(np.broadcast_to(cur_b[:, None], hit.shape)[hit])
        pos.append(cum[hit])
        more = hit[:, -1]
        cur_pick, cur_b, cur_pos = cur_pick[more], cur_b[more], cum[more, -1]
        R = 16
    x_pick = np.concatenate(pick_of) if pick_of else np.zeros(0, dtype=np.int64)
    x_b = np.concatenate(bucket_of) if bucket_of else np.zeros(0, dtype=np.int64)
    x_id = (_level_members(lev, block_counts, js[x_b], np.concatenate(pos)) if pos
            else np.zeros(0, dtype=np.int64))
    xj = js[x_b].astype(np.uint64)
    top = ((np.uint64(1) << xj) - np.uint64(1)) << (np.uint64(64) - xj)
    x_m = (_bits64(rng, x_id.size) >> xj) | top

    # -- float enclosures of every (pick, candidate) entry
    e_pick = np.concatenate((np.repeat(np.arange(kk), h), x_pick))
    e_id = np.concatenate((np.tile(head, kk), x_id))
    e_m = np.concatenate((m_head.ravel(), x_m))
    n_lo, n_hi = _float_enclosure(e_m, noise)
    a_e = a[e_id]
    if err_full is None:
        with np.errstate(invalid="ignore"):
            e_err = _REL * np.abs(a_e) + _TINY
    else:
        e_err = err_full[e_id]
    with np.errstate(invalid="ignore", over="ignore"):
        a_lo, a_hi = _score_bounds(a_e, e_err)
        lo, hi = _round_out(a_lo + n_lo, a_hi + n_hi)
    srt = np.lexsort((-lo, e_pick))                  # by pick, then lower bound descending
    bounds = np.searchsorted(e_pick[srt], np.arange(kk + 1))
    ids_l, lo_l, hi_l, m_l = e_id[srt].tolist(), lo[srt].tolist(), hi[srt].tolist(), e_m[srt]
    by_hi = np.lexsort((-hi[srt], e_pick[srt])).tolist()   # positions (in srt order) by pick, hi descending

    picks: list[int] = []
    removed: set[int] = set()
    for p in range(kk):
        s0, s1 = int(bounds[p]), int(bounds[p + 1])
        # the best alive lower bound, and the largest upper bound of the other alive entries (both lists are
        # sorted, so this looks at a few entries unless many of them were picked already)
        best = next((q for q in range(s0, s1) if ids_l[q] not in removed), -1)
        best_lo = lo_l[best] if best >= 0 else -math.inf
        second_hi = next((hi_l[q] for q in by_hi[s0:s1] if q != best and ids_l[q] not in removed), -math.inf)
        if best >= 0 and best_lo > second_hi and best_lo > wall_hi:
            win = ids_l[best]
        else:
            alive = [q for q in range(s0, s1) if ids_l[q] not in removed]
            if best >= 0 and best_lo > wall_hi:
                sub = np.asarray([ids_l[q] for q in alive], dtype=np.int64)
                bits = m_l[np.asarray(alive, dtype=np.int64)]

                def ex(i: int, sub: np.ndarray = sub) -> Fraction:
                    return exact_score(int(sub[i]))

                j = int(noisy_top_k(a[sub], None if err_full is None else err_full[sub], k=1, rng=rng, noise=noise,
                                    exact_score=ex, bits=bits)[0])
                win = int(sub[j])
            else:
                out = None
                if not _PEEL_FULL_FALLBACK:
                    out = _peel_lowered(a, err_full, [ids_l[q] for q in alive], m_l[np.asarray(alive, dtype=np.int64)],
                                        [lo_l[q] for q in alive], walls, js, sizes, lev, block_counts, rng, noise,
                                        removed, max(_PEEL_MARK_MIN, n // 16), exact_score)
                if isinstance(out, int):
                    win = out
                else:
                    # every remaining candidate, in place (no n-sized copies): the picked ones are left out of
                    # stage 1, the shortlist is finished with increasing ids (the same picks as on the subarray)
                    _PEEL_STATS["full"] += 1
                    _PEEL_STATS["examined"] += n
                    known, jc = out if out is not None else ({ids_l[q]: int(m_l[q]) for q in alive}, js)
                    bits = _fallback_bits(n, known, lev, js, rng, jc)
                    drop = np.asarray(sorted(removed), dtype=np.int64)
                    short, ms = _stage1(a, err_full, 1, noise, m=bits, drop=drop)
                    win = int(_finish_sub(a, err_full, short, ms, 1, rng, noise, exact_score)[0])
        picks.append(win)
        removed.add(win)
    return np.asarray(picks, dtype=np.int64)


def _peel_lowered(a, err, ids, words, lo, walls, js, sizes, lev, block_counts, rng, noise, removed, cap, exact_score):
    """One peeled pick whose head and revealed candidates (``ids``, first ``words``, float lower bounds
    ``lo``) do not clear the walls, finished by lowering the groups' levels instead of scanning all n.

    An unrevealed candidate of a group of level j has a uniform U conditioned on its first j bits not all
    ones. Let T be the best lower bound drawn so far (a lower bound of the winner's value). For each group
    whose wall w + F⁻¹(1 − 2^-j) is not below T, pick a lower level j' < j (the largest whose wall is
    below T, at most 3 levels down per round; j' = 0: every member) and *mark* the members whose first j'
    bits are all ones, by exact rejection sampling of their conditional law: Bernoulli(2^-j') marks over
    the group's positions (Geometric gaps; positions of candidates drawn already or picked are ignored),
    each marked candidate a word with its first j' bits ones and fresh bits after them, and if its first j
    bits are then all ones it is drawn again from scratch (fresh words until the first j bits are not all
    ones) and stays marked only if its first j' bits are ones. So each unrevealed candidate is marked with
    exactly its conditional probability and gets a word of exactly its conditional law, independently, and
    an unmarked one is left with U conditioned on its first j' bits not all ones: the same state at level
    j'. Repeat with the new T until every wall is below T; then every candidate not drawn is below T,
    below the winner, and never needed (each pick has fresh noise): the pick over the drawn candidates
    (:func:`noisy_top_k` with their words) is the pick over all. The work is the number drawn, about the
    number of candidates whose noisy value can exceed T, not n.

    Returns the pick, or ``(known, jc)`` (the words drawn so far by id, the current level per group) when
    more than ``cap`` marks would be needed: the caller then draws every other tail word (at its current
    level) and scans all candidates, which is the same law.
    """
    ids = list(ids)
    words = [np.asarray(words, dtype=np.uint64)]
    T = float(np.max(lo)) if len(lo) else -math.inf
    skip = set(ids) | removed
    jc = js.astype(np.int64).copy()
    total = 0
    while True:
        jn = jc.copy()
        for g in range(jc.size):
            if jc[g] == 0:
                continue

            def wall(jj: int, w: float = float(walls[g])) -> float:
                v = w + _noise_point_hi(jj, noise)
                return v + 1e-15 * abs(v) + 1e-300

            if wall(int(jc[g])) < T:
                continue
            jj = int(jc[g]) - 1
            while jj >= 1 and not wall(jj) < T:
                jj -= 1
            jn[g] = max(jj, int(jc[g]) - 3, 0)
        todo = np.flatnonzero(jn < jc)
        if todo.size == 0:
            break
        expected = float(np.sum(sizes[todo] * np.ldexp(1.0, -jn[todo])))
        total += expected
        if total > cap:
            return {i: int(w) for i, w in zip(ids, np.concatenate(words).tolist())}, jc
        # marked positions per group: all of them where j' = 0, else Bernoulli(2^-j') (Geometric gaps)
        g_of, pos_of = [], []
        for g in todo[jn[todo] == 0].tolist():
            g_of.append(np.full(int(sizes[g]), g, dtype=np.int64))
            pos_of.append(np.arange(int(sizes[g]), dtype=np.int64))
        cur_g = todo[jn[todo] > 0]
        cur_pos = np.full(cur_g.size, -1, dtype=np.int64)
        R = int(min(4096, max(8, math.ceil(expected / max(1, cur_g.size)) + 8)))
        while cur_g.size:
            gaps = _geometric_gaps(np.repeat(jn[cur_g], R), np.repeat(sizes[cur_g], R), rng).reshape(-1, R)
            cum = cur_pos[:, None] + np.cumsum(gaps + 1, axis=1)
            hit = cum < sizes[cur_g][:, None]
            g_of.append(np.broadcast_to(cur_g[:, None], hit.shape)[hit])
            pos_of.append(cum[hit])
            more = hit[:, -1]
            cur_g, cur_pos = cur_g[more], cum[more, -1]
            R = 64
        mg = np.concatenate(g_of) if g_of else np.zeros(0, dtype=np.int64)
        new_ids = (_level_members(lev, block_counts, js[mg], np.concatenate(pos_of)) if mg.size
                   else np.zeros(0, dtype=np.int64))
        keep = np.asarray([i not in skip for i in new_ids.tolist()], dtype=bool)
        new_ids, mg = new_ids[keep], mg[keep]
        j0 = jc[mg].astype(np.uint64)
        j1 = jn[mg].astype(np.uint64)
        top = ((np.uint64(1) << j0) - np.uint64(1)) << (np.uint64(64) - j0)   # (j = 0: no bit; not reached)
        top1 = np.where(j1 > 0, ((np.uint64(1) << j1) - np.uint64(1)) << (np.uint64(64) - np.maximum(j1, 1)),
                        np.uint64(0))
        w_new = (_bits64(rng, new_ids.size) >> j1) | top1
        bad = (w_new & top) == top
        while bad.any():             # rejected: drawn again from scratch
            w_new[bad] = _bits64(rng, int(bad.sum()))
            bad = (w_new & top) == top
        ok = (w_new & top1) == top1
        new_ids, w_new = new_ids[ok], w_new[ok]
        jc = jn
        if new_ids.size:
            n_lo, _ = _float_enclosure(w_new, noise)
            a_n = a[new_ids]
            e_n = _REL * np.abs(a_n) + _TINY if err is None else err[new_ids]
            with np.errstate(invalid="ignore", over="ignore"):
                s_lo, _ = _score_bounds(a_n, e_n)
                l_n, _ = _round_out(s_lo + n_lo, s_lo + n_lo)
            T = max(T, float(np.max(l_n)))
            ids += new_ids.tolist()
            words.append(w_new)
            skip.update(new_ids.tolist())
    _PEEL_STATS["refined"] += 1
    _PEEL_STATS["examined"] += len(ids)
    sub = np.asarray(ids, dtype=np.int64)
    bits = np.concatenate(words)

    def ex(i: int) -> Fraction:
        return exact_score(int(sub[i]))

    j = int(noisy_top_k(a[sub], None if err is None else err[sub], k=1, rng=rng, noise=noise, exact_score=ex, bits=bits)[0])
    return int(sub[j])


def _level_members(lev: np.ndarray, block_counts: np.ndarray, qj: np.ndarray, qpos: np.ndarray) -> np.ndarray:
    """The id of the qpos[i]-th candidate (0-based, in id order) of level qj[i], from per-block level counts."""
    out = np.empty(qj.size, dtype=np.int64)
    for j in np.unique(qj).tolist():
        sel = np.flatnonzero(qj == j)
        cum = np.cumsum(block_counts[:, j])
        blk = np.searchsorted(cum, qpos[sel], side="right")
        before = np.where(blk > 0, cum[np.maximum(blk - 1, 0)], 0)
        for b in np.unique(blk).tolist():
            here = sel[blk == b]
            lo = b * _PEEL_BLOCK
            members = np.flatnonzero(lev[lo:lo + _PEEL_BLOCK] == j) + lo
            out[here] = members[qpos[here] - before[blk == b]]
    return out


def _fallback_bits(n, known, lev, js, rng, jc=None):
    """First words of every candidate: ``known`` ones as drawn, every other tail candidate's drawn conditioned
    on its first j bits not all ones (rejection: exact), level by level (ascending j), each level's candidates
    in id order. (Words of head or picked candidates not in ``known`` are left 0: they are not used.)
    ``jc``: the level each group's unknown members are conditioned at now (default ``js``; lower after
    :func:`_peel_lowered`; 0: none left unknown)."""
    m = np.zeros(n, dtype=np.uint64)
    for jj, jnow in zip(js.tolist(), (js if jc is None else jc).tolist()):
        ids = np.flatnonzero(lev == jj)
        if jnow == 0:
            continue   # every member was marked (its word is known) or is not needed
        j = np.uint64(jnow)
        top = ((np.uint64(1) << j) - np.uint64(1)) << (np.uint64(64) - j)
        words = _bits64(rng, ids.size)
        bad = (words & top) == top
        while bad.any():
            words[bad] = _bits64(rng, int(bad.sum()))
            bad = (words & top) == top
        m[ids] = words
    if known:
        m[np.fromiter(known.keys(), dtype=np.int64, count=len(known))] = np.fromiter(
            known.values(), dtype=np.uint64, count=len(known))
    return m


def _err_array(a, err):
    if err is not None:
        return err
    with np.errstate(invalid="ignore"):
        return _REL * np.abs(a) + _TINY


def _sub_score(exact_score: Callable[[int], Fraction], sub: np.ndarray, i: int) -> Fraction:
    # the exact score of candidate i of the sub-array ``sub`` (a named function: mypy cannot type a lambda's default)
    return exact_score(int(sub[i]))


def _peel_passes(a, err, kk, rng, noise, exact_score):
    """The definition: k exact passes over the remaining candidates, fresh noise each."""
    remaining = np.arange(a.shape[0])
    picks = []
    for _ in range(kk):
        sub = remaining
        j = int(noisy_top_k(a[sub], err[sub], k=1, rng=rng, noise=noise,
                            exact_score=functools.partial(_sub_score, exact_score, sub))[0])
        picks.append(int(sub[j]))
        remaining = np.delete(remaining, j)
    return np.asarray(picks, dtype=np.int64)


def shortlist_top_k(a: np.ndarray, err: np.ndarray | None, first_words: np.ndarray, k: int, noise: str) -> np.ndarray:
    """Indices of every candidate that can be among the k largest ``a + F⁻¹(U)``, given U's first 64-bit word.

    ``a`` are scores with error bound ``err`` (``None``: the relative model of exact inputs), ``first_words``
    the first 64 bits of each candidate's uniform, as :func:`noisy_top_k` draws them. This is the sampler's
    stages 1 and 2 (one float noise evaluation per candidate with the bulk error bound, then enclosures at
    both ends of each 64-bit cell on the survivors) without any refinement: a rigorous superset of the top
    k, usually exactly k candidates. A distributed selector runs it per partition and hands the union of the
    shortlists, with their first words, to :func:`noisy_top_k`, which finishes exactly.
    """
    n = a.shape[0]
    if n <= k:
        return np.arange(n, dtype=np.int64)
    if err is not None:
        err = np.broadcast_to(np.asarray(err, dtype=np.float64), a.shape)
    short = _bulk_shortlist(a, first_words, k, noise, err)
    return np.asarray(_enclosed_shortlist(a, err, short, first_words, k, noise, None)[0], dtype=np.int64)
