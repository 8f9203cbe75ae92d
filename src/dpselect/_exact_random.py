"""Exact-randomness primitives: uniform 64-bit words, exact Bernoulli draws, exact uniforms, ``laplace_below``,
the discrete Laplace law.

One implementation of the pieces that turn a generator's random bits into exact draws, used by
:mod:`dpselect.sampling` (and through it every exact selector), :mod:`dpselect.binary`,
:mod:`dpselect.dask`, the median (:mod:`dpselect.quantiles._median`) and the quantiles; the one exact
Bernoulli(e^{−x}) (:func:`bernoulli_log`) and the one discrete Laplace (:func:`discrete_laplace`, its tail bit
for AboveThreshold) live here, and applications call them instead of re-implementing one. A uniform ``U`` in
[0, 1) is handled as its binary
expansion ``0.w1 w2 w3 ...`` in 64-bit words, drawn lazily: a comparison with an exact (rational or
rigorously enclosed) threshold reads words only until the dyadic interval of ``U`` falls on one side.

**Two bit conventions** (both kept on purpose: each is the one its callers have always used, so the same
seed gives the same outputs; merging them would change every seeded output of one side):

* *words* (:func:`words`, :func:`next_word`): ``Generator.integers(0, 2^64 − 1, endpoint=True, dtype=uint64)``,
  one raw 64-bit output of the bit generator per word. Used by the exact samplers of
  :mod:`dpselect.sampling` (hence every exact selector and ``laplace_below``), by
  :func:`bernoulli_log` (public as ``dpselect.binary.bernoulli_log``) and by :mod:`dpselect.dask`, which
  replays the sampler's first words on its workers (its block streams must be the same words, word for word).
* *bytes* (:func:`next_word_bytes`, :func:`bernoulli_rational_bytes`, :func:`uniform_float_bytes`):
  ``int.from_bytes(Generator.bytes(8), "little")``, two 32-bit draws. Used by :mod:`dpselect.quantiles._median`
  (its exact Bernoulli acceptance and its exact uniform inside the picked interval), whose seeded outputs
  are pinned by tests. For the 64-bit bit generators (PCG64, the default, PCG64DXSM, Philox, SFC64) the two
  32-bit draws are the low and high halves of one raw output, the same word as the *words* convention,
  unless a half is left over from an earlier odd number of 32-bit draws (then every word is shifted by 32
  bits); for MT19937 (32-bit outputs) the halves are swapped. So merging the conventions would change the
  median's seeded outputs for those generators (tests/test_exact_random.py pins both).

Both give independent uniform words, so every function here is exact under either; only which seed gives
which output differs.
"""
from __future__ import annotations

import decimal
import math
from fractions import Fraction
from decimal import Decimal
from typing import Callable, Tuple

import numpy as np
from numpy.typing import ArrayLike

from ._rng import check_rng
from ._validation import short_repr
from .typing import RngLike

__all__ = ["U64_MAX", "INV64", "words", "words_drawer", "next_word", "next_word_bytes", "Dec",
           "bernoulli_rational", "bernoulli_rational_bytes", "uniform_float", "uniform_float_bytes",
           "exp_enclosure", "less_than_exp", "laplace_below", "bernoulli_log", "geometric", "discrete_laplace",
           "discrete_laplace_tail", "discrete_laplace_tail_bits", "discrete_laplace_tail_exact"]

U64_MAX = np.iinfo(np.uint64).max
INV64 = 2.0 ** -64


# ---------------------------------------------------------------------------------------------
# 64-bit words: the two conventions
# ---------------------------------------------------------------------------------------------
# bit generators whose raw output is one 64-bit word, the one ``integers`` returns over the full uint64 range
# (MT19937's raw output is a 32-bit half of it)
_RAW64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)


