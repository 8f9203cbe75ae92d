"""Exact-randomness primitives: uniform 64-bit words, exact Bernoulli draws, exact uniforms, ``laplace_below``.

One implementation of the pieces that turn a generator's random bits into exact draws, used by
:mod:`dpselect.sampling` (and through it every exact selector), :mod:`dpselect.binary.bernoulli`,
:mod:`dpselect.dask` and :mod:`dpselect.quantiles._median`. A uniform ``U`` in [0, 1) is handled as its binary
expansion ``0.w1 w2 w3 ...`` in 64-bit words, drawn lazily: a comparison with an exact (rational or
rigorously enclosed) threshold reads words only until the dyadic interval of ``U`` falls on one side.

**Two bit conventions** (both kept on purpose: each is the one its callers have always used, so the same
seed gives the same outputs; merging them would change every seeded output of one side):

* *words* (:func:`words`, :func:`next_word`): ``Generator.integers(0, 2^64 − 1, endpoint=True, dtype=uint64)``,
  one raw 64-bit output of the bit generator per word. Used by the exact samplers of
  :mod:`dpselect.sampling` (hence every exact selector and ``laplace_below``), by
  :func:`dpselect.binary.bernoulli.bernoulli_log` and by :mod:`dpselect.dask`, which replays the
  sampler's first words on its workers (its block streams must be the same words, word for word).
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

__all__ = ["U64_MAX", "INV64", "words", "words_drawer", "next_word", "next_word_bytes", "Dec",
           "bernoulli_rational", "bernoulli_rational_bytes", "uniform_float", "uniform_float_bytes",
           "exp_enclosure", "less_than_exp", "laplace_below"]

U64_MAX = np.iinfo(np.uint64).max
INV64 = 2.0 ** -64


# ---------------------------------------------------------------------------------------------
# 64-bit words: the two conventions
# ---------------------------------------------------------------------------------------------
def words(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent uniform 64-bit words (*words* convention: one raw output of the bit generator each).

    ``rng``: a numpy Generator, or anything with its ``integers`` method (dpselect.dask replays words with it).
    """
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

    The exact refinement step of :func:`~dpselect.binary.bernoulli.bernoulli_log`: the dyadic interval of
    ``U`` is compared with a rational enclosure of ``exp(log_p)`` from a correctly rounded decimal
    exponential, and the wider of the two is narrowed until they separate. Public as
    ``dpselect.binary.bernoulli.exact_less_than_exp``.

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
    >>> from dpselect.binary.bernoulli import exact_less_than_exp
    >>> more = lambda size: np.zeros(size, dtype=np.uint64)
    >>> exact_less_than_exp(math.log(0.5), 2**62, more), exact_less_than_exp(math.log(0.5), 3 * 2**62, more)
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
