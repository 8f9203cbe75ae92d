r"""Exact Bernoulli sampling from log-probabilities, using only random bits.

``bernoulli_log(log_p, rng)`` draws ``X ~ Bernoulli(p)`` with ``p = exp(log_p)`` *exactly*, reading each
float ``log_p`` as the exact rational it is: ``X = 1`` iff ``U < p`` for a uniform ``U`` whose binary
expansion is drawn lazily from the generator, 64 bits at a time. ``rng.random() < p`` is not this: its
uniform has 53 bits, so every ``p < 2^-53`` is rounded to "impossible" (and ``p`` itself is rounded to the
grid), which is exactly the tail a private mechanism must keep (Mironov 2012; here: an optimal binary
mechanism's ``Pr[M = 1] = 1e-30`` next to a neighbour's ``1e-30 e^-eps``).

Algorithm. The first 64 bits give an integer ``k`` and ``U in [k 2^-64, (k+1) 2^-64)``.

1. *Vectorised float decision.* With ``p_f = exp(log_p)`` in float64 and a rigorous slack (numpy's ``exp``
   is within a few ulp; we allow a relative ``1e-14`` plus an absolute ``1e-300`` for underflow, and
   ``2^12`` for rounding ``k`` to float), ``X = 1`` is certain when ``(k + 2^12) 2^-64 <= p_f (1 - 1e-14) -
   1e-300`` and ``X = 0`` when ``(k - 2^12) 2^-64 >= p_f (1 + 1e-14) + 1e-300``. This decides all but a
   fraction ``~ 2^-51 + 2e-14 p`` of the draws.
2. *Exact refinement* for the rest (and for every ``p`` below ``~2^-52``, when ``k`` is small):
   ``exp(log_p)`` in :mod:`decimal` at ``P`` digits is correctly rounded (the module's guarantee), so
   ``p`` lies in ``e (1 +- 10^{1-P})``; the dyadic interval of ``U`` (as a :class:`fractions.Fraction`) is
   compared with that enclosure. If neither is decided, the wider of the two intervals is narrowed: 64
   more bits of ``U``, or twice the digits. ``p`` is irrational for ``log_p != 0`` (Lindemann), so this
   ends with probability 1, after ``1 + 2^-64 + ...`` extra words on average.

``log_p = 0`` gives 1 and ``log_p = -inf`` gives 0 without drawing. The draws consume one 64-bit word per
element (``Generator.integers`` over the full uint64 range, i.e. the bit generator's raw output) plus the
refinement words, so results are reproducible for a seed.
"""
from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._rng import RngLike, check_rng
from .._validation import short_repr

__all__ = ["bernoulli_log", "exact_less_than_exp"]

_U64_MAX = np.iinfo(np.uint64).max
_INV64 = 2.0 ** -64
_SLACK_K = 4096.0          # >= 2 x the rounding error of a uint64 -> float64 conversion (2^10)
_REL = 1e-14               # numpy exp: a few ulp
_ABS = 1e-300              # subnormal / underflowed exp


def _words_from(gen: np.random.Generator) -> Callable[[int], np.ndarray]:
    def draw(size: int) -> np.ndarray:
        return np.asarray(gen.integers(0, _U64_MAX, size=size, dtype=np.uint64, endpoint=True), dtype=np.uint64)
    return draw


def _exp_enclosure(log_p: float, prec: int) -> tuple[Fraction, Fraction]:
    """Rational bounds ``lo <= exp(log_p) <= hi`` from a correctly rounded decimal exponential."""
    ctx = decimal.Context(prec=prec, Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX,
                          rounding=decimal.ROUND_HALF_EVEN)
    e = Fraction(ctx.exp(decimal.Decimal(log_p)))      # Decimal(float) is exact
    rel = Fraction(1, 10 ** (prec - 1))                 # > one unit in the last place, relative
    return e * (1 - rel), e * (1 + rel)


def exact_less_than_exp(log_p: float, first_word: int, draw: Callable[[int], np.ndarray]) -> tuple[int, int]:
    """Decide ``U < exp(log_p)`` exactly for ``U = 0.w1 w2 ...`` (64-bit words, ``w1 = first_word``).

    The exact refinement step of :func:`bernoulli_log` (module docstring): the dyadic interval of ``U`` is
    compared with a rational enclosure of ``exp(log_p)`` from a correctly rounded decimal exponential, and
    the wider of the two is narrowed until they separate.

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
    >>> exact_less_than_exp(math.log(0.5), 2**62, more), exact_less_than_exp(math.log(0.5), 3 * 2**62, more)
    ((1, 1), (0, 1))
    """
    if log_p == 0.0:
        return 1, 1
    if log_p == -math.inf:
        return 0, 1
    num, nbits, used = int(first_word), 64, 1
    prec = 40
    p_lo, p_hi = _exp_enclosure(log_p, prec)
    while True:
        u_lo = Fraction(num, 1 << nbits)
        u_hi = Fraction(num + 1, 1 << nbits)
        if u_hi <= p_lo:
            return 1, used
        if u_lo >= p_hi:
            return 0, used
        if p_hi - p_lo > u_hi - u_lo:
            prec *= 2
            p_lo, p_hi = _exp_enclosure(log_p, prec)
        else:
            num = (num << 64) | int(draw(1)[0])
            nbits += 64
            used += 1


def bernoulli_log(log_p: ArrayLike, rng: RngLike = None, *,
                  bits: Callable[[int], np.ndarray] | None = None) -> np.ndarray:
    """Independent exact ``Bernoulli(exp(log_p))`` draws (int8 array of the shape of ``log_p``).

    ``X = 1`` iff ``U < p`` for a uniform ``U`` whose bits are drawn lazily (module docstring): every
    ``p`` is kept exactly, however small, which a float comparison ``rng.random() < p`` would round to 0.

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
    draw = bits if bits is not None else _words_from(check_rng(rng))
    k = np.asarray(draw(lp.size), dtype=np.uint64)
    if k.shape != lp.shape:
        raise ValueError(f"bits({lp.size}) must return {lp.size} uint64 words, got shape {k.shape}")
    kf = k.astype(np.float64)
    with np.errstate(under="ignore"):
        pf = np.exp(lp)
    yes = (kf + _SLACK_K) * _INV64 <= pf * (1.0 - _REL) - _ABS
    no = (kf - _SLACK_K) * _INV64 >= pf * (1.0 + _REL) + _ABS
    out = yes.astype(np.int8)
    out[lp == 0.0] = 1
    out[np.isneginf(lp)] = 0
    todo = np.flatnonzero(~(yes | no) & (lp != 0.0) & ~np.isneginf(lp))
    for i in todo.tolist():
        out[i] = exact_less_than_exp(float(lp[i]), int(k[i]), draw)[0]
    return out.reshape(shape)