def words(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent uniform 64-bit words (*words* convention: one raw output of the bit generator each).

    ``rng``: a numpy Generator, or anything with its ``integers`` method (dpselect.dask replays words with it).
    """
    if type(rng) is np.random.Generator and type(rng.bit_generator) in _RAW64:
        return rng.bit_generator.random_raw(size)   # the same words, without integers' per-call dispatch
    return np.asarray(rng.integers(0, U64_MAX, size=size, dtype=np.uint64, endpoint=True), dtype=np.uint64)


def words_drawer(rng: np.random.Generator) -> Callable[[int], np.ndarray]:
    """``draw(size)``: :func:`words` from ``rng`` (the word source taken by :func:`less_than_exp`)."""
    def draw(size: int) -> np.ndarray:
        return words(rng, size)
    return draw


def next_word(rng: np.random.Generator) -> int:
    """One uniform 64-bit word as an int (*words* convention)."""
    return int(words(rng, 1)[0])


def next_word_bytes(rng: np.random.Generator) -> int:
    """One uniform 64-bit word as an int (*bytes* convention: 8 bytes of ``Generator.bytes``, little-endian)."""
    return int.from_bytes(rng.bytes(8), "little")


# ---------------------------------------------------------------------------------------------
# exact Bernoulli and uniform draws
# ---------------------------------------------------------------------------------------------
def bernoulli_rational(p: Fraction, next_w: Callable[[], int]) -> bool:
    """True with probability exactly ``p`` (a rational; ``p >= 1``: True without a draw).

    Compares U = 0.w1 w2 ... (words from ``next_w()``) with p, one 64-bit digit at a time, until they
    differ: P(U < p) = p.
    """
    if p >= 1:
        return True
    while True:
        p *= 1 << 64
        digit = int(p)
        draw = next_w()
        if draw != digit:
            return draw < digit
        p -= digit


def bernoulli_rational_bytes(p: Fraction, rng: np.random.Generator) -> bool:
    """:func:`bernoulli_rational` with *bytes*-convention words (dpselect.quantiles._median)."""
    return bernoulli_rational(p, lambda: next_word_bytes(rng))


def uniform_float(lo: float, hi: float, next_w: Callable[[], int]) -> float:
    """An exactly uniform real on [lo, hi), rounded to the nearest float64, from random words only.

    Draws the binary expansion of U ~ U[0, 1) 64 bits at a time until every real in
    lo + (hi − lo)·[U_k, U_k + 2^−k] rounds to the same float (rounding is monotone, so both ends
    agreeing is enough). The float is a function of the exact real value, so the privacy of the
    real-valued law carries over (post-processing); float arithmetic ``lo + (hi − lo) * rng.random()``
    would instead put mass only on a grid of floats that depends on lo and hi.
    """
    a, w = Fraction(lo), Fraction(hi) - Fraction(lo)
    k, u = 0, 0
    while True:
        u = (u << 64) | next_w()
        k += 64
        scale = Fraction(1, 1 << k)
        low, high = a + w * u * scale, a + w * (u + 1) * scale
        f = float(low)  # Fraction -> float is correctly rounded (integer true division)
        if f == float(high):
            return f


def uniform_float_bytes(lo: float, hi: float, rng: np.random.Generator) -> float:
    """:func:`uniform_float` with *bytes*-convention words (dpselect.quantiles._median)."""
    return uniform_float(lo, hi, lambda: next_word_bytes(rng))


def exp_enclosure(log_p: float, prec: int) -> tuple[Fraction, Fraction]:
    """Rational bounds ``lo <= exp(log_p) <= hi`` from a correctly rounded decimal exponential."""
    ctx = decimal.Context(prec=prec, Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX,
                          rounding=decimal.ROUND_HALF_EVEN)
    e = Fraction(ctx.exp(decimal.Decimal(log_p)))      # Decimal(float) is exact
    rel = Fraction(1, 10 ** (prec - 1))                 # > one unit in the last place, relative
    return e * (1 - rel), e * (1 + rel)


def less_than_exp(log_p: float, first_word: int, draw: Callable[[int], np.ndarray]) -> tuple[int, int]:
    """Decide ``U < exp(log_p)`` exactly for ``U = 0.w1 w2 ...`` (64-bit words, ``w1 = first_word``).

    The exact refinement step of :func:`bernoulli_log`: the dyadic interval of ``U`` is compared with a
    rational enclosure of ``exp(log_p)`` from a correctly rounded decimal exponential, and the wider of the
    two is narrowed until they separate.

    Parameters
    ----------
    log_p : float
        The log-probability, <= 0 (not validated).
    first_word : int
        The first 64 bits of ``U``, in [0, 2^64).
    draw : callable
        ``draw(1) -> uint64 array`` of one further word of ``U``, called only when needed.

    Returns
    -------
    decision : int
        1 if ``U < exp(log_p)`` else 0.
    used : int
        The number of 64-bit words of ``U`` used (including ``first_word``).

    Examples
    --------
    >>> import math, numpy as np
    >>> more = lambda size: np.zeros(size, dtype=np.uint64)
    >>> less_than_exp(math.log(0.5), 2**62, more), less_than_exp(math.log(0.5), 3 * 2**62, more)
    ((1, 1), (0, 1))
    """
    if log_p == 0.0:
        return 1, 1
    if log_p == -math.inf:
        return 0, 1
    num, nbits, used = int(first_word), 64, 1
    prec = 40
    p_lo, p_hi = exp_enclosure(log_p, prec)
    while True:
        u_lo = Fraction(num, 1 << nbits)
        u_hi = Fraction(num + 1, 1 << nbits)
        if u_hi <= p_lo:
            return 1, used
        if u_lo >= p_hi:
            return 0, used
        if p_hi - p_lo > u_hi - u_lo:
            prec *= 2
            p_lo, p_hi = exp_enclosure(log_p, prec)
        else:
            num = (num << 64) | int(draw(1)[0])
            nbits += 64
            used += 1


# ---------------------------------------------------------------------------------------------
# decimal interval arithmetic (the exact refinement of the samplers, and laplace_below)
# ---------------------------------------------------------------------------------------------
Interval = Tuple[Decimal, Decimal]


class Dec:
    """Interval arithmetic on decimal.Decimal: round to nearest, then widen by one ulp."""

    def __init__(self, prec: int):
        self.ctx = decimal.Context(prec=prec, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                                   rounding=decimal.ROUND_HALF_EVEN, traps=[])
        self.inf = decimal.Decimal("Infinity")

    def down(self, x: Decimal) -> Decimal:
        return x if x.is_infinite() or x.is_zero() else self.ctx.next_minus(x)

    def up(self, x: Decimal) -> Decimal:
        return x if x.is_infinite() or x.is_zero() else self.ctx.next_plus(x)

    def frac(self, f: Fraction) -> Interval:
        q = self.ctx.divide(decimal.Decimal(f.numerator), decimal.Decimal(f.denominator))
        return self.down(q), self.up(q)

    def ln(self, lo: Decimal, hi: Decimal) -> Interval:
        """ln over [lo, hi] (0 <= lo <= hi)."""
        c = self.ctx
        a = -self.inf if lo.is_zero() else self.down(c.ln(lo))
        b = -self.inf if hi.is_zero() else self.up(c.ln(hi))
        if hi == 1:
            b = decimal.Decimal(0)
        if lo == 1:
            a = decimal.Decimal(0)
        return a, b

    def exp(self, lo: Decimal, hi: Decimal) -> Interval:
        c = self.ctx
        a = decimal.Decimal(0) if lo == -self.inf else self.down(c.exp(lo))
        b = decimal.Decimal(0) if hi == -self.inf else self.up(c.exp(hi))
        if lo.is_zero():
            a = decimal.Decimal(1)
        if hi.is_zero():
            b = decimal.Decimal(1)
        return max(a, decimal.Decimal(0)), b

    def one_minus_exp(self, z: Decimal) -> Interval:
        """Enclosure of 1 − e^{−z} for a point z >= 0, without cancellation for small z."""
        c = self.ctx
        if z.is_zero():
            return decimal.Decimal(0), decimal.Decimal(0)
        if z.is_infinite():
            return decimal.Decimal(1), decimal.Decimal(1)
        if z > decimal.Decimal("0.5"):
            e = c.exp(z.copy_negate())
            return self.down(c.subtract(1, self.up(e))), self.up(c.subtract(1, self.down(e)))
        # alternating series z − z²/2 + z³/6 − ... (terms decrease for z <= 1/2): the value lies within
        # the next term of each partial sum; rounding of each step is within an ulp of the working precision
        w = decimal.Context(prec=c.prec + 10, Emax=c.Emax, Emin=c.Emin, traps=[])
        total, term, n = decimal.Decimal(0), z, 1
        tiny = w.multiply(z, decimal.Decimal(10) ** (-(c.prec + 5)))
        while True:
            total = w.add(total, term) if n % 2 else w.subtract(total, term)
            n += 1
            term = w.divide(w.multiply(term, z), n)
            if term < tiny:
                break
        slack = w.add(term, w.multiply(w.multiply(z, decimal.Decimal(n)), decimal.Decimal(10) ** (-(c.prec + 8))))
        return self.down(c.subtract(total, slack)), self.up(c.add(total, slack))

    def add(self, x: Interval, y: Interval) -> Interval:
        c = self.ctx
        return self.down(c.add(x[0], y[0])), self.up(c.add(x[1], y[1]))

    def neg(self, x: Interval) -> Interval:
        # copy_negate is exact; unary minus would round to the *thread's* context precision
        return x[1].copy_negate(), x[0].copy_negate()

    def scale(self, x: Interval, s: Decimal) -> Interval:  # s > 0
        c = self.ctx
        return self.down(c.multiply(x[0], s)), self.up(c.multiply(x[1], s))

    def div(self, x: Interval, s: Decimal) -> Interval:  # s > 0
        c = self.ctx
        return self.down(c.divide(x[0], s)), self.up(c.divide(x[1], s))


# ---------------------------------------------------------------------------------------------
# exact noisy threshold
# ---------------------------------------------------------------------------------------------
def laplace_below(x: float | Fraction, scale: float, rng: np.random.Generator) -> bool:
    """Exactly whether a Laplace(0, ``scale``) variate is below ``x`` (floats read as exact rationals).

    The noisy-threshold test ``value + Laplace(b) < threshold`` of many algorithms (DiffPID3's stopping
    rule) releases one bit, Bernoulli(F(x)) with F the Laplace CDF at x = threshold − value. It is
    sampled as U < F(x) with U's bits drawn lazily: float enclosures of F(x) decide almost always, a
    decimal enclosure (correctly rounded exp, widened by an ulp) the rest.

    Privacy: none by itself; it is the exact sampler of the bit a Laplace-noise threshold releases, so the
    guarantee is the calling algorithm's (ε = Δ/scale for a test on a statistic of sensitivity Δ).

    Parameters
    ----------
    x : float or fractions.Fraction
        The threshold minus the value (any finite float, read as an exact rational, or a Fraction).
    scale : float
        The Laplace scale b > 0.
    rng : numpy.random.Generator
        The source of random 64-bit words (the bits of U).

    Returns
    -------
    bool
        True with probability exactly F(x) = P[Laplace(0, b) < x].

    Examples
    --------
    >>> import numpy as np
    >>> sum(laplace_below(0.0, 1.0, np.random.default_rng(s)) for s in range(1000)) in range(440, 561)
    True
    >>> laplace_below(-1e300, 1.0, np.random.default_rng(0))   # F underflows to 0 in floats, exactly > 0 here
    False
    """
    fx = Fraction(x) / Fraction(float(scale))  # x: a float or a Fraction
    z = float(fx)  # only for the float stage; the decimal stage uses fx
    m = int(words(rng, 1)[0])
    nb = 64
    # float stage: F = e^z/2 (z < 0) or 1 − e^{−z}/2, |error| <= 1e-15·F + 1e-300 (+ z's rounding)
    if math.isfinite(z) and abs(z) < 700:
        f = 0.5 * math.exp(z) if z < 0 else 1.0 - 0.5 * math.exp(-z)
        slack = 1e-14 * f + 1e-300 + 1e-15 * abs(z) * f
        if (m + 1) * INV64 < f - slack:
            return True
        if m * INV64 > f + slack:
            return False
    prec = 60
    while True:
        D = Dec(prec + nb)
        z_lo, z_hi = D.frac(fx)
        half = decimal.Decimal("0.5")
        if fx < 0:
            e_lo, e_hi = D.exp(z_lo, z_hi)
            f_lo, f_hi = D.scale((e_lo, e_hi), half)
        else:
            e_lo, e_hi = D.exp(z_hi.copy_negate(), z_lo.copy_negate())
            t_lo, t_hi = D.scale((e_lo, e_hi), half)
            f_lo = D.down(D.ctx.subtract(1, t_hi))
            f_hi = D.up(D.ctx.subtract(1, t_lo))
        scale_d = decimal.Decimal(1 << nb)
        u_lo = D.ctx.divide(decimal.Decimal(m), scale_d)
        u_hi = D.ctx.divide(decimal.Decimal(m + 1), scale_d)
        if u_hi <= f_lo:
            return True
        if u_lo >= f_hi:
            return False
        m = (m << 64) | int(words(rng, 1)[0])
        nb += 64
        prec += 40


# ---------------------------------------------------------------------------------------------
# exact Bernoulli(e^{log p}), vectorised
# ---------------------------------------------------------------------------------------------
# Exact Bernoulli sampling from log-probabilities, using only random bits.
#
# ``bernoulli_log(log_p, rng)`` draws ``X ~ Bernoulli(p)`` with ``p = exp(log_p)`` *exactly*, reading each
# float ``log_p`` as the exact rational it is: ``X = 1`` iff ``U < p`` for a uniform ``U`` whose binary
# expansion is drawn lazily from the generator, 64 bits at a time. ``rng.random() < p`` is not this: its
# uniform has 53 bits, so every ``p < 2^-53`` is rounded to "impossible" (and ``p`` itself is rounded to the
# grid), which is exactly the tail a private mechanism must keep (Mironov 2012; here: an optimal binary
# mechanism's ``Pr[M = 1] = 1e-30`` next to a neighbour's ``1e-30 e^-eps``).
#
# Algorithm. The first 64 bits give an integer ``k`` and ``U in [k 2^-64, (k+1) 2^-64)``.
#
# 1. *Vectorised float decision.* With ``p_f = exp(log_p)`` in float64 and a rigorous slack (numpy's ``exp``
#    is within a few ulp; we allow a relative ``1e-14`` plus an absolute ``1e-300`` for underflow, and
#    ``2^12`` for rounding ``k`` to float), ``X = 1`` is certain when ``(k + 2^12) 2^-64 <= p_f (1 - 1e-14) -
#    1e-300`` and ``X = 0`` when ``(k - 2^12) 2^-64 >= p_f (1 + 1e-14) + 1e-300``. This decides all but a
#    fraction ``~ 2^-51 + 2e-14 p`` of the draws.
# 2. *Exact refinement* for the rest (and for every ``p`` below ``~2^-52``, when ``k`` is small):
#    ``exp(log_p)`` in :mod:`decimal` at ``P`` digits is correctly rounded (the module's guarantee), so
#    ``p`` lies in ``e (1 +- 10^{1-P})``; the dyadic interval of ``U`` (as a :class:`fractions.Fraction`) is
#    compared with that enclosure. If neither is decided, the wider of the two intervals is narrowed: 64
#    more bits of ``U``, or twice the digits. ``p`` is irrational for ``log_p != 0`` (Lindemann), so this
#    ends with probability 1, after ``1 + 2^-64 + ...`` extra words on average.
#
# ``log_p = 0`` gives 1 and ``log_p = -inf`` gives 0 without drawing. The draws consume one 64-bit word per
# element (``Generator.integers`` over the full uint64 range, i.e. the bit generator's raw output) plus the
# refinement words, so results are reproducible for a seed.
_BERN_SLACK_K = 4096.0     # >= 2 x the rounding error of a uint64 -> float64 conversion (2^10)
_BERN_REL = 1e-14          # numpy exp: a few ulp
_BERN_ABS = 1e-300         # subnormal / underflowed exp


def bernoulli_log(log_p: ArrayLike, rng: RngLike = None, *,
                  bits: Callable[[int], np.ndarray] | None = None) -> np.ndarray:
    """Independent exact ``Bernoulli(exp(log_p))`` draws (int8 array of the shape of ``log_p``).

    ``X = 1`` iff ``U < p`` for a uniform ``U`` whose bits are drawn lazily (the algorithm is in the section
    above): every ``p`` is kept exactly, however small, which a float comparison ``rng.random() < p`` would
    round to 0. The one exact Bernoulli(e^{−x}) of the library: the binary mechanisms and the discrete
    Laplace draw theirs here.

    Parameters
    ----------
    log_p : float or array of floats <= 0
        Log-probabilities of the outcome 1; ``-inf`` means probability 0.
    rng : numpy.random.Generator, int seed or None
        Source of random bits.
    bits : callable, optional
        Keyword-only: ``bits(size) -> uint64 array`` replacing the generator (tests script the uniform's
        words with it).

    Returns
    -------
    ndarray of int8, of the shape of ``log_p``
        The draws, 0 or 1.

    Raises
    ------
    TypeError
        ``log_p`` is not a float or an array of floats.
    ValueError
        A ``log_p`` above 0 or NaN, or ``bits`` returning the wrong number of words.

    Examples
    --------
    >>> import math
    >>> x = bernoulli_log([math.log(0.5)] * 10000 + [-800.0], rng=1)   # p = e^-800 < 1e-347 stays possible
    >>> abs(int(x[:-1].sum()) - 5000) < 200, int(x[-1])
    (True, 0)
    >>> x.shape, x.dtype.name
    ((10001,), 'int8')
    """
    try:
        raw = np.asarray(log_p)
        ok = raw.dtype.kind in "biuf" or (raw.dtype.kind == "O" and not any(
            isinstance(v, (str, bytes)) or v is None for v in raw.ravel()))
        lp = raw.astype(np.float64) if ok else None
    except (TypeError, ValueError):   # ragged nesting, objects without a float value
        lp = None
    if lp is None:
        raise TypeError(f"log_p must be a float or an array of floats (log-probabilities <= 0), got "
                        f"{short_repr(log_p)} ({type(log_p).__name__})")
    shape = lp.shape
    lp = lp.ravel()
    if np.isnan(lp).any() or (lp > 0).any():
        bad = lp[np.isnan(lp) | (lp > 0)][0]
        raise ValueError(f"log_p must be log-probabilities (<= 0, not NaN), got {float(bad)!r}")
    draw = bits if bits is not None else words_drawer(check_rng(rng))
    k = np.asarray(draw(lp.size), dtype=np.uint64)
    if k.shape != lp.shape:
        raise ValueError(f"bits({lp.size}) must return {lp.size} uint64 words, got shape {k.shape}")
    kf = k.astype(np.float64)
    with np.errstate(under="ignore"):
        pf = np.exp(lp)
    yes = (kf + _BERN_SLACK_K) * INV64 <= pf * (1.0 - _BERN_REL) - _BERN_ABS
    no = (kf - _BERN_SLACK_K) * INV64 >= pf * (1.0 + _BERN_REL) + _BERN_ABS
    out = yes.astype(np.int8)
    out[lp == 0.0] = 1
    out[np.isneginf(lp)] = 0
    todo = np.flatnonzero(~(yes | no) & (lp != 0.0) & ~np.isneginf(lp))
    for i in todo.tolist():
        out[i] = less_than_exp(float(lp[i]), int(k[i]), draw)[0]
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------------
# exact discrete Laplace: the geometric magnitude (Bernoulli(e^{−x}) trials), the noise, the tail bit ν >= c
# ---------------------------------------------------------------------------------------------
def _bernoulli_logistic(x: float, rng: np.random.Generator) -> bool:
    """Bernoulli(a / (1 + a)) with a = e^{−x}: fair coin 0 -> False; else Bernoulli(a) True, or retry."""
    while True:
        if next_word(rng) >> 63 == 0:
            return False
        if bernoulli_log([-x], rng)[0]:
            return True


def geometric(epsilon: float, rng: np.random.Generator) -> int:
    """G >= 0 with P(G >= g) = e^{−epsilon·g} exactly (epsilon > 0 a float), in O(log 1/epsilon) trials.

    Galloping: G >= 2^{j+1} − 1 given G >= 2^j − 1 with probability e^{−ε·2^j}; after the first failure
    G − (2^j − 1) is geometric truncated to [0, 2^j), whose binary digits are independent with
    P(digit i = 1) = a_i / (1 + a_i), a_i = e^{−ε·2^i}. Every exponent ε·2^i is an exact float.
    """
    j, g = 0, 0
    while bernoulli_log([-math.ldexp(epsilon, j)], rng)[0]:
        g += 1 << j
        j += 1
    for i in range(j):
        if _bernoulli_logistic(math.ldexp(epsilon, i), rng):
            g += 1 << i
    return g


def discrete_laplace(epsilon: float, rng: np.random.Generator) -> int:
    """An exact draw Z of the discrete Laplace law P(Z = z) = (1 − p)/(1 + p) · p^|z|, p = e^{−epsilon}.

    A fair sign and a :func:`geometric` magnitude, "negative zero" rejected (Canonne, Kamath & Steinke
    2020), from random bits only: ``count + discrete_laplace(ε / Δ, rng)`` is ε-DP for an integer
    statistic of sensitivity Δ under the neighbour model that Δ is for.

    Parameters
    ----------
    epsilon : float
        ε / Δ > 0, read as an exact rational: round a quotient down (a larger value is less noise).
    rng : numpy.random.Generator
        The source of random 64-bit words (glossary: [rng][glossary-rng]).

    Returns
    -------
    int
        The noise Z.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.sampling import discrete_laplace
    >>> z = [discrete_laplace(1.0, np.random.default_rng(s)) for s in range(2000)]
    >>> abs(sum(z)) < 150, 0.4 < sum(v == 0 for v in z) / 2000 < 0.52    # P(0) = (1 − p)/(1 + p) ≈ 0.46
    (True, True)
    """
    if not (isinstance(epsilon, (float, int)) and not isinstance(epsilon, bool)
            and 0.0 < epsilon < math.inf):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    while True:
        negative = next_word(rng) >> 63 == 1
        g = geometric(epsilon, rng)
        if negative and g == 0:
            continue
        return -g if negative else g


def discrete_laplace_tail(c: int, epsilon: float) -> float:
    """P(ν >= c) for ν discrete Laplace(epsilon), in float64 (for laws and audits, not for sampling)."""
    log_norm = math.log1p(math.exp(-epsilon))
    if c >= 1:
        return math.exp(-epsilon * c - log_norm)
    return 1.0 - math.exp(-epsilon * (1 - c) - log_norm)    # >= 1/2: no cancellation to fear


def _times(eps: float, c: int) -> float:
    """eps·c correctly rounded for a Python int c of any size (±inf beyond the float range)."""
    try:
        return float(Fraction(eps) * c)
    except OverflowError:
        return math.copysign(math.inf, c)


def discrete_laplace_tail_bits(c: np.ndarray, w: np.ndarray, epsilon: float) -> np.ndarray:
    """The bits U < P(ν >= c) decided in floats: 1 (sure), 0 (sure) or −1 (undecided), U's first word ``w``.

    ν is discrete Laplace(epsilon); an undecided bit goes to :func:`discrete_laplace_tail_exact` with the
    same first word. ``c`` is int64, or an object array of Python ints when it does not fit in 64 bits.
    """
    eps = epsilon
    log_norm = math.log1p(math.exp(-eps))
    if c.dtype == object:
        ints = [int(v) for v in c]
        up = np.array([v >= 1 for v in ints], dtype=bool)
        x = np.array([_times(eps, v) if v >= 1 else _times(eps, 1 - v) for v in ints], dtype=np.float64)
    else:
        up = c >= 1
        cf = c.astype(np.float64)
        with np.errstate(over="ignore"):                       # eps·|c| beyond the floats: inf, tail 0
            x = np.where(up, eps * cf, eps * (1.0 - cf))      # the tail's exponent, >= eps > 0
    with np.errstate(over="ignore", under="ignore"):
        tail = np.exp(-x - log_norm)    # c >= 1: P(ν >= c) = p^c/(1 + p); c <= 0: 1 − P(ν >= c) = p^{1−c}/(1 + p)
    s = np.where(up, tail, 1.0 - tail)
    # |error| of s: relative ~1e-15·(1 + x) of the *tail* (the exp of a rounded exponent; x < 746 wherever the
    # tail is not 0), plus 2^-53 absolute for 1 − tail. Relative to s itself (~1 for c <= 0) the slack grew
    # with |c| past 1, left every bit undecided and sent each one to the decimal path (a hang at n = 2^48).
    slack = np.where(tail > 0.0, 1e-13 * tail * (1.0 + x), 0.0) + np.where(up, 1e-300, 1e-15)
    u_lo = w.astype(np.float64) * 2.0 ** -64      # float of m / 2^64 rounds: widen by the slack below
    u_hi = u_lo + 2.0 ** -64
    u_slack = u_lo * 2.0 ** -52
    out = np.full(c.shape, -1, dtype=np.int8)
    out[u_hi + u_slack <= s - slack] = 1
    out[u_lo - u_slack >= s + slack] = 0
    return out


def _tail_enclosure(c: int, eps: float, prec: int) -> tuple[Fraction, Fraction]:
    """Rational bounds on P(ν >= c) from decimal interval arithmetic at ``prec`` digits."""
    e = Fraction(eps)
    z = e * c if c >= 1 else e * (1 - c)
    if z > Fraction(7 * prec, 3) + 4:
        # e^{−z} < 10^−prec (ln 10 < 7/3): the loose enclosure [0, 10^−prec] of the tail, without the decimal
        # exp's huge exponent (a Fraction of 10^(−10^13) digits was the hang of clipping_bounds at n = 2^48)
        tiny = Fraction(1, 10 ** prec)
        return (Fraction(0), tiny) if c >= 1 else (1 - tiny, Fraction(1))
    D = Dec(prec)
    p_lo, p_hi = D.exp(*D.neg(D.frac(e)))                          # p = e^{−ε}
    den_lo, den_hi = D.down(D.ctx.add(1, p_lo)), D.up(D.ctx.add(1, p_hi))
    t_lo, t_hi = D.exp(*D.neg(D.frac(z)))
    q_lo = D.down(D.ctx.divide(t_lo, den_hi))
    q_hi = D.up(D.ctx.divide(t_hi, den_lo))
    if c >= 1:
        return Fraction(q_lo), Fraction(q_hi)
    return 1 - Fraction(q_hi), 1 - Fraction(q_lo)


def discrete_laplace_tail_exact(c: int, first_word: int, epsilon: float, rng: np.random.Generator) -> bool:
    """U < P(ν >= c) exactly (ν discrete Laplace(epsilon)), U = 0.w1 w2 ..., w1 = ``first_word``, more from ``rng``."""
    m, nb, prec = int(first_word), 64, 60
    while True:
        s_lo, s_hi = _tail_enclosure(c, epsilon, prec)
        u_lo, u_hi = Fraction(m, 1 << nb), Fraction(m + 1, 1 << nb)
        if u_hi <= s_lo:
            return True
        if u_lo >= s_hi:
            return False
        if s_hi - s_lo > u_hi - u_lo:
            prec *= 2
        else:
            m = (m << 64) | next_word(rng)
            nb += 64
